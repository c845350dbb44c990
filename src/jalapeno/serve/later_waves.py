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

The waves' re-forming (round 50, waves50; :data:`WAVE_REFORM_ON`, read only with :data:`LATER_WAVES_ON`). The
passive spread above lets each user come back one cycle P after its first token, whatever the engine does
meanwhile. It does not: a step carrying a prompt lasts t_pre (0.26 s on H200 DeepSeek-R1 8k) against t_dec
(0.04 s), so every user decoding through a dense stretch of prompts is slowed by them and one decoding through
a sparse stretch is not: a wave's early returners are held back by the late returners' prompts and the next
wave re-forms at the engine's prefill rate. :func:`reformed_loads` replaces the passive profile by the closed
loop's fluid limit, stepped in bins of at least one prompt step: the first wave's first tokens seed it; the
arrivals enter a prefill server of the steady state's capacity (a prompt step serves λτ/φ prompts, φ the
steady share of steps carrying one: μ = λτ/(φ·t_pre)); a bin's prompt steps and the decode-only steps filling
the rest of it advance every decoding user's clock (a tokens a step); a user comes back when its clock has run
its output (uniform in [r·L, L]) plus the rest of its cycle, P − OSL·τ/a (the steady TTFT and what a request
adds outside its decode). The arrival rate is averaged over the steady queue's relaxation time s/(1 − √ρ)²
(the M/M/1 queue's spectral gap (√μ − √λ)², μ = 1/s: the span over which the pointwise stationary
approximation may read a rate as constant; unaveraged, the fluid's rate oscillates bin to bin, a prompt-heavy
bin slowing the clock and taking fewer returns) and each bin priced by :func:`load_shift_s`. Nothing is fitted:
λ, τ, φ, t_dec, t_pre, s and ρ are the steady state's. Against the simulator (serve/sim/, seed 0, ``warmup=0``,
8k/1k) the load factor of waves 2-5 (arrival-weighted; simulated: the others' arrivals within ±4 s over λ) is
1.55, 1.43, 1.32, 1.25 on H200 C 128 (simulated 1.56, 1.45, 1.33, 1.25), 1.62, 1.50, 1.42, 1.36 on GB200 C 256
(1.55, 1.45, 1.39, 1.32) and 2.24, 1.86, 1.68, 1.55 on MI325X C 64 (1.96, 1.73, 1.55, 1.40: 64 users dissolve
faster than a fluid). Run TTFT mean / median against the simulator: H200 C 128 +15 / +46% (passive) → +5 / +8%,
MI325X C 64 +14 / +42 → +7 / +26%, GB200 C 256 +4 / +3 → +2 / −6% (docs/gap_aic_ttft.md, round 50).

Named assumptions: the waves' own queueing does not re-spread them (a wave denser than the engine's
prefill capacity would spread to its rate: Δ is capped by MAX_RHO instead); the poll, batch-wait
and overlap-lag waits keep their steady values; the decode batch is the steady one. TensorRT-LLM's attention-DP
balancing gate (serve/adp_balance.py) is the exception (round 51, waves51; :data:`WAVE_GATE_ON`,
:func:`gate_shift_s`): its wait is the time for every rank to receive a prompt, ∝ 1/λ, so a dense stretch of a
wave waits less, a sparse one more. Left at its steady value, it and the queue's Δ(g) took H200 DeepSeek-R1
TensorRT-LLM 8k/1k C 256 (InferenceX row 25, attention DP 8, measured TTFT 8.48 s) from 7.57 to 11.43 s; at the
local rate, 7.41 s.
Applied only to the InferenceX protocol (``agg_burst_fraction`` None: a fitted share already carries a
client's bunching) and to drawn lengths (r < 1: with fixed lengths the waves recur, effect 6).
Shipped behind :data:`LATER_WAVES_ON`.

Pure: no I/O.
"""

from __future__ import annotations

import numpy as np

from jalapeno.cost.pricer import Pricer
from jalapeno.deploy.deployment import Deployment
from jalapeno.serve.admission_waits import adp_gate_s, running_slots
from jalapeno.serve.analytic import agg_head, agg_plan
from jalapeno.serve.serving_points import ServingPoints
from jalapeno.serve.queueing import MAX_RHO, REQUESTS_PER_USER, agg_queue_s
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload

#: Whether an aggregated InferenceX run's later waves meet the first wave's bunching (module docstring).
#: Built round 49 (aggq49); read at each call (serve/idle_start._agg_idle_start).
LATER_WAVES_ON = False
#: Whether the later waves' profile is the closed loop's fluid, re-formed through the decode slow-down
#: (:func:`reformed_loads`), instead of the passive spread (:func:`wave_loads`). Built round 50 (waves50); read
#: only where :data:`LATER_WAVES_ON` is on.
WAVE_REFORM_ON = True
#: Whether a later wave's arrivals meet TensorRT-LLM's attention-DP balancing gate at their local rate g·λ
#: (:func:`gate_shift_s`) instead of the steady rate's wait. Built round 51 (waves51); read only where
#: :data:`LATER_WAVES_ON` is on.
WAVE_GATE_ON = True
#: at most this many time bins of the fluid over a run's later waves (bins at least one prompt step wide)
FLUID_BINS = 4000
#: the fluid's time span in user cycles n/λ per wave it must reach (waves + 2 of them: the first wave's spread and
#: the last wave's return): a numerical reach, not a fitted constant — the loop stops once every later wave has
#: arrived, and a wave past the span repeats the last one reached (:func:`reformed_loads`, not met in the validated
#: runs); it sets the bins' width only where span / FLUID_BINS exceeds a prompt step
HORIZON_CYCLES = 1.5
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


def reformed_loads(
    first_s,
    users: float,
    rate: float,
    step_s: float,
    share: float,
    decode_step_s: float,
    prefill_step_s: float,
    osl: float,
    range_ratio: float,
    tokens_per_step: float,
    rest_s: float,
    window_s: float,
    waves: int = REQUESTS_PER_USER - 1,
    max_bins: int = FLUID_BINS,
) -> tuple[np.ndarray, np.ndarray]:
    """The later waves' arrival profile of the closed loop's fluid limit (module docstring, the re-forming).

    Args:
        first_s: the first wave's first tokens (the arrival side, as :func:`wave_loads`), s, (n,).
        users: n, the instance's users, > 0; rate: λ, its steady request rate, /s, > 0.
        step_s: τ, the steady mean step, s; share: φ, the steady share of steps carrying a prompt, in (0, 1]:
            a prompt step serves λτ/φ prompts, the prefill server's capacity μ = λτ/(φ·t_pre).
        decode_step_s, prefill_step_s: t_dec and t_pre, s.
        osl: L, the longest output, tokens; range_ratio: r (outputs uniform in [r·L, L]).
        tokens_per_step: a (MTP's accepted tokens per step, else 1).
        rest_s: what a user's cycle holds outside its decode (steady TTFT, front end), s, ≥ 0.
        window_s: the span the returned rate is averaged over, s (the queue's relaxation time, module docstring).
        waves: later waves (R − 1); max_bins: the bins' cap (bins at least one prompt step wide).

    Returns:
        (masses (waves, M): wave j's share of its arrivals in each time bin, each row summing to 1 (arrivals
        counted in order, n a wave); g (M,): each bin's arrival rate over λ, averaged over ``window_s``).

    >>> d, g = reformed_loads(np.zeros(2), 2.0, 0.1, 1.0, 0.1, 1.0, 1.0, 10.0, 1.0, 1.0, 0.0, 1.0, waves=1)
    >>> float(d.sum()), int(np.argmax(d[0]))  # steps of 1 s, outputs of 10 tokens: back in the bin 10 s on
    (1.0, 10)
    """
    n = float(users)
    per_step = rate * step_s / max(share, 1e-9)  # prompts a prompt-carrying step serves (the steady state's)
    mu = per_step / prefill_step_s  # every step carrying prompts
    horizon = HORIZON_CYCLES * (waves + 2) * n / rate
    h = max(prefill_step_s, horizon / max_bins)
    nb = int(horizon / h) + 2
    first = np.asarray(first_s, dtype=float)
    seed = np.bincount(np.minimum((first / h).astype(int), nb - 1), minlength=nb).astype(float)
    lo, hi = range_ratio * osl, max(osl, range_ratio * osl + 1e-9)
    lag = int(round(rest_s / h))
    arrive = np.zeros(nb + lag + 1)
    clock = np.zeros(int(np.ceil(horizon * tokens_per_step / min(decode_step_s, prefill_step_s) + hi)) + 3)
    done, backlog, d0, need, last = 0.0, 0.0, 0.0, waves * n, nb - 1
    for i in range(nb):
        done += arrive[i]
        served = min(backlog + arrive[i], max(mu * h - seed[i], 0.0))  # the first wave's prompts go first
        backlog += arrive[i] - served
        served += seed[i]
        pre = min(served / per_step, h / prefill_step_s)  # the bin's prompt steps; decode-only steps fill the rest
        d1 = d0 + tokens_per_step * (pre + (h - pre * prefill_step_s) / decode_step_s)
        if served > 0:  # back when the decode clock has run the output: uniform over clock [d0 + r·L, d0 + L]
            c0, c1 = d0 + lo, d0 + hi
            k0, k1 = int(c0), int(c1)
            dens = served / (c1 - c0)
            clock[k0 + 1 : k1] += dens
            clock[k0] += dens * (min(k0 + 1, c1) - c0)
            if k1 > k0:
                clock[k1] += dens * (c1 - k1)
        k0, k1 = int(d0), int(d1)
        back = clock[k0 : k1 + 1].sum() - clock[k0] * (d0 - k0) - clock[k1] * (k1 + 1 - d1)
        arrive[i + lag] += max(back, 0.0)
        d0 = d1
        if done >= need:
            last = i
            break
    a = arrive[: last + 1]
    cum = np.cumsum(a)
    rows = np.array(
        [np.clip(np.minimum(cum, (j + 1) * n) - np.maximum(cum - a, j * n), 0.0, None) for j in range(waves)]
    )
    for j in range(1, waves):  # a wave past the horizon: the last one reached (not met in the validated runs)
        if rows[j].sum() <= 0:
            rows[j] = rows[j - 1]
    k = max(int(round(window_s / h)), 1)
    g = np.convolve(a / h / rate, np.ones(k) / k, mode="same")
    return rows / np.maximum(rows.sum(axis=1, keepdims=True), 1e-30), g


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


def gate_shift_s(dep: Deployment, g, rate: float, step_s: float, batch: float, users: float) -> np.ndarray:
    """What the attention-DP balancing gate moves an arrival's TTFT by at load factor ``g`` (M,) against the
    steady rate ``rate`` (λ, /s), s, (M,) (serve/admission_waits.adp_gate_s at g·λ minus at λ; 0 without the gate).

    TensorRT-LLM's ``_balance_adp_requests`` holds a rank's prompts until every rank has one or ``timeout_iters``
    steps have passed (serve/adp_balance.py): a round closes after dp arrivals (slots free) or once every rank has
    been hit (slots full, the coupon collector), so its wait is ∝ 1/λ, capped at ``timeout_iters``·τ. A wave's
    dense stretch fills the rounds faster: by the pointwise stationary approximation (module docstring) an arrival
    at load factor g waits the gate of rate g·λ. ``step_s``: τ; ``batch``: the decode batch; ``users``: the
    instance's users (slots full where they reach its running slots, as serve/lockstep.py reads it).

    >>> from types import SimpleNamespace as NS
    >>> dep = NS(adp_balance_timeout_iters=None, decode=NS(layout=NS(dp=8, pp=1)))  # no balancing: no shift
    >>> gate_shift_s(dep, np.array([0.5, 2.0]), 2.0, 0.1, 64.0, 64.0).tolist()
    [0.0, 0.0]
    """
    g = np.maximum(np.asarray(g, dtype=float), 1e-9)
    lay = dep.decode.layout
    if dep.adp_balance_timeout_iters is None or lay.dp * lay.pp <= 1:
        return np.zeros(g.shape)
    slots = running_slots(dep, lay)
    full = np.full(g.shape, slots is not None and users >= slots - 1e-9)
    b = np.full(g.shape, float(batch))
    tau = np.full(g.shape, float(step_s))
    return adp_gate_s(dep, lay, b, g * rate, tau, full) - adp_gate_s(dep, lay, b, np.full(g.shape, rate), tau, full)


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
        t_dec, t_pre = float(head["t_dec"][i]), float(head["ttft_step"][i])
        if WAVE_REFORM_ON:
            share = min(max((tau - t_dec) / max(t_pre - t_dec, 1e-30), 1e-9), 1.0)  # as load_shift_s reads it
            rest = max(period - wl.mean_osl * tau / a, 0.0)
            s_chunk, rho = (
                float(head["s_chunk"][i]),
                min(float(head["n_bar"][i]) * float(head["s_chunk"][i]) / tau, MAX_RHO),
            )
            window = s_chunk / (1.0 - np.sqrt(rho)) ** 2  # M/M/1's relaxation time 1/(√μ − √λ)², μ = 1/s
            dens, g = reformed_loads(
                first + extra[i],
                float(users[i]),
                lam,
                tau,
                share,
                t_dec,
                t_pre,
                float(wl.osl),
                wl.range_ratio,
                a,
                rest,
                window,
            )
        else:
            dens = wave_loads(first + extra[i], period, (1 - wl.range_ratio) * wl.mean_osl * tau / a)
            g = dens * dens.shape[1]
        shift = load_shift_s(
            g,
            float(head["s_chunk"][i]),
            float(head["n_bar"][i]),
            tau,
            t_dec,
            t_pre,
            float(users[i]),
        )
        if WAVE_GATE_ON:  # the balancing gate at the wave's local rate (gate_shift_s)
            shift = shift + gate_shift_s(dep, g, lam, tau, float(pts.decode_batch[i]), float(users[i]))
        run = run_ttft({k: float(v[i]) for k, v in ss.items()}, first + extra[i], dens, shift)
        for key in res:
            res[key][i] = run[key]
    return res
