"""``jalapeno simulate``: the request-level simulator, with a progress bar. What it checks and prints around a run
(options per workload kind, the summary table, the per-request file) is cli/simulate_lines.py (round 54, module budget)."""

from __future__ import annotations

import sys

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from jalapeno.cli.common import (
    OVERLAP_HELP,
    attention_dtype_option,
    compute_fallback_option,
    console,
    efficiency_option,
    isl_option,
    kv_dtype_option,
    model_option,
    mtp_acceptance_option,
    mtp_option,
    osl_option,
    precision_option,
    print_json,
    resolve_precision,
    say_written,
    stack_label,
    stack_option,
)
from jalapeno.cli.out_paths import check_html_out, check_table_out
from jalapeno.cli.engine_opts import engine_option, graph_option, max_running_option, max_tokens_option
from jalapeno.cli.simulate_lines import (
    _is_trace_name,
    _overload_note,
    _protocol,
    _summary_table,
    _workload_label,
    _write_requests,
    check_applicable,
)
from jalapeno.cli.system_opts import PRICER_OPTION, SET_OPTION
from jalapeno.cli.serving_decls import json_option, memory_fraction_option, routing_option, system_option
from jalapeno.errors import SpecError
from jalapeno.specs.precision_checks import check_fallback_used
from jalapeno.specs.workload import check_concurrency


