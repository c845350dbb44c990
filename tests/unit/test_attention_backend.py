"""Attention backends: GQA decode priced at a named backend's published KV-read speed (issue 18).

Expected values are computed here from the published timing (ROCm/aiter PR #5415) and the chips'
datasheet bandwidths, not read back from the code's output.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.attention_backend import AttentionBackendPricer
from jalapeno.cost.pool_backends import with_attention_backend
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import Pool
from jalapeno.deploy.engines import launch_recipe
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.recipe import _recipe
from jalapeno.errors import SpecError
from jalapeno.fit.searched import with_launch_backend
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.specs.attention_backends import attention_backend_entry, parse_attention_backends
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

BACKEND = "rocm_aiter_unified_attn"


def _one(x):
    return np.array([x], dtype=float)


def _decode_ops(system: str, model: str, seqs: float, ctx: float):
    p = load_any_pricer(system, "calibrated", pricer="roofline", stack="vllm-rocm")
    s = step_cost(load_model(model), p, Layout(tp=1), get_precision("mxfp4" if "gpt" in model else "fp8"),
                  Batch(_one(seqs), _one(ctx), _one(0), _one(0), _one(0)))
    return p, s.ops


def test_published_fraction_is_the_pr_5415_arithmetic():
    # PR #5415, MI325X, batch 32 tuned: 32 seqs x 1024-token window x 16 KV heads x 256 x (K, V) x 2 B in 161.44 us
    kv_bytes = 32 * 1024 * 16 * 256 * 2 * 2
    fraction = kv_bytes / 161.44e-6 / 6.0e12
    assert fraction == pytest.approx(0.5543, abs=1e-3)
    for system in ("mi300x", "mi325x"):
        assert attention_backend_entry(system, BACKEND)["decode_hbm_fraction"] == pytest.approx(fraction, abs=2e-3)
    assert attention_backend_entry("mi355x", BACKEND) is None  # gfx950: no published figure
    assert attention_backend_entry("mi300x", "triton_attn") is None


def test_decode_kv_read_moves_to_the_backend_fraction_and_nothing_else():
    p, ops = _decode_ops("mi300x", "gpt-oss-120b", 64, 7834)
    q = with_attention_backend(p, BACKEND)
    assert isinstance(q, AttentionBackendPricer)
    a, b = p.op_times(ops), q.op_times(ops)
    moved = [i for i, n in enumerate(ops.name) if n.startswith("attn.decode_")]
    assert {ops.name[i] for i in moved} == {"attn.decode_full", "attn.decode_sliding128"}
    for i in moved:  # memory = bytes / (MI300X's 5.3 TB/s x 0.555)
        assert b.memory_s[i, 0] == pytest.approx(ops.bytes[i, 0] / (5.3e12 * 0.555), rel=1e-9)
        assert b.time_s[i, 0] == pytest.approx(max(b.compute_s[i, 0], b.memory_s[i, 0]) + a.overhead_s[i, 0])
    # gpt-oss-120b at 7,834 tokens: 18 full layers read every token, 18 sliding layers 128;
    # 8 KV heads x head 64 x (K, V) x 2 B (BF16) per token per layer, 64 sequences: ~18.8 GB
    kv = 64 * 18 * (7834 + 128) * 8 * 64 * 2 * 2
    assert sum(ops.bytes[i, 0] for i in moved) == pytest.approx(kv, rel=0.01)
    rest = [i for i in range(len(ops.name)) if i not in moved]
    np.testing.assert_array_equal(a.time_s[rest], b.time_s[rest])


def test_mla_decode_and_other_systems_keep_the_set():
    p, ops = _decode_ops("mi300x", "deepseek-r1", 64, 2000)  # MLA decode: its own kernel family
    np.testing.assert_array_equal(p.op_times(ops).time_s, with_attention_backend(p, BACKEND).op_times(ops).time_s)
    p355 = load_any_pricer("mi355x", "calibrated", pricer="roofline", stack="vllm-rocm")
    assert with_attention_backend(p355, BACKEND) is p355
    assert with_attention_backend(p355, None) is p355


def test_the_mi3xx_gptoss_recipe_names_the_backend_and_validation_takes_it():
    for system in ("mi300x", "mi325x"):
        r = launch_recipe(system, "gpt-oss-120b", "vllm", "mxfp4")
        assert r.attention_backend == BACKEND and "ROCM_AITER_UNIFIED_ATTN" in r.source
        pool = with_launch_backend(system, "gpt-oss-120b", "vllm", "mxfp4", Pool(Layout(tp=1)))
        assert pool.attention_backend == BACKEND and pool.as_dict()["attention_backend"] == BACKEND
    assert launch_recipe("mi355x", "gpt-oss-120b", "vllm", "mxfp4") is None


def test_bad_backend_names_and_entries_are_refused_with_the_fix():
    with pytest.raises(SpecError, match="attention_backend.*unknown attention backend 'ROCM_AITER_UNIFIED_ATTN'.*lower case"):
        Pool(Layout(tp=1), attention_backend="ROCM_AITER_UNIFIED_ATTN")
    raw = {"name": "x", "engine": "vllm-rocm", "version": "0.17.0", "systems": ["mi300x"], "model": "gpt-oss-120b",
           "source": "s", "precision": "mxfp4", "serving": "agg", "attention_backend": "aiter"}
    with pytest.raises(SpecError, match=r"recipe.*attention_backend.*unknown attention backend 'aiter'"):
        _recipe(raw, 0)
    good = {"backend": BACKEND, "systems": ["mi300x"], "decode_hbm_fraction": 0.5, "source": "s"}
    assert parse_attention_backends({"entry": [good]})[("mi300x", BACKEND, "")]["decode_hbm_fraction"] == 0.5
    with pytest.raises(SpecError, match="decode_hbm_fraction.*1.5.*in \\(0, 1\\]"):
        parse_attention_backends({"entry": [{**good, "decode_hbm_fraction": 1.5}]})
    with pytest.raises(SpecError, match="source.*no source"):
        parse_attention_backends({"entry": [{**good, "source": " "}]})
    with pytest.raises(SpecError, match="unknown keys.*hbm"):
        parse_attention_backends({"entry": [{**good, "hbm": 0.5}]})
    with pytest.raises(SpecError, match="two entries"):
        parse_attention_backends({"entry": [good, good]})
    with pytest.raises(SpecError, match=r"decode_extra_s.*-1e-06.*extra fixed latency per decode attention call.*>= 0"):
        parse_attention_backends({"entry": [{**good, "decode_extra_s": -1e-6}]})
    fp8 = {**good, "kv_formats": ["fp8"]}
    assert set(parse_attention_backends({"entry": [good, fp8]})) == {("mi300x", BACKEND, ""), ("mi300x", BACKEND, "fp8")}
    with pytest.raises(SpecError, match="two entries for rocm_aiter_unified_attn with KV fp8"):
        parse_attention_backends({"entry": [fp8, fp8]})


# ---- vLLM's FlashAttention 3 on Hopper (issue 18, vllmdense16) ----------------------------------

def _llama_decode(system: str, kv: str, seqs: float, ctx: float, tp: int = 1):
    p = load_any_pricer(system, "calibrated", pricer="roofline", stack="vllm")
    prec = get_precision("fp8-tensor").with_options(kv=kv)
    s = step_cost(load_model("llama-3.3-70b"), p, Layout(tp=tp), prec, Batch(_one(seqs), _one(ctx), _one(0), _one(0),
                                                                                 _one(0)))
    return p, s.ops


def test_fa3_figures_are_the_fitted_table_arithmetic():
    # scripts/vllm_decode_attention_fit.py on aiconfigurator-core 0.12.0 (t0 us, f) per engine, FP8 KV;
    # set hbm_fraction from data/calibration/h1x0.toml
    for system, set_hbm, (t0v, fv), (t0t, ft) in (("h200", 0.86537, (15.89, 0.5499), (6.89, 0.6443)),
                                                  ("h100", 0.88042, (15.95, 0.7175), (6.90, 0.7474))):
        e = attention_backend_entry(system, "flash_attn", "fp8")
        assert e["decode_hbm_fraction"] == pytest.approx(set_hbm * fv / ft, abs=1e-3)
        assert e["decode_extra_s"] == pytest.approx((t0v - t0t) * 1e-6, abs=0.02e-6)
        assert attention_backend_entry(system, "flash_attn", "bf16") is None  # BF16 KV keeps the set
        assert attention_backend_entry(system, "flash_attn") is None
    assert attention_backend_entry("b200", "flash_attn", "fp8") is None


def test_fa3_moves_the_kv_read_and_adds_its_fixed_latency_per_layer():
    # H200, Llama-3.3-70B TP1, 32 sequences at 4,608 tokens (1k/8k mean context), FP8 KV
    p, ops = _llama_decode("h200", "fp8", 32, 4608)
    q = with_attention_backend(p, "flash_attn", "fp8")
    assert isinstance(q, AttentionBackendPricer)
    a, b = p.op_times(ops), q.op_times(ops)
    i = ops.name.index("attn.decode_full")
    kv = 32 * 4608 * 80 * 8 * 128 * 2 * 1  # sequences x tokens x layers x KV heads x head x (K, V) x 1 B
    assert ops.kv_bytes[i, 0] == pytest.approx(kv, rel=1e-9)
    assert b.memory_s[i, 0] == pytest.approx(ops.bytes[i, 0] / (4.8e12 * 0.739), rel=1e-9)  # 24.2 GB: 6.8 ms
    assert b.memory_s[i, 0] == pytest.approx(6.84e-3, rel=0.01)
    assert b.overhead_s[i, 0] - a.overhead_s[i, 0] == pytest.approx(80 * 8.99e-6, rel=1e-9)  # 0.72 ms per step
    rest = [j for j in range(len(ops.name)) if j != i]
    np.testing.assert_array_equal(a.time_s[rest], b.time_s[rest])
    assert with_attention_backend(p, "flash_attn", "bf16") is p
    pb = load_any_pricer("b200", "calibrated", pricer="roofline", stack="vllm")
    assert with_attention_backend(pb, "flash_attn", "fp8") is pb


def test_vllm_aiconfigurator_rows_on_hopper_run_fa3_and_trtllm_rows_do_not():
    from jalapeno.fit.aic_row_engine import with_row_attention_backend
    from jalapeno.deploy.deployment import Deployment

    dep = Deployment(get_precision("fp8-tensor"), Pool(Layout(tp=2)))
    assert with_row_attention_backend(dep, "vllm", "h100").decode.attention_backend == "flash_attn"
    assert with_row_attention_backend(dep, "vllm", "b200") is dep  # FlashInfer first on 10.x: no entry
    assert with_row_attention_backend(dep, "trtllm", "h200") is dep
    own = Deployment(get_precision("fp8-tensor"), Pool(Layout(tp=2), attention_backend="triton_attn"))
    assert with_row_attention_backend(own, "vllm", "h200") is own  # a launch's own backend stays
