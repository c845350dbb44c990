"""Engine recipe and engine-limit options shared by predict, frontier, compare and simulate.

Precedence: an explicit CLI option beats the recipe (``--engine``), which beats jalapeno's
defaults (deploy/deployment.py). Each recipe field an explicit option overrides (``-p``, ``--stack``,
``--kv-dtype``, ``--max-running``, ``--max-tokens-per-step``, ``--cuda-graph-max-batch``,
``--memory-fraction``) is named in one note on stderr (:func:`recipe_overrides`). ``--as-deployed``'s recipes and
refusals are cli/as_deployed.py's, ``--engine-memory`` cli/engine_memory_opts.py's (round 53).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import typer

from jalapeno.cli.as_deployed import (  # noqa: F401 (re-exported: split from here, round 53)
    AS_DEPLOYED_HELP,
    deployed_recipes,
    mtp_unlike,
    refuse_with_as_deployed,
)
from jalapeno.cli.engine_memory_opts import (  # noqa: F401 (re-exported: split from here, round 53)
    check_recipe_memory,
    check_stack_memory,
    engine_memory_option,
    memory_breakdown_lines,
)
from jalapeno.errors import SpecError

ENGINE_HELP = "Engine recipe (data/engines.toml), e.g. sglang-b200-dsr1-fp4: its limits, precision, MTP, serving."


def engine_option():
    """``--engine``: a recipe name (data/engines.toml) whose engine settings price the deployment."""
    return typer.Option(None, "--engine", help=ENGINE_HELP)


def max_running_option():
    """``--max-running``: the engine's cap on running requests per instance (count)."""
    return typer.Option(None, "--max-running", help="Max running requests per instance (engine limit).")


def max_tokens_option():
    """``--max-tokens-per-step``: the engine's cap on tokens a step runs, decode rows plus prefill (count)."""
    return typer.Option(
        None, "--max-tokens-per-step", help="Max tokens per step: decode rows + prefill (TRT-LLM max_num_tokens)."
    )


def graph_option():
    """``--cuda-graph-max-batch``: the largest decode batch per attention rank run as a CUDA graph (count)."""
    return typer.Option(
        None,
        "--cuda-graph-max-batch",
        help="Largest decode batch per attention rank run as a CUDA graph; above it, eager.",
    )


def check_positive(given: dict[str, int | None], fix_tail: str = "") -> None:
    """Refuse a given (not None) option below 1: ``given`` maps each option (``"--tp"``) to its value;
    a given 0 is refused, not read as "not given". ``fix_tail`` ends the fix (e.g. ``", or leave it out"``).

    Raises:
        SpecError: field the first such option, "must be a positive integer", fix "give OPT 1 or more".
    """
    for opt, v in given.items():
        if v is not None and v < 1:
            raise SpecError(opt, f"must be a positive integer, got {v}", f"give {opt} 1 or more{fix_tail}")


def check_positive_limits(max_running: int | None, max_tokens_per_step: int | None) -> None:
    """Raises SpecError when a given engine limit is not a positive integer (:func:`check_positive`)."""
    check_positive({"--max-running": max_running, "--max-tokens-per-step": max_tokens_per_step})


@dataclass(frozen=True)
class RecipeRun:
    """How one command runs an engine recipe (:func:`recipe_run`): ``stack`` the software-stack profile
    name (the recipe's engine pinned at its release; the given one without a recipe or system),
    ``kv_dtype`` the KV-cache dtype, ``engine_memory`` the engine memory profile (None: the catalog's
    memory fit) and ``memory_fraction`` its fraction (None: the profile's or deployment's default)."""

    stack: str | None
    kv_dtype: str | None
    engine_memory: object | None
    memory_fraction: float | None


