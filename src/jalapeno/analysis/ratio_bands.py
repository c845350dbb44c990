"""The efficiency bands of a comparison (``compare --bands``): a system's headline at its low and high efficiency sets
(``efficiency_bands``, each end swept through analysis/system_frontier.py), and each ratio against the baseline taken
again with both systems at their low sets and at their high sets (:data:`BAND_PAIRING`), or at crossed ends where
either side's band is its measured error (:data:`BAND_PAIRING_MEASURED`, analysis/measured_bands.py); the frontier-end
conventions every ratio is flagged by (:data:`END_RTOL`, :data:`TAIL_FRACTION`); and the check of the band pricers
handed in. Split from analysis/comparison.py (round 45, module budget), which calls these; it imports nothing of
comparison.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from jalapeno.analysis import compare as cmp
from jalapeno.analysis.power_cost import CONVENTIONS
from jalapeno.analysis.records import Band, Bands, Headline
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.analysis.system_frontier import headline, system_frontier
from jalapeno.cost.pricer import Pricer, check_pricer
from jalapeno.deploy.engines import Recipe
from jalapeno.errors import SpecError
from jalapeno.specs.formats import Precision
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload

#: Ratios taken within this fraction of either frontier's highest interactivity are labelled
#: ``at_frontier_end``: near its end a frontier's throughput collapses (the last points are
#: overhead-bound, batch ~1), so ratios there explode and say little. A modelling convention.
END_RTOL = 0.10
#: ... and so are ratios where either side's throughput has fallen below this fraction of its
#: frontier's peak (the collapsing tail where a ratio is a quotient of two small numbers).
TAIL_FRACTION = 0.10


def flag_tails(rows: list[dict], a: cmp.Frontier, b: cmp.Frontier) -> list[dict]:
    """``rows`` (the iso-interactivity ratio rows of analysis/compare.iso_interactivity_ratio of ``a`` over ``b``,
    each with ``y_a``/``y_b``) with ``at_frontier_end`` set True where either side's y has collapsed below
    :data:`TAIL_FRACTION` of its frontier's peak (NaN y: not flagged); the same list, changed in place."""
    for r in rows:
        low_a = r["y_a"] == r["y_a"] and r["y_a"] < TAIL_FRACTION * float(a.y.max())
        low_b = r["y_b"] == r["y_b"] and r["y_b"] < TAIL_FRACTION * float(b.y.max())
        if low_a or low_b:
            r["at_frontier_end"] = True
    return rows


#: how a ratio's band pairs two efficiency bands (printed with the ratios and in ``Ratios.bands``)
BAND_PAIRING = (
    "low: the system at its low efficiency set over the baseline at its low set; high: both at their "
    "high sets; a system without a band (user files, what-if sets) at its calibrated set at both ends"
)
#: ... and a pair where either side's band is its measured error (analysis/measured_bands.py): crossed ends
BAND_PAIRING_MEASURED = (
    "low: the system at its unfavourable end over the baseline at its favourable end; high: "
    "the reverse (a measured band is the model's error on that system as validated, p10/p90; "
    "taken as independent of the other side's, so the ends cross: the widest the two errors "
    "can move the ratio; an error both sides share would cancel, so this is an upper bound)"
)


