"""Unit tests of the aggregated analytic serving model (serve/analytic.py).

Expected values are computed by hand in this file from the tiny system and model written to
``tmp_path`` below (DESIGN.md §7 "Aggregated serving at closed-loop concurrency C"), never copied
from the code's output.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from tiny_fixtures import (
    HBM_TB_S,
    HEAD_DIM,
    HEADS,
    INTER,
    KV_HEADS,
    LAYERS,
    VOCAB,
    H,
    model_config,
    system_toml,
)

from jalapeno.deploy.deployment import MTP, Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.analytic import (
    aggregated_by_batch,
    solve_concurrency,
)
from jalapeno.serve.agg_batch_cap import aggregated_batch_cap
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.model_file import load_model_file
from jalapeno.specs.workload import LengthSpread, Workload, get_workload

# ---------------------------------------------------------------- the tiny hand example

HBM_GB = 40.0



@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny")
    (d / "sys.toml").write_text(system_toml(HBM_GB))
    (d / "small.toml").write_text(system_toml(3.0))
    (d / "config.json").write_text(json.dumps(model_config()))
    system = load_pricer(str(d / "sys.toml"))
    small = load_pricer(str(d / "small.toml"))
    model = load_model_file(d / "config.json", name="tiny-llama")
    return model, system, small


BF16 = 2.0  # bytes per element: weights and KV in the bf16 preset

# Weight elements one step reads (TP1): per layer q/k/v + o + SwiGLU gate/up/down; LM head.
QKV = H * (HEADS + 2 * KV_HEADS) * HEAD_DIM  # 6,291,456
O_PROJ = HEADS * HEAD_DIM * H  # 4,194,304
FFN = 3 * H * INTER  # 50,331,648
LM_HEAD = VOCAB * H  # 65,536,000
WEIGHT_BYTES_READ = (LAYERS * (QKV + O_PROJ + FFN) + LM_HEAD) * BF16  # 374,341,632 B
KV_BYTES_PER_TOKEN = LAYERS * 2 * KV_HEADS * HEAD_DIM * BF16  # K and V: 4,096 B


def test_hand_numbers_are_what_they_say():
    """Pin the hand arithmetic itself, so a typo in the constants cannot hide."""
    assert WEIGHT_BYTES_READ == 374_341_632
    assert KV_BYTES_PER_TOKEN == 4096


def test_tiny_model_parsed_as_written(tiny):
    model, system, _ = tiny
    assert model.kv_bytes_per_token(BF16) == KV_BYTES_PER_TOKEN
    # active params = the weights read above + 2 norms per layer + the final norm
    assert model.active_params == LAYERS * (QKV + O_PROJ + FFN + 2 * H) + LM_HEAD + H
    assert system.system.chip.hbm_bandwidth_bytes_per_s == 1e12
    assert system.efficiency.step_overhead_s == 0


ISL, OSL = 64, 1025  # fixed lengths (range_ratio 1): OSL - 1 = 1024 decode steps
B = 2.0


def _hand_step_s(batch: float) -> float:
    """Memory-bound decode step: every weight once + every sequence's KV at its mean context.

    Mean resident context = ISL + OSL/2 (half the output generated on average). At B = 2 the
    activations (≈ 0.19 MB per token) and FLOPs (2·rows·params / 1 PFLOP/s ≈ 1 µs) are under 0.3%.
    """
    ctx = ISL + OSL / 2  # 576.5
    kv_read = batch * ctx * KV_BYTES_PER_TOKEN
    return (WEIGHT_BYTES_READ + kv_read) / (HBM_TB_S * 1e12)


def test_length_spread_prices_the_output_weighted_context(tiny):
    """Two requests (ISL 64, OSL 1025) and (64, 3073): each decodes OSL - 1 steps at a mean context
    ISL + OSL/2, so the steps see (1024·576.5 + 3072·1600.5)/4096 = 1344.5 tokens per sequence, not
    the 64 + 2049/2 = 1088.5 of fixed lengths at the same means; the step reads that much KV."""
    model, system, _ = tiny
    wl = Workload("two", 64, 2049, 1.0, spread=LengthSpread("two", np.array([64, 64]), np.array([1025, 3073])))
    assert wl.decode_ctx == 1344.5 and (wl.mean_isl, wl.mean_osl) == (64, 2049)
    fixed = Workload("fixed", 64, 2049, 1.0)
    assert fixed.decode_ctx == 1088.5
    dep = Deployment(get_precision("bf16"), Pool(Layout(tp=1)))
    r = aggregated_by_batch(model, system, dep, wl, np.array([B])).record(0)
    tau = (WEIGHT_BYTES_READ + B * 1344.5 * KV_BYTES_PER_TOKEN) / (HBM_TB_S * 1e12)
    assert r["step_time_s"] >= tau * (1 - 1e-9)
    assert r["step_time_s"] == pytest.approx(tau, rel=5e-3)
    f = aggregated_by_batch(model, system, dep, fixed, np.array([B])).record(0)
    assert f["step_time_s"] == pytest.approx((WEIGHT_BYTES_READ + B * 1088.5 * KV_BYTES_PER_TOKEN) / 1e12, rel=5e-3)


def test_hand_computed_aggregated_point(tiny):
    model, system, _ = tiny
    wl = Workload("hand", ISL, OSL, range_ratio=1.0)
    dep = Deployment(get_precision("bf16"), Pool(Layout(tp=1)))
    pts = aggregated_by_batch(model, system, dep, wl, np.array([B]))
    r = pts.record(0)

    # prefill tokens per step p = B·ISL/(OSL−1) = 2·64/1024 = 0.125: negligible bytes
    tau = _hand_step_s(B)  # = (374,341,632 + 2·576.5·4096) B / 1e12 B/s ≈ 379.06 µs
    assert tau == pytest.approx(379.064_320e-6, rel=1e-9)
    # roofline: the model can only add (activations, FLOPs), never go below bytes/bandwidth
    assert r["step_time_s"] >= tau * (1 - 1e-9)
    assert r["step_time_s"] == pytest.approx(tau, rel=5e-3)
    assert r["tpot_s"] == pytest.approx(tau, rel=5e-3)
    assert r["interactivity"] == pytest.approx(1 / tau, rel=5e-3)

    lam = B / ((OSL - 1) * tau)  # Little's law on the decode batch: ≈ 5.152 req/s
    assert r["request_rate_per_s"] == pytest.approx(lam, rel=5e-3)
    assert r["throughput_per_chip"] == pytest.approx(lam * (ISL + OSL) / 1, rel=5e-3)
    assert r["output_throughput_per_chip"] == pytest.approx(lam * OSL, rel=5e-3)
    assert r["chips"] == 1

    # E2E = TTFT + (OSL−1)·τ and C = λ·E2E (exact identities of the closed loop)
    assert r["e2e_s"] == pytest.approx(r["ttft_s"] + (OSL - 1) * r["step_time_s"], rel=1e-9)
    assert r["concurrency"] == pytest.approx(r["request_rate_per_s"] * r["e2e_s"], rel=1e-9)
    # TTFT: half a step of wait + one step carrying the whole 64-token prompt; that step reads
    # the same weights and KV plus the activations of 64 more rows (< 0.6 MB each here)
    assert 1.5 * tau * (1 - 1e-9) <= r["ttft_s"] <= 1.5 * tau + 64 * 0.6e6 / 1e12
    # so C = B + λ·TTFT ≈ 2 + 1.5·τ·λ = 2 + 1.5·2/1024
    assert r["concurrency"] == pytest.approx(B + 1.5 * B / (OSL - 1), rel=5e-3)
    assert r["bound"] == "hbm_bandwidth"
    assert r["feasible"]


def test_step_time_grows_by_kv_bytes_per_extra_sequence(tiny):
    """Between B = 2 and B = 4 the step adds 2 sequences' KV (memory bound), ≈ 4.72 µs."""
    model, system, _ = tiny
    wl = Workload("hand", ISL, OSL, range_ratio=1.0)
    dep = Deployment(get_precision("bf16"), Pool(Layout(tp=1)))
    pts = aggregated_by_batch(model, system, dep, wl, np.array([2.0, 4.0]))
    d_tau = pts.step_time_s[1] - pts.step_time_s[0]
    hand = 2 * (ISL + OSL / 2) * KV_BYTES_PER_TOKEN / 1e12
    # the activations of 2 more rows ride on top of the 4.72 MB of KV: GEMM inputs/outputs
    # rows·(k·2 + 2·n) = 2·(10,240 + 8,192 + 36,864 + 20,480) + 68,096 ≈ 0.22 MB per row, plus
    # norms, residuals and the SwiGLU activation: allow up to 0.6 MB per row
    assert hand * (1 - 1e-9) <= d_tau <= hand + 2 * 0.6e6 / 1e12


