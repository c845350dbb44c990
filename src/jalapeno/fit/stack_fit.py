"""Fit each software stack's fixed costs on a declared split of end-to-end points (docs/stacks.md).

Data: the shipped InferenceX points and aiconfigurator's ``silicon_sample.csv`` rows (when the
``aiconfigurator-core`` package is installed), each priced with its framework's profile
(specs/stacks.stack_for_framework), every candidate pinned at the engine release that ran the point
(fit/validate.point_release: a stated release, as aiconfigurator's ``tensorrt-llm/release`` rows give,
else the launch recipe's), so its version rules hold in the fit as in validation. Only ``matched``
points enter (the deployment is known).

Declared split (fit/stack_split.py, :func:`~jalapeno.fit.stack_split.split`): the points of one
(stack, source, system, model, ISL, OSL, mode) group sorted by concurrency alternate fit / held out;
nothing of the held-out half enters a fit.

What is fitted, per profile (:data:`PLAN`), in this order:
1. step costs — one scale on ``kernel_launch_s`` and ``step_overhead_s`` together (their split
   kept: :data:`RAY_FIELDS`; ROCm profiles one field alone: SGLang-ROCm its ``kernel_launch_s``,
   the per-kernel cost of its unfused kernels and HIP-graph gaps above the AMD set's floor (the
   chip's fastest tuned kernel, fit/amd.py), ATOM its ``step_overhead_s``); TRT-LLM and vLLM jointly with the per-TP-rank step cost ``tp_rank_step_s`` (identified
   by the fit points that run one model and workload at several TP sizes: aiconfigurator's
   Llama-3.3-70B and MoE rows at TP1-TP8; specs/efficiency.py) — on TPOT (throughput per chip where a
   point has no TPOT), minimising the mean |log(predicted / measured)| over the fit half;
2. front end (with ``front_end=True``, the default of :func:`fit_all`; :data:`FRONT_END`) —
   ``request_overhead_s`` and ``prompt_overhead_s_per_token`` — on TTFT of fit points at
   concurrency <= :data:`FRONTEND_MAX_CONCURRENCY` (little queueing), same loss, once per
   benchmark client: the benchmark client is part of the front end (it timestamps the request and
   parses the stream), so InferenceX's points (:data:`FRONTEND_SOURCES`) give the profile's own
   front end and every other client's points (:data:`CLIENT_SOURCES`, ``MeasuredPoint.timed_by``) the
   profile's ``clients`` entry for that client (specs/stacks.Stack.for_client), each fitted on its own
   points only;
3. MTP acceptance (``dynamo-trtllm`` and ``trtllm`` on DeepSeek-R1; TRT-LLM's MTP points are
   aiconfigurator's rows of InferenceX MTP sweeps, fit/aic_sweeps.py) — one per-token acceptance shared by every
   draft length (too few single-draft fit points to fit it alone), on the TPOT of the MTP fit points;
4. a client's burst shares (with the front end, per :data:`CLIENT_SOURCES` client;
   ``prefill_burst_fraction``, ``agg_burst_fraction``, specs/efficiency.py) — the share of a
   disaggregated / aggregated run's counted requests that meet the idle-start prefill burst — each
   on the TTFT of that source's fit points of its mode at every concurrency, over :data:`BURST_GRID`,
   same loss; the client entry keeps them (InferenceX's own client keeps one wave in R = 10).
Steps 2 and 4 leave out the TTFT of the aiconfigurator rows that break a data-quality rule
(fit/aic_quality.py), and every reported TTFT error does too; asked (``warm_clients_only``, off: a what-if, not the
shipped fit — docs/gap_aic_ttft.md, round 25 coldfit25: it worsens the aiconfigurator TTFT), they also leave out the
rows timed by a client without a warm-up (fit/client_warmup.py: InferenceX exports measured before its client's
warm-up, 2026-01-21), which stay in every reported error; steps 1 and 3 leave out the TPOT of those
that break rule D (a decode slower than a no-faster chip's sibling) or rule E (a TPOT below its decode step's
bytes over the chips' bandwidth), and every reported TPOT error does too.
Steps 2 and 4 take the bagged argmin (fit/bagging.py, round 29): the median of the argmins over 51 family-bootstrap
resamples of the fit rows (seed 0), fitted where at least half of the replicates fit it; the replicates' 5-95% range of
each value is written into the report (``bootstrap``). The plain argmin jumped between two optima of one flat valley
on small data changes (docs/stacks.md "Stability of the fit").
Steps 1-2 use a linear surrogate: each point's prediction at zero and at one probe value per
parameter gives its slope (TPOT and 1/throughput are linear in a per-kernel or per-step constant at
a fixed batch; TTFT in the front-end terms), then a grid over the bounds (:data:`BOUNDS`). Step 3
evaluates the model on a grid. Every reported error comes from full predictions with the fitted
values, not from the surrogate. A parameter group with fewer than :data:`MIN_POINTS` fit points,
or whose best value lies on its upper search bound, is not fitted (the profile keeps its stated
value; the report says why).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from types import MappingProxyType

import numpy as np
import pandas as pd

from jalapeno.fit.aic_quality import aic_decode_flags, aic_ttft_flags
from jalapeno.fit.bagging import bagged, family_weights, spread_of, weighted_losses
from jalapeno.fit.client_warmup import cold_client_ids
from jalapeno.fit.median_front import MEDIAN_FRONT, MEDIAN_FRONT_ON, median_front_end
from jalapeno.fit.stack_front_ends import (  # noqa: F401  (the front ends' fields and twins, re-exported)
    CLIENT_SOURCES,
    FRONT_END,
    FRONTEND_SOURCES,
    SAME_CLIENT,
    SAME_SERVER,
    same_client_front_end,
    server_front_end,
)
from jalapeno.fit.stack_split import (  # noqa: F401  (the points and their declared split, re-exported)
    HELD_OUT_MODELS,
    SPLIT_TEXT,
    errors,
    fit_pool,
    load_points,
    split,
)
from jalapeno.fit.validate import MeasuredPoint, point_release, predict_points
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY
from jalapeno.specs.stacks import Stack, build_stacks, load_stacks, stack_for_framework

#: Parameter groups fitted per profile (profiles not listed keep their stated values).
PLAN: dict[str, tuple[tuple[str, ...], ...]] = {
    "sglang": (("fixed_scale",),),  # its points do not identify a per-rank cost (the joint fit gives 0)
    "trtllm": (("fixed_scale", "tp_rank_step_s"), ("mtp",)),
    "vllm": (("fixed_scale", "tp_rank_step_s"),),
    "dynamo-trtllm": (("mtp",),),
    "sglang-rocm": (("kernel_launch_s",),),
    "atom-rocm": (("step_overhead_s",),),
}
#: Fields a ``fixed_scale`` group scales together from the profile's values (else the defaults'):
#: the per-kernel and per-step costs trade off almost exactly within one model and layout, so
#: their ratio stays the documented default's (specs/efficiency.py) and one scale is fitted.
RAY_FIELDS = ("kernel_launch_s", "step_overhead_s")
#: Search bounds (s; s per prompt token): wide enough to contain every engine's plausible value.
BOUNDS = {
    "fixed_scale": (0.0, 4.0),
    "kernel_launch_s": (0.0, 20e-6),
    "step_overhead_s": (0.0, 5e-3),
    "tp_rank_step_s": (0.0, 1e-3),
    "request_overhead_s": (0.0, 1.0),
    "prompt_overhead_s_per_token": (0.0, 50e-6),
}
#: Probe value of each parameter for the surrogate's slope.
PROBE = {
    "fixed_scale": 1.0,
    "kernel_launch_s": 10e-6,
    "step_overhead_s": 2e-3,
    "tp_rank_step_s": 2e-4,
    "request_overhead_s": 0.5,
    "prompt_overhead_s_per_token": 2e-5,
}
#: TTFT points used for the front end: at most this concurrency (the closed-loop prefill queue, which
#: the front end must not absorb, grows from concurrency 8 on the InferenceX SGLang rows).
FRONTEND_MAX_CONCURRENCY = 4
#: Grid of a client's prefill burst share (step 4): from one wave in R = 10 (the idle start alone)
#: to every counted request meeting a burst.
BURST_GRID = np.round(np.arange(0.10, 1.0001, 0.05), 3)
#: Fewest fit points for a parameter group to be fitted.
MIN_POINTS = 4
#: Acceptance grid for the MTP fit.
ACCEPTANCE_GRID = np.round(np.arange(0.30, 0.951, 0.025), 3)
BAG_TEXT = (
    "front end and burst shares bagged: median of the argmins over 51 family-bootstrap replicates of the "
    "fit rows (seed 0; fit/bagging.py); each fitted value's replicate 5-95% range"
)


def _predict(points, stack: Stack) -> pd.DataFrame:
    """Predictions with the candidate ``stack`` pinned at each point's engine release (fit/validate.point_release:
    its version rules hold as they do in validation), its source's client front end and the all-reduce + RMSNorm
    fusion where its launch script sets it (``MeasuredPoint.allreduce_rms_fusion``, as fit/validate.point_stack)."""
    releases = {p.id: point_release(p) for p in points}

    def stack_of(p):  # as fit/validate.point_stack: the fusion switched on where the point declares it, never off
        s = stack.at_version(releases[p.id]).for_client(p.timed_by)
        return s.with_allreduce_rms_fusion(True) if p.allreduce_rms_fusion else s

    return predict_points(points, stack_of=stack_of)


def _target(rows: pd.DataFrame, metrics: tuple[str, ...]) -> pd.DataFrame:
    """One row per point: the first of ``metrics`` it has a measurement and prediction of."""
    rows = rows[rows.metric.isin(metrics)].dropna(subset=["predicted"])
    rank = rows.metric.map({m: i for i, m in enumerate(metrics)})
    return rows.assign(rank=rank).sort_values(["id", "rank"]).drop_duplicates("id").set_index("id")


def family(p: MeasuredPoint) -> tuple:
    """The row family a bagged fit resamples (fit/bagging.py): one (system, model, ISL, OSL, mode) sweep."""
    return (p.system, p.model, p.isl, p.osl, p.mode)


def _linear_fit(
    points,
    stack: Stack,
    params: tuple[str, ...],
    metrics: tuple[str, ...],
    inverse: Callable[[str], bool],
    bag: bool = False,
    spread: dict | None = None,
) -> dict[str, float] | str | None:
    """Surrogate grid fit of ``params`` (module docstring, steps 1-2); None with too few points, a
    reason when the best value lies on the upper search bound (rejected: the data does not
    identify it — it absorbs an error of something else). ``bag``: the bagged argmin (fit/bagging.py); its
    replicates' 5-95% range per parameter goes into ``spread`` when given."""
    if len(points) < MIN_POINTS:
        return None
    # "fixed_scale": one scale on the per-kernel and per-step costs together, their split kept
    unit = {
        f: getattr(stack, f) if getattr(stack, f) is not None else getattr(DEFAULT_EFFICIENCY, f) for f in RAY_FIELDS
    }

    def at(p, v):
        return {f: v * unit[f] for f in RAY_FIELDS} if p == "fixed_scale" else {p: v}

    zero = replace(stack, **{k: v for p in params for k, v in at(p, 0.0).items()}, fusion=1.0)
    base = _target(_predict(points, zero), metrics)
    if len(base) < MIN_POINTS:
        return None

    def value(df):  # quantities linear in the parameters: times, and 1/throughput
        v = df.predicted.to_numpy()
        return np.where([inverse(m) for m in df.metric], 1.0 / v, v)

    y0 = value(base)
    slopes = []
    for p in params:
        probe = _target(_predict(points, replace(zero, **at(p, PROBE[p]))), metrics).reindex(base.index)
        slopes.append((value(probe) - y0) / PROBE[p])
    meas = base.measured.to_numpy()
    inv = np.array([inverse(m) for m in base.metric])
    grids = [np.linspace(*BOUNDS[p], 81) for p in params]
    mesh = np.meshgrid(*grids, indexing="ij")
    flat = [m.ravel() for m in mesh]
    y = y0[None, :] + sum(f[:, None] * s[None, :] for f, s in zip(flat, slopes))
    pred = np.where(inv[None, :], 1.0 / np.maximum(y, 1e-30), y)
    per_row = np.abs(np.log(np.maximum(pred, 1e-30) / meas[None, :]))
    if bag:  # steps 2 (front end): the median of the family-bootstrap argmins (fit/bagging.py)
        fam = {p.id: family(p) for p in points}
        best_r = np.argmin(weighted_losses(per_row, family_weights([fam[i] for i in base.index])), axis=1)
        inside = np.all([f[best_r] < BOUNDS[p][1] for p, f in zip(params, flat)], axis=0)
        vals = [bagged(f[best_r], inside) for f in flat]
        if spread is not None:
            spread.update({p: spread_of(f[best_r], inside) for p, f in zip(params, flat)})
        if any(v is None for v in vals):
            return "at its search bound (not identified by the data) in most bootstrap replicates"
        return {k: float(v) for p, x in zip(params, vals) for k, v in at(p, x).items()}
    best = int(np.argmin(per_row.mean(axis=1)))
    if any(f[best] >= BOUNDS[p][1] for p, f in zip(params, flat)):
        return "at its search bound (not identified by the data)"
    out = {}
    for p, f in zip(params, flat):
        out.update({k: float(v) for k, v in at(p, f[best]).items()})
    return out


