"""The idle start's burst in an aggregated run's later waves (issue 18 item 6a, round 49, aggq49).

serve/queueing.py effect 3 charges InferenceX's idle start to the run's first wave alone: the other R − 1
waves (R = :data:`~jalapeno.serve.queueing.REQUESTS_PER_USER`) are priced at the steady state. The
simulator (serve/sim/) shows that they are not steady where the first wave's prefill is a large part of a
user's cycle (long prompts at high load): the first wave leaves the prefill steps at the engine's prefill
rate, spread over its span T_1 (a few tens of seconds for 256 8k prompts on GB200), each user comes back
one cycle P later, and its next prompts arrive bunched in the same part of the cycle. Lengths drawn
uniformly in [r·L, L] (InferenceX) spread a user's decode by a uniform of width w = (1 − r)·OSL·τ/a per
cycle (τ the mean step, a tokens per step), so the bunching dissolves only slowly (after j cycles the
first wave's profile convolved j times with that uniform). Measured in the simulator (GB200 DeepSeek-R1
FP8 TP8 8k/1k C 256, seed 0): the arrivals' index of dispersion over 4 s bins is 5.1 after the in-line
warm-up's 2 waves, 1.5 after 10 and 0.5 after 30; the steady mean TTFT 0.485 s after 2 waves, 0.426 s
after 10, 0.414 s after 30 (the analytic steady state: 0.398 s); the per-wave means of an idle-start run
are 0.58, 0.54, 0.56, 0.51, 0.46, 0.51, 0.49, 0.43, 0.44 s in waves 2-10.

The term, by the pointwise stationary approximation (Green & Kolesar 1991, "The pointwise stationary
approximation for queues with nonstationary arrivals", Management Science 37(1): 84-97 — a queue whose
arrival rate varies slowly against its service time behaves at each instant as the stationary queue at
that instant's rate; here the rate varies over seconds, the steps last ~0.1 s):

- a user's cycle is P = n/λ (n users of the instance, λ its request rate, the steady state's: Little's
  law); fold the first wave's arrival times x_k = t_k + f (first_wave_s's first tokens plus what a
  request adds outside them) onto a circle of circumference P and bin it (:data:`BINS` bins);
- wave j (1..R − 1) has that profile convolved j times with the uniform of width w: its density d_j on
  the circle (sums to 1), its local load factor g = d_j·BINS (the local rate over λ);
- an arrival at load factor g meets the steady queue of effect 1 at rate g·λ: ρ → g·ρ, the share of
  steps carrying prefill f_p → min(g·f_p, 1), the mean step τ_g = (1 − f_p·g)·t_dec + f_p·g·t_pre, the
  chunks per step n̄_g = g·n̄·τ_g/τ; its TTFT moves by
  Δ(g) = (τ_g − τ)/2 + Q(n̄_g, τ_g) − Q(n̄, τ) (Q = serve/queueing.agg_queue_s; ρ capped there at MAX_RHO);
- the run: its first wave as effect 3 prices it (weight 1/R), wave j's arrivals at the steady TTFT + Δ(g)
  with weights d_j/R. Mean and quantiles are those of that mixture (each bin's distribution is the
  steady one shifted by Δ(g): the quantile q of the steady TTFT plus the mixture's shift).

Named assumptions: the waves' own queueing does not re-spread them (a wave denser than the engine's
prefill capacity would spread to its rate: Δ is capped by MAX_RHO instead); the poll, batch-wait,
attention-DP and overlap-lag waits keep their steady values; the decode batch is the steady one.
Applied only to the InferenceX protocol (``agg_burst_fraction`` None: a fitted share already carries a
client's bunching) and to drawn lengths (r < 1: with fixed lengths the waves recur, effect 6).
Shipped behind :data:`LATER_WAVES_ON`.

Pure: no I/O.
"""

from __future__ import annotations

import numpy as np

from jalapeno.cost.pricer import Pricer
from jalapeno.deploy.deployment import Deployment
from jalapeno.serve.analytic import ServingPoints, agg_head, agg_plan
from jalapeno.serve.queueing import REQUESTS_PER_USER, agg_queue_s
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload

