"""``jalapeno predict``: one operating point of one deployment (aggregated or disaggregated)."""

from __future__ import annotations

import typer

from jalapeno.cli.chip_opts import chip_model_line, chip_model_option, placement_option
from jalapeno.cli.common import (
    FIXED_WORKLOAD_HELP,
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
    stack_label,
    stack_option,
)
from jalapeno.cli.engine_opts import (
    check_positive,
    check_recipe_serving,
    engine_rules,
    engine_option,
    graph_option,
    limit_kwargs,
    load_recipe,
    note_lines,
    max_running_option,
    max_tokens_option,
    recipe_mtp,
    limit_options,
    recipe_overrides,
    recipe_run,
)
from jalapeno.cli.engine_memory_opts import engine_memory_option, memory_breakdown_lines
from jalapeno.cli.serving_opts import EPLB_HELP, _mtp, _setup, refuse_idle_ar_rms
from jalapeno.cli.pool_opts import check_pool, parse_pool
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
from jalapeno.deploy.engine_version import recipe_engine_version
from jalapeno.deploy.vllm_fp8_moe import release_moe_backend, stack_release
from jalapeno.deploy.engine_pool import engine_memory_breakdown
from jalapeno.errors import SpecError
from jalapeno.specs.precision_checks import check_fallback_used
from jalapeno.specs.workload import check_concurrency


