"""cost/decode_blocks.py: TensorRT-LLM's per-(sequence, KV head) latency floor under GQA decode attention (round 50,
trtattn50), and scripts/trt_decode_blocks50.py's fit. Expected values are worked by hand in the comments (the floors
are cost/decode_blocks.BLOCK_S's fitted constants, inputs here; the HBM peak is the catalog chip's)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from script_module import load_script

import jalapeno.cost.decode_blocks as db
from jalapeno.cost.attention import RankBatch, add_gqa_decode_kernel
from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import with_decode_blocks
from jalapeno.errors import SpecError
from jalapeno.fit.table_lookup import load_any_pricer

blocks50 = load_script("trt_decode_blocks50")


@pytest.fixture
def on(monkeypatch):
    monkeypatch.setattr(db, "TRT_DECODE_BLOCKS_ON", True)


def _gptoss_sliding(b: float, ctx: float, kv_bytes: float, layers: float = 18.0):
    """gpt-oss-120b's 128-token sliding-window decode op at attention TP1 (64 query / 8 KV heads, head 64)."""
    ob = OpBuilder(1)
    add_gqa_decode_kernel(
        ob,
        RankBatch(np.array([b]), np.array([b]), np.array([ctx]), *[np.zeros(1)] * 3),
        64,
        8,
        64,
        "bf16",
        64 * kv_bytes,
        layers,
        window=128,
    )
    return ob.build()[0]


def _trt_b200():
    p = load_any_pricer("b200", "calibrated")
    return p.with_efficiency(dataclasses.replace(p.efficiency, all_reduce_table="trtllm"))


def test_off_builds_and_prices_as_before():
    # off: the op's rows stay the default 1 and no pricer is wrapped (the switch-off figures are the old ones)
    assert not db.TRT_DECODE_BLOCKS_ON
    assert float(_gptoss_sliding(1012, 1382, 1.0).rows[0, 0]) == 1.0
    p = _trt_b200()
    assert with_decode_blocks(p, "fp8_e4m3") is p


def test_sliding_window_floor_by_hand(on):
    # B200 FP8 KV, 1,012 sequences (row 47's per-rank batch), 18 sliding layers: blocks 1,012 x 8 = 8,096 a call;
    # floor 8,096 x 13.25 ns = 107.27 us a call, 1,930.9 us for 18. KV read 1,012 x 128 x 2 x 8 x 64 x 1 B =
    # 132.6 MB a call, 2.387 GB for 18, plus the activations 1,012 x 64 x 64 x 4 B = 16.6 MB a call (0.298 GB): 2.685 GB,
    # at 0.927 of 8 TB/s (the set's fraction, B200 peak) 362.1 us, so the floor binds.
    p = _trt_b200()
    w = with_decode_blocks(p, "fp8_e4m3")
    assert isinstance(w, db.DecodeBlockPricer) and w.block_s == pytest.approx(13.25e-9)
    t = _gptoss_sliding(1012, 1382, 1.0)
    assert float(t.rows[0, 0]) == 8096.0
    base, new = p.op_times(t), w.op_times(t)
    assert float(base.memory_s[0, 0]) * 1e6 == pytest.approx(
        18
        * (1012 * 128 * 2 * 8 * 64 + 1012 * 64 * 64 * 4)
        / (p.system.chip.hbm_bandwidth_bytes_per_s * p.efficiency.hbm_fraction)
        * 1e6,
        rel=1e-9,
    )
    assert float(new.memory_s[0, 0]) * 1e6 == pytest.approx(18 * 8096 * 13.25e-3, rel=1e-9)  # 1,930.9 us
    assert float(new.time_s[0, 0] - base.time_s[0, 0]) == pytest.approx(
        float(new.memory_s[0, 0] - max(base.memory_s[0, 0], base.compute_s[0, 0])), rel=1e-9
    )


def test_long_context_keeps_its_price(on):
    # 64 sequences at 8,192 tokens, BF16, full attention, one layer: read 64 x 8192 x 2 x 8 x 64 x 2 B = 1.07 GB
    # (~145 us at 0.927 x 8 TB/s) against a floor of 64 x 8 x 17.44 ns = 8.9 us: the op is priced as before
    p = _trt_b200()
    ob = OpBuilder(1)
    add_gqa_decode_kernel(
        ob,
        RankBatch(np.array([64.0]), np.array([64.0]), np.array([8192.0]), *[np.zeros(1)] * 3),
        64,
        8,
        64,
        "bf16",
        128.0,
        1.0,
    )
    t = ob.build()[0]
    assert np.array_equal(with_decode_blocks(p, "bf16").op_times(t).time_s, p.op_times(t).time_s)


