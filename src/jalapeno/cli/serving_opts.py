"""The options of the serving commands (``compare``, ``frontier``, ``predict``, ``simulate``, ``plan``,
``report``): model and workload setup, the sweep options, ``--eplb`` and ``--mtp`` (the ``--prefill`` / ``--decode``
pools: cli/pool_opts.py, round 53; comma-separated lists of numbers and tier floors: cli/number_lists.py, round 55).
Parsing only; each error is a :class:`~jalapeno.errors.SpecError` naming the option and the fix.
"""

from __future__ import annotations

from dataclasses import replace

from jalapeno.cli.common import resolve_precision
from jalapeno.cli.engine_opts import sweep_options
from jalapeno.cli.number_lists import (  # noqa: F401 (re-exported: split from here, round 55)
    _floats,
    _floors,
    check_at_speeds,
)
from jalapeno.cli.pool_opts import check_pool, parse_pool  # noqa: F401 (re-exported: split from here, round 53)
from jalapeno.deploy.deployment import check_memory_fraction
from jalapeno.errors import SpecError
from jalapeno.specs.workload import check_concurrency

EPLB_HELP = (
    "EPLB with this many redundant experts (EP must divide experts + R; at most the model's expert "
    "count, deployments run 32 for 256; default: EPLB off)."
)
#: help texts of ``compare`` and ``frontier`` (cli/serving_cmds.py, cli/frontier_cmd.py; moved here in round 52)
WORKLOAD_HELP = (
    "1k1k, 8k1k (default), 1k8k, 32k1k, 64k1k, 128k1k, or agentic:PRESET (coding-agent, research-agent, "
    "long-memory-chat, chat-agent) / agentic:FILE.toml."
)
SWEEP_EPLB_HELP = (
    "Redundant experts the sweep tries with EPLB on MoE layouts with EP >= 8 (rounded up so EP "
    "divides experts + R; beside EPLB off; at most the model's expert count), or 'off' (default 32). Only under "
    "--routing measured: with uniform routing replicas cannot lower the busiest rank's load."
)
SWEEP_OVERLAP_HELP = (
    "Two-batch overlap: auto (the faster of none/tbo per point; the default unless an --engine "
    "recipe sets one), none or tbo (MoE models: the layouts with attention DP and EP)."
)


def _mtp(k: int | None, acceptance: float | None, recipe=None):
    """The explicit MTP of ``--mtp K --mtp-acceptance A`` (None: neither given). ``recipe``: the ``--engine`` recipe,
    whose own MTP the explicit one replaces whole: one option alone is refused naming the recipe's draft lengths
    and acceptance (it said "no default acceptance is assumed" while the recipe runs one: break51).

    Raises:
        SpecError: a draft length below 1, or one of the two options without the other.
    """
    from jalapeno.deploy.deployment import MTP

    if k is None and acceptance is None:
        return None
    if k is not None and k < 1:
        raise SpecError("--mtp", f"draft length must be >= 1, got {k}", "to run without MTP leave --mtp out")
    if k is None or acceptance is None:
        rule = getattr(recipe, "draft_rule", None)
        if rule is not None:
            ks = sorted(set(rule.lengths))
            accs = {d: recipe.mtp_for(d).acceptance for d in ks}
            own = (
                f"draft length {' or '.join(map(str, ks))}{' by load' if len(ks) > 1 else ''}, acceptance {accs[ks[0]]:g}"
                if len(set(accs.values())) == 1
                else ", ".join(f"draft length {d} at acceptance {a:g}" for d, a in accs.items())
            )
            kk = k if k is not None else ks[0]
            aa = acceptance if acceptance is not None else accs.get(kk, accs[ks[0]])
            raise SpecError(
                "--mtp/--mtp-acceptance",
                f"recipe {recipe.name} runs MTP ({own}) and an explicit "
                "MTP replaces it whole: one of the two alone leaves the other unsaid",
                f"pass both, e.g. --mtp {kk} --mtp-acceptance {aa:g}, or neither for the recipe's",
            )
        raise SpecError(
            "--mtp/--mtp-acceptance",
            "MTP needs both the draft length and the acceptance rate",
            "pass --mtp K --mtp-acceptance A (no default acceptance is assumed)",
        )
    return MTP(k, acceptance)


