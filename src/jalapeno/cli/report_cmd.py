"""``jalapeno report``: one self-contained HTML page for a model × workload × systems question."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from jalapeno.cli.common import (
    FIXED_WORKLOAD_HELP,
    efficiency_option,
    isl_option,
    list_items,
    model_option,
    osl_option,
    print_json,
    say_written,
)
from jalapeno.cli.out_paths import check_writable
from jalapeno.cli.as_deployed import AS_DEPLOYED_HELP, deployed_recipes, mtp_unlike, refuse_with_as_deployed
from jalapeno.cli.chip_opts import refuse_die_sets
from jalapeno.cli.system_opts import SETS_OPTION, baseline_name, systems_pricers
from jalapeno.cli.usage_errors import note_shared_sets
from jalapeno.errors import SpecError, choice_hint

MEASURED_HELP = (
    "Measured points to overlay: 'shipped' (the InferenceX points shipped with jalapeno; default), "
    "'none', or a CSV of the same columns (src/jalapeno/data/validation/README.md)."
)


def report(
    model: str = model_option(),
    workload: str = typer.Option(None, "--workload", "-w", help=FIXED_WORKLOAD_HELP),
    isl: int = isl_option(),
    osl: int = osl_option(),
    precision: str = typer.Option(
        None, "--precision", "-p", help="Precision preset (default: each system sweeps what it runs natively)."
    ),
    systems: str = typer.Option(
        "jalapeno,gb200-nvl72,gb300-nvl72,vera-rubin-nvl72",
        "--systems",
        "-s",
        help="Comma-separated names or TOML paths.",
    ),
    baseline: str = typer.Option(
        None,
        "--baseline",
        "-b",
        help="System the ratios are taken against (default: gb300-nvl72 if compared, else the last).",
    ),
    power: str = typer.Option(
        "all-in",
        "--power",
        help="Power convention the page opens with and the ratio table uses: chip, "
        "sustained or all-in (the page switches between them).",
    ),
    serving: str = typer.Option(None, "--serving", help="agg, disagg or both (default both)."),
    as_deployed: bool = typer.Option(False, "--as-deployed", help=AS_DEPLOYED_HELP),
    bands: bool = typer.Option(
        False,
        "--bands/--no-bands",
        help="Also sweep the low/high efficiency sets (a measured system: its validate error band) and shade each system's band.",
    ),
    tiers: str = typer.Option(
        "fast=100,ultra_fast=300", "--tiers", help="Tier floors in tok/s/user, name=value,... (0: the peak)."
    ),
    at: str = typer.Option(
        "35,60,100",
        "--at",
        help="Interactivity values (tok/s/user) for iso-interactivity ratios, "
        "each above 0 (0 is the peak: the ratios' peak row gives it, as --tiers NAME=0 does).",
    ),
    efficiency: str = efficiency_option(),
    measured: str = typer.Option("shipped", "--measured", help=MEASURED_HELP),
    like_for_like: bool = typer.Option(
        False,
        "--like-for-like",
        help="Overlay only the measured points whose configuration (precision, "
        "agg/disagg, MTP) the system's frontier models; by default all are drawn, "
        "the others marked 'not like for like'.",
    ),
    sets: list[str] = SETS_OPTION,
    html: str = typer.Option(
        None,
        "--html",
        help="The HTML file to write (default jalapeno-report.html), the "
        "spelling every command that writes a page takes.",
    ),
    out: str = typer.Option(
        None, "--out", "-o", hidden=True, help="Old spelling of --html, kept so that scripts written for it still run."
    ),
    json_out: bool = typer.Option(
        False,
        "--json",
        help="Print the page's data as JSON (the comparison compare "
        "--json prints, and the frontiers, bands and measured points the page charts); "
        "no page unless --html is given.",
    ),
) -> None:
    """Write one self-contained HTML report (plotly inline, works offline): frontiers with metric,
    power-convention and x-axis selectors, efficiency bands, tier floors, measured points, the
    comparison tables with flagged ratios, and PNG/SVG export. --as-deployed runs each system that
    has an engine recipe as deployed, as compare --as-deployed does. --json prints the same data."""
    from jalapeno.analysis.comparison import compare_systems
    from jalapeno.cli.common import resolve_precision
    from jalapeno.analysis.spec_bands import with_estimated_specs
    from jalapeno.cli.number_lists import _floats, _floors, check_at_speeds
    from jalapeno.cli.serving_opts import _options, _setup
    from jalapeno.cost.pricer import band_pricers
    from jalapeno.deploy.checkpoints import available_precisions
    from jalapeno.report.page import write_report
    from jalapeno.report.page_data import measured_warning, report_data, split_note

    if html is not None and out is not None:
        raise SpecError(
            "--out", "is the old spelling of --html, and both were given", "give the page's path once, as --html"
        )
    flag = "--out" if out is not None else "--html"  # errors name the spelling the user typed
    out = out if out is not None else html if html is not None else "" if json_out else "jalapeno-report.html"
    if out and not out.lower().endswith((".html", ".htm")):  # '' (or --json without --html): no page
        raise SpecError(flag, f"{out!r} is not an .html file", "give a path ending in .html")
    check_writable(out, flag)
    if like_for_like and measured == "none":
        raise SpecError(
            "--like-for-like",
            "filters the measured overlay, and --measured none draws none",
            "drop --like-for-like, or give --measured shipped or a CSV path",
        )
    if measured not in ("shipped", "none"):  # was refused after the sweep
        _check_measured_path(measured)
    if serving not in (None, "agg", "disagg", "both"):
        raise SpecError(
            "--serving",
            f"unknown mode {serving!r}{choice_hint(serving, ('agg', 'disagg', 'both'))}",
            "use agg, disagg or both",
        )
    if as_deployed:
        refuse_with_as_deployed({"--precision": precision, "--serving": serving})
    from jalapeno.analysis.power_cost import check_convention

    check_convention(power)  # before the sweep: it was refused after it
    names = list_items(systems, "--systems", "jalapeno,gb300-nvl72")
    if not names:
        raise SpecError("--systems", "no system given", "pass e.g. --systems jalapeno,gb300-nvl72")
    m, wl, prec = _setup(model, workload, isl, osl, precision)
    points, notes, splits = _measured_points(measured, m.name, wl)  # read before the sweep: a bad file is named now
    syss = systems_pricers(names, efficiency, sets)
    refuse_die_sets(syss, "report")
    seen = [s.system.name for s in syss]
    dup = sorted({n for n in seen if seen.count(n) > 1})
    if dup:
        raise SpecError(
            "--systems",
            f"two systems are named {dup[0]!r}",
            'compare each system once; give a user file its own name = "..."',
        )
    base = baseline_name(baseline, names, seen)
    note_shared_sets(names, sets)  # a plain --set changed the baseline too, with no word (newuser54)
    precs = (
        None
        if precision is not None
        else {
            s.system.name: list(
                available_precisions(m.name, m.default_precision, s.system.chip.formats, m, s.system.chip)
            )
            for s in syss
        }
    )
    recipes = deployed_recipes(syss, m.name, workload, isl, osl, precs) if as_deployed else {}
    if precs is not None:
        precs = {n: [resolve_precision(m, q).name for q in ps] for n, ps in precs.items()}
    floors = _floors(tiers)
    res = compare_systems(
        m,
        syss,
        wl,
        None if precs else prec,
        baseline=base,
        convention=power,
        options=_options(serving or "both", None, None, None),
        iso_interactivity=_floats(at, "--at", check=check_at_speeds),
        floors=floors,
        bands={s.system.name: with_estimated_specs(s, band_pricers(s)) for s in syss} if bands else None,  # ux55
        precisions=precs,
        recipes=recipes,
    )
    rec = res.record()
    for n, why in rec.infeasible.items():  # the page lists it in the headline table; said here too
        print(f"note: {n} cannot run the model ({why}): the page lists it as infeasible", file=sys.stderr)
    if as_deployed:
        notes.insert(
            0,
            "As deployed: "
            + ("; ".join(f"{n}: {r.label}" for n, r in recipes.items()) or "no system")
            + " (engine recipe: precision, serving, limits, MTP by load); "
            + (", ".join(n for n in seen if n not in recipes) or "no other system")
            + ": as stated."
            + (f" {unlike[2:]}." if (unlike := mtp_unlike(recipes, [n for n in seen if n not in recipes])) else ""),
        )
    data = report_data(
        rec,
        {s.system.name: s.system for s in syss},
        res.band_frontiers,
        sorted(floors.items(), key=lambda kv: kv[1]),
        points,
        like_for_like,
        splits,
        "InferenceX (shipped)" if measured == "shipped" else Path(measured).name,
    )
    if (said := split_note(data["measured"])) is not None:
        notes.append(said)
    if not data["measured"] and measured != "none":
        # none of the model's points is on these systems: the file's line "Measured points: ..." would contradict
        notes[:] = [n for n in notes if not n.startswith("Measured points: ")]
        notes.append(
            f"No {'like-for-like ' if like_for_like and points else ''}measured point of {m.name} at "
            f"ISL {wl.isl} / OSL {wl.osl} on these systems in the "
            f"{'shipped data' if measured == 'shipped' else measured}."
        )
        if measured != "shipped":  # a user's CSV of other models or lengths drew nothing, and said so on the page only
            print(
                f"note: --measured {Path(measured).name}: {notes[-1]} The page draws none; check its model, "
                "isl/osl and hardware columns against --model, --workload and --systems",
                file=sys.stderr,
            )
    warn = measured_warning(data)
    if warn:
        notes.append(warn)
        print(f"warning: {warn}", file=sys.stderr)
    from jalapeno.report.cell_notes import estimated_prices
    from jalapeno.report.note_groups import grouped_basis_lines

    # what each system's $ figures rest on and where its watts come from (followup52), one line each with the
    # systems named on each clause (ux55: two lines per system, the shared clauses repeated)
    notes.extend(grouped_basis_lines(s.system for s in syss))
    notes.extend(page_notes(rec, syss, bands, res.band_frontiers))
    from jalapeno.cli.system_notes import SAID

    notes.extend(dict.fromkeys(SAID))  # the notes said on stderr on the systems as priced (--set power only, ...)
    from jalapeno.analysis.estimated_peaks import estimated_peak_notes  # compare's: a compute-bound answer on an

    for line in estimated_peak_notes(rec, {s.system.name: s.system for s in syss}, m):  # estimated peak (report54)
        print(f"note: {line}", file=sys.stderr)
        notes.append(line)
    prov = provenance()
    if out:
        path = write_report(
            rec,
            data,
            out,
            notes,
            estimated_prices(s.system for s in syss),
            option=flag,
            reproduce=reproduce_lines(prov),
        )
        say_written("report:", path, json_out)  # under --json on stderr: stdout stays one JSON document
    if json_out:
        print_json({**report_json(rec, data, notes, syss, res.band_frontiers), "provenance": prov})


def page_notes(rec, syss, bands: bool, band_frontiers=None) -> list[str]:
    """The lines compare prints under its tables that the page lacked (ux52: an analyst reading the page alone could
    not tell a derived efficiency set from a measured one, a rack's kW, or how sure a figure is): each system's
    efficiency set (``efficiency sets: jalapeno: calibrated: derived from gb300-nvl72; ...``), the systems whose specs
    no vendor verified (report/win_tables.spec_line), the per-rack line
    (report/win_tables.rack_line, each tier's figures with their band under --bands, ``band_frontiers``; None without a
    rack level) and, without --bands, the pointer to the bands."""
    from jalapeno.cli.compare_lines import BANDS_HINT
    from jalapeno.report.tables import efficiency_sets_line
    from jalapeno.report.win_tables import rack_line, spec_line

    lines = [efficiency_sets_line({n: s.headline.efficiency_source for n, s in rec.systems.items()})]
    if (spec := spec_line(s.system for s in syss)) is not None:
        lines.append(spec)
    if (rack := rack_line([s.system for s in syss], rec, band_frontiers)) is not None:
        lines.append(rack)
    if bands:  # the estimated specs each band holds (ux55)
        from jalapeno.analysis.spec_bands import spec_band_line

        lines += [line for line in [spec_band_line(syss)] if line is not None]
    return lines + ([] if bands else [BANDS_HINT])


def command_line(prog: str = "jalapeno") -> str | None:
    """The running command as typed, shell-quoted: ``prog`` and the words cli/app.main received (out_paths.ARGV), so
    ``jalapeno report -w 8k1k --html r.html`` reads back as typed; options left at their defaults are not written
    (the versions beside it name the release and data whose defaults those are). None when no command line is
    recorded (the function called directly, not through ``jalapeno``)."""
    import shlex

    from jalapeno.cli.out_paths import ARGV

    return " ".join([prog, *map(shlex.quote, ARGV)]) if ARGV else None


def provenance() -> dict:
    """What a saved result records of its making (DESIGN.md §6: the catalog version and parameters with every saved
    result): ``{"command": command_line(), "versions": {"package": ..., "systems": ..., "calibration": ...}}``, the
    versions being the package's and SHA-256 digests (12 hex) of the shipped system and calibration files
    (analysis/results_store.data_versions, as a results store records them)."""
    from jalapeno.analysis.results_store import data_versions

    return {"command": command_line(), "versions": data_versions()}


def reproduce_lines(prov: dict) -> list[str]:
    """The page's closing lines: the command that wrote it and the versions it ran on (:func:`provenance`).

    >>> print("\\n".join(reproduce_lines({"command": "jalapeno report --workload 8k1k", "versions": {"package": "0.1.0",
    ...     "systems": "d54cd7d15eea", "calibration": "52ec890e9598"}})))  # doctest: +NORMALIZE_WHITESPACE
    reproduce: jalapeno report --workload 8k1k
    versions: jalapeno 0.1.0; shipped data: systems d54cd7d15eea, calibration 52ec890e9598 (SHA-256 of the catalog's
    system and calibration files, first 12 hex; a results store records the same)
    """
    v = prov["versions"]
    return [
        f"reproduce: {prov['command'] or '(not run from the command line)'}",
        f"versions: jalapeno {v['package']}; shipped data: systems {v['systems']}, calibration {v['calibration']} "
        "(SHA-256 of the catalog's system and calibration files, first 12 hex; a results store records the same)",
    ]


def report_json(rec, data: dict, notes: list[str], syss, band_frontiers) -> dict:
    """What ``report --json`` prints: the data the page shows, chartable (ux50: the README's "--json prints
    JSON" held for every command but report).

    Returns:
        ``{"comparison": ..., "chart": ..., "notes": [...]}``: ``comparison`` is ``compare --json``'s document
        less its ``provenance`` (report's is beside ``comparison``): each system's frontier, headline, ratios,
        tiers, its price basis and, with --bands, its low/high frontiers, and ``per_rack``; ``chart`` is the page's own data (report/page_data.report_data: the title, power conventions,
        tier floors, each system's colour, frontier points with every metric the page's selectors switch
        between, band points, and the measured points overlaid with their configuration and ``like``);
        ``notes`` are the page's notes, in its order.
    """
    from jalapeno.cli.compare_lines import comparison_json
    from jalapeno.report.win_tables import rack_json

    d = comparison_json(rec, syss, band_frontiers)  # and compare's per_rack: report54 found it missing here
    d["per_rack"] = rack_json([s.system for s in syss], rec, band_frontiers)
    return {"comparison": d, "chart": data, "notes": list(notes)}


def _check_measured_path(measured: str) -> None:
    """Refuse a ``--measured`` path that is no file: missing (:func:`_measured_missing`) or a directory (it was told
    "file not found", break54). A pipe or a device passes: fit/ix_cells.points_rows reads it as every user file.

    Raises:
        SpecError: field ``--measured``.
    """
    p = Path(measured)
    if p.is_dir():
        raise SpecError(
            "--measured",
            f"{measured!r} is a directory, not an InferenceX points CSV",
            "give 'shipped', 'none' or a CSV path",
        )
    if not p.exists():
        raise _measured_missing(measured)


def _measured_missing(measured: str) -> SpecError:
    """The error for a ``--measured`` that is neither a keyword nor a file; a misspelt keyword (``shiped``,
    ``Shipped``, ``NONE``: no ``.`` or ``/`` in it) is named as the one meant (break47: "file not found" alone)."""
    hint = "" if any(c in measured for c in "./\\") else choice_hint(measured, ("shipped", "none"))
    return SpecError("--measured", f"{measured!r}: file not found{hint}", "give 'shipped', 'none' or a CSV path")


def _measured_points(measured: str, model: str, wl) -> tuple[list, list[str], dict[str, str]]:
    """Measured points of ``model`` at the workload's ISL/OSL (the page keeps the compared systems), the page's
    note on their source, and each point's split as validate labels it (report/page_data.measured_splits)."""
    if measured == "none":
        return [], [], {}
    from jalapeno.fit.ix_cells import SHIPPED_POINTS, has_rows

    if measured == "shipped" and not has_rows(SHIPPED_POINTS, model, wl.isl, wl.osl):  # no row to keep: the same
        return [], [], {}  # answer as below, without the full load and its imports (ux55)
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validation_run import DEFAULT_POINTS

    path = DEFAULT_POINTS if measured == "shipped" else Path(measured)
    if measured != "shipped":
        _check_measured_path(measured)
    pts, skipped = load_inferencex(path, "--measured")
    if skipped and not pts and measured != "shipped":  # every row unreadable: a page without them, exit 0, before
        raise SpecError(
            f"--measured {path.name}",
            f"no measured point could be read; {len(skipped)} row(s) skipped (first: {skipped[0][0]}: {skipped[0][1]})",
            "check the CSV's hardware/model names and "
            "numbers against the InferenceX points format, or pass --measured none",
        )
    if skipped and measured != "shipped":  # a user file's unreadable rows are named, not dropped silently
        print(
            f"warning: --measured {path.name}: {len(skipped)} row(s) skipped, first {skipped[0][0]}: {skipped[0][1]}",
            file=sys.stderr,
        )
    keep = [p for p in pts if p.model == model and p.isl == wl.isl and p.osl == wl.osl]
    src = "InferenceX points shipped with jalapeno" if measured == "shipped" else str(path)
    from jalapeno.report.page_data import measured_splits

    splits = measured_splits(pts, measured == "shipped") if keep else {}
    return keep, ([f"Measured points: {src} (each row's source in the CSV)."] if keep else []), splits
