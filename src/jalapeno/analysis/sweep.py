"""Sweep valid deployments x operating points of one model on one system.

Enumerated (like the InferenceX sweeps; all restrictable by :class:`SweepOptions`):
- aggregated instances of S chips per stage, S in {1, 2, 4, ...} up to 4x the scale-up domain
  (crossing it over scale-out or global links) plus the domain size itself (72 on NVL72);
  attention TP t in {1, 2, 4, 8} dividing S and the head count, attention DP S/t; MoE EP = S
  (wide EP), and EP = 1 (TP-only experts) for S <= 8; dense models use TP only;
- disaggregated: prefill instances (TP/TEP of 1-8 chips, and for prompts of mean length >=
  32K the same with context parallelism cp in {2, 4}) x decode instances (TEP of <= 8 or
  DP-attention + wide EP of 8 chips up to the domain) x decode workers {1, 2, 4}; the prefill
  workers are not a grid but follow from the pools' balance at each decode batch
  (:func:`balanced_workers`): the fewest whose pool keeps up with the decode pool's request rate
  (below 0.95 utilisation, serve/disagg.prefill_workers_needed) and one more, so the
  prefill:decode ratio is as large as the workload needs, up to the system's largest scale
  (``System.max_chips``: 2,048 Jalapeño chips, 16 racks; 8,192 on the GPU systems' scale-out);
- EPLB: every MoE layout with EP >= ``EPLB_MIN_EP`` also runs with the expert-parallel load
  balancer and at least ``SweepOptions.eplb`` redundant experts (rounded up so that EP divides
  E + R), beside the contiguous placement; the frontier keeps whichever wins (memory vs balance);
- the decode batch per instance doubling 1 ... 16384 (each clipped to the instance's KV / budget
  cap) — the closed-loop concurrency of each point is derived from it (serve/analytic.py), or,
  with ``concurrency`` given, solved for those concurrencies (aggregated only).
Layouts whose weights do not fit are skipped; points that do not fit are kept, marked infeasible.

Two-batch overlap (``SweepOptions.overlap``): ``auto`` (default) evaluates every layout with an EP
all-to-all (attention DP + EP > 1, the only ones it applies to) with and without it and keeps, at
each operating point (decode batch or concurrency), the faster of the two — the option is used
only where it wins, as a recipe author would set it; ``none`` never uses it, ``tbo`` always where
it applies. On the batch grid point counts do not grow (one deployment per point either way); with
fixed concurrencies both variants keep every concurrency (one block of len(concurrency) points
per deployment, as callers expect).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import numpy as np

from jalapeno.analysis.sweep_layouts import EPLB_REDUNDANT, aggregated_layouts, check_sweep_eplb, disaggregated_layouts
from jalapeno.analysis.sweep_layouts import (  # noqa: F401 (re-exported: they lived here until round 46)
    CP_DEGREES,
    CP_PREFILL_MIN_ISL,
    EPLB_MIN_EP,
    smallest_fitting_layout,
    stage_sizes,
    weights_misfit,
    with_eplb,
)
from jalapeno.deploy.deployment import DEFAULT_TOKEN_BUDGET, MTP, Deployment, Pool, pool_overlap
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.sharding import has_ep_all_to_all
from jalapeno.errors import SpecError, choice_hint
from jalapeno.serve.analytic import aggregated_by_batch
from jalapeno.serve.serving_points import ServingPoints
from jalapeno.serve.disagg import (
    DecodeCurve,
    PrefillPerf,
    decode_curve,
    disaggregated_points,
    prefill_perf,
    prefill_workers_needed,
)
from jalapeno.serve.lockstep import solve_concurrencies
from jalapeno.serve.overlap_pick import faster_by_point
from jalapeno.cost.pricer import Pricer, check_pricer
from jalapeno.cost.pool_backends import with_pool_backends
from jalapeno.specs.formats import Precision
from jalapeno.specs.precision_checks import check_precision
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload

DEFAULT_BATCHES = tuple(2.0**i for i in range(15))  # 1 ... 16384
#: decode workers of a disaggregated deployment; its prefill workers follow from the balance (balanced_workers)
DECODE_WORKERS = (1, 2, 4)
#: prefill workers beyond the fewest that keep up that the sweep also tries, per decode batch: one more
#: (lower utilisation, a shorter prefill queue in TTFT). A sweep-size choice: throughput and
#: interactivity do not depend on the prefill workers once the pool keeps up (serve/disagg.py), so
#: more prefill only lowers throughput per chip for a shorter TTFT.
PREFILL_HEADROOM = (0, 1)
#: Overlap choices of a sweep: the faster per point, never, or always (where it applies).
SWEEP_OVERLAP = ("auto", "none", "tbo")


def _sized(vals) -> bool:
    """True for a grid ``len`` can count (a tuple, list, range, 1-D array, Series), False for one number
    (``4``, ``np.int64(4)``, a 0-d array) or a generator."""
    try:
        len(vals)
    except TypeError:
        return False
    return True


def _shown(v) -> str:
    """A grid value as written: numpy's scalars as their Python value (nan, not np.float64(nan))."""
    return repr(v.item() if isinstance(v, np.generic) else v)