def check_workload_context(m, wl, lengths_given: bool) -> None:
    """A fixed-length workload longer than the model's context is refused under the option that set
    it (``--workload``, or ``--isl/--osl`` when given) with the presets that fit (specs/workload.context_fix).

    Raises:
        SpecError: ISL + OSL above the model's ``max_position_embeddings``.
    """
    from jalapeno.specs.workload import context_fix

    m.check_context(
        wl.isl + wl.osl,
        "--isl/--osl" if lengths_given else "--workload",
        f"{wl.isl} + {wl.osl} tokens" if lengths_given else f"{wl.name} ({wl.isl} + {wl.osl} tokens)",
        context_fix(m.max_context),
    )


def _setup(
    model: str,
    workload: str | None,
    isl: int | None,
    osl: int | None,
    precision: str | None,
    fixed: bool = False,
    kv_dtype: str | None = None,
    attention_dtype: str | None = None,
    compute_fallback: bool = False,
    routing: str = "uniform",
):
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.routing import with_routing
    from jalapeno.specs.workload import get_workload

    m = with_routing(load_model(model), routing)
    wl = get_workload(workload, isl, osl, fixed)
    check_workload_context(m, wl, isl is not None)
    prec = resolve_precision(m, precision, kv_dtype, attention_dtype, compute_fallback)
    return m, wl, prec


def _sweep_opts(
    serving,
    mtp,
    acceptance,
    concurrency,
    eplb,
    overlap,
    recipe,
    max_running,
    max_tokens,
    graph,
    memory_fraction,
    engine_release: tuple[str, str] = (),
):
    """The sweep options of compare/frontier: stated options, then the recipe, then explicit options
    over it (an explicit --overlap or --memory-fraction beats the recipe's; without either, a
    recipe's overlap, else ``auto``). ``engine_release``: the (profile, release) the run states
    (deploy/vllm_fp8_moe.stack_release; SweepOptions.engine_release)."""
    _mtp(mtp, acceptance, recipe)  # one of the two alone beside an MTP recipe: named as such
    opts = sweep_options(
        _options(serving or "both", mtp, acceptance, concurrency, eplb, overlap or "auto"),
        recipe,
        serving is not None,
        max_running,
        max_tokens,
        graph,
    )
    if engine_release and engine_release[0] == "vllm":
        opts = replace(opts, engine_release=engine_release)
    if overlap is not None:
        opts = replace(opts, overlap=overlap)
    if memory_fraction is not None:
        opts = replace(opts, memory_fraction=check_memory_fraction(memory_fraction))
    return opts


def concurrency_notes(opts) -> list[str]:
    """The note ``compare``/``frontier`` print when ``--concurrency`` leaves disaggregated serving out.

    Fixed concurrencies price aggregated instances only (a disaggregated point spans the batch grid,
    analysis/sweep.py), so under the default ``--serving both`` the disaggregated deployments drop out
    of the frontier: ``compare -m gpt-oss-120b -c 1,4,16,64,256,1024`` gave Jalapeño's ``fast`` tier
    (>= 100 tok/s/user) as 36,759 tok/s/chip against 69,159 without ``-c``, with no word of why (newuser39).
    ``opts``: the :class:`~jalapeno.analysis.sweep.SweepOptions` of the run. Returns one line, or none
    when no concurrency is given or the run is aggregated only (``--serving agg`` says it already).
    """
    if opts.concurrency is None or opts.serving != "both":
        return []
    return [
        "--concurrency prices aggregated serving only (a disaggregated point spans the batch grid): "
        "no disaggregated deployment is swept; drop --concurrency to sweep them too, "
        "or pass --serving agg to state it"
    ]


SWEEP_EPLB_DEFAULT = 32  # redundant experts: SGLang's large-scale EP recipe (--ep-num-redundant-experts 32)


def sweep_eplb(text: str | None) -> int | None:
    """``--eplb`` of the sweeping commands: ``off`` → None, None (not given) → 32, else a count >= 0.

    The default, :data:`SWEEP_EPLB_DEFAULT` = 32, is SGLang's large-scale EP recipe
    (``--ep-num-redundant-experts 32``; DeepSeek-V3 report §3.4: 32 redundant experts in prefill).

    Raises:
        SpecError: neither ``off`` nor a non-negative integer.
    """
    if text is None:
        return SWEEP_EPLB_DEFAULT
    if text.strip().lower() == "off":
        return None
    try:
        r = int(text)
    except ValueError:
        raise SpecError(
            "--eplb",
            f"{text!r} is neither 'off' nor a number of redundant experts",
            "write e.g. --eplb 32 or --eplb off",
        ) from None
    if r < 0:
        raise SpecError("--eplb", f"must be >= 0, got {r}", "write e.g. --eplb 32 or --eplb off")
    return r


