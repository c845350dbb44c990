"""GEMM + TP all-reduce fusion (TensorRT-LLM gemm_allreduce_plugin): cost/ops.py, cost/overlap.exposed_coll_s.

Expected values are derived here independently: the waves of output tiles by hand from the kernel's
tile shape and the SM count, and the exposed all-reduce by simulating the GEMM waves and their
all-reduces as a two-machine flow shop (each wave's all-reduce starts when its tiles are done and the
link is free), not from the closed form the code uses.
"""

from __future__ import annotations

import json
import math

import pytest
from cli_runner import check_error, run

from jalapeno.cost.gemm_allreduce import gemm_allreduce_stages
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.mlperf import load_mlperf
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import _stack, get_stack

LLAMA_405B_HIDDEN = 16384  # Llama-3.1-405B config.json hidden_size


def flow_shop_exposed(t_gemm: float, t_ar: float, waves: int) -> float:
    """Time the fused kernel runs past its GEMM: W equal waves of compute, each followed by its
    all-reduce on the link, the link serving the waves in order (simulated, not the closed form)."""
    c, a = t_gemm / waves, t_ar / waves
    done_compute, link_free = 0.0, 0.0
    for _ in range(waves):
        done_compute += c
        link_free = max(link_free, done_compute) + a
    return link_free - t_gemm


def _prefill(system: str, precision: str, tp: int, tokens: float, fused: bool):
    pr = load_pricer(system, stack=get_stack("trtllm").with_gemm_allreduce_fusion(fused))
    return step_cost(load_model("llama-3.1-405b"), pr, Layout(tp=tp), get_precision(precision),
                     Batch.make(prefill_tokens=tokens, prefill_ctx=0, prefill_seqs=1))


def _by_name(c, table: str, name: str) -> float:
    rows = c.op_rows(0) if table == "op" else c.collective_rows(0)
    return next(r["time_s"] for r in rows if r[table if table == "op" else "collective"] == name)


def test_waves_by_hand():
    # B200: 148 SMs, SM100 kernel 256 x 256 per SM pair -> 74 pairs; 2,048 x 16,384 = 8 x 64 = 512 tiles
    assert gemm_allreduce_stages(2048.0, LLAMA_405B_HIDDEN, load_system("b200").chip) == math.ceil(512 / 74) == 7
    # H200: 132 SMs, SM90 kernel 128 x 128 per SM; 2,560 x 16,384 = 20 x 128 = 2,560 tiles -> 20 waves
    assert gemm_allreduce_stages(2560.0, LLAMA_405B_HIDDEN, load_system("h200").chip) == math.ceil(2560 / 132) == 20
    # a 64-row decode step is one wave: the all-reduce cannot start before the whole GEMM is done
    assert gemm_allreduce_stages(64.0, LLAMA_405B_HIDDEN, load_system("b200").chip) == 1
    # no TensorRT-LLM GEMM + all-reduce kernel for CDNA (MFMA M = 16): one stage, nothing credited
    assert gemm_allreduce_stages(2048.0, LLAMA_405B_HIDDEN, load_system("mi300x").chip) == 1


def test_exposed_all_reduce_one_layer_by_hand():
    """B200 TP4 NVFP4, a 2,048-token prefill: each fused all-reduce shows exactly the flow shop's
    overrun of its GEMM (o_proj for the attention all-reduce, down for the FFN one), 7 waves."""
    off = _prefill("b200", "nvfp4", 4, 2048.0, False)
    on = _prefill("b200", "nvfp4", 4, 2048.0, True)
    layers = 126  # Llama-3.1-405B num_hidden_layers
    for coll, gemm in (("attn.all_reduce", "attn.o_proj"), ("dense_ffn.all_reduce", "dense_ffn.down")):
        t_ar = _by_name(off, "coll", coll) / layers  # one layer's all-reduce, unfused
        t_g = _by_name(off, "op", gemm) / layers
        assert _by_name(on, "op", gemm) == pytest.approx(t_g * layers)  # the GEMM itself is unchanged
        want = flow_shop_exposed(t_g, t_ar, 7)
        assert _by_name(on, "coll", coll) / layers == pytest.approx(want, rel=1e-9)
        assert want < t_ar
    saved = sum(_by_name(off, "coll", c) - _by_name(on, "coll", c) for c in ("attn.all_reduce", "dense_ffn.all_reduce"))
    assert float(off.step_time_s[0] - on.step_time_s[0]) == pytest.approx(saved, rel=1e-9)


