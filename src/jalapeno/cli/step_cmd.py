"""``jalapeno step``: the cost of one forward step, op by op, with its binding constraint."""

from __future__ import annotations

import typer
from rich.table import Table
from rich.text import Text

from jalapeno.cli.chip_opts import chip_model_line, chip_model_option, placement_option, print_slices, print_tiles
from jalapeno.cli.common import (
    attention_dtype_option,
    compute_fallback_option,
    console,
    efficiency_option,
    fmt_si,
    kv_dtype_option,
    model_option,
    print_json,
    resolve_precision,
    stack_label,
    stack_option,
)
from jalapeno.cli.serving_opts import refuse_idle_ar_rms
from jalapeno.cli.engine_opts import check_dispatch_ranks, check_positive, check_positive_limits
from jalapeno.cli.engine_memory_opts import check_stack_memory, engine_memory_option, memory_breakdown_lines
from jalapeno.cli.system_opts import PRICER_OPTION, SET_OPTION, check_pricer_chip_model, system_pricer
from jalapeno.cli.system_notes import note_unread_efficiency
from jalapeno.cost.batch import refuse_no_tokens
from jalapeno.cost.overlap import MIN_SPLIT_SEQS, can_split
from jalapeno.cost.roofline import compute_limit_labels
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import MEMORY_FRACTION_HELP, check_memory_fraction
from jalapeno.deploy.engine_memory import get_engine_memory
from jalapeno.deploy.layout import Layout, for_model, validate_layout
from jalapeno.deploy.engine_pool import engine_memory_breakdown
from jalapeno.errors import SpecError
from jalapeno.specs.calibration import derived_from
from jalapeno.specs.catalog import load_model
from jalapeno.specs.precision_checks import check_fallback_used
from jalapeno.specs.routing import ROUTING_HELP


#: a step whose binding constraint is within this factor of the next is called a near tie
NEAR_TIE = 1.10


def margin_text(margin: float) -> str:
    """How far the binding constraint leads the next one: ``1.45x the next``, or ``a near tie: 1.03x the next``
    under :data:`NEAR_TIE` (either constraint can bind at a slightly different point)."""
    return f"a near tie: {margin:.2f}x the next" if margin < NEAR_TIE else f"{margin:.2f}x the next"


def default_layout(tp: int | None, dp: int | None, ep: int | None) -> tuple[int, int, int]:
    """``step``'s layout from the options given: DEP8 (attention DP8, EP8) with none of them;
    otherwise TP 1, DP 1 with ``--tp`` (else ``--ep``'s value), EP over every chip of the instance
    (tp x dp), so that ``--tp 8`` alone is TP8 on 8 chips, not TP8 x DP8 on 64."""
    # checked here, before the fill, so that ``--ep 0`` is not reported as ``dp`` (its filled value)
    check_positive({"--tp": tp, "--dp": dp, "--ep": ep}, ", or leave it out")
    if tp is None and dp is None and ep is None:
        return 1, 8, 8
    tp = 1 if tp is None else tp
    dp = (1 if ep is None or tp > 1 else ep) if dp is None else dp
    return tp, dp, tp * dp if ep is None else ep


