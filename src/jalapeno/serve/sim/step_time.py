"""Memoised, bucketed step times for the simulator (the same step cost as the analytic model).

Every iteration's duration comes from :func:`jalapeno.cost.step.step_cost`. Inputs are rounded
to a geometric grid of ratio r (default 1.03) before the lookup, so a bucketed input is within
a factor sqrt(r) (±1.5%) of the true one. Step time is monotone in each input (decode sequences,
their mean context, prefill tokens, prefill context); it is at most linear in three of them and
at most quadratic in prefill tokens (causal attention), so the worst case, all inputs erring the
same way, is about ±(1 + 1 + 2 + 1)·1.5% ≈ ±7.7%. Rounding is unbiased in log space, so errors
average out over many steps; measured against unbucketed step costs the error stays under 2%.

Speed: one ``step_cost`` call costs about a millisecond whatever the number of points it prices
(its time is per-op Python, not arithmetic), so on a cache miss the timer prices the missing
batch together with the caller's guesses at the next steps (``hint``, see
scheduler.Instance.lookahead) in one vectorised call, nearest step first (at most
:data:`MAX_PRICED` points). A guess only fills the cache: a step's
time is always the step cost of its own bucketed inputs. Every call prices at least two points
(a lone point is padded), so a value does not depend on which call priced it: numpy reduces a
one-point column in a different summation order, which moves the last bit (≤ 1 ulp).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from jalapeno.cost.pricer import Pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import MTP
from jalapeno.deploy.layout import Layout
from jalapeno.serve.limits import eager_step_s, floored_steps, padded_to_sizes
from jalapeno.specs.formats import Precision
from jalapeno.specs.model import ModelSpec

#: bits per input in a packed key (codes < 4096: inputs up to e^(4095·ln 1.03), far past any batch)
_BITS = 12

#: codes 17..this are unused: inputs above 16 get round(ln x / ln 1.03) >= 94
_FIRST_LOG_CODE = 93

#: most points one step_cost call prices (about 1.3 ms fixed plus 1.4 us per point on the development VM:
#: 384 points cost under 2 ms, and fewer misses pay for them; benchmarks/bench_simulate.py)
MAX_PRICED = 384

#: a key's packing weights (one _BITS field per input) and the neighbour offsets (decode sequences, decode context)
#: one bucket either side that :meth:`StepTimer._codes` guesses beside a mixed step
_PACK = 1 << np.arange(0, 5 * _BITS, _BITS, dtype=np.int64)
_NEAR = np.array([(db, dc) for db in (-1, 0, 1) for dc in (-1, 0, 1) if db or dc], dtype=np.int64)

#: Interpolate a step's time linearly in its decode sequences between the two neighbouring buckets (round 49,
#: rrwait49; docs/gap_disagg_overprediction.md round 49). Off: the time of the nearest bucket, constant across a
#: bucket, so an instance's decode throughput b/τ climbs within a bucket and drops at each edge. Where an edge
#: falls just below a decode worker's slot cap (row 29: 2 x 3,072 slots; 3,056 decoding prices at 66.40 ms,
#: 3,064-3,072 at 67.69 ms) the full worker makes fewer output tokens a second than one with a few free slots
#: (45,382 against 46,021), which no engine's step cost does: under a round-robin front end the split between
#: the workers then settles where the other's throughput matches, one worker full with ~26 queued, and the
#: slot wait reads 0.18 s of mean TTFT (0.506 s against the analytic 0.327 s). Interpolated, the step time is
#: continuous and rises with b as the step cost does (its batch-independent part keeps b/τ increasing): 0.328 s
#: mean, 0.333 s median. The ±1.5% rounding in b becomes the chord's error over a 3% bucket (the step cost is
#: near-affine in b). Shipped on (round 49): every file of tests/golden, tests/unit and tests/cli that runs the
#: simulator passes with it and the CLI golden set is unchanged; off gives the bucketed times exactly.
BATCH_INTERP_ON = True

#: a step's raw inputs: (decode sequences, their mean context, prefill tokens, prefill context, prefill sequences)
StepInputs = tuple[float, float, float, float, float]


@functools.cache
def _bucket_values(log_r: float) -> np.ndarray:
    """(4096,) the input each 12-bit bucket code stands for (StepTimer.value: the code up to 16, else e^(code·ln r)),
    each from math.exp as value() computes it, so a vectorised lookup gives the same floats bit for bit."""
    return np.array([float(c) if c <= 16 else math.exp(c * log_r) for c in range(1 << _BITS)])


class StepTimer:
    """Callable: step time (s) of one instance for a batch, memoised on bucketed inputs.

    ``overlap`` is the pool's overlap mode (``none``/``tbo``), passed to ``step_cost``.
    ``cache`` holds the times of the inputs steps used, ``ahead`` those priced on a guess and not
    used yet; ``calls`` counts the vectorised ``step_cost`` calls, ``priced`` the points they
    priced, :attr:`evaluations` the distinct inputs used.
    """

    def __init__(
        self,
        model: ModelSpec,
        pricer: Pricer,
        layout: Layout,
        precision: Precision,
        mtp: MTP | None = None,
        ratio: float = 1.03,
        cuda_graph_max_batch: int | None = None,
        overlap: str = "none",
        graph_sizes: tuple[int, ...] | None = None,
        pad_routing: str = "routed",
        prompt_floor: tuple[float, float] | None = None,
    ) -> None:
        """``cuda_graph_max_batch``: decode-only steps with more sequences per attention rank run
        eagerly (serve/limits.eager_step_s); None = every decode step graphed. ``overlap``: ``none``
        or ``tbo`` (two-batch overlap, cost/overlap.py). ``graph_sizes``: the captured decode batches per
        attention rank of a padding engine (Deployment.cuda_graph_batch_sizes): decode-only steps are priced
        at their padded batch (serve/limits.graph_padded); None = at their own batch. ``pad_routing``: how
        the MoE routes those dummies (Deployment.cuda_graph_pad_routing). ``prompt_floor``: the host time of an eager
        prompt-carrying step, (context only, mixed) s (serve/limits.prompt_floor_s): such steps cost max(it, GPU);
        None = prompt steps priced at their GPU time."""
        self.model, self.pricer, self.layout, self.precision = model, pricer, layout, precision
        self.mtp, self.overlap = mtp, overlap
        self.graph_max = cuda_graph_max_batch
        self.graph_sizes = graph_sizes
        self.pad_routing, self.prompt_floor = pad_routing, prompt_floor
        self.log_r = math.log(ratio)
        self.cache: dict[int, float] = {}
        self.ahead: dict[int, float] = {}  # priced, not used by a step yet
        self.calls = 0
        self.priced = 0

    def _code(self, x: float) -> int:
        """Bucket of one input: the value itself up to 16 (0 below 0), else round(ln x / ln r) (> 93)."""
        if x <= 0:
            return 0
        if x <= 16:
            return round(x)
        return round(math.log(x) / self.log_r)

    def value(self, code: int) -> float:
        """The input a bucket code stands for (what ``step_cost`` is priced at)."""
        return float(code) if code <= 16 else math.exp(code * self.log_r)

    def key(
        self, decode_seqs: float, decode_ctx: float, prefill_tokens: float, prefill_ctx: float, prefill_seqs: float
    ) -> int:
        """The cache key of a step: its inputs' bucket codes (:meth:`_code`, inlined and unrolled: this runs
        every step and every lookahead step) packed into one integer, ``_BITS`` each."""
        log, lr = math.log, self.log_r
        k = max(round(prefill_seqs), 1 if prefill_tokens > 0 else 0) << _BITS
        k |= 0 if prefill_ctx <= 0 else round(prefill_ctx) if prefill_ctx <= 16 else round(log(prefill_ctx) / lr)
        k <<= _BITS
        k |= (
            0
            if prefill_tokens <= 0
            else round(prefill_tokens)
            if prefill_tokens <= 16
            else round(log(prefill_tokens) / lr)
        )
        k <<= _BITS
        k |= 0 if decode_ctx <= 0 else round(decode_ctx) if decode_ctx <= 16 else round(log(decode_ctx) / lr)
        k <<= _BITS
        return k | (
            0 if decode_seqs <= 0 else round(decode_seqs) if decode_seqs <= 16 else round(log(decode_seqs) / lr)
        )

    def inputs(self, key: int) -> tuple[float, float, float, float, float]:
        """The inputs a key is priced at (decode sequences, context, prefill tokens, context, sequences)."""
        v, m = self.value, (1 << _BITS) - 1
        return (
            v(key & m),
            v(key >> _BITS & m),
            v(key >> 2 * _BITS & m),
            v(key >> 3 * _BITS & m),
            float(key >> 4 * _BITS),
        )

    def _codes(self, guesses: np.ndarray, limit: int | None = None, skip: int | None = None) -> list[int]:
        """Keys of guesses (M, 5) not cached yet, vectorised, nearest step first: the guesses
        themselves in step order, then, for those with prefill tokens, their neighbours one bucket
        either side in decode sequences and decode context (the play ahead drifts there), so a
        capped batch (``MAX_PRICED``) keeps the steps most likely to come. A key off by one bucket at
        a rounding tie only wastes a guess: cached times are always priced from their own key.
        ``limit``: the first this many keys at most; ``skip``: a key left out (the one the miss prices)."""
        g = np.asarray(guesses, dtype=float).reshape(-1, 5)
        x = g[:, :4]
        with np.errstate(divide="ignore", invalid="ignore"):
            codes = np.where(x <= 0, 0, np.where(x <= 16, np.rint(x), np.rint(np.log(x) / self.log_r)))
            lo = np.floor(np.log(x[:, 0]) / self.log_r)
        if BATCH_INTERP_ON:  # a blended step is priced at the two buckets around its decode sequences (__call__)
            blend = (x[:, 0] > 16) & (lo > _FIRST_LOG_CODE)
            hi = codes.copy()
            codes[blend, 0], hi[blend, 0] = lo[blend], lo[blend] + 1
            codes, g = np.stack([codes, hi], axis=1).reshape(-1, 4), np.repeat(g, 2, axis=0)  # step order kept
        seqs = np.maximum(np.rint(g[:, 4]), (g[:, 2] > 0).astype(float))
        k = np.column_stack([codes, seqs]).astype(np.int64)
        k = k[(k[:, :4] < 1 << _BITS).all(axis=1) & (k[:, 4] < 1 << (62 - 4 * _BITS))]
        packed = k @ _PACK
        mixed = k[:, 2] > 0
        if mixed.any():  # packing is linear: a neighbour's key is its guess's key plus the packed offset
            d, near = k[:, :2], k[mixed, :2][None] + _NEAR[:, None]  # near: (8, mixed, 2), one offset after another
            own = ((d >= 0) & ((d <= 16) | (d > _FIRST_LOG_CODE))).all(axis=1)
            ok = ((near >= 0) & ((near <= 16) | (near > _FIRST_LOG_CODE))).all(axis=2)
            packed = np.concatenate([packed[own], (packed[mixed][None] + (_NEAR @ _PACK[:2])[:, None])[ok]])
        cache, ahead = self.cache, self.ahead
        out: list[int] = []
        for t in dict.fromkeys(packed.tolist()):  # each key once, at its first (nearest) guess
            if t not in cache and t not in ahead and t != skip:
                out.append(t)
                if len(out) == limit:
                    break
        return out

    def __call__(
        self,
        decode_seqs: float,
        decode_ctx: float,
        prefill_tokens: float,
        prefill_ctx: float,
        prefill_seqs: float,
        hint: Callable[[], np.ndarray] | None = None,
        interp: bool = True,
    ) -> float:
        """Step time (s) of the batch; on a miss also prices the inputs ``hint()`` (M, 5) guesses
        come next (at most ``MAX_PRICED`` points per call). With :data:`BATCH_INTERP_ON`, decode sequences
        past the first log bucket are priced at the two neighbouring buckets' values and blended linearly."""
        if interp and BATCH_INTERP_ON and decode_seqs > 16:
            lr = self.log_r
            lo = math.floor(math.log(decode_seqs) / lr)
            b_lo = math.exp(lo * lr)
            if b_lo > 16:  # both neighbours log buckets (up to 16 sequences are exact)
                # the keys of (b_lo, ...) and (b_hi, ...): codes lo and lo + 1 in the low bits, the other inputs'
                # codes computed once (round(ln(e^(c·ln r)) / ln r) = c for every 12-bit code c: tests/unit/test_sim_step_time.py)
                b_hi = math.exp((lo + 1) * lr)
                rest = self.key(0.0, decode_ctx, prefill_tokens, prefill_ctx, prefill_seqs)
                t_lo = self._lookup(rest | lo, hint)
                t_hi = self._lookup(rest | (lo + 1), hint)
                return t_lo + (decode_seqs - b_lo) / (b_hi - b_lo) * (t_hi - t_lo)
        return self._lookup(self.key(decode_seqs, decode_ctx, prefill_tokens, prefill_ctx, prefill_seqs), hint)

    def _lookup(self, key: int, hint: Callable[[], np.ndarray] | None) -> float:
        """The time (s) of one key: cached, priced ahead, or priced now with ``hint()``'s guesses."""
        t = self.cache.get(key)
        if t is None:
            t = self.ahead.pop(key, None)
            if t is None:
                keys = [key]
                if hint is not None:
                    keys += self._codes(hint(), MAX_PRICED - 1, key)
                self._price(keys)
                t = self.ahead.pop(key)
            self.cache[key] = t
        return t

    @property
    def evaluations(self) -> int:
        """Distinct step inputs the simulation used (one step-cost evaluation each, however priced)."""
        return len(self.cache)

    def _price(self, keys: list[int]) -> None:
        """Price ``keys`` in one ``step_cost`` call (at least two points) and cache their times."""
        self.calls += 1
        self.priced += len(keys)
        k = np.array(keys if len(keys) > 1 else keys * 2, dtype=np.int64)
        v, m = _bucket_values(self.log_r), (1 << _BITS) - 1  # inputs(k) for every key at once
        cols = np.column_stack(
            [v[k & m], v[k >> _BITS & m], v[k >> 2 * _BITS & m], v[k >> 3 * _BITS & m], (k >> 4 * _BITS).astype(float)]
        ).T
        sc = step_cost(
            self.model,
            self.pricer,
            self.layout,
            self.precision,
            padded_to_sizes(
                self.graph_sizes,
                self.layout.dp,
                Batch.make(
                    decode_seqs=cols[0],
                    decode_ctx=cols[1],
                    prefill_tokens=cols[2],
                    prefill_ctx=cols[3],
                    # a key's bucketed tokens may fall below its sequences (5 one-token prompts: a 4.9-token
                    # bucket), or a caller may give sequences with no tokens: as many sequences as tokens at most
                    # (one at least where there are tokens), Batch.make's rule
                    prefill_seqs=np.where(cols[2] > 0, np.minimum(cols[4], np.maximum(cols[2], 1.0)), 0.0),
                ),
                self.pad_routing,
            ),
            self.mtp,
            overlap=self.overlap,
        )
        t = sc.step_time_s  # MTP verify + drafting passes included by step_cost
        lay = self.layout
        if self.graph_max is not None:  # decode-only steps above the ceiling run eagerly
            eager = (cols[2] == 0) & (cols[0] / (lay.pp * lay.dp) > self.graph_max)
            if eager.any():
                t = np.where(eager, eager_step_s(sc, self.pricer.efficiency, lay), t)
        t = floored_steps(t, cols[0], cols[2], self.prompt_floor)  # eager prompt steps: max(host, GPU)
        self.ahead.update(zip(keys, t.tolist()))