def recipe_run(
    recipe,
    system: str | None,
    stack: str | None,
    kv_dtype: str | None,
    engine_memory: str | None = None,
    memory_fraction: float | None = None,
) -> RecipeRun:
    """The stack, KV dtype and engine memory a recipe's run takes on ``system`` — one rule for
    predict, simulate, frontier and compare, the same that validation prices the recipe's measured
    runs by (deploy/engine_version.recipe_stack, deploy/engine_memory.recipe_memory): each explicit
    option (``stack``, ``kv_dtype``, ``engine_memory``, ``memory_fraction``; None = not given) beats
    the recipe's, which beats jalapeno's default. Without a recipe the options pass through.

    Raises:
        UnknownNameError: unknown stack or memory profile. SpecError: a memory profile of another
            engine than the recipe's or the given stack's (field ``--engine-memory``).
    """
    from jalapeno.deploy.engine_memory import recipe_memory
    from jalapeno.deploy.engine_version import recipe_stack

    if recipe is not None and system is not None:
        stack = recipe_stack(recipe, system.lower(), stack).name
    profile, fraction = recipe_memory(recipe, engine_memory)
    check_recipe_memory(recipe, profile)
    if engine_memory is not None:  # an explicit --stack with an explicit --engine-memory (a recipe's pair agrees)
        check_stack_memory(stack, profile)
    return RecipeRun(
        stack,
        kv_dtype or (recipe.kv_dtype if recipe else None),
        profile,
        fraction if memory_fraction is None else memory_fraction,
    )


def limit_options(max_running, max_tokens_per_step, cuda_graph_max_batch, memory_fraction) -> dict:
    """The engine-limit options by option name, for :func:`recipe_overrides` (None: not given)."""
    return {
        "--max-running": max_running,
        "--max-tokens-per-step": max_tokens_per_step,
        "--cuda-graph-max-batch": cuda_graph_max_batch,
        "--memory-fraction": memory_fraction,
    }


def recipe_overrides(
    recipe,
    systems: list[str],
    precision: str | None,
    stack: str | None,
    kv_dtype: str | None,
    limits: dict[str, float | None] | None = None,
) -> list[str]:
    """The recipe fields an explicit option overrides, one line each (empty without a recipe, or
    where the option states the recipe's own value). An explicit option beats the recipe (a
    capacity planner asking for ``-p fp8`` gets fp8), but never silently: the commands print each
    line as a note on stderr and record them in ``--json`` (``recipe_overrides``).

    ``systems``: the systems the recipe runs on (its stack is its engine at its release on each).
    ``limits``: the engine-limit options given, by option name (``--max-running``,
    ``--max-tokens-per-step``, ``--cuda-graph-max-batch``, ``--memory-fraction``; None: not given),
    each checked against the recipe field of the same name (``--memory-fraction 0.3`` replaced the
    recipe's 0.85 without a word).

    >>> from jalapeno.deploy.engines import get_recipe
    >>> recipe_overrides(get_recipe("sglang-b200-dsr1-fp4"), ["b200"], "fp8", "kernel", None)
    ["-p fp8 overrides recipe sglang-b200-dsr1-fp4's precision fp4", \
"--stack kernel overrides recipe sglang-b200-dsr1-fp4's software stack sglang@0.5.6 (the recipe's engine)"]
    """
    if recipe is None:
        return []
    from jalapeno.deploy.engine_version import recipe_stack
    from jalapeno.specs.formats import get_precision

    out = []
    if precision is not None and get_precision(precision).name != get_precision(recipe.precision).name:
        out.append(f"-p {precision} overrides recipe {recipe.name}'s precision {recipe.precision}")
    if stack is not None:
        own = list(dict.fromkeys(recipe_stack(recipe, s.lower()).name for s in systems))
        given = list(dict.fromkeys(recipe_stack(recipe, s.lower(), stack).name for s in systems))
        if own != given:
            out.append(
                f"--stack {stack} overrides recipe {recipe.name}'s software stack {', '.join(own)} "
                "(the recipe's engine)"
            )
    if kv_dtype is not None and recipe.kv_dtype and kv_dtype != recipe.kv_dtype:
        out.append(f"--kv-dtype {kv_dtype} overrides recipe {recipe.name}'s KV-cache dtype {recipe.kv_dtype}")
    for opt, v in (limits or {}).items():
        field = opt.lstrip("-").replace("-", "_")
        own = getattr(recipe, field, None)
        if v is not None and own is not None and v != own:
            out.append(f"{opt} {v:g} overrides recipe {recipe.name}'s {field} {own:g}")
    return out


