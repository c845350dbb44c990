"""A measured system's own error band: how far `jalapeno validate` finds the model off on it.

A system fitted on its own measured kernels (GB200, GB300, B200, B300, H100, H200) has one efficiency
set, so no efficiency band (cost/pricer.band_pricers). Its predictions are still not exact: validate
measures their end-to-end error against measured serving points. This module turns those errors into
a band on a prediction (``compare --bands``, ``audit``; docs/metrics.md §6, docs/audit.md §3.1).

Definition. For a system and metric, e = predicted/measured − 1 over the system's validated points
that pass the data-quality rules (fit/validation_run.run_validation, ``quality == ""``); q_lo, q_hi
are its :data:`QUANTILES` (p10, p90). Since measured = predicted / (1 + e), the band of a prediction
v is v / (1 + q_hi) .. v / (1 + q_lo): the values the measurement would have had at the system's
10th and 90th percentile errors. The prediction itself is not moved (the band is an error statement
about the model, not a correction), and no point feeds its own prediction (the quantiles are shipped
data, written by scripts/gen_measured_bands.py from a validate run, never computed at run time).

Metrics (``METRICS``):

- ``interactivity``, ``tpot_s``, ``ttft_s``: the validated rows of that metric, every source pooled
  (aiconfigurator and InferenceX; every model, mode and length of the system).
- ``e2e_s``: derived, per point with both a TTFT and a TPOT row: E2E = TTFT + (OSL − 1) · TPOT,
  measured and predicted alike (the mean request of a closed-loop benchmark).
- ``throughput_per_chip``: the direct rows where a system has at least :data:`MIN_POINTS` (InferenceX:
  GB200, B200, H200, AMD); otherwise derived from ``e2e_s``: at a fixed concurrency a closed-loop
  benchmark serves concurrency · (ISL + OSL) / E2E tokens/s, so predicted/measured throughput =
  measured/predicted E2E and e = 1 / (1 + e_e2e) − 1 (GB300, B300, H100; ``source`` says which).

Below :data:`MIN_POINTS` rows a metric has no band (the file leaves it out).

Coverage. The band is the error validate measured on the models it has points for on that system
(``[models]`` in the file: GB300's is DeepSeek-R1's alone). Another model runs a different kernel mix
(dense vs MoE, MLA vs GQA), so its error was never measured there: :func:`band_of` gives it no band.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from jalapeno.errors import SpecError

#: The shipped quantiles (scripts/gen_measured_bands.py writes them).
BANDS_PATH = Path(__file__).resolve().parent.parent / "data" / "validation" / "measured_bands.toml"
#: Signed-error quantiles of the band (a named assumption: an 80% band, the p10/p90 validate reports
#: as p90 absolute error on either side; not fitted to any point).
QUANTILES = (0.10, 0.90)
#: Fewest validated rows for a band (a named assumption: fewer quantiles say little).
MIN_POINTS = 10
#: Pricers other than validate's default (roofline, flat chip): their error is not the one measured
#: (cost/table_pricer.py, cost/sliced.py, cost/tiles.py; named to avoid importing them)
OTHER_PRICERS = ("TablePricer", "SlicedPricer", "TiledPricer")
#: Metrics a band is shipped for; True where higher is better.
METRICS = {"throughput_per_chip": True, "interactivity": True, "tpot_s": False, "ttft_s": False, "e2e_s": False}


@dataclass(frozen=True)
class MetricBand:
    """One metric's signed-error quantiles on one system: ``q_lo``, ``q_hi`` (p10, p90 of
    predicted/measured − 1), over ``n`` rows, from ``source`` (``direct`` or ``derived from e2e_s``)."""

    metric: str
    q_lo: float
    q_hi: float
    n: int
    median: float
    source: str

    def ends(self, v: float) -> tuple[float, float]:
        """(unfavourable, favourable) values of prediction ``v``: v / (1 + q) at q_hi and q_lo,
        ordered so the first is the worse one (lower for throughput and interactivity, higher for
        latencies)."""
        a, b = v / (1 + self.q_hi), v / (1 + self.q_lo)
        return (a, b) if METRICS[self.metric] else (b, a)

    def factor(self, which: str) -> float:
        """The multiplier of a prediction at the ``low`` (unfavourable) or ``high`` end."""
        return self.ends(1.0)[0 if which == "low" else 1]


@dataclass(frozen=True)
class SystemBand:
    """A system's measured bands by metric (:class:`MetricBand`)."""

    system: str
    metrics: dict
    #: the models validate measured on the system (the band is theirs); empty: none named
    models: tuple = ()

    def get(self, metric: str) -> MetricBand | None:
        """The band of ``metric`` on this system (None where none is measured)."""
        return self.metrics.get(metric)

    def factor(self, metric: str, which: str) -> float:
        """:meth:`MetricBand.factor` of ``metric`` at ``which`` end; 1 where the metric has no band."""
        b = self.metrics.get(metric)
        return b.factor(which) if b else 1.0

    def describe(self) -> str:
        """One line: the quantiles and row counts of the metrics a band scales (throughput, interactivity, E2E),
        each band ``-12.3% to +8.2%`` (analysis/bound_words.band_span)."""
        from jalapeno.analysis.bound_words import band_span

        parts = [
            f"{m} {band_span(f'{100 * b.q_lo:+.1f}%', f'{100 * b.q_hi:+.1f}%')} (n {b.n}"
            + ("" if b.source == "direct" else ", derived")
            + ")"
            for m, b in self.metrics.items()
            if m in ("throughput_per_chip", "interactivity", "e2e_s")
        ]
        return (
            f"{self.system}: measured error p{100 * QUANTILES[0]:.0f}/p{100 * QUANTILES[1]:.0f} of "
            "predicted/measured - 1 (jalapeno validate on " + ", ".join(self.models) + "): " + "; ".join(parts)
        )