def simulate(
    system: str = system_option(),
    model: str = model_option(),
    workload: str = typer.Option(
        None,
        "--workload",
        "-w",
        help="1k1k, 8k1k (default), 1k8k, 32k1k, 64k1k, 128k1k, agentic:PRESET (coding-agent, "
        "research-agent, long-memory-chat, chat-agent; 'agentic' alone: coding-agent) / "
        "agentic:FILE.toml, or a trace .csv/.jsonl",
    ),
    isl: int = isl_option(),
    osl: int = osl_option(),
    concurrency: int = typer.Option(None, "--concurrency", "-c", help="Closed loop: requests (sessions) in flight."),
    rate: float = typer.Option(None, "--rate", "-r", help="Open loop: requests per second."),
    arrival: str = typer.Option(None, "--arrival", help="Open loop process: poisson (default), gamma or burst."),
    requests: int = typer.Option(
        None,
        "--requests",
        "-n",
        help="Counted requests (fixed-length workloads; default 10 x concurrency, "
        "open loop 1,000); a trace replays its first N by arrival (default "
        "200,000, at most 2,000,000).",
    ),
    sessions: int = typer.Option(
        None, "--sessions", help="Agentic tasks (agentic workloads; default 2 x concurrency)."
    ),
    tp: int = typer.Option(
        None,
        "--tp",
        help="Attention tensor parallelism per replica (aggregated); with none of --tp/--dp/--ep/--pp: the smallest layout whose weights fit.",
    ),
    dp: int = typer.Option(None, "--dp", help="Attention data parallelism per replica (aggregated)."),
    ep: int = typer.Option(
        None,
        "--ep",
        help="Expert parallelism per replica (aggregated; divides tp*dp; default 1: "
        "MoE TP over tp*dp, as predict; `step` defaults to EP over tp*dp).",
    ),
    pp: int = typer.Option(None, "--pp", help="Pipeline stages per replica (aggregated)."),
    eplb: int = typer.Option(
        None,
        "--eplb",
        help="EPLB redundant experts (at most the model's expert count; default off; pools take eplb=R).",
    ),
    routing: str = routing_option(),
    replicas: int = typer.Option(None, "--replicas", help="Aggregated instances behind the router (default 1)."),
    prefill: str = typer.Option(None, "--prefill", help='Disaggregated prefill pool, e.g. "tp=4,ep=4,workers=2".'),
    decode: str = typer.Option(None, "--decode", help='Disaggregated decode pool, e.g. "dp=8,ep=8,workers=1".'),
    mtp: int = mtp_option(),
    mtp_acceptance: float = mtp_acceptance_option(),
    overlap: str = typer.Option("none", "--overlap", help=OVERLAP_HELP),
    precision: str = precision_option(),
    kv_dtype: str = kv_dtype_option(),
    attention_dtype: str = attention_dtype_option(),
    compute_fallback: bool = compute_fallback_option(),
    engine: str = engine_option(),
    max_running: int = max_running_option(),
    max_tokens_per_step: int = max_tokens_option(),
    cuda_graph_max_batch: int = graph_option(),
    no_prefix_cache: bool = typer.Option(False, "--no-prefix-cache", help="Disable prefix reuse across turns."),
    seed: int = typer.Option(0, "--seed", help="Seed of the lengths, arrivals and MTP draws (same seed, same run)."),
    power: str = typer.Option("all-in", "--power", help="Power convention of tok/s/kW: chip, sustained or all-in."),
    warmup: int = typer.Option(
        None,
        "--warmup",
        help="Closed loop: uncounted warm-up requests sent before the "
        "counted ones (default 2·C: a steady state); 0 = InferenceX's protocol, its warm-up "
        "drained first, then C requests at once into an idle server — what predict models, "
        "so compare its TTFT with --warmup 0.",
    ),
    memory_fraction: float = memory_fraction_option(),
    efficiency: str = efficiency_option(),
    pricer: str = PRICER_OPTION,
    sets: list[str] = SET_OPTION,
    stack: str = stack_option(),
    json_out: bool = json_option(),
    html: str = typer.Option(None, "--html", help="Write latency CDFs and time series to this HTML file."),
    out: str = typer.Option(None, "--out", "-o", help="Per-request results to FILE.parquet or .csv."),
) -> None:
    """Simulate requests through a deployment: queueing, tails, bursts, agentic sessions, traces."""
    from jalapeno.cli.engine_opts import (
        check_recipe_serving,
        limit_kwargs,
        limit_options,
        load_recipe,
        note_lines,
        recipe_mtp,
        recipe_overrides,
        recipe_run,
    )
    from jalapeno.cli.serving_opts import _mtp, check_workload_context, refuse_idle_ar_rms
    from jalapeno.cli.pool_opts import check_pool, parse_pool
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.serve.sim.run import simulate as run_sim
    from jalapeno.serve.sim.workloads import AGENTIC_PRESETS, read_trace
    from jalapeno.cli.chip_opts import refuse_die_sets
    from jalapeno.cli.system_opts import system_pricer
    from jalapeno.cli.system_notes import note_unread_efficiency
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.workload import get_workload

    from jalapeno.specs.routing import with_routing

    check_html_out(html, "--html")
    check_table_out(out, "--out", (".csv", ".parquet"))
    m = with_routing(load_model(model), routing)
    rec = load_recipe(engine, workload, model, [system], isl, osl)
    overrides = recipe_overrides(  # explicit options beat the recipe
        rec,
        [system],
        precision,
        stack,
        kv_dtype,
        limit_options(max_running, max_tokens_per_step, cuda_graph_max_batch, memory_fraction),
    )
    # the recipe's engine at its release, KV dtype and memory profile at its fraction, as predict and
    # validation price its runs (engine_opts.recipe_run)
    run = recipe_run(rec, system, stack, kv_dtype, None, memory_fraction)
    from jalapeno.deploy.vllm_fp8_moe import release_moe_backend, stack_release

    profile, release = stack_release(stack, rec, system)  # the engine release the run states (vLLM's MoE rule)
    stack, memory_fraction = run.stack, run.memory_fraction
    # the options' own consistency first: with --pricer table the system's kernel tables take tens of seconds to
    # load, and '--no-prefix-cache' on a fixed-length workload was refused only after them (break51)
    given = workload  # None: the default 8k1k, or --isl/--osl (get_workload refuses a preset with them)
    workload = workload or "8k1k"
    name = "coding-agent" if workload == "agentic" else workload.removeprefix("agentic:")
    kind = (
        "agentic"
        if name in AGENTIC_PRESETS or workload.startswith("agentic:")
        else "trace"
        if _is_trace_name(workload)
        else "fixed"
    )
    if kind == "trace" and workload.lower().endswith(".toml"):  # was "unknown trace format '.toml'" (or, with
        # -c, "--concurrency: does not apply to a trace workload") for an agentic file without its prefix (break48)
        raise SpecError(
            "--workload",
            f"{workload!r} is a TOML file: simulate reads an agentic session file as "
            "agentic:FILE.toml (a trace is a .csv or .jsonl)",
            f"write --workload agentic:{workload}",
        )
    check_applicable(
        kind,
        {
            "--concurrency": concurrency,
            "--rate": rate,
            "--arrival": arrival,
            "--requests": requests,
            "--sessions": sessions,
            "--isl": isl,
            "--osl": osl,
            "--warmup": warmup,
            "--no-prefix-cache": True if no_prefix_cache else None,
        },
    )
    if warmup is not None and rate is not None:
        raise SpecError(
            "--warmup",
            "applies to a closed loop (--concurrency); an open-loop run counts every arrival",
            "drop --warmup, or use --concurrency C instead of --rate",
        )
    pr = system_pricer(system, efficiency, sets, stack, pricer)
    refuse_die_sets(pr, "simulate")
    s = pr.system
    check_recipe_serving(rec, prefill is not None and decode is not None)
    prec = resolve_precision(
        m, precision or (rec.precision if rec else None), run.kv_dtype, attention_dtype, compute_fallback
    )
    check_fallback_used(prec, m, [s.chip])
    lim = limit_kwargs(rec, concurrency, max_running, max_tokens_per_step, cuda_graph_max_batch)
    lim["engine_memory"] = run.engine_memory
    kw: dict = {}
    trace_note = ""
    note_unread_efficiency(sets, m, prec, pr, reuses_prefixes=kind != "fixed")  # kv_tiers.* read on reuse only
    refuse_idle_ar_rms(stack, m, pr)  # +ar_rms that fuses no step of this model here (break48)
    if concurrency is not None:
        check_concurrency([concurrency])
    from jalapeno.analysis.power_cost import power_w_per_chip

    watts, _ = power_w_per_chip(s, power)  # an unknown convention fails before the run
    if kind == "agentic":
        from jalapeno.specs.agentic import get_agentic

        kw["agentic"] = get_agentic(name)  # a preset, or agentic:FILE.toml (docs/agentic.md §2)
    elif kind == "trace":
        kw["trace"] = read_trace(workload)
        from jalapeno.serve.sim.run_plan import trace_replay_count

        k = trace_replay_count(len(kw["trace"]), requests)
        if k < len(kw["trace"]):  # a trace of millions of rows ran unbounded
            trace_note = (
                f"note: the trace has {len(kw['trace']):,} requests; replaying the first {k:,} by "
                f"arrival (to {kw['trace'].arrival_s[k - 1]:.6g} s); --requests N replays another count "
                "(at most 2,000,000)"
            )
        elif requests is not None and requests > k:  # -n 5 on a 1-request trace replayed 1 without a word
            reqs = f"{k:,} request{'s' if k != 1 else ''}"
            trace_note = (
                f"note: --requests {requests:,} asks for more than the trace holds ({reqs}); the run "
                f"replays the trace once: {reqs}, not {requests:,}"
            )
        if n1 := kw[
            "trace"
        ].raised_to_two:  # they ran as 2, silently: TPOT (done - first) / (2 - 1) needs a second token
            trace_note += (
                f"{chr(10) if trace_note else ''}note: {n1:,} of the trace's requests ask for 1 output token; "
                "each runs as 2 (one decode step after the prefill's token, so that it has a TPOT; "
                "docs/simulator.md §10.4)"
            )
    else:
        kw["workload"] = get_workload(given, isl, osl)
        check_workload_context(m, kw["workload"], isl is not None)
    if (prefill is None) != (decode is None):
        raise SpecError("--prefill/--decode", "disaggregated serving needs both pools", "pass both, or neither")
    mt = _mtp(mtp, mtp_acceptance, rec)
    note = ""  # the layout note of an aggregated run without a given layout
    if prefill is not None:
        from jalapeno.cli.predict_cmd import refuse_aggregated_options

        refuse_aggregated_options(
            {"--tp": tp, "--dp": dp, "--ep": ep, "--pp": pp, "--eplb": eplb, "--replicas": replicas}
        )
        dec = parse_pool(decode, "--decode")
        check_pool(dec, "--decode", m, s)
        check_pool(parse_pool(prefill, "--prefill"), "--prefill", m, s)
        mt = recipe_mtp(rec, mt, concurrency / (dec.workers * dec.layout.dp) if concurrency else None, dec.layout.dp)
        dep = Deployment(
            prec,
            dec,
            prefill=parse_pool(prefill, "--prefill"),
            mtp=mt,
            memory_fraction=memory_fraction,
            overlap=overlap,
            **lim,
        )
    else:
        replicas = 1 if replicas is None else replicas
        if replicas < 1:
            raise SpecError("--replicas", f"must be >= 1, got {replicas}", "give a positive number of instances")
        from jalapeno.cli.predict_cmd import aggregated_layout

        # as predict (issue 15 defect 5): no layout given -> the smallest whose weights fit, noted on stderr
        # as predict: the weights-fit check takes no fraction when an engine profile sizes the memory
        layout, note = aggregated_layout(
            m, pr, prec, (tp, dp, ep, pp, eplb), None if run.engine_memory else memory_fraction
        )
        mt = recipe_mtp(rec, mt, concurrency / (replicas * layout.dp) if concurrency else None, layout.dp)
        dep = Deployment(
            prec,
            Pool(layout, replicas, rec.moe_backend if rec else None),
            mtp=mt,
            memory_fraction=memory_fraction,
            overlap=overlap,
            **lim,
        )
    dep = dep.for_model(m)
    dep, release_note = release_moe_backend(dep, m, profile, release, s.name)
    for opt, v in (("--seed", seed), ("--requests", requests), ("--sessions", sessions)):
        if v is not None and v < (0 if opt == "--seed" else 1):
            low = 0 if opt == "--seed" else 1
            raise SpecError(opt, f"must be >= {low}, got {v}", f"give {opt} N with N >= {low}, or leave it out")
    bar = Progress(
        TextColumn("simulating"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} requests"),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=json_out,
    )
    task = bar.add_task("sim", total=None)

    def progress(done: int, total: int) -> None:  # the bar appears once requests run, not before a refusal
        if not bar.live.is_started:
            if total > LONG_RUN_REQUESTS:  # -c 100000 ran 1.2 million requests for minutes without a word
                print(
                    f"note: simulating {total:,} requests takes minutes (~{LONG_RUN_REQUESTS:,} requests take "
                    "~15 s on one core); the bar estimates the time left. --requests N (counted) and --warmup N "
                    "shorten it",
                    file=sys.stderr,
                )
            bar.start()
        bar.update(task, completed=done, total=total)

    try:
        res = run_sim(
            m,
            pr,
            dep,
            concurrency=concurrency,
            rate=rate,
            arrival=arrival or "poisson",
            num_requests=requests,
            sessions=sessions,
            seed=seed,
            prefix_cache=not no_prefix_cache,
            warmup=warmup,
            on_progress=progress,
            **kw,
        )
    finally:
        if bar.live.is_started:
            bar.stop()
    if html:
        from jalapeno.report.sim_html import write_sim_html

        write_sim_html(res, html)
    if out:
        _write_requests(res.requests, out)
    sm = res.summary
    from jalapeno.analysis.price_reason import BASIS_FIELD, system_basis

    if sm.get("requests"):
        # in+out tokens, as predict's 'tok/s per kW (in+out)' and '$ per M tokens (in+out)' rows (docs/metrics.md §3)
        tput = sm["throughput_per_chip"]
        sm.update(
            {
                "power_convention": power,
                "power_w_per_chip": watts,
                "tok_s_per_kw": tput / (watts / 1000.0),
                "usd_per_chip_hour": s.usd_per_chip_hour,
                "usd_per_mtok": s.usd_per_chip_hour / (tput * 3600 / 1e6) if tput > 0 else float("nan"),
                BASIS_FIELD: system_basis(s),
            }
        )
    if note:  # after the run, so that a refusal stays one error line (as predict)
        print(note, file=sys.stderr)
    if trace_note:
        print(trace_note, file=sys.stderr)
    if rate is not None and kind == "fixed" and (over := _overload_note(m, pr, dep, kw["workload"], rate)):
        print(over, file=sys.stderr)
    note_lines(overrides + ([release_note] if release_note else []))
    if json_out:
        print_json(res.as_dict())
        for path in filter(None, (html, out)):  # on stderr: stdout stays one JSON document
            say_written("wrote", path, json_out=True)
        return
    from jalapeno.report.cell_notes import price_note

    tbl = _summary_table(
        res.summary,
        f"{m.name} on {s.name} · {_workload_label(kind, kw, workload)} · "
        f"{dep.label}{stack_label(stack)} · seed {seed}" + _protocol(kind, concurrency, warmup),
        trace=kind == "trace",
        price_note=price_note(s),
    )
    from jalapeno.serve.limits import running_cap_text

    cap = res.config["running_cap"]  # where the running requests are capped, as predict says it (ux50)
    tbl.add_row(
        "running-request cap",
        running_cap_text(cap)
        + (
            f"; each decode worker admits while its {cap['kv_tokens']:,.0f} KV tokens hold the running requests"
            if "kv_tokens" in cap
            else ""
        ),
    )
    console.print(tbl)
    if BASIS_FIELD in res.summary:
        console.print(f"price basis: {res.summary[BASIS_FIELD]}", markup=False, soft_wrap=True)
    for path in filter(None, (html, out)):
        say_written("wrote", path)


#: Planned requests above which simulate says, before it starts, that the run takes minutes. The
#: event loop ran ~15,000 requests/s on one core of the development machine (``simulate -s gb200-nvl72
#: --dp 8 --ep 8 -c 100000``: 1.2 million requests in 78 s of wall time); the hard limit is
#: serve/sim/run_plan.MAX_PLANNED_REQUESTS.
LONG_RUN_REQUESTS = 200_000
