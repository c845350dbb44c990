"""The wait for a decode slot when the front end routes disaggregated requests round-robin (issue 18).

Dynamo's frontend without ``--router-mode`` sends each new request to the next decode worker in turn,
whatever its load (ai-dynamo/dynamo ``docs/pages/components/frontend/configuration.md``: ``--router-mode``
default ``round-robin``; the srt-slurm runners start it with no router mode, NVIDIA/srt-slurm @5063eb43
``src/srtctl/frontends/dynamo.py``; data/stacks.toml ``disagg_router``). Output lengths spread over
[r·L, L] free slots out of that order, so a request can meet a full worker while another has a free slot,
and waits there (FIFO) for that worker's next completion. A load-aware router (``load_aware``) has no such
wait while any worker has a slot.

**Derivation** (a closed loop of C users over N decode workers of B slots, n = C/N users per worker).
Round-robin places the first wave evenly: n per worker, slack s = B − n free slots each. Take one wave
(every user's request of the same round): its completions are spread by the decode times' spread, CDF F
over time t. Each completion sends its user's next request to the next worker in turn, so by time t
worker v has received A_v(t) ≈ M(t)/N of the M(t) completions so far, and has freed K_v(t) of its own
n slots. Its queue is Q_v(t) = max(0, A_v − K_v − s) (requests present B − s − K_v + A_v, minus its B
slots). With the n users on v and the C − n elsewhere completing independently with CDF F (p = F(t)),
D = A_v − K_v = M'/N − K_v (N − 1)/N (M' ~ Bin(C − n, p), K_v ~ Bin(n, p)) has mean 0 and variance

    v(p) = p (1 − p) · n (N − 1) / N,

taken as normal: E[Q] = σ φ(s/σ) − s (1 − Φ(s/σ)), σ = √v (σ φ(0) = σ/√(2π) at the cap, s = 0).
A user is away for P between its completion and its next request reaching a decode worker (front end,
prefill, KV hand-off: the model's own TTFT parts before the decode slot), so the arrivals lag the
completions: A_v(t) = M(t − P)/N, which frees n·P·f(t) more slots on average (f = dF/dt); the slack at p
is s(p) = s + n·P·f (taken as its mean: an assumption).
By Little's law on worker v, its n requests of the wave wait ∫ E[Q(t)] dt in all, so one request waits

    W_wave = (1/n) ∫ E[Q(F(t))] dt = (1/n) ∫_0^1 E[Q(p)] dQ_S(p),

Q_S the quantile function of one request's decode time S = OSL·TPOT (dQ_S = TPOT·dOSL(p)). For OSL
uniform on [r·L, L] at the cap (s = 0) this is closed: ∫_0^1 √(p(1−p)) dp = π/8, so

    W_wave = (1 − r)·L·TPOT · (π/8) · √((N − 1)/(N·n)) / √(2π).

The first wave starts with every slot free (no wait), so over R = :data:`~jalapeno.serve.queueing.REQUESTS_PER_USER`
requests per user the mean is (R − 1)/R · W_wave (the closed form above is P = 0). Limits: N = 1 → 0 (the
worker's own completions are the arrivals); B·N ≫ C (s ≫ σ) → 0; lengths all equal (r = 1) → 0. The simulator
(serve/sim/bootstrap.py) routes the same way.

Assumption (named): every later wave's completions spread as the first's (the decode times' own
spread). Waits delay early completers more than late ones, which pulls a wave back together, while the
lengths' spread widens it; scripts/rr_wait_check.py's request-level simulation counted wave by wave (round 29:
1k/8k, 20 seeds, 2 x 2, 4 x 1, 4 x 15, 2 x 30) puts later waves' waits at 0.35-1.9x the first's (less with few
slots a worker: the waves lock into round-robin order; more with many). Checked on a grid against that
simulation at the cap (scripts/rr_wait_check.py, tests/unit/test_rr_wait.py): 0.57-1.8x the simulated wait at
1k/8k with up to 30 slots a worker, but 0.46-0.51x with 64-128 (4 x 64, 2 x 128: 0.19 / 0.37 s, 0.09 / 0.19 s;
2 x 256: 0.38x) — with many slots later waves spread wider than the first, so it under-predicts by 0.1-0.2 s at
8k; 0.2-2x at 1k/1k (waits ≤ 0.2 s there); not fitted to any row. Why, counted wave by wave (round 30,
scripts/rr_wait_waves.py, docs/gap_aic_ttft.md §"The round-robin wait counted wave by wave"): from the third wave
worker v holds the users whose previous completions ranked v, v + N, ... (not independent ones), and wave k's
completions spread as √k decode spreads; counted so, the same normal form is 0.98-1.17x the simulation with 8-128
slots a worker (C ≥ 24) but 1.6-2.6x with one to four (C ≤ 8), where the count is a small integer and the waits
reorder the next wave; the form above is 0.6-0.7x and 1.0-1.8x there, and is kept (the rows at their cap are the
few-user cases).

**At the slot cap in the steady state** (round 49, rrwait49; ``scripts/rr_wait_split49.py``, docs/gap_disagg_overprediction.md
round 49). Re-derived step by step for the phase-mixed steady state (users of a worker at every phase of their cycle):
(1) worker v holds Y_v requests in system (decoding or waiting for a slot); one that reached v u seconds ago is
still there with probability 1 − F(u) (F: the decode time's CDF; waits ignored: an assumption), so with arrivals at
λ_v = λ/N (round-robin: every N-th of the stream) E[Y_v] = λ_v·E[S] = b (the decode batch) and, the requests'
lengths drawn independently (assumption), Var(Y_v) = λ_v ∫F(1 − F) dS (uniform spread w: λ_v·w/6). (2) The
workers' total is C less the users away (ΣY_v = N·b), so D_v = Y_v − B has mean −(B − b) and, about the workers'
mean, variance (N − 1)/N · Var(Y_v), taken as normal. (3) E[Q_v] = E[max(D_v, 0)] (the normal form above, σ
constant) and W = E[Q_v]/λ_v (Little). So the steady slack is B − b, the away users C/N − b included once — the
inputs serve/disagg.py passes (n = b, slots B) are right for this form; the wave form's lag n·P·f then adds the away
users a second time (the double count at row 29, C 6,144 = 2 x 3,072 slots, b 3,055.8: slack 16 plus a lag of 65-74). (4) Row 29:
λ_v 49.6/s, w 13.7 s: σ 7.5, slack 16.2, W 0.8 ms, not the simulator's 0.18 s of mean wait. The fast part holds:
the simulator's split X = D_2 − D_1 has increment variance 2·Var(X_fast) ≈ 540-560 at lags 10-20 s against 2 x 227
derived. The rest is the simulator's, not a missing term: its step times are bucketed (serve/sim/step_time.py, ratio
1.03), and a bucket edge falls just below the cap (3,056 decoding priced at 66.40 ms, 3,064-3,072 at 67.69 ms), so
a full worker made fewer output tokens a second than one with a few free slots (45,382 against 46,021) and the
split between the workers settled where their throughputs match, one worker full with ~26 queued (0.5 s each for
half the requests). With the decode sequences interpolated between buckets (``step_time.BATCH_INTERP_ON``) the
simulator reads 0.328 s mean, 0.333 s median against this form's 0.327 s. So the form stands as it is; the
lag's double count is left (it moves nothing at row 29, and the wave form's checks above are made with it).
"""

