"""Prompt chunks per prefill step of agentic sessions on an attention-DP instance (serve/sessions.py).

With attention DP the prompts in prefill run side by side, one per rank, and a step carrying prefill
costs about its busiest rank's chunk (cost/adp_rank.py): the fewer chunks a prefill step carries, the
more prefill steps of nearly the same cost. The session model needs g, the chunks a step carrying
prefill carries, and the chunk c they are priced at; the share of steps carrying prefill is then
f = q/g, q the chunks per step averaged over all steps.

Off (``TURN_ARRIVALS_ON = False``, the model to round 54; on since round 55): c = min(n̄, pb) (n̄ the mean tokens a turn
prefills, pb one prompt's tokens a step on its rank) and g = m/(1 − e^(−m)), the Poisson count given
one, with m = (p/c)·t_p/t_d: turns arriving at B/(D·t_d) a second — as if every step were a decode
step — each in prefill for n̄/c steps of t_p, the one-chunk step.

On (agentic55, :func:`step_mix`): the step mix the arrivals produce sets their rate and their clustering.

- Chunks: an engine cuts a turn's n_k new tokens at pb, ⌈n_k/pb⌉ steps (a 2,500-token tool output at
  pb = 1,024 is 1,024 + 1,024 + 452; the simulator's ``take = min(needed, budget, prompt_budget)``), the
  tool output uniform in ±jitter (:func:`mean_chunks`), so a turn is in prefill k̄ steps and its chunks
  average c̄ = n̄/k̄ tokens (coding-8 at pb = 1,024: k̄ = 3.684, c̄ = 882; simulated 871-881).
  q = B·k̄/D chunks per step.
- Rate: turns arrive at the model's own rate λ = B/(D·τ_s) (Little's law on the decoding sequences, τ_s
  the step a decoding sequence sees), not B/(D·t_d); a turn is in prefill k̄ steps of t_p(g) (a step
  carrying g chunks of c̄, priced at g = 1 and dp and interpolated: linear to 0.2%), so the mean count of turns in
  prefill is m = λ·k̄·t_p = q·t_p/τ_s; arrivals per step are λ·τ, f = q·τ/(τ_s·g), τ = (1 − f)·t_d + f·t_p.
- Clustering (:func:`echo_given_one`): turns end per step, so their rate in time is b/(D·t_d) in decode-only
  periods and b/(D·t_p) in prefill ones, 5-10× apart, and they arrive a think time later: the count of
  turns in prefill is a Poisson count of random mean, overdispersed, and a prefill step carries more chunks
  than the Poisson count (g = m/(1 − P(0)), P(0) of a negative binomial).
- A closed population: decoding = C − thinking − in prefill, and the thinking count (turns that ended
  within one think time) is independent of the turns in prefill (turns that ended earlier), so a step
  carrying prefill has g fewer decoding sequences than the mean over decode-only ones plus M̄:
  b_p = B − g·(1 − φ), b_d = (B − φ·b_p)/(1 − φ), φ = f·t_p/τ the share of the time in prefill steps, and a
  decoding sequence meets prefill in fs = f·b_p/((1 − f)·b_d + f·b_p) of its steps: τ_s = (1 − fs)·t_d + fs·t_p.

g is the root of min(G(g), dp) − g on [max(1, q), dp], found by regula falsi (Illinois).

Measured (agentic55; the simulator's step log in check_agentic's steady window, DeepSeek-R1 FP8, DP8 + EP8,
coding-8; docs/agentic.md §3): chunks per prefill step simulated / on / off: Jalapeño 64 2.20 / 2.42 / 3.68,
GB200 64 1.87 / 1.96 / 2.63, GB200 32 1.53 / 1.60 / 1.83, GB200 coding-agent 32 2.10 / 2.20 / 3.01; the
convoys (Jalapeño 8, 16: 1.86, 2.84 simulated) stay out of reach. Pure: no I/O beyond step pricing.
"""

from __future__ import annotations

import numpy as np

from jalapeno.cost.step import Batch, pool_step_cost
from jalapeno.serve.limits import graph_padded

#: The step mix the turn arrivals produce sets their rate and clustering, chunks counted as an engine cuts them,
#: decoding sequences counted in a closed population (agentic55; module docstring). Off: arrivals at B/(D·t_d),
#: chunks of min(n̄, pb), Poisson.
TURN_ARRIVALS_ON = True
#: Root steps on g (regula falsi, Illinois: |Δg| < 1e-9 after about 8 on the points of docs/agentic.md).
ROOT_STEPS = 12
#: Inner steps of the arrivals-per-step / decoding-share loop at a given g (it moves f by < 1% after two).
MIX_STEPS = 3


def poisson_given_one(m) -> np.ndarray:
    """E[M | M ≥ 1] of a Poisson count of mean m, m/(1 − e^(−m)) (1 as m → 0).

    >>> poisson_given_one(np.array([0.0, 1.0])).round(4).tolist()  # 1/(1 − 1/e) = 1.582
    [1.0, 1.582]
    """
    m = np.asarray(m, dtype=float)
    return np.where(m > 1e-12, m / np.maximum(-np.expm1(-m), 1e-12), 1.0)