#: Whether an aggregated InferenceX run's later waves meet the first wave's bunching (module docstring).
#: Built round 49 (aggq49); read at each call (serve/point._agg_idle_start).
LATER_WAVES_ON = False
#: bins of the user's cycle for the arrival profile (a 256-user wave's span is ~100 bins at 512)
BINS = 512


def wave_loads(
    first_s, period_s: float, spread_s: float, waves: int = REQUESTS_PER_USER - 1, bins: int = BINS
) -> np.ndarray:
    """Arrival densities of waves 1..``waves`` on the user's cycle, (waves, bins), each row summing to 1.

    Args:
        first_s: the first wave's arrival-side times x_k (first tokens plus the time outside them), s, (n,).
        period_s: P, a user's cycle (n/λ), s, > 0.
        spread_s: w, the width of the uniform a cycle adds to each user's return time, s, ≥ 0.
        waves: later waves (R − 1); bins: bins of the cycle.

    Wave j's profile is the first wave's folded onto the circle and convolved j times with a box of
    ⌈w/bin⌉ bins (at least one: w below a bin leaves the profile as it is).

    >>> d = wave_loads(np.zeros(4), 10.0, 5.0, waves=2, bins=10)  # all at 0: box of 5 bins, then 9 bins
    >>> d[0].round(2).tolist(), d[1].max().round(3).tolist()
    ([0.2, 0.2, 0.2, 0.2, 0.2, 0.0, 0.0, 0.0, 0.0, 0.0], 0.2)
    """
    x = np.asarray(first_s, dtype=float)
    idx = np.floor((x % period_s) / period_s * bins).astype(int) % bins
    h = np.bincount(idx, minlength=bins).astype(float)
    h /= h.sum()
    k = min(max(int(round(spread_s / period_s * bins)), 1), bins)
    box = np.zeros(bins)
    box[:k] = 1.0 / k
    fh, fb = np.fft.rfft(h), np.fft.rfft(box)
    out = np.array([np.clip(np.fft.irfft(fh * fb**j, bins), 0.0, None) for j in range(1, waves + 1)])
    return out / out.sum(axis=1, keepdims=True)


def load_shift_s(
    g,
    chunk_cost_s: float,
    chunks_per_step: float,
    step_s: float,
    decode_step_s: float,
    prefill_step_s: float,
    concurrency: float,
) -> np.ndarray:
    """Δ(g): how much an arrival's TTFT moves at load factor ``g`` (M,) against the steady state, s, (M,).

    Args:
        g: the local request rate over the steady one, (M,), ≥ 0.
        chunk_cost_s, chunks_per_step, step_s: s, n̄, τ of the steady queue (serve/queueing.agg_queue_s).
        decode_step_s, prefill_step_s: t_dec and t_pre, the decode-only step and the step carrying a chunk, s.
        concurrency: C, the instance's users (the arrival theorem of agg_queue_s).

    >>> float(load_shift_s(np.array([1.0]), 0.08, 0.28, 0.061, 0.039, 0.119, 256)[0])  # the steady state
    0.0
    >>> bool(load_shift_s(np.array([2.0]), 0.08, 0.28, 0.061, 0.039, 0.119, 256)[0] > 0.05)
    True
    """
    g = np.asarray(g, dtype=float)
    # the share of steps carrying prefill, from τ = (1 − f)·t_dec + f·t_pre (a mixed engine's mean step)
    share = min(max((step_s - decode_step_s) / max(prefill_step_s - decode_step_s, 1e-30), 0.0), 1.0)
    f = np.clip(g * share, 0.0, 1.0)
    tau_g = (1.0 - f) * decode_step_s + f * prefill_step_s
    n_g = g * chunks_per_step * tau_g / max(step_s, 1e-30)
    base = agg_queue_s(chunk_cost_s, chunks_per_step, step_s, concurrency)
    return (tau_g - step_s) / 2 + agg_queue_s(chunk_cost_s, n_g, tau_g, concurrency) - base


