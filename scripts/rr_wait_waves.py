"""Round-robin decode-slot wait wave by wave: why serve/rr_wait.py's closed form is 0.6x the simulated wait with many
slots a worker and 1.0-1.8x with one, and four candidate replacements priced on a grid (round 30; none shipped).

Setting as scripts/rr_wait_check.py: C = N·n closed-loop users at the cap of N decode workers of n slots, outputs
uniform on [0.8 L, L] at 10 ms a token, R = 10 requests a user, round-robin routing, FIFO per worker; here the time
before routing is 0 (``PREFILL_S`` = 0: the lag term is the shipped form's own and is left out of the comparison).
Wave k is every user's k-th request. Columns (mean wait per request over all R waves, s; ratio to the simulation):

- ``sim``: scripts/rr_wait_check.simulated_waits_by_wave, ``SEEDS`` seeds;
- ``no feedback``: the same waves with each request's decode started at its arrival when the next wave's completion
  times are drawn (the waits still counted), so the waits do not reorder later waves (a numpy Monte Carlo): what
  a per-wave form that ignores the waits' own effect on the next wave can reach at best;
- ``shipped``: serve/rr_wait.router_wait_s (every later wave spread as one decode time, worker v's n users
  independent of its arrivals);
- ``stratified``: the later waves counted as they run: worker v's users in wave k are the (k−1)-th wave's completion
  ranks v, v + N, ..., so A_v − K_v has variance (N − 1)/N² · Σ_u q_u (1 − q_u), q_u a user's chance of having
  completed by t given its previous completion time (wave k's completion times are the (k−1)-th's plus one decode
  time: their spread grows as √k); normal as shipped;
- ``skellam mf``: the same count taken as a difference of two Poisson counts (Skellam, E[D⁺] = V/2·(I₀(V) + I₁(V))e^−V)
  with its variance plus the offsets of worker v's stride of ranks (mean field: the completed count at its mean);
- ``skellam cpl``: Skellam on the users out of place (completed after a later-ranked one, or before an earlier one),
  each counted with the completed count's own spread (normal, continuity-corrected): right with few users, an
  upper bound with many (it drops the anticorrelation of the marks within a worker's stride);
- ``min``: the smaller of the last two (each an upper bound away from its own limit).

Run: python scripts/rr_wait_waves.py [--waves]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy.special import erfc, i0e, i1e

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rr_wait_check import simulated_waits_by_wave  # noqa: E402

#: (N workers, n slots a worker) of the grid, each at its cap C = N·n
GRID = [
    (2, 2),
    (3, 1),
    (4, 1),
    (7, 1),
    (64, 1),
    (2, 4),
    (15, 4),
    (3, 8),
    (4, 15),
    (8, 16),
    (16, 8),
    (2, 30),
    (4, 64),
    (2, 128),
]
OSL, TPOT_S, RATIO, WAVES, SEEDS = 8192, 0.01, 0.8, 10, 16
#: time steps per output-length spread in the forms' grids
STEPS = 48


def no_feedback_waits_s(workers: int, slots: int, reps: int = 60, seed: int = 0) -> np.ndarray:
    """(WAVES − 1,) mean wait per request of waves 2..R, s, with the waits not fed back (module docstring)."""
    rng, users = np.random.default_rng(seed), workers * slots
    lo, hi = RATIO * OSL * TPOT_S, OSL * TPOT_S
    out = np.zeros(WAVES - 1)
    for _ in range(reps):
        done = rng.uniform(lo, hi, users)
        holder = np.arange(users) % workers  # wave 1: user i on worker i mod N
        for k in range(1, WAVES):
            order = np.argsort(done, kind="stable")
            to = (np.arange(users) + k * users) % workers  # round-robin turn over the completion order
            for v in range(workers):
                freed = np.sort(done[holder == v])
                arrive = done[order[to == v]]
                out[k - 1] += np.maximum(freed[: len(arrive)] - arrive, 0.0).sum() / users
            holder = np.empty(users, dtype=int)
            holder[order] = to
            done = done + rng.uniform(lo, hi, users)
    return out / reps


def _skellam_plus(v: np.ndarray) -> np.ndarray:
    """E[D⁺] of D = X − Y, X and Y Poisson of mean v/2 each (variance v)."""
    return v / 2 * (i0e(v) + i1e(v))


def _ge(k, mean, var):
    """P(X ≥ k) for an integer count of that mean and variance (normal, continuity-corrected)."""
    return 0.5 * erfc((k - 0.5 - mean) / np.sqrt(2 * np.maximum(var, 1e-12)))


def form_waits(workers: int, slots: int) -> dict[str, np.ndarray]:
    """(WAVES − 1,) mean wait per request of waves 2..R, s, by candidate form (module docstring), at the cap."""
    n, big_n = slots, workers
    users, w = n * big_n, (1 - RATIO) * OSL * TPOT_S
    dt, step = w / STEPS, np.full(STEPS, 1.0 / STEPS)
    rank = np.arange(users)
    prev = np.array([1.0])  # previous wave's completion offsets (its pmf on the dt grid); wave 0: all at 0
    out: dict[str, list] = {"stratified": [], "skellam mf": [], "skellam cpl": [], "min": []}
    for k in range(1, WAVES):
        cur = np.convolve(prev, step) if k > 1 else step
        t = np.arange(len(cur) + 1) * dt
        cdf_prev = np.concatenate([[0.0], np.cumsum(prev)])
        y = np.interp((rank + 0.5) / users, cdf_prev, np.arange(len(cdf_prev)) * dt) if k > 1 else np.zeros(users)
        q = np.clip((t[:, None] - y[None, :]) / w, 0.0, 1.0)  # (T, C): P(completed by t | previous completion)
        m, var = q.sum(1, keepdims=True), (q * (1 - q)).sum(1, keepdims=True)
        v_strat = var[:, 0] * (big_n - 1) / big_n**2
        mu = (rank[None, :] < m) - q  # expected out-of-place mark of each rank at the mean count
        stride = np.pad(mu, ((0, 0), (0, (-users) % big_n))).reshape(len(t), -1, big_n).sum(1)
        v_mf = v_strat + (stride**2).mean(1)
        mo, vo = m - q, var - q * (1 - q)  # the completed count without user ρ
        late = ((1 - q) * _ge(rank[None, :] + 1, mo, vo)).sum(1)
        early = (q * (1 - _ge(rank[None, :], mo, vo))).sum(1)
        v_cpl = (late + early) / big_n
        out["stratified"].append(np.sqrt(v_strat).sum() / math.sqrt(2 * math.pi) * dt / n)
        for name, v in (("skellam mf", v_mf), ("skellam cpl", v_cpl), ("min", np.minimum(v_mf, v_cpl))):
            out[name].append(_skellam_plus(v).sum() * dt / n)
        prev = cur
    return {name: np.array(x) for name, x in out.items()}


def main() -> None:
    from jalapeno.serve.rr_wait import router_wait_s
    from jalapeno.specs.workload import Workload

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--waves", action="store_true", help="also print each wave's mean wait (s)")
    args = ap.parse_args()
    wl = Workload("grid", 1024, OSL, range_ratio=RATIO)
    cols = ["no feedback", "shipped", "stratified", "skellam mf", "skellam cpl", "min"]
    print("N x n | C | sim s | " + " | ".join(f"{c} s (x sim)" for c in cols))
    for workers, slots in GRID:
        total, count = np.zeros(WAVES), np.zeros(WAVES)
        for s in range(SEEDS):
            tw, cw = simulated_waits_by_wave(workers, slots, workers * slots, OSL, TPOT_S, s, RATIO, WAVES, 0.0)
            total[: min(WAVES, len(tw))] += tw[:WAVES]
            count[: min(WAVES, len(cw))] += cw[:WAVES]
        sim = total.sum() / count.sum()
        nofb = no_feedback_waits_s(workers, slots)
        forms = form_waits(workers, slots)
        row = {
            "no feedback": nofb.sum() / WAVES,
            "shipped": float(router_wait_s("round_robin", slots, slots, workers, TPOT_S, wl, 0.0)),
            **{k: v.sum() / WAVES for k, v in forms.items()},
        }
        print(
            f"{workers} x {slots} | {workers * slots} | {sim:.3f} | "
            + " | ".join(f"{row[c]:.3f} ({row[c] / sim:.2f})" for c in cols)
        )
        if args.waves:
            print("    sim by wave 2..R:", np.round(total[1:] / np.maximum(count[1:], 1), 2).tolist())
            print("    no feedback:     ", np.round(nofb, 2).tolist())
            for k, v in forms.items():
                print(f"    {k}:", np.round(v, 2).tolist())


if __name__ == "__main__":
    main()
