"""What ``jalapeno compare`` prints and writes from a comparison (cli/serving_cmds.compare): the terminal's tables and
the lines under them (:func:`print_comparison`), and the ``--json`` document (:func:`comparison_json`, which
``report --json`` reuses). Split from cli/serving_cmds.py (round 54, module budget)."""

from __future__ import annotations

from jalapeno.cli.as_deployed import mtp_unlike
from jalapeno.cli.chip_opts import chip_model_band_lines, chip_model_line
from jalapeno.cli.common import console

#: printed under compare's tables when --bands is off: the ratios above are point figures
BANDS_HINT = (
    "how sure: these are point figures; add --bands for each figure's band and each ratio's (a derived system's "
    "efficiency band, a measured one's validate p10/p90 error; docs/metrics.md §6)"
)


def print_comparison(
    rec, syss, band_frontiers, m, names, names_in, recipes, stacks, stack, bands, plain, workload_name, model
) -> None:
    """Print compare's tables and the lines under them: price and power basis, spec and per-rack lines, the chip
    model, the engine recipes (``--as-deployed``), the software stack, the how-sure hint without ``--bands`` and,
    for a ``plain`` run (no what-if option), the audits that answer "what would the chip have to be".

    ``rec``: the comparison's record; ``syss``: the pricers compared, in ``--systems`` order; ``names`` as typed,
    ``names_in`` as named in their files; ``recipes``: system name -> the recipe it runs as deployed; ``stacks``:
    system name -> the recipe's stack at its release (None without a recipe), ``stack`` the ``--stack`` given;
    ``workload_name`` and ``model`` as the audit hints repeat them."""
    from jalapeno.analysis.price_reason import basis_lines, power_basis_lines
    from jalapeno.report.cell_notes import estimated_prices
    from jalapeno.report.tables import comparison_tables

    for t in comparison_tables(rec, estimated_prices(s.system for s in syss), console.width):
        console.print(t)
    from jalapeno.report.win_tables import audit_hints, rack_line, spec_line

    sy = [s.system for s in syss]
    for line in [*basis_lines(sy), *power_basis_lines(sy), spec_line(sy), rack_line(sy, rec, band_frontiers)]:
        if line is not None:  # rack_line: None without a rack level (ux51); spec_line: every spec verified (ux52)
            console.print(line, markup=False, soft_wrap=True)
    if (line := chip_model_line(syss)) is not None:
        console.print(line, markup=False)
        for line in chip_model_band_lines(syss, m.name) if bands else []:
            console.print(line, markup=False)
    if bands:  # the estimated specs each band holds (analysis/spec_bands.py, ux55)
        from jalapeno.analysis.spec_bands import spec_band_line

        if (line := spec_band_line(syss)) is not None:
            console.print(line, markup=False, soft_wrap=True)
    if recipes:
        stated = [n for n in names_in if n not in recipes]
        console.print(
            "as deployed (engine recipes, data/engines.toml): "
            + ", ".join(f"{n} {r.name}" for n, r in recipes.items())
            + (f"; as stated: {', '.join(stated)}" if stated else "")
            + mtp_unlike(recipes, stated),
            markup=False,
        )
    if stacks:
        console.print(
            "software stack (the engine recipe at its release): " + ", ".join(f"{n} {v}" for n, v in stacks.items()),
            markup=False,
        )
    elif stack:
        console.print(f"software stack: {stack} (every system; data/stacks.toml)")
    if not bands:  # "how sure are we" had no pointer: the default tables print point figures only
        console.print(BANDS_HINT, markup=False)
    if plain:  # "what would the chip have to be": the audit that answers it, where it prices what compare did (ux51)
        for line in audit_hints(rec, workload_name, model, dict(zip(names_in, names))):
            console.print(line, markup=False, soft_wrap=True)