def _mtp_fit(points, stack: Stack, model: str = "deepseek-r1") -> dict[str, float]:
    """Single-draft and chain acceptance on the TPOT of MTP fit points (module docstring, step 3)."""
    pts = [p for p in points if p.model == model and p.deployment.mtp and p.measured.get("tpot_s")]
    if len(pts) < MIN_POINTS:
        return {}
    losses = []
    for a in ACCEPTANCE_GRID:
        st = replace(stack, mtp_acceptance={**stack.mtp_acceptance, model: {"single": float(a), "chain": float(a)}})
        t = _target(_predict(pts, st), ("tpot_s",))
        losses.append(np.mean(np.abs(np.log(t.predicted / t.measured))) if len(t) else np.inf)
    a = float(ACCEPTANCE_GRID[int(np.argmin(losses))])
    return {"single": a, "chain": a}


def _with_client(stack: Stack, src: str, **vals: float) -> Stack:
    entry = {**stack.clients.get(src, {}), **vals}
    return replace(stack, clients=MappingProxyType({**stack.clients, src: MappingProxyType(entry)}))


#: Step 4's fields and the serving mode of the points each is fitted on.
BURST_MODES = {"prefill_burst_fraction": "disagg", "agg_burst_fraction": "agg"}


def _burst_fit(
    points, stack: Stack, src: str, field: str = "prefill_burst_fraction", bag: bool = True, spread: dict | None = None
) -> float | str:
    """Step 4: ``src``'s burst share ``field`` on its fit points of that field's mode
    (:data:`BURST_MODES`; mean |log ratio| of TTFT over :data:`BURST_GRID`; ``bag``: the median of the
    family-bootstrap argmins, fit/bagging.py), or why it is not fitted."""
    pts = [p for p in points if p.timed_by == src and p.mode == BURST_MODES[field]]
    if len(pts) < MIN_POINTS:
        return f"fewer than {MIN_POINTS} fit points"
    ids = [p.id for p in pts]
    per_row = []  # (grid, rows) |log(predicted / measured)| of each row's TTFT, NaN without one
    for w in BURST_GRID:
        t = _predict(pts, _with_client(stack, src, **{field: float(w)}))
        t = t[t.metric == "ttft_s"].dropna(subset=["error"]).set_index("id")
        per_row.append(np.abs(np.log1p(t.error.reindex(ids).to_numpy(float))))
    per_row = np.array(per_row)
    counts = np.isfinite(per_row).sum(axis=1)
    if counts.max() < MIN_POINTS:
        return f"fewer than {MIN_POINTS} predicted fit points"
    weights = family_weights([family(p) for p in pts]) if bag else np.ones((1, len(ids)))
    loss = weighted_losses(np.where(counts[:, None] >= MIN_POINTS, per_row, np.nan), weights)
    best = np.argmin(loss, axis=1)
    flat = np.ptp(np.where(np.isfinite(loss), loss, 0.0), axis=1) < 1e-12  # a flat loss picks the first value
    ok = (best < len(BURST_GRID) - 1) & ~flat & np.isfinite(loss[np.arange(len(best)), best])
    value = bagged(BURST_GRID[best], ok)
    if spread is not None and bag:
        spread[field] = spread_of(BURST_GRID[best], ok)
    if value is not None:
        return value
    if flat.all():
        return "its fit points' TTFT does not depend on it"
    return "best value on the upper search bound" + (" in most bootstrap replicates" if bag else "")