def run_ttft(ss: dict, first_s: np.ndarray, density: np.ndarray, shift_s: np.ndarray) -> dict:
    """The run's TTFT by key (None = mean, else quantile q): the first wave ``first_s`` (n,) s, at least the
    steady value, weight 1/R, and waves 1..R − 1 (``density`` (R − 1, bins)) at the steady value plus
    ``shift_s`` (R − 1, bins) s (or (bins,), every wave alike), weight density/R (module docstring). ``ss``: the
    steady TTFT by key, floats.

    >>> ss = {None: 1.0, 0.5: 1.0}
    >>> r = run_ttft(ss, np.full(2, 3.0), np.full((9, 2), 0.5), np.array([0.0, 1.0]))
    >>> round(r[None], 3), r[0.5]  # 0.1·3 + 0.9·(1 + 0.5); the median: half the later waves 1 s late
    (1.65, 2.0)
    """
    r = REQUESTS_PER_USER
    first = np.asarray(first_s, dtype=float)
    dens = np.asarray(density, dtype=float)
    wts = np.concatenate([np.full(first.size, 1.0 / (r * first.size)), dens.ravel() / r])
    out = {}
    for key, v in ss.items():
        vals = np.concatenate([np.maximum(first, v), (v + np.broadcast_to(shift_s, dens.shape)).ravel()])
        if key is None:
            out[key] = float(np.sum(vals * wts) / np.sum(wts))
            continue
        order = np.argsort(vals, kind="stable")
        cum = np.cumsum(wts[order]) / np.sum(wts)
        out[key] = float(vals[order][min(int(np.searchsorted(cum, key - 1e-12)), vals.size - 1)])
    return out


def with_later_waves(
    model: ModelSpec,
    pricer: Pricer,
    dep: Deployment,
    wl: Workload,
    pts: ServingPoints,
    users,
    waves: list,
    extra,
    out: dict,
) -> dict:
    """``out`` (the run's TTFT by key, (N,) each, serve/queueing.idle_start's) with the later waves' bunching
    (module docstring) at the points it applies to: InferenceX's protocol (``agg_burst_fraction`` None), drawn
    lengths, a mixed engine (prompts beside the decode batch), no admission queue. ``waves``: each point's
    first-wave first tokens (serve/queueing.first_wave_s, its one-off stall added), s; ``extra`` (N,) or scalar:
    what a request adds outside them; ``users`` (N,): the instance's users; ``pricer``: the one the points were
    priced with (the pool's backends applied, serve/point.py). Off (:data:`LATER_WAVES_ON` False): ``out``."""
    if (
        not LATER_WAVES_ON
        or pricer.efficiency.agg_burst_fraction is not None
        or wl.range_ratio >= 1
        or dep.prefill_steps == "separate"
    ):
        return out
    plan = agg_plan(model, pricer, dep, wl, np.asarray(pts.decode_batch, dtype=float))
    head, _ = agg_head(model, pricer, dep, wl, plan, times_only=True)
    a = dep.mtp.tokens_per_step if dep.mtp else 1.0
    extra = np.broadcast_to(np.asarray(extra, dtype=float), (len(waves),))
    res = {k: np.array(v, dtype=float) for k, v in out.items()}
    ss = {None: pts.ttft_s, **{q: getattr(pts, f"ttft_p{int(q * 100)}_s") for q in out if q is not None}}
    for i, first in enumerate(waves):
        lam, tau = float(pts.request_rate_per_s[i]), float(pts.step_time_s[i])
        if lam <= 0 or pts.queue_s[i] > 0:
            continue
        period = float(np.asarray(users, dtype=float)[i]) / lam
        dens = wave_loads(first + extra[i], period, (1 - wl.range_ratio) * wl.mean_osl * tau / a)
        shift = load_shift_s(
            dens * dens.shape[1],
            float(head["s_chunk"][i]),
            float(head["n_bar"][i]),
            tau,
            float(head["t_dec"][i]),
            float(head["ttft_step"][i]),
            float(users[i]),
        )
        run = run_ttft({k: float(v[i]) for k, v in ss.items()}, first + extra[i], dens, shift)
        for key in res:
            res[key][i] = run[key]
    return res