# ---------------------------------------------------------------- Little's law, capacity knee


def test_littles_law_on_solved_concurrencies():
    model, system = load_model("gpt-oss-120b"), load_pricer("h100")
    wl = get_workload("1k1k")
    dep = Deployment(get_precision("mxfp4"), Pool(Layout(tp=4, ep=4)))
    c = np.array([1.0, 4.0, 16.0, 64.0, 256.0])
    pts = solve_concurrency(model, system, dep, wl, c)
    little = pts.request_rate_per_s * pts.e2e_s
    np.testing.assert_allclose(little, c, rtol=0.02)
    np.testing.assert_allclose(pts.concurrency, c, rtol=0.02)
    # TPOT = (E2E − TTFT)/(OSL − 1) with the mean OSL (DESIGN.md §3)
    np.testing.assert_allclose(pts.tpot_s, (pts.e2e_s - pts.ttft_s) / (wl.mean_osl - 1), rtol=1e-9)
    assert np.all(np.diff(pts.throughput_per_chip) > 0)  # more concurrency, more throughput here
    assert np.all(np.diff(pts.tpot_s) > 0)  # ... at a slower per-user speed


def test_concurrency_beyond_kv_capacity_queues(tiny):
    model, _, small = tiny  # 3 GB of HBM
    wl = Workload("hand", ISL, OSL, range_ratio=1.0)
    dep = Deployment(get_precision("bf16"), Pool(Layout(tp=1)), token_budget=256)
    cap, what = aggregated_batch_cap(model, small, dep, wl)
    assert what == "kv_capacity"
    # hand upper bound: HBM left after the reserve and the resident weights (embedding too),
    # over one sequence's KV at its mean context
    weights = WEIGHT_BYTES_READ + VOCAB * H * BF16
    free = 3e9 * (1 - 0.05) - weights
    per_seq = (ISL + OSL / 2) * KV_BYTES_PER_TOKEN
    assert 0.8 * free / per_seq < cap <= free / per_seq  # activations take the rest
    c = np.array([cap / 4, 2 * cap, 4 * cap, 8 * cap])
    pts = solve_concurrency(model, small, dep, wl, c)
    # below the knee: no queue; beyond it: throughput flat, TTFT grows with the queue
    assert pts.queue_s[0] == 0
    assert np.all(pts.queue_s[1:] > 0)
    tput = pts.throughput_per_chip[1:]
    np.testing.assert_allclose(tput, tput[0], rtol=1e-6)
    assert np.all(pts.decode_batch[1:] <= cap + 1e-9)
    assert np.all(np.diff(pts.ttft_s[1:]) > 0)
    assert all("kv_capacity" in str(s) for s in pts.limit[1:])
    # the queue is exactly what Little's law leaves over: W = (C − C_cap)/λ_cap
    lam = pts.request_rate_per_s[1:]
    np.testing.assert_allclose(lam * pts.e2e_s[1:], c[1:], rtol=1e-6)
    w = pts.queue_s[1:]
    np.testing.assert_allclose(np.diff(w), np.diff(c[1:]) / lam[0], rtol=1e-6)