def fit_stack(
    name: str,
    points: Sequence[MeasuredPoint],
    sp: dict[str, str],
    start: Stack | None = None,
    front_end: bool = False,
    ttft_flagged: frozenset = frozenset(),
    tpot_flagged: frozenset = frozenset(),
    cold: frozenset = frozenset(),
    server_front: dict | None = None,
    withheld_systems: frozenset = frozenset(),
) -> dict:
    """Fit one profile on its fit half, starting from ``start`` (default: its stated values);
    report fit / held-out errors before (the ``default`` profile's fixed costs, the stated MTP
    acceptance) and after. The TTFT of ``ttft_flagged`` points (aiconfigurator rows that break a
    data-quality rule, fit/aic_quality.py) enters neither the front-end and burst fits nor the errors; the
    TPOT of ``tpot_flagged`` points (rules D, E) enters neither the step-cost and MTP fits nor the errors. The
    TTFT of ``cold`` points (timed without a client warm-up: fit/client_warmup.py) enters neither the front-end nor
    the burst fits, and is kept in the errors. ``server_front``: the twin server's front end for InferenceX's own points
    (:data:`SAME_SERVER`), taken where the profile fits none of its own and has no ``inferencex`` entry, its level
    refitted on the profile's own published medians with its fitted step costs where fit/median_front.MEDIAN_FRONT
    has them, ``withheld_systems`` does not withhold their recipe row's system and fit/median_front.MEDIAN_FRONT_ON
    is set (shipped off, round 40).

    Returns ``{"values": {...}, "mtp_acceptance": {model: {...}}, "clients": {source: {...}},
    "report": {...}}`` in the form of ``data/stack_fits.toml``.
    """
    stack = start or load_stacks(False)[name]
    mine = [p for p in points if stack_for_framework(p.framework, p.system).name == name]
    fit_pts = [p for p in mine if sp[p.id] == "fit"]
    values: dict[str, float] = {}
    acc: dict[str, dict[str, float]] = {}
    clients: dict[str, dict[str, float]] = {}
    notes = []
    spreads: dict[str, dict] = {}  # the bagged fits' replicate 5-95% ranges (fit/bagging.py)
    cur = replace(stack, clients=MappingProxyType({}))  # every client entry is refitted below
    no_steady_ttft = ttft_flagged | cold  # TTFT kept out of the front-end and burst fits (steps 2, 4)
    fronts = ((FRONT_END, src) for src in (*FRONTEND_SOURCES, *CLIENT_SOURCES))
    for group, src in [(g, FRONTEND_SOURCES[0]) for g in PLAN.get(name, ())] + (
        list(fronts) if front_end and name in PLAN else []
    ):
        if group == ("mtp",):
            a = _mtp_fit([p for p in fit_pts if p.id not in tpot_flagged], cur)
            if a:
                acc["deepseek-r1"] = a
                cur = replace(
                    cur,
                    mtp_acceptance={
                        **cur.mtp_acceptance,
                        "deepseek-r1": {**cur.mtp_acceptance.get("deepseek-r1", {}), **a},
                    },
                )
            continue
        front = group[0] == "request_overhead_s"
        pts = [
            p
            for p in fit_pts
            if (
                ((p.concurrency or 0) <= FRONTEND_MAX_CONCURRENCY and p.timed_by == src and p.id not in no_steady_ttft)
                if front
                else p.id not in tpot_flagged
            )
        ]
        metrics = ("ttft_s",) if front else ("tpot_s", "throughput_per_chip")
        client = front and src in CLIENT_SOURCES
        got = _linear_fit(
            pts,
            cur,
            group,
            metrics,
            lambda m: m == "throughput_per_chip",
            bag=front,
            spread=spreads.setdefault(src if client else "profile", {}) if front else None,
        )
        if not isinstance(got, dict):
            why = got or f"fewer than {MIN_POINTS} fit points"
            notes.append(f"{', '.join(group)}{f' (client {src})' if client else ''}: {why}, not fitted")
            continue
        if client:
            clients[src] = got
            continue
        values.update(got)
        cur = replace(cur, **got)
    cur = replace(cur, clients=MappingProxyType({c: MappingProxyType(v) for c, v in clients.items()}))
    for src, field in ((s, f) for s in CLIENT_SOURCES for f in BURST_MODES) if front_end and name in PLAN else ():
        got = _burst_fit(
            [p for p in fit_pts if p.id not in no_steady_ttft], cur, src, field, spread=spreads.setdefault(src, {})
        )
        if isinstance(got, str):
            notes.append(f"{field} (client {src}): {got}, not fitted")
            continue
        clients[src] = {**clients.get(src, {}), field: got}
        cur = _with_client(cur, src, **{field: got})
    for client, entry in same_client_front_end(values, clients).items():  # InferenceX's own points: its exports' entry
        clients[client] = entry
        cur = _with_client(cur, client, **entry)
    if server_front and not any(f in values for f in FRONT_END) and FRONTEND_SOURCES[0] not in clients:
        server_front = median_front_end(name, cur, server_front, withheld_systems)  # fit/median_front.py
        clients[FRONTEND_SOURCES[0]] = dict(server_front)  # the twin server's (SAME_SERVER)
        cur = _with_client(cur, FRONTEND_SOURCES[0], **server_front)
        notes.append(
            f"{', '.join(FRONT_END)} (client {FRONTEND_SOURCES[0]}): the twin server program's front end "
            "(fit/stack_fit.SAME_SERVER)"
            + (
                ", its level fitted on the engine's published low-load medians (fit/median_front.py)"
                if MEDIAN_FRONT_ON and name in MEDIAN_FRONT
                else ""
            )
            + ", not fitted on this profile's points"
        )
    ids = {p.id for p in mine}
    fit_ids = {p.id for p in fit_pts}
    before = _predict(
        mine, replace(load_stacks(False)["default"], mtp_acceptance=load_stacks(False)[name].mtp_acceptance)
    )
    after = _predict(mine, cur)
    report = {
        "split": SPLIT_TEXT,
        "n_fit": len(fit_ids),
        "n_held_out": len(ids - fit_ids),
        "systems": sorted({p.system for p in mine}),
        "sources": sorted({p.source for p in mine}),
        "notes": notes,
        "bootstrap": {
            "method": BAG_TEXT,
            **{k: {f: r for f, r in v.items() if r is not None} for k, v in spreads.items() if any(v.values())},
        },
        "before": {
            "fit": errors(before, fit_ids, ttft_flagged, tpot_flagged),
            "held_out": errors(before, ids - fit_ids, ttft_flagged, tpot_flagged),
        },
        "after": {
            "fit": errors(after, fit_ids, ttft_flagged, tpot_flagged),
            "held_out": errors(after, ids - fit_ids, ttft_flagged, tpot_flagged),
        },
    }
    return {"values": values, "mtp_acceptance": acc, "clients": clients, "report": report}


