"""Claim metrics: what a claim about a system measures, and evaluating it fast under what-ifs.

A claim names a metric of a system's frontier (DESIGN.md §3), optionally at an interactivity and
optionally as a ratio against a baseline system:

    peak_throughput_per_chip        tok/s/chip at the frontier's peak (input + output tokens)
    peak_tok_s_per_kw               tok/s per kW under the power convention (``load``: the power
                                    drawn at each point, analysis/power_cost.py)
    peak_tokens_per_usd             tokens per $ at the peak (3600 · tok/s/chip / $/chip-hour)
    max_interactivity               highest tok/s/user on the frontier
    min_e2e_s                       lowest mean end-to-end latency (lower is better)
    throughput_per_chip@X           frontier throughput at X tok/s/user (log-log interpolation)
    tok_s_per_kw@X                  the per-kW frontier at X tok/s/user
    <any of these>_ratio            the system's value over the baseline's (``peak_tok_s_per_kw_ratio``,
                                    ``throughput_per_chip_ratio@100``)

:func:`parse_claim` reads ``NAME[@X]=VALUE``. :class:`ClaimContext` evaluates a metric on a pricer
by a full sweep (:meth:`ClaimContext.full`) or — for the many evaluations of an audit — on the few
*candidate* deployments that decide it (:meth:`ClaimContext.candidates`,
:meth:`ClaimContext.restricted`): the same serving model (serve/analytic.py, serve/disagg.py) at
the same batch grid, so at the parameters the candidates came from the two agree exactly, and
elsewhere the restricted value is a lower bound for max-type metrics (the audit re-checks its
answers with full sweeps).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from jalapeno.analysis.frontier import frontier_indices, interp_frontier
from jalapeno.analysis.power_cost import CONVENTIONS, load_power_w_per_chip, power_w_per_chip
from jalapeno.errors import SpecError, choice_hint

#: Metric name → (unit, higher is better, needs an interactivity)
METRICS = {
    "peak_throughput_per_chip": ("tok/s/chip", True, False),
    "peak_tok_s_per_kw": ("tok/s/kW", True, False),
    "peak_tokens_per_usd": ("tokens/$", True, False),
    "max_interactivity": ("tok/s/user", True, False),
    "min_e2e_s": ("s", False, False),
    "throughput_per_chip": ("tok/s/chip", True, True),
    "tok_s_per_kw": ("tok/s/kW", True, True),
}
#: Power conventions a claim may use: the catalog's three plus ``load`` (drawn at each point).
POWER_CONVENTIONS = (*CONVENTIONS, "load")


@dataclass(frozen=True)
class Claim:
    """A stated figure: ``metric`` (a key of :data:`METRICS`), at interactivity ``at`` (tok/s/user)
    where the metric needs one, as a ratio to a baseline when ``ratio``."""

    metric: str
    value: float
    at: float | None = None
    ratio: bool = False

    @property
    def name(self) -> str:
        """The metric as a claim names it: ``METRIC[_ratio][@AT]``."""
        return self.metric + ("_ratio" if self.ratio else "") + (f"@{self.at:g}" if self.at is not None else "")

    @property
    def higher_is_better(self) -> bool:
        """Whether a larger value of the metric is the better one (data of :data:`METRICS`)."""
        return METRICS[self.metric][1]

    @property
    def unit(self) -> str:
        """The metric's unit (:data:`METRICS`), ``x`` for a ratio."""
        return "x" if self.ratio else METRICS[self.metric][0]