def warm_compare(chart: bool = True) -> None:
    """Do, ahead of time, the first-use work of what ``compare`` prints after its sweeps (:func:`print_comparison`,
    cli/serving_cmds.compare): import the modules they import on first use (analysis/price_reason,
    analysis/estimated_peaks, analysis/capacity, cost/tiles, report/cell_notes, report/tables, report/narrow,
    report/win_tables), load rich's emoji table (its first printed line) and, with ``chart``, plotly's start-up
    (report/html.warm_chart) and its page writer (plotly.io's to_html). Imports and caches only: the same output
    either way. ``compare`` runs it while its sweeps run in worker processes (analysis/workers.meanwhile), off the
    run's serial end: 51 M instructions beside the chart's (callgrind, round 55; about 10-40 ms on this 2-core
    machine at load 1-9)."""
    if chart:  # the larger part first: what the workers leave undone when they finish is done where it is needed
        import plotly.io

        from jalapeno.report.html import warm_chart

        warm_chart()
        plotly.io.to_html  # noqa: B018 (plotly.io loads its page writer on this first read)
    import jalapeno.analysis.capacity  # noqa: F401
    import jalapeno.analysis.estimated_peaks  # noqa: F401
    import jalapeno.analysis.price_reason  # noqa: F401
    import jalapeno.cost.tiles  # noqa: F401
    import jalapeno.report.cell_notes  # noqa: F401
    import jalapeno.report.narrow  # noqa: F401
    import jalapeno.report.tables  # noqa: F401
    import jalapeno.report.win_tables  # noqa: F401
    from rich.emoji import Emoji

    Emoji.replace(":smile:")  # rich reads its emoji table on the first line it prints


#: the per-point fields of compare --json's ``band_frontiers`` (docs/metrics.md §6): enough to draw a band
BAND_POINT_FIELDS = (
    "interactivity",
    "throughput_per_chip",
    "output_throughput_per_chip",
    "tok_s_per_kw_by_convention",
    "e2e_s",
    "ttft_s",
    "tpot_s",
)


#: the tokens a $/M tok figure counts, by plan's --target-kind (compare's: input + output, "total"), in --json's
#: ``usd_per_mtok_basis`` beside each ``usd_per_mtok*`` field (newuser55: compare's and plan's were 10x apart unsaid)
MTOK_BASIS = {"output": "output tokens", "total": "input + output tokens"}


def comparison_json(rec, syss, band_frontiers: dict) -> dict:
    """``compare --json``'s document (``report --json``'s ``comparison``): the record's dict with each system's
    price basis (what its $/chip-hour rests on), power basis (where its watts come from) and, with --bands, its
    low/high frontiers (:func:`band_frontiers_json`)."""
    from jalapeno.analysis.price_reason import BASIS_FIELD, POWER_BASIS_FIELD, power_basis, system_basis

    d = rec.as_dict()
    for s in syss:
        if s.system.name in d["systems"]:  # one that cannot run the model has no row, no $ figure
            d["systems"][s.system.name][BASIS_FIELD] = system_basis(s.system)
            d["systems"][s.system.name][POWER_BASIS_FIELD] = power_basis(s.system)  # its watts' sources
            # which tokens its $/M counts: input + output (plan's counts the target's kind, output by default; newuser55)
            d["systems"][s.system.name]["usd_per_mtok_basis"] = MTOK_BASIS["total"]
    for n, ends in band_frontiers.items():  # the low/high frontiers the report page shades (analyst49)
        if n in d["systems"]:
            d["systems"][n]["band_frontiers"] = band_frontiers_json(ends)
    return d


def band_frontiers_json(ends: dict) -> dict:
    """``{"low": [...], "high": [...]}``: each end's frontier points (FrontierRecords of
    Comparison.band_frontiers) with :data:`BAND_POINT_FIELDS`, by interactivity ascending; None where that end is
    the calibrated frontier (no band: a measured system off its validated models, a user file, a what-if set)."""
    return {
        w: None
        if ends.get(w) is None
        else [{k: v for k, v in p.as_dict().items() if k in BAND_POINT_FIELDS} for p in ends[w].frontier]
        for w in ("low", "high")
    }