@dataclass(frozen=True, slots=True)
class SweepOptions:
    """What the sweep may use.

    Attributes:
        serving: ``both``, ``agg`` or ``disagg``.
        mtp: MTP settings applied to every deployment (None = off).
        concurrency: closed-loop concurrencies to solve for (aggregated); None = batch grid.
        batches: decode batches per instance for the grid.
        token_budget: chunked-prefill budget per step.
        max_stage_factor: largest stage as a multiple of the scale-up domain.
        eplb: fewest redundant experts tried with EPLB on MoE layouts with EP >= 8 (rounded up so
            EP divides E + R); None = never try EPLB. A sweep refuses more than E (or more than
            the default ``EPLB_REDUNDANT`` for fewer experts; deploy/layout.check_eplb).
        max_running, max_tokens_per_step, cuda_graph_max_batch, recv_interval: engine limits
            of every deployment (deploy/deployment.Deployment; serve/limits.py); cuda_graph_batch_sizes: the
            captured sizes a padding engine pads decode batches to (a recipe's, deploy/graph_capture.py).
        recipe: label of the engine recipe these options come from (None: as stated).
        overlap: ``auto`` (per point, the faster of with and without two-batch overlap where a
            layout has an EP all-to-all), ``none`` or ``tbo`` (module docstring).
        budget_per: ``instance`` or ``rank`` — whether the limits count per instance or per
            attention-DP rank (Deployment.budget_per; a recipe's engine semantics).
        memory_fraction: the engine's share of usable HBM for every deployment
            (Deployment.memory_fraction; None: the efficiency set's 1 − memory_reserve_fraction).
        prefill_attention_dp: also enumerate attention-DP prefill workers (DEPn, n in 2, 4, 8) for
            MoE models, as recipes whose prefill workers run ``dp-attn`` deploy (default False:
            the TP/TEP prefill workers only).
        moe_backend: the MoE kernel backend every decode (aggregated) pool runs, as a recipe's launch
            script forces it (``Pool.moe_backend``; None: the calibrated set's pricing).
        eager_prompt_call_s: host seconds per call of an eager prompt-carrying step of every deployment
            (Deployment.eager_prompt_call_s; 0: not modelled).
        engine_release: (profile, release) of the engine the user states (deploy/vllm_fp8_moe.stack_release):
            each aggregated deployment takes the MoE backend that release runs at its EP size on the swept system
            (deploy/vllm_fp8_moe.release_moe_backend: vLLM's FP8 experts on Hopper); () : none. The
            disaggregated pools are priced per layout before their deployment exists (decode_curve with the
            sweep's limits) and keep the calibrated set (not done: round 37, vllmrule37).
    """

    serving: str = "both"
    mtp: MTP | None = None
    concurrency: tuple[float, ...] | None = None
    batches: tuple[float, ...] = DEFAULT_BATCHES
    token_budget: int = DEFAULT_TOKEN_BUDGET
    max_stage_factor: int = 4
    eplb: int | None = EPLB_REDUNDANT
    max_running: int | None = None
    max_tokens_per_step: int | None = None
    cuda_graph_max_batch: int | None = None
    cuda_graph_batch_sizes: tuple[int, ...] | None = None  # captured sizes a padding engine runs (Deployment's)
    cuda_graph_pad_routing: str = "routed"  # how its MoE routes the padding dummies (Deployment's)
    recv_interval: int = 1
    recipe: str | None = None
    overlap: str = "auto"
    budget_per: str = "instance"
    memory_fraction: float | None = None
    prefill_attention_dp: bool = False
    moe_backend: str | None = None
    eager_prompt_call_s: float = 0.0
    engine_release: tuple[str, str] = ()

    def _check_grids(self) -> None:
        """Refuse a grid no sweep can price, naming the option: a NaN batch was reported as batch.decode_seqs,
        ``concurrency=()`` raised numpy's reshape ValueError, 1e30 requests in flight were priced."""
        from jalapeno.specs.workload import MAX_CONCURRENCY

        for name, vals in (("batches", self.batches), ("concurrency", self.concurrency)):
            if vals is not None and not _sized(vals):  # concurrency=4 raised len()'s TypeError (break53)
                one = _shown(vals.item() if isinstance(vals, np.ndarray) else vals)  # a 0-d array: its value
                raise SpecError(
                    f"options.{name}",
                    f"must be a sequence of numbers, got {one}",
                    f"give a tuple, e.g. {name}=({one},) for one value or {name}=(1, 4, 16, 64)",
                )
            if vals is not None and not len(vals):
                raise SpecError(f"options.{name}", "is empty", f"give at least one value, e.g. {name}=(1, 4, 16, 64)")
            bad = next(
                (
                    v
                    for v in (() if vals is None else vals)
                    if isinstance(v, bool)
                    or not isinstance(v, (int, float, np.number))
                    or not 1 <= v <= MAX_CONCURRENCY
                ),
                None,
            )
            if bad is not None:
                raise SpecError(
                    f"options.{name}",
                    f"{_shown(bad)} is not a number of sequences from 1 to {MAX_CONCURRENCY:,}",
                    f"give {name} as numbers >= 1, e.g. {name}=(1, 4, 16, 64)",
                )

    def deployment(
        self,
        precision: Precision,
        decode: Pool,
        prefill: Pool | None = None,
        mtp: MTP | None = None,
        overlap: str = "none",
        model: ModelSpec | None = None,
        system: str = "",
    ) -> Deployment:
        """A deployment with these options' MTP (or ``mtp``), budget, engine limits and MoE backend (with
        ``model`` and ``system``: the one :attr:`engine_release` runs there, where the recipe names none)."""
        if self.moe_backend and decode.moe_backend is None:
            decode = replace(decode, moe_backend=self.moe_backend)
        dep = self._deployment(precision, decode, prefill, mtp, overlap)
        if self.engine_release and model is not None:
            from jalapeno.deploy.vllm_fp8_moe import release_moe_backend

            dep = release_moe_backend(dep, model, *self.engine_release, system)[0]
        return dep

    def _deployment(
        self, precision: Precision, decode: Pool, prefill: Pool | None, mtp: MTP | None, overlap: str
    ) -> Deployment:
        return Deployment(
            precision,
            decode,
            prefill=prefill,
            mtp=mtp or self.mtp,
            token_budget=self.token_budget,
            max_running=self.max_running,
            max_tokens_per_step=self.max_tokens_per_step,
            cuda_graph_max_batch=self.cuda_graph_max_batch,
            recv_interval=self.recv_interval,
            cuda_graph_batch_sizes=self.cuda_graph_batch_sizes,
            cuda_graph_pad_routing=self.cuda_graph_pad_routing,
            recipe=self.recipe,
            overlap=overlap,
            budget_per=self.budget_per,
            eager_prompt_call_s=self.eager_prompt_call_s,
            memory_fraction=self.memory_fraction,
        )

    def __post_init__(self) -> None:
        self._check_grids()
        r = self.engine_release  # ('vllm',) raised release_moe_backend's TypeError mid-sweep (break55)
        if r != () and not (isinstance(r, tuple) and len(r) == 2 and all(isinstance(x, str) for x in r)):
            raise SpecError(
                "options.engine_release",
                f"must be () or a (profile, release) pair, got {r!r:.60}",
                "give e.g. engine_release=('vllm', '0.11.0') ('' for no stated release), or () for none",
            )
        f = self.max_stage_factor  # 0 swept nothing and said "within 0x its scale-up domain" (break53)
        if isinstance(f, bool) or not isinstance(f, (int, np.integer)) or f < 1:
            raise SpecError(
                "options.max_stage_factor",
                f"must be a whole number >= 1 (the largest stage as a multiple of the scale-up domain), got {f!r}",
                "give max_stage_factor=1 (stages within one scale-up domain) or more; the default is 4",
            )
        if self.eplb is not None and (isinstance(self.eplb, bool) or not isinstance(self.eplb, int) or self.eplb < 0):
            raise SpecError(
                "eplb",
                f"redundant experts must be an integer >= 0, got {self.eplb!r}",
                "give --eplb R with R >= 0, or --eplb off",
            )
        if self.overlap not in SWEEP_OVERLAP:
            raise SpecError(
                "overlap",
                f"unknown overlap choice {self.overlap!r}{choice_hint(self.overlap, SWEEP_OVERLAP)}",
                f"use one of {', '.join(SWEEP_OVERLAP)} (auto: the faster of none and tbo)",
            )
        if self.serving not in ("both", "agg", "disagg"):
            raise SpecError(
                "serving",
                f"unknown serving mode {self.serving!r}{choice_hint(self.serving, ('agg', 'disagg', 'both'))}",
                "use agg, disagg or both",
            )
        if self.concurrency is not None and any(c <= 0 for c in self.concurrency):
            raise SpecError("concurrency", "must be positive", "give concurrencies >= 1")
        if self.concurrency is not None and self.serving == "disagg":
            raise SpecError(
                "concurrency",
                "fixed concurrencies apply to aggregated serving only",
                "drop --concurrency (disaggregated points span the batch grid) or use --serving agg",
            )


