"""Prompt chunks per prefill step of agentic sessions (serve/turn_arrivals.py, TURN_ARRIVALS_ON, agentic55).

Off (to round 54): g = m/(1 − e^(−m)) with turns arriving at B/(D·t_d) and chunks of min(n̄, pb). On (shipped): chunks
as an engine cuts them (E⌈n/pb⌉ over the tool-output jitter), arrivals at the model's own turn rate, clustered by the
step mix one think time earlier, and a closed population of decoding sequences. Expected values by hand in the comments; the simulator figures are the round-54
table of docs/agentic.md §3 (Jalapeño 64 coding-8: 165.3 s task time simulated).
"""

from __future__ import annotations

import numpy as np
import pytest

import jalapeno.serve.turn_arrivals as ta
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.sessions import sessions_at
from jalapeno.specs.agentic import AgenticSpec
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

CODING8 = AgenticSpec("coding-8", 8, 6000, 2500, 350, 2.0)


def test_switch_ships_on():
    # round 55: on, every non-convoy point of docs/agentic.md §3's simulator grid within 5% of the task time
    assert ta.TURN_ARRIVALS_ON is True


def test_poisson_given_one_by_hand():
    # m/(1 − e^(−m)): m = 1: 1/0.632121 = 1.581977; m = 2: 2/0.864665 = 2.313035; m → 0: 1
    got = ta.poisson_given_one(np.array([1.0, 2.0, 0.0]))
    assert got == pytest.approx([1.581977, 2.313035, 1.0], rel=1e-5)


def test_mean_chunks_over_the_jitter_by_hand():
    # coding-8 at pb = 1,024, tool output 2,500 ± 500: a turn of 2,000-3,000 tokens is 2 chunks up to 2,048
    # (48 of the 1,000-token range) and 3 above: 2 + 0.952 = 2.952; turn 0 (6,000 + 2,500 ± 500 = 8,000-9,000)
    # is 8 chunks up to 8,192 (192 of 1,000) and 9 above: 8.808
    got = ta.mean_chunks(np.array([2500.0, 8500.0]), 500.0, 1024.0)
    assert got == pytest.approx([2.952, 8.808], rel=1e-9)
    # no jitter: ⌈2,500/1,024⌉ = 3, ⌈2,048/1,024⌉ = 2 (exactly two chunks), ⌈100/1,024⌉ = 1
    assert ta.mean_chunks(np.array([2500.0, 2048.0, 100.0]), 0.0, 1024.0).tolist() == [3.0, 2.0, 1.0]


def test_echo_count_by_hand_at_the_simulators_jalapeno_64():
    # the simulator's own step mix at Jalapeño 64 (docs/agentic.md §3, agentic55): m = 1.52 turns in prefill,
    # λ = 3.14 turns/s, b/D = 0.16 turns ending a step, t_d = 21.7 ms, t_p = 133.8 ms, k̄ = 3.68 (w = 0.4924 s),
    # φ = 0.69. T_c = (e^1.52 − 1)/3.14 × 0.31 = 1.13764 × 0.31 = 0.35267 s; w/T_c = 1.3962, 1 − e^(−1.3962) = 0.75247;
    # var = 2 × 0.69 × 0.31 × 0.35267 × (0.4924 − 0.35267 × 0.75247) = 0.15087 × 0.22703 = 0.034252 s²;
    # contrast 0.16 × (1/0.0217 − 1/0.1338) = 6.1774 /s: σ² = 38.160 × 0.034252 = 1.3071, s = 0.85993;
    # P(0) = exp(−(1.52/0.85993) × ln 1.85993) = exp(−1.09686) = 0.33390; g = 1.52/0.66610 = 2.2819
    # (the simulator's prefill steps carry 2.20 chunks; the Poisson count given one, 1.95)
    got = ta.echo_given_one(np.array([1.52]), 0.16, 3.14, 0.0217, 0.1338, 3.68 * 0.1338, 0.69)
    assert got[0] == pytest.approx(2.2819, rel=5e-4)
    assert ta.poisson_given_one(np.array([1.52]))[0] == pytest.approx(1.9455, rel=5e-4)  # 1.52/(1 − 0.21871)


