"""``jalapeno explore`` (design search), and the registration of ``jalapeno results list|show|export`` (the results
store: cli/results_cmds.py, split from here in round 54, module budget)."""

from __future__ import annotations

import datetime as _dt
import sys
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from jalapeno.analysis.price_reason import BASIS_FIELD
from jalapeno.cli.common import console, print_json, say_written
from jalapeno.cli.explore_lines import base_basis as _base_basis
from jalapeno.cli.explore_lines import base_lines as _base_lines
from jalapeno.cli.explore_lines import moved_together_note as _moved_together_note
from jalapeno.cli.explore_lines import fig as _fig
from jalapeno.cli.explore_lines import price_estimated as _price_estimated
from jalapeno.cli.system_notes import note_power_only
from jalapeno.errors import SpecError, require_extra


#: An estimated run above this many seconds is announced before it starts (with the estimate). The
#: estimate is measured, not a constant: one trial costs what pricing the base system took on this
#: machine (analysis/explore.Evaluator.base_eval_s; a design is priced as the base is, pruned ones
#: cost less). A fixed 0.1 s per case said nothing before examples/explore_700w.toml's 200 trials
#: ran 167 s (0.42 s per case there).
LONG_RUN_S = 30.0

STORE_HELP = "Results store folder (Optuna SQLite + Parquet runs; created if missing)."


