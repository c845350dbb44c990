"""``jalapeno compare``, ``frontier`` and ``predict``: the serving commands (thin over the API; their
option parsing is cli/serving_opts.py, ``frontier`` is cli/frontier_cmd.py, ``predict`` is cli/predict_cmd.py)."""

from __future__ import annotations


import typer

from jalapeno.analysis.results_store import check_store
from jalapeno.cli.chip_opts import chip_model_option, placement_option
from jalapeno.cli.serving_decls import fixed_lengths_option, memory_fraction_option, power_option, routing_option
from jalapeno.cli.common import (
    attention_dtype_option,
    compute_fallback_option,
    efficiency_option,
    isl_option,
    kv_dtype_option,
    list_items,
    model_option,
    mtp_acceptance_option,
    mtp_option,
    osl_option,
    print_json,
    resolve_precision,
    say_written,
    stack_option,
)
from jalapeno.cli.out_paths import check_writable
from jalapeno.cli.compare_lines import (  # noqa: F401  (BANDS_HINT, band_frontiers_json re-exported: they lived here)
    BANDS_HINT,
    band_frontiers_json,
    comparison_json,
    print_comparison,
)
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
from jalapeno.cli.as_deployed import (
    AS_DEPLOYED_HELP,
    deployed_recipes,
    refuse_with_as_deployed,
)
from jalapeno.cli.number_lists import _floats, _floors, check_at_speeds  # noqa: F401 (re-exported, as below)
from jalapeno.cli.serving_opts import (  # noqa: F401  (the option parsers, re-exported: they lived here)
    SWEEP_EPLB_HELP,
    SWEEP_OVERLAP_HELP,
    WORKLOAD_HELP,
    _release_notes,
    EPLB_HELP,
    _mtp,
    _options,
    _setup,
    _sweep_opts,
    check_workload_context,
    concurrency_notes,
    note_idle_eplb,
    refuse_dense_eplb,
    refuse_dense_overlap,
    refuse_idle_ar_rms,
    sweep_eplb,
)
from jalapeno.cli.pool_opts import check_pool, parse_pool  # noqa: F401 (re-exported: they lived here)
from jalapeno.cli.system_opts import (
    PRICER_OPTION,
    SETS_OPTION,
    baseline_name,
    check_pricer_chip_model,
    per_system_sets,
    systems_pricers,
)
from jalapeno.cli.system_notes import note_unread_efficiency
from jalapeno.cli.usage_errors import note_shared_sets
from jalapeno.errors import SpecError
from jalapeno.specs.precision_checks import check_fallback_used
from jalapeno.specs.formats import get_precision

SYSTEMS_DEFAULT = "jalapeno,gb200-nvl72,gb300-nvl72,vera-rubin-nvl72"
AT_DEFAULT = (
    "35,60,100"  # analysis/comparison.DEFAULT_ISO_INTERACTIVITY (its sources); not imported: keeps start-up light
)
TIERS_DEFAULT = "fast=100,ultra_fast=300"


def _fallback_used_somewhere(m, pricers, precs, prec) -> None:
    """``compare --compute-fallback``: refused when no system's swept precision falls back."""
    from jalapeno.specs.formats import get_precision

    pairs = [
        (get_precision(p), pr.system.chip)
        for pr in pricers
        for p in (precs.get(pr.system.name, []) if precs else [prec.name])
    ]
    first = None
    for p, chip in pairs:
        try:
            check_fallback_used(p, m, [chip])
            return
        except SpecError as e:
            first = first or e
    if first is not None:
        raise first