def error_quantiles(errors) -> tuple[float, float]:
    """(p10, p90) of signed errors (numpy's linear interpolation between order statistics)."""
    e = np.asarray(errors, dtype=float)
    lo, hi = np.percentile(e, [100 * QUANTILES[0], 100 * QUANTILES[1]])
    return float(lo), float(hi)


def _band(metric: str, errors, source: str) -> dict | None:
    e = np.asarray(errors, dtype=float)
    e = e[np.isfinite(e)]
    if e.size < MIN_POINTS:
        return None
    lo, hi = error_quantiles(e)
    return {"q_lo": lo, "q_hi": hi, "n": int(e.size), "median": float(np.median(e)), "source": source}


def e2e_errors(rows) -> np.ndarray:
    """Signed E2E errors of points with both a TTFT and a TPOT row: E2E = TTFT + (OSL − 1) · TPOT.

    ``rows``: validate rows (columns id, metric, measured, predicted, osl) of one system, already
    filtered to those that pass."""
    out = []
    for _, g in rows[rows.metric.isin(("ttft_s", "tpot_s"))].groupby("id", sort=False):
        by = {r.metric: r for r in g.itertuples()}
        if len(by) < 2 or len(g) != 2:
            continue
        t, d = by["ttft_s"], by["tpot_s"]
        m = t.measured + (float(t.osl) - 1) * d.measured
        p = t.predicted + (float(t.osl) - 1) * d.predicted
        if m > 0 and p > 0:
            out.append(p / m - 1)
    return np.array(out)


def build_bands(rows) -> dict:
    """system → {metric: {q_lo, q_hi, n, median, source}} from validate rows (run_validation's
    ``rows``: the passing, predicted ones are used). Pure: the tests feed it a toy table."""
    ok = rows[(rows.quality == "") & rows.error.notna()]
    out: dict = {}
    for system, g in ok.groupby("system", sort=True):
        mets: dict = {}
        for m in ("interactivity", "tpot_s", "ttft_s"):
            b = _band(m, g.error[g.metric == m], "direct")
            if b:
                mets[m] = b
        e2e = e2e_errors(g)
        b = _band("e2e_s", e2e, "derived: TTFT + (OSL - 1) TPOT")
        if b:
            mets["e2e_s"] = b
        direct = _band("throughput_per_chip", g.error[g.metric == "throughput_per_chip"], "direct")
        if direct is None and e2e.size:
            direct = _band(
                "throughput_per_chip",
                1 / (1 + e2e) - 1,
                "derived from e2e_s: concurrency (ISL + OSL) / E2E at fixed concurrency",
            )
        if direct:
            mets["throughput_per_chip"] = direct
        if mets:
            out[str(system)] = dict(sorted(mets.items()))
    return out


