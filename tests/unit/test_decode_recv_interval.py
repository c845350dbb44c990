"""The disaggregated decode worker's receive interval (serve/handshake.recv_poll_wait_s, fit/aic_sgl_recv.py) by hand.

SGLang's recv skipper reads new requests every n decode steps on a decoding worker, so the pre-allocation poll's
period is n·τ_d: the TTFT holds E[max(U − W, 0)], U ~ U(0, n·τ_d), with the chance P that the worker is decoding
another user's request, else the one-iteration poll U(0, τ_d).
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.fit.aic_sgl_recv import DECODE_RECV_INTERVALS, with_decode_recv_interval
from jalapeno.serve.analytic import frontend_s
from jalapeno.serve.disagg import decode_curve, disaggregated_points, pool_prefill_perf
from jalapeno.serve.handshake import handshake_s, prealloc_wait_s, recv_poll_wait_s
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import Workload


def test_the_poll_period_by_hand():
    # n = 10, τ = 10 ms, no queue: half the 100 ms period, 50 ms
    assert float(recv_poll_wait_s(0.010, 0.0, 10)) == pytest.approx(0.050)
    # a 30 ms prefill queue runs beside it: (100 − 30)² / (2·100) ms = 24.5 ms
    assert float(recv_poll_wait_s(0.010, 0.030, 10)) == pytest.approx(0.0245)
    # an idle worker half the time: ½·50 + ½·5 ms (one iteration's U(0, τ) mean)
    assert float(recv_poll_wait_s(0.010, 0.0, 10, 0.5)) == pytest.approx(0.0275)
    # n = 1 is the one-iteration poll whatever P
    assert float(recv_poll_wait_s(0.010, 0.004, 1, 0.3)) == pytest.approx(float(prealloc_wait_s(0.010, 0.004)))
    # the handshake carries it beside the prebuilt step (1 τ)
    assert float(handshake_s("decode_prealloc", 0.010, 0.0, 10)) == pytest.approx(0.060)
    assert float(handshake_s("none", 0.010, 0.0, 10)) == 0.0  # TensorRT-LLM / vLLM: no decode-side gate
    with pytest.raises(ValueError, match="recv_interval"):
        recv_poll_wait_s(0.010, 0.0, 0)


def test_the_period_is_the_mean_residual_of_a_uniform_poll():
    """E[max(U − W, 0)], U ~ U(0, n·τ), against a midpoint quadrature (an independent computation)."""
    u = (np.arange(200_000) + 0.5) / 200_000 * 10 * 0.008
    for w in (0.0, 0.01, 0.05, 0.09):
        assert float(recv_poll_wait_s(0.008, w, 10)) == pytest.approx(np.maximum(u - w, 0).mean(), abs=1e-9)


def test_the_analytic_points_add_the_period_where_the_decode_worker_is_busy():
    """One decode worker (y = 1) at batches 1, 16, 64: P = clip(b − 1, 0, 1) = 0, 1, 1. A lone user finds the
    worker idle (nothing changes); otherwise the TTFT grows by (nτ − W)²/(2nτ) − (τ − W)²/(2τ) (each where
    positive), W read off the plain points' TTFT (TTFT − lone prefill − hand-off − τ/2 − prebuilt τ − poll)."""
    model, wl = load_model("gpt-oss-120b"), Workload("1k/256", 1024, 256)
    dep = Deployment(get_precision("mxfp4"), Pool(Layout(tp=2)), prefill=Pool(Layout(tp=1), 1))
    pricer = load_pricer("h200", stack="sglang")
    pre = pool_prefill_perf(model, pricer, dep, wl)
    dec = decode_curve(model, pricer, dep.decode.layout, dep.precision, wl, np.array([1.0, 16.0, 64.0]), None, dep)
    one, ten = (
        disaggregated_points(model, pricer, dep.precision, wl, pre, dec, [1], [1], recv_interval=n) for n in (1, 10)
    )
    tau = dec.tau_s
    front = frontend_s(pricer.efficiency, wl.mean_isl)

    def mean_residual(period, w):
        return np.where(w < period, (period - w) ** 2 / (2 * period), 0.0)

    # W solves plain TTFT = base + W + τ/2 + τ + residual(τ, W); base = lone prefill + hand-off + front end
    base = pre.service_s + one.kv_transfer_s + front + 1.5 * tau
    w = np.array([_solve_w(t - b_, tt) for t, b_, tt in zip(one.ttft_s, base, tau)])
    busy = np.clip(dec.batch - 1.0, 0.0, 1.0)
    want = busy * (mean_residual(10 * tau, w) - mean_residual(tau, w))
    assert busy.tolist() == [0.0, 1.0, 1.0]
    assert ten.ttft_s - one.ttft_s == pytest.approx(want, rel=1e-6, abs=1e-12)
    assert ten.ttft_s[0] == pytest.approx(one.ttft_s[0], rel=1e-12) and (ten.ttft_s[1:] > one.ttft_s[1:]).all()


def _solve_w(excess: float, tau: float) -> float:
    """W ≥ 0 with W + (τ − W)²/(2τ)·[W < τ] = excess (increasing in W), by bisection."""
    lo, hi = 0.0, max(excess, tau) + 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        f = mid + ((tau - mid) ** 2 / (2 * tau) if mid < tau else 0.0)
        lo, hi = (mid, hi) if f < excess else (lo, mid)
    return (lo + hi) / 2


def _dep(prefill_tp: int, decode_tp: int, decode_workers: int, prec: str = "fp4") -> Deployment:
    return Deployment(
        get_precision(prec), Pool(Layout(tp=decode_tp), decode_workers), prefill=Pool(Layout(tp=prefill_tp))
    )


def test_a_row_takes_its_recipes_decode_interval():
    # GB300 FP4 8k/1k low latency (srt-slurm recipes/gb300-fp4/8k1k/low_latency.yaml): 1 x TP4 prefill, 4 x TP4 decode
    d, note = with_decode_recv_interval(_dep(4, 4, 4), "sglang", "gb300-nvl72", "fp4", 8192, 1024, "0.5.8.post1")
    assert d.recv_interval == 10 and "gb300-fp4/8k1k/low_latency.yaml" in note
    # the FP8 recipe of the same layout family sets 1 on its decode worker: unchanged, no note
    d, note = with_decode_recv_interval(_dep(4, 4, 4, "fp8"), "sglang", "gb300-nvl72", "fp8", 1024, 1024, "0.5.8.post1")
    assert d.recv_interval == 1 and note == ""
    # another release, another engine, another worker count, an aggregated row: unchanged
    for args in (
        ("sglang", "gb300-nvl72", "fp4", 8192, 1024, "0.5.9"),
        ("trtllm", "gb300-nvl72", "fp4", 8192, 1024, "0.5.8.post1"),
    ):
        assert with_decode_recv_interval(_dep(4, 4, 4), *args) == (_dep(4, 4, 4), "")
    assert (
        with_decode_recv_interval(_dep(4, 4, 2), "sglang", "gb300-nvl72", "fp4", 8192, 1024, "0.5.8.post1")[
            0
        ].recv_interval
        == 1
    )
    agg = Deployment(get_precision("fp4"), Pool(Layout(tp=4)))
    assert with_decode_recv_interval(agg, "sglang", "gb300-nvl72", "fp4", 8192, 1024, "0.5.8.post1") == (agg, "")


def test_every_entry_names_its_recipe_and_a_positive_interval():
    for key, (releases, n, source) in DECODE_RECV_INTERVALS.items():
        assert releases and n >= 1 and "scheduler-recv-interval" in source and str(n) in source, key
