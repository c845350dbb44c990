"""Properties of the request-level simulator (STYLE.md §7, issue requirements).

- Little's law, closed loop: at concurrency C with no think time, every completion issues the
  next request at once, so over the window W = [first counted arrival, last counted arrival]
  exactly C requests are in the system. With λ = (completions in W) / |W| and E = the mean E2E of
  those completed requests (warm-up ones included: they are in the system too), C ≈ λ·E within
  2%. Edge effects (requests straddling the ends of W) shrink as 1/|W|, so the runs are long
  (50·C requests).
- Token conservation: the counted requests produce exactly their output lengths.
- Open loop, Poisson at a low rate: throughput per chip ≈ rate·(ISL + OSL)/chips (nothing queues).
- Trace replay keeps the trace's arrival times and lengths.
- Agentic sessions: prefix reuse lowers prefill tokens and mean TTFT; the task frame has one row
  per session with completion = last done − first arrival.
Expected values are computed here from the inputs, never from the code's own output.

The tiny dense model and hand-made system are copied from tests/unit/test_analytic.py.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_fixtures import (
    model_config,
    system_toml,
)

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.sim.simulation import Simulation
from jalapeno.serve.sim.run import simulate
from jalapeno.serve.sim.workloads import (
    AgenticSpec,
    fixed_length_requests,
    open_loop_arrivals,
    read_trace,
)
from jalapeno.specs.formats import get_precision
from jalapeno.specs.model_file import load_model_file
from jalapeno.specs.workload import Workload


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny_sim_props")
    (d / "big.toml").write_text(system_toml(3.0))  # ~400K tokens of KV: nothing is preempted
    (d / "small.toml").write_text(system_toml(0.6))  # a few thousand tokens: preemption
    (d / "config.json").write_text(json.dumps(model_config()))
    model = load_model_file(d / "config.json", name="tiny-llama")
    return model, load_pricer(str(d / "big.toml")), load_pricer(str(d / "small.toml"))


def _dep(workers: int = 1) -> Deployment:
    return Deployment(get_precision("bf16"), Pool(Layout(), workers), token_budget=256)


# ---------------------------------------------------------------- Little's law


def _closed_loop(model, system, wl: Workload, c: int, counted: int, seed: int):
    """A closed-loop run kept as a Simulation, so warm-up requests can be inspected too."""
    sim = Simulation(model, system, _dep(), seed=seed, ctx_ref=wl.mean_isl + wl.mean_osl / 2)
    sim.closed_loop(fixed_length_requests(wl, counted + 2 * c, np.random.default_rng(seed)), c, 2 * c)
    return sim, sim.run()


@pytest.mark.parametrize("c", [8, 48])
def test_littles_law_closed_loop(tiny, c):
    model, big, _ = tiny
    wl = Workload("ranged", 64, 129, range_ratio=0.8)
    sim, res = _closed_loop(model, big, wl, c, 50 * c, seed=3)
    arr = np.array([r.arrival_s for r in sim.requests])
    done = np.array([r.done_s for r in sim.requests])
    counted = np.array([r.counted for r in sim.requests])
    # InferenceX: the first 2·C requests issued are warm-up, the 50·C after them are counted
    assert not counted[: 2 * c].any() and counted[2 * c:].all()  # sim.requests is in issue order
    assert res.summary["requests"] == 50 * c
    t1, t2 = arr[counted].min(), arr[counted].max()
    assert t2 - t1 > 20 * np.mean(done - arr)  # a long window: edge effects ≪ 2%

    # the premise: exactly C in the system throughout the window (probe between event times)
    times = np.unique(np.concatenate([arr, done]))
    times = times[(times >= t1) & (times <= t2)]
    probes = (times[:-1] + times[1:]) / 2
    in_system = ((arr[None, :] <= probes[:, None]) & (done[None, :] > probes[:, None])).sum(axis=1)
    assert np.all(in_system == c)

    in_window = (done > t1) & (done <= t2)
    lam = in_window.sum() / (t2 - t1)
    e2e = float(np.mean(done[in_window] - arr[in_window]))
    assert lam * e2e == pytest.approx(c, rel=0.02)


# ---------------------------------------------------------------- token conservation


@pytest.mark.parametrize("which,c", [("big", 16), ("small", 64)])  # small: with preemption
def test_token_conservation(tiny, which, c):
    model, big, small = tiny
    system = big if which == "big" else small
    wl = Workload("fixed", 64, 129, range_ratio=1.0)
    sim, res = _closed_loop(model, system, wl, c, 10 * c, seed=5)
    sm = res.summary
    n = 10 * c
    assert sm["requests"] == n
    if which == "small":
        assert sm["preemptions"] > 0
    # every request finished with exactly its output length
    assert all(np.isfinite(r.done_s) for r in sim.requests)
    assert [r.generated for r in sim.requests] == [r.osl for r in sim.requests]
    # the summary's token rates over its duration give back n·OSL and n·ISL tokens
    out_tokens = sm["output_throughput_per_chip"] * sm["duration_s"] * sm["chips"]
    all_tokens = sm["throughput_per_chip"] * sm["duration_s"] * sm["chips"]
    assert out_tokens == pytest.approx(n * wl.osl, rel=1e-9)
    assert all_tokens == pytest.approx(n * (wl.isl + wl.osl), rel=1e-9)
    assert int(res.requests.output_tokens.sum()) == n * wl.osl
    # and the decode steps (TPOT) of each request span its osl − 1 later tokens: E2E = TTFT + (osl−1)·TPOT
    df = res.requests
    np.testing.assert_allclose(df.e2e_s, df.ttft_s + (wl.osl - 1) * df.tpot_s, rtol=1e-9)


# ---------------------------------------------------------------- open loop


def test_open_loop_poisson_low_rate_throughput(tiny):
    """At 20 req/s of 64 + 17 tokens the instance is busy ~13% of the time (a request needs
    ~17 steps of ~0.38 ms): nothing queues, so throughput = rate·(ISL + OSL)/chips, up to the
    sampling error of 3,000 Poisson gaps (σ ≈ 1/√3000 ≈ 1.8%)."""
    model, big, _ = tiny
    wl = Workload("fixed", 64, 17, range_ratio=1.0)
    rate, n = 20.0, 3000
    res = simulate(model, big, _dep(), workload=wl, rate=rate, num_requests=n, seed=4)
    sm = res.summary
    assert sm["requests"] == n and sm["chips"] == 1
    assert sm["throughput_per_chip"] == pytest.approx(rate * (wl.isl + wl.osl) / 1, rel=0.05)
    assert sm["request_rate_per_s"] == pytest.approx(rate, rel=0.05)
    arr = np.sort(res.requests.arrival_s.to_numpy())
    gaps = np.diff(arr)
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, abs=0.1)  # exponential gaps: CV = 1
    assert sm["queue_s"]["p50"] < 1e-3


def test_open_loop_two_replicas_count_both(tiny):
    """Two replicas behind the router: twice the chips, each serves about half the requests."""
    model, big, _ = tiny
    wl = Workload("fixed", 64, 17, range_ratio=1.0)
    res = simulate(model, big, _dep(workers=2), workload=wl, rate=20.0, num_requests=600, seed=4)
    assert res.summary["chips"] == 2
    assert res.summary["throughput_per_chip"] == pytest.approx(20.0 * 81 / 2, rel=0.1)
    assert set(res.requests.instance) == {0, 1}


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 400), rate=st.floats(0.01, 1e4), process=st.sampled_from(["poisson", "gamma", "burst"]),
       seed=st.integers(0, 2**31))
def test_arrivals_sorted_from_zero(n, rate, process, seed):
    t = open_loop_arrivals(n, rate, process, np.random.default_rng(seed))
    assert t.shape == (n,)
    assert t[0] == 0.0
    assert np.all(np.diff(t) >= 0) and np.all(np.isfinite(t))


@pytest.mark.parametrize("process,cv", [("poisson", 1.0), ("gamma", 2.0)])
def test_arrival_processes_mean_rate_and_burstiness(process, cv):
    rate, n = 5.0, 40000
    t = open_loop_arrivals(n, rate, process, np.random.default_rng(9))
    gaps = np.diff(t)
    assert gaps.mean() == pytest.approx(1 / rate, rel=0.03)
    assert gaps.std() / gaps.mean() == pytest.approx(cv, rel=0.06)


def test_burst_arrivals_come_in_groups():
    rate, n, size = 4.0, 32 * 500, 32
    t = open_loop_arrivals(n, rate, "burst", np.random.default_rng(2), burst_size=size)
    groups = t.reshape(-1, size)
    assert np.all(groups == groups[:, :1])  # every group arrives at one instant
    starts = groups[:, 0]
    assert len(np.unique(starts)) == n // size
    # the mean request rate is still ``rate``: groups every size/rate seconds
    assert np.diff(starts).mean() == pytest.approx(size / rate, rel=0.1)


# ---------------------------------------------------------------- trace replay


TRACE = [  # deliberately unsorted; (arrival_s, input_tokens, output_tokens, session_id, prefix_group)
    (0.30, 200, 20, "", ""), (0.00, 100, 10, "", ""), (0.05, 300, 30, "1", ""),
    (1.20, 450, 12, "1", ""), (0.50, 120, 40, "", "4"), (2.00, 160, 25, "", "4"), (0.05, 80, 8, "", ""),
]


def _write_csv(path, rows):
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["arrival_s", "input_tokens", "output_tokens", "session_id", "prefix_group"])
        w.writerows(rows)


def _write_jsonl(path, rows):
    keys = ["arrival_s", "input_tokens", "output_tokens", "session_id", "prefix_group"]
    lines = []
    for r in rows:
        d = {k: v for k, v in zip(keys, r) if v != ""}
        lines.append(json.dumps(d))
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_trace_replay_preserves_arrivals_and_lengths(tiny, tmp_path, fmt):
    model, big, _ = tiny
    p = tmp_path / f"trace.{fmt}"
    (_write_csv if fmt == "csv" else _write_jsonl)(p, TRACE)
    trace = read_trace(p)
    res = simulate(model, big, _dep(), trace=trace, seed=0)
    df = res.requests.sort_values(["arrival_s", "id"])
    expected = sorted(TRACE, key=lambda r: r[0])  # stable: equal times keep file order
    assert len(df) == len(TRACE)
    np.testing.assert_array_equal(df.arrival_s.to_numpy(), [r[0] for r in expected])
    np.testing.assert_array_equal(df.input_tokens.to_numpy(), [r[1] for r in expected])
    np.testing.assert_array_equal(df.output_tokens.to_numpy(), [r[2] for r in expected])
    np.testing.assert_array_equal(df.session.to_numpy(), [int(r[3]) if r[3] else -1 for r in expected])
    assert (df.done_s > df.first_token_s).all() and (df.first_token_s > df.arrival_s).all()
    # the second turn of session 1 (t = 1.2 s, long after the first ended) reuses its 300 + 30 tokens
    second = df[(df.session == 1) & (df.arrival_s == 1.20)].iloc[0]
    assert second.cached_tokens == 300 + 30
    # ... and the later request of prefix group 4 reuses the group's 120-token prompt
    grp = df[df.arrival_s == 2.00].iloc[0]
    assert grp.cached_tokens == 120
    assert res.tasks.session.tolist() == [1]


def test_trace_session_and_prefix_group_with_one_number_are_apart(tiny, tmp_path):
    """Session 3 and prefix group 3 of one trace shared a prefix-cache entry: the group's first
    request (no session) found session 3's 300 + 30 tokens of context and skipped their prefill."""
    model, big, _ = tiny
    p = tmp_path / "both.csv"
    _write_csv(p, [(0.0, 300, 30, "3", ""), (1.5, 400, 20, "", "3"), (3.0, 400, 20, "", "3")])
    df = simulate(model, big, _dep(), trace=read_trace(p), seed=0).requests.sort_values("arrival_s")
    assert df.cached_tokens.tolist() == [0, 0, 399]  # group 3's second request reuses its own prompt (less one)


