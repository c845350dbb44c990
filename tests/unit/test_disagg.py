"""Disaggregated serving (serve/disagg.py, serve/point.py, analysis/prediction.py): chip accounting,
KV hand-off and prefill saturation. Expected values by hand from DESIGN.md §3 and §7."""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.analysis.prediction import predict_point
from jalapeno.analysis.sweep import SweepOptions, sweep
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.disagg import prefill_perf
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import Workload, get_workload


@pytest.fixture(scope="module")
def oss():
    return load_model("gpt-oss-120b"), load_pricer("h100"), get_precision("mxfp4")


def _dep(prec, x=3, y=1):
    # prefill: x workers of TP2/EP2 (2 chips); decode: y workers of DP4/EP4 (4 chips)
    return Deployment(prec, Pool(Layout(tp=1, dp=4, ep=4), y), prefill=Pool(Layout(tp=2, ep=2), x))


def test_chips_are_prefill_plus_decode(oss):
    model, system, prec = oss
    wl = get_workload("1k1k")
    rec = predict_point(model, system, _dep(prec), wl, 64)
    chips = 3 * 2 + 1 * 4  # prefill workers × prefill chips + decode workers × decode chips
    assert rec.chips == chips
    assert rec.deployment.chips == chips
    assert rec.deployment.kind == "disagg"
    assert rec.deployment.prefill.chips == 6
    assert rec.deployment.decode.chips == 4
    assert rec.feasible, rec.reason


def test_throughput_per_chip_uses_all_chips(oss):
    model, system, prec = oss
    wl = get_workload("1k1k")  # lengths uniform in [0.8 L, L]: mean 0.9 L
    rec = predict_point(model, system, _dep(prec, x=3, y=2), wl, 128)
    chips = 3 * 2 + 2 * 4
    lam = rec.request_rate_per_s
    mean_isl, mean_osl = 0.9 * 1024, 0.9 * 1024
    assert rec.throughput_per_chip == pytest.approx(lam * (mean_isl + mean_osl) / chips, rel=1e-9)
    assert rec.output_throughput_per_chip == pytest.approx(lam * mean_osl / chips, rel=1e-9)
    # decode balance (DESIGN §7) in the steady state: λ_ss = y·B/((OSL−1)·τ_d) with B per decode
    # instance; the run completes requests at C/E2E_run (Little's law over the run, idle start
    # included: serve/point.run_throughput), C = λ_ss·E2E_ss = λ·E2E_run
    lam_ss = 2 * rec.decode_batch / ((mean_osl - 1) * rec.step_time_s)
    assert lam <= lam_ss * (1 + 1e-9)
    assert lam * rec.e2e_s == pytest.approx(128, rel=0.01)
    # power and cost per chip: all-in 1.73 kW and 1.30 $/h per H100 (InferenceX)
    assert rec.power_w_per_chip == pytest.approx(1730)
    assert rec.tok_s_per_kw == pytest.approx(rec.throughput_per_chip / 1.73, rel=1e-9)
    assert rec.usd_per_mtok == pytest.approx(1.30 / (rec.throughput_per_chip * 3600 / 1e6), rel=1e-9)


def test_more_decode_workers_same_per_chip_concurrency_scales(oss):
    """Doubling both pools at double the concurrency keeps every per-chip figure."""
    model, system, prec = oss
    wl = get_workload("1k1k")
    a = predict_point(model, system, _dep(prec, x=2, y=1), wl, 32)
    b = predict_point(model, system, _dep(prec, x=4, y=2), wl, 64)
    assert b.chips == 2 * a.chips
    for k in ("throughput_per_chip", "tpot_s", "decode_batch"):
        assert getattr(b, k) == pytest.approx(getattr(a, k), rel=0.02), k


def test_sweep_disagg_points_count_both_pools(oss):
    model, system, prec = oss
    res = sweep(model, system, get_workload("1k1k"), prec, SweepOptions(serving="disagg"))
    seen = 0
    for i in range(0, len(res.points), 7):
        dep = res.deployments[int(res.dep_index[i])]
        assert dep.prefill is not None
        want = dep.prefill.workers * dep.prefill.layout.chips + dep.decode.workers * dep.decode.layout.chips
        assert res.points.chips[i] == want
        seen += 1
    assert seen > 50
    p = res.points
    mean_len = 0.9 * 1024 + 0.9 * 1024
    np.testing.assert_allclose(p.throughput_per_chip, p.request_rate_per_s * mean_len / p.chips, rtol=1e-9)