def note_lines(lines: list[str]) -> None:
    """Print each line on stderr as ``note: ...`` (stdout stays the result; :func:`recipe_overrides`)."""
    from rich.console import Console

    err = Console(stderr=True)
    for line in lines:
        err.print(f"note: {line}", markup=False, highlight=False, soft_wrap=True)


def load_recipe(
    engine: str | None,
    workload: str | None,
    model: str | None = None,
    systems: list[str] | None = None,
    isl: int | None = None,
    osl: int | None = None,
):
    """The recipe named ``engine`` with its overrides for ``workload`` (None when no --engine).

    ``model`` (a name or path) and ``systems`` (names or paths), when given, must be what the
    recipe was written for: a recipe is one engine's launch settings for one model on some systems.

    Raises:
        UnknownNameError: unknown recipe. SpecError: the recipe is for another model or system
            (field ``--engine``).
    """
    if engine is None:
        return None
    from jalapeno.deploy.engines import RECIPES_OFF, get_recipe

    recipe = get_recipe(engine)
    if recipe.name in RECIPES_OFF:  # ran with no word that validate and --as-deployed leave it out
        note_lines(
            [
                f"recipe {recipe.name} ships off (deploy/engines.RECIPES_OFF: validate and --as-deployed do not "
                "use it; deploy/engines.py says why); --engine runs it as asked"
            ]
        )
    if model is not None:
        from jalapeno.specs.catalog import load_model

        spec = load_model(model)
        name = spec.name
        # a config.json of the recipe's model under another name (DeepSeek-R1-0528/config.json, as downloaded) is the
        # same model: it was refused ('written for deepseek-r1, not DeepSeek-R1-0528'); the shapes decide (break49)
        if name != recipe.model and dataclasses.replace(spec, name=recipe.model) != load_model(recipe.model):
            differs = (
                f" (its config.json's shapes differ from {recipe.model}'s)" if model.lower().endswith(".json") else ""
            )
            raise SpecError(
                "--engine",
                f"recipe {recipe.name} is written for {recipe.model}, not {name}{differs}",
                f"give -m {recipe.model} (the recipe's model; -m defaults to deepseek-r1), use a recipe "
                f"for {name}, or drop --engine",
            )
    if systems:
        from jalapeno.specs.catalog import load_system

        other = [n for n in (load_system(x).name for x in systems) if n not in recipe.systems]
        if other:
            raise SpecError(
                "--engine",
                f"recipe {recipe.name} is written for {', '.join(recipe.systems)}, not {', '.join(other)}",
                "use a recipe for that system, or drop --engine",
            )
    one = load_system(systems[0]).name if systems and len(systems) == 1 else None
    return recipe.for_workload(_preset_name(workload, isl, osl), one)


def _preset_name(workload: str | None, isl: int | None, osl: int | None) -> str | None:
    """The preset a workload resolves to (``-w 8k1k``, the default, or ``--isl 8192 --osl 1024``
    alike), so a recipe's per-workload settings do not depend on how the lengths were spelled."""
    from jalapeno.specs.workload import PRESETS, get_workload

    from jalapeno.errors import JalapenoError

    try:
        wl = get_workload(workload, isl, osl)
    except JalapenoError:  # a trace or an agentic preset: no fixed-length override applies
        return workload
    return next((k for k, p in PRESETS.items() if (p.isl, p.osl) == (wl.isl, wl.osl)), workload)


