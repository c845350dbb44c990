"""Fixed-concurrency points of several aggregated deployments, solved in lockstep.

:func:`solve_concurrencies` runs serve/analytic.solve_concurrency's fixed point, B ← C·D·τ/E2E (Little's
law) from B = C, for every deployment at once (a fixed-concurrency sweep passes every deployment of every
layout): each of its nine passes plans every deployment's step batch (analytic.agg_plan), prices them all
(cost/priced.price_layouts: one build per layout, precision and query length for its deployments' batches —
a layout's serial and two-batch-overlap variants —, one for the layouts whose op tables have the same rows
(cost/layout_columns.py), and the collectives of every layout of the pass together,
one call per kind and group), then finishes each deployment's points (analytic.agg_points), which find their
tables priced. A step prices every point on its own, so every deployment's numbers are those of a solve of
its own; the fixed-concurrency sweep (``compare -c``, ``frontier -c``) pays one build per layout and pass and
a few dozen collective calls per pass where it paid a build per deployment and a call per collective row.
A pass before the last reads each deployment's TTFT and E2E alone (its next batch), so it finishes them
without the bounds, attribution and memory fit (analytic.agg_head / agg_tail ``times_only``: the same values);
a deployment's points are finished in full once, at the pass that fixes it (its tables still held) or the
last (round 45: ``compare -c 64`` finished 3,899 deployment-passes in full, now 529).
Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from jalapeno.cost.priced import price_layouts
from jalapeno.cost.pricer import Pricer
from jalapeno.deploy.deployment import Deployment, pool_overlap
from jalapeno.deploy.mtp import query_len
from jalapeno.deploy.layout import for_model
from jalapeno.deploy.sharding import has_ep_all_to_all
from jalapeno.serve import batch_wait
from jalapeno.serve.admission_waits import running_slots
from jalapeno.serve.analytic import (
    agg_head,
    agg_plan,
    agg_points,
    agg_tail,
)
from jalapeno.serve.agg_batch_cap import aggregated_batch_cap
from jalapeno.serve.serving_points import ServingPoints, requeue
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload


def solve_concurrencies(
    model: ModelSpec, pricer: Pricer, deps: list[Deployment], wl: Workload, concurrency, iterations: int = 8
) -> list[ServingPoints]:
    """serve/analytic.solve_concurrency of every deployment in ``deps`` at the concurrencies (N,), in order.

    A deployment whose batches a pass returns bitwise unchanged has reached its fixed point: the
    passes left would price the same batches again, so its points are kept as they are (the same numbers).

    Beyond an instance's cap the excess requests queue (throughput flat, TTFT and E2E grow by the
    queueing delay).

    With serve/batch_wait.BUNCH_CONCURRENCY_ON each pass plans its batches B at the closed loop's concurrency
    C = B·E2E/(E2E − TTFT) of the pass before (λ·E2E, its requests in the instance; the first pass: B), the users
    of its bunched prompts (analytic._chunk_step_load); a deployment is fixed once its batches and those come back
    bitwise unchanged. Off: no concurrency is passed (the decode batch, as before round 53).
    """
    c_req = np.asarray(concurrency, dtype=float)
    caps = [aggregated_batch_cap(model, pricer, d, wl) for d in deps]
    fulls = []
    for d in deps:
        slots = running_slots(d, d.decode.layout)
        fulls.append(None if slots is None or d.adp_balance_timeout_iters is None else c_req >= slots - 1e-9)
    bs = [np.minimum(c_req, max(cap, 1e-9)) for cap, _ in caps]
    pts: list = [None] * len(deps)
    us: list = [None] * len(deps)  # C at each batch (BUNCH_CONCURRENCY_ON), from the pass before
    fixed = [False] * len(deps)  # the batches came back bitwise unchanged: every later pass gives the same points
    for it in range(iterations + 1):
        todo = [i for i, f in enumerate(fixed) if not f]
        last = it == iterations
        finish = _at_unique_batches(
            model,
            pricer,
            [deps[i] for i in todo],
            wl,
            [bs[i] for i in todo],
            [fulls[i] for i in todo],
            [caps[i] for i in todo],
            not last,
            [us[i] for i in todo],
        )
        for k, (i, p) in enumerate(zip(todo, finish)):
            if last:
                pts[i] = p
                continue
            ttft, e2e = p  # a pass before the last: the times alone, each deployment's points where it is fixed
            ratio = np.where(e2e > 0, (e2e - ttft) / e2e, 1.0)
            b = np.minimum(np.maximum(c_req * ratio, 1e-12), caps[i][0])
            u = b / np.maximum(ratio, 1e-12) if batch_wait.BUNCH_CONCURRENCY_ON else None
            same_u = u is None or (us[i] is not None and u.tobytes() == us[i].tobytes())
            fixed[i], bs[i], us[i] = b.tobytes() == bs[i].tobytes() and same_u, b, u
            if fixed[i]:  # its points at this pass's batches, whose tables the pass still holds
                pts[i] = finish.points(k)
    price_layouts(model, pricer, [])  # the pass is over: its tables are let go
    out = []
    for p, (_, cap_name) in zip(pts, caps):
        excess = np.maximum(c_req - p.concurrency, 0.0)
        queued = excess > 1e-6 * np.maximum(c_req, 1)
        wait = np.where(queued & (p.request_rate_per_s > 0), excess / np.maximum(p.request_rate_per_s, 1e-30), 0.0)
        out.append(requeue(p, c_req, wait, cap_name))
    return out


class _Finish:
    """The points of a pass's deployments (:func:`_at_unique_batches`): iterated in order, each deployment's
    points (:class:`ServingPoints`) or, ``times_only``, its (``ttft_s``, ``e2e_s``) (N,) s alone
    (analytic.agg_head / agg_tail ``times_only``: the same values); :meth:`points` gives deployment k's points
    in full, read while the pass's tables are held (before the next pass prices its own)."""

    def __init__(self, model, pricer, deps, wl, plans, fulls, invs, times_only: bool) -> None:
        self.args, self.times_only = (model, pricer, deps, wl, plans, fulls, invs), times_only

    def __iter__(self):
        model, pricer, deps, wl, plans, fulls, invs = self.args
        for k, (d, plan, full, inv) in enumerate(zip(deps, plans, fulls, invs)):
            if not self.times_only:
                yield self.points(k)
                continue
            head, long_s = agg_head(model, pricer, d, wl, plan, times_only=True)
            ttft, e2e = agg_tail(pricer, d, wl, plan, head, long_s, full, times_only=True)
            yield (ttft, e2e) if inv is None else (ttft[inv], e2e[inv])

    def points(self, k: int) -> ServingPoints:
        """Deployment ``k``'s points in full (analytic.agg_points), at every one of its batches."""
        model, pricer, deps, wl, plans, fulls, invs = self.args
        pts, inv = agg_points(model, pricer, deps[k], wl, plans[k], fulls[k]), invs[k]
        return (
            pts
            if inv is None
            else ServingPoints(
                **{f.name: (v[inv] if np.ndim(v) else v) for f in fields(pts) for v in (getattr(pts, f.name),)}
            )
        )