def step(
    system: str = typer.Option("jalapeno", "--system", "-s", help="System name or TOML path."),
    model: str = model_option(),
    precision: str = typer.Option("", "--precision", "-p", help="Precision preset (default: the model's)."),
    kv_dtype: str = kv_dtype_option(),
    attention_dtype: str = attention_dtype_option(),
    compute_fallback: bool = compute_fallback_option(),
    tp: int = typer.Option(None, "--tp", help="Attention tensor parallelism (default 1)."),
    dp: int = typer.Option(
        None,
        "--dp",
        help="Attention data parallelism (default: 1 with --tp, else --ep's "
        "value, else 8: with none of --tp/--dp/--ep the step is DEP8).",
    ),
    ep: int = typer.Option(
        None,
        "--ep",
        help="Expert parallelism (default: every chip of the instance, tp x dp, "
        "so --tp 4 alone is MoE EP4; 1 for dense models). predict and simulate default to --ep 1 "
        "(MoE TP over tp x dp, vLLM's -tp without --enable-expert-parallel): give --ep to "
        "compare the same layout.",
    ),
    pp: int = typer.Option(1, "--pp", help="Pipeline stages."),
    eplb: int = typer.Option(
        None,
        "--eplb",
        help="EPLB with this many redundant experts (EP must divide "
        "experts + R; at most the model's expert count; default: off).",
    ),
    routing: str = typer.Option("uniform", "--routing", help=ROUTING_HELP),
    dp_dispatch: str = typer.Option(
        "balanced",
        "--dp-dispatch",
        help="How requests spread over the attention-DP "
        "ranks: balanced (round robin), random (each on a random rank, as SGLang's "
        "disaggregated decode before PR #16110: the fullest rank's decodes are priced) or "
        "refill (every rank at its running cap: decodes even, each prompt on the random "
        "rank a request left, the busiest rank's prompts priced).",
    ),
    cp: int = typer.Option(1, "--cp", help="Context parallelism (prefill-only steps: --batch 0 --prefill-tokens N)."),
    batch: int = typer.Option(64, "--batch", "-b", help="Decoding sequences in the step (whole instance)."),
    context: int = typer.Option(8192, "--context", "-c", help="Mean context length of the decoding sequences."),
    prefill_tokens: int = typer.Option(0, "--prefill-tokens", help="Prompt tokens prefilled in the same step."),
    prefix: int = typer.Option(0, "--prefix", help="Cached prefix of the prefilled prompt, tokens (a later chunk)."),
    efficiency: str = efficiency_option(),
    stack: str = stack_option(engine=False),
    pricer: str = PRICER_OPTION,
    memory_fraction: float = typer.Option(None, "--memory-fraction", help=MEMORY_FRACTION_HELP),
    engine_memory: str = engine_memory_option(engine=False),
    max_running: int = typer.Option(
        None, "--max-running", help="With --engine-memory vllm-0.11: max_num_seqs of its profiling run."
    ),
    max_tokens_per_step: int = typer.Option(
        None,
        "--max-tokens-per-step",
        help="With --engine-memory vllm-0.11: max_num_batched_tokens of its profiling run.",
    ),
    overlap: str = typer.Option(
        "none", "--overlap", help="none or tbo (two-batch overlap of the MoE all-to-all; needs --dp > 1 and --ep > 1)."
    ),
    sets: list[str] = SET_OPTION,
    chip_model: str | None = chip_model_option(default=None),
    placement: str = placement_option(),
    slices: bool = typer.Option(
        False,
        "--slices",
        help="Price the chip as slices (implies --chip-model sliced) "
        "and show per-slice time, bytes moved on die and the bound.",
    ),
    tiles: bool = typer.Option(
        False,
        "--tiles",
        help="Show each GEMM's tile mapping (tile, split-K, waves) and its "
        "tile-model efficiency beside the calibrated one (chips that publish SM/CU counts).",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Cost of one forward step on one chip: ops, collectives, time and binding constraint."""
    from jalapeno.cost.sliced import chip_model_pricer, refuse_idle_placement, slice_summary
    from jalapeno.specs.routing import with_routing

    ep_given = ep
    tp, dp, ep = default_layout(tp, dp, ep)
    m = with_routing(load_model(model), routing)
    if slices and chip_model in ("tiled", "flat"):
        raise SpecError(
            "--slices",
            f"shows the sliced chip model, and --chip-model {chip_model} was given",
            "drop --slices, or use --chip-model sliced (or leave it out: --slices implies it)",
        )
    chip_model = chip_model or ("sliced" if slices else "flat")
    check_pricer_chip_model(pricer, chip_model)
    prec = resolve_precision(m, precision, kv_dtype, attention_dtype, compute_fallback)
    if m.moe is None and ep != 1:
        if ep_given:
            raise SpecError(
                "--ep",
                f"{m.name} is dense; expert parallelism needs MoE layers, and --ep {ep_given} was given",
                "drop --ep, or give --ep 1; for data parallelism use --dp",
            )
        ep = 1
    if batch > 0 and context < 1:  # a decoding sequence attends over at least its own token; 0 priced no KV read
        raise SpecError(
            "--context",
            f"is {context} and the step decodes {batch} sequences: each attends over at least its own token",
            "give --context 1 or more (the mean decode context, tokens), or --batch 0 for a prefill-only step",
        )
    for opt, v in (
        ("--batch", batch),
        ("--context", context),
        ("--prefill-tokens", prefill_tokens),
        ("--prefix", prefix),
    ):
        if v < 0:  # was refused as batch.decode_ctx etc., names the option does not have
            raise SpecError(opt, f"must be >= 0, got {v}", f"give {opt} 0 or more")
    refuse_no_tokens(  # priced as launch and collective latency alone, ~1 ms of nothing
        batch,
        prefill_tokens,
        "--batch/--prefill-tokens",
        "give --batch N (decoding sequences) and/or --prefill-tokens N",
    )
    if prefix and not prefill_tokens:
        raise SpecError(
            "--prefix",
            "is the cached prefix of prefilled tokens, and the step prefills none",
            "add --prefill-tokens N, or drop --prefix",
        )
    for opt, length in (("--context", context), ("--prefix/--prefill-tokens", prefix + prefill_tokens)):
        m.check_context(length, opt)
    profile = get_engine_memory(engine_memory)
    check_stack_memory(stack, profile)
    if profile is None and (max_running is not None or max_tokens_per_step is not None):
        raise SpecError(
            "--max-running/--max-tokens-per-step",
            "size an engine's profiling run, and no --engine-memory was given",
            "add --engine-memory NAME, or drop them",
        )
    if (
        profile is not None
        and profile.rule == "sglang"
        and (max_running is not None or max_tokens_per_step is not None)
    ):
        # they were accepted and changed nothing: SGLang's pool has no profiling run to size
        raise SpecError(
            "--max-running/--max-tokens-per-step",
            f"size vLLM's start-up profiling run, and "
            f"{profile.name}'s KV pool does not depend on them (free memory x mem_fraction_static - "
            "weights)",
            "drop them, or use --engine-memory vllm-0.11",
        )
    if profile is not None:
        check_positive_limits(max_running, max_tokens_per_step)
        profile = profile.with_limits(max_running, max_tokens_per_step)
    check_dispatch_ranks("--dp-dispatch", dp, dp_dispatch.strip().lower())
    lay = Layout(
        tp=tp, dp=dp, ep=ep, pp=pp, cp=cp, eplb=eplb, dp_dispatch=dp_dispatch.strip().lower()
    )  # as pools read it
    # what the options and the model decide first: with --pricer table the system's kernel tables take tens of
    # seconds to load, and 'step -s b300 --pp 62 --pricer table' was refused only after them (followup51)
    validate_layout(for_model(lay, m), m, None)
    pr = chip_model_pricer(system_pricer(system, efficiency, sets, stack, pricer), chip_model, placement)
    refuse_idle_placement(pr, placement)
    s = pr.system
    note_unread_efficiency(sets, m, prec, pr)
    refuse_idle_ar_rms(stack, m, pr)  # +ar_rms that fuses no step of this model here (break48)
    check_fallback_used(prec, m, [s.chip])
    sc = step_cost(
        m,
        pr,
        for_model(lay, m),
        prec,
        Batch.make(decode_seqs=batch, decode_ctx=context, prefill_tokens=prefill_tokens, prefill_ctx=prefix),
        memory_fraction=check_memory_fraction(memory_fraction),
        overlap=overlap,
        engine_memory=profile,
    )
    out = sc.summary(0)
    if not out["feasible"]:
        from jalapeno.errors import InfeasibleDeployment

        from jalapeno.cli.common import in_option_words

        raise InfeasibleDeployment(
            "deployment",
            f"{sc.layout.label} on {s.name}: {in_option_words(out['reason'], '--batch')}",
            "change one of the things the reason names",
        )
    sliced = slice_summary(sc.ops, sc.times, pr, 0) if chip_model == "sliced" else None
    tile_table = None
    if tiles:
        from jalapeno.cost.tiles import check_tile_chip, tile_rows

        check_tile_chip(s.chip, "--tiles")
        tile_table = tile_rows(sc.ops, s.chip, pr.efficiency, 0)
    breakdown = None if profile is None else engine_memory_breakdown(m, s, sc.layout, prec, profile, memory_fraction)
    if json_out:
        print_json(
            {
                **out,
                **({"engine_memory": breakdown} if breakdown else {}),
                "efficiency_source": pr.efficiency.source,
                "hbm_traffic": hbm_traffic(sc, s.chip.hbm_bandwidth_bytes_per_s),
                "ops": sc.op_rows(0),
                "collectives": sc.collective_rows(0),
                **({"slices": sliced} if sliced else {}),
                **({"tiles": tile_table} if tiles else {}),
            }
        )
        return
    split = bool(can_split(batch, prefill_tokens, dp))
    # a prefill-only step (--batch 0) has no decode rows to give a context: its title read 'batch 0 x ctx 8192 +
    # 8192 prefill tokens', the default --context of no sequence (newuser50)
    has_decode = batch or not prefill_tokens
    rows_text = (
        f"batch {batch} x ctx {context}" + (f" + {prefill_tokens} prefill tokens" if prefill_tokens else "")
        if has_decode
        else f"{prefill_tokens} prefill tokens, no decode batch"
    )
    t = Table(
        title=f"{m.name} on {s.name}, {sc.layout.label}, {prec.name}, {rows_text}"
        f"{stack_label(stack)}"
        + (f" at prefix {prefix}" if prefix else "")
        + (
            " (ops and collectives of the whole step, unsplit; the step time below is two-batch overlapped)"
            if overlap == "tbo" and split
            else ""
        )
    )
    rows = sc.op_rows(0)
    # every character of an op's name (at 100 characters rich cut three ops to one "moe.shared_expert.…"), whole
    # where the width allows (report/narrow.fit_columns), else folded; the figures on one line each; the bound
    # wraps between words
    t.add_column("op", overflow="fold")
    for col in ("fmt", "FLOP", "weights B", "KV B", "act B", "time us", "bound"):
        t.add_column(col, justify="right" if col not in ("fmt", "bound") else "left", no_wrap=col != "bound")
    limits = compute_limit_labels(sc.ops, s.chip, pr.efficiency, sc.times.compute_s)
    shown = []  # the compute labels the bound column prints
    for r, lim in zip(rows, limits):
        bound = (
            "overhead" if r["overhead_s"] > max(r["compute_s"], r["memory_s"], r.get("network_s", 0.0)) else r["bound"]
        )
        if bound == "compute" and lim:
            shown.append(lim)
        t.add_row(
            r["op"],
            r["format"],
            fmt_si(r["flop"]),
            fmt_si(r["weight_bytes"]),
            fmt_si(r["kv_bytes"]),
            fmt_si(r["act_bytes"]),
            f"{r['time_s'] * 1e6:.1f}",
            f"compute ({lim})" if bound == "compute" and lim else bound,
        )
    t.caption = rows_caption(batch, dp, pp, m.num_layers, lay.dp_dispatch, prefill_tokens)
    from jalapeno.specs.precision_checks import priced_as

    # the fmt column is the compute format: MXFP4 experts read 'fp8' with no word that they are W4A8 (ux50)
    t.caption += "".join(f"\nfmt of the {line}" for line in priced_as(prec, m, s.chip, pr.efficiency))
    # each label explained only where a row prints it, as frontier's bound legend does: a prefill step whose one
    # labelled row was 'few rows' explained the serial-k floor too, and a row's hidden label was explained (newuser50)
    clauses = []
    if any(lim.endswith("of peak") for lim in shown):
        clauses.append(
            "compute (few rows: P% of peak): the fitted row-count rule m / (m + half_rows) (a GPU kernel's "
            "output tiles padded at few rows) runs the GEMM under a tenth of its format's peak: its time "
            "scales with 1 / peak FLOP/s and not with HBM bandwidth"
        )
    if "serial-k floor" in shown:
        clauses.append(
            "compute (serial-k floor): a block-scaled GEMM's serial k loop (k / 128 x k_block_s) sets its "
            "time, whatever the chip's peaks"
        )
    if clauses:
        t.caption += "\n" + "; ".join(clauses) + " (docs/model.md §4)"
        donor = derived_from(pr.efficiency.source)
        if donor is not None:
            t.caption += (
                f"; {s.name} has no kernel measurements: these are borrowed from {donor}'s GPU kernel fits "
                "(a named assumption, docs/model.md §11)"
            )
    from jalapeno.report.narrow import fit_columns

    console.print(fit_columns(t, console.width))
    if sc.collectives.name:
        ct = Table(title="collectives")
        for col in ("collective", "group", "bytes/call", "calls", "time us", "algorithm", "level"):
            ct.add_column(col, overflow="fold")  # a name folded whole, not cut to "moe.dispat…" at 80 characters
        for r in sc.collective_rows(0):
            ct.add_row(
                r["collective"],
                str(r["group"]),
                fmt_si(r["bytes_per_call"], "B"),
                f"{r['calls']:.0f}",
                f"{r['time_s'] * 1e6:.1f}",
                r["algorithm"],
                f"{r['level']} ({r['scope']})",
            )
        console.print(ct)
    if slices:
        print_slices(sliced)
    elif (line := chip_model_line([pr])) is not None:
        # --chip-model sliced / tiled moved the step with no word of it (compare and frontier print this line)
        console.print(line, markup=False)
    if tiles:
        print_tiles(tile_table)
    att = ", ".join(
        f"{k} {v * 1e3:.2f} ms"
        for k, v in out["attribution_s"].items()
        if k != "on_die_network" or chip_model == "sliced"
    )
    if overlap == "tbo":
        console.print(
            f"two-batch overlap: {out['hidden_comm_s'] * 1e3:.2f} ms of the two micro-batches' all-to-all hidden "
            "under the other's compute (each micro-batch's exchange is priced at half the batch: together they "
            "take longer than the unsplit step's in the table; docs/model.md §6.2)"
            if split
            else f"two-batch overlap: fewer than {MIN_SPLIT_SEQS:g} decoding sequences per DP rank "
            "and no prefill — the step cannot be split and runs serially"
        )
    console.print(
        Text.assemble(
            "step time ",
            (f"{out['step_time_s'] * 1e3:.2f} ms", "bold"),
            ", bound by ",
            (out["bound"], "bold"),
            f" ({margin_text(out['bound_margin'])}); time by constraint "
            "(an op's roofline part under compute or hbm_bandwidth, its per-kernel overhead and the step's fixed cost under "
            "overhead, the collectives under their links, so a total is not the sum of the table's "
            f"rows of that bound): {att}",
        )
    )
    hbm = hbm_traffic(sc, s.chip.hbm_bandwidth_bytes_per_s)
    console.print(
        f"HBM traffic per chip: {hbm['bytes'] / 1e9:.2f} GB (weights {hbm['weight_bytes'] / 1e9:.2f}, KV "
        f"{hbm['kv_bytes'] / 1e9:.2f}, activations {hbm['act_bytes'] / 1e9:.2f}) = {hbm['floor_s'] * 1e3:.2f} ms "
        "at peak bandwidth; ops bound by compute or overhead carry part of it, so hbm_bandwidth above "
        "can be below this floor"
    )
    mem = out["memory"]
    gib = 2**30
    console.print(
        f"memory per chip: weights {mem['weights_bytes'] / gib:.1f} GiB + KV {mem['kv_bytes'] / gib:.1f}"
        f" GiB + activations {mem['activation_bytes'] / gib:.1f} GiB + reserve "
        f"{mem['reserve_bytes'] / gib:.1f} GiB of {mem['usable_bytes'] / gib:.1f} GiB usable"
        + ("" if out["feasible"] else f" — does not fit: {out['reason']}"),
        style=None if out["feasible"] else "red",
    )
    for line in memory_breakdown_lines(breakdown) if breakdown else ():
        console.print(line)


def rows_caption(batch: int, dp: int, pp: int, layers: int, dispatch: str = "balanced", prefill: int = 0) -> str:
    """What one op row of ``step``'s table counts: one chip's part of the step (its attention-DP rank's share of the
    ``batch`` decoding sequences of the whole instance, ``batch / dp`` each where ``dispatch`` is balanced, and of the
    ``prefill`` tokens prefilled in it) summed over the ``layers`` the op runs in (one pipeline stage's share of them
    with ``pp`` > 1). The table printed '14.8 G' FLOP and '597.8' us for one projection with no word that these are 8
    of the 64 sequences over all 61 layers (newuser49).

    >>> rows_caption(64, 8, 1, 61)
    "each op row: one chip's part of the step (its attention-DP rank's 8 of the 64 sequences), summed over the layers that run the op (of the model's 61)"
    >>> rows_caption(0, 1, 2, 80, prefill=8192)
    "each op row: one chip's part of the step (its part of the 8192 prefilled tokens), summed over the layers that run the op (one pipeline stage's share of the model's 80)"
    """
    parts = []
    if batch:
        parts.append(
            f"its attention-DP rank's {batch / dp:g} of the {batch} sequences"
            if dispatch == "balanced"
            else f"its attention-DP rank's share of the {batch} sequences, dispatched {dispatch}"
        )
    if prefill:
        parts.append(f"its part of the {prefill} prefilled tokens")
    stage = f"one pipeline stage's share of the model's {layers}" if pp > 1 else f"of the model's {layers}"
    return (
        f"each op row: one chip's part of the step ({'; '.join(parts)}), summed over the layers that run the op "
        f"({stage})"
    )


def hbm_traffic(sc, bandwidth_bytes_per_s: float, i: int = 0) -> dict:
    """HBM bytes one step ``sc`` (cost/step.StepCost) moves on one chip at point ``i`` (StepCost.hbm_parts;
    collectives are link traffic) and the time they take at the chip's peak bandwidth (``floor_s``, s): the floor
    under any step whatever binds its ops. ``step``'s per-constraint times count each op's time under the
    constraint that binds it, so an op bound by compute or per-kernel overhead carries its bytes out of
    ``hbm_bandwidth``: that sum can sit below this floor (8xH200 Llama-3.3-70B TP4 at batch 1: the KV read of
    attention is overhead-bound)."""
    parts = sc.hbm_parts(i)
    total = sum(parts.values())
    return {"bytes": total, **parts, "floor_s": total / bandwidth_bytes_per_s}