def test_kv_transfer_positive_grows_with_isl_and_respects_the_link(oss):
    model, system, prec = oss
    dep = _dep(prec)
    out = {}
    for isl in (1024, 8192):
        wl = Workload(f"{isl}/1024", isl, 1024, range_ratio=1.0)
        pts = serve_at_concurrency(model, system, dep, wl, [64])
        out[isl] = pts
        t = float(pts.kv_transfer_s[0])
        assert t > 0
        # sent from min(2 prefill, 4 decode) = 2 chips; never faster than NVLink 4 (450 GB/s per
        # GPU per direction), never slower than half the 400 Gb/s NIC (50 GB/s) plus 1 ms
        kv_bytes = isl * model.kv_bytes_per_token(2.0, isl)  # bf16 KV, sliding layers capped
        assert t >= kv_bytes / (2 * 450e9)
        assert t <= kv_bytes / (2 * 50e9) / 0.5 + 1e-3
        # TTFT pays the hand-off on top of the prefill
        assert pts.ttft_s[0] > t
    assert out[8192].kv_transfer_s[0] > 4 * out[1024].kv_transfer_s[0]


def test_prefill_saturation_queues_users_and_says_prefill(oss):
    """Closed loop: users beyond what the prefill pool can admit wait for it — throughput flat at
    the prefill pool's capacity (the pool fully busy: the users waiting for it keep it so, the
    saturation asymptote of a closed network), TTFT growing by the extra users over the request
    rate (Little)."""
    model, system, prec = oss
    wl = get_workload("8k1k")
    # one 2-chip prefill instance feeding four 8-chip decode instances
    dep = Deployment(prec, Pool(Layout(tp=1, dp=8, ep=8), 4), prefill=Pool(Layout(tp=2, ep=2), 1))
    pts = serve_at_concurrency(model, system, dep, wl, [4, 4096, 8192])
    assert pts.feasible.all(), pts.reason
    assert pts.limit[0] == "" and pts.queue_s[0] == 0
    pre = prefill_perf(model, system, dep.prefill.layout, prec, wl, dep.token_budget)
    for i in (1, 2):
        assert pts.limit[i] == "prefill_capacity (queueing)"
        # the admitted rate keeps the prefill pool busy: its whole capacity, not the open loop's
        # 0.95 ceiling (log B interpolated in ρ between grid points 12% apart: within 0.5%)
        assert pts.request_rate_per_s[i] * wl.mean_isl == pytest.approx(pre.tokens_per_s, rel=5e-3)
        # Little's law over the whole loop, queue included
        assert pts.request_rate_per_s[i] * pts.e2e_s[i] == pytest.approx(pts.concurrency[i], rel=1e-6)
    assert pts.throughput_per_chip[2] == pytest.approx(pts.throughput_per_chip[1], rel=1e-4)  # the idle-start wave
    assert pts.queue_s[2] - pts.queue_s[1] == pytest.approx(4096 / pts.request_rate_per_s[1], rel=1e-4)
    # open loop (serve_at_rate's view): the steady range ends at the 0.95 ceiling
    opn = serve_at_concurrency(model, system, dep, wl, [4096], idle_start=False, saturate=False)
    assert opn.request_rate_per_s[0] * wl.mean_isl <= 0.95 * pre.tokens_per_s * (1 + 1e-6)
    rec = predict_point(model, system, dep, wl, 4096)
    assert rec.feasible is True and rec.limit == "prefill_capacity (queueing)"
    assert rec.chips == 1 * 2 + 4 * 8


def test_unfit_prefill_pool_names_prefill():
    """DeepSeek-R1 FP8 (≈ 690 GB of weights) cannot sit on a 2-chip GB200 prefill instance (2 x 192 GB)."""
    model, system = load_model("deepseek-r1"), load_pricer("gb200-nvl72")
    dep = Deployment(get_precision("fp8"), Pool(Layout(tp=1, dp=8, ep=8)), prefill=Pool(Layout(tp=2, ep=2), 2))
    rec = predict_point(model, system, dep, get_workload("8k1k"), 64)
    assert rec.feasible is False
    assert rec.reason.startswith("prefill")
    assert "weights" in rec.reason


def test_aggregated_workers_are_counted(oss):
    model, system, prec = oss
    wl = get_workload("1k1k")
    lay = Layout(tp=4, ep=4)
    one = predict_point(model, system, Deployment(prec, Pool(lay, 1)), wl, 32)
    two = predict_point(model, system, Deployment(prec, Pool(lay, 2)), wl, 64)
    # two replicas at 32 each: same per-chip figures, twice the chips
    assert two.chips == two.deployment.chips == 8
    assert two.throughput_per_chip == pytest.approx(one.throughput_per_chip, rel=0.01)
    assert two.tpot_s == pytest.approx(one.tpot_s, rel=0.01)
    assert two.request_rate_per_s == pytest.approx(2 * one.request_rate_per_s, rel=0.01)
    assert two.concurrency == pytest.approx(64, rel=0.02)


def test_decode_batch_at_its_kv_cap_fits_with_mtp():
    from jalapeno.deploy.deployment import MTP
    from jalapeno.serve.disagg import decode_curve

    model, system = load_model("deepseek-r1"), load_pricer("gb200-nvl72")
    grid = 2.0 ** np.arange(15)  # the sweep's batch grid, 1 ... 16384
    dec = decode_curve(model, system, Layout(tp=1, dp=8, ep=8), get_precision("fp8"), get_workload("1k1k"),
                       grid, MTP(1, 0.7))
    at_cap = dec.batch >= dec.cap
    assert at_cap.any()
    assert dec.feasible[at_cap].all(), set(dec.reason[at_cap & ~dec.feasible])