def test_one_wave_and_tp1_change_nothing():
    # a 64-token step is one wave: the fused all-reduce is fully exposed, as unfused
    off, on = _prefill("b200", "nvfp4", 4, 64.0, False), _prefill("b200", "nvfp4", 4, 64.0, True)
    assert float(on.step_time_s[0]) == pytest.approx(float(off.step_time_s[0]), rel=1e-12)
    # the flag off is today's step: no collective is hidden under an op
    assert not any(off.collectives.hidden_under)
    # TP1 has no all-reduce to fuse
    pr = load_pricer("b200", stack=get_stack("trtllm").with_gemm_allreduce_fusion(True))
    c = step_cost(load_model("llama-3.3-70b"), pr, Layout(tp=1), get_precision("nvfp4"),
                  Batch.make(prefill_tokens=2048.0, prefill_ctx=0, prefill_seqs=1))
    base = step_cost(load_model("llama-3.3-70b"), load_pricer("b200", stack=get_stack("trtllm")), Layout(tp=1),
                     get_precision("nvfp4"), Batch.make(prefill_tokens=2048.0, prefill_ctx=0, prefill_seqs=1))
    assert float(c.step_time_s[0]) == float(base.step_time_s[0])


def test_mlperf_rows_declare_it_per_config():
    assert not any(p.gemm_allreduce_fusion for p in load_mlperf(declared_fusion=False)[0])  # switched off
    pts, _ = load_mlperf()  # on by default since round 30
    fused = {p.id for p in pts if p.gemm_allreduce_fusion}
    # the configs that set 'gemm_allreduce_plugin': 'float16' (inference_results_v5.1 @965182b)
    assert "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama3p1-405b_Offline" in fused
    assert "mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama3p1-405b_Server" in fused
    # GB200-NVL72 x72 Interactive builds with norm_quant_fusion and gemm_plugin fp4 instead
    assert "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_llama3p1-405b_Interactive" not in fused
    assert not any("llama2-70b" in i or "deepseek-r1" in i for i in fused)
    assert len(fused) == 8


def test_bad_inputs_name_the_field():
    with pytest.raises(SpecError, match="gemm_allreduce_fusion: must be true or false"):
        DEFAULT_EFFICIENCY.with_overrides({"gemm_allreduce_fusion": 1})
    with pytest.raises(SpecError, match="gemm_allreduce_fusion.*must be True or False"):
        get_stack("trtllm").with_gemm_allreduce_fusion("yes")
    with pytest.raises(SpecError, match="declared_fusion: must be True or False"):
        load_mlperf(declared_fusion="yes")
    with pytest.raises(SpecError, match="stack x.gemm_allreduce_fusion: must be true or false"):
        _stack({"name": "x", "label": "x", "source": "s", "gemm_allreduce_fusion": "yes"}, 0, {})


def test_cli_set_switches_it_on_and_refuses_a_number(capsys):
    args = ["step", "-m", "llama-3.1-405b", "-s", "b200", "--precision", "nvfp4", "--tp", "4", "--batch", "0",
            "--prefill-tokens", "2048", "--stack", "trtllm", "--json"]
    # refused first: the variant cache keys on the value, and 1 == True in Python
    check_error(*run(capsys, *args, "--set", "efficiency.gemm_allreduce_fusion=1"), "gemm_allreduce_fusion",
                "must be true or false")
    code, out, _ = run(capsys, *args)
    code_on, out_on, _ = run(capsys, *args, "--set", "efficiency.gemm_allreduce_fusion=true")
    assert code == code_on == 0
    assert json.loads(out_on)["step_time_s"] < json.loads(out)["step_time_s"]