@pytest.mark.parametrize("second_isl,key", [(120, "prefix_group"), (150, "session")])
def test_full_prefix_hit_still_finishes(tiny, second_isl, key):
    """A prompt the cache fully covers must still compute its last token (engines recompute at
    least one prompt token to get logits), then decode normally."""
    from jalapeno.serve.sim.workloads import RequestSpec

    model, big, _ = tiny
    kw = {key: 4}
    trace = [RequestSpec(120, 40, 0.5, **kw), RequestSpec(second_isl, 25, 2.0, **kw)]
    res = simulate(model, big, _dep(), trace=trace, seed=0)
    df = res.requests.sort_values("arrival_s")
    assert np.isfinite(df.done_s).all()
    assert df.cached_tokens.iloc[1] <= second_isl - 1


def test_trace_sessions_keep_affinity_across_replicas(tiny):
    from jalapeno.serve.sim.workloads import RequestSpec

    model, big, _ = tiny
    trace = [RequestSpec(500, 50, 0.0, session=0), RequestSpec(500, 50, 0.0001, session=1),
             RequestSpec(600, 50, 1.0, session=1), RequestSpec(600, 50, 2.0, session=0)]
    res = simulate(model, big, _dep(workers=2), trace=trace, seed=0)
    df = res.requests.sort_values("arrival_s")
    for s in (0, 1):
        rows = df[df.session == s]
        assert rows.instance.nunique() == 1, rows[["instance", "arrival_s"]]
        assert rows.cached_tokens.iloc[1] == 550  # the first turn's 500 + 50 tokens


