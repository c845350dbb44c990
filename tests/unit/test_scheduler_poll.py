"""The scheduler's poll for new requests (serve/queueing.poll_wait_s, docs/model.md §8.7 effect 4)
and the launch-script recipes validation applies to measured points (deploy/engines.launch_recipe).

Expected values are worked by hand from the formula W = τ/2 + min(C − 1, 1)·[(n − 1)·τ/2 +
s·(n − 1)·n̄·(C − 1)/C] or quoted from the InferenceX launch scripts' flags
(benchmarks/single_node/dsr1_fp8_b200.sh @ed5867f9e998: TP8 --scheduler-recv-interval 10 below
concurrency 16 and 30 from 16, --chunked-prefill-size 32768; TP4 8192 and 10).
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.engines import launch_recipe
from jalapeno.deploy.layout import Layout
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.serve.analytic import aggregated_by_batch
from jalapeno.serve.queueing import poll_wait_s
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


def test_poll_wait_by_hand():
    # n = 30, τ = 20 ms, t_dec = 19 ms, lone-chunk step 40 ms, s = 10 ms per joined chunk, n̄ = 0.05
    # chunks per step, C = 32 (others 31/32):
    #   λ_c = 0.05·31/32/0.020 = 2.421875 /s;  L_d = 30·0.019 = 0.57 s
    #   L_p = 0.040 + 0.010·2.421875·0.57 = 0.053804688 s
    #   R = (0.57² + 0.053804688²)/(2·(0.57 + 0.053804688)) = 0.262738 s
    #   joined = 2·2.421875·0.262738 − 0.0484375 = 1.224202 chunks
    #   W = 0.010 + (0.262738 − 0.010) + 0.010·1.224202 = 0.274980 s
    lam = 0.05 * 31 / 32 / 0.020
    l_d, l_p = 30 * 0.019, 0.040 + 0.010 * lam * 30 * 0.019
    r = (l_d**2 + l_p**2) / (2 * (l_d + l_p))
    want = 0.010 + (r - 0.010) + 0.010 * (2 * lam * r - 0.05 * 31 / 32)
    assert want == pytest.approx(0.274980, abs=2e-6)
    got = float(poll_wait_s(30, 0.020, 32, 0.010, 0.05, decode_step_s=0.019, prefill_step_s=0.040))
    assert got == pytest.approx(want, rel=1e-12)
    # a poll every step: only the step in progress, whatever the load
    assert float(poll_wait_s(1, 0.020, 32, 0.010, 0.05, 0.019, 0.040)) == pytest.approx(0.010, rel=1e-12)
    # a lone user finds the engine idle (it polls every loop): no extra wait
    assert float(poll_wait_s(30, 0.020, 1.0, 0.010, 0.05, 0.019, 0.040)) == pytest.approx(0.010, rel=1e-12)
    # nothing arriving (n̄ = 0), t_dec = L_p = τ: the residual of a 30 + 1-step cycle, 0.29065 s
    assert float(poll_wait_s(30, 0.020, 64)) == pytest.approx((0.6**2 + 0.02**2) / (2 * 0.62), rel=1e-12)


def test_analytic_ttft_carries_the_poll_period():
    model, pricer, wl = load_model("deepseek-r1"), load_pricer("b200"), get_workload("1k1k", None, None)
    base = Deployment(get_precision("fp8"), Pool(Layout(tp=8)), token_budget=32768)
    polled = Deployment(get_precision("fp8"), Pool(Layout(tp=8)), token_budget=32768, recv_interval=30)
    b = np.array([31.0])
    p1, p30 = aggregated_by_batch(model, pricer, base, wl, b), aggregated_by_batch(model, pricer, polled, wl, b)
    tau = float(p1.step_time_s[0])
    assert float(p30.step_time_s[0]) == tau and float(p30.tpot_s[0]) == float(p1.tpot_s[0])  # steps unchanged
    extra = float(p30.ttft_s[0] - p1.ttft_s[0])
    # bounds from the cycle of 30 decode-only steps and one prefill step: the decode-only step is
    # below τ and the prefill step above it, so the residual lies between that of 30 steps of
    # 0.9·τ and half the cycle plus the chunks arriving in it (at most 2·31·n̄, n̄ = B·ISL/(D·chunk)
    # per step) each priced at a whole lone prefill step of one chunk (an upper bound on s)
    n_bar = 31.0 * wl.mean_isl / ((wl.mean_osl - 1) * wl.mean_isl)
    lone = float(aggregated_by_batch(model, pricer, base, wl, np.array([1e-6])).ttft_s[0])
    assert 30 * 0.9 * tau / 2 - tau / 2 < extra <= 31 * tau / 2 + 2 * 31 * n_bar * lone
    # a load below one user: nothing extra (the engine is idle when the request arrives)
    q1, q30 = (aggregated_by_batch(model, pricer, d, wl, np.array([1e-3])) for d in (base, polled))
    assert float(q30.ttft_s[0]) == pytest.approx(float(q1.ttft_s[0]), rel=1e-9)


def test_launch_recipes_are_the_scripts_flags():
    tp8 = launch_recipe("b200", "deepseek-r1", "sglang", "fp8", tp=8)
    assert (tp8.recv_interval_at(8), tp8.recv_interval_at(16), tp8.token_budget, tp8.max_running) == (10, 30, 32768, 128)
    tp4 = launch_recipe("b200", "deepseek-r1", "sglang", "fp8", tp=4)
    assert (tp4.recv_interval_at(2), tp4.token_budget, tp4.max_running) == (10, 8192, 32)
    assert launch_recipe("h200", "deepseek-r1", "sglang", "fp8", tp=8).recv_interval_at(64) == 1
    # --num-continuous-decode-steps=4 of the MI3xx scripts is inert in SGLang: a poll every step
    assert launch_recipe("mi325x", "deepseek-r1", "sglang", "fp8", tp=8).recv_interval_at(64) == 1
    assert launch_recipe("b200", "deepseek-r1", "vllm", "fp8") is None


_HEADER = ("hardware,model,precision,framework,spec,disagg,isl,osl,conc,topology,num_gpus,tput_per_gpu,"
           "output_tput_per_gpu,tok_s_user,tpot_ms,tpot_stat,ttft_ms,ttft_stat,e2el_s,cost_per_mtok_usd,date,"
           "point_type,check_ratio,notes,source")
# InferenceX PR #3363 baseline (2026-05-22, sglang v0.5.12): DeepSeek-R1 FP8 1k1k on 8×B200 TP8
_ROWS = [
    ("B200,DeepSeek-R1-0528,FP8,sglang,none,0,1024,1024,8,TP8 EP1,8,,,91.24,10.96,mean,248.74,mean,,,2026-05-22,"
     "sweep_point,,,InferenceX PR #3363"),
    ("B200,DeepSeek-R1-0528,FP8,sglang,none,0,1024,1024,32,TP8 EP1,8,467.27,234.01,61.69,16.21,mean,470.96,mean,,,"
     "2026-05-22,sweep_point,,,InferenceX PR #3363"),
    ("B200,DeepSeek-R1-0528,FP8,vllm,none,0,1024,1024,32,TP8 EP1,8,467.27,234.01,61.69,16.21,mean,470.96,mean,,,"
     "2026-05-22,sweep_point,,,a framework without a recipe"),
]


def test_validation_applies_the_launch_script_at_each_load(tmp_path):
    f = tmp_path / "points.csv"
    f.write_text("\n".join([_HEADER, *_ROWS]) + "\n")
    pts, skipped = load_inferencex(f)
    assert not skipped
    c8, c32, other = (p.deployment for p in pts)
    assert (c8.recv_interval, c8.token_budget, c8.max_running) == (10, 32768, 128)
    assert (c32.recv_interval, c32.token_budget) == (30, 32768)
    assert any("sglang-b200-dsr1-fp8" in n for n in pts[1].notes)
    assert (other.recv_interval, other.token_budget) == (1, 8192)  # no recipe: the defaults


def test_poll_wait_scaled_by_the_chance_the_engine_is_busy():
    # an idle engine reads and launches at once: P(busy) = 0 waits nothing, a poll every step or every 30
    assert float(poll_wait_s(1, 0.020, 1.0, busy_probability=0.0)) == 0.0
    assert float(poll_wait_s(30, 0.020, 1.0, 0.010, 0.05, 0.019, 0.040, busy_probability=0.0)) == 0.0
    # n = 1: P(busy)·τ/2 = 0.75·10 ms
    assert float(poll_wait_s(1, 0.020, 64.0, busy_probability=0.75)) == pytest.approx(0.0075, rel=1e-12)
    # n = 30, the hand-worked wait of test_poll_wait_by_hand (0.274980 s), found busy half the time
    got = float(poll_wait_s(30, 0.020, 32, 0.010, 0.05, decode_step_s=0.019, prefill_step_s=0.040, busy_probability=0.5))
    assert got == pytest.approx(0.5 * 0.274980, abs=2e-6)


def test_a_lone_user_waits_for_no_step_in_flight_as_in_the_simulator(monkeypatch):
    """C = 1: the user's front end runs while the engine idles, so its prompt is read and launched at once. The event
    simulator (an independent implementation: its loop reads the inbox when idle) gives the lone user's TTFT; the
    analytic steady TTFT now sits within a third of a decode step of it (gpt-oss-120b 1k/256, H200 TP2: 0.2 τ), where
    charging the step in flight (τ/2) put it 0.7 τ above."""
    from jalapeno.deploy.deployment import Deployment as Dep
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.serve.sim.run import simulate
    from jalapeno.specs.workload import Workload

    model, wl = load_model("gpt-oss-120b"), Workload("1k/256", 1024, 256)
    dep, pricer = Dep(get_precision("mxfp4"), Pool(Layout(tp=2))), load_pricer("h200")
    from jalapeno.serve import queueing

    s = simulate(model, pricer, dep, workload=wl, concurrency=1, seed=0, warmup=0).summary["ttft_s"]["mean"]
    monkeypatch.setattr(queueing, "IDLE_ARRIVAL_POLL", True)  # shipped off (round 39): the switch turns it on
    a = serve_at_concurrency(model, pricer, dep, wl, [1.0], idle_start=False).record(0)
    assert abs(a["ttft_s"] - s) < a["step_time_s"] / 3
    monkeypatch.setattr(queueing, "IDLE_ARRIVAL_POLL", False)  # as shipped: the step in flight, tau/2, is charged
    off = serve_at_concurrency(model, pricer, dep, wl, [1.0], idle_start=False).record(0)
    assert off["ttft_s"] - a["ttft_s"] == pytest.approx(a["step_time_s"] / 2, rel=0.05)
