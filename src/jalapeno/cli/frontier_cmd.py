"""``jalapeno frontier``: every point of one system's throughput-vs-interactivity frontier, with its deployment
(thin over analysis/comparison.system_frontier; its option parsing is cli/serving_opts.py). Split from
cli/serving_cmds.py (round 52, module budget); registered by ``serving_cmds.register``."""

from __future__ import annotations


import typer

from jalapeno.analysis.results_store import check_store
from jalapeno.cli.chip_opts import chip_model_line, chip_model_option, placement_option
from jalapeno.cli.common import (
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
    stack_label,
    stack_option,
)
from jalapeno.cli.out_paths import check_writable
from jalapeno.cli.engine_opts import (
    engine_option,
    graph_option,
    load_recipe,
    max_running_option,
    max_tokens_option,
    limit_options,
    recipe_overrides,
    recipe_run,
    note_lines,
)
from jalapeno.cli.serving_opts import (
    SWEEP_EPLB_HELP,
    SWEEP_OVERLAP_HELP,
    WORKLOAD_HELP,
    _release_notes,
    _setup,
    _sweep_opts,
    concurrency_notes,
    note_idle_eplb,
    refuse_dense_eplb,
    refuse_dense_overlap,
    refuse_idle_ar_rms,
)
from jalapeno.cli.system_opts import PRICER_OPTION, SET_OPTION, check_pricer_chip_model, system_pricer
from jalapeno.cli.serving_decls import (
    fixed_lengths_option,
    json_option,
    memory_fraction_option,
    power_option,
    routing_option,
    system_option,
)
from jalapeno.cli.system_notes import note_unread_efficiency
from jalapeno.errors import SpecError
from jalapeno.specs.precision_checks import check_fallback_used


