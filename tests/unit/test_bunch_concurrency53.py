"""The closed loop's bunched arrivals count its C users, not the decode batch B (serve/batch_wait.py module
docstring, "Who is in the bunch"; switch serve/batch_wait.BUNCH_CONCURRENCY_ON, round 53, bunch53).

Expected values are worked by hand below from the bunch's rate (C − 1)/(2√π·σ) and the grouping
g = m/(1 − e^(−m)) of serve/analytic._chunk_step_load's docstring, not read from the code's output.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve import analytic, batch_wait
from jalapeno.serve.analytic import _chunk_step_load
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import Workload


def _dep():
    # attention DP 8 (the grouping applies at dp > 1), no balancing gate; 4,096 tokens a rank: the mean
    # 900-token prompt is one chunk
    return Deployment(
        get_precision("fp8"),
        Pool(Layout(tp=1, dp=8, ep=8)),
        max_running=512,
        max_tokens_per_step=4096,
        budget_per="rank",
    )


# prompts uniform in [800, 1000] (mean 900: one chunk), outputs uniform in [0.8·1024, 1024]; 16 sequences
# decoding, 40 users in the loop
WL = Workload("w", 1000, 1024, 0.8)
B, C, STEPS = np.array([16.0]), np.array([40.0]), 1023.0
# σ = √k̄·(1 − r)·L/√12 with k̄ = (10 + 1)/2 = 5.5 cycles (serve/queueing.REQUESTS_PER_USER = 10):
# √5.5 = 2.34521, 204.8/√12 = 59.1207, σ = 138.651 steps; 2√π·σ = 3.54491 × 138.651 = 491.50
SIGMA = math.sqrt(5.5) * 204.8 / math.sqrt(12.0)
RATE_B = 15.0 / (2 * math.sqrt(math.pi) * SIGMA)  # (16 − 1)/491.50 = 0.030519 a step (mean 16/1023 = 0.01564)
RATE_C = 39.0 / (2 * math.sqrt(math.pi) * SIGMA)  # (40 − 1)/491.50 = 0.079349 a step


def _group(m: float) -> float:
    """Chunks a prompt-carrying step carries: m/(1 − e^(−m)) (one chunk a prompt here, m = a)."""
    return m / (1.0 - math.exp(-m))


def test_ships_off():
    # round 53's rule: no MISS line moves toward its goal with it on (docs/model.md, "Who is in the bunch")
    assert batch_wait.BUNCH_CONCURRENCY_ON is False


def test_hand_numbers():
    assert SIGMA == pytest.approx(138.651, abs=1e-3)
    assert RATE_B == pytest.approx(0.030519, abs=1e-6) and RATE_C == pytest.approx(0.079349, abs=1e-6)
    # g: 0.030519/(1 − 0.969942) = 1.01534 and 0.079349/(1 − 0.923717) = 1.04019
    assert _group(RATE_B) == pytest.approx(1.01534, abs=1e-5) and _group(RATE_C) == pytest.approx(1.04019, abs=1e-5)


def test_on_the_bunch_counts_the_users(monkeypatch):
    monkeypatch.setattr(batch_wait, "BUNCH_CONCURRENCY_ON", True)
    p, chunk, _, p_big, _ = _chunk_step_load(_dep(), WL, B, STEPS, users=C)
    assert chunk == 900.0 and p[0] == pytest.approx(16.0 * 900.0 / 1023.0, rel=1e-12)  # 14.076 tokens a step
    assert p_big[0] == pytest.approx(900.0 * _group(RATE_C), rel=1e-9)  # 936.17 tokens
    # the share of steps that carry prefill: 14.076/936.17 = 0.01504, where the batch gave 14.076/913.81 = 0.01540
    assert p[0] / p_big[0] == pytest.approx(0.01504, abs=1e-5)
    # no users passed (a sweep by batch): the decode batch, as before
    assert _chunk_step_load(_dep(), WL, B, STEPS)[3][0] == pytest.approx(900.0 * _group(RATE_B), rel=1e-9)


def test_off_reads_the_decode_batch_whatever_the_users(monkeypatch):
    monkeypatch.setattr(batch_wait, "BUNCH_CONCURRENCY_ON", False)
    got = _chunk_step_load(_dep(), WL, B, STEPS, users=C)[3][0]
    assert got == pytest.approx(900.0 * _group(RATE_B), rel=1e-9)  # 913.81 tokens
    assert got == _chunk_step_load(_dep(), WL, B, STEPS)[3][0]


def test_the_solve_plans_its_last_pass_at_the_points_concurrency(monkeypatch):
    """The fixed-concurrency solve hands the plan C = B·E2E/(E2E − TTFT) of the pass before; at its fixed point
    that is the point's own λ·E2E (its ``concurrency``), which sits above the decode batch by λ·TTFT."""
    monkeypatch.setattr(batch_wait, "BUNCH_CONCURRENCY_ON", True)
    seen = []
    real = analytic._chunk_step_load

    def spy(dep, wl, b_mb, steps, users=None):
        seen.append((np.array(b_mb, dtype=float), None if users is None else np.array(users, dtype=float)))
        return real(dep, wl, b_mb, steps, users)

    monkeypatch.setattr(analytic, "_chunk_step_load", spy)
    model, pricer = load_model("deepseek-r1"), load_pricer("b200")
    wl = Workload("w", 8192, 1024, 0.8)
    pts = analytic.solve_concurrency(model, pricer, _dep(), wl, np.array([16.0, 64.0]))
    assert seen[0][1] is None  # the first pass knows no C yet: the batch
    b_last, u_last = seen[-1]
    assert u_last is not None
    np.testing.assert_allclose(b_last, pts.decode_batch, rtol=1e-9)
    np.testing.assert_allclose(u_last, pts.concurrency, rtol=1e-3)  # C of the pass before, at the fixed point
    assert np.all(pts.concurrency > pts.decode_batch + 0.1)  # long prompts: users before their first token


def test_duplicate_concurrencies_give_the_same_points(monkeypatch):
    monkeypatch.setattr(batch_wait, "BUNCH_CONCURRENCY_ON", True)
    model, pricer = load_model("deepseek-r1"), load_pricer("b200")
    wl = Workload("w", 8192, 1024, 0.8)
    both = analytic.solve_concurrency(model, pricer, _dep(), wl, np.array([64.0, 16.0, 64.0]))
    one = analytic.solve_concurrency(model, pricer, _dep(), wl, np.array([64.0]))
    assert both.interactivity[0] == both.interactivity[2] == pytest.approx(one.interactivity[0], rel=1e-9)
