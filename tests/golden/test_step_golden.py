"""Golden checks of one step's cost against figures worked by hand (never the code's own output).

Each case is a row (case, expected value, unit, tolerance, source) as STYLE.md §7 asks; the
arithmetic behind every expected value is written out next to it.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.moe import expected_distinct_experts
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


def _op(sc, name: str, field: str, i: int = 0) -> float:
    """Sum of ``field`` over the op rows called ``name`` at batch point ``i``."""
    rows = [j for j, n in enumerate(sc.ops.name) if n == name]
    assert rows, f"no op {name!r} in {sc.ops.name}"
    return float(getattr(sc.ops, field)[rows, i].sum())


# ---- (a) decode FLOPs per token ~ 2 x active parameters ------------------------------------

# (case, published active params, unit, tolerance, source)
DECODE_FLOP_CASES = [
    ("deepseek-r1", 37e9, "params", 0.05, "DeepSeek-V3 paper: 37B activated"),
    ("kimi-k2.5", 32e9, "params", 0.05, "Kimi K2 model card: 32B activated"),
    ("gpt-oss-120b", 5.1e9, "params", 0.05, "gpt-oss model card: 5.1B active"),
    ("llama-3.3-70b", 70.55e9, "params", 0.05, "HF model page: 70.55B (dense)"),
    ("qwen3-235b-a22b", 22e9, "params", 0.05, "Qwen3 model card: 22B activated"),
]


@pytest.mark.parametrize("name, active, unit, tol, source", DECODE_FLOP_CASES)
def test_decode_flop_per_token_is_twice_active(name, active, unit, tol, source):
    # One decoding sequence at 16 tokens of context: every GEMM is 2 FLOPs per weight touched,
    # attention over 16 tokens adds < 0.5 %, so FLOPs per token ~ 2 x active parameters.
    m = load_model(name)
    sc = step_cost(m, load_pricer("gb200-nvl72"), Layout(), get_precision(m.default_precision),
                   Batch.make(decode_seqs=1, decode_ctx=16))
    flop = float(sc.ops.flop[:, 0].sum())
    assert _rel(flop, 2 * m.active_params) < tol, (name, flop, m.active_params)
    assert _rel(flop, 2 * active) < tol, (name, flop, active, source)


def test_decode_flop_scales_with_sequences_at_short_context():
    # 8 sequences do 8x the GEMM FLOPs of one (weights are shared, FLOPs are per row).
    m = load_model("llama-3.3-70b")
    sc = step_cost(m, load_pricer("gb200-nvl72"), Layout(), get_precision("bf16"),
                   Batch.make(decode_seqs=[1, 8], decode_ctx=16))
    f = sc.ops.flop.sum(axis=0)
    assert f[1] / f[0] == pytest.approx(8.0, rel=1e-3)


# ---- (b) a roofline worked by hand: Llama-3.3-70B, H100, BF16, TP8, batch 1, ctx 1 ---------

LLAMA_EMBED = 128256 * 8192                        # input embedding 1,050,673,152 (not a GEMM)
LLAMA_WEIGHT_BYTES_PER_CHIP = (70.55e9 - LLAMA_EMBED) * 2 / 8   # = 17.375e9 B BF16 over 8 chips
LLAMA_WEIGHT_TIME_S = LLAMA_WEIGHT_BYTES_PER_CHIP / (3.35e12 * 0.85)   # = 6.10 ms

ROOFLINE_CASES = [
    ("llama TP8 weight bytes per chip", LLAMA_WEIGHT_BYTES_PER_CHIP, "B", 0.02,
     "70.55B params x 2 B / 8, less the input embedding 128256 x 8192"),
    ("llama TP8 weight read time", LLAMA_WEIGHT_TIME_S, "s", 0.02,
     "bytes / (3.35 TB/s H100 SXM x 0.85 achieved fraction)"),
]


def _llama_tp8():
    m = load_model("llama-3.3-70b")
    return step_cost(m, load_pricer("h100", "spec"), Layout(tp=8), get_precision("bf16"),
                     Batch.make(decode_seqs=1, decode_ctx=1))


def test_llama_tp8_weight_bytes_per_chip():
    case, expected, unit, tol, source = ROOFLINE_CASES[0]
    sc = _llama_tp8()
    assert _rel(float(sc.ops.weight_bytes[:, 0].sum()), expected) < tol, (case, source)


def test_llama_tp8_memory_time_of_weights():
    case, expected, unit, tol, source = ROOFLINE_CASES[1]
    sc = _llama_tp8()
    # At one row every GEMM is memory-bound: compute 2 x 33 / (0.75 x 989e12) = 8.9e-14 s per
    # weight vs memory 2 / (3.35e12 x 0.85) = 7.0e-13 s per weight; activations are < 0.2 % of
    # the bytes. So the summed roofline of the GEMMs ~ the weight read time.
    gemm = np.array([k == "gemm" for k in sc.ops.kind])
    roof = np.maximum(sc.times.compute_s, sc.times.memory_s)[gemm, 0].sum()
    assert _rel(float(sc.times.memory_s[gemm, 0].sum()), expected) < tol, (case, source)
    assert _rel(float(roof), expected) < tol, (case, source)
    # and the step can never beat the weight read
    assert float(sc.step_time_s[0]) > expected


def test_llama_tp8_gate_up_weight_bytes_by_hand():
    # gate+up of 80 layers: 80 x 8192 x 2 x 28672 / 8 x 2 B = 9,395,240,960 B per chip
    sc = _llama_tp8()
    assert _op(sc, "dense_ffn.gate_up", "weight_bytes") == 80 * 8192 * 2 * 28672 / 8 * 2


# ---- (c) MoE: distinct experts and routed-expert weight bytes ---------------------------------

# (T tokens, E experts, k per token, expected distinct, source of the arithmetic)
DISTINCT_CASES = [
    (0, 256, 8, 0.0, "no token touches no expert"),
    (1, 256, 8, 8.0, "one token touches its k distinct experts"),
    (2, 256, 8, 15.75, "256 x (1 - (31/32)^2) = 256 x 63/1024"),
    (2, 128, 4, 7.875, "128 x (1 - (31/32)^2) = 128 x 63/1024"),
    (3, 4, 2, 3.5, "4 x (1 - (1/2)^3) = 4 x 7/8"),
    (10, 2, 1, 2 * (1 - 0.5**10), "2 x (1 - 2^-10) = 1.998046875"),
    (100_000, 256, 8, 256.0, "a huge batch touches every expert"),
]


@pytest.mark.parametrize("tokens, e, k, expected, source", DISTINCT_CASES)
def test_expected_distinct_experts_hand_values(tokens, e, k, expected, source):
    got = float(expected_distinct_experts(tokens, e, k))
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-9), source


# One DeepSeek-R1 expert: 3 x 7168 x 2048 = 44,040,192 weights; 61 - 3 dense = 58 MoE layers;
# FP8 with one fp32 scale per 128x128 block: (8 + 32/16384) / 8 B per weight.
R1_EXPERT = 3 * 7168 * 2048
R1_FP8_B = (8 + 32 / 16384) / 8
R1_ROUTED_BYTES_ONE_TOKEN = 8 * R1_EXPERT * 58 * R1_FP8_B      # = 20.44e9 B


def _r1_one_token(layout=Layout()):
    m = load_model("deepseek-r1")
    return step_cost(m, load_pricer("gb200-nvl72"), layout, get_precision("fp8"),
                     Batch.make(decode_seqs=1, decode_ctx=16))


def test_deepseek_routed_expert_weight_bytes_one_token_ep1():
    sc = _r1_one_token()
    got = _op(sc, "moe.experts", "weight_bytes")
    assert _rel(got, R1_ROUTED_BYTES_ONE_TOKEN) < 0.01, (got, R1_ROUTED_BYTES_ONE_TOKEN)


def test_deepseek_routed_expert_flop_one_token_ep1():
    # 8 experts x 2 FLOPs x 44,040,192 weights x 58 layers, whichever experts they are
    sc = _r1_one_token()
    assert _op(sc, "moe.experts", "flop") == pytest.approx(2 * 8 * R1_EXPERT * 58, rel=1e-9)


def test_deepseek_routed_expert_weight_bytes_full_batch_ep8():
    # 4096 tokens over EP8: each rank holds 256/8 = 32 experts and touches all of them
    # (miss probability per expert (1 - 8/256)^4096 ~ 1e-57); reads 32 x expert x 58 layers.
    m = load_model("deepseek-r1")
    sc = step_cost(m, load_pricer("gb200-nvl72"), Layout(tp=1, dp=8, ep=8), get_precision("fp8"),
                   Batch.make(decode_seqs=4096, decode_ctx=16))
    expected = 32 * R1_EXPERT * 58 * R1_FP8_B
    assert _rel(_op(sc, "moe.experts", "weight_bytes"), expected) < 0.01


def test_routed_experts_use_the_moe_efficiencies_and_fall_back_to_the_gemm_ones():
    """Memory time of the expert op = its bytes / (W · eta_m): eta_m is moe.fp4.hbm_fraction when
    set, else gemm.fp4.hbm_fraction; the FP8 GEMMs keep gemm.fp8.hbm_fraction either way."""
    from jalapeno.cost.roofline import op_times

    base = load_pricer("gb200-nvl72", "spec")
    eff = base.efficiency.with_overrides({"gemm": {"fp4": {"hbm_fraction": 0.3}, "fp8": {"hbm_fraction": 0.4}},
                                          "moe": {"fp4": {"hbm_fraction": 0.75}, "fp8": {"hbm_fraction": 0.9}}})
    sc = step_cost(load_model("deepseek-r1"), base, Layout(tp=1, dp=8, ep=8), get_precision("fp4"),
                   Batch.make(decode_seqs=4096, decode_ctx=16))
    for e, want_moe in ((eff, 0.75), (eff.with_kernel("moe", "fp4", hbm_fraction=None), 0.3)):
        t = op_times(sc.ops, base.system.chip, e)
        j = sc.ops.name.index("moe.experts")
        assert sc.ops.kind[j] == "moe" and sc.ops.fmt[j] == "fp4"
        hand = sc.ops.bytes[j, 0] / (8e12 * want_moe)  # GB200: 8 TB/s HBM
        assert float(t.memory_s[j, 0]) == pytest.approx(hand, rel=1e-12)
        g = [k for k, n in enumerate(sc.ops.name) if sc.ops.kind[k] == "gemm" and sc.ops.fmt[k] == "fp8"]
        assert len(g) >= 5  # projections, dense and shared-expert FFNs run in FP8
        for k in g:
            assert float(t.memory_s[k, 0]) == pytest.approx(sc.ops.bytes[k, 0] / (8e12 * 0.4), rel=1e-12)


def _moe_scan_bytes(layout, passes):
    """(extra activation bytes of moe.experts with ``passes`` token passes, busiest-rank assignments per
    layer) for 512 DeepSeek-R1 decode sequences on 8 GB200 chips, FP8 experts."""
    base = load_pricer("gb200-nvl72", "spec")
    m, prec = load_model("deepseek-r1"), get_precision("fp8")
    batch = Batch.make(decode_seqs=512, decode_ctx=16)
    plain = step_cost(m, base, layout, prec, batch)
    scan = step_cost(m, base.with_efficiency(base.efficiency.with_kernel("moe", "fp8", token_passes=passes)),
                     layout, prec, batch)
    assert _op(scan, "moe.experts", "weight_bytes") == _op(plain, "moe.experts", "weight_bytes")
    load = _op(plain, "moe.experts", "flop") / (2 * 3 * 7168 * 2048 * 58)  # FLOPs = 2 · load · 3 · h · I per layer
    return _op(scan, "moe.experts", "act_bytes") - _op(plain, "moe.experts", "act_bytes"), load


def test_routed_experts_scan_the_group_tokens_under_tp():
    """TEP8: every rank holds all 512 tokens and routes them, so with p passes the expert op's
    activation bytes grow by 512 · 7168 · 2 B · p per layer, on each of DeepSeek-R1's 58 MoE layers."""
    extra, _ = _moe_scan_bytes(Layout(tp=8, ep=8), 4.0)
    assert extra == pytest.approx(512 * 7168 * 2 * 4.0 * 58, rel=1e-9)


