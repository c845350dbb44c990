"""scripts/sgl_fp4_prefill_plateau44.py: the closed loop's λ and decoding count, SGLang's NVFP4 all-gather rule, the
host time a step would need, the KV pool's hold bound and the per-request / per-token split, worked by hand."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

sp = load_script("sgl_fp4_prefill_plateau44")

RECIPE_PREFILL = {  # srt-slurm @5063eb43 recipes/gb300-fp4/1k1k/mid_curve.yaml, prefill
    "moe-runner-backend": "flashinfer_cutlass",
    "enable-dp-attention": True,
    "quantization": "modelopt_fp4",
    "tp-size": 4,
    "dp-size": 4,
    "ep-size": 4,
}


def test_closed_loop_by_hand():
    # 4,096 users, TTFT 2 s, TPOT 20 ms, OSL 1,001: cycle 2 + 1,000 x 0.02 = 22 s -> 186.18 req/s; 20 s of it decoding
    lam, dec = sp.closed_loop([4096], [2.0], [0.02], [1001])
    assert lam[0] == pytest.approx(4096 / 22)
    assert dec[0] == pytest.approx(4096 / 22 * 20)


def test_fp4_allgather_rule():
    assert sp.fp4_allgather(RECIPE_PREFILL)
    # the same recipe's decode runs DeepEP (moe-a2a-backend deepep): the all-to-all, not the gather
    assert not sp.fp4_allgather({**RECIPE_PREFILL, "moe-a2a-backend": "deepep"})
    assert not sp.fp4_allgather({**RECIPE_PREFILL, "ep-size": 2})  # MoE EP must equal attention DP
    assert not sp.fp4_allgather({**RECIPE_PREFILL, "quantization": "fp8"})
    assert not sp.fp4_allgather({**RECIPE_PREFILL, "enable-dp-attention": False})


def test_needed_host_and_kv_hold_by_hand():
    # 8,192 tokens a step: 8,192 / 8,192 = 1 s served against 8,192 / 16,384 = 0.5 s forward -> 0.5 s outside
    assert sp.needed_host_s(8192, 16384, 8192) == pytest.approx(0.5)
    # 131,072 tokens of KV at 8,192 tokens/s: Little's law, 16 s
    assert sp.kv_hold_bound_s(8192.0, 131072) == pytest.approx(16.0)
    with pytest.raises(ValueError, match="must be > 0"):
        sp.needed_host_s(8192, 0, 8192)
    with pytest.raises(ValueError, match="must be > 0"):
        sp.kv_hold_bound_s(0.0, 131072)


def test_prefill_kv_pool_is_each_systems_recipe():
    # srt-slurm @5063eb43, prefill max-total-tokens: gb200-fp4/1k1k/mid-curve.yaml 131072, gb300-fp4 mid_curve 131072
    assert sp.prefill_kv_tokens("gb200-nvl72") == 131072
    assert sp.prefill_kv_tokens("gb300-nvl72") == 131072
    with pytest.raises(ValueError, match="no recipe prefill KV pool for 'b200'; known: gb200-nvl72, gb300-nvl72"):
        sp.prefill_kv_tokens("b200")


def test_forward_columns_price_their_own_exchange():
    # the GB200 0.5.8 pools ship the NVFP4 all-gather (fit/aic_moe_exchange); the a2a column must still price the
    # stack's all-to-all, which at EP4 sends a token's top-8 copies to 3.6 ranks in BF16 where the gather sends each
    # token once in FP4: the all-to-all forward is slower
    f = sp.forward_rates(("gb200-nvl72",), (16384,)).loc["gb200-nvl72"]
    assert f["a2a@16384"] < f["allgather@16384"]


def test_per_request_and_token_by_hand():
    # a = 10 ms, b = 50 us: 1,000 tokens take 60 ms, 5,000 take 260 ms
    a, b = sp.per_request_and_token(1000, 0.06, 5000, 0.26)
    assert (a, b) == (pytest.approx(0.01), pytest.approx(5e-5))
    with pytest.raises(ValueError, match="two different positive prompt lengths"):
        sp.per_request_and_token(1000, 1.0, 1000, 2.0)


def test_plateau_reads_the_rows(tmp_path):
    dep = "disagg P 4x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp4]"
    base = dict(
        source="aiconfigurator",
        system="gb300-nvl72",
        stack="sglang",
        deployment=dep,
        precision="fp4",
        isl=1024,
        osl=1024,
        concurrency=8192.0,
        id="aic:x_c8192_cfg576",
    )
    rows = [
        dict(base, metric="ttft_s", measured=22.0),
        dict(base, metric="tpot_s", measured=0.02),
        dict(base, metric="interactivity", measured=50.0),
        dict(base, metric="ttft_s", measured=1.0, precision="fp8", id="aic:y_cfg1"),
    ]  # FP8: left out
    p = tmp_path / "all.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    w = sp.plateau(str(p))
    assert len(w) == 1 and w.cfg.iloc[0] == "cfg576"
    lam = 8192 / (22.0 + 1023 * 0.02)  # 192.3 req/s
    assert w.lam.iloc[0] == pytest.approx(lam)
    assert w.tok_s_gpu.iloc[0] == pytest.approx(lam * 0.9 * 1024 / 16)  # 4 workers x 4 GPUs
    pd.DataFrame([dict(base, precision="fp8", metric="ttft_s", measured=1.0)]).to_csv(p, index=False)
    with pytest.raises(ValueError, match="no SGLang FP4 DEP4"):
        sp.plateau(str(p))