def test_points_clipped_at_the_kv_cap_fit():
    """The cap is 'the largest batch the KV cache holds': a point at the cap must fit."""
    from jalapeno.analysis.sweep import SweepOptions, sweep

    model, system = load_model("deepseek-r1"), load_pricer("gb200-nvl72")
    wl, prec = get_workload("8k1k"), get_precision("fp8")
    dep = Deployment(prec, Pool(Layout(tp=8, ep=8)))
    cap, what = aggregated_batch_cap(model, system, dep, wl)
    assert what == "kv_capacity"
    pts = aggregated_by_batch(model, system, dep, wl, np.array([cap - 1, cap]))
    res = sweep(model, system, wl, prec, SweepOptions(serving="agg"))
    p = res.points
    capped = np.array([str(s).startswith("kv_capacity") for s in p.limit])
    assert capped.any()
    assert pts.feasible.all(), pts.reason
    assert p.feasible[capped].all(), sorted({str(r) for r in p.reason[capped & ~p.feasible]})


def test_queued_points_beyond_capacity_are_feasible(tiny):
    """At the cap B = 962 the step also holds B·ISL/(OSL−1)/ISL = 0.94 prefilling sequences;
    memory_fit rounds 962.94 up to 963 resident sequences, one more than the cap."""
    model, _, small = tiny
    wl = Workload("hand", ISL, OSL, range_ratio=1.0)
    dep = Deployment(get_precision("bf16"), Pool(Layout(tp=1)), token_budget=256)
    cap, _ = aggregated_batch_cap(model, small, dep, wl)
    pts = solve_concurrency(model, small, dep, wl, np.array([2 * cap, 4 * cap]))
    assert np.all(pts.queue_s > 0)
    assert pts.feasible.all(), pts.reason