def test_routed_experts_scan_the_received_vectors_under_dep():
    """DEP8 decode: the rank's MoE kernels take in what the all-to-all delivers, one vector per
    (token, selected expert) on the rank (DeepEP low-latency dispatch), i.e. its token-expert
    assignments: at least the mean 512 · 8 / 8 = 512, not the rank's own 64 tokens. The passes are
    fitted per kernel input vector (the kernel tables feed every rank the group's tokens)."""
    extra, load = _moe_scan_bytes(Layout(tp=1, dp=8, ep=8), 4.0)
    assert load >= 512
    assert extra == pytest.approx(load * 7168 * 2 * 4.0 * 58, rel=1e-9)


# ---- (d) MLA decode KV read --------------------------------------------------------------

@pytest.mark.parametrize("seqs, ctx", [(1, 1024), (4, 8192), (32, 2000)])
def test_deepseek_mla_decode_kv_bytes(seqs, ctx):
    # Weight-absorbed decode reads each sequence's latent once for all 128 heads:
    # seqs x ctx x (512 + 64) x 1 B (FP8 KV) x 61 layers, TP1 / DP1.
    sc = _r1_kv(seqs, ctx)
    expected_read = seqs * ctx * 576 * 1 * 61
    assert _op(sc, "attn.mla_decode", "kv_bytes") == pytest.approx(expected_read, rel=1e-12)
    # all KV traffic of the step: that read plus writing each new token's latent (seqs x 576 x 61)
    total = float(sc.ops.kv_bytes[:, 0].sum())
    assert total == pytest.approx(expected_read + seqs * 576 * 61, rel=1e-12)


