"""aiconfigurator rows of InferenceX MTP sweeps (fit/aic_sweeps.py, data/validation/aic_sweeps.toml).

Expected draft lengths are the launch scripts' (InferenceX benchmarks/dsr1_fp8_b200_trt_mtp.sh @5d517074c:
MTP=3, MTP=1 when DP_ATTENTION); the acceptances are the validation's stated ones (0.85 for one draft,
0.75 per token for chains: fit/ix_points.VALIDATION_MTP / CHAIN_ACCEPTANCE).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from jalapeno.deploy.deployment import MTP
from jalapeno.errors import SpecError
from jalapeno.fit.aic_sweeps import load_sweeps, measured_date, sweep_of
from jalapeno.fit.validate import load_aiconfigurator

SILICON = Path(__file__).resolve().parents[1] / "fixtures" / "aiconfigurator" / "silicon_sample_subset.csv"


@pytest.fixture(scope="module")
def b200_post3() -> dict:
    row = pd.read_csv(SILICON).iloc[4].to_dict()  # B200 TRT-LLM 1.2.0rc6.post3 FP8, 1k/8k, c8, TP8
    assert (row["backend_version"], row["precision"], row["tp_size"]) == ("1.2.0rc6.post3", "fp8", 8.0)
    return row


def test_rows_of_an_mtp_sweep_run_its_launch_scripts_mtp(b200_post3):
    stamp = "source_file=2026-03-25.csv; model=DeepSeek-R1; measured=2026-02-05T19:55:05Z; wip=False"
    rows = [{**b200_post3, "silicon_data_source": stamp},
            {**b200_post3, "id": "x_agg_1024x1024_c256_tp8_ep8_1", "tp_size": 1.0, "attention_dp_size": 8.0,
             "moe_tp_size": 1.0, "moe_ep_size": 8.0, "silicon_data_source": stamp, "silicon_tpot_ms": 21.03},
            {**b200_post3, "id": "x_agg_1024x8192_c8_tp8_ep1_2", "silicon_data_source": "measured=2026-02-04",
             "silicon_tpot_ms": 6.0}]
    tep, dep, other = load_aiconfigurator(pd.DataFrame(rows))[0]
    assert tep.deployment.mtp == MTP(3, 0.75) and tep.spec == "mtp" and tep.uses_mtp
    assert dep.deployment.decode.layout.dp == 8 and dep.deployment.mtp == MTP(1, 0.85)
    assert "dsr1-fp8-b200-trt-mtp" in tep.notes[-1]
    assert other.deployment.mtp is None and other.spec == "" and other.uses_mtp is None  # no sweep that day


def test_a_plain_sweep_says_so_and_runs_no_mtp(b200_post3):
    row = {**b200_post3, "backend_version": "1.2.0rc6.post2", "silicon_data_source": "measured=2026-01-29T15:27:29Z"}
    (p,), _ = load_aiconfigurator(pd.DataFrame([row]))
    assert p.deployment.mtp is None and p.spec == "none" and p.uses_mtp is False


def test_sweep_lookup_needs_every_field():
    assert measured_date("db-dump/2026-04-27; config_id=75; measured=2026-01-29T00:00:00.000Z") == "2026-01-29"
    assert measured_date("source_file=kimi-k2.5-gap-analysis.csv") == ""
    assert sweep_of("h200", "deepseek-r1", "trtllm 1.1.0rc2.post2", "fp8", "measured=2026-01-14").spec == "mtp"
    assert sweep_of("h200", "deepseek-r1", "trtllm 1.1.0rc2.post2", "fp8", "measured=2025-12-15").spec == "none"
    assert sweep_of("h200", "deepseek-r1", "trtllm 1.1.0rc2.post2", "fp8", "measured=2025-12-16") is None
    assert sweep_of("b200", "deepseek-r1", "sglang 1.1.0rc2.post2", "fp8", "measured=2026-01-14") is None


@pytest.mark.parametrize("entry, message", [
    ('spec = "mtp"\nmtp_draft = 3', "an MTP sweep without draft lengths"),
    ('spec = "eagle"', "'eagle'"),
    ('spec = "none"\nflavour = 1', "unknown key(s) ['flavour']"),
    ('spec = "none"\nconfig_dp_attention = "yes"', "dp-attn pools at attention DP"),
    # each true/false key (aic_sweeps._FLAGS, one loop since hygiene38): a non-bool, and the two contradictions
    ('spec = "none"\ndp_attention_ep = 1', "dp_attention_ep: 1. Fix: write true where the launch scripts run"),
    ('spec = "none"\nexpert_parallel = "true"', "expert_parallel: 'true'. Fix: write true where the launch script always"),
    ('spec = "none"\nno_expert_parallel = true\nexpert_parallel = true', "no_expert_parallel: True. Fix: write true"),
    ('spec = "none"\nmax_num_tokens_sized = 0', "max_num_tokens_sized: 0. Fix: write true only on a TensorRT-LLM"),
])
def test_malformed_sweep_entries_are_named(tmp_path, entry, message):
    f = tmp_path / "sweeps.toml"
    f.write_text('[[sweep]]\nsystem = "b200"\nmodel = "deepseek-r1"\nengine = "trtllm"\nversion = "1.2.0"\n'
                 'precision = "fp8"\nmeasured = "2026-02-05"\nconfig_key = "k"\nsource = "s"\n' + entry + "\n")
    with pytest.raises(SpecError, match="sweeps.toml: sweep\\[0\\]") as e:
        load_sweeps(f)
    assert message in str(e.value)


def test_every_shipped_sweep_names_its_commit():
    sweeps = load_sweeps()
    assert len(sweeps) == 57 and all("InferenceX" in s.source for s in sweeps)  # 7 SGLang B200: round 24; 6 TRT-LLM DeepSeek-R1 of 2025-11/12 and the GB200 Kimi K2.5 vLLM one: round 25
    assert {s.config_key for s in sweeps if s.spec == "mtp"} == {
        "dsr1-fp8-b200-trt-mtp", "dsr1-fp4-b200-trt-mtp", "dsr1-fp8-h200-trt-mtp"}


# ---- the launch scripts' attention-DP context balancing (with_sweep_launch) ---------------------------
# Read by hand from the scripts at the sweeps' commits (SemiAnalysisAI/InferenceX): under DP_ATTENTION every
# one appends attention_dp_config {batching_wait_iters: 0, enable_balance: true, timeout_iters: 60};
# dsr1_fp8_b200_trt_mtp.sh @5d517074c passes --max_batch_size $(( CONC < 8 ? CONC : CONC / 8 )),
# dsr1_fp4_b200_trt_mtp.sh @0aae52d4c $(( CONC < 4 ? CONC : CONC / 4 )), the @bf3456727 slurm scripts
# $((CONC/TP)), and the plain dsr1_fp{4,8}_b200_trt.sh (@6eecc0e66, @ec7bafaae) none.

def test_attention_dp_rows_run_their_scripts_balancing_and_running_cap(b200_post3):
    stamp = "measured=2026-02-05T19:55:05Z"  # dsr1-fp8-b200-trt-mtp @5d517074c: CONC / 8 per rank
    rows = [{**b200_post3, "id": "x_agg_1024x1024_c256_tp8_ep8_1", "tp_size": 1.0, "attention_dp_size": 8.0,
             "moe_tp_size": 1.0, "moe_ep_size": 8.0, "silicon_data_source": stamp},
            {**b200_post3, "id": "x_agg_1024x1024_c4_tp8_ep8_2", "tp_size": 1.0, "attention_dp_size": 8.0,
             "moe_tp_size": 1.0, "moe_ep_size": 8.0, "silicon_data_source": stamp, "silicon_tpot_ms": 5.0},
            {**b200_post3, "silicon_data_source": stamp}]  # attention TP8: no balancing
    dep256, dep4, tep = (p.deployment for p in load_aiconfigurator(pd.DataFrame(rows))[0])
    assert dep256.adp_balance_timeout_iters == 60 and dep256.max_running == 8 * (256 // 8)  # 8 ranks x 32
    assert dep4.max_running == 8 * 4  # CONC < 8: CONC per rank
    assert tep.adp_balance_timeout_iters is None and tep.max_running is None
    plain = {**rows[0], "backend_version": "1.2.0rc6.post2", "silicon_data_source": "measured=2026-01-29T15:27:29Z"}
    (p,), _ = load_aiconfigurator(pd.DataFrame([plain]))
    assert p.deployment.adp_balance_timeout_iters == 60 and p.deployment.max_running is None  # the engine's default
    assert "timeout_iters 60" in "; ".join(p.notes) and "dsr1-fp8-b200-trt" in "; ".join(p.notes)


def test_every_shipped_sweep_carries_its_scripts_balancing():
    rules = {s.config_key + " " + s.version: (s.adp_balance_timeout_iters, s.max_batch_dp_attention) for s in load_sweeps()
             if s.model == "deepseek-r1"}
    assert rules == {"dsr1-fp8-b200-trt-mtp 1.2.0rc6.post3": (60, "conc/8"),
                     "dsr1-fp4-b200-trt-mtp 1.2.0rc6.post3": (60, "conc/4"),
                     "dsr1-fp4-b200-trt-mtp 1.1.0rc2.post2": (60, "conc/dp"),
                     "dsr1-fp8-b200-trt-mtp 1.1.0rc2.post2": (60, "conc/dp"),
                     "dsr1-fp8-h200-trt-mtp 1.1.0rc2.post2": (60, "conc/dp"),
                     "dsr1-fp8-b200-trt 1.2.0rc6.post2": (60, ""), "dsr1-fp4-b200-trt 1.2.0rc6.post2": (60, ""),
                     # the non-MTP slurm scripts of 2025-11-02 (@9596d23d7) and 2025-12-15 (@d22bf9ca9), round 25
                     "dsr1-fp4-b200-trt ": (60, ""), "dsr1-fp8-b200-trt ": (60, ""), "dsr1-fp8-h200-trt ": (60, ""),
                     "dsr1-fp4-b200-trt 1.1.0rc2.post2": (60, ""), "dsr1-fp8-b200-trt 1.1.0rc2.post2": (60, ""),
                     "dsr1-fp8-h200-trt 1.1.0rc2.post2": (60, ""),
                     # SGLang (round 24, their DeepEP pools): no TensorRT-LLM balancing
                     "dsr1-fp4-gb200-dynamo-sglang 0.5.5.post2": (0, ""),
                     "dsr1-fp8-gb200-dynamo-sglang 0.5.5.post2": (0, ""),
                     # SGLang B200 aggregated (round 24): no attention DP in their scripts
                     "dsr1-fp4-b200-sglang ": (0, ""), "dsr1-fp4-b200-sglang 0.5.9": (0, ""),
                     "dsr1-fp8-b200-sglang ": (0, ""), "dsr1-fp8-b200-sglang 0.5.6": (0, "")}


@pytest.mark.parametrize("entry, message", [
    ('spec = "none"\nadp_balance_timeout_iters = -1', "adp_balance_timeout_iters"),
    ('spec = "none"\nmax_batch_dp_attention = "conc*4"', 'as "conc/N" or "conc/dp"'),
])
def test_malformed_launch_fields_are_named(tmp_path, entry, message):
    test_malformed_sweep_entries_are_named(tmp_path, entry, message)


def test_max_num_tokens_sized_is_refused_off_tensorrt_llm(tmp_path):
    f = tmp_path / "sweeps.toml"
    f.write_text('[[sweep]]\nsystem = "h200"\nmodel = "deepseek-r1"\nengine = "vllm"\nversion = "0.16.0"\n'
                 'precision = "fp8"\nmeasured = "2026-02-05"\nconfig_key = "k"\nsource = "s"\nspec = "none"\n'
                 "max_num_tokens_sized = true\n")
    with pytest.raises(SpecError, match=r"sweep\[0\]\.max_num_tokens_sized: True\. Fix: write true only on a TensorRT-LLM"):
        load_sweeps(f)


# ---- the launch scripts' KV-cache dtype and MoE backend (with_sweep_kernels) ------------------------------
# Read by hand (SemiAnalysisAI/InferenceX): every gptoss-fp4-b200-trt script 2025-11 to 2026-02
# (gptoss_fp4_b200_trt_slurm.sh @e06929c70, @97f253b51, @06667a51e; gptoss_fp4_b200_trt.sh @d7dbd045b) sets
# kv_cache_config dtype fp8 and MOE_BACKEND="TRTLLM"; gptoss_fp4_b200_docker.sh @e06929c70 exports
# VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1 with no kv-cache-dtype (added by PR #273 on 2025-12-05);
# gptoss_fp4_b200.sh @d2c2acb19 (vLLM v0.15.1) sets kv-cache-dtype fp8.

def _gptoss_row(b200_post3, **kw) -> dict:
    return {**b200_post3, "model_path": "openai/gpt-oss-120b", "precision": "fp8", "gemm_quant_mode": "fp8",
            "tp_size": 1.0, "attention_dp_size": 1.0, "moe_tp_size": 1.0, "moe_ep_size": 1.0,
            "id": "g_agg_1024x1024_c8_tp1_1", **kw}


def test_gpt_oss_b200_rows_run_their_scripts_kv_dtype_and_moe_backend(b200_post3):
    runs = [("trtllm", "1.2.0rc2.post2", "2026-02-05"), ("trtllm", float("nan"), "2025-11-02"),
            ("vllm", float("nan"), "2025-11-02"), ("vllm", "0.15.1", "2026-02-25"), ("trtllm", "1.2.0rc2.post2", "2026-02-06")]
    rows = [_gptoss_row(b200_post3, backend=b, backend_version=v, silicon_data_source=f"measured={d}",
                        id=f"g{i}_agg_1024x1024_c8_tp1_{i}", silicon_tpot_ms=3.0 + i) for i, (b, v, d) in enumerate(runs)]
    trt, trt_nov, vllm_nov, vllm, none = load_aiconfigurator(pd.DataFrame(rows))[0]
    for p in (trt, trt_nov, vllm):
        assert p.deployment.precision.kv_cache.name == "fp8" and p.deployment.decode.moe_backend == "trtllm"
        assert "MoE backend trtllm" in "; ".join(p.notes)
    assert vllm_nov.deployment.precision.kv_cache.name == "bf16" and vllm_nov.deployment.decode.moe_backend == "trtllm"
    # no sweep that day: the preset's BF16 KV, no backend
    assert none.deployment.precision.kv_cache.name == "bf16" and none.deployment.decode.moe_backend is None
    # H200 TensorRT-LLM (gptoss_fp4_h200_trt.sh): moe_config.backend TRITON, kv_cache_config dtype auto
    h200 = _gptoss_row(b200_post3, system="h200_sxm", backend_version="gpt-oss-dev",
                       silicon_data_source="measured=2025-12-15")
    (p,), _ = load_aiconfigurator(pd.DataFrame([h200]))
    assert p.deployment.decode.moe_backend == "triton" and p.deployment.precision.kv_cache.name == "bf16"


@pytest.mark.parametrize("entry, message", [
    ('spec = "none"\nkv_dtype = "fp7"', "kv_dtype"),
    ('spec = "none"\nmoe_backend = "TRTLLM"', "unknown MoE backend 'TRTLLM'"),
])
def test_malformed_kernel_fields_are_named(tmp_path, entry, message):
    test_malformed_sweep_entries_are_named(tmp_path, entry, message)