def predict(
    system: str = system_option(),
    model: str = model_option(),
    workload: str = typer.Option(None, "--workload", "-w", help=FIXED_WORKLOAD_HELP),
    isl: int = isl_option(),
    osl: int = osl_option(),
    concurrency: float = typer.Option(
        None,
        "--concurrency",
        "-c",
        metavar="<int>",  # read as a float: '4.5' and
        # 'inf' get their own line (not click's 'not a valid integer')
        help="Closed-loop concurrency of the deployment: whole requests in flight.",
    ),
    rate: float = typer.Option(None, "--rate", "-r", help="Open loop instead: requests per second."),
    fixed_lengths: bool = fixed_lengths_option(),
    recurring_waves: bool = typer.Option(
        False,
        "--recurring-waves",
        help="With --fixed-lengths and --concurrency: the users start together "
        "and every wave repeats the first one's prefill burst (as the simulator "
        "shows; docs/model.md §8.7 (6)), instead of waves that spread.",
    ),
    tp: int = typer.Option(
        None,
        "--tp",
        help="Attention tensor parallelism (aggregated; default: the smallest "
        "layout whose weights fit, when no --tp/--dp/--ep/--pp is given).",
    ),
    dp: int = typer.Option(None, "--dp", help="Attention data parallelism (aggregated; default 1)."),
    ep: int = typer.Option(
        None,
        "--ep",
        help="Expert parallelism (aggregated; divides tp*dp; default 1: MoE "
        "TP over tp*dp, vLLM's -tp without --enable-expert-parallel; `step` defaults to EP over "
        "tp*dp: give --ep to compare the same layout).",
    ),
    pp: int = typer.Option(None, "--pp", help="Pipeline stages (aggregated; default 1)."),
    eplb: int = typer.Option(None, "--eplb", help=EPLB_HELP + " Pools take eplb=R."),
    routing: str = routing_option(),
    prefill: str = typer.Option(
        None, "--prefill", help='Disaggregated prefill pool, e.g. "tp=4,workers=2" or "tp=8,cp=4,workers=1".'
    ),
    decode: str = typer.Option(None, "--decode", help='Disaggregated decode pool, e.g. "ep=32,dp=32,workers=1".'),
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
    power: str = power_option(),
    stack: str = stack_option(),
    efficiency: str = efficiency_option(),
    pricer: str = PRICER_OPTION,
    sets: list[str] = SET_OPTION,
    memory_fraction: float = memory_fraction_option(),
    engine_memory: str = engine_memory_option(),
    chip_model: str = chip_model_option(),
    placement: str = placement_option(),
    json_out: bool = json_option(),
) -> None:
    """One operating point: a deployment at a concurrency (an infeasible one is an error)."""
    from jalapeno.analysis.prediction import predict_point
    from jalapeno.cost.sliced import chip_model_pricer, refuse_idle_placement
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.report.cell_notes import price_note
    from jalapeno.report.point_table import point_table

    rec = load_recipe(engine, workload, model, [system], isl, osl)
    overrides = recipe_overrides(  # explicit options beat the recipe
        rec,
        [system],
        precision,
        stack,
        kv_dtype,
        limit_options(max_running, max_tokens_per_step, cuda_graph_max_batch, memory_fraction),
    )
    # the recipe's engine at its release, KV dtype and memory profile at its fraction, as validation
    # prices its runs, so that `predict --engine R` reproduces a validated point (--engine-memory none drops it)
    run = recipe_run(rec, system, stack, kv_dtype, engine_memory, memory_fraction)
    profile, release = stack_release(stack, rec, system)  # the engine release the run states (vLLM's MoE rule)
    stack, memory_fraction = run.stack, run.memory_fraction
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
    # the options' own consistency before the pricer: with --pricer table the system's kernel tables take tens of
    # seconds to load (followup51; simulate's break51)
    if (concurrency is None) == (rate is None):
        raise SpecError(
            "--concurrency/--rate",
            "give exactly one of them",
            "closed loop: --concurrency C; open loop: --rate R (requests/s)",
        )
    if concurrency is not None:
        check_concurrency([concurrency])
    if recurring_waves and (not fixed_lengths or concurrency is None):
        raise SpecError(
            "--recurring-waves",
            "applies to a fixed-length closed loop only",
            "add --fixed-lengths and give --concurrency (not --rate), or drop --recurring-waves",
        )
    if (prefill is None) != (decode is None):
        raise SpecError(
            "--prefill/--decode",
            "disaggregated serving needs both pools",
            'pass both --prefill "tp=..,workers=.." and --decode "..", or neither',
        )
    if prefill is None and any(v is not None for v in (tp, dp, ep, pp)):  # what the model alone refuses (PP > layers)
        _check_given_layout(m, (tp, dp, ep, pp, eplb))
    check_pricer_chip_model(pricer, chip_model)
    # --chip-model as step/frontier/compare take it; a die.* --set under the flat chip is refused (it moved nothing)
    pr = chip_model_pricer(system_pricer(system, efficiency, sets, stack, pricer), chip_model, placement)
    refuse_idle_placement(pr, placement)
    note_unread_efficiency(sets, m, prec, pr)
    refuse_idle_ar_rms(stack, m, pr)  # +ar_rms that fuses no step of this model here (break48)
    s = pr.system
    check_fallback_used(prec, m, [s.chip])
    check_recipe_serving(rec, prefill is not None and decode is not None)
    lim = limit_kwargs(rec, concurrency, max_running, max_tokens_per_step, cuda_graph_max_batch)
    lim["engine_memory"] = run.engine_memory
    note = ""
    if prefill is not None:
        refuse_aggregated_options({"--tp": tp, "--dp": dp, "--ep": ep, "--pp": pp, "--eplb": eplb})
        dec, pre = parse_pool(decode, "--decode"), parse_pool(prefill, "--prefill")
        check_pool(dec, "--decode", m, s)
        check_pool(pre, "--prefill", m, s)
        per_rank = concurrency / (dec.workers * dec.layout.dp) if concurrency else None
        dep = Deployment(
            prec,
            dec,
            prefill=pre,
            mtp=recipe_mtp(rec, _mtp(mtp, mtp_acceptance, rec), per_rank, dec.layout.dp),
            memory_fraction=memory_fraction,
            overlap=overlap,
            **lim,
        )
    else:
        layout, note = aggregated_layout(
            m, pr, prec, (tp, dp, ep, pp, eplb), None if lim["engine_memory"] else memory_fraction
        )
        per_rank = concurrency / layout.dp if concurrency else None
        dep = Deployment(
            prec,
            Pool(layout, moe_backend=rec.moe_backend if rec else None),  # the MoE kernel it forces
            mtp=recipe_mtp(rec, _mtp(mtp, mtp_acceptance, rec), per_rank, layout.dp),
            memory_fraction=memory_fraction,
            overlap=overlap,
            **lim,
        )
    dep, release_note = release_moe_backend(dep, m, profile, release, s.name)
    _check_engine_pool(m, s, dep, memory_fraction)
    point = predict_point(m, pr, dep, wl, concurrency, power, rate=rate, recurring_waves=recurring_waves)
    if not point.feasible:
        from jalapeno.errors import InfeasibleDeployment

        at = f"concurrency {concurrency:g}" if rate is None else f"{rate:g} requests/s"
        from jalapeno.cli.common import in_option_words

        load = "--concurrency" if rate is None else "--rate"
        raise InfeasibleDeployment(
            "deployment",
            f"{dep.label} at {at}: {in_option_words(str(point.reason), load)}",
            f"change the deployment (more workers, wider layouts) or {load}",
        )
    if prefill is None and note:
        import sys

        if rate is None and point.limit.endswith("(queueing)") and point.in_flight < 0.5 * concurrency:
            # -c 256 on the smallest layout admitted 26 and queued the rest for minutes, with no word why
            note += (
                f"; it admits {point.in_flight:,.0f} of the {concurrency:,.0f} requests "
                f"({point.limit.removesuffix(' (queueing)')}), the rest wait {point.queue_s:,.1f} s to be admitted: "
                "a wider layout (more --dp/--ep) admits more, and `jalapeno frontier` lists the deployments "
                "that serve a load"
            )
        print(note, file=sys.stderr)
    layouts = dict.fromkeys(p.layout for p in (dep.prefill, dep.decode) if p is not None)
    memory = (
        [engine_memory_breakdown(m, s, lay, prec, dep.memory_profile, memory_fraction, dep.mtp) for lay in layouts]
        if dep.memory_profile is not None
        else []
    )
    rules = engine_rules(rec, stack)
    note_lines(overrides + ([release_note] if release_note else []))
    from jalapeno.analysis.price_reason import (
        BASIS_FIELD,
        POWER_BASIS_FIELD,
        basis_lines,
        power_basis,
        power_basis_lines,
        system_basis,
    )
    from jalapeno.analysis.bound_words import BOUND_TEXT_FIELD, LIMIT_TEXT_FIELD, cap_text, point_bound
    from jalapeno.serve.limits import running_cap, running_cap_text

    cap = running_cap(m, pr, dep, wl)  # the deployment's max_running is null where the decode KV pool caps (ux50)
    if json_out:
        print_json(
            {
                **point.as_dict(),
                "running_cap": cap,
                BOUND_TEXT_FIELD: point_bound(point),  # its bound in compare's words (ux53)
                "chip_model": {"model": chip_model, "placement": getattr(pr, "placement_used", "")},
                LIMIT_TEXT_FIELD: cap_text(point.limit),  # its cap in the same words, "" for none (cap53)
                BASIS_FIELD: system_basis(s),
                POWER_BASIS_FIELD: power_basis(s),  # where its watts come from, as compare --json (ux53)
                **({"engine_memory": memory} if memory else {}),
                **(
                    {
                        "engine_version": recipe_engine_version(rec),
                        "version_rules": rules,
                        "recipe_overrides": overrides,
                    }
                    if rec
                    else {}
                ),
            }
        )
        return
    load = f"concurrency {concurrency:g}" if rate is None else f"{rate:g} requests/s (open loop)"
    engine = f" · engine {rec.name}" if rec is not None else ""
    tbl = point_table(
        point,
        f"{m.name} on {s.name} · {wl.name} · {dep.label}{engine}{stack_label(stack)} · {load}",
        open_loop=rate is not None,
        price_note=price_note(s),
    )
    if rate is None:  # frontier/compare list the steady state at the same concurrency (their table caption says so)
        tbl.caption = (
            "a whole InferenceX run: 10·C requests from an idle start (docs/model.md §8.7), so throughput "
            "is a little lower and mean TTFT higher than in the steady state that `frontier` and `compare` "
            "list at the same concurrency"
        )
    tbl.add_row("running-request cap", running_cap_text(cap))
    console.print(tbl)
    for line in basis_lines([s]) + power_basis_lines([s]):  # its $/chip-hour's and its watts' sources (ux53)
        console.print(line, markup=False, soft_wrap=True)
    if (line := chip_model_line([pr])) is not None:  # the sliced/tiled chip moved the figures: say so
        console.print(line, markup=False, soft_wrap=True)
    if rec is not None:
        console.print(
            f"engine release {recipe_engine_version(rec) or 'not stated (newest behaviour)'}: "
            + ("; ".join(rule_text(r) for r in rules) or "no version rule of the stack applies")
        )
    for b in memory:
        for line in memory_breakdown_lines(b):
            console.print(line)


