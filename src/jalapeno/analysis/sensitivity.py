"""One-at-a-time sensitivity: each uncertain parameter moved across its band (a tornado).

For a metric of a system's frontier (analysis/claims.py) and every uncertain parameter
(analysis/uncertain.py: fixed costs, efficiencies, specs marked estimate, power terms with the
``load`` convention), the metric at the parameter's low and high band ends with every other
parameter as priced. Evaluated on the deployments that decide the metric in full sweeps at the
calibrated values and at the physical limit (the same serving model, restricted to those
candidates; analysis/claims.ClaimContext.restricted), so a parameter that changes which
deployment wins is seen as long as that deployment decides the metric at either end.

Beside the tornado, the system's *stated* specs (:func:`stated_parameters`: every peak FLOP/s format, HBM bandwidth
and capacity, each level's bandwidth, and the per-chip power the convention reads — the specs a hardware architect
asks d(metric)/d(spec) of, which are not uncertain and so have no band) are each moved by :data:`STATED_STEP` either
way, and each row carries its elasticity d ln(metric) / d ln(parameter) (:attr:`SensitivityRow.elasticity`): a
purely HBM-bound decode step gives d ln(TPOT) / d ln(HBM bandwidth) = -1, so interactivity's elasticity is +1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jalapeno.analysis.claims import Claim, ClaimContext, parse_claim
from jalapeno.analysis.uncertain import Parameter, apply, headline_parameters, physical_limit, uncertain_parameters
from jalapeno.errors import JalapenoError, SpecError

#: The what-if step a stated spec is moved by, either way (named assumption: a small step, so the two ends give the
#: local elasticity as a central difference, yet large enough that a deployment change inside it is seen; not an
#: uncertainty: the stated figure is the vendor's).
STATED_STEP = 0.10
#: The per-chip power figure each power convention reads (analysis/power_cost.power_w_per_chip): the stated spec a
#: per-kW metric moves with (``load`` reads the power model's terms, listed in the tornado with that convention).
POWER_KEY = {"chip": "chip.tdp_w", "sustained": "chip.sustained_w", "all-in": "power.allin_kw_per_chip"}
#: The unit of a parameter by its key's ending (STYLE.md §6: keys carry their unit), first match wins.
_UNITS = (
    ("peak_dense_tflops", "TFLOP/s"),
    ("_tb_per_s", "TB/s"),
    ("_gb_per_s", "GB/s"),
    ("_kw_per_chip", "kW"),
    ("usd_per_chip_hour", "$/h"),
    ("_gb_per_chip", "GB"),
    ("_gib", "GiB"),
    ("_gb", "GB"),
    ("_us", "µs"),
    ("_ns", "ns"),
    ("_s_per_token", "s/token"),
    ("_bytes", "bytes"),
    ("_w", "W"),
    ("_s", "s"),
    ("half_rows", "rows"),
    ("token_passes", "passes"),
)


def unit_of(key: str) -> str:
    """The unit of parameter ``key`` read from its name (``''`` for a fraction or an unnamed unit).

    >>> unit_of("chip.hbm_bandwidth_tb_per_s"), unit_of("chip.peak_dense_tflops.fp4"), unit_of("chip.tdp_w")
    ('TB/s', 'TFLOP/s', 'W')
    >>> unit_of("levels.rack.bandwidth_gb_per_s"), unit_of("chip.hbm_capacity_gib"), unit_of("efficiency.hbm_fraction")
    ('GB/s', 'GiB', '')
    """
    leaf = "peak_dense_tflops" if ".peak_dense_tflops." in key else key.split(".")[-1]
    return next((u for end, u in _UNITS if leaf.endswith(end)), "")


def stated_parameters(pricer, convention: str | None, skip: set[str] | frozenset = frozenset()) -> list[Parameter]:
    """The stated specs of ``pricer``'s system (analysis/uncertain.headline_parameters: each peak FLOP/s format, HBM
    bandwidth and nominal capacity — the usable capacity moved with it —, each level's bandwidth) and the per-chip
    power ``convention`` reads (:data:`POWER_KEY`; None: no power figure, for a metric that reads none), minus ``skip`` (the estimated ones, in the tornado with their
    band already), each with the band value x (1 -/+ :data:`STATED_STEP`). Kind ``stated``; empty for a system with
    no file form."""
    from jalapeno.analysis.uncertain import _spec_value

    heads = headline_parameters(pricer, skip)
    key = POWER_KEY.get(convention)
    data = pricer.system.origin.data if pricer.system.origin is not None else None
    v = _spec_value(data, key) if key is not None and key not in skip and data is not None else None
    if v is not None and v > 0:
        heads.append(Parameter(key, v, v, v, None, v / 2, 2 * v, "headline", "", "lower"))
    src = f"stated spec: a ±{STATED_STEP:.0%} what-if step (not an uncertainty)"
    lo, hi = 1 - STATED_STEP, 1 + STATED_STEP
    return [
        Parameter(p.key, p.current, p.current * lo, p.current * hi, None, p.lo, p.hi, "stated", src, p.better)
        for p in heads
    ]


def parse_metric(text: str) -> Claim:
    """``METRIC[@X]`` (as a claim without a value) → a :class:`Claim` whose value is NaN.

    Raises:
        SpecError: as :func:`~jalapeno.analysis.claims.parse_claim`, naming ``--metric``.
    """
    from dataclasses import replace

    from jalapeno.errors import SpecError

    if "=" in (text or ""):
        raise SpecError("--metric", f"{text!r} has a value", "give the metric alone, e.g. --metric max_interactivity")
    try:
        c = parse_claim(f"{text}=1")
    except SpecError as e:
        problem = e.problem.replace(f"{text}=1", text).replace(" is not METRIC[@X]=VALUE", " is not METRIC[@X]")
        raise SpecError(
            "--metric",
            problem,
            e.fix.replace("--claim", "--metric")
            .replace("=700", "")
            .replace("@100=1", "@100")
            .replace("=VALUE", "")  # a metric has no value (break49)
            .replace(" (each also as <metric>_ratio)", ""),
        ) from None  # a ratio is refused below
    if c.ratio:
        raise SpecError(
            "--metric",
            "sensitivity is of one system's metric, not a ratio",
            f"use --metric {c.metric}" + (f"@{c.at:g}" if c.at is not None else ""),
        )
    return replace(c, value=math.nan)


@dataclass(frozen=True)
class SensitivityRow:
    """The metric with one parameter at each end of its band."""

    parameter: str
    kind: str
    current: float
    low: float
    high: float
    metric_at_low: float
    metric_at_high: float
    band_source: str
    unit: str = ""

    @property
    def elasticity(self) -> float:
        """d ln(metric) / d ln(parameter) across the band: ln(at high / at low) / ln(high / low) (a central
        difference for a stated spec's ±step); NaN where an end is not finite and positive, or the band is one value.

        >>> round(SensitivityRow("chip.hbm_bandwidth_tb_per_s", "stated", 8.0, 7.2, 8.8, 90.0, 110.0, "").elasticity, 9)
        1.0
        """
        a, b = self.metric_at_low, self.metric_at_high
        if not (math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0 and 0 < self.low < self.high):
            return math.nan
        return math.log(b / a) / math.log(self.high / self.low)

    @property
    def swing(self) -> float:
        """|metric at high - metric at low|, in the metric's unit; NaN where either end is not finite."""
        a, b = self.metric_at_low, self.metric_at_high
        return abs(b - a) if math.isfinite(a) and math.isfinite(b) else math.nan

    def as_dict(self) -> dict:
        """The row as JSON (parameter, its band, the metric at each end, swing, band source)."""
        return {
            "parameter": self.parameter,
            "kind": self.kind,
            "current": self.current,
            "low": self.low,
            "high": self.high,
            "metric_at_low": self.metric_at_low,
            "metric_at_high": self.metric_at_high,
            "swing": self.swing,
            "band_source": self.band_source,
            "unit": self.unit,
            "elasticity": self.elasticity,
        }


@dataclass(frozen=True)
class Sensitivity:
    """A tornado: the metric as priced and one row per parameter, largest swing first."""

    system: str
    metric: str
    unit: str
    value: float
    rows: tuple[SensitivityRow, ...]
    context: dict
    #: the stated specs, each moved ±STATED_STEP (kind ``stated``), largest |elasticity| first
    stated: tuple[SensitivityRow, ...] = ()

    def as_dict(self) -> dict:
        """The JSON of ``sensitivity``: system, metric, its unit and value, the rows, the context, and the stated
        specs' rows (``stated``)."""
        return {
            "system": self.system,
            "metric": self.metric,
            "unit": self.unit,
            "value": self.value,
            "rows": [r.as_dict() for r in self.rows],
            "context": self.context,
            "stated": [r.as_dict() for r in self.stated],
        }


def sensitivity(ctx: ClaimContext, pricer, metric: Claim) -> Sensitivity:
    """Move each uncertain parameter of ``pricer``'s system across its band, one at a time.

    Raises:
        InfeasibleDeployment: the model does not fit the system.
        SpecError: a metric at @X that the system's frontier never reaches (a tornado of blanks).
    """
    value, sw = ctx.full(pricer, metric)
    if metric.at is not None and not math.isfinite(value):
        _refuse_unreached(metric, pricer.system.name, sw[0])
    cands = ctx.candidates(metric, *sw)
    params = uncertain_parameters(pricer, ctx.model, ctx.precision, ctx.convention)
    lim_pr, lim_terms = apply(pricer, physical_limit(params))
    _, sw_lim = _ctx(ctx, lim_terms).full(lim_pr, metric)
    have = {d.label for d in cands}
    cands += [d for d in ctx.candidates(metric, *sw_lim) if d.label not in have]

    def at(key: str, v: float) -> float:
        try:
            pr, terms = apply(pricer, {key: v})
            return _ctx(ctx, terms).restricted(pr, metric, cands)
        except JalapenoError:
            return math.nan

    def row(p: Parameter) -> SensitivityRow:
        lo, hi = at(p.key, p.low), at(p.key, p.high)
        return SensitivityRow(p.key, p.kind, p.current, p.low, p.high, lo, hi, p.band_source, unit_of(p.key))

    rows = [row(p) for p in params]
    rows.sort(key=lambda r: -(r.swing if math.isfinite(r.swing) else -1))
    power = ctx.convention if "per_kw" in metric.metric else None  # a per-kW metric's power figure only
    stated = [row(p) for p in stated_parameters(pricer, power, {p.key for p in params})]
    stated.sort(key=lambda r: -(abs(r.elasticity) if math.isfinite(r.elasticity) else -1))
    return Sensitivity(
        pricer.system.name,
        metric.name,
        metric.unit,
        value,
        tuple(rows),
        {
            "model": ctx.model.name,
            "workload": ctx.workload.name,
            "precision": ctx.precision.name,
            "power": ctx.convention,
            "efficiency_source": pricer.efficiency.source,
        },
        tuple(stated),
    )


def _refuse_unreached(metric: Claim, system: str, points) -> None:
    """``--metric throughput_per_chip@1e9`` printed a table of '-' and exit 0: @X beyond the frontier's
    fastest point leaves the metric undefined at every band end."""
    import numpy as np

    ok = points.feasible & (points.throughput_per_chip > 0) & np.isfinite(points.interactivity)
    top = float(points.interactivity[ok].max()) if ok.any() else math.nan
    raise SpecError(
        "--metric",
        f"{metric.metric}@{metric.at:g} is undefined on {system}: its frontier reaches at most {top:.1f} tok/s/user",
        f"give @X of at most {math.floor(top) if math.isfinite(top) else 0}, "
        f"e.g. --metric {metric.metric}@{max(1, math.floor(top / 2)) if math.isfinite(top) else 10}",
    )


def _ctx(ctx: ClaimContext, terms):
    if not terms:
        return ctx
    from dataclasses import replace

    return replace(ctx, terms={**(ctx.terms or {}), **terms})