def limit_kwargs(
    recipe, concurrency: float | None, max_running: int | None, max_tokens: int | None, graph: int | None
) -> dict:
    """Deployment keyword arguments: the recipe's limits, then the explicit options over them.

    Raises:
        SpecError: the recipe sizes its running cap to the benchmark's concurrency
            (``max_running_is_concurrency``) and neither a concurrency nor ``--max-running`` is given
            (an open-loop rate ran uncapped, silently).
    """
    if recipe is not None and recipe.max_running_is_concurrency and concurrency is None and max_running is None:
        raise SpecError(
            "--engine",
            f"{recipe.name} sizes its running requests to the benchmark's concurrency "
            "(max_batch_size = CONC), which an open-loop rate does not give",
            "pass --max-running N with the rate, or use --concurrency",
        )
    kw = recipe.deployment_kwargs(concurrency) if recipe else {}
    for key, val in (
        ("max_running", max_running),
        ("max_tokens_per_step", max_tokens),
        ("cuda_graph_max_batch", graph),
    ):
        if val is not None:
            kw[key] = val
    if recipe is not None and graph is not None:  # the engine's captured sizes under the new ceiling
        kw.pop("cuda_graph_batch_sizes", None)
        if (sizes := recipe.graph_sizes(graph)) is not None:  # SGLang: max-bs becomes the largest listed size
            kw["cuda_graph_batch_sizes"], kw["cuda_graph_max_batch"] = sizes, sizes[-1]
    if recipe is not None:
        kw["recipe"] = f"engine: {recipe.label}"
    return kw


def recipe_mtp(recipe, explicit, seqs_per_rank: float | None, attention_dp: int = 1):
    """The MTP to run: the explicit one, else the recipe's at this layout (attention-DP degree
    ``attention_dp``) and load (``seqs_per_rank`` decoding sequences per attention rank; None for an
    open-loop rate); None without MTP (deploy/recipe.DraftRule).

    Raises:
        SpecError: the recipe's draft length at this layout depends on the load and no load is known.
    """
    if explicit is not None or recipe is None or recipe.draft_rule is None:
        return explicit
    k = recipe.draft_rule.draft_at(seqs_per_rank, attention_dp)
    if k is None:
        raise SpecError(
            "--engine",
            f"{recipe.name} sets the MTP draft length by load, which an open-loop rate does not give",
            "pass --mtp K --mtp-acceptance A, or use --concurrency",
        )
    return recipe.mtp_for(k)


def sweep_options(base, recipe, serving_explicit: bool, max_running, max_tokens, graph):
    """Sweep options with the recipe (limits, serving) and explicit limits over it.

    Raises:
        SpecError: ``--serving`` other than the recipe's mode (``frontier --engine R --serving disagg``
            with an aggregated recipe priced disaggregated pools with R's aggregated limits, silently;
            predict and simulate refuse the same mismatch: :func:`check_recipe_serving`).
    """
    from dataclasses import replace

    from jalapeno.analysis.deployed import recipe_options

    opt = base
    if recipe is not None and serving_explicit and base.serving != recipe.serving:
        mode = "disaggregated" if recipe.serving == "disagg" else "aggregated"
        raise SpecError(
            "--serving",
            f"recipe {recipe.name} serves {mode} ({recipe.serving}) and --serving {base.serving} was given",
            f"drop --serving (or give --serving {recipe.serving}), or drop --engine",
        )
    if recipe is not None:
        opt = recipe_options(recipe, base, f"engine: {recipe.label}")
        if serving_explicit:
            opt = replace(opt, serving=base.serving)
        if base.mtp is not None:
            opt = replace(opt, mtp=base.mtp)
    over = {
        k: v
        for k, v in (("max_running", max_running), ("max_tokens_per_step", max_tokens), ("cuda_graph_max_batch", graph))
        if v is not None
    }
    if graph is not None:  # the engine's captured sizes under the new ceiling (none without a recipe)
        sizes = recipe.graph_sizes(graph) if recipe is not None else None
        over["cuda_graph_batch_sizes"] = sizes
        over["cuda_graph_max_batch"] = sizes[-1] if sizes else graph
    return replace(opt, **over) if over else opt