from __future__ import annotations

import math

import numpy as np

from jalapeno.serve.queueing import REQUESTS_PER_USER
from jalapeno.specs.efficiency_params import DISAGG_ROUTER_NAMES

#: quantile points of the decode time's distribution the wave integral is taken on (midpoint rule; the
#: uniform case's closed form agrees within 0.5% at 64)
_GRID = 64


def wave_wait_s(users_per_worker, slots, workers, spread_s, away_s=0.0) -> np.ndarray:
    """W_wave (module docstring): one request's mean wait for a slot in a wave after the first, s.

    Args:
        users_per_worker: n = C/N users per decode worker (array).
        slots: B, a worker's slots (array, broadcast; slack s = max(B − n, 0)).
        workers: N decode workers (array, broadcast; N ≤ 1 → 0).
        spread_s: (G,) increments of the decode time's quantile function over :data:`_GRID` equal steps
            of p, s (their sum is the spread max S − min S), or a float: a uniform spread of that width.
        away_s: P, s (array, broadcast): a completed user's time away before its next request reaches a
            decode worker; adds n·P·f slack at each p (f = (1/G)/increment: the completions' density).

    Returns:
        The mean wait, s, broadcast over the arguments.

    >>> round(float(wave_wait_s(1.0, 1, 2, 16.0)), 2)  # the closed form 16·(π/8)·√(1/2)/√(2π) = 1.772
    1.77
    """
    n = np.maximum(np.asarray(users_per_worker, dtype=float), 1e-9)[..., None]
    big_n = np.asarray(workers, dtype=float)[..., None]
    p = (np.arange(_GRID) + 0.5) / _GRID
    dq = np.full(_GRID, float(spread_s) / _GRID) if np.ndim(spread_s) == 0 else np.asarray(spread_s, dtype=float)
    away = np.asarray(away_s, dtype=float)[..., None]
    # completions' density f per s at each p (0 where dq = 0: that slice adds nothing, dq weights it)
    density = np.divide(1.0 / _GRID, dq, out=np.zeros(dq.shape), where=dq > 0)
    lag = n * np.maximum(away, 0.0) * density
    slack = np.maximum(np.asarray(slots, dtype=float)[..., None] - n, 0.0) + lag
    sigma = np.sqrt(p * (1 - p) * n * np.clip(big_n - 1, 0.0, None) / np.maximum(big_n, 1.0))
    z = np.divide(slack, sigma, out=np.full(np.broadcast(slack, sigma).shape, np.inf), where=sigma > 0)
    pdf = np.exp(-0.5 * np.minimum(z, 40.0) ** 2) / math.sqrt(2 * math.pi)
    from scipy.special import erfc  # lazily, as serve/open_loop.py: `import jalapeno` stays light

    tail = 0.5 * erfc(np.minimum(z, 40.0) / math.sqrt(2))
    queue = np.where(sigma > 0, sigma * pdf - slack * tail, 0.0)
    return np.maximum((queue * dq).sum(axis=-1) / n[..., 0], 0.0)


