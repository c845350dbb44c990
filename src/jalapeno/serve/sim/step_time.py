"""Memoised, bucketed step times for the simulator (the same step cost as the analytic model).

Every iteration's duration comes from :func:`jalapeno.cost.step.step_cost`. Inputs are rounded
to a geometric grid of ratio r (default 1.03) before the lookup, so a bucketed input is within
a factor sqrt(r) (±1.5%) of the true one. Step time is monotone in each input (decode sequences,
their mean context, prefill tokens, prefill context); it is at most linear in three of them and
at most quadratic in prefill tokens (causal attention), so the worst case, all inputs erring the
same way, is about ±(1 + 1 + 2 + 1)·1.5% ≈ ±7.7%. Rounding is unbiased in log space, so errors
average out over many steps; measured against unbucketed step costs the error stays under 2%.
"""

from __future__ import annotations

import math

from jalapeno.cost.pricer import Pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import MTP
from jalapeno.deploy.layout import Layout
from jalapeno.serve.limits import eager_step_s
from jalapeno.specs.formats import Precision
from jalapeno.specs.model import ModelSpec


class StepTimer:
    """Callable: step time (s) of one instance for a batch, memoised on bucketed inputs.

    ``overlap`` is the pool's overlap mode (``none``/``tbo``), passed to ``step_cost``.
    """

    def __init__(self, model: ModelSpec, pricer: Pricer, layout: Layout, precision: Precision,
                 mtp: MTP | None = None, ratio: float = 1.03, cuda_graph_max_batch: int | None = None,
                 overlap: str = "none") -> None:
        """``cuda_graph_max_batch``: decode-only steps with more sequences per attention rank run
        eagerly (serve/limits.eager_step_s); None = every decode step graphed. ``overlap``: ``none``
        or ``tbo`` (two-batch overlap, cost/overlap.py)."""
        self.model, self.pricer, self.layout, self.precision = model, pricer, layout, precision
        self.mtp, self.overlap = mtp, overlap
        self.graph_max = cuda_graph_max_batch
        self.log_r = math.log(ratio)
        self.cache: dict[tuple, float] = {}
        self.calls = 0

    def _b(self, x: float) -> float:
        if x <= 0:
            return 0.0
        if x <= 16:
            return float(round(x))
        return math.exp(round(math.log(x) / self.log_r) * self.log_r)

    def __call__(self, decode_seqs: float, decode_ctx: float, prefill_tokens: float, prefill_ctx: float,
                 prefill_seqs: float) -> float:
        key = (self._b(decode_seqs), self._b(decode_ctx), self._b(prefill_tokens), self._b(prefill_ctx),
               float(max(round(prefill_seqs), 1 if prefill_tokens > 0 else 0)))
        t = self.cache.get(key)
        if t is None:
            self.calls += 1
            sc = step_cost(self.model, self.pricer, self.layout, self.precision,
                           Batch.make(decode_seqs=key[0], decode_ctx=key[1], prefill_tokens=key[2],
                                      prefill_ctx=key[3], prefill_seqs=key[4]), self.mtp, overlap=self.overlap)
            t = float(sc.step_time_s[0])  # MTP verify + drafting passes included by step_cost
            lay = self.layout
            if (self.graph_max is not None and key[2] == 0
                    and key[0] / (lay.pp * lay.dp) > self.graph_max):  # decode-only, above the ceiling
                t = float(eager_step_s(sc, self.pricer.efficiency, lay.pp)[0])
            self.cache[key] = t
        return t