#: A reader's words for a metric (:func:`metric_hint`): (fragments, the metric, its @X form or None).
#: Tokens per watt (= tokens per joule) and tokens per dollar are the claims of a press release.
_WORDS = (
    (("watt", "joule", "_per_w", "per_kw", "energy", "power"), "peak_tok_s_per_kw", "tok_s_per_kw"),
    (("usd", "dollar", "cost", "price"), "peak_tokens_per_usd", None),
    (("interactiv", "per_user", "user", "speed"), "max_interactivity", None),
    (("latency", "e2e"), "min_e2e_s", None),
    (("throughput", "per_chip", "per_gpu"), "peak_throughput_per_chip", "throughput_per_chip"),
)
#: The unit a reader's wording implies, against the metric's (tok/s/kW; tokens/$); a ratio has none.
_UNIT_NOTES = (
    (("kwh",), " it is in tok/s per kW: a tokens-per-kWh figure / 3,600; a _ratio is unit-free"),
    (("energy", "j_per", "joules_per"), " it is in tok/s per kW: 1,000 / the joules per token; a _ratio is unit-free"),
    (
        ("watt", "joule", "_per_w"),
        " it is in tok/s per kW: a tokens-per-watt (= tokens-per-joule) figure x 1,000; a _ratio is unit-free",
    ),
    (
        ("cost", "price", "usd_per", "dollar_per"),
        " it is tokens per $: 1e6 / the $ per million tokens; its _ratio "
        "is the baseline's $ per token over this system's",
    ),
)
#: The unit note of a ``_ratio`` claim: no conversion applies (the ratio of two tok/s/kW figures is the ratio of two
#: tokens-per-watt figures).
_RATIO_NOTE = " a _ratio is unit-free: keep the value as given"
_RATIO_NOTE_COST = " its _ratio is the baseline's $ per token over this system's"


def metric_hint(name: str, at: bool = False, ratio: bool = False) -> str:
    """`` (did you mean throughput_per_chip?)`` for a near miss of a metric name, else ``""``: compare's
    columns say tok/s/chip, so ``tok_s_per_chip@50`` is the name a reader types for ``throughput_per_chip@50``;
    a claim in tokens per watt (or joule) gets the per-kW metric and the factor 1,000 (``at``: the
    claim gives ``@X``, so the hint names the ``@X`` form where there is one; ``ratio``: the claim was a
    ``_ratio``, so the hint names the ratio form, the one to type back).

    >>> metric_hint("tok_s_per_chip", at=True), metric_hint("max_interactivty"), metric_hint("zzz")
    (' (did you mean throughput_per_chip?)', ' (did you mean max_interactivity?)', '')
    >>> metric_hint("tokens_per_watt")
    ' (did you mean peak_tok_s_per_kw? it is in tok/s per kW: a tokens-per-watt (= tokens-per-joule) figure x 1,000; a _ratio is unit-free)'
    >>> metric_hint("per_user_speed"), metric_hint("tokens_per_dollar")
    (' (did you mean max_interactivity?)', ' (did you mean peak_tokens_per_usd?)')
    >>> metric_hint("peak_throughput", ratio=True)
    ' (did you mean peak_throughput_per_chip_ratio?)'
    >>> metric_hint("tokens_per_watt", ratio=True)
    ' (did you mean peak_tok_s_per_kw_ratio? a _ratio is unit-free: keep the value as given)'
    """
    import difflib

    tail = "_ratio" if ratio else ""
    guess = name.replace("tok_s_per_chip", "throughput_per_chip").replace("tokens_per_chip", "throughput_per_chip")
    if guess in METRICS:
        return f" (did you mean {guess}{tail}?)"
    for words, metric, at_form in _WORDS:
        if any(w in name for w in words):
            metric = at_form if at and at_form else metric
            unit = next((u for frags, u in _UNIT_NOTES if any(w in name for w in frags)), "")
            if ratio and unit:  # a ratio is unit-free: 'x 1,000' would make a 1.7x claim 1,700x
                unit = _RATIO_NOTE_COST if "tokens per $" in unit else _RATIO_NOTE
            return f" (did you mean {metric}{tail}?{unit})"
    close = difflib.get_close_matches(name, list(METRICS), n=1, cutoff=0.8)
    return f" (did you mean {close[0]}{tail}?)" if close else ""