def _at_unique_batches(
    model: ModelSpec,
    pricer: Pricer,
    deps: list[Deployment],
    wl: Workload,
    bs: list,
    fulls: list,
    caps: list,
    times_only: bool = False,
    users: list | None = None,
) -> _Finish:
    """analytic.aggregated_by_batch of each deployment at its batches ``bs[i]`` (N,), each distinct batch
    priced once: every concurrency past the instance's cap clips to the same batch, so a long explicit
    list (``-c 1..20000``) prices far fewer rows. Exact: a point depends on its batch only. Where the
    balancing regime ``fulls[i]`` differs by point, each point is priced as it is. The batches are planned and
    priced here; the points are finished as the answer (:class:`_Finish`) is read, ``times_only`` their
    (TTFT, E2E) alone. ``users[i]``: the concurrency (N,) at each of ``bs[i]`` (analytic.agg_plan's), or None;
    where given, the distinct (batch, concurrency) pairs are priced once."""
    plans, invs = [], []
    for d, b, full, cap, c in zip(deps, bs, fulls, caps, users or [None] * len(deps)):
        if full is not None or b.size < 2 or bool(np.all(b[1:] > b[:-1])):  # already distinct and sorted:
            u, inv = b, None  # np.unique would return it
        elif c is not None:
            rows, inv = np.unique(np.stack([b, c], axis=1), axis=0, return_inverse=True)
            u, c, inv = rows[:, 0], rows[:, 1], inv.reshape(-1)
            inv = None if u.size == b.size and np.array_equal(inv, np.arange(b.size)) else inv
        else:
            u, inv = np.unique(b, return_inverse=True)
            inv = None if u.size == b.size and np.array_equal(u, b) else inv
        plans.append(agg_plan(model, pricer, d, wl, u, cap, users=c))
        invs.append(inv)
    _price_shared(model, pricer, deps, [p[-1] for p in plans])
    return _Finish(model, pricer, deps, wl, plans, fulls, invs, times_only)


def _price_shared(model: ModelSpec, pricer: Pricer, deps: list[Deployment], batches: list) -> None:
    """Price the step batches of the pass (step_cost's distinct points of each, as it will price them):
    one build for the deployments that share a layout, precision and query length, the collectives of every
    layout together (cost/priced.price_layouts)."""
    groups: dict = {}
    for d, batch in zip(deps, batches):
        groups.setdefault((d.decode.layout, id(d.precision), query_len(d.mtp)), []).append((d, batch))
    jobs = []
    for (lay, _, qlen), members in groups.items():
        lay = for_model(lay, model)
        ep = has_ep_all_to_all(model, lay)  # the overlap halves only for the deployments that read them (step_cost)
        jobs.append(
            (
                lay,
                members[0][0].precision,
                [b.distinct()[0] for _, b in members],
                qlen,
                ep,
                tuple(ep and pool_overlap(d.overlap, model, lay) == "tbo" for d, _ in members),
            )
        )
    price_layouts(model, pricer, jobs)
