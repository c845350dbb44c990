"""Run a validation: load measured points, predict them, summarise errors (``jalapeno validate``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from jalapeno.fit.aic_quality import aic_decode_flags, aic_source_flags, aic_ttft_flags
from jalapeno.fit.aic_rows import AIC_SYSTEMS
from jalapeno.fit.data_quality import DEFAULT_POINTS, quality_table
from jalapeno.fit.heldout import JUDGED, check_held_out, split_counts, split_labels
from jalapeno.fit.ix_topology import unread_topology
from jalapeno.fit.skipped import of_systems
from jalapeno.fit.validate import load_aiconfigurator, predict_points
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.errors import SpecError, check_bool

# DEFAULT_POINTS (fit/data_quality): the shipped InferenceX points, every row with its source
# (data/validation/README.md); imported by callers from here too.


def error_summary(df: pd.DataFrame, by=("source", "system", "model", "mode")) -> pd.DataFrame:
    """Per group and metric: n, median and p90 absolute % error, median signed % error (bias)."""
    ok = df.dropna(subset=["error"])
    if ok.empty:
        return pd.DataFrame()
    g = ok.groupby(list(by) + ["metric"])["error"]
    s = pd.DataFrame(
        {
            "n": g.size(),
            "median_ape": g.apply(lambda e: float(np.median(np.abs(e)))),
            "p90_ape": g.apply(lambda e: float(np.percentile(np.abs(e), 90))),
            "bias": g.median(),
        }
    )
    return s.reset_index()


def calibrated_systems(kinds: tuple[str, ...] = ("measured", "partial")) -> frozenset:
    """Systems whose efficiency set was fitted (wholly: ``measured``; in part: ``partial``, AMD) on
    their own measured kernels."""
    from jalapeno.specs.calibration import load_calibration
    from jalapeno.specs.catalog import list_systems

    return frozenset(n for n in list_systems() if (load_calibration(n) or {}).get("kind") in kinds)


def _check_argument_types(systems, **switches) -> None:
    """Refuse ``systems`` given as one string and switches that are not booleans, before any point is read.

    ``systems="gb200-nvl72"`` was filtered with ``p.system in systems``, a substring test on a string: b200's points
    ('b200' is in 'gb200-nvl72') were judged with GB200's, silently; ``mlperf="no"`` read as true.

    Raises:
        SpecError: naming the argument and the fix.
    """
    if systems is not None:
        if isinstance(systems, str) or not isinstance(systems, (list, tuple, set, frozenset)):
            raise SpecError(
                "run_validation: systems",
                f"expected a tuple of system names, got {systems!r}"
                if isinstance(systems, str)
                else f"expected a tuple of system names, got {type(systems).__name__}",
                "pass e.g. systems=('h100',) (a bare string is read letter by letter), or None for every system",
            )
        bad = next((s for s in systems if not isinstance(s, str)), None)
        if bad is not None:
            raise SpecError(
                "run_validation: systems",
                f"expected system names, got {bad!r}",
                "pass catalog names, e.g. systems=('h100', 'b200')",
            )
    for name, v in switches.items():
        check_bool(f"run_validation: {name}", v, f"pass {name}=True or {name}=False")


def run_validation(
    points_path: str | None = None,
    use_aiconfigurator: bool = True,
    efficiency: str = "calibrated",
    aic_frame: pd.DataFrame | None = None,
    mlperf: bool = False,
    stack: str | None = None,
    pricer: str = "roofline",
    systems: tuple[str, ...] | None = None,
    held_out: bool = False,
    stack_fits: dict | None = None,
) -> dict:
    """Predict every mappable measured point and summarise the errors.

    Returns a dict: ``rows`` (per point and metric, with ``quality``: the data-quality flag of the
    point, "" when it passes: fit/data_quality.py for InferenceX points, fit/aic_quality.py for the TTFT
    of aiconfigurator points (rules A, B), their TPOT and interactivity (rule D) and every metric of those
    their source corrected (rule C)), ``summary`` (per source/system/model/mode/metric)
    and ``overall`` (per source and metric) over the points that pass, ``overall_all`` (the same over
    every point, flagged ones included: the headline is stated both ways), ``flagged`` (id, reason)
    of the predicted points in the flagged group, ``unchecked`` (ids of the predicted InferenceX
    points in ``overall`` that rule 1 could not be applied to: a cell it needs is blank), ``skipped``
    (id, reason), ``sources``, ``left_out`` (a source the call asked for and could not load, with
    why and the fix: aiconfigurator's rows without the ``aiconfigurator-core`` package, the base
    install's case, where the figures cover InferenceX alone), ``unpredicted`` (id, notes/reason) of mapped points the model gave no prediction for
    (infeasible deployments), ``unread_topology`` (id, topology, mapping) of InferenceX rows whose non-blank
    ``topology`` is none of fit/ix_topology.TOPOLOGY_FORMS, mapped as a blank one would be.
    Each point is priced with its framework's software stack (specs/stacks.py), or with ``stack``
    (a profile name) for every point.
    ``pricer``: ``roofline`` or ``table`` (fit/validate.predict_points); ``systems``: only the
    points of these systems (None: all). Every row carries ``split`` (fit/heldout.py: ``fit``, ``held_out`` or
    ``none``, whether an end-to-end fit saw the point); ``no_rows``: each of ``systems`` without a row in the
    figures → why (no measured point, or with ``held_out`` none the fits left out); with ``held_out`` the figures (``summary``, ``overall``,
    ``overall_all``, ``flagged``, ``unchecked``) cover the rows no fit saw (``held_out`` and ``none``) and ``rows``
    only those; ``split_counts`` gives the points per split of every predicted row either way. ``stack_fits``: the
    profiles' fitted values to price with, in the form of data/stack_fits.toml (fit/stack_fit.fit_all; None: the
    shipped ones; fit/loso.py's refit).

    Raises:
        SpecError: an empty or missing points path, a folder, a pipe or device, or no row of the file could be mapped
            (a ``points_path`` of which no row maps is refused whatever the other sources hold);
            ``held_out`` with ``points_path`` or ``stack`` (fit/heldout.check_held_out); ``systems`` that is
            not a collection of names (a bare string), a switch that is not True/False.
    """
    _check_argument_types(systems, use_aiconfigurator=use_aiconfigurator, mlperf=mlperf, held_out=held_out)
    check_held_out(held_out, points_path, stack)
    if points_path is not None and not str(points_path).strip():
        raise SpecError("--points", "empty path", "give a CSV path, or omit --points for the shipped points")
    path = Path(points_path) if points_path else DEFAULT_POINTS
    if path.is_dir():
        raise SpecError(
            "--points",
            f"{path} is a folder, not a CSV file",
            "pass --points FILE.csv (InferenceX points format), or omit --points for the shipped points",
        )
    if path.exists() and not path.is_file():  # '--points <(...)' was "not found"; it is read twice (the points,
        # then fit/data_quality.quality_table), and a pipe's second read is empty (break51)
        raise SpecError(
            "--points",
            f"{path} is not a regular file (a pipe or a device): the points file is read more than once",
            "save the points to a file and pass --points FILE.csv",
        )
    if not path.is_file():
        raise SpecError(
            "--points",
            f"{path} not found",
            "pass --points FILE.csv (InferenceX points format), or omit --points for the shipped points",
        )
    pts, skipped = load_inferencex(path)
    # rows whose topology cell is not a form parse_topology reads: mapped as if blank, said on stderr by the CLI
    unread = [(p.id, t, p.mapping) for p in pts if (t := unread_topology(p.notes)) is not None]
    if points_path and not pts:  # a user's file of which no row maps: aiconfigurator's rows ran alone, exit 0
        raise SpecError(
            f"--points {path.name}",
            f"no measured point could be mapped; {len(skipped)} row(s) skipped"
            + (f" (first: {skipped[0][0]}: {skipped[0][1]})" if skipped else ""),
            "check the CSV's hardware/model names and numbers against the InferenceX points format",
        )
    sources, left_out = {"inferencex": str(path)}, {}
    if use_aiconfigurator or aic_frame is not None:
        try:
            more, sk = load_aiconfigurator(aic_frame)
            pts += more
            skipped += sk
            sources["aiconfigurator"] = "aiconfigurator-core silicon_sample.csv" if aic_frame is None else "fixture"
        except SpecError as e:
            if aic_frame is not None:
                raise
            # the base install (README's first command) has no aiconfigurator-core: its rows, most of the
            # shipped points (every MiniMax-M2.5 and GB300 row among them), are left out, and said so
            left_out["aiconfigurator"] = f"{e.problem}: its end-to-end rows are left out ({e.fix})"
    if mlperf:  # the shipped MLPerf Inference results, their own source (fit/mlperf.py)
        from jalapeno.fit.mlperf import DEFAULT_MLPERF, load_mlperf

        more, sk = load_mlperf()
        pts += more
        skipped += sk
        sources["mlperf"] = str(DEFAULT_MLPERF)
    if not pts:
        first = f" (first: {skipped[0][0]}: {skipped[0][1]})" if skipped else ""
        raise SpecError(
            "--points",
            f"no measured point could be mapped; {len(skipped)} row(s) skipped{first}",
            "check the CSV's hardware/model names and numbers against the InferenceX points format",
        )
    every = pts  # the split is drawn over every loaded point (the fit's pool), before the systems filter
    if systems is not None:
        pts = [p for p in pts if p.system in systems]
        skipped = of_systems(skipped, systems)  # B300's skips were listed under -s gb200-nvl72
        if not pts:
            # GB300's rows are aiconfigurator's; Jalapeño has none anywhere: installing the package would not help it
            covered = "aiconfigurator" in left_out and any(s in AIC_SYSTEMS.values() for s in systems)
            why = f" ({left_out['aiconfigurator']})" if covered else ""
            raise SpecError(
                "--systems",
                f"no measured point on {', '.join(systems)}{why}",
                f"name systems with points: {', '.join(sorted({p.system for p in every}))}",
            )
    if stack is not None:
        from jalapeno.specs.stacks import get_stack

        st = get_stack(stack)
        rows = predict_points(pts, calibrated_systems(), efficiency=efficiency, stack_of=lambda p: st, pricer=pricer)
    elif stack_fits is not None:
        from jalapeno.fit.validate import point_stack
        from jalapeno.specs.stacks import build_stacks

        profiles = build_stacks(stack_fits)
        rows = predict_points(
            pts, calibrated_systems(), efficiency=efficiency, pricer=pricer, stack_of=lambda p: point_stack(p, profiles)
        )
    else:
        rows = predict_points(pts, calibrated_systems(), efficiency=efficiency, pricer=pricer)
    splits = split_labels(
        every,
        shipped_inferencex=points_path is None,
        ttft_predicted=_eager_ttft_ids(rows, systems, stack is None and stack_fits is None, pricer, efficiency),
    )
    quality = quality_table(path)  # fit/data_quality.py: the InferenceX file's rows only
    flags = dict(zip(quality.id[quality.flag != ""], quality.flag[quality.flag != ""]))
    not_checked = set(quality.id[~quality.checked])
    aic = aic_ttft_flags(pts)  # fit/aic_quality.py rules A, B: aiconfigurator rows, their TTFT only
    corrected = aic_source_flags(pts)  # rule C: every metric of a row its source corrected
    decode = aic_decode_flags(pts)  # rules D, E: TPOT (and interactivity) slower than a no-faster chip's sibling, or
    # faster than the decode step's bytes over the chips' bandwidth
    if mlperf:  # fit/mlperf_quality.py: rule 1, a mean latency above its own p99 (the metrics it feeds); rule 2, a
        # Server / Interactive run scheduled >= 1.10x below a peer's valid run on the same system (its throughput)
        from jalapeno.fit import mlperf_quality as mq

        tail = {**mq.mlperf_tail_flags(), **(mq.mlperf_rate_flags() if mq.PEER_RATE_FLAG_ON else {})}
    else:
        tail = {}
    rows["quality"] = (
        [
            flags.get(i, "")
            if src == "inferencex"
            else tail.get((i, m), "")
            if src == "mlperf"
            else corrected.get(i, "")
            or (aic.get(i, "") if m == "ttft_s" else decode.get(i, "") if m in ("tpot_s", "interactivity") else "")
            for i, src, m in zip(rows["id"], rows["source"], rows["metric"])
        ]
        if len(rows)
        else []
    )
    rows["split"] = [splits[i] for i in rows["id"]] if len(rows) else []
    counts = split_counts(rows)
    if held_out:
        rows = rows[rows["split"].isin(JUDGED)]
    missing = _systems_without_rows(systems, rows, pts, held_out, left_out)
    ok = rows[rows.quality == ""]
    summary = error_summary(ok)
    bad = rows[rows.error.isna()]
    unpredicted = sorted({(r.id, r.notes) for r in bad.itertuples()})
    flagged = sorted({(r.id, r.quality) for r in rows[rows.quality != ""].dropna(subset=["error"]).itertuples()})
    # predicted points the identity could not be applied to (a cell it needs is blank): in the figures
    # above unless a source flag names them; counted so that "not flagged" is not read as "checked"
    unchecked = sorted(
        {r.id for r in ok.dropna(subset=["error"]).itertuples() if r.source == "inferencex" and r.id in not_checked}
    )
    return {
        "rows": rows,
        "summary": summary,
        "overall": overall_errors(ok),
        "overall_all": overall_errors(rows),
        "flagged": flagged,
        "unchecked": unchecked,
        "skipped": skipped,
        "sources": sources,
        "left_out": left_out,
        "unpredicted": unpredicted,
        "unread_topology": unread,
        "split_counts": counts,
        "held_out": held_out,
        "no_rows": missing,
    }


def _eager_ttft_ids(rows: pd.DataFrame, systems, own_stacks: bool, pricer: str, efficiency: str) -> set | None:
    """The ids fit/heldout.split_labels' eager-rate split may take as priced (its ``ttft_predicted``), or None for it
    to price its candidates itself.

    That split (fit/trt_prompt_graphs.eager_call_split) labels :data:`~jalapeno.fit.trt_prompt_graphs.EAGER_FIT_SYSTEM`'s
    aiconfigurator rows by which of them have a predicted TTFT under the default pricing (each point's own stack, the
    roofline, the calibrated set). ``rows`` were priced so when ``own_stacks`` (no ``--stack``, no stack fits), the
    roofline and the calibrated set: their timed ids then, if they hold every candidate (no ``systems`` filter, or one
    that keeps that system). A ``systems`` filter without that system prints none of the rows the split labels: the
    empty set, so nothing is priced for labels no row shows (``validate -s gb200-nvl72`` re-priced every b200 candidate;
    ux53)."""
    from jalapeno.fit.trt_prompt_graphs import EAGER_FIT_SYSTEM

    if systems is not None and EAGER_FIT_SYSTEM not in systems:
        return set()
    if not (own_stacks and pricer == "roofline" and efficiency == "calibrated" and len(rows)):
        return None
    timed = rows[rows.metric == "ttft_s"].dropna(subset=["measured", "predicted"])
    return set(timed.id)


def _systems_without_rows(systems, rows: pd.DataFrame, pts: list, held_out: bool, left_out: dict) -> dict:
    """Each system of ``systems`` (validate --systems) with no row in the figures → why: ``-s gb200-nvl72,gb300-nvl72``
    printed GB200's rows alone, not a word that GB300 has none (its rows are aiconfigurator's, left out without
    the package), where ``-s gb300-nvl72`` alone is refused saying so. {} when every named system has rows."""
    have = set(rows["system"]) if len(rows) else set()
    measured = {p.system for p in pts}
    aic = (
        " (aiconfigurator's rows, which may hold some, are left out: see its line)"
        if "aiconfigurator" in left_out
        else ""
    )
    return {
        s: (
            "every point of it is in a fit's half (none held out or in no fit)"
            if held_out and s in measured
            else "no measured point in the sources loaded" + (aic if s in AIC_SYSTEMS.values() else "")
        )
        for s in systems or ()
        if s not in have
    }


def overall_errors(rows: pd.DataFrame) -> dict:
    """Per source and metric over predicted ``rows``: n, median and p90 absolute error, bias."""
    overall = {}
    for src, d in rows.dropna(subset=["error"]).groupby("source"):
        overall[src] = {
            m: {
                "n": int(len(g)),
                "median_ape": float(np.median(np.abs(g.error))),
                "p90_ape": float(np.percentile(np.abs(g.error), 90)),
                "bias": float(np.median(g.error)),
            }
            for m, g in d.groupby("metric")
        }
    return overall
