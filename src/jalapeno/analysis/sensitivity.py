"""One-at-a-time sensitivity: each uncertain parameter moved across its band (a tornado).

For a metric of a system's frontier (analysis/claims.py) and every uncertain parameter
(analysis/uncertain.py: fixed costs, efficiencies, specs marked estimate, power terms with the
``load`` convention), the metric at the parameter's low and high band ends with every other
parameter as priced. Evaluated on the deployments that decide the metric in full sweeps at the
calibrated values and at the physical limit (the same serving model, restricted to those
candidates; analysis/claims.ClaimContext.restricted), so a parameter that changes which
deployment wins is seen as long as that deployment decides the metric at either end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jalapeno.analysis.claims import Claim, ClaimContext, parse_claim
from jalapeno.analysis.uncertain import apply, physical_limit, uncertain_parameters
from jalapeno.errors import JalapenoError, SpecError


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

    def as_dict(self) -> dict:
        """The JSON of ``sensitivity``: system, metric, its unit and value, the rows, the context."""
        return {
            "system": self.system,
            "metric": self.metric,
            "unit": self.unit,
            "value": self.value,
            "rows": [r.as_dict() for r in self.rows],
            "context": self.context,
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

    rows = [
        SensitivityRow(p.key, p.kind, p.current, p.low, p.high, at(p.key, p.low), at(p.key, p.high), p.band_source)
        for p in params
    ]
    rows.sort(key=lambda r: -(r.swing if math.isfinite(r.swing) else -1))
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
