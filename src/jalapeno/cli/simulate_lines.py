"""What ``jalapeno simulate`` checks and prints around a run (cli/simulate_cmd.py): which options each workload kind
takes (:func:`check_applicable`), the table's title words (workload label, protocol), the overload note of an open
loop past the deployment's capacity, the summary table and the per-request ``--out`` file. Split from
cli/simulate_cmd.py (round 54, module budget)."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from jalapeno.errors import SpecError


def _workload_label(kind: str, kw: dict, workload: str) -> str:
    """The workload in the summary's title, as predict names it ('8k1k', '8192/1024'): an agentic
    preset or file by its name ('agentic:research-agent'), a trace by its file name ('trace
    my.csv'). The title named the model, system and deployment but not the workload, so runs of
    research-agent, a trace and 8k1k printed the same title (newuser47)."""
    if kind == "agentic":
        return f"agentic:{kw['agentic'].name}"
    if kind == "trace":
        return f"trace {Path(workload).name}"
    return kw["workload"].name  # as predict's title: '8k1k', or '8192/1024' for --isl/--osl


def _overload_note(m, pr, dep, wl, rate: float) -> str:
    """A note when an open-loop ``--rate`` is above what the deployment sustains (the analytic
    capacity ``predict --rate`` refuses past, serve/point.serve_at_rate): simulate ran it with no
    word, its queue growing for the whole run, and printed a 'steady state' that is none (at
    ``--rate 1e6`` one over 0.0 s). '' when the rate is sustainable."""
    from jalapeno.serve.point import sustainable_rate_per_s

    lam_cap = sustainable_rate_per_s(m, pr, dep, wl)
    if lam_cap <= 0 or rate <= lam_cap * (
        1 + 1e-6
    ):  # serve/point.serve_at_rate's overload test (none: no steady state to compare)
        return ""
    cap = f"{lam_cap:.3g}"
    return (
        f"note: --rate {rate:g} requests/s is above the {cap} requests/s this deployment sustains (the analytic "
        "model; `predict --rate` refuses it): the queue grows for the whole run, so there is no steady state "
        "and TTFT and throughput depend on --requests. Give --rate below it for a steady state, or more "
        "instances (--replicas, or workers= in the pools)"
    )


def _protocol(kind: str, concurrency: int | None, warmup: int | None) -> str:
    """The closed-loop protocol a fixed-length run measured, for the table's title: ``predict``
    models InferenceX's idle start, so its TTFT compares with ``--warmup 0``, not with the default
    in-line warm-up's steady state (at C = 64 of 8k prompts on H200 the two differ ~2x)."""
    if kind != "fixed" or concurrency is None:
        return ""
    if warmup == 0:
        return " · idle start (InferenceX's protocol, as predict)"
    return (
        f" · steady state ({2 * concurrency if warmup is None else warmup} warm-up requests in line; "
        "--warmup 0: InferenceX's idle start, as predict)"
    )


_TRACE = "a trace replays its own arrivals and lengths"


_CLOSED = "agentic sessions run closed loop (--concurrency sessions in flight)"


#: Options that only some workload kinds use: option -> {kind that cannot use it: why}
_NOT_FOR = {
    "--concurrency": {"trace": _TRACE},
    "--rate": {"trace": _TRACE, "agentic": _CLOSED},
    "--arrival": {"trace": _TRACE, "agentic": _CLOSED},
    "--requests": {"agentic": "an agentic run counts sessions (--sessions)"},
    "--sessions": {"trace": _TRACE, "fixed": "only agentic workloads have sessions"},
    "--isl": {"trace": _TRACE, "agentic": "an agentic preset sets its own lengths"},
    "--osl": {"trace": _TRACE, "agentic": "an agentic preset sets its own lengths"},
    "--warmup": {"trace": _TRACE, "agentic": "every agentic turn is counted (no warm-up)"},
    # fixed-length requests share no prefix (random tokens, as InferenceX's): the flag changed nothing (break47)
    "--no-prefix-cache": {"fixed": "its requests share no prefix (random tokens), so there is no reuse to disable"},
}


def _is_trace_name(workload: str) -> bool:
    """Whether simulate's --workload names a trace file: a .csv/.jsonl/.json suffix in any case (TR.CSV was
    sent to the presets, whose error told simulate's user to run simulate), a path, or a file that exists
    under another name (trace.tsv said 'unknown workload'; read_trace names the suffix it reads)."""
    from jalapeno.specs.workload import PRESETS

    if workload in PRESETS:
        return False
    return workload.lower().endswith((".csv", ".jsonl", ".json")) or "/" in workload or Path(workload).is_file()


def check_applicable(kind: str, given: dict) -> None:
    """Refuse an option the workload kind (``fixed``, ``agentic``, ``trace``) would ignore.

    Raises:
        SpecError: naming the option, why it does not apply, and the fix.
    """
    for opt, value in given.items():
        why = _NOT_FOR[opt].get(kind)
        if value is not None and why:
            label = {"fixed": "a fixed-length", "agentic": "an agentic", "trace": "a trace"}[kind]
            raise SpecError(opt, f"does not apply to {label} workload: {why}", f"drop {opt}")
    if kind == "fixed" and given["--arrival"] is not None and given["--rate"] is None:
        raise SpecError(
            "--arrival",
            "shapes open-loop arrivals and this run is closed loop (--concurrency)",
            "drop --arrival, or use --rate R instead of --concurrency",
        )


def _write_requests(df, path: str) -> None:
    p = Path(path)
    suffix = p.suffix.lower()  # S.CSV passed check_table_out and was refused here, after the whole run
    try:
        if suffix == ".csv":
            df.to_csv(p, index=False)
        elif suffix == ".parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise SpecError("--out", "writing Parquet needs pyarrow", "pip install pyarrow, or use .csv") from None
            df.to_parquet(p, index=False)
        else:
            raise SpecError("--out", f"unknown file type {p.suffix!r}", "use .parquet or .csv")
    except OSError as e:
        raise SpecError("--out", f"cannot write {p}: {e.strerror or e}", "give a writable path") from None


def _summary_table(sm: dict, title: str, trace: bool = False, price_note: str = "") -> Table:
    """The run's summary table; ``trace``: a replayed trace, whose arrivals are its own (no
    --concurrency or --requests gives it a window while requests still arrive); ``price_note`` follows the $
    figure (report/cell_notes.price_note: an estimated $/chip-hour)."""
    from jalapeno.analysis.power_cost import usd_text

    t = Table(title=title, show_header=False)
    t.add_column("metric")
    t.add_column("value", overflow="fold")

    def q(d, scale, unit):
        # ms under 100 at one decimal, as predict's TPOT: a 4.5 ms TPOT printed '5' beside '220.3 tok/s/user'
        whole = unit == "ms" and d["p99"] * scale >= 100
        f = (lambda v: f"{v:,.0f}") if whole else (lambda v: f"{v:,.1f}") if unit == "ms" else (lambda v: f"{v:,.2f}")  # noqa: E731
        return (
            f"mean {f(d['mean'] * scale)} · p50 {f(d['p50'] * scale)} · p90 {f(d['p90'] * scale)} · "
            f"p99 {f(d['p99'] * scale)} {unit}"
        )

    rows = [
        ("requests (counted)", f"{sm['requests']:,}"),
        (
            "throughput per chip (in+out)",
            f"{sm['throughput_per_chip']:,.1f} tok/s"
            + (
                f" (the counted requests' tokens over the {sm['duration_s']:.1f} s from their first arrival to the "
                f"last completion, {sm['chips']} chip{'s' if sm['chips'] != 1 else ''})"
                if "duration_s" in sm
                else ""
            ),
        ),
        ("output throughput per chip", f"{sm['output_throughput_per_chip']:,.1f} tok/s"),
        *(
            [
                (
                    "throughput per chip, steady state",
                    f"{ss['throughput_per_chip']:,.1f} tok/s (in+out), "
                    f"{ss['output_throughput_per_chip']:,.1f} output, over the {ss['window_s']:.1f} s while requests "
                    "still arrive; the whole-run figures above include the drain after the last arrival "
                    "(docs/simulator.md)",
                )
            ]
            if (ss := sm.get("steady_state"))
            else [
                (
                    "throughput per chip, steady state",
                    "none: every request arrived at once (no window while "
                    "requests still arrive); "
                    + (
                        "the trace's arrival_s are all one time: spread them for one"
                        if trace
                        else "give --requests above --concurrency for one"
                    ),
                )
            ]
            if "steady_state" in sm
            else []
        ),
        *(
            [
                (
                    f"throughput per kW (in+out; {sm['power_convention']}, {sm['power_w_per_chip']:,.0f} W/chip)",
                    f"{sm['tok_s_per_kw']:,.0f} tok/s/kW",
                )
            ]
            if "tok_s_per_kw" in sm
            else []
        ),
        *(
            [
                (
                    f"$ per M tokens (in+out; ${sm['usd_per_chip_hour']:,.2f}/chip-hour)",
                    usd_text(sm["usd_per_mtok"]) + price_note,
                )
            ]
            if "usd_per_mtok" in sm
            else []
        ),
        ("interactivity (1/median TPOT)", f"{sm['interactivity']:.1f} tok/s/user"),
        ("TTFT", q(sm["ttft_s"], 1e3, "ms")),
        ("TPOT", q(sm["tpot_s"], 1e3, "ms")),
        ("E2E", q(sm["e2e_s"], 1, "s")),
        ("wait to first step (arrival → scheduled, front end included)", q(sm["queue_s"], 1e3, "ms")),
        ("preemptions", str(sm["preemptions"])),
        (
            "prefix-cache hit rate",
            f"{sm['prefix_hit_rate']:.1%} of prompt tokens (throughput counts all prompt tokens, cached ones included)",
        ),
        ("concurrency by Little's law", f"{sm['mean_concurrency_littles_law']:.1f}"),
    ]
    if "tasks" in sm:
        rows += [
            ("tasks", str(sm["tasks"])),
            ("task completion", q(sm["task_completion_s"], 1, "s")),
            ("tasks per hour per chip", f"{sm['tasks_per_hour_per_chip']:.2f}"),
        ]
        if "usd_per_chip_hour" in sm and sm["tasks_per_hour_per_chip"] > 0:  # as plan and compare -w agentic price it
            rows += [
                (
                    f"$ per task (${sm['usd_per_chip_hour']:,.2f}/chip-hour / tasks per hour per chip)",
                    usd_text(sm["usd_per_chip_hour"] / sm["tasks_per_hour_per_chip"]) + price_note,
                )
            ]
    rows += [
        (
            "simulated / wall time",
            f"{sm['simulated_s']:.1f} s / {sm['wall_s']:.2f} s "
            f"({sm['speedup']:,.0f}x, {sm['step_cost_evaluations']:,} step-cost evaluations)",
        )
    ]
    for k, v in rows:
        t.add_row(k, v)
    return t