def validated_models(rows) -> dict:
    """system → sorted models with a passing, predicted validate row (the models each band covers)."""
    ok = rows[(rows.quality == "") & rows.error.notna()]
    return {str(s): sorted(map(str, g.model.unique())) for s, g in ok.groupby("system", sort=True)}


@lru_cache(maxsize=4)
def load_measured_bands(path: str | None = None) -> dict:
    """system name → :class:`SystemBand` from the shipped file (or ``path``).

    Raises:
        SpecError: the file is missing or not valid TOML, or a band lacks a field.
    """
    p = Path(path) if path else BANDS_PATH
    try:
        data = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise SpecError(
            "measured bands", f"file not found: {p}", "regenerate it: python scripts/gen_measured_bands.py"
        ) from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(
            "measured bands", f"{p} is not valid TOML ({e})", "regenerate it: python scripts/gen_measured_bands.py"
        ) from None
    out = {}
    models = data.get("models", {})
    for s, mets in data.get("systems", {}).items():
        bands = {}
        for m, b in mets.items():
            try:
                bands[m] = MetricBand(
                    m, float(b["q_lo"]), float(b["q_hi"]), int(b["n"]), float(b["median"]), str(b["source"])
                )
            except (KeyError, TypeError, ValueError):
                raise SpecError(
                    f"measured bands: systems.{s}.{m}",
                    "needs q_lo, q_hi, n, median, source",
                    "regenerate it: python scripts/gen_measured_bands.py",
                ) from None
            if m not in METRICS or not (b["q_lo"] <= b["q_hi"]) or min(b["q_lo"], b["q_hi"]) <= -1:
                raise SpecError(
                    f"measured bands: systems.{s}.{m}",
                    f"unknown metric or quantiles out of order / <= -1 ({b['q_lo']}, {b['q_hi']})",
                    "regenerate it: python scripts/gen_measured_bands.py",
                )
        if not isinstance(models.get(s), list) or not models[s]:
            raise SpecError(
                f"measured bands: models.{s}",
                "missing: the models validate measured the band on",
                "regenerate it: python scripts/gen_measured_bands.py",
            )
        out[s] = SystemBand(s, bands, tuple(map(str, models[s])))
    return out


def band_of(pricer, model: str | None = None) -> SystemBand | None:
    """The measured band of ``pricer``'s system as validated: a catalog system with a band in the
    file, priced with its calibrated set unchanged by validate's pricer (a ``--set`` or variant
    override, another ``--efficiency`` set, a user file, ``--pricer table`` or a sliced/tiled chip
    model is not the model validate measured: no band), serving ``model`` (a name) where given: a
    model validate has no points for on that system has no band (module docstring, Coverage)."""
    from jalapeno.specs.catalog import is_catalog_system

    if type(pricer).__name__ in OTHER_PRICERS or not validated_set(pricer.efficiency.source):
        return None
    if not is_catalog_system(pricer.system):  # a user file named like a catalog system is not it
        return None
    band = load_measured_bands().get(pricer.system.name)
    if band is None or (model is not None and model not in band.models):
        return None
    return band


def validated_set(source: str) -> bool:
    """Whether an efficiency set's ``source`` names a system's own calibrated set as validate priced it: no
    ``--set``/variant override, not another ``--efficiency`` set, not a band end (``set low``/``set high``)."""
    return (
        source.startswith("calibrated (")
        and "overrides:" not in source
        and "; set low;" not in source
        and "; set high;" not in source
    )