def parse_claim(text: str) -> Claim:
    """``NAME[@X]=VALUE`` → :class:`Claim` (``_ratio`` may come before or after ``@X``).

    Raises:
        SpecError: malformed text, an unknown metric, a missing or extra ``@X``, a value that is
            not a positive number.

    >>> parse_claim("max_interactivity=700")
    Claim(metric='max_interactivity', value=700.0, at=None, ratio=False)
    >>> parse_claim("tok_s_per_kw_ratio@100=2").name
    'tok_s_per_kw_ratio@100'
    """
    form = r"\s*([a-z_0-9]+?)(_ratio)?(?:@([^=_\s]+))?(_ratio)?\s*=\s*(\S+)\s*"
    m = re.fullmatch(form, text or "")
    known = ", ".join(f"{k}@X" if v[2] else k for k, v in METRICS.items())
    if not m:  # 'Max_Interactivity=700' was told only that it is not METRIC=VALUE (break46)
        low = re.fullmatch(form, (text or "").lower())
        hint = f" (metric names are lower case: did you mean {low[0].split('=')[0].strip()}?)" if low else ""
        raise SpecError(
            "--claim",
            f"{text!r} is not METRIC[@X]=VALUE{hint}",
            f"write e.g. --claim max_interactivity=700; metrics: {known} (each also as <metric>_ratio)",
        )
    name, r1, at, r2, val = m.groups()
    if r1 and r2:  # 'max_interactivity_ratio_ratio=1' was read as one ratio, silently
        raise SpecError(
            "--claim",
            f"{text!r} says _ratio twice",
            f"write it once, e.g. --claim {name}_ratio" + (f"@{at}" if at is not None else "") + f"={val}",
        )
    if name not in METRICS:
        raise SpecError(
            "--claim",
            f"unknown metric {name!r}{metric_hint(name, at is not None, bool(r1 or r2))}",
            f"use one of {known} (each also as <metric>_ratio)",
        )
    try:
        x = float(at) if at is not None else None
    except ValueError:
        x = math.nan
    if x is not None and not (x > 0 and math.isfinite(x)):  # '@inf' was "not METRIC[@X]=VALUE"
        raise SpecError(
            "--claim",
            f"{text!r}: @{at} is not an interactivity (@X is a positive, finite tok/s/user)",
            f"write e.g. --claim {name}{r1 or ''}@100{r2 or ''}={val}",
        )
    try:
        value = float(val)
    except ValueError:
        raise SpecError("--claim", f"{text!r}: not a number", "write e.g. --claim max_interactivity=700") from None
    if not (value > 0 and math.isfinite(value)):
        raise SpecError(
            "--claim", f"{text!r}: the value {val} is not a positive, finite number", "give a positive number"
        )
    if METRICS[name][2] and x is None:
        raise SpecError(
            "--claim", f"{name} is taken at an interactivity", f"write e.g. --claim {name}@100=VALUE (@X in tok/s/user)"
        )
    if not METRICS[name][2] and x is not None:
        raise SpecError("--claim", f"{name} takes no @X", f"write e.g. --claim {name}=VALUE")
    return Claim(name, value, x, bool(r1 or r2))


