"""The serial k loop of block-scaled FP8 GEMMs (KernelEfficiency.k_block_s; cost/roofline.k_serial_s).

Expected values: by hand from the definition (k / 128 blocks x k_block_s), and from TensorRT-LLM
1.3.0rc20's own GEMM table (aiconfigurator-core ``gemm_perf``, ``fp8_block`` rows at m = 8): its
slope in k at n = 256, read from the table, not from the model.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import RooflinePricer
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_efficiency, load_system
from jalapeno.specs.efficiency import Efficiency

H200_HBM = 4.8e12  # B/s, the catalog's H200 HBM3e bandwidth (data/systems)


def _gemm(m: float, k: float, n: float, key: str = "fp8_block"):
    ob = OpBuilder(1)
    ob.gemm("g", "fp8", m, k, n, 1.0, 1.0, key=key)
    return ob.build()[0]


def _pricer(**gemm_entry) -> RooflinePricer:
    eff = Efficiency().with_overrides({"kernel_launch_s": 2e-6, "gemm": {"fp8_block": {"hbm_fraction": 0.75,
                                                                                       **gemm_entry}}})
    return RooflinePricer(load_system("h200"), eff)


def test_few_rows_long_k_priced_by_the_serial_k_loop():
    # q_a_proj of DeepSeek-R1 at 8 rows: [8, 7168] x [7168, 1536] FP8: 11.0 MB of weights stream in
    # 11.0e6 / (4.8e12 x 0.75) = 3.06 us; 7168 / 128 = 56 blocks x 0.15 us = 8.4 us serial; + 2 us launch
    t = _pricer(k_block_s=0.15e-6).op_times(_gemm(8, 7168, 1536))
    assert float(t.time_s[0, 0]) == pytest.approx(8.4e-6 + 2e-6, rel=1e-6)
    assert float(t.memory_s[0, 0]) == pytest.approx((7168 * 1536 + 8 * 7168 + 2 * 8 * 1536) / (H200_HBM * 0.75),
                                                     rel=1e-3)


def test_wide_gemm_stays_bandwidth_bound():
    # [8, 7168] x [7168, 16384]: 117 MB stream in ~32.6 us, above the 8.4 us serial loop: unchanged
    with_k = _pricer(k_block_s=0.15e-6).op_times(_gemm(8, 7168, 16384))
    without = _pricer().op_times(_gemm(8, 7168, 16384))
    assert float(with_k.time_s[0, 0]) == pytest.approx(float(without.time_s[0, 0]))
    assert float(with_k.time_s[0, 0]) > 8.4e-6 + 2e-6 + 20e-6


def test_term_belongs_to_its_own_entry_only():
    # a per-tensor FP8 GEMM (key fp8) takes no serial term from the fp8_block entry, nor does a table
    # op of another kind
    p = _pricer(k_block_s=0.15e-6)
    assert float(p.op_times(_gemm(8, 7168, 1536, key="fp8")).time_s[0, 0]) < 8.4e-6


def test_calibrated_h200_slope_matches_trtllm_table():
    """The fitted H200 k_block_s against the table's own rise in k at m = 8, n = 256 (weights small)."""
    pytest.importorskip("pyarrow")
    kt = pytest.importorskip("jalapeno.fit.kernel_tables")
    try:
        df, _ = kt.load_table("h200_sxm", "gemm", "gemm_perf")
    except SpecError:
        pytest.skip("aiconfigurator-core not installed")
    d = df[(df.gemm_dtype == "fp8_block") & (df.m == 8) & (df.n == 256)].groupby("k").latency.min() * 1e-3
    slope = (d.loc[16384] - d.loc[256]) / ((16384 - 256) / 128)  # s per 128 of k, measured
    fitted = load_efficiency("h200").gemm["fp8_block"].k_block_s
    assert fitted == pytest.approx(slope, rel=0.2)
    # and what it prices: 56 blocks of q_a_proj against the table's 12.1-13.0 us at m = 8, k = 7168
    assert 56 * fitted == pytest.approx(float(d.loc[7168] - d.loc[256]), rel=0.35)


def test_bad_k_block_s_named_with_fix():
    with pytest.raises(SpecError, match=r"gemm\.fp8_block\.k_block_s.*must be >= 0"):
        Efficiency().with_overrides({"gemm": {"fp8_block": {"k_block_s": -1e-7}}})
    with pytest.raises(SpecError, match=r"seconds per 128 of k"):
        Efficiency().with_overrides({"gemm": {"fp8_block": {"k_block_s": 0.15}}})
    with pytest.raises(SpecError, match=r"unknown moe parameter"):
        Efficiency().with_overrides({"moe": {"fp8": {"k_block_s": 1e-7}}})


def test_no_shapes_no_term():
    # an op table without (k, n) (a hand-built table) gets no serial term rather than a wrong one
    from jalapeno.cost.roofline import k_serial_s

    ob = OpBuilder(2)
    ob.op("x", "gemm", "fp8", flop=np.array([1.0, 1.0]), key="fp8_block")
    eff = Efficiency().with_overrides({"gemm": {"fp8_block": {"k_block_s": 1e-7}}})
    assert k_serial_s(ob.build()[0], eff).tolist() == [[0.0, 0.0]]


def _attn_gemms(model):
    from jalapeno.cost.ops import build_step_ops
    from jalapeno.cost.step import Batch
    from jalapeno.deploy.layout import Layout
    from jalapeno.specs.formats import get_precision

    b = Batch(decode_seqs=np.array([8.0]), decode_ctx=np.array([1000.0]), prefill_tokens=np.array([0.0]),
              prefill_seqs=np.array([0.0]), prefill_ctx=np.array([0.0]))
    ops, _ = build_step_ops(model, load_system("h200").chip, Layout(tp=8), get_precision("fp8"), b, Efficiency())
    return {n: kn for n, kn, kind in zip(ops.name, ops.kn, ops.kind) if kind == "gemm" and n.startswith("attn.")}


def test_mla_a_projections_are_one_fused_gemm():
    # DeepSeek-R1 (config.json: hidden 7168, q_lora_rank 1536, kv_lora_rank 512, qk_rope_head_dim 64):
    # q_a_proj and kv_a_proj_with_mqa run as one [7168 -> 1536 + 512 + 64 = 2112] GEMM, as TensorRT-LLM's
    # MLA module holds them (and aiconfigurator times it: gemm 7168 x 2112)
    from jalapeno.specs.catalog import load_model

    g = _attn_gemms(load_model("deepseek-r1"))
    assert "attn.q_a_proj" not in g and "attn.kv_a_proj" not in g
    k, n = g["attn.qkv_a_proj"]
    assert (float(k), float(n)) == (7168.0, 2112.0)


def test_mla_without_q_lora_keeps_separate_projections():
    # an MLA model without a query low-rank (DeepSeek-V2-Lite's form): q_proj straight from the hidden
    # state and kv_a_proj stay two GEMMs (16 heads x 192 / TP8 = 384; 512 + 64 = 576)
    from dataclasses import replace

    from jalapeno.specs.catalog import load_model

    m = load_model("deepseek-r1")
    m = replace(m, attention=replace(m.attention, q_lora_rank=0))
    g = _attn_gemms(m)
    assert "attn.qkv_a_proj" not in g
    assert float(g["attn.kv_a_proj"][1]) == 576.0
    assert float(g["attn.q_proj"][1]) == 128 / 8 * 192