def uncovered(system: str, model: str) -> SystemBand | None:
    """The shipped measured band of ``system`` where it does not cover ``model`` (validate has no points
    of that model on the system, module docstring: Coverage), else None: what a table says of a measured
    system shown without a band."""
    band = load_measured_bands().get(system)
    return band if band is not None and model not in band.models else None


def uncovered_source(system: str, model: str, band: SystemBand) -> str:
    """The JSON ``source`` of the headline band of a measured ``system`` whose band does not cover ``model``
    (:func:`uncovered`): low and high equal the prediction, and the JSON says why, as compare's table does in its
    'no band for' line (an equal-ended band with no source read as an exact figure)."""
    return (
        f"none: validate has no {model} points on {system} (its measured error band is validate's on "
        f"{', '.join(band.models)}); low and high repeat the calibrated prediction"
    )


def same_set(a, b) -> bool:
    """Whether pricers ``a`` and ``b`` price with the same efficiency figures (their ``source`` text
    aside: a measured system's low/high sets repeat its calibrated one, named ``set low``/``set high``)."""
    return a is b or replace(a.efficiency, source=b.efficiency.source) == b.efficiency


def without_efficiency_band(pricer, band: dict, model: str | None = None) -> SystemBand | None:
    """:func:`band_of` ``pricer`` (serving ``model``) where its efficiency band (cost/pricer.band_pricers:
    ``band``) has no width (both ends price as ``pricer``); None where it has one (a derived system keeps it)."""
    if not all(same_set(band[w], pricer) for w in ("low", "high")):
        return None
    return band_of(pricer, model)


def scale_points(points, band: SystemBand, which: str):
    """Serving points (serve/serving_points.ServingPoints) as they would be measured at the band's
    ``which`` end: interactivity, throughput and latencies each scaled by its metric's factor (a
    metric without a band kept)."""

    def f(m: str) -> float:
        return band.factor(m, which)

    ft, fi, fe = f("throughput_per_chip"), f("interactivity"), f("e2e_s")
    return replace(
        points,
        throughput_per_chip=points.throughput_per_chip * ft,
        output_throughput_per_chip=points.output_throughput_per_chip * ft,
        interactivity=points.interactivity * fi,
        e2e_s=points.e2e_s * fe,
        ttft_s=points.ttft_s * f("ttft_s"),
        tpot_s=points.tpot_s * f("tpot_s"),
    )


def scale_frontier(rec, band: SystemBand, which: str):
    """A FrontierRecord (analysis/records.py) with every point scaled as :func:`scale_points`."""

    def f(m: str) -> float:
        return band.factor(m, which)

    ft, fi, fe = f("throughput_per_chip"), f("interactivity"), f("e2e_s")
    pts = tuple(
        replace(
            q,
            throughput_per_chip=q.throughput_per_chip * ft,
            output_throughput_per_chip=q.output_throughput_per_chip * ft,
            interactivity=q.interactivity * fi,
            e2e_s=q.e2e_s * fe,
        )
        for q in rec.frontier
    )
    return replace(rec, frontier=pts, headline=None)


def headline_bands(h, band: SystemBand):
    """The :class:`~jalapeno.analysis.records.Bands` of headline ``h`` under the measured band (each
    figure times its metric's factor at each end; a metric without a band is a point)."""
    from jalapeno.analysis.records import Band, Bands

    def ends(m: str, v: float) -> Band:
        b = band.get(m)
        lo, hi = b.ends(v) if b else (v, v)
        return Band(lo, v, hi)

    kw = {
        w: {c: x * band.factor("throughput_per_chip", w) for c, x in h.peak_tok_s_per_kw.items()}
        for w in ("low", "high")
    }
    kw["mid"] = dict(h.peak_tok_s_per_kw)
    return Bands(
        peak_throughput_per_chip=ends("throughput_per_chip", h.peak_throughput_per_chip),
        max_interactivity=ends("interactivity", h.max_interactivity),
        min_e2e_s=ends("e2e_s", h.min_e2e_s),
        peak_tok_s_per_kw=kw,
        source="measured error (validate p10/p90)",
    )