def test_step_mix_solves_the_poisson_fixed_point_by_hand():
    # q = 0.5 chunks a step, t_d = 20 ms, t_p = 100 ms whatever the chunk count, a very large decode batch (the
    # closed-population correction vanishes). g = G(m), m = q·t_p/τ, τ = (1 − q/g)·20 + (q/g)·100 ms. By hand:
    # g = 1.6755: τ = 43.873 ms, m = 1.13964, G = 1.67578 (above g); g = 1.6759: τ = 43.868, m = 1.13979,
    # G = 1.67588 (below g): the root is 1.6759 ± 0.0001, f = q/g = 0.29835
    grid = np.array([1.0, 2.0, 4.0, 8.0])
    g, f, fs = ta.step_mix(np.array([0.5]), np.array([0.020]), grid, np.full((1, 4), 0.100), np.array([1e9]), 8.0)
    assert g[0] == pytest.approx(1.6759, abs=2e-4)
    assert f[0] == pytest.approx(0.29835, abs=2e-4)
    assert fs[0] == pytest.approx(f[0], abs=1e-6)


def test_step_mix_closed_population_meets_fewer_prefill_steps():
    # with 4 decoding sequences a step carrying ~1.7 chunks has ~1.7·(1 − φ) fewer of them than the mean: a
    # decoding sequence meets prefill in fewer of its steps than the step share f
    grid = np.array([1.0, 2.0, 4.0, 8.0])
    _, f, fs = ta.step_mix(np.array([0.5]), np.array([0.020]), grid, np.full((1, 4), 0.100), np.array([4.0]), 8.0)
    assert fs[0] < 0.9 * f[0]


def test_step_mix_never_packs_more_than_dp_chunks():
    grid = np.array([1.0, 2.0])
    g, f, _ = ta.step_mix(np.array([5.0]), np.array([0.020]), grid, np.full((1, 2), 0.5), np.array([1e9]), 2.0)
    assert g[0] == pytest.approx(2.0) and f[0] == pytest.approx(1.0)


@pytest.fixture(scope="module")
def jalapeno_dp8():
    return (
        load_model("deepseek-r1"),
        load_pricer("jalapeno"),
        Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8))),
    )


def test_on_prices_the_chunk_an_engine_cuts(jalapeno_dp8, monkeypatch):
    # coding-8: n̄ = (8,500 + 7 × 2,500)/8 = 3,250 tokens a turn, k̄ = (8.808 + 7 × 2.952)/8 = 3.684 chunks:
    # c̄ = 882.2 tokens (the simulator's prefill steps carry 879-881-token chunks, docs/agentic.md §3); off: 1,024
    model, pr, dep = jalapeno_dp8
    lay = dep.decode.layout
    new = CODING8.turn_new_tokens()[None, :]
    args = (model, pr, dep, lay, np.array([54.0]), 20_000.0, new, 500.0, 1024.0, 349.0, np.array([10_000.0]))
    monkeypatch.setattr(ta, "TURN_ARRIVALS_ON", True)
    g_on, c_on, fs_on = ta.chunks_per_prefill_step(*args)
    monkeypatch.setattr(ta, "TURN_ARRIVALS_ON", False)
    g_off, c_off, fs_off = ta.chunks_per_prefill_step(*args)
    assert c_off[0] == 1024.0 and fs_off is None
    assert c_on[0] == pytest.approx(3250 / 3.684, rel=1e-6)
    # arrivals at B/(D·τ_s) rather than B/(D·t_d): fewer turns in prefill a step, even clustered
    assert 1.0 <= g_on[0] < g_off[0] and 0.0 < fs_on[0] < 1.0


def test_on_moves_jalapeno_64_toward_the_simulator(jalapeno_dp8, monkeypatch):
    # round 54 (agsim54): 165.3 s simulated against 133.4 s analytic (off): the analytic side packed 3.68 chunks
    # a prefill step against the simulator's 2.20; on, g falls (2.42) and the task time moves toward 165.3 s
    model, pr, dep = jalapeno_dp8
    monkeypatch.setattr(ta, "TURN_ARRIVALS_ON", True)
    on = sessions_at(model, pr, dep, CODING8, [64]).task_time_s[0]
    monkeypatch.setattr(ta, "TURN_ARRIVALS_ON", False)
    off = sessions_at(model, pr, dep, CODING8, [64]).task_time_s[0]
    assert abs(on / 165.3 - 1) < abs(off / 165.3 - 1)
    assert abs(on / 165.3 - 1) < 0.05  # round 55: 162.2 s