def refuse_dense_eplb(eplb: str | None, model) -> None:
    """Refuse an explicit ``--eplb R`` (R not ``off``) on a dense model: it would be silently ignored.

    Args:
        eplb: the option as given (None: not given).
        model: a ModelSpec; ``model.moe is None`` means dense.

    Raises:
        SpecError: field ``--eplb``, naming the model and the fix (drop the option).
    """
    if eplb is None or model.moe is not None or eplb.strip().lower() == "off":
        return
    raise SpecError(
        "--eplb",
        f"{model.name} is a dense model (no experts): EPLB has no experts to balance, "
        f"so --eplb {eplb.strip()} would be ignored",
        "drop --eplb (it applies to MoE models only)",
    )


def note_idle_eplb(eplb: str | None, model) -> str:
    """The note a sweep prints where an explicit ``--eplb R`` (R not ``off``) makes no layout: the sweep makes EPLB
    twins only under a skewed expert popularity (analysis/sweep_layouts.with_eplb: ``--routing measured`` or
    ``generated``), and under ``--routing uniform`` (the default: InferenceX's random-token prompts) replicas cannot
    lower the busiest rank's expected share. ``compare --eplb 64`` ran the same sweep as without it and said nothing
    (newuser50). Checks R first (analysis/sweep_layouts.check_sweep_eplb: the error it would raise later).

    Args:
        eplb: the option as given (None: not given); model: a ModelSpec with the --routing applied.

    Returns:
        The note ("" where none applies): a dense model is refused by :func:`refuse_dense_eplb`.

    Raises:
        SpecError: as :func:`sweep_eplb` and check_sweep_eplb (field ``--eplb``).
    """
    from jalapeno.analysis.sweep_layouts import check_sweep_eplb

    if eplb is None or model.moe is None:
        return ""
    r = sweep_eplb(eplb)
    check_sweep_eplb(r, model)
    if r is None or max(model.moe.routing_sigma, getattr(model.moe, "decode_routing_sigma", 0.0)) > 0:
        return ""
    return (
        f"--eplb {eplb.strip()} makes no layout under uniform expert routing (--routing uniform, the default): "
        "replicas cannot lower the busiest rank's expected load, so the sweep tries EPLB only under --routing "
        "measured or generated; add one of those, or drop --eplb"
    )


def refuse_idle_ar_rms(stack: str | None, model, pricers) -> None:
    """Refuse ``--stack NAME+ar_rms`` where the all-reduce + RMSNorm fusion it switches on changes no price of
    ``model`` on any of ``pricers``' systems at any TP (cost/allreduce_rms.fusion_moves_price, the pricer's own test:
    rule_max_tokens under the pricer's ``allreduce_rms_rule``, and the engine all-reduce table it reads): SGLang's
    rule fuses its listed architectures only (SGLANG_MODEL_TYPES) and both rules only on the chips of the fused
    kernel (their chip.compute_capability; CAPABILITY_BY_PREFIX by name where a file omits it). ``--stack
    sglang+ar_rms`` on llama-3.3-70b priced exactly as ``sglang``, and ``vllm+ar_rms`` on an MI300X as ``vllm``, with
    no word (break48). A comparison is refused only when no system of
    it fuses a step, and its message gives each system's reason (review48).

    Raises:
        SpecError: naming ``--stack``, why the fusion is idle (in a comparison, per system), and the spelling
            without ``+ar_rms``.
    """
    if not stack or not stack.strip().endswith("+ar_rms"):
        return
    from jalapeno.cost.allreduce_rms import (
        CAPABILITY_BY_PREFIX,
        FUSION_MAX_MIB,
        SGLANG_RULES,
        device_capability,
        fusion_moves_price,
    )

    prs = pricers if isinstance(pricers, (list, tuple)) else [pricers]

    def fuses(pr) -> bool:  # the pricer's own test, both places it reads the fusion (review48)
        return fusion_moves_price(pr.efficiency, model.model_type, pr.system.chip, model.hidden_size)

    def why(pr) -> str:
        chip, cap = pr.system.chip.name, device_capability(pr.system.chip)
        if cap is None:
            known = ", ".join(prefix for prefix, _ in CAPABILITY_BY_PREFIX)
            return (
                f"its fused kernel runs on NVIDIA SM90 / SM100-family chips, and {chip!r} states no "
                f"chip.compute_capability in its hardware file nor has a name starting with one of {known} (set "
                f'chip.compute_capability, e.g. "9.0" for a Hopper chip)'
            )
        if cap // 10 not in {c // 10 for c in FUSION_MAX_MIB}:  # vLLM's size table: SM90 / SM100-family chips
            return f"its fused kernel runs on NVIDIA SM90 / SM100-family chips, and {chip!r} is SM{cap}"
        rule = pr.efficiency.allreduce_rms_rule
        if rule in SGLANG_RULES:  # the rule table rule_max_tokens reads (sglang; sglang_sm100 before release 0.5.7)
            majors, types = SGLANG_RULES[rule]
            src = "sgl-project/sglang PR #14764" if rule == "sglang" else f"SGLang's rule {rule!r}, before 0.5.7"
            if model.model_type not in types:
                return (
                    f"SGLang fuses it for {', '.join(sorted(types))} models only ({src}), and {model.name} is "
                    f"{model.model_type}"
                )
            if cap // 10 not in majors:
                sms = " / ".join(f"SM{m}0" for m in sorted(majors))
                return f"SGLang fuses it on {sms} chips only ({src}), and {chip!r} is SM{cap}"
        return f"no step of {model.name} (hidden size {model.hidden_size:,}) is within the fused kernel's size cap"

    if not prs or any(fuses(pr) for pr in prs):
        return
    base = stack.strip().removesuffix("+ar_rms").rstrip()
    reasons = why(prs[0]) if len(prs) == 1 else "; ".join(f"{pr.system.name}: {why(pr)}" for pr in prs)
    raise SpecError(
        "--stack",
        f"+ar_rms (the all-reduce + RMSNorm fusion) covers no step here: {reasons}, so "
        f"{stack.strip()!r} would price exactly as {base!r}",
        f"drop +ar_rms: --stack {base}",
    )