def echo_given_one(m, rate, lam, t_d, t_p, w, phi) -> np.ndarray:
    """E[M | M ≥ 1] of the turns in prefill when their arrivals echo the step mix one think time earlier.

    Turns end per step (``rate`` = b/D a step), so b/(D·t_d) a second in decode-only periods and b/(D·t_p) in
    prefill ones, and each arrives a think time (plus its front end) later: the count in one prefill sojourn
    ``w`` = k̄·t_p (s) is Poisson with a random mean, of mean ``m`` and variance (rate·(1/t_d − 1/t_p))² × the
    variance of the decode-only time in a window w of a two-state process with prefill share ``phi`` and
    correlation time T_c = a·(1 − φ), a = (e^m − 1)/λ the busy period of an infinite-server queue at ``lam``
    turns/s (Takács): 2φ(1 − φ)·T_c·(w − T_c·(1 − e^(−w/T_c))). A gamma-mixed Poisson (negative binomial) of
    variance-to-mean s: P(0) = (1 + s)^(−m/s), and E[M | M ≥ 1] = m/(1 − P(0)). ASSUMPTIONS: the echo is
    taken unsmeared (the front end's spread over turns, 0.2-0.3 s on coding-8, is left out) and T_c as above
    (measured in the simulator, agentic55: 0.275 s at GB200 64, model 0.275; 0.31 at Jalapeño 64, model 0.35).
    Arrays of one shape; ``t_d``, ``t_p``, ``w`` in s.

    >>> echo_given_one(np.array([1.0]), 0.1, 2.0, 0.1, 0.1, 0.5, 0.6).round(4).tolist()  # no contrast: Poisson
    [1.582]
    """
    m = np.asarray(m, dtype=float)
    tc = np.maximum(np.expm1(np.minimum(m, 50.0)) / np.maximum(lam, 1e-12) * (1 - phi), 1e-12)
    var_occ = np.maximum(2 * phi * (1 - phi) * tc * (w - tc * -np.expm1(-w / tc)), 0.0)
    s = (rate * (1 / t_d - 1 / t_p)) ** 2 * var_occ / np.maximum(m, 1e-12)
    p0 = np.where(s > 1e-9, np.exp(-m / np.maximum(s, 1e-12) * np.log1p(s)), np.exp(-m))
    return np.where(m > 1e-12, m / np.maximum(1 - p0, 1e-12), 1.0)


def _ceil_integral(x: np.ndarray) -> np.ndarray:
    """∫_0^x ⌈t⌉ dt for x ≥ 0: 1 + 2 + … + ⌊x⌋ plus (x − ⌊x⌋)·(⌊x⌋ + 1)."""
    k = np.floor(x)
    return k * (k + 1) / 2 + (x - k) * (k + 1)


