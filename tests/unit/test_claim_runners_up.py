"""Peak claims' candidate deployments include the dominated runners-up (analysis/claims.ClaimContext.candidates).

Round 42: Kimi K2.5 on Jalapeño's audit read ``link_half_bytes`` as "does not move" (5,780 on the candidates) while a
full sweep at its physical end gives 6,234 — the deployment that wins there (MoE TP8, 5,629 as priced) is dominated
by the winner (5,775) at the calibrated set, so a frontier-only candidate set never held it.
"""

from types import SimpleNamespace

import numpy as np

from jalapeno.analysis.claims import ClaimContext, parse_claim


def _sweep():
    # three deployments; A dominates B everywhere (B is on no frontier), C is slow but fast per user
    labels = ["A", "A", "B", "B", "C"]
    x = np.array([10.0, 40.0, 9.0, 30.0, 200.0])  # tok/s/user
    y = np.array([1000.0, 600.0, 950.0, 500.0, 100.0])  # tok/s/chip
    pts = SimpleNamespace(feasible=np.ones(5, bool), throughput_per_chip=y, interactivity=x, e2e_s=1 / x)
    return pts, [SimpleNamespace(label=s, prefill=None) for s in labels]


def test_peak_candidates_hold_the_dominated_runner_up():
    ctx = ClaimContext(model=None, workload=None, precision=None)
    pts, deps = _sweep()
    got = [d.label for d in ctx.candidates(parse_claim("peak_throughput_per_chip=2000"), pts, deps)]
    # by hand: frontier A(10,1000), A(40,600), C(200,100); B's best (950 at 9) is below A's 1000 at 10 -> dominated
    assert "B" in got
    assert set(got) == {"A", "B", "C"}


def test_runners_up_are_ranked_by_own_peak_and_distinct():
    ctx = ClaimContext(model=None, workload=None, precision=None)
    pts, deps = _sweep()
    # k = 1: the frontier's first point (A) and the single best deployment by own peak (A again): B stays out
    got = {d.label for d in ctx.candidates(parse_claim("peak_throughput_per_chip=2000"), pts, deps, k=1)}
    assert "B" not in got
