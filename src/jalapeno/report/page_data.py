"""The data ``jalapeno report``'s page draws: per system its colour, frontier, band and measured points, as JSON.

report/page.py renders it (plotly.js inline, the controls, the tables); this module turns a comparison record
into the page's series, column-wise per system (interactivity, E2E, throughput per chip, tok/s per kW under each
power convention, tok/s per $/chip-hour, hover text), and the measured points (InferenceX, shipped or a user
CSV) with their configuration (precision · agg/disagg · MTP), whether each system's frontier models it
(like for like), their source and their split (fit / held out / in no fit, as validate labels the row).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from jalapeno.analysis.power_cost import CONVENTIONS, power_w_per_chip
from jalapeno.report.colors import rgba, system_color
from jalapeno.report.html import _esc, hover_text

if TYPE_CHECKING:
    from jalapeno.analysis.records import ComparisonRecord, PointRecord
    from jalapeno.fit.measured_point import MeasuredPoint
    from jalapeno.specs.hardware import System


def _num(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def _points(pts: Sequence[PointRecord], system: System) -> dict:
    """Column-wise series of frontier points for the page's script."""
    usd = system.usd_per_chip_hour
    return {
        "interactivity": [_num(p.interactivity) for p in pts],
        "e2e": [_num(p.e2e_s) for p in pts],
        "chip": [_num(p.throughput_per_chip) for p in pts],
        "kw": {c: [_num(p.tok_s_per_kw_by_convention[c]) for p in pts] for c in CONVENTIONS},
        "usd": [_num(p.throughput_per_chip / usd) for p in pts],
        "hover": [hover_text(p) for p in pts],
    }


def frontier_config(fr, serving: str = "both") -> dict:
    """What a system's frontier models, for matching measured points like for like: its swept
    precisions, serving modes (``--serving``) and whether its deployments run with and without MTP."""
    mtp = {p.deployment.mtp is not None for p in fr.frontier}
    return {
        "precisions": {x.strip() for x in fr.precision.split(",") if x.strip()},
        "modes": {"agg", "disagg"} if serving == "both" else {serving},
        "mtp": True in mtp,
        "no_mtp": False in mtp or not mtp,
    }


def measured_config(mp: MeasuredPoint, cfg: Mapping) -> tuple[str, list[str]]:
    """A measured point's configuration label (precision · agg/disagg · MTP) and how it differs from
    the frontier's ``cfg`` (:func:`frontier_config`; empty: like for like).

    >>> from types import SimpleNamespace as N
    >>> mp = N(precision="fp4", mode="disagg", uses_mtp=True)
    >>> measured_config(mp, {"precisions": {"fp4"}, "modes": {"agg", "disagg"}, "mtp": False, "no_mtp": True})
    ('fp4 · disagg · MTP', ['MTP (the frontier runs without)'])
    """
    mtp = mp.uses_mtp
    label = f"{mp.precision} · {mp.mode} · " + {True: "MTP", False: "no MTP", None: "MTP not stated"}[mtp]
    why = []
    if mp.precision not in cfg["precisions"]:
        why.append(f"precision {mp.precision} (the frontier sweeps {', '.join(sorted(cfg['precisions']))})")
    if mp.mode not in cfg["modes"]:
        why.append(f"{mp.mode} serving (the frontier is {'/'.join(sorted(cfg['modes']))} only)")
    if mtp is True and not cfg["mtp"]:
        why.append("MTP (the frontier runs without)")
    elif mtp is False and not cfg["no_mtp"]:
        why.append("no MTP (the frontier runs with)")
    elif mtp is None:
        why.append("MTP use not stated by the source")
    return label, why


#: What each ``split`` (fit/heldout.split_labels, validate's ``split`` column) tells the page's reader of a point.
SPLIT_WORDS = {
    "fit": "fit (an end-to-end fit saw it: agreement here is no test of the model)",
    "held_out": "held out (the fits' held-out half: validate --held-out judges it)",
    "none": "in no fit (no end-to-end fit drew it: validate --held-out judges it)",
}


def measured_splits(points: Sequence[MeasuredPoint], shipped: bool) -> dict[str, str]:
    """Point id → ``fit`` / ``held_out`` / ``none`` for the measured points a page overlays, the labels
    ``validate`` gives the same rows (fit/heldout.split_labels over the whole loaded file: its groups need every
    concurrency). ``shipped``: the points are the shipped InferenceX file; False (a user's CSV): every row
    ``none``, as validate --points labels it."""
    from jalapeno.fit.heldout import split_labels

    return split_labels(points, shipped_inferencex=shipped)


def split_note(measured: Sequence[Mapping]) -> str | None:
    """One sentence counting the drawn measured points by split (None when none is drawn): an analyst must know
    which points a fit saw before reading agreement as accuracy (report54)."""
    if not measured:
        return None
    n = {k: sum(p.get("split") == k for p in measured) for k in SPLIT_WORDS}
    return (
        f"Of the {len(measured)} measured points drawn: {n['fit']} fit (an end-to-end fit saw them, so agreement "
        f"there is no test of the model), {n['held_out']} held out, {n['none']} in no fit; each point's hover names "
        "its source row and split (validate's split column, fit/heldout.py)."
    )