# ---------------------------------------------------------------- agentic sessions

SPEC = AgenticSpec("t", turns=5, system_prompt_tokens=400, tool_output_tokens=200, reply_tokens=40,
                   think_s=0.004)


@pytest.fixture(scope="module")
def agentic_runs(tiny):
    model, big, _ = tiny
    on = simulate(model, big, _dep(), agentic=SPEC, concurrency=3, sessions=6, seed=8, prefix_cache=True)
    off = simulate(model, big, _dep(), agentic=SPEC, concurrency=3, sessions=6, seed=8, prefix_cache=False)
    return on, off


def test_agentic_prefix_reuse_lowers_prefill_and_ttft(agentic_runs):
    on, off = agentic_runs
    assert on.summary["prefill_tokens"] < off.summary["prefill_tokens"]
    assert on.summary["ttft_s"]["mean"] < off.summary["ttft_s"]["mean"]
    assert off.summary["prefix_hit_rate"] == 0.0 < on.summary["prefix_hit_rate"]
    # same seed: the same sessions either way
    cols = ["session", "turn", "input_tokens", "output_tokens"]
    assert on.requests[cols].sort_values(cols[:2]).reset_index(drop=True).equals(
        off.requests[cols].sort_values(cols[:2]).reset_index(drop=True))