def test_low_concurrency_on_many_decode_workers_is_served_as_asked():
    """0.01 users over five 8-chip decode workers: far below one sequence per worker, still that
    concurrency (Little's law holds at it), not a floor of the batch grid."""
    m, s, prec = load_model("deepseek-r1"), load_pricer("b200"), get_precision("fp8")
    dep = Deployment(prec, Pool(Layout(tp=1, dp=8, ep=8), 5), prefill=Pool(Layout(tp=4, ep=4), 1))
    pts = serve_at_concurrency(m, s, dep, get_workload("1k1k"), [0.01, 1.0])
    assert pts.feasible.all()
    assert pts.concurrency == pytest.approx([0.01, 1.0], rel=1e-3)
    assert pts.request_rate_per_s * pts.e2e_s == pytest.approx(pts.concurrency, rel=1e-3)


def test_open_loop_serves_every_rate_up_to_the_closed_loop_plateau():
    """The sustainable rate is where the open-loop view of the closed loop flattens (prefill pool at
    its 0.95 utilisation ceiling, ``saturate=False``): rates just below it are served without
    queueing, rates above overload. The closed loop itself runs the pool at its whole capacity."""
    from jalapeno.serve.point import serve_at_rate

    m, s, prec = load_model("deepseek-r1"), load_pricer("b200"), get_precision("fp8")
    wl = get_workload("1k1k")
    dep = Deployment(prec, Pool(Layout(tp=1, dp=8, ep=8), 5), prefill=Pool(Layout(tp=4, ep=4), 1))
    plateau = float(serve_at_concurrency(m, s, dep, wl, [1e5], saturate=False).request_rate_per_s[0])
    closed = float(serve_at_concurrency(m, s, dep, wl, [1e5], idle_start=False).request_rate_per_s[0])
    assert closed > plateau * 1.02  # ρ = 1 against the last grid point below 0.95
    r = serve_at_rate(m, s, dep, wl, [0.5 * plateau, 0.99 * plateau, 1.05 * plateau])
    assert r.feasible.tolist() == [True, True, False]
    assert r.request_rate_per_s[:2] == pytest.approx([0.5 * plateau, 0.99 * plateau], rel=1e-3)
    assert (r.queue_s[:2] <= 1e-3 * r.e2e_s[:2]).all()
    assert "overloaded" in r.reason[2]
    # the plateau as a number (simulate's overload note reads it; it parsed serve_at_rate's message before):
    # the closed loop's plateau at 1e5 users (a point of the 1/64 .. 65,536 grid's range, within its spacing)
    from jalapeno.serve.point import sustainable_rate_per_s

    cap = sustainable_rate_per_s(m, s, dep, wl)
    assert cap == pytest.approx(plateau, rel=0.02)
    assert f"at most {cap:.3g} requests/s" in r.reason[2]


# ---- the prefill burst share of a client's runs (Efficiency.prefill_burst_fraction) ---------------

def test_idle_start_weighs_the_wave_by_the_burst_share():
    from jalapeno.serve.queueing import idle_start

    ss = {None: np.array([1.0]), 0.99: np.array([1.0])}
    wave = [np.arange(1.0, 12.0)]  # t_k = 1..11 s; excess over the steady 1 s: 0..10, mean 5
    default = idle_start(ss, wave, 0.0)
    half = idle_start(ss, wave, 0.0, burst_fraction=0.5)
    assert default[None][0] == pytest.approx(1.0 + 5.0 / 10)  # one wave in R = 10
    assert half[None][0] == pytest.approx(1.0 + 0.5 * 5.0)
    # p99 reads the wave's quantile 1 − 0.01/0.5 = 0.98: 1 + 0.98·10 = 10.8 (numpy's linear rule)
    assert half[0.99][0] == pytest.approx(10.8)


def test_disaggregated_run_adds_the_burst_share_of_the_first_wave(oss):
    import dataclasses

    model, system, prec = oss
    wl, dep = get_workload("1k1k"), _dep(prec, x=1, y=2)
    steady = serve_at_concurrency(model, system, dep, wl, [64.0], idle_start=False).ttft_s[0]
    run = serve_at_concurrency(model, system, dep, wl, [64.0]).ttft_s[0]
    bunched = dataclasses.replace(system, efficiency=dataclasses.replace(system.efficiency,
                                                                         prefill_burst_fraction=0.5))
    run_half = serve_at_concurrency(model, bunched, dep, wl, [64.0]).ttft_s[0]
    assert run > steady  # 64 prompts at once on one prefill worker queue behind each other
    # the same wave, weighed 0.5 instead of 1/10: five times the excess over the steady state
    assert run_half - steady == pytest.approx(5 * (run - steady), rel=1e-9)