def explore(
    space_file: str = typer.Argument(..., metavar="SPACE.toml", help="Design space (docs/explore.md)."),
    trials: int = typer.Option(None, "--trials", "-n", help="Finished trials to reach (default: the space's)."),
    workers: int = typer.Option(
        1, "--workers", help="Parallel trial evaluations on a local Ray instance (1 = in-process)."
    ),
    address: str = typer.Option(None, "--address", help="Join an existing Ray cluster (e.g. ray://host:10001)."),
    batch: int = typer.Option(
        8, "--batch", help="Trials asked together; results depend on seed and batch, not on --workers."
    ),
    store: str = typer.Option("jalapeno-results", "--store", help=STORE_HELP),
    storage: str = typer.Option(
        None, "--storage", help="Optuna storage URL (any SQLAlchemy URL; default: SQLite in --store)."
    ),
    study: str = typer.Option(None, "--study", help="Study name (default: the space's name)."),
    resume: bool = typer.Option(False, "--resume", help="Continue a stored study up to --trials finished trials."),
    top: int = typer.Option(5, "--top", min=0, help="Designs to list."),
    html: str = typer.Option(None, "--html", help="Write the report (designs, parallel coordinates, importance)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Search a design space for the chips that best meet its objectives within its constraints."""
    from jalapeno.analysis import results_store as rs
    from jalapeno.analysis.explore import make_evaluator
    from jalapeno.analysis.explore_full import compare_block
    from jalapeno.analysis.search import importances, open_study, run_search
    from jalapeno.specs.design_space import MAX_TRIALS, load_design_space

    # first: without the [explore] extra, storage_url made the store folder and the base system was
    # priced before open_study refused, leaving an empty jalapeno-results/ that `results list` then
    # showed as a store with no runs
    # the file before the extra: a user without optuna learns of the file's mistakes first (nothing is
    # created by reading it; the store and the study come after require_extra)
    space = load_design_space(space_file)
    require_extra("optuna", "explore", "explore")
    # a searched or derived TDP moves only the chip/sustained power a trial divides by, as --set's does (newuser52:
    # a space searching chip.tdp_w 400-900 W ranked designs on all-in tok/s/kW that the TDP never reaches)
    note_power_only([(k, None) for k in (*space.params, *space.derived)], who=f"{space_file}: ")
    moved = _moved_together_note(space, space_file)
    if moved:  # a searched rack alone (ports shared with the tray) was free in power (arch52)
        print(moved, file=sys.stderr)
    n = space.trials if trials is None else trials
    if n < 1:
        raise SpecError("--trials", f"must be at least 1, got {n}", "give --trials 100, say")
    if n > MAX_TRIALS:  # a search converges in hundreds of trials (the example's 200 ran 167 s, 0.84 s a trial: a
        # million is ~10 days on one worker); 1e11 started ~17 million hours behind a bar (break53). The file's
        # trials are bounded where it is read (specs/design_space.DesignSpace).
        raise SpecError(
            "--trials",
            f"{n:,} trials is over the {MAX_TRIALS:,}-trial plausibility bound (a search converges in hundreds; "
            "examples/explore_700w.toml runs 200)",
            "give --trials 200, say; --resume continues a stored study later",
        )
    if batch < 1 or workers < 1:  # here, not only in run_search: that ran after the study was created,
        # so the corrected rerun was refused ('a study named ... is already in ...; add --resume')
        opt, v = ("--batch", batch) if batch < 1 else ("--workers", workers)  # the one given wrong, not both
        raise SpecError(opt, f"must be at least 1, got {v}", f"give {opt} {8 if opt == '--batch' else 2}, say")
    if study is not None and not study.strip():  # '' ran under the space's name, silently
        raise SpecError("--study", "is empty", f"give a name, or leave --study out for the space's ({space.name!r})")
    if html:
        check_html_path(html)
    name = study or space.name
    url = rs.storage_url(store, storage)
    ev = make_evaluator(space)  # first: an unknown case model or an unscorable base must not leave a study behind
    try:
        st = open_study(space, url, name, resume)
    except SpecError as e:  # a --store whose explore.db is no SQLite file was blamed on --storage (not given)
        if storage or e.field != "--storage":
            raise
        raise SpecError(
            "--store",
            f"{Path(store) / 'explore.db'} is not a readable study store ({e.problem})",
            "give another --store folder, or move that explore.db aside (explore creates a new one)",
        ) from None
    _announce_long_run(n - rs_finished(st), len(space.cases), workers, ev.base_eval_s)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=json_out,
    ) as bar:
        task = bar.add_task(f"explore {name}", total=n, completed=rs_finished(st))
        run_search(
            space, ev, st, n, batch=batch, workers=workers, address=address, on_trial=lambda i, r: bar.advance(task)
        )
    rows = rs.trial_rows(st)
    imp = importances(st, space)
    d = rs.new_run_dir(store, "explore", name, fixed=True)
    meta = _explore_meta(space, name, url, rows, st)
    meta["run"] = d.name
    meta["base_metrics"] = [
        {"model": c.model, "workload": c.workload, **b} for c, b in zip(space.cases, ev.base_metrics)
    ]
    meta["compare"] = compare_block(ev, meta, rows)
    rs.write_json(d / "meta.json", meta)
    rs.write_table(d / "trials.parquet", rows)
    rs.write_json(d / "extra.json", {"importance": imp})
    if html:
        _write_explore_html(d, html)
    out = {"run": d.name, "store": str(Path(store)), **_summary(meta, rows, imp, top)}
    if json_out:
        print_json(out)
        if html:  # where the page went, on stderr: stdout stays one JSON document
            say_written("report:", html, json_out=True)
        return
    _print_summary(out)
    if html:
        say_written("report:", html)


def _announce_long_run(trials: int, cases: int, workers: int, trial_s: float) -> None:
    """A note on stderr when ``trials`` left to run would take over :data:`LONG_RUN_S`. Estimate:
    ``trials`` x ``trial_s`` (the measured seconds pricing the base system's ``cases`` took),
    spread over ``workers``. ``--trials 1000000`` ran for days, and the 200 trials of
    examples/explore_700w.toml for ~3 minutes, with no word before the bar."""
    est = max(trials, 0) * max(trial_s, 0.0) / max(workers, 1)
    if est <= LONG_RUN_S:
        return
    import sys

    span = f"{est / 3600:.1f} hours" if est >= 3600 else f"{est / 60:.1f} minutes" if est >= 60 else f"{est:.0f} s"
    print(
        f"note: {trials:,} trials x {cases} case(s); pricing the base system took {trial_s:.2f} s here, so this "
        f"takes up to ~{span} on {max(workers, 1)} worker(s) (pruned designs cost less); the bar shows the time "
        "left. --trials N runs fewer (a stored study continues later with --resume), --workers N spreads them",
        file=sys.stderr,
    )


def check_html_path(html: str) -> None:
    """Refuse an --html path that cannot be written, before any work is done.

    Raises:
        SpecError: not an .html file, a folder, in a folder that does not exist or is a file, or a file that
            cannot be created (cli/out_paths.check_html_out: /proc as root ran every trial, then refused, break46).
    """
    from jalapeno.cli.out_paths import check_html_out

    check_html_out(html, "--html")


def rs_finished(st) -> int:
    """Trials of the optuna study ``st`` that ran to the end (analysis/search.finished), imported on first use."""
    from jalapeno.analysis.search import finished

    return finished(st)


def _explore_meta(space, name: str, url: str, rows: list[dict], st) -> dict:
    from jalapeno.analysis.results_store import data_versions

    done = [r for r in rows if r["state"] == "COMPLETE"]
    if len(space.objective.metrics) > 1:
        pareto = sorted(t.number for t in st.best_trials)
    else:
        sign = 1 if space.directions[0] == "maximize" else -1
        key = f"score:{space.objective.metrics[0]}"
        pareto = [max(done, key=lambda r: sign * r[key])["trial"]] if done else []
    return {
        "run": f"explore-{name}",
        "kind": "explore",
        "name": name,
        "base": space.base,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "metrics": list(space.objective.metrics),
        "directions": space.directions,
        "pareto": pareto,
        "space": space.model_dump(),
        "storage": url.split("///")[0] + "///…" if url.startswith("sqlite") else url,
        "versions": data_versions(),
    }


def _summary(meta: dict, rows: list[dict], imp: dict, top: int) -> dict:
    metrics = meta["metrics"]
    done = [r for r in rows if r["state"] == "COMPLETE"]
    sign = 1 if meta["directions"][0] == "maximize" else -1
    best = sorted(done, key=lambda r: -sign * r[f"score:{metrics[0]}"])
    if len(metrics) > 1:
        best = [r for r in done if r["trial"] in set(meta["pareto"])]
    # a design the sampler drew twice (a small discrete space) filled two of the top rows with one design
    seen: dict[tuple, dict] = {}
    for r in best:
        seen.setdefault(tuple(repr(v) for k, v in r.items() if k.startswith("param:")), r)
    best = list(seen.values())[:top]
    pruned: dict[str, int] = {}
    for r in rows:
        if r["state"] == "PRUNED":
            k = r["reason"].split(" ")[0]
            pruned[k] = pruned.get(k, 0) + 1
    return {
        "name": meta["name"],
        "base": meta["base"],
        "base_metrics": meta.get("base_metrics", []),
        "metrics": metrics,
        "trials": len(rows),
        "feasible": len(done),
        "distinct": len({tuple(repr(v) for k, v in r.items() if k.startswith("param:")) for r in done}),
        "pruned_by": pruned,
        "designs": best,
        "importance": imp,
        "versions": meta["versions"],
        "objective": meta["space"].get("objective", {}),
        "sweep": meta["space"].get("sweep", {}),
        "compare": meta.get("compare"),
        BASIS_FIELD: _base_basis(meta["base"]),
    }


def _print_summary(out: dict) -> None:
    from jalapeno.report.cell_notes import ESTIMATE_MARK, estimate_caption

    twice = f", {out['distinct']} distinct designs" if out.get("distinct", out["feasible"]) < out["feasible"] else ""
    t = Table(
        title=f"{out['name']}: best designs of {out['trials']} trials ({out['feasible']} feasible{twice}; "
        f"scores relative to {out['base']})"
    )
    cols = ["trial"] + [k for k in (out["designs"][0] if out["designs"] else {}) if k.startswith(("param:", "score:"))]
    short = short_headers([c[len("param:") :] for c in cols if c.startswith("param:")])
    est = _price_estimated(out["base"])
    # a score is a ratio to the base: say so
    for c in cols + ["chip W", "$/chip-hour" + (ESTIMATE_MARK if est else "")]:
        key = c.split(":", 1)[-1]
        t.add_column(
            f"{key} (x base)" if c.startswith("score:") else short.get(key, key), justify="right", overflow="fold"
        )
    for r in out["designs"]:
        t.add_row(
            *[_fig(r[c]) if isinstance(r[c], float) else str(r[c]) for c in cols],
            f"{r['chip_power_w']:.0f}",
            f"{r['usd_per_chip_hour']:.2f}",
        )
    console.print(t)
    if any(k != v for k, v in short.items()):  # the full keys, as the space file names them
        console.print("columns: " + "; ".join(f"{v} = {k}" for k, v in short.items() if k != v), markup=False)
    from jalapeno.analysis.explore_full import compare_lines

    est_lines = [estimate_caption([out["base"]])] if est else []
    basis = [f"price basis: {out[BASIS_FIELD]}"] if out.get(BASIS_FIELD) else []
    for line in _base_lines(out, ESTIMATE_MARK if est else "") + est_lines + basis + compare_lines(out):
        console.print(line, markup=False)
    if out["pruned_by"]:
        console.print(
            "pruned (trials that broke a constraint, not priced; docs/explore.md): "
            + ", ".join(f"{k} {v}" for k, v in sorted(out["pruned_by"].items())),
            markup=False,
        )
    for m, imp in out["importance"].items():
        if imp:
            console.print(importance_line(m, imp), markup=False)


def short_headers(keys: list[str]) -> dict[str, str]:
    """Column headers of explore's table for parameter keys: each key without its section (its first dotted
    part: ``chip.``, ``levels.``, ``efficiency.``), which every key has and which made the headers wrap
    mid-word (``chip.peak_dense_tflo|ps.fp8``); the full key where the short one would be empty or would be
    another key's too. The table's legend line maps them back.

    >>> short_headers(["chip.peak_dense_tflops.fp8", "chip.hbm_stacks", "levels.rack.bandwidth_gb_per_s"])
    {'chip.peak_dense_tflops.fp8': 'peak_dense_tflops.fp8', 'chip.hbm_stacks': 'hbm_stacks', \
'levels.rack.bandwidth_gb_per_s': 'rack.bandwidth_gb_per_s'}
    >>> short_headers(["chip.x", "efficiency.x", "trials"])
    {'chip.x': 'chip.x', 'efficiency.x': 'efficiency.x', 'trials': 'trials'}
    """
    cut = {k: k.split(".", 1)[1] if "." in k else k for k in keys}
    seen = list(cut.values())
    return {k: v if seen.count(v) == 1 else k for k, v in cut.items()}


def importance_line(metric: str, imp: dict[str, float]) -> str:
    """One metric's parameter importances (PED-ANOVA shares, 0-1), the largest first. ``results show`` reads
    them back from the store, whose JSON keeps the keys in name order: it printed 'chip.hbm_stacks 0.00' first
    where ``explore`` had printed 'levels.rack.bandwidth_gb_per_s 0.34' first, for the same study.

    >>> importance_line("tok_s_per_kw", {"a.x": 0.0, "b.y": 0.34, "c.z": 0.26})
    'importance for tok_s_per_kw: b.y 0.34, c.z 0.26, a.x 0.00'
    """
    ranked = sorted(imp.items(), key=lambda kv: -kv[1])
    return f"importance for {metric}: " + ", ".join(f"{k} {v:.2f}" for k, v in ranked)


def _write_explore_html(d: Path, html: str) -> None:

    from jalapeno.analysis import results_store as rs
    from jalapeno.report.explore_html import explore_page, write_page

    meta = rs.read_meta(d)
    rows = rs.read_table(d, meta, need=("trial", "state"))
    imp = rs.read_json(d, "extra.json").get("importance", {})
    write_page(explore_page(meta, rows, imp, _base_basis(meta["base"]) or ""), html)


def register(app: typer.Typer) -> None:
    """Add ``explore`` and the ``results`` group to ``app``."""
    from jalapeno.cli.results_cmds import results_app

    app.command("explore")(explore)
    app.add_typer(results_app, name="results")