def test_agentic_prefill_tokens_by_hand(agentic_runs):
    """With a cache far larger than the sessions, turn k > 0 reuses all of turn k − 1's context
    (its prompt + reply), so the prefill is the sum of prompts minus those contexts."""
    on, off = agentic_runs
    df = on.requests.sort_values(["session", "turn"])
    total_prompt = float(df.input_tokens.sum())
    reused = 0.0
    for _, g in df.groupby("session"):
        ctx = (g.input_tokens + g.output_tokens).to_numpy()
        np.testing.assert_array_equal(g.cached_tokens.to_numpy()[1:], ctx[:-1])
        assert g.cached_tokens.iloc[0] == 0
        reused += ctx[:-1].sum()
    assert off.summary["prefill_tokens"] == total_prompt
    assert on.summary["prefill_tokens"] == total_prompt - reused
    assert on.summary["prefix_hit_rate"] == pytest.approx(reused / total_prompt, rel=1e-12)
    # each prompt = the previous context + one tool output (uniform in ±20% of 200 tokens)
    for _, g in df.groupby("session"):
        ctx = (g.input_tokens + g.output_tokens).to_numpy()
        tool = g.input_tokens.to_numpy()[1:] - ctx[:-1]
        assert np.all((tool >= 0.8 * 200 - 1) & (tool <= 1.2 * 200))


def test_agentic_task_frame(agentic_runs):
    on, _ = agentic_runs
    df, tasks = on.requests, on.tasks
    assert len(tasks) == 6 and sorted(tasks.session) == list(range(6))
    assert on.summary["tasks"] == 6
    for _, t in tasks.iterrows():
        g = df[df.session == t.session].sort_values("turn")
        assert t.turns == SPEC.turns == len(g)
        assert t.completion_s == pytest.approx(g.done_s.max() - g.arrival_s.min(), rel=1e-12)
        # turn k + 1 arrives think_s after turn k is done
        np.testing.assert_allclose(g.arrival_s.to_numpy()[1:], g.done_s.to_numpy()[:-1] + SPEC.think_s,
                                   rtol=0, atol=1e-12)
    assert on.summary["task_completion_s"]["mean"] == pytest.approx(float(tasks.completion_s.mean()), rel=1e-12)
    # closed loop over sessions: 3 start within the first think time (staggered, so equal think
    # times do not keep them in lock-step), each later one when an earlier one ends
    starts = np.sort(tasks.start_s.to_numpy())
    assert np.all((starts[:3] >= 0.0) & (starts[:3] < SPEC.think_s))
    ends = tasks.end_s.to_numpy()
    assert all(np.isclose(ends, s, rtol=0, atol=1e-12).any() for s in starts[3:])


def test_agentic_same_seed_same_result(tiny, agentic_runs):
    model, big, _ = tiny
    on, _ = agentic_runs
    again = simulate(model, big, _dep(), agentic=SPEC, concurrency=3, sessions=6, seed=8, prefix_cache=True)
    assert again.requests.equals(on.requests)
    assert again.tasks.equals(on.tasks)