def refuse_dense_overlap(overlap: str | None, model) -> None:
    """Refuse ``--overlap tbo`` on a dense model in a sweep (compare, frontier, agentic): it would be silently ignored.

    A sweep applies two-batch overlap only to layouts whose MoE layers exchange tokens by all-to-all
    (deploy/sharding.has_ep_all_to_all, analysis/sweep.SWEEP_OVERLAP: "always, where it applies"); a dense
    model has none, so every point ran without it and the output said ``overlap: none`` (break47). predict,
    simulate and step already refuse it for their one layout.

    Args:
        overlap: the option as given (None: not given; ``auto``, ``none`` and unknown spellings pass).
        model: a ModelSpec; ``model.moe is None`` means dense.

    Raises:
        SpecError: field ``--overlap``, naming the model and the fix (drop the option or use auto/none).
    """
    if overlap != "tbo" or model.moe is not None:  # another spelling: SweepOptions names it
        return
    raise SpecError(
        "--overlap",
        f"{model.name} is a dense model (no experts): two-batch overlap hides the MoE "
        "dispatch/combine all-to-all, which it does not have, so --overlap tbo would be ignored",
        "drop --overlap (or give auto or none); it applies to MoE models on layouts with attention DP and EP",
    )


def _options(
    serving: str,
    mtp: int | None,
    acceptance: float | None,
    concurrency: str | None,
    eplb: str | None = None,
    overlap: str = "auto",
):
    from jalapeno.analysis.sweep import SweepOptions

    # one wording with predict's and simulate's -c ('needs positive values' here); no --rate on these commands
    conc = (
        tuple(
            _floats(
                concurrency,
                "--concurrency",
                example="1,4,16,64",
                check=lambda v: check_concurrency(v, rate="`jalapeno predict` or `simulate` with --rate"),
            )
        )
        if concurrency is not None
        else None
    )
    return SweepOptions(
        serving=serving, mtp=_mtp(mtp, acceptance), concurrency=conc, eplb=sweep_eplb(eplb), overlap=overlap
    )


def _release_notes(m, opts, precisions: dict[str, list[str]]) -> list[str]:
    """The engine-release notes of a sweep (deploy/vllm_fp8_moe.sweep_release_note), one per system whose swept
    precisions the rule reads (``precisions``: system -> precision names)."""
    if not opts.engine_release:
        return []
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.deploy.vllm_fp8_moe import sweep_release_note
    from jalapeno.specs.formats import get_precision

    notes = []
    for system, names in precisions.items():
        found = (
            sweep_release_note(
                m,
                Deployment(get_precision(n), Pool(Layout())),
                *opts.engine_release,
                system,
                opts.serving != "agg" and opts.concurrency is None,
            )
            for n in names
        )
        notes += [next((x for x in found if x), "")]
    return [n for n in notes if n]
