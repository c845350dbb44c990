"""cost/decode_blocks.py: TensorRT-LLM's per-(sequence, KV head) latency floor under GQA decode attention (round 50,
trtattn50; weighted by the query tile, round 51, trtattn51), and scripts/trt_decode_blocks50.py's and
trt_decode_blocks51.py's fits. Expected values are worked by hand in the comments (the floors are
cost/decode_blocks.BLOCK_S's fitted constants, inputs here; the HBM peak is the catalog chip's)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from script_module import load_script

import jalapeno.cost.decode_blocks as db
from jalapeno.cost.attention import RankBatch, add_gqa_decode_kernel
from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pool_backends import with_decode_blocks
from jalapeno.errors import SpecError
from jalapeno.fit.table_lookup import load_any_pricer

blocks50 = load_script("trt_decode_blocks50")
blocks51 = load_script("trt_decode_blocks51")


@pytest.fixture
def on(monkeypatch):
    monkeypatch.setattr(db, "TRT_DECODE_BLOCKS_ON", True)


def test_shipped_on():
    # round 51 (trtattn51) turned the floor on: it passed the round's rule (docs/gap_large_batch_decode.md)
    assert db.TRT_DECODE_BLOCKS_ON is True


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


def test_off_builds_and_prices_as_before(monkeypatch):
    # off: the op's rows stay the default 1 and no pricer is wrapped (the switch-off figures are the old ones)
    monkeypatch.setattr(db, "TRT_DECODE_BLOCKS_ON", False)
    assert float(_gptoss_sliding(1012, 1382, 1.0).rows[0, 0]) == 1.0
    p = _trt_b200()
    assert with_decode_blocks(p, "fp8_e4m3") is p


def test_sliding_window_floor_by_hand(on):
    # B200 FP8 KV, 1,012 sequences (row 47's per-rank batch), 18 sliding layers: blocks 1,012 x 8 = 8,096 a call, 8
    # query heads a KV head (tile 8: weight (8 + 8) / (8 + 8) = 1); floor 8,096 x 11.71 ns = 94.80 us a call,
    # 1,706.5 us for 18. KV read 1,012 x 128 x 2 x 8 x 64 x 1 B =
    # 132.6 MB a call, 2.387 GB for 18, plus the activations 1,012 x 64 x 64 x 4 B = 16.6 MB a call (0.298 GB): 2.685 GB,
    # at 0.927 of 8 TB/s (the set's fraction, B200 peak) 362.1 us, so the floor binds.
    p = _trt_b200()
    w = with_decode_blocks(p, "fp8_e4m3")
    assert isinstance(w, db.DecodeBlockPricer) and w.block_s == pytest.approx(11.71e-9)
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
    assert float(new.memory_s[0, 0]) * 1e6 == pytest.approx(18 * 8096 * 11.71e-3, rel=1e-9)  # 1,706.5 us
    assert float(new.time_s[0, 0] - base.time_s[0, 0]) == pytest.approx(
        float(new.memory_s[0, 0] - max(base.memory_s[0, 0], base.compute_s[0, 0])), rel=1e-9
    )


def test_long_context_keeps_its_price(on):
    # 64 sequences at 8,192 tokens, BF16, full attention, one layer: read 64 x 8192 x 2 x 8 x 64 x 2 B = 1.07 GB
    # (~145 us at 0.927 x 8 TB/s) against a floor of 64 x 8 x 14.11 ns = 7.2 us: the op is priced as before
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
    # floor (1,706.5 us for 18 layers, test_sliding_window_floor_by_hand) must leave both at the inner pricer's time
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


def test_weighted_blocks_by_hand():
    # 100 sequences, 1 KV head: g 8 -> tile 8, (8 + 8) / 16 = 1 -> 100; g 16 -> tile 16, 24 / 16 = 1.5 -> 150;
    # g 12 -> tile 16 -> 150; g 32 -> tile 32, 40 / 16 = 2.5 -> 250; g 64 -> a block per query head: 100 x 64 = 6,400;
    # 8 KV heads with 128 query heads (Llama-3.1-405B at TP1, g 16): 100 x 8 x 1.5 = 1,200
    w = db.weighted_blocks(np.full(5, 100.0), 1, np.array([8, 16, 12, 32, 64]))
    assert w.tolist() == pytest.approx([100.0, 150.0, 150.0, 250.0, 6400.0])
    assert float(db.weighted_blocks(100.0, 8, 128)) == pytest.approx(1200.0)


def test_decode_blocks_reads_the_query_heads(on):
    # on: an op built with 64 query / 8 KV heads carries 1,012 x 8 = 8,096 (g 8); 128 / 8 (g 16) 1,012 x 8 x 1.5 =
    # 12,144; no query heads passed: read as g <= 8, 8,096
    assert float(db.decode_blocks(np.array([1012.0]), 8, 64)[0]) == pytest.approx(8096.0)
    assert float(db.decode_blocks(np.array([1012.0]), 8, 128)[0]) == pytest.approx(12144.0)
    assert float(db.decode_blocks(np.array([1012.0]), 8)[0]) == pytest.approx(8096.0)


def test_one_kv_head_many_query_heads_against_the_table(on):
    # aiconfigurator's B200 FP8 table (TensorRT-LLM 1.3.0rc20): 2,048 sequences, 1 KV / 64 query heads, head 128,
    # 2-token context takes 1,125.6 us (the MHA shape 64 / 64 takes 1,118.5 us). Round 50's floor priced 2,048 x 1 x
    # 13.25 ns = 27.1 us (1/41 of it); a block per query head prices 2,048 x 64 x 11.71 ns = 1,534.9 us (1.36x)
    w = float(db.weighted_blocks(2048.0, 1, 64))
    assert w * 11.71e-9 * 1e6 == pytest.approx(1534.9, rel=1e-4)
    assert 0.5 < w * 11.71e-9 / 1125.6e-6 < 1.5 and 2048 * 13.25e-9 / 1125.6e-6 < 0.05


def test_tau_fit_recovers_known_constants():
    # rows whose measured time is exactly max(model, 11 ns x W(tau 6)): the free fit gives (11 ns, 6) back
    rng = np.random.default_rng(2)
    n = 600
    seqs = rng.choice([32.0, 128.0, 512.0, 2048.0], n)
    kv = rng.choice([1.0, 2.0, 4.0, 8.0], n)
    q = kv * rng.choice([1.0, 8.0, 16.0, 32.0, 64.0], n)
    model = rng.uniform(5e-6, 60e-6, n)
    tile = np.where(q / kv <= 8, 8.0, np.where(q / kv <= 16, 16.0, 32.0))
    w = np.where(q / kv > 32, seqs * q, seqs * kv * (tile + 6.0) / 14.0)
    c, tau = blocks51.fit_floor_tau(model, seqs, kv, q, np.maximum(model, 11e-9 * w))
    assert c == pytest.approx(11e-9, rel=1e-3) and tau == pytest.approx(6.0, rel=1e-2)
    with pytest.raises(SpecError, match="rows"):
        blocks51.fit_floor_tau([1e-5], [32], [1], [8], [1e-5])