def rule_text(r: dict) -> str:
    """One engine-release rule of ``predict --engine``'s listing (``r``: an entry of the JSON's ``version_rules``):
    field, value and the release span it holds over, with its source where it is charged. A rule that is not charged
    (its switch off) moves no figure of the table, so its source stays in --json: the listing of
    sglang-b200-dsr1-fp4's two uncharged rules ran to 2,500 characters of wheel dates and PR numbers (newuser49).

    >>> rule_text({"field": "x", "value": 1, "span": "a < 2", "source": "S", "charged": True})
    'x = 1 (a < 2: S)'
    >>> rule_text({"field": "x", "value": 1, "span": "NOT CHARGED: X_ON is off; a < 2", "source": "S", "charged": False})
    'x = 1 (NOT CHARGED: X_ON is off; a < 2; its source in --json)'
    """
    if r.get("charged", True):
        return f"{r['field']} = {r['value']} ({r['span']}: {r['source']})"
    return f"{r['field']} = {r['value']} ({r['span']}; its source in --json)"


def _check_engine_pool(m, s, dep, memory_fraction) -> None:
    """With an engine memory profile, refuse a deployment whose KV pool the engine cannot size.

    Raises:
        InfeasibleDeployment: weights + profiled terms exceed the engine's budget on some pool.
    """
    from jalapeno.errors import InfeasibleDeployment

    if dep.memory_profile is None:
        return
    for p in (dep.prefill, dep.decode):
        if p is None:
            continue
        b = engine_memory_breakdown(m, s, p.layout, dep.precision, dep.memory_profile, memory_fraction, dep.mtp)
        if b["kv_pool"] <= 0:
            gib = 2.0**30
            raise InfeasibleDeployment(
                "--engine-memory",
                f"{p.layout.label}: the engine has no KV cache ({b['kv_pool'] / gib:.2f} GiB): "
                f"budget {b['budget'] / gib:.2f} GiB - weights {b['weights'] / gib:.2f} - sampler/forward peak "
                f"{b['torch_peak'] / gib:.2f} - non-torch {b['non_torch'] / gib:.2f}",
                "raise --memory-fraction, lower --max-running or --max-tokens-per-step (they size the "
                "profiling run), or shard wider",
            )