def fit_all(
    names: Sequence[str] = tuple(PLAN),
    front_end: bool = True,
    warm_clients_only: bool = False,
    withheld_systems: frozenset = frozenset(),
) -> dict[str, dict]:
    """Fit every profile of ``names`` (each on its own points) on one shared split; the TTFT of the
    aiconfigurator rows that break a data-quality rule (fit/aic_quality.py) is left out of every fit
    and error, and so is the TPOT of those that break rule D or E (the split is drawn over every point, so a
    flag does not reshuffle it). With ``warm_clients_only`` (a what-if; the shipped fit leaves it off) the rows timed
    without a client warm-up (fit/client_warmup.py) are left out of the front-end and burst fits only. The points
    of ``withheld_systems`` enter nothing, their flags' comparisons included (fit/loso.py's refit). A profile of
    :data:`SAME_SERVER` without a front end of its own takes its twin's (:func:`server_front_end`), rescaled to the
    profile's own published low-load medians where fit/median_front.MEDIAN_FRONT has them (``sglang-rocm``) and
    fit/median_front.MEDIAN_FRONT_ON is set (shipped off, round 40)."""
    pts = load_points(withheld_systems)
    sp = split(pts)
    flagged = frozenset(aic_ttft_flags(pts))
    decode = frozenset(aic_decode_flags(pts))
    cold = cold_client_ids(pts) if warm_clients_only else frozenset()
    out: dict[str, dict] = {}
    for n in names:  # in order: a derived profile starts from its base's fitted values
        twin = SAME_SERVER.get(n)  # a twin fitted in this call (PLAN order: before it), else its shipped fit
        server = server_front_end((build_stacks(out) if twin in out else load_stacks()).get(twin)) if twin else {}
        out[n] = fit_stack(
            n,
            pts,
            sp,
            build_stacks(out)[n],
            front_end=front_end,
            ttft_flagged=flagged,
            tpot_flagged=decode,
            cold=cold,
            server_front=server,
            withheld_systems=withheld_systems,
        )
    return out