def frontier(
    system: str = system_option(),
    model: str = model_option(),
    workload: str = typer.Option(None, "--workload", "-w", help=WORKLOAD_HELP),
    isl: int = isl_option(),
    osl: int = osl_option(),
    precision: str = precision_option(),
    kv_dtype: str = kv_dtype_option(),
    attention_dtype: str = attention_dtype_option(),
    compute_fallback: bool = compute_fallback_option(),
    serving: str = typer.Option(None, "--serving", help="agg, disagg or both (default both)."),
    mtp: int = mtp_option(),
    mtp_acceptance: float = mtp_acceptance_option(),
    engine: str = engine_option(),
    max_running: int = max_running_option(),
    max_tokens_per_step: int = max_tokens_option(),
    cuda_graph_max_batch: int = graph_option(),
    memory_fraction: float = memory_fraction_option(),
    overlap: str = typer.Option(None, "--overlap", help=SWEEP_OVERLAP_HELP),
    power: str = power_option(),
    stack: str = stack_option(),
    efficiency: str = efficiency_option(),
    pricer: str = PRICER_OPTION,
    sets: list[str] = SET_OPTION,
    fixed_lengths: bool = fixed_lengths_option(),
    concurrency: str = typer.Option(
        None,
        "--concurrency",
        "-c",
        help="Concurrencies to sweep, e.g. 1,4,16,64 (aggregated only; default: batch grid).",
    ),
    routing: str = routing_option(),
    eplb: str = typer.Option(None, "--eplb", help=SWEEP_EPLB_HELP),
    chip_model: str = chip_model_option(),
    placement: str = placement_option(),
    store: str = typer.Option(
        None,
        "--store",
        help="Also keep the frontier in this results store (jalapeno "
        "results list|show|export; needs the explore extra).",
    ),
    json_out: bool = json_option(),
    out: str = typer.Option(
        None,
        "--out",
        "-o",
        help="Write the frontier to FILE.csv, .json or .parquet (CSV/Parquet columns name their unit, "
        "e.g. throughput_per_chip_tok_per_s; docs/metrics.md §11).",
    ),
) -> None:
    """Every point of one system's throughput-vs-interactivity frontier, with its deployment."""
    from jalapeno.analysis.comparison import system_frontier
    from jalapeno.cost.sliced import chip_model_pricer, refuse_idle_placement
    from jalapeno.report.tables import frontier_table, write_frontier

    check_writable(out, "--out")
    if store is not None:  # before the sweep: the store is written after it
        check_store(store)
    from jalapeno.analysis.power_cost import check_convention

    check_convention(power)  # before the sweep: it was refused after it
    if out is not None and not (workload or "").startswith("agentic:"):  # write_frontier's types, before the sweep
        _check_frontier_out(out)
    if workload and workload.startswith("agentic:"):
        from jalapeno.cli.agentic_cmd import agentic_frontier_cmd, refuse

        refuse(
            {
                "--isl": isl,
                "--osl": osl,
                "--serving": serving if serving != "agg" else None,
                "--mtp": mtp,
                "--engine": engine,
                "--concurrency": concurrency,
                "--fixed-lengths": fixed_lengths,
                "--max-running": max_running,
                "--max-tokens-per-step": max_tokens_per_step,
                "--cuda-graph-max-batch": cuda_graph_max_batch,
                "--store": store,
            }
        )
        return agentic_frontier_cmd(
            system=system,
            model=model,
            workload=workload,
            precision=precision,
            kv_dtype=kv_dtype,
            attention_dtype=attention_dtype,
            compute_fallback=compute_fallback,
            power=power,
            efficiency=efficiency,
            routing=routing,
            eplb=eplb,
            overlap=overlap,
            memory_fraction=memory_fraction,
            json_out=json_out,
            out=out,
            sets=sets,
            chip_model=chip_model,
            placement=placement,
            stack=stack,
            pricer=pricer,
        )
    rec = load_recipe(engine, workload, model, [system], isl, osl)
    overrides = recipe_overrides(  # explicit options beat the recipe
        rec,
        [system],
        precision,
        stack,
        kv_dtype,
        limit_options(max_running, max_tokens_per_step, cuda_graph_max_batch, memory_fraction),
    )
    # the recipe's engine at its release and KV dtype, as predict and validation price its runs (the
    # sweeps take no engine memory profile: the catalog's memory fit)
    run = recipe_run(rec, system, stack, kv_dtype)
    from jalapeno.deploy.vllm_fp8_moe import stack_release

    release = stack_release(stack, rec, system)  # the engine release the run states (vLLM's MoE rule)
    stack = run.stack
    m, wl, prec = _setup(
        model,
        workload,
        isl,
        osl,
        precision or (rec.precision if rec else None),
        fixed_lengths,
        run.kv_dtype,
        attention_dtype,
        compute_fallback,
        routing,
    )
    refuse_dense_eplb(eplb, m)  # an explicit --eplb on a dense model was silently ignored
    eplb_note = note_idle_eplb(eplb, m)  # and one under uniform routing made no layout (newuser50)
    refuse_dense_overlap(overlap, m)  # so was --overlap tbo (break47)
    check_pricer_chip_model(pricer, chip_model)
    pr = chip_model_pricer(system_pricer(system, efficiency, sets, stack, pricer), chip_model, placement)
    refuse_idle_placement(pr, placement)
    note_unread_efficiency(sets, m, prec, pr)
    refuse_idle_ar_rms(stack, m, pr)  # +ar_rms that fuses no step of this model here (break48)
    s = pr.system
    check_fallback_used(prec, m, [s.chip])
    opts = _sweep_opts(
        serving,
        mtp,
        mtp_acceptance,
        concurrency,
        eplb,
        overlap,
        rec,
        max_running,
        max_tokens_per_step,
        cuda_graph_max_batch,
        memory_fraction,
        release,
    )
    sf = system_frontier(m, pr, wl, prec, opts, power, recipe=rec if opts.mtp is None else None)
    rec = sf.record()
    note_lines(
        overrides
        + concurrency_notes(opts)
        + _release_notes(m, opts, {s.name: [prec.name]})
        + ([eplb_note] if eplb_note else [])
    )
    if store:
        from jalapeno.cli.results_cmds import say_stored, store_frontier

        run = store_frontier(
            store,
            "frontier",
            f"{s.name}-{m.name}-{wl.name}",
            rec,
            {
                "power": power,
                "efficiency": efficiency,
                "stack": stack,
                "chip_model": chip_model,
                "placement": placement,
                "set": list(sets or []),
            },
        )
        say_stored(run, store, "frontier", json_out)  # computed afresh, and how to read it back (ux53)
    if out:
        write_frontier(rec, out)
    from jalapeno.analysis.price_reason import BASIS_FIELD, POWER_BASIS_FIELD, power_basis, power_basis_lines

    if json_out:  # its points' usd_per_mtok with what the $/chip-hour rests on, and its watts' sources (ux53)
        from jalapeno.analysis.price_reason import system_basis

        from jalapeno.analysis.bound_words import BOUND_TEXT_FIELD, LIMIT_TEXT_FIELD, cap_text, point_bound

        d = rec.as_dict()  # each point's bound in compare's words beside its fields (ux53)
        d["frontier"] = [  # and its cap in the same words, "" for none (cap53)
            {**q, BOUND_TEXT_FIELD: point_bound(p), LIMIT_TEXT_FIELD: cap_text(p.limit)}
            for q, p in zip(d["frontier"], rec.frontier)
        ]
        print_json({**d, BASIS_FIELD: system_basis(s), POWER_BASIS_FIELD: power_basis(s)})
        return
    from jalapeno.report.narrow import fit_width

    table = frontier_table(rec.frontier, f"{m.name} on {s.name} · {wl.name} · {prec.name}{stack_label(stack)}")
    for part in fit_width(table, console.width):  # on its side where a figure would be cut (80/100 characters)
        console.print(part)
    for line in power_basis_lines([s]):  # where the tok/s/kW column's watts come from, as compare says (ux53)
        console.print(line, markup=False, soft_wrap=True)
    if (line := chip_model_line([pr])) is not None:
        console.print(line, markup=False)
    if out:
        console.print(f"wrote {out}")


def _check_frontier_out(out: str) -> None:
    """Refuse a ``frontier --out`` that report/tables.write_frontier cannot write (an unknown file type, Parquet
    without pyarrow) before the sweep: ``--out x.txt`` was refused after it."""
    from pathlib import Path

    ext = Path(out).suffix.lower()
    if ext not in (".csv", ".json", ".parquet") and Path(out).exists() and not Path(out).is_file():
        # -o /dev/full said "unknown file type ''" (break53): nothing was written, and the device is the news
        raise SpecError(
            "--out",
            f"{out!r} is a device or pipe, not a file: frontier writes a file and picks its format from the "
            "ending (.csv, .json or .parquet), which a device has not, so nothing was written",
            "give a file path ending in .csv, .json or .parquet",
        )
    if ext not in (".csv", ".json", ".parquet"):
        raise SpecError("--out", f"unknown file type {ext or '(none)'!r}", "use a .csv, .json or .parquet file")
    if ext == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise SpecError(
                "--out", "writing Parquet needs pyarrow", "pip install pyarrow, or use .csv/.json"
            ) from None