# ---------------------------------------------------------------- MTP


def test_mtp_tokens_per_step_by_hand():
    # k = 1, α = 0.8: 1 + α = 1.8 (= (1 − 0.8²)/(1 − 0.8) = 0.36/0.2)
    assert MTP(1, 0.8).tokens_per_step == pytest.approx(1.8, rel=1e-12)
    # k = 3, α = 0.5: 1 + 0.5 + 0.25 + 0.125 = 1.875
    assert MTP(3, 0.5).tokens_per_step == pytest.approx(1.875, rel=1e-12)
    assert MTP(2, 0.0).tokens_per_step == pytest.approx(1.0)


def test_mtp_reduces_tpot_at_small_batch_tiny(tiny):
    import dataclasses

    model, system, _ = tiny
    model = dataclasses.replace(model, mtp_layers=1)  # MTP needs the model's own module (dense: not resident)
    wl = Workload("hand", ISL, OSL, range_ratio=1.0)
    prec = get_precision("bf16")
    base = aggregated_by_batch(model, system, Deployment(prec, Pool(Layout())), wl, np.array([1.0]))
    mtp = aggregated_by_batch(model, system, Deployment(prec, Pool(Layout()), mtp=MTP(1, 0.8)), wl,
                              np.array([1.0]))
    # memory bound: the verify step of 2 rows reads the same bytes (2 layers + LM head); the one
    # drafting pass reads the MTP module: one layer, the shared LM head and its 2h -> h projection
    # (cost/mtp_draft.py), so TPOT ≈ τ·(1 + draft/verify)/1.8 ≈ 0.955·τ
    layer, eh_proj = QKV + O_PROJ + FFN, 2 * H * H
    verify = LAYERS * layer + LM_HEAD
    assert mtp.tpot_s[0] < base.tpot_s[0]
    assert mtp.tpot_s[0] / base.tpot_s[0] == pytest.approx((1 + (layer + LM_HEAD + eh_proj) / verify) / 1.8, rel=0.03)
    # each request needs (OSL − 1)/1.8 steps
    assert mtp.request_rate_per_s[0] == pytest.approx(1.0 / ((OSL - 1) / 1.8 * mtp.step_time_s[0]), rel=1e-9)


def test_mtp_reduces_tpot_at_small_batch_deepseek():
    model, system = load_model("deepseek-r1"), load_pricer("gb200-nvl72")
    wl = get_workload("8k1k")
    prec = get_precision("fp8")
    lay = Layout(tp=8, ep=8)
    b = np.array([1.0, 4.0])
    base = aggregated_by_batch(model, system, Deployment(prec, Pool(lay)), wl, b)
    mtp = aggregated_by_batch(model, system, Deployment(prec, Pool(lay), mtp=MTP(1, 0.8)), wl, b)
    assert np.all(mtp.tpot_s < base.tpot_s)
    assert np.all(mtp.interactivity > base.interactivity)
    # never better than the ideal 1.8x of tokens per step
    assert np.all(mtp.interactivity <= 1.8 * base.interactivity)