def _measured(
    points: Sequence[MeasuredPoint],
    systems: Mapping[str, System],
    osl: int,
    configs: Mapping[str, Mapping] | None = None,
    splits: Mapping[str, str] | None = None,
    source: str = "",
) -> list[dict]:
    out = []
    for mp in points:
        s = systems.get(mp.system)
        m = mp.measured
        thr, inter = m.get("throughput_per_chip"), m.get("interactivity")
        if s is None or not thr or not inter:
            continue
        ttft, tpot = m.get("ttft_s"), m.get("tpot_s") or 1 / inter
        e2e = ttft + (osl - 1) * tpot if ttft else None  # E2E = TTFT + (OSL - 1)·TPOT (docs/metrics.md)
        cfg = (configs or {}).get(mp.system)
        label, why = measured_config(mp, cfg) if cfg else (f"{mp.precision} · {mp.mode}", [])
        dep = f"<br>{_esc(mp.deployment.label)}" if mp.deployment is not None else ""
        split = (splits or {}).get(mp.id, "none")
        out.append(
            {
                "system": mp.system,
                "interactivity": inter,
                "e2e": e2e,
                "chip": thr,
                "kw": {c: thr / (power_w_per_chip(s, c)[0] / 1000) for c in CONVENTIONS},
                "usd": thr / s.usd_per_chip_hour,
                "config": label,
                "like": not why,
                "why": why,
                "source": source or mp.source,
                "split": split,
                "hover": _esc(
                    f"measured {mp.id} · {mp.framework} · {label}"
                    f"{' · conc ' + format(mp.concurrency, 'g') if mp.concurrency else ''}"
                )
                + dep
                + "<br>"
                + _esc(f"source: {source or mp.source} · split: {SPLIT_WORDS[split]}")
                + f"<br>{thr:,.0f} tok/s/chip · {inter:.1f} tok/s/user"
                + ("".join(f"<br>not like for like: {_esc(w)}" for w in why)),
            }
        )
    return out


def measured_warning(data: Mapping) -> str:
    """One sentence on the overlaid measured points whose configuration the frontiers do not model
    ("" when every one is like for like)."""
    bad = [p for p in data.get("measured", ()) if not p["like"]]
    if not bad:
        return ""
    kinds = sorted({f"{p['system']} {p['config']}: {', '.join(p['why'])}" for p in bad})
    return (
        f"{len(bad)} of {len(data['measured'])} measured points ran a configuration the predicted frontiers "
        f"do not model ({'; '.join(kinds)}). They are drawn as open diamonds marked 'not like for like' in "
        "the legend and hover; pass --like-for-like to overlay only the matching ones."
    )


def report_data(
    rec: ComparisonRecord,
    systems: Mapping[str, System],
    bands: Mapping[str, Mapping] | None = None,
    floors: Sequence[tuple[str, float]] = (),
    measured: Sequence[MeasuredPoint] = (),
    like_for_like: bool = False,
    splits: Mapping[str, str] | None = None,
    source: str = "",
) -> dict:
    """The JSON the page draws: per system its colour, frontier, band and measured points.

    Args:
        rec: the comparison (analysis.comparison.compare_systems(...).record()).
        systems: system name → System (for the power and $/h of the measured points).
        bands: system → {"low", "high"} FrontierRecords (Comparison.band_frontiers; None = calibrated).
        floors: (tier, tok/s/user) floors.
        measured: measured points (fit/ix_points.load_inferencex), filtered here to the compared systems;
            each carries its configuration (precision · agg/disagg · MTP) and whether the system's
            frontier models it (``like``; :func:`measured_config`).
        like_for_like: keep only the measured points whose configuration the frontier models.
        splits: point id → ``fit`` / ``held_out`` / ``none`` (:func:`measured_splits`; a point not in it: ``none``),
            each point's ``split``, said in its hover (:data:`SPLIT_WORDS`).
        source: the measured points' source as the page names it (e.g. the shipped InferenceX file), each point's
            ``source`` and hover line ("" = the point's own ``source`` field).
    """
    data: dict = {
        "title": f"{rec.model} · ISL {rec.workload.isl} / OSL {rec.workload.osl} · {rec.precision}",
        "convention": rec.power_convention,
        "conventions": list(CONVENTIONS),
        "floors": [[t, f] for t, f in floors],
        "systems": [],
    }
    for name, fr in rec.systems.items():
        s = systems[name]
        entry = {
            "name": name,
            "color": system_color(name),
            "fill": rgba(system_color(name), 0.15),
            "frontier": _points(fr.frontier, s),
            "band": None,
        }
        band = (bands or {}).get(name)
        if band:
            entry["band"] = {w: _points((band.get(w) or fr).frontier, s) for w in ("low", "high")}
        data["systems"].append(entry)
    serving = rec.options.get("serving", "both")
    configs = {n: frontier_config(fr, serving) for n, fr in rec.systems.items()}
    pts = _measured(measured, systems, rec.workload.osl, configs, splits, source)
    data["measured"] = [p for p in pts if p["like"]] if like_for_like else pts
    return data
