"""``jalapeno calibrate`` and ``jalapeno validate``."""

from __future__ import annotations

import typer
from rich.table import Table

from jalapeno.cli.common import console, efficiency_option, list_items, note_stack_version, print_json, say_written
from jalapeno.cli.out_paths import check_html_out, check_out_dir_not_shipped, check_table_out


def _why_fitted(name: str, names: list[str] | None) -> str:
    """Why ``calibrate --systems`` fits a system it was not given (fit/calibrate.calibrate_catalog: a named chip's
    predecessor, for the ordering check, or a measured system a derived set is made of): ``-s h200`` printed
    "fitting h100 (1/2) ..." with no word, and wrote h200.toml only (newuser51). '' for a system named.

    >>> _why_fitted("h100", ["h200"]), _why_fitted("h200", ["h200"]), _why_fitted("h100", None)
    (': not in --systems, fitted for a named one (predecessor or derivation), not written', '', '')
    """
    if names is None or name in names:
        return ""
    return ": not in --systems, fitted for a named one (predecessor or derivation), not written"


def calibrate(
    systems: str = typer.Option(None, "--systems", "-s", help="Comma-separated systems (default: all)."),
    out_dir: str = typer.Option(
        None,
        "--out-dir",
        help="Where to write <system>.toml (default: the package data: "
        "it rewrites the shipped calibrated sets every command reads; give a folder to keep "
        "them).",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Fit efficiency parameters on aiconfigurator's measured kernels (needs the \\[calibrate] extra)."""
    from jalapeno.errors import SpecError, choice_hint
    from jalapeno.fit.calibrate import calibrate_catalog
    from jalapeno.specs.catalog import list_systems
    from jalapeno.specs.efficiency import flatten_params

    names = list_items(systems, "--systems", "h200,b200") if systems is not None else None
    if names == []:
        raise SpecError("--systems", "no system named", f"use names from {', '.join(list_systems())}, or omit it")
    unknown = sorted(set(names or []) - set(list_systems()))
    if unknown:  # a near miss is named, as every other --systems does (break47)
        raise SpecError(
            "--systems",
            f"unknown system {unknown[0]!r}{choice_hint(unknown[0], list_systems())}",
            f"use names from {', '.join(list_systems())}",
        )
    twice = sorted({n for n in names or [] if names.count(n) > 1})
    if twice:  # h200,h200 was fitted and written twice, with no word (break47)
        raise SpecError("--systems", f"{twice[0]!r} is given twice", "list each system once, e.g. --systems h200,b200")
    if out_dir is not None and not out_dir.strip():
        raise SpecError("--out-dir", "empty path", "give a directory, or omit --out-dir to rewrite the shipped sets")
    if out_dir is not None:
        check_out_dir_not_shipped(out_dir, "--out-dir", "data/calibration")
    res = calibrate_catalog(
        names,
        out_dir,
        on_progress=None
        if json_out
        else lambda n, i, k: console.print(f"fitting {n} ({i + 1}/{k}){_why_fitted(n, names)} ..."),
    )
    flags = res.pop("_ordering_flags")
    if json_out:
        print_json({**res, "ordering_flags": flags})
        return
    for f in flags:
        console.print(
            f"[yellow]warning:[/] {f['newer']}'s {f['group']} fit is {f['median_ratio'] - 1:.0%} slower than "
            f"{f['older']}'s in the {f['regime']} regime (same shapes); check its kernel tables"
        )
    t = Table(title="calibrated efficiency parameters")
    keys = [
        "gemm.bf16.peak_fraction",
        "gemm.fp8.peak_fraction",
        "gemm.fp8_block.peak_fraction",
        "gemm.fp4.peak_fraction",
        "gemm.bf16.half_rows",
        "gemm.fp8.hbm_fraction",
        "hbm_fraction",
        "attention_peak_fraction",
        "collective_launch_s",
    ]
    # every name and header whole: at 160 characters the table printed 'vera-rubin-nv…', 'gemm.bf16.hal…' and
    # 'collective_la…' (newuser50); a header's words ('_' read as a space) wrap over two lines instead
    t.add_column("system", no_wrap=True, min_width=max([6, *(len(n) for n in res)]))
    for k in keys:
        t.add_column(
            k.replace("_fraction", "").replace(".peak", "").removesuffix("_s").replace("_", " "), overflow="fold"
        )
    t.add_column("GEMM fit median err", overflow="fold")
    t.caption = (
        "each column an efficiency parameter (docs/model.md), '_' printed as a space: gemm.FMT = "
        "efficiency.gemm.FMT.peak_fraction, gemm.fp8.hbm and hbm = the .hbm_fraction keys, gemm.bf16.half rows "
        "= gemm.bf16.half_rows, collective launch = collective_launch_s; GEMM fit median err: the GEMM fit's "
        "median |error| on the system's kernel tables (derived: no tables of its own)"
    )
    for n, cal in res.items():
        p = flatten_params(cal["parameters"])
        err = cal.get("report", {}).get("gemm", {}).get("median_ape")
        t.add_row(
            n,
            *[("-" if k not in p else f"{p[k] * 1e6:.1f}us" if k.endswith("_s") else f"{p[k]:.3g}") for k in keys],
            "derived" if err is None else f"{err:.1%}",
        )
    console.print(t)


#: ``validate --pricer``: the rule between its default and ``auto`` stated where a user looks (``auto``
#: preferred the table pricer for H200 while validate's figures were the roofline's, unexplained)
VALIDATE_PRICER_OPTION = typer.Option(
    "roofline",
    "--pricer",
    help="roofline (default, as on every command: the figures of docs/validation.md and the fidelity guard are "
    "the roofline's), table (measured kernel latencies interpolated; systems with aiconfigurator kernel "
    "tables, calibrate extra) or auto (per system the pricer with the lower end-to-end error, "
    "preferred_pricer in data/validation/loso_error.toml: table on b300, gb300-nvl72, roofline elsewhere; "
    "validate --pricer auto shows auto's error).",
)


def validate(
    points: str = typer.Option(
        None,
        "--points",
        help="InferenceX points CSV, with columns of the shipped file's (default: the "
        "shipped points, src/jalapeno/data/validation/inferencex_points.csv).",
    ),
    aiconfigurator: bool = typer.Option(
        True,
        "--aiconfigurator/--no-aiconfigurator",
        help="Include aiconfigurator's end-to-end rows when the package is installed.",
    ),
    efficiency: str = efficiency_option(),
    mlperf: bool = typer.Option(
        False,
        "--mlperf/--no-mlperf",
        help="Also predict the shipped MLPerf Inference v5.1 results (their own source; "
        "each served with its dataset's length spread, fit/mlperf.py).",
    ),
    stack: str = typer.Option(
        None,
        "--stack",
        callback=note_stack_version,  # the version rules it takes, as predict
        help="Price every point with this software stack (default: each "
        "point's framework's profile, data/stacks.toml; 'default' = the sets' own fixed costs).",
    ),
    pricer: str = VALIDATE_PRICER_OPTION,
    systems: str = typer.Option(
        None,
        "--systems",
        "-s",
        help="Only the points of these catalog systems, "
        "comma-separated (e.g. a claim's baselines: gb200-nvl72,gb300-nvl72; default: all).",
    ),
    held_out: bool = typer.Option(
        False,
        "--held-out",
        help="Judge only the rows no end-to-end fit saw: the held-out "
        "half of the stack fits' declared split and the rows no fit drew (split column "
        "held_out / none; fit/heldout.py). The shipped points, each point's own stack.",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    html: str = typer.Option(None, "--html", help="Parity plot (predicted vs measured) HTML."),
    out: str = typer.Option(None, "--out", "-o", help="Per-point results CSV."),
) -> None:
    """Predict measured points and report the error per system / model / mode."""
    from jalapeno.errors import SpecError
    from jalapeno.fit.validation_run import run_validation

    check_table_out(out, "--out", (".csv",), " (--json prints the summary as JSON on stdout)")
    check_html_out(html, "--html")
    names = _validate_systems(systems)
    res = run_validation(
        points, aiconfigurator, efficiency, mlperf=mlperf, stack=stack, pricer=pricer, held_out=held_out, systems=names
    )
    _note_unread_topology(res["unread_topology"], res["sources"]["inferencex"])
    if out:
        try:
            res["rows"].to_csv(out, index=False)
        except OSError as e:
            raise SpecError("--out", f"cannot write {out}: {e.strerror or e}", "give a writable path") from None
    if html:
        from jalapeno.report.parity import write_parity

        write_parity(res["rows"], html)
        say_written("parity plot:", html, json_out)  # it wrote the page without a word (ux50)
    if json_out:
        if note := _default_profile_note(res["rows"], stack):  # on stderr: stdout stays one JSON document (break45)
            from rich.console import Console

            Console(stderr=True).print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
        print_json(
            {
                "summary": res["summary"].to_dict(orient="records"),
                "overall": res["overall"],
                "overall_with_flagged": res["overall_all"],
                "flagged": res["flagged"],
                "unchecked": res["unchecked"],
                "skipped": res["skipped"],
                "unpredicted": res["unpredicted"],
                "sources": res["sources"],
                "left_out": res["left_out"],
                "held_out": held_out,
                "split_counts": res["split_counts"],
                "no_rows": res["no_rows"],
                "unread_topology": [{"id": i, "topology": t, "mapping": m} for i, t, m in res["unread_topology"]],
            }
        )
        return
    t = Table(
        title=f"validation ({efficiency} efficiencies{', stack ' + stack if stack else ''}"
        f"{', held-out rows only' if held_out else ''}{', systems ' + ', '.join(names) if names else ''}): "
        "error = predicted/measured - 1"
    )
    for col in ("source", "system", "model", "mode", "metric", "n", "median |err|", "p90 |err|", "bias"):
        t.add_column(col)
    for r in res["summary"].itertuples(index=False):
        t.add_row(
            r.source,
            r.system,
            r.model,
            r.mode,
            r.metric,
            str(r.n),
            f"{r.median_ape:.1%}",
            f"{r.p90_ape:.1%}",
            f"{r.bias:+.1%}",
        )
    console.print(t)
    for k, v in res["overall"].items():
        console.print(
            f"{k}: "
            + ", ".join(
                f"{m} median |err| {d['median_ape']:.1%}, bias {d['bias']:+.1%} (n={d['n']})" for m, d in v.items()
            )
        )
    c = res["split_counts"]
    console.print(
        f"points per split (fit/heldout.py): {c['fit']} fit, {c['held_out']} held out, {c['none']} in no fit; "
        + (
            "the figures above are the held-out and no-fit points'"
            if held_out
            else "the figures above count all of them (--held-out: the points no fit saw)"
        )
    )
    if held_out:  # the verdict, not only the figures: which groups miss issue 18's goals (newuser47)
        from jalapeno.fit.goals import goals_text

        if line := goals_text(res["rows"]):
            console.print(line)
    for name, why in res["no_rows"].items():  # a system named with -s and absent from the table
        console.print(f"{name}: no row above: {why}")
    for src, why in res["left_out"].items():  # before the details: a missing source changes every figure
        console.print(f"{src}: {why}; the figures above are without it (docs/validation.md states them with it)")
    rows = res["rows"]
    if mlperf and len(rows):  # the scenario rules that priced the MLPerf rows, and where their notes say the rest
        from jalapeno.fit.mlperf_notes import terminal_lines

        ml = rows[rows["source"] == "mlperf"]
        for line in terminal_lines(zip(ml["id"], ml["model"])):
            console.print(line, soft_wrap=True)
    if res["flagged"]:
        _print_flagged(res)
    if res["unchecked"]:
        console.print(
            f"data quality: {len(res['unchecked'])} point(s) in the figures above could not be held to the "
            "closed-loop identity (a cell it needs is blank: num_gpus, conc, throughput or TPOT/"
            "interactivity; fit/data_quality.py); ids: --json (unchecked)"
        )
    roof = sorted(set(rows["system"][rows["pricer"] == "roofline"])) if pricer == "table" and len(rows) else []
    if roof:  # validate covers every system: one without tables falls back, and says so
        console.print(f"--pricer table: no measured kernel tables for {', '.join(roof)}: priced with the roofline")
    if note := _default_profile_note(rows, stack):
        console.print(note)
    n_skip, n_unp = len(res["skipped"]), len({i for i, _ in res["unpredicted"]})
    if n_skip or n_unp:
        console.print(
            f"{n_skip} row(s) skipped (not mappable) and {n_unp} mapped point(s) without a prediction "
            "(infeasible deployment); reasons: --json (skipped, unpredicted) or the notes column of --out"
        )
        from jalapeno.fit.skipped import skip_kinds

        kinds = skip_kinds(res["skipped"])  # one line per kind of reason, so a broken row is never silent
        for n, rid, why in kinds[:6]:
            console.print(f"  skipped {rid}: {why}" if n == 1 else f"  {n} rows skipped, e.g. {rid}: {why}")
        if len(kinds) > 6:
            rest = sum(n for n, _, _ in kinds[6:])
            console.print(f"  ... and {rest} more, for {len(kinds) - 6} other reason(s)")
        first = dict(reversed(res["unpredicted"]))  # one reason per point (its first), in file order
        for rid in list(dict.fromkeys(i for i, _ in res["unpredicted"]))[:5]:
            console.print(f"  not predicted {rid}: {first[rid]}")
        if n_unp > 5:
            console.print(f"  ... and {n_unp - 5} more")
    # where the files went, as compare ('frontier chart: PATH') and simulate ('wrote PATH') say: validate --html
    # wrote its parity plot without a word (newuser50)
    from pathlib import Path

    for path, what in ((html, "parity plot"), (out, "per-point results")):
        if path:
            console.print(f"{what}: {Path(path).resolve()}", markup=False, soft_wrap=True)


def _default_profile_note(rows, stack: str | None) -> str:
    """The line naming the frameworks of ``rows`` (validate's per-point frame, columns ``framework`` and
    ``stack``) that no software-stack profile lists, priced with the ``default`` profile
    (specs/stacks.stack_for_framework); "" with ``--stack`` given or none such.

    A cell in parentheses is a label, not an engine: the shipped ``(best FP8)`` row (inferencex_points.csv
    row 36, B200 DeepSeek-R1 FP8 5,856.9 tok/s/GPU) is the InferenceX blog's best FP8 figure
    (InferenceX-app best-gpu-for-dsr1-inference.mdx @2d1d3d65: "FP4 hits 13,429.7 vs 5,856.9 tok/s/GPU on
    FP8", no framework named), so the default profile is the right one there and the line says why rather
    than offering ``--stack`` as a fix; frameworks that name an engine no profile lists keep the fix.
    """
    fws = sorted(set(rows["framework"][rows["stack"] == "default"])) if stack is None and len(rows) else []
    labels = [f for f in fws if f.startswith("(") and f.endswith(")")]
    engines = [f for f in fws if f not in labels]
    parts = []
    if labels:
        parts.append(
            f"rows labelled {', '.join(map(repr, labels))} name no engine (a published best-of-sweep "
            "figure): priced with the 'default' profile"
        )
    if engines:
        parts.append(
            f"framework(s) {', '.join(map(repr, engines))}: no software-stack profile lists them "
            "(data/stacks.toml engines): priced with the 'default' profile; --stack NAME to choose one"
        )
    return "; ".join(parts)


def _validate_systems(systems: str | None) -> tuple[str, ...] | None:
    """``validate --systems``: catalog names (a claim's baselines), or None for every system.

    Raises:
        SpecError: no name, a name given twice, or a name not in the catalog (with the one meant,
            errors.choice_hint).
    """
    if systems is None:
        return None
    from jalapeno.errors import SpecError, choice_hint
    from jalapeno.specs.catalog import list_systems

    names = tuple(list_items(systems, "--systems", "gb200-nvl72,gb300-nvl72"))
    if not names:
        raise SpecError("--systems", "no system given", "pass e.g. --systems gb200-nvl72,gb300-nvl72, or leave it out")
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if (
        twice is not None
    ):  # h200,h200 was read as h200, where --concurrency 4,4 and compare -s h200,h200 refuse (break45)
        raise SpecError(
            "--systems", f"{twice!r} is given twice", "list each system once, e.g. --systems gb200-nvl72,gb300-nvl72"
        )
    for n in names:
        if n not in list_systems():
            raise SpecError(
                "--systems",
                f"unknown system {n!r}{choice_hint(n, list_systems())} (validate judges "
                "the catalog's systems on their measured points)",
                f"use catalog names: {', '.join(list_systems())}",
            )
    return names


def _note_unread_topology(unread: list[tuple[str, str, str]], path: str) -> None:
    """On stderr (JSON stays clean), one line per InferenceX row of ``path`` whose ``topology`` cell none of
    fit/ix_topology.TOPOLOGY_FORMS reads: its line, the cell, the mapping it got instead (no deployment
    given), then the accepted forms once. Such a row was re-mapped with only a JSON note before."""
    if not unread:
        return
    from pathlib import Path

    from rich.console import Console

    from jalapeno.fit.ix_topology import TOPOLOGY_FORMS

    err = Console(stderr=True)
    for rid, topo, mapping in unread:
        same = " (no earlier row of the file gives that config_id's topology)" if "(same)" in topo else ""
        err.print(
            f"note: {Path(path).name} line {rid.rpartition(':')[2]}, column topology: {topo!r} is not a "
            f"topology validate reads{same}; the row was mapped without a deployment, as {mapping}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    err.print(
        "  topology forms read: " + " | ".join(TOPOLOGY_FORMS) + "; leave the cell blank when the run's "
        "deployment is unknown (fit/ix_topology.py)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def _print_flagged(res: dict) -> None:
    """The data-quality flagged group (fit/data_quality.py; aiconfigurator TTFT: fit/aic_quality.py): its points, their errors and the reason,
    and the headline with them included (they are left out of the table above, never dropped)."""
    rows = res["rows"]
    t = Table(
        title="flagged group: points that break a data-quality rule (fit/data_quality.py, fit/aic_quality.py, "
        "fit/mlperf_quality.py), "
        "not in the figures above"
    )
    for col in ("id", "system", "error per metric", "reason"):
        t.add_column(col, overflow="fold")
    for rid, g in rows[rows.quality != ""].dropna(subset=["error"]).groupby("id", sort=False):
        t.add_row(
            rid, g.system.iloc[0], ", ".join(f"{m} {e:+.1%}" for m, e in zip(g.metric, g.error)), g.quality.iloc[0]
        )
    console.print(t)
    for k, v in res["overall_all"].items():
        console.print(
            f"{k} with the flagged group: "
            + ", ".join(
                f"{m} median |err| {d['median_ape']:.1%}, bias {d['bias']:+.1%} (n={d['n']})" for m, d in v.items()
            )
        )
