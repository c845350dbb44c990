"""Operating points of one deployment as columns: what every serving model returns.

serve/analytic.py (aggregated), serve/disagg.py (disaggregated), the open loop, the idle start and the simulator's
summaries build :class:`ServingPoints` through one constructor (:meth:`ServingPoints.assemble`), from a serving
model's primitives: concurrency, decode batch, request rate, TTFT without queueing by length quantile
(:data:`QUANTILES`), TPOT, the decode step, the bound and the queueing delay. E2E = TTFT + D·τ
(:func:`ttft_e2e`); :func:`requeue` adds a queueing delay past the instance's cap. Every array has shape (N,).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from jalapeno.specs.workload import Workload


QUANTILES = (0.5, 0.9, 0.99)


def ttft_e2e(ttft_mean, queue_s, steps: float, tau) -> tuple[np.ndarray, np.ndarray]:
    """(TTFT, E2E) (N,) s of points with TTFT ``ttft_mean`` before the queue ``queue_s`` (N,) s: TTFT + Q and
    TTFT + Q + D·τ, D = ``steps`` decode steps of ``tau`` (N,) s (:meth:`ServingPoints.assemble`'s)."""
    ttft = ttft_mean + queue_s
    return ttft, ttft + steps * tau


@dataclass(frozen=True, slots=True)
class ServingPoints:
    """Operating points of one deployment; every array has shape (N,).

    Units: seconds, tokens/s, requests/s. ``throughput_per_chip`` counts input + output tokens
    (InferenceX ``tput_per_gpu``); ``interactivity`` = 1/TPOT (tok/s/user).
    """

    concurrency: np.ndarray
    decode_batch: np.ndarray
    request_rate_per_s: np.ndarray
    ttft_s: np.ndarray
    tpot_s: np.ndarray
    e2e_s: np.ndarray
    ttft_p50_s: np.ndarray
    ttft_p90_s: np.ndarray
    ttft_p99_s: np.ndarray
    e2e_p50_s: np.ndarray
    e2e_p90_s: np.ndarray
    e2e_p99_s: np.ndarray
    queue_s: np.ndarray
    throughput_per_chip: np.ndarray
    output_throughput_per_chip: np.ndarray
    interactivity: np.ndarray
    step_time_s: np.ndarray
    kv_transfer_s: np.ndarray
    chips: np.ndarray
    bound: np.ndarray
    bound_margin: np.ndarray
    bound_level: np.ndarray
    limit: np.ndarray
    feasible: np.ndarray
    reason: np.ndarray
    #: a disaggregated point's prefill pool: the bound of its full token-budget step (§4's values;
    #: ``bound`` is the decode step's) and its chips (workers x chips per worker); ``""`` and 0 when aggregated
    prefill_bound: np.ndarray
    prefill_chips: np.ndarray

    def __len__(self) -> int:
        return self.concurrency.shape[0]

    @classmethod
    def assemble(
        cls,
        *,
        concurrency,
        decode_batch,
        request_rate_per_s,
        ttft_by_quantile: dict,
        tpot_s,
        decode_steps_per_request: float,
        step_time_s,
        workload: Workload,
        chips,
        bound,
        bound_margin,
        limit,
        feasible,
        reason,
        queue_s,
        kv_transfer_s,
        bound_level=None,
        prefill_bound=None,
        prefill_chips=None,
    ) -> ServingPoints:
        """Build the points from a serving model's primitives (the one constructor serving models use).

        Every array argument has shape (N,) (or broadcasts to it where noted); units as the fields.

        Args:
            concurrency: requests in the system (C).
            decode_batch: decoding sequences per (decode) instance (B).
            request_rate_per_s: completed requests/s of the ``chips`` counted (λ).
            ttft_by_quantile: length quantile → TTFT without queueing, s, (N,) each: key ``None``
                the mean, and one key per :data:`QUANTILES` (0.5, 0.9, 0.99).
            tpot_s: time per output token, s (τ/a).
            decode_steps_per_request: decode steps of a mean request, D = (mean OSL − 1)/a (scalar).
            step_time_s: mean decode-step latency τ, s.
            workload: the workload (mean lengths and length quantiles).
            chips: chips serving each point: a scalar or (N,).
            bound, bound_margin, limit, feasible, reason: as the fields of the same names.
            queue_s: admission queueing delay, s, added to every TTFT and E2E.
            kv_transfer_s: prefill → decode KV hand-off, s (0 when aggregated).
            bound_level: link level of a link bound, (N,) object; None = ``""`` everywhere.
            prefill_bound, prefill_chips: a disaggregated point's prefill-pool bound (N,) object and
                chips (N,); None = ``""`` and 0 everywhere (aggregated).

        E2E = TTFT + D·τ; E2E quantiles scale the decode part by (OSL_q − 1)/(mean OSL − 1);
        throughput per chip = λ·(mean ISL + mean OSL)/chips; interactivity = 1/TPOT.
        """
        wl, steps, tau, queue = workload, decode_steps_per_request, step_time_s, queue_s
        ttft_q, lam = ttft_by_quantile, request_rate_per_s
        ttft, e2e = ttft_e2e(ttft_q[None], queue, steps, tau)
        q = {}
        for p in QUANTILES:
            osl_p = wl.osl_quantile(p)
            q[f"e2e_p{int(p * 100)}_s"] = ttft_q[p] + queue + (osl_p - 1) / (wl.mean_osl - 1) * steps * tau
            q[f"ttft_p{int(p * 100)}_s"] = ttft_q[p] + queue
        tput = lam * (wl.mean_isl + wl.mean_osl) / chips
        n = np.shape(concurrency)[0]
        return cls(
            concurrency=concurrency,
            decode_batch=decode_batch,
            request_rate_per_s=lam,
            ttft_s=ttft,
            tpot_s=tpot_s,
            e2e_s=e2e,
            queue_s=queue,
            throughput_per_chip=tput,
            output_throughput_per_chip=lam * wl.mean_osl / chips,
            interactivity=1.0 / tpot_s,
            step_time_s=tau,
            kv_transfer_s=kv_transfer_s,
            chips=np.full(n, float(chips))
            if type(chips) in (int, float)
            else np.broadcast_to(np.asarray(chips, dtype=float), (n,)).copy(),
            bound=bound,
            bound_margin=bound_margin,
            bound_level=np.full(n, "", dtype=object) if bound_level is None else bound_level,
            limit=limit,
            feasible=feasible,
            reason=reason,
            prefill_bound=np.full(n, "", dtype=object) if prefill_bound is None else prefill_bound,
            prefill_chips=np.zeros(n) if prefill_chips is None else prefill_chips,
            **q,
        )

    def take(self, idx) -> ServingPoints:
        """A subset of points (index array or mask)."""
        return ServingPoints(**{f.name: getattr(self, f.name)[idx] for f in fields(self)})

    def record(self, i: int) -> dict:
        """Point ``i`` as a plain dict."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)[i]
            out[f.name] = v.item() if hasattr(v, "item") else v
        return out


def requeue(pts: ServingPoints, c_req: np.ndarray, wait: np.ndarray, cap_name: str) -> ServingPoints:
    """Add a queueing delay ``wait`` (N,) to every latency of ``pts`` and set the concurrency."""
    d = {f.name: getattr(pts, f.name) for f in fields(pts)}
    for k in ("ttft_s", "e2e_s", "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "e2e_p50_s", "e2e_p90_s", "e2e_p99_s"):
        d[k] = d[k] + wait
    d["queue_s"] = d["queue_s"] + wait
    d["concurrency"] = np.where(wait > 0, c_req, d["concurrency"])
    d["limit"] = np.where(wait > 0, f"{cap_name} (queueing)", d["limit"])
    return ServingPoints(**d)