def refuse_aggregated_options(given: dict) -> None:
    """Refuse aggregated-layout options given beside --prefill/--decode pools, which they would not change.

    Args:
        given: option -> value (None = not given), e.g. ``{"--tp": 8, "--replicas": None}``.

    Raises:
        SpecError: naming the options given (simulate ignored them without a word; predict named all five).
    """
    named = [opt for opt, v in given.items() if v is not None]
    if named:
        keys = ", ".join(f"{o.removeprefix('--')}=" for o in named if o != "--replicas")
        pools = f"put {keys} in the pools" if keys else "count instances with workers= in the pools"
        raise SpecError(
            "/".join(named),
            "aggregated layout option given with --prefill/--decode, which it would not change",
            f'{pools}, e.g. --decode "dp=8,ep=8,eplb=32,workers=1", or drop --prefill/--decode',
        )


def aggregated_layout(m, pr, prec, given: tuple, memory_fraction):
    """The aggregated layout of ``predict`` and ``simulate``, and a note: the one given, or (none
    given) the smallest whose weights fit, with a note for stderr. A given layout whose weights do
    not fit is refused with the smallest one that does.

    Raises:
        InfeasibleDeployment: the weights do not fit (on the given layout, or on any layout).
        SpecError: memory_fraction outside (0, 1]; a given --tp/--dp/--ep/--pp below 1.
    """
    from jalapeno.analysis.sweep_layouts import smallest_fitting_layout, weights_misfit
    from jalapeno.deploy.deployment import check_memory_fraction
    from jalapeno.deploy.layout import Layout, for_model, validate_layout
    from jalapeno.errors import InfeasibleDeployment

    check_memory_fraction(memory_fraction)  # a bad fraction is named as such, not as "fits on no layout"
    tp, dp, ep, pp, eplb = given
    s, eff = pr.system, pr.efficiency
    smallest = smallest_fitting_layout(m, s, prec, eff, memory_fraction)
    if all(v is None for v in given):
        if smallest is None:
            frac = f" with --memory-fraction {memory_fraction:g} of HBM" if memory_fraction is not None else ""
            raise InfeasibleDeployment(
                "deployment",
                f"{m.name} [{prec.name}] does not fit on any layout of {s.name} up to 4x its scale-up domain{frac}",
                "use a smaller precision or a system with more HBM" + (", or raise --memory-fraction" if frac else ""),
            )
        return smallest, (
            f"note: layout {smallest.label} — the smallest whose weights fit on {s.name} "
            "(give --tp/--dp/--ep/--pp to choose)"
        )
    check_positive({"--tp": tp, "--dp": dp, "--ep": ep, "--pp": pp}, ", or leave it out")
    tp, dp, ep, pp = (1 if v is None else v for v in (tp, dp, ep, pp))
    layout = for_model(Layout(tp=tp, dp=dp, ep=ep, pp=pp, eplb=eplb), m)
    validate_layout(layout, m, s)  # before the memory fit: --ep 8 alone (EP > TP x DP) divided by MoE TP 0
    why = weights_misfit(m, s, layout, prec, eff, memory_fraction)
    if why:
        pp_opt = f" --pp {smallest.pp}" if smallest and smallest.pp > 1 else ""
        hint = (
            (
                f"shard wider: the smallest layout that fits is {smallest.label} (--tp {smallest.tp} --dp "
                f"{smallest.dp} --ep {smallest.ep}{pp_opt}), or use a smaller precision"
            )
            if smallest
            else "use a smaller precision or a system with more HBM"
        )
        if memory_fraction is not None:  # the option that shrank the usable HBM went unnamed
            hint += f", or raise --memory-fraction (now {memory_fraction:g} of usable HBM)"
        raise InfeasibleDeployment("deployment", why, hint)
    return layout, ""


def _check_given_layout(m, given: tuple) -> None:
    """Refuse a given ``--tp/--dp/--ep/--pp`` (``--eplb``) that ``m`` alone rules out, before the system's pricer
    loads (with ``--pricer table``, tens of seconds): the model-only part of :func:`aggregated_layout`'s checks
    (deploy/layout.validate_layout without the system's chip count).

    Raises:
        SpecError: a degree below 1. InfeasibleDeployment: as deploy/layout.validate_layout (PP over the layers,
            TP not dividing the heads, EP on a dense model, ...).
    """
    from jalapeno.deploy.layout import Layout, for_model, validate_layout

    tp, dp, ep, pp, eplb = given
    check_positive({"--tp": tp, "--dp": dp, "--ep": ep, "--pp": pp}, ", or leave it out")
    tp, dp, ep, pp = (1 if v is None else v for v in (tp, dp, ep, pp))
    validate_layout(for_model(Layout(tp=tp, dp=dp, ep=ep, pp=pp, eplb=eplb), m), m, None)