@dataclass
class ClaimContext:
    """Everything but the pricer that a metric depends on: the model, workload, precision, sweep
    options, power convention, (``terms``) power-term values for the ``load`` convention, and
    (``instance_chips``) the one instance size, chips per instance (prefill and decode workers together for a
    disaggregated one), whose deployments alone the metric reads: the size a plan leads with (``plan``'s "how
    sure" line audits the deployment it shows first, not the system's frontier; ux50). None: every size."""

    model: object
    workload: object
    precision: object
    options: object = None
    convention: str = "chip"
    terms: dict | None = None
    instance_chips: int | None = None
    _cands: dict = field(default_factory=dict, repr=False)
    #: a claim set's sweep memo (analysis/claim_set.py; None: none): each distinct frontier swept once per run
    sweeps: dict | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.convention not in POWER_CONVENTIONS:
            raise SpecError(
                "--power",
                f"unknown power convention {self.convention!r}{choice_hint(self.convention, POWER_CONVENTIONS)}",
                f"use one of {', '.join(POWER_CONVENTIONS)}",
            )

    # ---- evaluation ------------------------------------------------------------------------
    def full(self, pricer, claim: Claim, names: tuple | None = None):
        """(value, sweep) of ``claim``'s metric (not the ratio) on a full sweep of ``pricer``.

        ``names``: ``(root, what)``, what ``pricer`` is, for the claim set's sweep memo (:attr:`sweeps`): ``root`` a
        pricer the run keeps for its whole length, ``what`` a hashable account of how ``pricer`` derives from it (its
        band, the what-if values applied). The memo is keyed on everything the sweep reads: the model and precision
        objects (the catalog's, one per name), the workload and sweep options (by value) and ``root`` (by identity,
        held by the memo so its id is not reused) with ``what``; the power convention and power terms are read by
        the metric, not the sweep. None, or no memo: a fresh sweep.

        Raises:
            InfeasibleDeployment: nothing fits.
        """
        from jalapeno.analysis.sweep import sweep

        key = None
        if self.sweeps is not None and names is not None:
            key = (id(self.model), self.workload, id(self.precision), self.options, id(names[0]), names[1])
        hit = self.sweeps.get(key) if key is not None else None
        if hit is not None:
            res = hit[-1]
        else:
            res = sweep(self.model, pricer, self.workload, self.precision, self.options)
            if key is not None:  # the objects whose ids the key holds stay alive with it
                self.sweeps[key] = (self.model, self.precision, names[0], res)
        deps = [res.deployments[int(i)] for i in res.dep_index]
        return self._metric(pricer, claim, res.points, deps), (res.points, deps)

    def candidates(self, claim: Claim, points, deps, k: int = 3) -> list:
        """The deployments that decide ``claim``'s metric in a sweep's points (up to ``k`` each side), and the ``k``
        runners-up by the metric's own figure (dominated deployments a parameter may promote: :func:`_runners_up`)."""
        ok = np.flatnonzero(self._valid(points, deps))
        if ok.size == 0:
            return []
        x, y = points.interactivity[ok], points.throughput_per_chip[ok]
        fi = ok[frontier_indices(x, y)]
        if claim.metric == "min_e2e_s":
            pick = ok[np.argsort(points.e2e_s[ok])[:k]]
        elif claim.metric == "max_interactivity":
            pick = np.concatenate([fi[-k:], _runners_up(ok, x, deps, k)])
        elif claim.at is not None:
            j = int(np.searchsorted(points.interactivity[fi], claim.at))
            fast = x >= claim.at  # the runners-up by their best throughput at or above X
            pick = np.concatenate([fi[max(0, j - k) : j + k], _runners_up(ok[fast], y[fast], deps, k)])
        else:  # the peak; per kW / per $ the peak of a per-point power may sit elsewhere: keep a spread
            pick = np.concatenate([fi[:k], fi[:: max(1, fi.size // 6)], _runners_up(ok, y, deps, k)])
        out, seen = [], set()
        for i in pick:
            d = deps[int(i)]
            if d.label not in seen:
                seen.add(d.label)
                out.append(d)
        return out

    def restricted(self, pricer, claim: Claim, deps: list) -> float:
        """``claim``'s metric evaluated only on ``deps`` (each at the sweep's batch grid).

        A disaggregated candidate stands for its layouts and decode workers: at each batch it gets the
        prefill workers the sweep would give it there (analysis/sweep.balanced_workers), so a what-if
        that speeds decode up does not leave it with the prefill pool of the calibrated sweep."""
        from dataclasses import replace

        from jalapeno.analysis.sweep import SweepOptions, balanced_workers, concat_points
        from jalapeno.serve.analytic import aggregated_by_batch
        from jalapeno.serve.disagg import decode_curve, disaggregated_points, prefill_perf

        opt = self.options or SweepOptions()
        batches = np.asarray(opt.batches, dtype=float)
        parts, owners, seen = [], [], set()
        for d in deps:
            if d.prefill is None:
                pts = aggregated_by_batch(self.model, pricer, d, self.workload, batches)
                who = [d] * len(pts)
            else:
                family = replace(d, prefill=replace(d.prefill, workers=1)).label  # its prefill workers vary
                pre = (
                    None
                    if family in seen
                    else prefill_perf(
                        self.model,
                        pricer,
                        d.prefill.layout,
                        d.precision,
                        self.workload,
                        d.prefill_budget(d.prefill.layout),
                    )
                )
                seen.add(family)
                if pre is None or not pre.feasible:
                    continue
                dec = decode_curve(
                    self.model, pricer, d.decode.layout, d.precision, self.workload, batches, d.mtp, d, d.overlap
                )
                keep = np.sort(np.unique(dec.batch, return_index=True)[1])
                xs, ys, bi = balanced_workers(
                    pre, dec, self.workload, keep, d.mtp, pricer.system.max_chips, (d.decode.workers,)
                )
                pts = disaggregated_points(
                    self.model, pricer, d.precision, self.workload, pre, dec, xs, ys, d.mtp, batch_index=bi
                )
                made = {x: replace(d, prefill=replace(d.prefill, workers=x)) for x in set(xs.tolist())}
                who = [made[x] for x in xs.tolist()]
            parts.append(pts)
            owners += who
        if not parts:
            return math.nan
        return self._metric(pricer, claim, concat_points(parts), owners)

    # ---- the metric of a set of points -----------------------------------------------------------
    def _power(self, pricer, points, deps) -> np.ndarray:
        """Power per chip at every point, W, under the context's convention."""
        if self.convention != "load":
            return np.full(len(points), power_w_per_chip(pricer.system, self.convention)[0])
        out = np.full(len(points), np.nan)
        by_dep: dict[int, list[int]] = {}
        for i, d in enumerate(deps):
            by_dep.setdefault(id(d), []).append(i)
        for idx in by_dep.values():
            ii = np.array(idx)
            out[ii] = load_power_w_per_chip(
                self.model,
                pricer,
                deps[idx[0]],
                self.workload,
                points.decode_batch[ii],
                points.step_time_s[ii],
                points.throughput_per_chip[ii],
                self.terms,
            )
        return out

    def _valid(self, points, deps) -> np.ndarray:
        """The points a metric reads, bool (N,): feasible, positive throughput, finite interactivity, and (with
        ``instance_chips``) of a deployment of that many chips."""
        ok = points.feasible & (points.throughput_per_chip > 0) & np.isfinite(points.interactivity)
        if self.instance_chips is not None:
            ok &= np.array([d.chips == self.instance_chips for d in deps], dtype=bool)
        return ok

    def _metric(self, pricer, claim: Claim, points, deps) -> float:
        ok = self._valid(points, deps)
        if not ok.any():
            return math.nan
        x, tput = points.interactivity[ok], points.throughput_per_chip[ok]
        m = claim.metric
        if m == "max_interactivity":
            return float(x.max())
        if m == "min_e2e_s":
            return float(points.e2e_s[ok].min())
        if m == "peak_throughput_per_chip":
            return float(tput.max())
        if m == "peak_tokens_per_usd":
            return float(tput.max() * 3600 / pricer.system.usd_per_chip_hour)
        if m in ("peak_tok_s_per_kw", "tok_s_per_kw"):
            okd = [d for d, k in zip(deps, ok) if k]
            sel = np.flatnonzero(ok)
            if self.convention == "load":
                fi = frontier_indices(x, tput)  # power is drawn per point: only frontier points matter
                w = self._power(pricer, points.take(sel[fi]), [okd[i] for i in fi])
                xs, ys = x[fi], tput[fi] / (w / 1000)
            else:
                xs, ys = x, tput / (power_w_per_chip(pricer.system, self.convention)[0] / 1000)
            if m == "peak_tok_s_per_kw":
                return float(np.nanmax(ys))
            return _at(xs, ys, claim.at)
        return _at(x, tput, claim.at)


def _at(x: np.ndarray, y: np.ndarray, at: float) -> float:
    """The frontier of (x, y) at interactivity ``at`` (NaN where unreachable)."""
    good = np.isfinite(y) & (y > 0)
    x, y = x[good], y[good]
    if x.size == 0:
        return math.nan
    fi = frontier_indices(x, y)
    val, _ = interp_frontier(x[fi], y[fi], np.array([at]))
    return float(val[0])


def _runners_up(ok: np.ndarray, y: np.ndarray, deps: list, k: int) -> np.ndarray:
    """The best point of each of the ``k`` deployments with the highest own ``y`` (indices into the sweep; ``y``:
    throughput for a peak or at-or-above-X claim, interactivity for ``max_interactivity``).

    A peak claim's frontier holds only the winner's points; the runner-up (Kimi K2.5 on Jalapeño: MoE TP8 at
    5,629 under the winner's 5,775 tok/s/chip) is dominated, so a frontier-only candidate set missed it and an
    audit read a parameter that promotes it (``link_half_bytes`` → 0: 6,234 by full sweep) as 5,780, "does not
    move" (round 42).

    Args:
        ok: indices of the sweep's valid points, shape (N,).
        y: their figure (higher is better), shape (N,).
        deps: the sweep's deployment of every point (indexed by ``ok``'s values).
        k: how many deployments.

    Returns:
        Indices into the sweep, shape (<= k,).
    """
    out, seen = [], set()
    for i in ok[np.argsort(-y, kind="stable")]:
        label = deps[int(i)].label
        if label not in seen:
            seen.add(label)
            out.append(int(i))
            if len(out) == k:
                break
    return np.array(out, dtype=int)


def operating_point(ctx: ClaimContext, claim: Claim, points, deps) -> dict | None:
    """The frontier point ``claim``'s metric is read at in one sweep, and the bound of its step: the point a
    sceptic asks about ("at which speed, on which deployment, limited by what?").

    ``max_interactivity``: the fastest valid point; ``min_e2e_s``: the lowest mean E2E; a peak: the highest
    tok/s/chip (under the ``load`` convention the per-kW peak may sit on another frontier point: this is the
    throughput peak); ``@X``: the frontier point nearest X in log tok/s/user, one end of the log-log
    interpolation the metric reads — compare's "why" table picks the same point (analysis/win_ranges.nearest_points).

    Args:
        ctx: the claim's context (its ``instance_chips`` filter applies).
        claim: the claim (its ratio flag is ignored: one side's sweep).
        points: a sweep's ServingPoints, shape (N,) each field; deps: each point's deployment (N,).

    Returns:
        ``{"deployment", "interactivity" (tok/s/user), "throughput_per_chip" (tok/s/chip), "concurrency",
        "chips" (one instance's, prefill + decode workers of a disaggregated one), "bound"}`` (``bound``: analysis/bound_words.bound_cell's text: compute, hbm_bandwidth, scale_up_link,
        scale_out_link, overhead or on_die_network; ``decode X; prefill Y (S of chips)`` disaggregated), or None
        where no valid point reaches the claim's speed.
    """
    from jalapeno.analysis.bound_words import bound_cell, prefill_chip_share
    from jalapeno.analysis.win_ranges import nearest_points

    ok = np.flatnonzero(ctx._valid(points, deps))
    if ok.size == 0:
        return None
    x, y = points.interactivity[ok], points.throughput_per_chip[ok]
    if claim.metric == "max_interactivity":
        i = ok[int(np.argmax(x))]
    elif claim.metric == "min_e2e_s":
        i = ok[int(np.argmin(points.e2e_s[ok]))]
    elif claim.at is None:
        i = ok[int(np.argmax(y))]
    else:
        fi = ok[frontier_indices(x, y)]
        k = nearest_points(points.interactivity[fi], [claim.at])[0]
        if k is None:
            return None
        i = fi[k]
    i = int(i)
    return {
        "deployment": deps[i].label,
        "interactivity": float(points.interactivity[i]),
        "throughput_per_chip": float(points.throughput_per_chip[i]),
        "concurrency": float(points.concurrency[i]),
        "chips": int(points.chips[i]),
        "bound": bound_cell(
            str(points.bound[i]),
            str(points.prefill_bound[i]),
            prefill_chip_share(points.prefill_chips[i], points.chips[i]),
        ),
    }