def compare(
    model: str = model_option(),
    workload: str = typer.Option(
        None,
        "--workload",
        "-w",
        help=WORKLOAD_HELP[:-1] + "; or several fixed-length ones, "
        "e.g. 1k1k,8k1k,1k8k: each compared, then how the ratios move across them.",
    ),
    isl: int = isl_option(),
    osl: int = osl_option(),
    precision: str = typer.Option(
        None, "--precision", "-p", help="Precision preset (default: each system sweeps what it runs natively)."
    ),
    kv_dtype: str = kv_dtype_option(),
    attention_dtype: str = attention_dtype_option(),
    compute_fallback: bool = compute_fallback_option(),
    systems: str = typer.Option(SYSTEMS_DEFAULT, "--systems", "-s", help="Comma-separated names or TOML paths."),
    baseline: str = typer.Option(
        None,
        "--baseline",
        "-b",
        help="System the ratios are taken against (default: gb300-nvl72 if compared, else the last).",
    ),
    power: str = power_option(),
    serving: str = typer.Option(None, "--serving", help="agg, disagg or both (default both)."),
    mtp: int = mtp_option(),
    mtp_acceptance: float = mtp_acceptance_option(),
    engine: str = engine_option(),
    as_deployed: bool = typer.Option(False, "--as-deployed", help=AS_DEPLOYED_HELP),
    max_running: int = max_running_option(),
    max_tokens_per_step: int = max_tokens_option(),
    cuda_graph_max_batch: int = graph_option(),
    memory_fraction: float = memory_fraction_option(),
    overlap: str = typer.Option(None, "--overlap", help=SWEEP_OVERLAP_HELP),
    at: str = typer.Option(
        AT_DEFAULT,
        "--at",
        help="Interactivity values (tok/s/user) for iso-interactivity ratios, "
        "each above 0 (0 is the peak: the ratios' peak row gives it, as --tiers NAME=0 does) "
        "(agentic: task times in minutes, default 5,10,20).",
    ),
    tiers: str = typer.Option(
        TIERS_DEFAULT,
        "--tiers",
        help="Tier floors in tok/s/user, name=value,... (e.g. "
        "need=50; 0: the peak): the tiers table gives each system's tok/s/chip, tok/s/kW and $/M "
        "tok at each (agentic: task-time ceilings in minutes, default fast=10,ultra_fast=5).",
    ),
    stack: str = stack_option(),
    efficiency: str = efficiency_option(),
    pricer: str = PRICER_OPTION,
    fixed_lengths: bool = fixed_lengths_option(),
    concurrency: str = typer.Option(
        None,
        "--concurrency",
        "-c",
        help="Concurrencies to sweep, e.g. 1,4,16,64 (aggregated only; default: batch grid).",
    ),
    bands: bool = typer.Option(
        False,
        "--bands",
        help="Also sweep the low/high efficiency sets (3x time); a system fitted on "
        "its own kernels: its validate error band (p10/p90), no sweep.",
    ),
    sets: list[str] = SETS_OPTION,
    routing: str = routing_option(),
    eplb: str = typer.Option(None, "--eplb", help=SWEEP_EPLB_HELP),
    chip_model: str = chip_model_option(),
    placement: str = placement_option(),
    store: str = typer.Option(
        None,
        "--store",
        help="Also keep the frontiers in this results store (jalapeno "
        "results list|show|export; needs the explore extra).",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the JSON result instead of tables."),
    html: str = typer.Option(
        None,
        "--html",
        help="Write the frontier chart here (default jalapeno-compare.html "
        "without --json; '' = none). Fixed-length workloads only: -w agentic:... prints its "
        "tables and writes no chart.",
    ),
) -> None:
    """Compare systems on one model and workload: frontiers, headline figures, ratios, tiers.

    Each system sweeps every released precision its chip computes natively unless -p pins one. Several workloads
    (-w 1k1k,8k1k,1k8k): each compared, then how the ratios move across them.
    """
    if workload and "," in workload:  # one comparison per workload, then tables across them (ux51)
        args = dict(locals())  # the parameters only: nothing else is bound yet
        from jalapeno.cli.compare_workloads import across

        return across(compare, args)
    from jalapeno.analysis.comparison import compare_systems
    from jalapeno.analysis.spec_bands import with_estimated_specs
    from jalapeno.cost.pricer import band_pricers
    from jalapeno.cost.sliced import chip_model_pricer, refuse_idle_placement
    from jalapeno.deploy.checkpoints import available_precisions
    from jalapeno.report.html import write_html

    if store is not None:  # before the sweep: the store is written after it
        check_store(store)
    from jalapeno.analysis.power_cost import check_convention

    check_convention(power)  # before the sweep: it was refused after it
    if workload and workload.startswith("agentic:"):
        from jalapeno.cli.agentic_cmd import agentic_compare, html_note, refuse

        refuse(
            {
                "--isl": isl,
                "--osl": osl,
                "--serving": serving if serving != "agg" else None,
                "--mtp": mtp,
                "--engine": engine,
                "--as-deployed": as_deployed,
                "--concurrency": concurrency,
                "--bands": bands,
                "--fixed-lengths": fixed_lengths,
                "--max-running": max_running,
                "--store": store,
                "--max-tokens-per-step": max_tokens_per_step,
                "--cuda-graph-max-batch": cuda_graph_max_batch,
            }
        )
        html_note(html)  # said once, not refused: the default writes no chart here either (plan49)
        return agentic_compare(
            model=model,
            workload=workload,
            precision=precision,
            kv_dtype=kv_dtype,
            attention_dtype=attention_dtype,
            compute_fallback=compute_fallback,
            systems=systems,
            baseline=baseline,
            power=power,
            efficiency=efficiency,
            routing=routing,
            eplb=eplb,
            overlap=overlap,
            memory_fraction=memory_fraction,
            at=at,
            tiers=tiers,
            json_out=json_out,
            default_at=AT_DEFAULT,
            default_tiers=TIERS_DEFAULT,
            sets=sets,
            chip_model=chip_model,
            placement=placement,
            stack=stack,
            pricer=pricer,
        )
    names = list_items(systems, "--systems", "jalapeno,gb300-nvl72")
    if as_deployed:
        refuse_with_as_deployed(
            {
                "--precision": precision,
                "--serving": serving,
                "--concurrency": concurrency,
                "--mtp": mtp,
                "--engine": engine,
                "--max-running": max_running,
                "--max-tokens-per-step": max_tokens_per_step,
                "--cuda-graph-max-batch": cuda_graph_max_batch,
                "--overlap": overlap,
                "--memory-fraction": memory_fraction,
            }
        )
    rec = load_recipe(engine, workload, model, names, isl, osl)
    overrides = recipe_overrides(  # explicit options beat the recipe
        rec,
        names,
        precision,
        stack,
        kv_dtype,
        limit_options(max_running, max_tokens_per_step, cuda_graph_max_batch, memory_fraction),
    )
    m, wl, prec = _setup(
        model,
        workload,
        isl,
        osl,
        precision or (rec.precision if rec else None),
        fixed_lengths,
        recipe_run(rec, None, stack, kv_dtype).kv_dtype,
        attention_dtype,
        compute_fallback,
        routing,
    )
    refuse_dense_eplb(eplb, m)  # an explicit --eplb on a dense model was silently ignored
    eplb_note = note_idle_eplb(eplb, m)  # and one under uniform routing made no layout (newuser50)
    refuse_dense_overlap(overlap, m)  # so was --overlap tbo (break47)
    if not names:
        raise SpecError("--systems", "no system given", "pass e.g. --systems jalapeno,gb300-nvl72")
    check_pricer_chip_model(pricer, chip_model)
    # the recipe's engine at its release on each system, as predict and validation price its runs
    stacks = {n: recipe_run(rec, n, stack, kv_dtype).stack for n in names} if rec is not None else None
    syss = [
        chip_model_pricer(p, chip_model, placement)
        for p in systems_pricers(names, efficiency, sets, stack, pricer, stacks=stacks)
    ]
    refuse_idle_placement(syss, placement)
    seen = [s.system.name for s in syss]
    dup = sorted({n for n in seen if seen.count(n) > 1})
    if dup:
        raise SpecError(
            "--systems",
            f"two systems are named {dup[0]!r}",
            'compare each system once; give a user file its own name = "..."',
        )
    names_in = [s.system.name for s in syss]
    base = baseline_name(baseline, names, names_in)
    if html is None:
        html = "" if json_out else "jalapeno-compare.html"
    if html and not html.lower().endswith((".html", ".htm")):
        raise SpecError("--html", f"{html!r} is not an .html file", "give a path ending in .html")
    check_writable(html, "--html")
    from jalapeno.deploy.vllm_fp8_moe import stack_release

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
        stack_release(stack, rec, names[0]),
    )  # the release each system's vLLM runs (its MoE rule)
    pinned = precision is not None or rec is not None
    precs = (
        None
        if pinned
        else {
            s.system.name: list(
                available_precisions(m.name, m.default_precision, s.system.chip.formats, m, s.system.chip)
            )
            for s in syss
        }
    )
    recipes = deployed_recipes(syss, m.name, workload, isl, osl, precs) if as_deployed else {}
    if precs is not None:  # the KV/attention/fallback overrides apply to every swept precision
        precs = {
            n: [resolve_precision(m, p, kv_dtype, attention_dtype, compute_fallback).name for p in ps]
            for n, ps in precs.items()
        }
    if compute_fallback:  # refused only when no system and no swept precision falls back
        _fallback_used_somewhere(m, syss, precs, prec)
    per = per_system_sets(names, sets)  # each system's own --set items: a key no op reads there is named
    for n, s in zip(names, syss):
        note_unread_efficiency(per[n], m, [get_precision(p) for p in precs[s.system.name]] if precs else prec, s)
    refuse_idle_ar_rms(stack, m, syss)  # +ar_rms that no system fuses a step with (break48)
    note_shared_sets(names, sets)  # a plain --set changed the baseline too, with no word (newuser54)
    from jalapeno.analysis.workers import meanwhile
    from jalapeno.cli.compare_lines import warm_compare

    with meanwhile(lambda: warm_compare(bool(html))):  # the printing's and chart's start-up while the sweeps run
        res = compare_systems(
            m,
            syss,
            wl,
            None if precs else prec,
            baseline=base,
            convention=power,
            options=opts,
            iso_interactivity=_floats(at, "--at", check=check_at_speeds),
            floors=_floors(tiers),
            # each derived system's estimated specs move with its efficiency band (analysis/spec_bands.py, ux55)
            bands={s.system.name: with_estimated_specs(s, band_pricers(s)) for s in syss} if bands else None,
            precisions=precs,
            recipes=recipes,
            strict_baseline=bool(baseline),
        )
    rec = res.record()
    from jalapeno.analysis.estimated_peaks import estimated_peak_notes  # a compute-bound answer on an estimated peak

    note_lines(
        overrides
        + concurrency_notes(opts)
        + estimated_peak_notes(rec, {s.system.name: s.system for s in syss}, m)
        + _release_notes(m, opts, {n: precs[n] if precs else [prec.name] for n in names_in})
        + ([eplb_note] if eplb_note else [])
    )
    if as_deployed and not recipes:  # gpt-oss-120b --as-deployed ran every system as stated, without a word
        note_lines(
            [
                f"--as-deployed: no engine recipe deploys {m.name} on {', '.join(names_in)} "
                "(data/engines.toml default_for); every system runs as stated"
            ]
        )
    if store:
        from jalapeno.cli.results_cmds import say_stored, store_frontier

        run = store_frontier(
            store,
            "compare",
            f"{m.name}-{wl.name}",
            rec,
            {
                "systems": names,
                "power": power,
                "efficiency": efficiency,
                "stack": stacks or stack,
                "chip_model": chip_model,
                "placement": placement,
                "set": list(sets or []),
            },
        )
        say_stored(run, store, "compare", json_out)  # computed afresh, and how to read it back (ux53)
    from jalapeno.cli.report_cmd import provenance, reproduce_lines  # the command and data versions, as report's
    from jalapeno.report.win_tables import rack_json

    prov = provenance() if html or json_out else None  # the chart's and the JSON's: a terminal-only run needs none
    if html:  # the chart closes with report's Reproduce section (followup52)
        write_html(
            rec, html, res.band_frontiers, sorted(_floors(tiers).items(), key=lambda kv: kv[1]), reproduce_lines(prov)
        )
    if json_out:  # each system's $ figures with what its $/chip-hour rests on; per_rack: the rack line (followup52)
        print_json(
            {
                **comparison_json(rec, syss, res.band_frontiers),
                "provenance": prov,
                "per_rack": rack_json([s.system for s in syss], rec, res.band_frontiers),
            }
        )
        if html:  # --json --html: where the chart went, on stderr (stdout stays one JSON document)
            say_written("frontier chart:", html, json_out=True)
        return
    plain = not (sets or as_deployed or engine or stack or concurrency or serving or mtp or isl or osl) and (
        efficiency,
        pricer,
        chip_model,
    ) == ("calibrated", "roofline", "flat")
    print_comparison(
        rec,
        syss,
        res.band_frontiers,
        m,
        names,
        names_in,
        recipes,
        stacks,
        stack,
        bands,
        plain,
        workload or wl.name,
        model,
    )
    if html:
        say_written("frontier chart:", html)


def register(app: typer.Typer) -> None:
    """Add the serving commands to ``app``."""
    app.command("compare")(compare)
    from jalapeno.cli.frontier_cmd import frontier

    app.command("frontier")(frontier)
    from jalapeno.cli.predict_cmd import predict

    app.command("predict")(predict)