def osl_spread_tokens(wl) -> np.ndarray:
    """(G,) increments of a workload's output-length quantile function over :data:`_GRID` equal steps of p, tokens.

    >>> from jalapeno.specs.workload import Workload
    >>> float(osl_spread_tokens(Workload("x", 1024, 1000, range_ratio=0.8)).sum())  # uniform [800, 1000]
    200.0
    """
    q = np.array([wl.osl_quantile(k / _GRID) for k in range(_GRID + 1)])
    return np.diff(q)


def router_wait_s(
    router: str, users_per_worker, slots, workers, tpot_s, wl, away_s=0.0, requests_per_user: int = REQUESTS_PER_USER
) -> np.ndarray:
    """A disaggregated request's mean wait for a decode slot from the front end's ``router``, s.

    Args:
        router: ``Efficiency.disagg_router`` (:data:`~jalapeno.specs.efficiency_params.DISAGG_ROUTER_NAMES`).
        users_per_worker, slots, workers: n, B, N (arrays, broadcast; :func:`wave_wait_s`).
        tpot_s: the decode time per output token, s (array, broadcast).
        wl: the workload (its output lengths' spread, :func:`osl_spread_tokens`).
        away_s: P, s (array, broadcast; :func:`wave_wait_s`).
        requests_per_user: R; the first of a user's R requests does not wait.

    Returns:
        ``load_aware``: 0; ``round_robin``: (R − 1)/R · W_wave with the spread OSL quantiles × TPOT.

    Raises:
        ValueError: an unknown ``router`` (the stack loader admits only the known ones).
    """
    tpot = np.asarray(tpot_s, dtype=float)
    if router == "load_aware":
        return np.zeros(np.broadcast(np.asarray(users_per_worker, dtype=float), tpot).shape)
    if router != "round_robin":
        raise ValueError(f"disagg_router {router!r}: use one of {', '.join(DISAGG_ROUTER_NAMES)}")
    dq = osl_spread_tokens(wl)
    tpot_b = tpot[..., None] if tpot.ndim else tpot
    w = wave_wait_s(users_per_worker, slots, workers, dq * tpot_b, away_s)
    return (requests_per_user - 1) / requests_per_user * w
