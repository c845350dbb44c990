"""The overlap loop's admission lag (serve/overlap_loop.py; docs/model.md §8.7 (4b)), in the analytic model and the simulator.

Expected values by hand from the loop's structure (SGLang ``Scheduler.event_loop_overlap``: read, launch the next
batch, then wait on the previous one): a prompt read while the engine runs joins the step after the one already
launched, so under load it waits the rest of the step in flight (τ/2 on average) and one step more, 1.5 τ; a lone
user (C = 1) finds the loop idle and waits nothing extra. P(busy) = 1 − (1 − u)^(C − 1), u = 1 − f/T.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from jalapeno.errors import SpecError
from jalapeno.serve.overlap_loop import admission_lag_s, busy_probability, lag_steps
from jalapeno.serve.queueing import poll_wait_s
from jalapeno.serve.sim.entities import PrefixCache, Request
from jalapeno.serve.sim.scheduler import Instance
from jalapeno.specs.stacks import build_stacks


def test_heavy_load_waits_one_and_a_half_steps():
    # τ = 20 ms, C = 64, f = 0.1 s of a 20 s cycle: u = 0.995, P(busy) = 1 − 0.005^63 = 1 (to 1e-140)
    tau = 0.020
    wait = float(poll_wait_s(1, tau, 64.0)) + float(admission_lag_s(1, tau, 64.0, 0.1, 20.0))
    assert wait == pytest.approx(1.5 * tau, rel=1e-12)  # 0.030 s: the step in flight's rest + the queued step


def test_a_lone_user_finds_the_loop_idle():
    tau = 0.020
    assert float(admission_lag_s(1, tau, 1.0, 0.1, 20.0)) == 0.0
    assert float(poll_wait_s(1, tau, 1.0)) + float(admission_lag_s(1, tau, 1.0, 0.1, 20.0)) == pytest.approx(0.010)


def test_between_the_lag_is_weighted_by_the_chance_the_engine_is_busy():
    # C = 2, f = 1 s of a T = 4 s cycle: the other user is inside the engine 3/4 of its cycle
    assert float(busy_probability(2.0, 0.75)) == pytest.approx(0.75)
    assert float(admission_lag_s(1, 0.02, 2.0, 1.0, 4.0)) == pytest.approx(0.015)
    # C = 3: 1 − (1/4)² = 15/16
    assert float(admission_lag_s(1, 0.02, 3.0, 1.0, 4.0)) == pytest.approx(0.02 * 15 / 16)
    # a Little's-law load below one user counts as one (idle)
    assert float(busy_probability(0.3, 0.9)) == 0.0


def test_lag_steps_off_where_the_engine_turns_the_overlap_loop_off():
    eff = SimpleNamespace(admission_lag_steps=1.0)
    plain, mtp = SimpleNamespace(mtp=None), SimpleNamespace(mtp=object())
    assert lag_steps(eff, plain, SimpleNamespace(pp=1)) == 1
    assert lag_steps(eff, mtp, SimpleNamespace(pp=1)) == 0  # speculative decoding without spec v2
    assert lag_steps(eff, plain, SimpleNamespace(pp=2)) == 0  # pipeline parallelism
    assert lag_steps(SimpleNamespace(admission_lag_steps=0.0), plain, SimpleNamespace(pp=1)) == 0


def test_tensorrt_llm_keeps_the_loop_with_mtp():
    # TensorRT-LLM: one-model MTP supports the overlap scheduler (speculative/interface.py), so MTP rows keep the lag;
    # pp > 1 runs _executor_loop_pp (no lag)
    eff = SimpleNamespace(admission_lag_steps=1.0, admission_lag_with_mtp=True)
    assert lag_steps(eff, SimpleNamespace(mtp=object()), SimpleNamespace(pp=1)) == 1
    assert lag_steps(eff, SimpleNamespace(mtp=object()), SimpleNamespace(pp=2)) == 0


def test_trtllm_what_if_keeps_the_lag_with_mtp(monkeypatch):
    import sys
    from pathlib import Path

    import jalapeno.specs.stacks as st
    from jalapeno.specs.efficiency import Efficiency

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    import sgl_admission_lag38b as w

    monkeypatch.setattr(st, "build_stacks", st.build_stacks)  # restored after the test
    st.load_stacks.cache_clear()
    try:
        w.with_lag(w.TRTLLM, 1.0, with_mtp=True)  # the script's --trtllm (round 38, trtlag38)
        e = st.get_stack("trtllm").apply(Efficiency())
        assert (e.admission_lag_steps, e.admission_lag_with_mtp) == (1.0, True)
    finally:
        monkeypatch.undo()
        st.load_stacks.cache_clear()


def test_stack_field_ships_on_cuda_sglang_only_and_parses(monkeypatch):
    import jalapeno.specs.stacks as st
    from jalapeno.specs.efficiency import Efficiency

    # shipped on the CUDA sglang profile alone (round 40, frontend40; what-ifs: scripts/sgl_admission_lag38b.py [--trtllm]):
    # every other profile keeps the efficiency set's 0, none keeps the lag with MTP
    lagged = {n for n, s in st.stacks().items() if s.admission_lag_steps is not None}
    assert lagged == {"sglang"} and st.stacks()["sglang"].admission_lag_steps == 1.0
    assert all(s.admission_lag_with_mtp is None for s in st.stacks().values())
    assert Efficiency().admission_lag_steps == 0.0 and not Efficiency().admission_lag_with_mtp
    raw = {"stack": [{"name": "x", "label": "x", "source": "x", "admission_lag_steps": 1}]}
    monkeypatch.setattr(st.tomllib, "load", lambda f: raw)
    x = build_stacks({})["x"]
    assert x.admission_lag_steps == 1.0 and x.apply(Efficiency()).admission_lag_steps == 1.0


def test_stack_field_bad_value_names_the_field(monkeypatch):
    import jalapeno.specs.stacks as st

    raw = {"stack": [{"name": "x", "label": "x", "source": "x", "admission_lag_steps": 0.5}]}
    monkeypatch.setattr(st.tomllib, "load", lambda f: raw)
    with pytest.raises(SpecError, match="admission_lag_steps.*whole number of steps"):
        build_stacks({})


def _instance(lag: int) -> tuple[Instance, list]:
    seen = []

    def timer(b, ctx, pre_tokens, pre_ctx, pre_seqs, **kw):
        seen.append((b, pre_tokens))
        return 0.01

    inst = Instance(0, "agg", timer, 1, 1e6, 64, 4096, PrefixCache(enabled=False), None,
                    np.random.default_rng(0), admission_lag=lag)
    return inst, seen


@pytest.mark.parametrize("lag, prompt_step", [(0, 1), (1, 2)])
def test_simulator_holds_a_busy_loops_read_one_step(lag, prompt_step):
    inst, seen = _instance(lag)
    old, new = Request(id=0, arrival_s=0.0, isl=100, osl=50), Request(id=1, arrival_s=0.005, isl=300, osl=10)
    inst.enqueue(old)
    inst.plan(0.0)  # the idle loop reads and launches at once: step 0 carries old's prompt
    assert seen[0] == (0, 100)
    inst.enqueue(new)  # arrives while step 0 runs
    t = 0.01
    for _ in range(3):
        inst.complete(t)
        inst.plan(t)
        t += 0.01
    # the steps after step 0: old decodes in each; new's 300 prompt tokens join at step 1 (no lag) or 2 (lag 1)
    assert [s[1] for s in seen[1:4]] == [300.0 if i == prompt_step else 0.0 for i in (1, 2, 3)]


def test_simulator_idle_loop_reads_at_once_even_with_lag():
    inst, seen = _instance(1)
    inst.enqueue(Request(id=0, arrival_s=0.0, isl=100, osl=5))
    inst.plan(0.0)
    assert seen == [(0, 100)]


@pytest.mark.parametrize("c", (8, 64))
def test_analytic_and_simulator_agree_with_the_lag_on(c):
    """The lag in both (gpt-oss-120b 1k/256, H200 TP2, InferenceX's protocol): each side's TTFT grows by about one
    step (P(busy) ≈ 1 at C ≥ 8; not the idle start's first wave), and the two stay within the 15% of tests/golden/test_ttft_sim_vs_analytic.py."""
    from dataclasses import replace

    from jalapeno.cost.pricer import load_pricer
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.serve.sim.run import simulate
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import Workload

    model, wl = load_model("gpt-oss-120b"), Workload("1k/256", 1024, 256)
    dep = Deployment(get_precision("mxfp4"), Pool(Layout(tp=2)))
    off = load_pricer("h200")
    on = off.with_efficiency(replace(off.efficiency, admission_lag_steps=1.0))
    a0, a1 = (serve_at_concurrency(model, p, dep, wl, [c]).record(0) for p in (off, on))
    tau = a0["step_time_s"]
    # one step (P(busy) ≈ 1) on the steady 9 runs in 10; InferenceX's first wave (1 in R = 10, the default burst
    # share) meets an idle loop, which reads and launches at once: 0.9·τ on the mean
    assert a1["ttft_s"] - a0["ttft_s"] == pytest.approx(0.9 * tau, rel=0.05)
    s0, s1 = (simulate(model, p, dep, workload=wl, concurrency=c, seed=0, warmup=0).summary["ttft_s"]["mean"]
              for p in (off, on))
    assert s1 - s0 == pytest.approx(0.9 * tau, rel=0.5)  # the simulator's prompts wait about one step more
    assert a1["ttft_s"] == pytest.approx(s1, rel=0.15)