def _r1_kv(seqs, ctx):
    m = load_model("deepseek-r1")
    return step_cost(m, load_pricer("gb200-nvl72"), Layout(tp=1, dp=1), get_precision("fp8"),
                     Batch.make(decode_seqs=seqs, decode_ctx=ctx))


def test_mla_kv_read_does_not_shrink_with_tp():
    # The latent has no head dimension: under TP8 every rank reads the full latent (DESIGN §7).
    m = load_model("deepseek-r1")
    sc = step_cost(m, load_pricer("gb200-nvl72"), Layout(tp=8), get_precision("fp8"),
                   Batch.make(decode_seqs=4, decode_ctx=8192))
    assert _op(sc, "attn.mla_decode", "kv_bytes") == pytest.approx(4 * 8192 * 576 * 61)


def test_gpt_oss_decode_kv_bytes_with_sliding_window():
    # 18 full layers read all L tokens, 18 sliding layers only 128; 8 kv heads x 64 x 2 x 2 B
    # per token per layer at TP1: seqs x (18 x L + 18 x 128) x 2048 B.
    m = load_model("gpt-oss-120b")
    sc = step_cost(m, load_pricer("gb200-nvl72"), Layout(), get_precision("mxfp4"),
                   Batch.make(decode_seqs=2, decode_ctx=4096))
    read = (_op(sc, "attn.decode_full", "kv_bytes") + _op(sc, "attn.decode_sliding128", "kv_bytes"))
    assert read == pytest.approx(2 * (18 * 4096 + 18 * 128) * 2048)