@dataclass(frozen=True)
class SweepResult:
    """All points of a sweep: ``points`` (N,) and the deployment of each (``dep_index``)."""

    model: str
    system: str
    workload: Workload
    precision: str
    points: ServingPoints
    deployments: list[Deployment] = field(repr=False)
    dep_index: np.ndarray = field(repr=False)


def concat_points(parts: list[ServingPoints]) -> ServingPoints:
    """Concatenate point sets."""
    return ServingPoints(**{f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(ServingPoints)})


def balanced_workers(
    pre: PrefillPerf,
    dec: DecodeCurve,
    wl: Workload,
    batch_index: np.ndarray,
    mtp: MTP | None,
    max_chips: int,
    decode_workers: tuple[int, ...] = DECODE_WORKERS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Worker pairs of a (prefill layout, decode layout) pair the sweep prices, one per decode batch each.

    For each of ``decode_workers`` y (default :data:`DECODE_WORKERS`) and each decode batch in
    ``batch_index`` (indices into ``dec.batch``), the fewest prefill workers x0 that keep up with the
    y decode instances at that batch (serve/disagg.prefill_workers_needed) and x0 + h for h in
    :data:`PREFILL_HEADROOM`; pairs
    whose deployment needs more than ``max_chips`` (the system's largest scale: its outermost link
    level, e.g. 2,048 Jalapeño chips in 16 racks) are dropped. So the prefill:decode ratio is not
    capped by a grid: a fast decode pool gets as many prefill workers as its request rate needs.

    Returns:
        (prefill workers, decode workers, batch index), each (N,) ints: y-major, then batch, then x.
    """
    xs, ys, bs = [], [], []
    for y in decode_workers:
        x0 = prefill_workers_needed(pre, dec, wl, y, mtp)[batch_index]
        for h in PREFILL_HEADROOM:
            xs.append(x0 + h)
            ys.append(np.full(x0.shape, y))
            bs.append(batch_index)
    order = np.lexsort((np.concatenate(xs), np.concatenate(bs), np.concatenate(ys)))
    x, y, b = (np.concatenate(v)[order] for v in (xs, ys, bs))
    fit = x * pre.layout.chips + y * dec.layout.chips <= max_chips
    return x[fit], y[fit], b[fit]


#: the KV hand-off caches of the last few sweeps (serve/disagg.disaggregated_points' ``transfer_cache``), each
#: with the objects its key names by identity (kept alive, so an id is not reused while its entry lives)
_TRANSFERS: dict[tuple, tuple] = {}


def _transfer_cache(model: ModelSpec, pricer: Pricer, precision: Precision, wl: Workload) -> dict:
    """The KV hand-off cache for a sweep: shared with an earlier sweep of the same model and pricer objects,
    KV-cache format and mean prompt length (all a hand-off's time depends on besides the pool sizes and layouts,
    serve/disagg.kv_transfer_s; the layouts' copies, serve/disagg.handoff_copies, are in the inner key) — ``compare``
    sweeps each system at two precisions with one KV format."""
    key = (id(model), id(pricer), precision.kv_cache, float(wl.mean_isl))
    if key not in _TRANSFERS:
        if len(_TRANSFERS) >= 4:
            _TRANSFERS.pop(next(iter(_TRANSFERS)))
        _TRANSFERS[key] = (model, pricer, {})
    return _TRANSFERS[key][2]


def sweep(
    model: ModelSpec, pricer: Pricer, wl: Workload, precision: Precision, options: SweepOptions | None = None
) -> SweepResult:
    """Evaluate every enumerated deployment at every operating point.

    Raises:
        InfeasibleDeployment: no layout of the model fits on the system.
        SpecError: MTP asked for on a model without an MTP module; a precision the model or chip
            cannot run.
    """
    from jalapeno.deploy.mtp import check_mtp
    from jalapeno.errors import InfeasibleDeployment

    opt = options or SweepOptions()
    for name, obj, kind, fix in (
        ("wl", wl, Workload, "get_workload(name)"),
        ("precision", precision, Precision, "get_precision(name)"),
        ("options", opt, SweepOptions, "SweepOptions(...)"),
    ):
        if not isinstance(obj, kind):
            raise SpecError(f"sweep: {name}", f"expected a {kind.__name__}, got {type(obj).__name__}", f"pass {fix}")
    check_mtp(opt.mtp, model)
    check_sweep_eplb(opt.eplb, model)
    check_pricer(pricer, "sweep")
    system, eff = pricer.system, pricer.efficiency
    check_precision(precision, model, system.chip)
    parts: list[ServingPoints] = []
    deps: list[Deployment] = []
    idx: list[np.ndarray] = []
    batches = np.asarray(opt.batches, dtype=float)

    def add(dep: Deployment, pts: ServingPoints) -> None:
        idx.append(np.full(len(pts), len(deps)))
        deps.append(dep.for_model(model))
        parts.append(pts)

    limits = opt.deployment(precision, Pool(Layout()))  # carries the engine limits only

    def budget_covers(lay: Layout) -> bool:  # a rank needs a prompt token a step (deployment_checks.check_rank_budget)
        return limits.prefill_budget(lay) >= lay.dp

    locked: list[
        tuple[list[Deployment], Pricer]
    ] = []  # fixed concurrencies: every layout's variants, solved in lockstep
    if opt.serving in ("both", "agg"):
        for lay in aggregated_layouts(
            model, system, precision, eff, opt.max_stage_factor, opt.eplb, opt.memory_fraction
        ):
            if not budget_covers(lay):
                continue
            dep = opt.deployment(precision, Pool(lay), model=model, system=system.name)
            variants = [dep]
            if opt.overlap != "none" and has_ep_all_to_all(model, lay):
                variants = [replace(dep, overlap="tbo")] if opt.overlap == "tbo" else [dep, replace(dep, overlap="tbo")]
            # the pool's MoE backend (a recipe's, or its engine release's: engine_release) prices its experts, as
            # serve/point does for predict (``pricer`` itself where the pool names none)
            pr = with_pool_backends(pricer, dep.decode, model, lay, precision.kv_cache.name)
            if opt.concurrency is not None:  # below: one build per layout and pass, collectives together
                locked.append((variants, pr))
                continue
            if len(variants) == 2:  # the faster at each batch; long prompts' chunks priced for it alone
                for d, p in faster_by_point(model, pr, variants, wl, batches):
                    add(d, p)
                continue
            pts = aggregated_by_batch(model, pr, variants[0], wl, batches)
            _, first = np.unique(pts.decode_batch, return_index=True)  # each distinct (clipped) batch once
            add(variants[0], pts.take(np.sort(first)))
    if locked:  # fixed concurrencies: every deployment keeps all of them (one lockstep per pricer)
        solved: dict[int, list] = {}
        for pr in {id(p): p for _, p in locked}.values():  # by identity, in first-seen order
            group = [d for v, p in locked if p is pr for d in v]
            solved[id(pr)] = list(solve_concurrencies(model, pr, group, wl, np.asarray(opt.concurrency)))[::-1]
        for variants, pr in locked:
            for d in variants:
                add(d, solved[id(pr)].pop())
    if opt.serving in ("both", "disagg") and opt.concurrency is None:
        pre_layouts, dec_layouts = disaggregated_layouts(
            model,
            system,
            precision,
            eff,
            opt.max_stage_factor,
            opt.eplb,
            wl.mean_isl,
            opt.prefill_attention_dp,
            opt.memory_fraction,
        )
        pre_layouts = [lay for lay in pre_layouts if budget_covers(lay)]
        pre_ov = "tbo" if opt.overlap == "tbo" else "none"  # TP/TEP prefill pools have no all-to-all
        pres = [
            prefill_perf(
                model, pricer, lay, precision, wl, limits.prefill_budget(lay), pool_overlap(pre_ov, model, lay)
            )
            for lay in pre_layouts
        ]
        transfers = _transfer_cache(model, pricer, precision, wl)  # KV hand-off times by pool sizes
        for dlay in dec_layouts:
            curves = {"none": decode_curve(model, pricer, dlay, precision, wl, batches, opt.mtp, limits)}
            if opt.overlap != "none" and has_ep_all_to_all(model, dlay):
                curves["tbo"] = decode_curve(model, pricer, dlay, precision, wl, batches, opt.mtp, limits, "tbo")
                if opt.overlap == "tbo":
                    del curves["none"]
            dec0 = next(iter(curves.values()))
            keep = np.sort(np.unique(dec0.batch, return_index=True)[1])
            # per decode batch, the overlap mode it runs (the faster where both are evaluated)
            mode = np.full(dec0.batch.shape[0], next(iter(curves)), dtype=object)
            if len(curves) == 2:
                off, on = curves["none"], curves["tbo"]
                mode = np.where(on.feasible & (~off.feasible | (on.tau_s < off.tau_s)), "tbo", "none")
            for pre in pres:
                if not pre.feasible:
                    continue
                for ov, dec in curves.items():
                    kv = keep[mode[keep] == ov]
                    if not kv.size:
                        continue
                    xs, ys, bi = balanced_workers(pre, dec, wl, kv, opt.mtp, system.max_chips)
                    if not xs.size:
                        continue
                    pts = disaggregated_points(
                        model, pricer, precision, wl, pre, dec, xs, ys, opt.mtp, transfers, batch_index=bi
                    )
                    made: dict = {}  # one deployment per worker pair of this (prefill, decode) layout pair
                    for x, y in zip(xs.tolist(), ys.tolist()):
                        if (x, y) not in made:
                            made[x, y] = len(deps)
                            deps.append(
                                opt.deployment(
                                    precision, Pool(dlay, y), prefill=Pool(pre.layout, x), overlap=ov
                                ).for_model(model)
                            )
                    parts.append(pts)
                    idx.append(np.array([made[x, y] for x, y in zip(xs.tolist(), ys.tolist())]))
    if not parts:
        frac = opt.memory_fraction  # --memory-fraction 0.01 fit nothing, and the error named neither it nor the fix
        raise InfeasibleDeployment(
            "deployment",
            f"no layout of {model.name} ({precision.name}) fits on {system.name} "
            f"within {opt.max_stage_factor}x its scale-up domain"
            + ("" if frac is None else f" in the engine's memory fraction {frac:g} of usable HBM"),
            # 'allow wider stages (max_stage_factor)' named no option of frontier, compare, plan, audit or
            # sensitivity: only a design space's [sweep] table sets it (break49)
            ("" if frac is None else f"raise the memory fraction ({frac:g} given; e.g. 0.9), ")
            + "use a smaller precision (-p) or a system with more HBM per chip (an explore design space's "
            "[sweep] max_stage_factor allows wider stages)",
        )
    return SweepResult(model.name, system.name, wl, precision.name, concat_points(parts), deps, np.concatenate(idx))