def check_recipe_serving(recipe, disaggregated: bool) -> None:
    """A recipe's serving mode must be the deployment's: a disaggregated recipe's limits, budgets
    and MTP-by-load belong to prefill/decode pools.

    Raises:
        SpecError: a disaggregated recipe with an aggregated deployment, or the other way round.
    """
    if recipe is None or (recipe.serving == "disagg") == disaggregated:
        return
    if recipe.serving == "disagg":
        raise SpecError(
            "--engine",
            f"recipe {recipe.name} serves disaggregated and the deployment is aggregated",
            'give --prefill "..." and --decode "..." pools, or drop --engine',
        )
    raise SpecError(
        "--engine",
        f"recipe {recipe.name} serves aggregated and the deployment has prefill/decode pools",
        "drop --prefill/--decode (use --tp/--dp/--ep), or drop --engine",
    )


def engine_rules(recipe, stack: str | None) -> list[dict]:
    """The version rules of the profile ``stack`` (``NAME@VERSION``, as ``predict --engine`` pins it)
    that hold at its release: field, value, span, source and ``charged`` each (empty without a recipe or release).
    ``charged`` is False for a rule whose cost a shipped-off switch gates (cli/common.SWITCHED_RULE_FIELDS, and
    cli/common.FUSION_RULE_FIELDS where the profile's all-reduce + RMSNorm fusion is off); its ``span`` then names the
    switch."""
    from jalapeno.cli.common import FUSION_RULE_FIELDS, SWITCHED_RULE_FIELDS, uncharged_rule_fields

    if recipe is None or not stack:
        from_rules, off_fields = (), frozenset()
    else:
        from jalapeno.specs.stacks import get_stack, split_stack_name

        name, version, _ = split_stack_name(stack)  # 'trtllm@1.1.0+ar_rms' read '1.1.0+ar_rms' as the release
        base = get_stack(name)
        from_rules = [(base.name, r) for r in base.rules_at(version)]
        off_fields = uncharged_rule_fields(get_stack(stack))
    gates, out = {**SWITCHED_RULE_FIELDS, **FUSION_RULE_FIELDS}, []
    for n, r in from_rules:
        charged = r.field not in off_fields
        off = "" if charged else "NOT CHARGED: {}.{} is off; ".format(*gates[r.field])
        out.append(
            {"field": r.field, "value": r.value, "span": f"{off}{n} {r.span}", "source": r.source, "charged": charged}
        )
    return out


def check_dispatch_ranks(option: str, dp: int, dispatch: str) -> None:
    """Refuse an attention-DP dispatch other than ``balanced`` where it would be silently ignored: on a prefill pool
    (``random`` and ``refill`` are priced for a pool that decodes, cost/adp_rank.busiest_rank_decode and
    busiest_rank_prompts; a prefill pool's prompts are priced at the busiest rank of a balanced dispatch) and on a
    pool of one attention-DP rank (no rank to choose).

    Args:
        option: the command-line option the pool came from (``--prefill``, ``--decode``, ``--dp-dispatch``).

    Raises:
        SpecError: either case, naming the option's dp_dispatch and the fix.
    """
    from jalapeno.deploy.layout import DP_DISPATCH

    if dispatch == "balanced" or dispatch not in DP_DISPATCH:  # an unknown name: deploy/layout.validate_layout says so
        return
    field = option if option == "--dp-dispatch" else f"{option} dp_dispatch"
    if option == "--prefill":
        raise SpecError(
            field,
            f"{dispatch!r} on a prefill pool: dispatch is priced for a pool that decodes "
            "(random: the fullest rank's decodes; refill: prompts on the rank a finished request left; "
            "cost/adp_rank.py); a prefill pool's prompts are priced at the busiest rank "
            "of a balanced dispatch",
            'drop dp_dispatch= from --prefill (give it on --decode, e.g. --decode "dp=32,ep=32,dp_dispatch=random")',
        )
    if dp == 1:
        fix = (
            "give --dp above 1, or drop --dp-dispatch"
            if option == "--dp-dispatch"
            else f"give dp= above 1 (attention data parallelism) in {option}, or drop dp_dispatch="
        )
        raise SpecError(
            field,
            f"{dispatch!r} on a pool of one attention-DP rank: there is no rank to choose, so it would change nothing",
            fix,
        )