def test_only_trt_sets_blackwell_and_listed_kv(on):
    # a non-TensorRT-LLM set, a Hopper system (no row: the form misfits Hopper's table) and an NVFP4 KV cache: unwrapped
    p = load_any_pricer("b200", "calibrated")
    assert p.efficiency.all_reduce_table != "trtllm"
    assert with_decode_blocks(p, "fp8_e4m3") is p
    h = load_any_pricer("h200", "calibrated")
    h = h.with_efficiency(dataclasses.replace(h.efficiency, all_reduce_table="trtllm"))
    assert with_decode_blocks(h, "fp8_e4m3") is h
    b = _trt_b200()
    assert with_decode_blocks(b, "nvfp4") is b
    assert db.kv_dtype_key("fp8_e4m3") == "fp8" and db.kv_dtype_key(None) == "bf16"


def test_block_floor_by_hand():
    # max(model, c x blocks): 12 ns x 1,000 blocks = 12 us over a 10 us model; a 50 us model keeps its time
    assert blocks50.block_floor_s([10e-6, 50e-6], [1000, 1000], 12e-9) == pytest.approx([12e-6, 50e-6])


def test_fit_recovers_a_known_floor():
    # rows whose measured time is exactly max(model, 13 ns x blocks): the fit gives 13 ns back
    rng = np.random.default_rng(0)
    model = rng.uniform(5e-6, 200e-6, 400)
    blocks = rng.uniform(256, 16384, 400)
    c = blocks50.fit_block_floor(model, blocks, np.maximum(model, 13e-9 * blocks))
    assert c == pytest.approx(13e-9, rel=1e-3)


def test_residual_slope_recovers_constants_and_zero():
    # measured = model + 4 us + 60 ns x B -> (4 us, 60 ns); measured = model + 4 us -> slope 0
    rng = np.random.default_rng(1)
    model, b = rng.uniform(10e-6, 500e-6, 300), rng.uniform(1, 2048, 300)
    t0, a = blocks50.fit_residual_slope(model, b, model + 4e-6 + 60e-9 * b)
    assert t0 == pytest.approx(4e-6, rel=1e-3) and a == pytest.approx(60e-9, rel=1e-3)
    assert blocks50.fit_residual_slope(model, b, model + 4e-6)[1] == pytest.approx(0.0, abs=1e-12)


def test_fits_refuse_too_few_rows():
    with pytest.raises(SpecError, match="rows"):
        blocks50.fit_block_floor([1e-5], [100], [1e-5])
    with pytest.raises(SpecError, match="rows"):
        blocks50.fit_residual_slope([1e-5, 2e-5], [1, 2], [1e-5, 2e-5])


def test_only_gqa_decode_ops_get_the_floor(on):
    # the same 1,012-sequence call built under another name (a GQA prefill op's name) and as a kernel-family op (as
    # MLA's attn.mla_decode carries "mla_decode", priced by its own kernel fit): neither is a GQA decode op, so the
    # floor (1,930.9 us for 18 layers, test_sliding_window_floor_by_hand) must leave both at the inner pricer's time
    p = _trt_b200()
    w = with_decode_blocks(p, "fp8_e4m3")
    t = _gptoss_sliding(1012, 1382, 1.0)
    for other in (
        dataclasses.replace(t, name=("attn.prefill_sliding128",)),
        dataclasses.replace(t, kernel=("mla_decode",)),
    ):
        assert np.array_equal(w.op_times(other).memory_s, p.op_times(other).memory_s)
    assert float(w.op_times(t).memory_s[0, 0]) > float(p.op_times(t).memory_s[0, 0])  # the GQA op itself: floored


def test_a_set_derived_from_another_chip_gets_no_floor(on):
    # a set wholly derived from another chip prices with no measurement of this one (cost/pricer.measured_here): a
    # B200 TensorRT-LLM set re-sourced as derived from b300 is not wrapped, though B200 and FP8 have a BLOCK_S row
    p = _trt_b200()
    derived = p.with_efficiency(
        dataclasses.replace(p.efficiency, source="calibrated (derived from b300; set calibrated; x.toml)")
    )
    assert with_decode_blocks(derived, "fp8_e4m3") is derived
