"""``jalapeno results list|show|export``: the runs a results store holds (analysis/results_store.py), and the
writing side of ``compare``/``frontier --store`` (:func:`store_frontier`, :func:`say_stored`). An explore run is
shown with explore's own summary (cli/explore_cmd.py, which registers the ``results`` group). Split from
cli/explore_cmd.py (round 54, module budget)."""

from __future__ import annotations

import sys

import typer
from rich.table import Table

from jalapeno.cli.common import console, print_json, say_written
from jalapeno.cli.explore_cmd import _print_summary, _summary, _write_explore_html, check_html_path
from jalapeno.errors import SpecError


results_app = typer.Typer(no_args_is_help=True, help="Stored runs: list, show (re-render), export.")


#: ``results list/show/export --store``: read, never created (a missing store is refused, naming the fix); the help
#: said "created" there too, and both helps printed the default twice ("Default jalapeno-results. [default:
#: jalapeno-results]", newuser51).
READ_STORE_HELP = (
    "Results store folder a run wrote (explore, compare/frontier --store), read from the current "
    "directory when relative."
)


@results_app.command("list")
def results_list(
    store: str = typer.Option("jalapeno-results", "--store", help=READ_STORE_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Every stored run (a DuckDB query over the store's meta files)."""
    from jalapeno.analysis.results_store import list_runs

    runs = list_runs(store)
    if json_out:
        print_json(runs)
        return
    t = Table(title=f"runs in {store}")
    for c in ("run", "kind", "name", "created"):
        t.add_column(c)
    for r in runs:
        t.add_row(str(r["run"]), str(r["kind"]), str(r["name"]), str(r["created"]))
    console.print(t)


@results_app.command("show")
def results_show(
    run: str = typer.Argument(..., help="Run name (see `jalapeno results list`)."),
    store: str = typer.Option("jalapeno-results", "--store", help=READ_STORE_HELP),
    top: int = typer.Option(5, "--top", min=1, help="Designs or points to list (at least 1)."),
    html: str = typer.Option(None, "--html", help="Re-render the run's report here."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Re-render a stored run: its summary table and (with --html) the same report it wrote."""

    from jalapeno.analysis import results_store as rs
    from jalapeno.report.explore_html import frontier_page, write_page

    if html:
        check_html_path(html)
    d = rs.run_dir(store, run)
    meta = rs.read_meta(d)
    need = (
        ("trial", "state")
        if meta["kind"] == "explore"
        else ("system", "interactivity_tok_per_s_per_user", "throughput_per_chip_tok_per_s")
    )
    rows = rs.read_table(d, meta, need=need)
    if meta["kind"] == "explore":
        if not {"metrics", "directions"} <= set(meta):
            raise SpecError(f"RUN {run}", "meta.json lacks the explore run's metrics", "re-run it")
        imp = rs.read_json(d, "extra.json").get("importance", {})
        if html:
            _write_explore_html(d, html)
        out = {"run": run, "store": store, **_summary(meta, rows, imp, top)}
        if json_out:
            print_json(out)
        else:
            _print_summary(out)
        if html:  # written with no word, where explore itself says where its report went
            say_written("report:", html, json_out)
        return
    if html:
        write_page(frontier_page(meta, rows), html)
    # each system's first --top points by interactivity: a compare run's rows[:top] were all its first system's
    per: dict[str, list] = {}
    for r in rows:
        per.setdefault(str(r["system"]), []).append(r)
    shown = [r for pts in per.values() for r in pts[:top]]
    if json_out:
        print_json({"run": run, "meta": meta, "points": shown})
        if html:
            say_written("report:", html, json_out=True)
        return
    cut = any(len(pts) > top for pts in per.values())
    t = Table(
        title=f"{run}: {meta['kind']} {meta['name']} ({len(rows)} frontier points)",
        caption=(
            f"the first {top} points of each system's frontier, slowest per-user speed first; --top N "
            "lists more, `jalapeno results export` all"
        )
        if cut
        else None,
    )
    for c in ("system", "interactivity tok/s/user", "throughput tok/s/chip", "deployment"):
        t.add_column(c)
    for r in shown:
        t.add_row(
            str(r["system"]),
            f"{r['interactivity_tok_per_s_per_user']:,.1f}",
            f"{r['throughput_per_chip_tok_per_s']:,.0f}",
            str(r.get("deployment", "")),
        )
    console.print(t)
    if html:
        say_written("report:", html)


@results_app.command("export")
def results_export(
    run: str = typer.Argument(..., help="Run name (see `jalapeno results list`)."),
    out: str = typer.Option(..., "--out", "-o", help="FILE.csv, .json or .parquet."),
    store: str = typer.Option("jalapeno-results", "--store", help=READ_STORE_HELP),
) -> None:
    """Export a run's table (trials or frontier points) through DuckDB."""
    from jalapeno.analysis import results_store as rs
    from jalapeno.cli.out_paths import check_writable

    check_writable(out, "--out")  # first: '-o st' (a folder) was told "unknown file type '(none)'"
    rs.refuse_output_in_store(out, store)  # '-o STORE/runs/OTHER/meta.json' dropped OTHER from the store (break51)
    rs.export(rs.run_dir(store, run), out)
    console.print(f"wrote {out}", markup=False)


def store_frontier(store: str, kind: str, name: str, record, settings: dict) -> str:
    """``compare``/``frontier --store``: the record's frontier points as a Parquet run; returns its name."""
    import datetime

    from jalapeno.analysis import results_store as rs

    d = rs.new_run_dir(store, kind, name)
    frame = record.to_frame()
    rs.write_table(d / "points.parquet", frame.to_dict(orient="records"))
    rs.write_json(d / "extra.json", record.as_dict())
    created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    rs.write_json(
        d / "meta.json",
        {
            "run": d.name,
            "kind": kind,
            "name": name,
            "settings": settings,
            "created": created,
            "versions": rs.data_versions(),
        },
    )
    return d.name


def stored_line(run: str, store: str, command: str) -> str:
    """The line after ``compare``/``frontier --store`` wrote run ``run``: the figures were computed afresh — neither
    command reads a stored run back, so the same arguments twice sweep twice and store ``…-1`` and ``…-2`` — and
    how to read this one back (ux53: the line said only where the run went).

    >>> stored_line("compare-gpt-oss-120b-1k1k-2", "st", "compare")
    'stored as run compare-gpt-oss-120b-1k1k-2 in st; computed afresh (compare never reads a stored run back: the same arguments again sweep again and store a new run); read it back: `jalapeno results show compare-gpt-oss-120b-1k1k-2 --store st`'
    """
    return (
        f"stored as run {run} in {store}; computed afresh ({command} never reads a stored run back: the same "
        f"arguments again sweep again and store a new run); read it back: `jalapeno results show {run} --store {store}`"
    )


def say_stored(run: str, store: str, command: str, json_out: bool) -> None:
    """:func:`stored_line` on stdout, or on stderr under ``--json`` (stdout stays one JSON document; ``--json
    --store`` stored the run without a word)."""
    if json_out:
        print(stored_line(run, store, command), file=sys.stderr)
    else:
        console.print(stored_line(run, store, command), markup=False, soft_wrap=True)