def band_ratios(
    n: str, baseline: str, fr: dict, band_fronts: dict, heads: dict, xs: list, scales: dict, cross: bool = False
) -> dict:
    """The efficiency band of one system's ratios to the baseline (``compare --bands``): each ratio of
    :class:`Ratios` taken again with both systems at their ``low`` sets, then at their ``high`` sets
    (:data:`BAND_PAIRING`). Pairing like ends treats the two bands as moving together; against a baseline
    without a band (every measured system) the band is the system's own.
    ``scales``: ratio kind → {system: y multiplier} (1 per chip; 1000 / W per chip for tok/s/kW; 1 / $ per
    chip-hour for tokens per $), as the calibrated ratios scale their frontiers. ``cross``: either side's band
    is a measured one: the baseline at the opposite end (:data:`BAND_PAIRING_MEASURED`). For a system other than the
    baseline, ``where_wins`` {low, high}: analysis/win_ranges.win_ranges at each end, paired the same way."""

    def front(m: str, which: str) -> cmp.Frontier:
        rec = band_fronts.get(m, {}).get(which)
        if rec is None:  # no band, or the band pricer is the calibrated one
            return fr[m].as_frontier()
        return cmp.Frontier(
            np.array([q.interactivity for q in rec.frontier]), np.array([q.throughput_per_chip for q in rec.frontier])
        )

    def head(m: str, key: str, which: str) -> float:
        b = heads[m].bands
        return getattr(heads[m], key) if b is None else getattr(getattr(b, key), which)

    out: dict = {"pairing": BAND_PAIRING_MEASURED if cross else BAND_PAIRING, "peak_ratio": {}, "iso_interactivity": {}}
    for which in ("low", "high"):
        bw = {"low": "high", "high": "low"}[which] if cross else which
        a, b = front(n, which), front(baseline, bw)
        for kind, sc in scales.items():
            af, bf = cmp.Frontier(a.x, a.y * sc[n]), cmp.Frontier(b.x, b.y * sc[baseline])
            out["peak_ratio"].setdefault(kind, {})[which] = cmp.peak_ratio(af, bf)
            rows = flag_tails(cmp.iso_interactivity_ratio(af, bf, xs, END_RTOL), af, bf)
            out["iso_interactivity"].setdefault(kind, {})[which] = rows
        if n != baseline:  # where it wins at this end of the band (analysis/win_ranges; ux51)
            from jalapeno.analysis.win_ranges import win_ranges

            scale = {kind: sc[n] / sc[baseline] for kind, sc in scales.items()}
            out.setdefault("where_wins", {})[which] = win_ranges(a, b, scale, END_RTOL, TAIL_FRACTION)
        for key in ("max_interactivity", "min_e2e"):
            hk = key if key == "max_interactivity" else "min_e2e_s"
            out.setdefault(f"{key}_ratio", {})[which] = head(n, hk, which) / head(baseline, hk, bw)
    return out


def check_bands(bands, names: list[str]) -> None:
    """``bands``: None, or system name → {"low": Pricer, "high": Pricer[, "calibrated": Pricer]},
    each a pricer of that same system.

    Raises:
        SpecError: another shape, an unknown system, a missing key or another system's pricer.
    """
    if bands is None:
        return
    fix = 'pass {name: {"low": pricer, "high": pricer}}, e.g. from cost/pricer.band_pricers(pricer)'
    if not isinstance(bands, Mapping):
        raise SpecError("bands", f"expected a mapping of system name to band pricers, got {type(bands).__name__}", fix)
    for n, band in bands.items():
        if n not in names:
            raise SpecError(
                "bands",
                f"band for {n!r}, which is not among the compared systems {names}",
                "give bands for compared systems only",
            )
        if (
            not isinstance(band, Mapping)
            or not {"low", "high"} <= set(band)
            or set(band) - {"low", "calibrated", "high"}
        ):
            raise SpecError(f"bands.{n}", "must map exactly low, high (and optionally calibrated) to pricers", fix)
        for which, pr in band.items():
            check_pricer(pr, f"bands.{n}.{which}")
            if pr.system.name != n:
                raise SpecError(
                    f"bands.{n}.{which}",
                    f"is a pricer of {pr.system.name}, not {n}",
                    f"give {n}'s own pricers (band_pricers of its pricer)",
                )


def efficiency_bands(
    model: ModelSpec,
    band: dict[str, Pricer],
    wl: Workload,
    precision: Precision,
    options: SweepOptions | None,
    convention: str,
    mid: Headline,
    mid_pricer: Pricer | None = None,
    precisions: list[str] | None = None,
    recipe: Recipe | None = None,
    keep: dict | None = None,
) -> Bands:
    """Headline figures under a system's low / mid / high pricers (``band`` has ``low`` and ``high``).

    A band is just other pricers of the same system (cost/pricer.band_pricers builds them from
    the calibration file: measured systems have the same set for all three unless their file
    carries a band; derived ones (Jalapeño, Vera Rubin, AMD) carry one; a user file has none).
    Where a band pricer is ``mid_pricer`` itself, its headline is ``mid`` (no second sweep).
    With ``keep`` (a dict), the low and high frontiers are stored there as FrontierRecords under
    ``"low"``/``"high"`` (None where the band pricer is ``mid_pricer``): the charts shade them.
    """
    out = {}
    for which in ("low", "high"):
        pr = band[which]
        if pr is mid_pricer:
            out[which] = mid
            if keep is not None:
                keep[which] = None
            continue
        sf = system_frontier(model, pr, wl, precision, options, convention, precisions=precisions, recipe=recipe)
        out[which] = headline(sf)
        if keep is not None:
            keep[which] = sf.record()
    out["mid"] = mid
    keys = ("peak_throughput_per_chip", "max_interactivity", "min_e2e_s")
    return Bands(
        **{k: Band(*(getattr(out[w], k) for w in ("low", "mid", "high"))) for k in keys},
        peak_tok_s_per_kw={w: {c: out[w].peak_tok_s_per_kw[c] for c in CONVENTIONS} for w in ("low", "mid", "high")},
    )