# ---- DeepSeek-V3.2 DSA indexer and prefill attention -----------------------------------------

def test_deepseek_v32_decode_adds_indexer_projections():
    # Same model as R1 plus, per layer and token, the indexer GEMMs
    #   wq_b 1536 -> 64 x 128, wk 7168 -> 128, weights_proj 7168 -> 64   (2 FLOPs per weight)
    # and the index scores over the 16 cached keys: 2 x 64 heads x 128 dims x 16.
    s, p, b = load_pricer("gb200-nvl72"), get_precision("fp8"), Batch.make(decode_seqs=1, decode_ctx=16)
    r1 = step_cost(load_model("deepseek-r1"), s, Layout(), p, b)
    v32 = step_cost(load_model("deepseek-v3.2"), s, Layout(), p, b)
    gemm_weights = 1536 * 64 * 128 + 7168 * 128 + 7168 * 64          # 13,959,168 per layer
    extra_flop = 61 * (2 * gemm_weights + 2 * 64 * 128 * 16)          # = 1.719e9
    got = float(v32.ops.flop[:, 0].sum() - r1.ops.flop[:, 0].sum())
    assert _rel(got, extra_flop) < 0.01, (got, extra_flop)
    extra_bytes = float(v32.ops.weight_bytes[:, 0].sum() - r1.ops.weight_bytes[:, 0].sum())
    assert extra_bytes >= 61 * gemm_weights * 1.0  # at least 1 B per indexer weight (FP8)


def test_llama_prefill_attention_flop_by_hand():
    # Causal prefill of a fresh 4096-token prompt (DESIGN §7): per layer
    # 2 x heads x (d_qk + d_v) x L^2 / 2 = 2 x 64 x 256 x 4096^2 / 2; 80 layers at TP1.
    m = load_model("llama-3.3-70b")
    sc = step_cost(m, load_pricer("gb200-nvl72"), Layout(), get_precision("bf16"),
                   Batch.make(prefill_tokens=4096))
    expected = 2 * 64 * (128 + 128) * 4096**2 / 2 * 80                 # = 2.199e13
    assert _op(sc, "attn.prefill_full", "flop") == pytest.approx(expected, rel=1e-12)


def test_deepseek_mla_prefill_attention_flop_by_hand():
    # Non-absorbed MLA prefill: q.k over 128 + 64 dims and v over 128, 128 heads, L^2/2 pairs,
    # 61 layers: 2 x 128 x (192 + 128) x 2048^2 / 2 x 61.
    m = load_model("deepseek-r1")
    sc = step_cost(m, load_pricer("gb200-nvl72"), Layout(), get_precision("fp8"),
                   Batch.make(prefill_tokens=2048))
    expected = 2 * 128 * (192 + 128) * 2048**2 / 2 * 61
    assert _op(sc, "attn.mla_prefill", "flop") == pytest.approx(expected, rel=1e-12)
