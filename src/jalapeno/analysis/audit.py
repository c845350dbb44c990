"""Claim audit: a stated figure held against the model (DESIGN.md §8 "Claim audit").

For a claim (analysis/claims.py) about a system, optionally against a baseline:

1. the predicted value with its band (full sweeps under the calibrated, low and high efficiency
   sets, a derived system's ``estimate = true`` specs at their slower end in the low sweep and their
   faster end in the high one, as compare --bands (analysis/spec_bands.with_estimated_specs,
   ESTIMATED_SPEC_BANDS_ON); a system fitted on its own kernels, whose sets are one: its measured error band,
   analysis/measured_bands.py; a ratio takes the baseline at its calibrated set, with its measured
   band's ends crossed against the system's where it has one);
2. the physical limit: every fixed cost 0, every efficiency 1 (links at line rate), the stated
   specs kept (analysis/uncertain.physical_limit) — a full sweep;
3. for each uncertain parameter alone, the value it would need (root-finding between its current
   value and its physical end, on the candidate deployments that decide the metric), how far
   that is from the current value (``factor``) and whether it is inside the band; "none in range"
   when even its physical end does not reach the claim; ``moves_metric`` False where neither end
   of its search range moves the metric at all (the CLI lists those on one line), ``best_in_range``
   the metric at the better end of that range (how far the parameter alone gets). Every value
   found is re-checked with a full sweep (and refined once on its candidates when that moved it by
   more than 0.5%). The same for each stated headline spec alone (``spec_changes``: peaks, HBM
   bandwidth and capacity, scale-up bandwidth, analysis/uncertain.headline_parameters) — what the chip itself
   would have to be; these never enter the verdict, which is under the stated specs. A row's ``moves_with``
   ({key: value}, at the required value, else at the far end searched) is what the search moved with it
   (specs/variants.moved_together: usable HBM with capacity; a level's shared ports, their link power priced);
4. joint changes: every fixed cost and efficiency at the favourable end of its band at once, with the
   estimated specs the band holds at their faster end (``band_ends``), and the smallest common move — fixed
   costs scaled together by a factor k
   (``fixed_costs_factor``), efficiencies moved together a fraction s of the way to their limit (fractions to 1, half
   rows and token passes to 0)
   (``efficiency_toward_peak``), and both with one s (``together``) — by root-finding, each
   re-checked with a full sweep;
5. the verdict: ``holds`` (the prediction meets the claim), ``plausible`` (some change inside the
   bands meets it: the band's far end — efficiency or measured error, step 1 — one parameter or the
   joint move), ``requires`` (only changes
   outside the bands do — named), ``impossible`` (not even the physical limit meets it under the
   stated specs).

"Meets": at least the claim for higher-is-better metrics, at most for ``min_e2e_s``, within
:data:`RTOL`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from jalapeno.analysis.claims import Claim, ClaimContext, operating_point
from jalapeno.analysis.uncertain import Parameter, apply, headline_parameters, physical_limit, uncertain_parameters
from jalapeno.specs.variants import moved_together

#: Relative tolerance of "meets the claim" (a claim equal to the prediction holds).
RTOL = 1e-3
#: Root-finding stops when the metric is within this relative distance of the claim.
ROOT_RTOL = 2e-3


def meets_claim(v: float | None, claim: float, higher: bool) -> bool:
    """Whether value ``v`` meets ``claim`` within :data:`RTOL` (at least it, or at most it where lower is better); None
    or a non-finite value does not.

    >>> meets_claim(0.9995, 1.0, True), meets_claim(0.998, 1.0, True), meets_claim(1.0005, 1.0, False)
    (True, False, True)
    """
    if v is None or not math.isfinite(v):
        return False
    return v >= claim * (1 - RTOL) if higher else v <= claim * (1 + RTOL)


@dataclass
class AuditResult:
    """The audit of one claim; :meth:`as_dict` is the ``jalapeno audit --json`` contract."""

    claim: Claim
    system: str
    baseline: str | None
    predicted: float
    low: float
    high: float
    physical_limit: float
    verdict: str
    changes: list[dict]
    joint_change: dict
    baseline_value: float | None = None
    #: what the band (low, high) is: efficiency sets, measured error (analysis/measured_bands.py), both, or none
    band_source: str = ""
    context: dict = field(default_factory=dict)
    #: each stated headline spec alone (peak, HBM bandwidth, scale-up bandwidth): the value the claim needs
    spec_changes: list[dict] = field(default_factory=list)
    #: the frontier point the calibrated metric is read at, ``{"system": {...}, "baseline": {...} or None}``
    #: (analysis/claims.operating_point: deployment, tok/s/user, tok/s/chip, concurrency, step bound)
    operating_point: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        """The JSON of ``audit``: the claim, the predicted value with its band, the physical limit, the verdict
        and the changes that would make the claim hold."""
        return {
            "claim": {
                "metric": self.claim.name,
                "value": self.claim.value,
                "system": self.system,
                "baseline": self.baseline,
                "unit": self.claim.unit,
            },
            "predicted": {"value": self.predicted, "low": self.low, "high": self.high, "band": self.band_source},
            "physical_limit": self.physical_limit,
            "verdict": self.verdict,
            "changes": self.changes,
            "spec_changes": self.spec_changes,
            "joint_change": self.joint_change,
            "baseline_value": self.baseline_value,
            "operating_point": self.operating_point,
            "context": self.context,
        }


def claim_gap(claim: Claim, v: float | None) -> float:
    """Signed log distance of a metric value ``v`` to ``claim``, > 0 where it meets it (higher-is-better
    or not); -inf for a missing, non-finite or non-positive value."""
    if v is None or not math.isfinite(v) or v <= 0:
        return -math.inf
    g = math.log(v / claim.value)
    return g if claim.higher_is_better else -g


class _Auditor:
    """Evaluations of one claim on one system (cached), as a ratio when a baseline is given."""

    def __init__(self, ctx: ClaimContext, pricer, claim: Claim, base_value: float | None):
        self.ctx, self.pricer, self.claim, self.base = ctx, pricer, claim, base_value
        self.cands: list = []
        self.cache: dict = {}
        self.invalid: set = set()  # keys of values that are not a valid system (the schema refused them)
        self.full_sweeps = 0
        self.last_sweep = None  # (points, deployments) of the latest full sweep
        self.fast_evaluations = 0

    def _scale(self, v: float) -> float:
        return v / self.base if self.base else v

    def meets(self, v: float) -> bool:
        return meets_claim(v, self.claim.value, self.claim.higher_is_better)

    def gap(self, v: float) -> float:
        """Signed distance to the claim, > 0 where it is met (log scale): :func:`claim_gap`."""
        return claim_gap(self.claim, v)

    def add_candidates(self, sweep) -> None:
        points, deps = sweep
        have = {d.label for d in self.cands}
        self.cands += [d for d in self.ctx.candidates(self.claim, points, deps) if d.label not in have]

    def full(self, values: dict) -> float:
        pr, terms = apply(self.pricer, values)
        ctx = _with_terms(self.ctx, terms)
        v, sw = ctx.full(pr, self.claim, (self.pricer, ("what-if", tuple(sorted(values.items())))))
        self.last_sweep = sw
        self.full_sweeps += 1
        self.add_candidates(sw)
        return self._scale(v)

    def fast(self, values: dict) -> float:
        """The metric on the candidate deployments; NaN where the values are not a valid system
        (:meth:`valid` tells that apart from a metric the frontier does not define there, such as
        a throughput at a per-user speed it never reaches)."""
        from jalapeno.errors import JalapenoError

        key = tuple(sorted(values.items()))
        if key not in self.cache:
            self.fast_evaluations += 1
            try:
                pr, terms = apply(self.pricer, values)
                self.cache[key] = self._scale(_with_terms(self.ctx, terms).restricted(pr, self.claim, self.cands))
            except JalapenoError:
                self.cache[key] = math.nan
                self.invalid.add(key)
        return self.cache[key]

    def valid(self, values: dict) -> bool:
        """Whether ``values`` make a valid system (evaluated once through :meth:`fast`)."""
        self.fast(values)
        return tuple(sorted(values.items())) not in self.invalid

    def root(self, move, a: float, b: float, evaluate=None) -> float | None:
        """The value t in [a, b] (``move(t)`` → parameter values) where the metric meets the claim
        at its boundary; ``a`` must miss and ``b`` meet. Illinois regula falsi on the log gap."""
        ev = evaluate or self.fast
        ga, gb = self.gap(ev(move(a))), self.gap(ev(move(b)))
        if not gb >= 0:
            return None
        if ga >= 0:
            return a
        if not math.isfinite(ga):
            ga = -1.0
        side = 0
        t = b
        for _ in range(14):
            t = b - gb * (b - a) / (gb - ga) if math.isfinite(gb) and gb != ga else 0.5 * (a + b)
            if not (min(a, b) < t < max(a, b)):
                t = 0.5 * (a + b)
            g = self.gap(ev(move(t)))
            if g >= 0 and g < ROOT_RTOL:
                return t
            if g >= 0:
                b, gb = t, g
                if side == 1:
                    ga /= 2
                side = 1
            else:
                a, ga = t, g if math.isfinite(g) else ga
                if side == -1:
                    gb /= 2
                side = -1
            if abs(b - a) <= 1e-9 * max(abs(a), abs(b), 1e-30):
                break
        return b


def _with_terms(ctx: ClaimContext, terms: dict | None) -> ClaimContext:
    if not terms:
        return ctx
    from dataclasses import replace

    return replace(ctx, terms={**(ctx.terms or {}), **terms})


def _param_move(p: Parameter, target: float):
    """(move(t) → {key: value}, a, b): t runs from the current value (a) to ``target`` (b); in log
    space where both ends are positive and a decade or more apart."""
    if p.current > 0 and target > 0 and max(p.current, target) / min(p.current, target) >= 10:
        return (lambda t: {p.key: math.exp(t)}), math.log(p.current), math.log(target)
    return (lambda t: {p.key: t}), p.current, target


def _solve_param(aud: _Auditor, p: Parameter) -> dict:
    """The value ``p`` alone would need (None: none in its physical range)."""
    best_end, best_gap, best_value, searched = None, -math.inf, None, []
    for e in (p.lo, p.hi):
        for _ in range(8):  # an end the schema refuses (usable HBM above nominal): halve toward current
            # (not a NaN metric on a valid system: halving then cost 16 sweeps per parameter for a
            # claim at a speed the frontier never reaches, 17.5 s for nothing)
            if e == p.current or aud.valid({p.key: e}):
                break
            e = p.current + (e - p.current) / 2
        if e == p.current:
            continue
        searched.append(e)
        v = aud.fast({p.key: e})
        g = aud.gap(v)
        if g > best_gap or best_end is None and math.isfinite(v):
            best_end, best_gap, best_value = e, g, v
    now = aud.fast({})  # an end at the current value is skipped above; it is still in the range
    if math.isfinite(now) and (best_value is None or not math.isfinite(best_value) or aud.gap(now) > best_gap):
        best_value = now  # (MI355X custom_ar_fraction at its limit 1 read 124.2 'best alone' under 128.4 as priced)
    row = {
        "parameter": p.key,
        "kind": p.kind,
        "current": p.current,
        "band": [p.low, p.high],
        "band_source": p.band_source,
        "required": None,
        "factor": None,
        "within_band": False,
        "note": "none in range",
        "search_range": [min(searched + [p.current]), max(searched + [p.current])],
        "moves_metric": _moves(aud, [{p.key: e} for e in searched]),
        "best_in_range": best_value if best_value is not None and math.isfinite(best_value) else None,
        # what the search moved with it (usable HBM with capacity, shared ports with a level), at its far end
        "moves_with": moved_together(aud.pricer.system, {p.key: max(searched + [p.current])}),
    }
    if best_end is None or best_gap < 0:
        return row
    move, a, b = _param_move(p, best_end)
    found = _checked_root(aud, move, a, b)
    if found is None:
        return row
    vals, full = found
    req = vals[p.key]
    row.update(
        required=req,
        factor=req / p.current if p.current else None,
        within_band=p.within_band(req),
        note="",
        value_at_required=full,
        moves_with=moved_together(aud.pricer.system, {p.key: req}),
    )
    return row


def _moves(aud: _Auditor, ends: list[dict]) -> bool:
    """Whether a parameter moves the claim's metric anywhere in its search range: False only where the
    metric at each searched end (``ends``: one {key: value} per end :func:`_solve_param` evaluated,
    already cached; a range end the schema refuses is searched halved toward the current value) is finite and within
    :data:`RTOL` of the metric as priced (a KV-tier capacity on an 8k/1k interactivity claim); a NaN
    end (an undefined @X) counts as moving, so nothing is hidden for lack of a figure."""
    now = aud.fast({})
    if not math.isfinite(now) or now == 0:
        return True
    vals = [aud.fast(e) for e in ends]
    return not vals or any(not math.isfinite(v) or abs(v / now - 1) > RTOL for v in vals)


def _checked_root(aud: _Auditor, move, a: float, b: float):
    """(values, metric by full sweep) at the root of ``move`` on [a, b]; the root is re-checked with
    a full sweep and, when that moved the metric by more than 0.5%, found again on the candidates
    the full sweep added. None when no value in [a, b] meets the claim."""
    t = aud.root(move, a, b)
    if t is None:
        return None
    full = aud.full(move(t))
    if abs(aud.gap(full)) > 5e-3:
        aud.cache.clear()
        t2 = aud.root(move, a, b)
        if t2 is not None:
            t, full = t2, aud.full(move(t2))
    return move(t), full


def _joint(
    aud: _Auditor, params: list[Parameter], limit_met: bool, specs: tuple = (), stated: dict | None = None
) -> dict:
    """Joint changes of the fixed costs and efficiencies (module docstring, step 4). ``specs``: the estimated specs
    the band holds (analysis/spec_bands.banded_specs): the all-favourable corner takes each at its faster end too,
    with the system's stated watts and $/chip-hour (``stated``: spec_bands.stated_power), as the band's high end
    does, so the corner still reaches the band's top (docs/audit.md §5); the moves toward the limits keep the
    stated specs."""
    from jalapeno.analysis.spec_bands import slow_fast

    fixed = [p for p in params if p.kind == "fixed_cost"]
    effs = [p for p in params if p.kind == "efficiency"]
    corner = {p.key: p.favourable_end for p in fixed + effs} | {p.key: slow_fast(p)[1] for p in specs}
    corner |= (stated or {}) if specs else {}

    def toward(group):
        return lambda s: {p.key: p.current + s * (p.limit - p.current) for p in group}

    moves = {
        "fixed_costs_factor": toward(fixed),
        "efficiency_toward_peak": toward(effs),
        "together": toward(fixed + effs),
    }
    out: dict = {"band_ends": {"value": aud.full(corner), "parameters": corner}}
    out["within_band"] = aud.meets(out["band_ends"]["value"])
    for name, move in moves.items():
        found = _checked_root(aud, move, 0.0, 1.0) if limit_met else None
        if found is None:
            out[name] = None
            continue
        vals, full = found
        # the move's amount, read back from a parameter it moves
        p0 = next((p for p in params if p.key in vals and p.limit != p.current), None)
        s = (vals[p0.key] - p0.current) / (p0.limit - p0.current) if p0 is not None else 0.0
        out[name] = {
            "value": 1 - s if name == "fixed_costs_factor" else s,
            "metric_at_change": full,
            "within_band": all(p.within_band(vals[p.key]) for p in params if p.key in vals),
            "parameters": vals,
        }
    return out


def _measured_ends(
    ctx: ClaimContext,
    claim: Claim,
    pricer,
    baseline,
    vals: list,
    pred_sw,
    base_value,
    base_sw,
    aud: _Auditor,
    specs: tuple = (),
) -> tuple[list, str]:
    """The band's values with the measured error bands (analysis/measured_bands.py) added: the audited
    system's where it has no efficiency band (``vals`` is the prediction alone), and a ratio's
    baseline's where it has none: every system value over each of the baseline's values (its
    prediction and both measured ends), so the band's ends are the crossed ones (docs/audit.md §3.1).
    ``specs``: the estimated specs the efficiency band holds (analysis/spec_bands.banded_specs), named in what the
    band is. Returns (values, what the band is)."""
    from jalapeno.analysis.measured_bands import scale_points, without_efficiency_band
    from jalapeno.cost.pricer import band_pricers

    said = ["efficiency sets" + (f" with the estimated specs ({', '.join(p.key for p in specs)})" if specs else "")]
    said = said if len(vals) > 1 else []
    mb = without_efficiency_band(pricer, band_pricers(pricer), ctx.model.name) if len(vals) == 1 else None
    if mb is not None:
        pts, deps = pred_sw
        vals = vals + [aud._scale(ctx._metric(pricer, claim, scale_points(pts, mb, w), deps)) for w in ("low", "high")]
        said.append(mb.describe())
    bmb = without_efficiency_band(baseline, band_pricers(baseline), ctx.model.name) if baseline is not None else None
    if bmb is not None and base_value:
        pts, deps = base_sw
        ends = [ctx._metric(baseline, claim, scale_points(pts, bmb, w), deps) for w in ("low", "high")]
        vals = [v * base_value / b for v in vals for b in (base_value, *ends)]
        said.append("baseline " + bmb.describe())
    return vals, "; ".join(said)


def audit_claim(ctx: ClaimContext, pricer, claim: Claim, baseline=None) -> AuditResult:
    """Audit ``claim`` about ``pricer``'s system (module docstring), against ``baseline`` (a
    pricer) when the claim is a ratio.

    Raises:
        SpecError: a ratio claim without a baseline, a baseline given for a plain claim, or the
            audited system (same efficiency set) as its own baseline.
        InfeasibleDeployment: the model does not fit the system or the baseline.
    """
    from jalapeno.analysis.measured_bands import same_set
    from jalapeno.analysis.spec_bands import banded_specs, stated_power, with_estimated_specs
    from jalapeno.cost.pricer import band_pricers
    from jalapeno.errors import SpecError

    if claim.ratio != (baseline is not None):
        raise SpecError(
            "--baseline",
            "a ratio claim needs a baseline and a plain claim takes none",
            f"{'add --baseline SYSTEM' if claim.ratio else 'drop --baseline, or claim ' + claim.metric + '_ratio'}",
        )
    if baseline is not None and (baseline.system.name, baseline.efficiency) == (pricer.system.name, pricer.efficiency):
        # the ratio of a system to itself is 1 whatever holds; moving only one side's parameters
        # would report a band and requirements for a comparison that is not one
        raise SpecError(
            "--baseline",
            f"{baseline.system.name!r} is the audited system itself (same efficiency set)",
            "name another system, a variant of it (--set on --system) or another --efficiency",
        )
    base_value, base_sw = None, None
    if baseline is not None:
        base_value, base_sw = ctx.full(baseline, claim, (baseline, ("what-if", ())))
    aud = _Auditor(ctx, pricer, claim, base_value)
    predicted = aud.full({})
    pred_sw = aud.last_sweep
    raw = band_pricers(pricer)
    bands = with_estimated_specs(pricer, raw)  # compare's and report's --bands band (analysis/spec_bands.py)
    vals = [predicted]
    for w in ("low", "high"):
        if not same_set(bands[w], pricer):
            v, sw = ctx.full(bands[w], claim, (pricer, ("band", w, bands is not raw)))
            aud.add_candidates(sw)
            vals.append(aud._scale(v))
    specs = tuple(banded_specs(pricer, raw))
    vals, band_source = _measured_ends(ctx, claim, pricer, baseline, vals, pred_sw, base_value, base_sw, aud, specs)
    finite = [v for v in vals if math.isfinite(v)]
    lo, hi = (min(finite), max(finite)) if finite else (math.nan, math.nan)
    if finite and len(finite) < len(vals):  # a setting whose frontier never reaches @X: that end is undefined,
        lo, hi = (math.nan, hi) if claim.higher_is_better else (lo, math.nan)  # not a band of one value (4527-4527)
    best_band = hi if claim.higher_is_better else lo
    params = uncertain_parameters(pricer, ctx.model, ctx.precision, ctx.convention)
    limit_values = physical_limit(params)
    limit = aud.full(limit_values)
    changes: list[dict] = []
    spec_changes: list[dict] = []
    joint: dict = {}
    if aud.meets(predicted):
        verdict = "holds"
    else:
        for p in params:
            changes.append(_solve_param(aud, p))
        joint = _joint(aud, params, aud.meets(limit), specs, stated_power(pricer.system))
        # what the chip itself would need: each stated headline spec alone (the verdict stays under the stated specs)
        spec_changes = [_solve_param(aud, p) for p in headline_parameters(pricer, {p.key for p in params})]
        if not aud.meets(limit) and not any(c["required"] is not None for c in changes):
            verdict = "impossible"
        elif aud.meets(best_band) or any(c["within_band"] for c in changes) or joint.get("within_band"):
            verdict = "plausible"
        else:
            verdict = "requires"
    return AuditResult(
        claim,
        pricer.system.name,
        baseline.system.name if baseline is not None else None,
        predicted,
        lo,
        hi,
        limit,
        verdict,
        changes,
        joint,
        base_value,
        band_source,
        {
            "model": ctx.model.name,
            "workload": ctx.workload.name,
            "precision": ctx.precision.name,
            "power": ctx.convention,
            "efficiency_source": pricer.efficiency.source,
            "baseline_efficiency_source": baseline.efficiency.source if baseline is not None else None,
            "full_sweeps": aud.full_sweeps,
            "fast_evaluations": aud.fast_evaluations,
            "physical_limit_parameters": limit_values,
        },
        spec_changes,
        {
            "system": operating_point(ctx, claim, *pred_sw) if pred_sw else None,
            "baseline": operating_point(ctx, claim, *base_sw) if base_sw else None,
        },
    )