def mean_chunks(new, spread, pb) -> np.ndarray:
    """E⌈n/pb⌉, n uniform in [new − spread, new + spread] (``spread`` = jitter × tool output tokens), shape of ``new``.

    >>> mean_chunks(np.array([2500.0, 8500.0]), 500.0, 1024.0).round(3).tolist()  # 2 + 952/1000; 8 + 808/1000
    [2.952, 8.808]
    """
    new = np.asarray(new, dtype=float)
    lo, hi = np.maximum(new - spread, 0.0) / pb, (new + spread) / pb
    width = hi - lo
    exact = np.maximum(np.ceil(new / pb - 1e-9), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = (_ceil_integral(hi) - _ceil_integral(lo)) / width
    return np.where(width > 1e-9, np.maximum(avg, 1.0), exact)


def step_mix(q, t_d, grid, t_g, b, dp, kbar=None):
    """The on-path fixed point (module docstring): (g, f, fs), each (n,).

    ``q`` (n,) chunks per step at the decode rate B/D (B·k̄/D), ``t_d`` (n,) the decode-only step (s),
    ``grid`` (G,) the chunk counts priced, ``t_g`` (n, G) the step carrying that many chunks (s), ``b`` (n,)
    decoding sequences (the time mean), ``dp`` the most chunks a step carries, ``kbar`` (n,) chunks a turn
    (None: the Poisson count given one, no echo). ``f``: share of steps carrying prefill; ``fs``: share of a
    decoding sequence's steps that do.
    """
    n, G = t_g.shape
    rows = np.arange(n)

    def t_p(g):  # linear in g between the priced counts
        if G == 1:
            return t_g[:, 0]
        j = np.clip(np.searchsorted(grid, g) - 1, 0, G - 2)
        w = (g - grid[j]) / (grid[j + 1] - grid[j])
        return (1 - w) * t_g[rows, j] + w * t_g[rows, j + 1]

    def mix(g):
        tp = t_p(g)
        fs = f = np.minimum(q / g, 1.0)
        for _ in range(MIX_STEPS):
            tau = (1 - f) * t_d + f * tp
            phi = f * tp / np.maximum(tau, 1e-12)
            b_p = np.maximum(b - g * (1 - phi), 0.0)
            b_d = (b - phi * b_p) / np.maximum(1 - phi, 1e-12)
            fs = f * b_p / np.maximum((1 - f) * b_d + f * b_p, 1e-12)
            seen = (1 - fs) * t_d + fs * tp
            f = np.minimum(q * tau / np.maximum(seen, 1e-12) / g, 1.0)
        seen = (1 - fs) * t_d + fs * tp
        m = q * tp / np.maximum(seen, 1e-12)
        if kbar is None:
            return f, fs, m, poisson_given_one(m)
        phi = np.clip(f * tp / np.maximum((1 - f) * t_d + f * tp, 1e-12), 0.0, 1.0)
        rate = q / kbar  # turns ending a step
        return f, fs, m, echo_given_one(m, rate, rate / np.maximum(seen, 1e-12), t_d, tp, kbar * tp, phi)

    def excess(g):
        return np.minimum(mix(g)[3], dp) - g

    # regula falsi, Illinois variant (the kept end's excess halved when the same end moves twice): a bracket
    # like bisection's, superlinear; excess ≥ 0 at lo (G ≥ 1), ≤ 0 at hi = dp
    lo, hi = np.clip(q, 1.0, dp), np.full_like(q, dp, dtype=float)
    e_lo, e_hi = np.maximum(excess(lo), 0.0), np.minimum(excess(hi), 0.0)
    last = np.zeros(lo.shape, dtype=int)
    for _ in range(ROOT_STEPS):
        span = e_lo - e_hi
        x = np.where(span > 1e-15, lo + e_lo * (hi - lo) / np.maximum(span, 1e-15), lo)
        e = excess(x)
        up = e > 0
        e_hi = np.where(~up & (last == -1), e_hi, np.where(up & (last == 1), e_hi / 2, e_hi))
        e_lo = np.where(~up & (last == -1), e_lo / 2, e_lo)
        lo, e_lo = np.where(up, x, lo), np.where(up, e, e_lo)
        hi, e_hi = np.where(up, hi, x), np.where(up, e_hi, e)
        last = np.where(up, 1, -1)
        if np.all(np.abs(e) < 1e-8):
            break
    g = np.where(e_lo - e_hi > 1e-15, lo + e_lo * (hi - lo) / np.maximum(e_lo - e_hi, 1e-15), lo)
    f, fs, _, _ = mix(g)
    return g, f, fs


def _steps(model, pricer, dep, lay, b_mb, ctx_dec, tokens, ctx, seqs) -> np.ndarray:
    """Step times (rows,) of decode batches ``b_mb`` beside ``tokens`` prompt tokens in ``seqs`` prompts."""
    batch = Batch.make(decode_seqs=b_mb, decode_ctx=ctx_dec, prefill_tokens=tokens, prefill_ctx=ctx, prefill_seqs=seqs)
    return pool_step_cost(model, pricer, dep, lay, graph_padded(dep, lay, batch)).step_time_s


def chunks_per_prefill_step(model, pricer, dep, lay, b_mb, ctx_dec, new, spread, pb, D, w_ctx):
    """(g, c, fs): chunks a step carrying prefill carries, their tokens, and the share of a decoding
    sequence's steps that carry prefill (None off: the share of steps, as before), each (n,); dp > 1.

    ``b_mb`` (n,) decode sequences per micro-batch, ``ctx_dec`` their mean context (tokens), ``new`` (n, K)
    the tokens each turn prefills, ``spread`` the half-width of their jitter (tokens), ``pb`` one prompt's
    tokens a step, ``D`` decode steps per turn, ``w_ctx`` (n,) the prompt tokens' mean context. Module docstring.
    """
    n = b_mb.shape[0]
    nbar = new.mean(axis=1)
    zeros, ones = np.zeros(n), np.ones(n)
    if not TURN_ARRIVALS_ON:
        chunk = np.minimum(nbar, pb)
        two = [np.concatenate([zeros, x]) for x in (chunk, w_ctx, ones)]
        t = _steps(model, pricer, dep, lay, np.concatenate([b_mb, b_mb]), ctx_dec, *two)
        m = b_mb * nbar / D / chunk * t[n:] / np.maximum(t[:n], 1e-12)
        return np.minimum(poisson_given_one(m), float(lay.dp)), chunk, None
    dp = float(lay.dp)
    kbar = mean_chunks(new, spread, pb).mean(axis=1)
    chunk = nbar / kbar
    grid = np.array([1.0, dp])  # t_p is linear in g to 0.2% (Jalapeño DP8: 137.5, 139.7, 144.0, 153.1 ms at 1, 2, 4, 8)
    G = grid.size
    tokens = np.concatenate([zeros] + [gg * chunk for gg in grid])
    seqs = np.concatenate([zeros] + [np.full(n, gg) for gg in grid])
    t = _steps(model, pricer, dep, lay, np.tile(b_mb, G + 1), ctx_dec, tokens, np.tile(w_ctx, G + 1), seqs)
    t = t.reshape(G + 1, n)
    g, _, fs = step_mix(b_mb * kbar / D, t[0], grid, t[1:].T, b_mb, dp, kbar)
    return g, chunk, fs
