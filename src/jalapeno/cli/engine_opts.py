"""Engine recipe and engine-limit options shared by predict, frontier, compare and simulate.

Precedence: an explicit CLI option beats the recipe (``--engine``), which beats jalapeno's
defaults (deploy/deployment.py). Each recipe field an explicit option overrides (``-p``, ``--stack``,
``--kv-dtype``, ``--max-running``, ``--max-tokens-per-step``, ``--cuda-graph-max-batch``,
``--memory-fraction``) is named in one note on stderr (:func:`recipe_overrides`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import typer

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
    return typer.Option(None, "--max-tokens-per-step",
                        help="Max tokens per step: decode rows + prefill (TRT-LLM max_num_tokens).")


def graph_option():
    """``--cuda-graph-max-batch``: the largest decode batch per attention rank run as a CUDA graph (count)."""
    return typer.Option(None, "--cuda-graph-max-batch",
                        help="Largest decode batch per attention rank run as a CUDA graph; above it, eager.")


def engine_memory_option(engine: bool = True):
    """``--engine-memory``; ``engine``: whether the command also takes ``--engine`` (``step --help``
    described a recipe default through an option step does not have)."""
    default = ("Default: with --engine, the profile validation sizes that recipe's runs by (SGLang recipes: "
               "sglang-0.5 at their fraction), else none; 'none' drops it." if engine else "Default: none.")
    return typer.Option(None, "--engine-memory",
                        help="Engine memory profile (data/engine_memory.toml): vllm-0.11 (the KV pool is what the "
                             "start-up profiling leaves: sampler, activations, non-torch memory; --memory-fraction "
                             "is its gpu_memory_utilization) or sglang-0.5 (pool = free memory x "
                             "--memory-fraction (mem_fraction_static) - weights; admission reserves outputs). "
                             + default)


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


def check_recipe_memory(recipe, profile) -> None:
    """Raises SpecError when an engine memory profile of one engine is given with a recipe of another
    (``--engine sglang-b200-dsr1-fp4 --engine-memory vllm-0.11`` sized SGLang's KV pool by vLLM's
    start-up profiling, silently). A recipe's ``engine`` names its engine family (data/engines.toml:
    sglang, sglang-rocm, dynamo-sglang, trtllm, ...), a profile's the engine it models."""
    if recipe is None or profile is None or profile.engine in recipe.engine.split("-"):
        return
    raise SpecError("--engine-memory", f"{profile.name} is {profile.engine}'s memory profile and recipe {recipe.name} "
                    f"runs {recipe.engine}", "drop --engine-memory, or give the profile of the recipe's engine "
                    "(sglang-0.5 for SGLang recipes)")


def check_stack_memory(stack: str | None, profile) -> None:
    """Raises SpecError when an engine memory profile of one engine is given with a ``--stack`` of another
    (``--stack trtllm --engine-memory vllm-0.11`` priced TensorRT-LLM's fixed costs over a KV pool sized by vLLM's
    start-up profiling, silently: break51), as :func:`check_recipe_memory` does for a recipe. A profile that serves
    no named engine (default, kernel, compiled, jalapeno: no ``engines`` in data/stacks.toml) takes any memory
    profile (a what-if). ``stack``: the option as given (``NAME[@VERSION][+ar_rms]``); None: not given."""
    if stack is None or profile is None:
        return
    from jalapeno.specs.stacks import get_stack

    engines = get_stack(stack).engines
    if not engines or any(profile.engine in e.split("-") for e in engines):
        return
    raise SpecError("--engine-memory", f"{profile.name} is {profile.engine}'s memory profile and --stack "
                    f"{stack.strip()} prices {'/'.join(engines)}'s fixed costs: one engine would size the KV pool, "
                    "another run the steps", f"give the memory profile of the stack's engine, a --stack of "
                    f"{profile.engine}'s, or drop --engine-memory")


def memory_breakdown_lines(b: dict) -> list[str]:
    """Lines showing each term of deploy/engine_pool.engine_memory_breakdown ``b`` (GiB)."""
    gib = 2.0**30
    total = "driver-reported" if b["device_total_sourced"] else "catalog usable HBM (no driver figure)"
    if "free_before_load" in b:  # SGLang: pool = F·m − weights
        free = "logged" if b["free_before_load_sourced"] else "device total less the assumed context"
        pool = (f"KV pool {b['kv_pool'] / gib:.2f} GiB = {b['max_total_tokens']:,} tokens" if b["kv_pool"] > 0
                else f"KV pool {b['kv_pool'] / gib:.2f} GiB: the engine does not start")
        return [f"engine memory ({b['profile']}) per chip: {b['free_before_load'] / gib:.2f} GiB free before "
                f"loading ({free}; device {b['device_total'] / gib:.2f} GiB {total}) x {b['utilization']:.2f} = "
                f"{b['budget'] / gib:.2f} GiB for weights + KV (the rest: activations, CUDA graphs)",
                f"  weights {b['weights'] / gib:.2f} GiB", f"  {pool}"]
    pool = (f"KV pool {b['kv_pool'] / gib:.2f} GiB -> longest request admitted {b['max_model_len']:,} tokens"
            if b["kv_pool"] > 0 else f"KV pool {b['kv_pool'] / gib:.2f} GiB: the engine does not start")
    head = (f"engine memory ({b['profile']}) per chip: {b['device_total'] / gib:.2f} GiB {total} x "
            f"{b['utilization']:.2f} = {b['budget'] / gib:.2f} GiB budget ({b['reserve'] / gib:.2f} GiB outside it: "
            "CUDA context, CUDA graphs)")
    terms = (f"  weights {b['weights'] / gib:.2f} GiB; sampler peak {b['sampler'] / gib:.2f} GiB "
             f"({b['sampler_rows']} rows); forward peak {b['forward'] / gib:.2f} GiB "
             f"({b['max_num_batched_tokens']} tokens); torch peak {b['torch_peak'] / gib:.2f} GiB; "
             f"non-torch {b['non_torch'] / gib:.2f} GiB")
    return [head, terms, f"  {pool}"]


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


def recipe_run(recipe, system: str | None, stack: str | None, kv_dtype: str | None,
               engine_memory: str | None = None, memory_fraction: float | None = None) -> RecipeRun:
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
    return RecipeRun(stack, kv_dtype or (recipe.kv_dtype if recipe else None), profile,
                     fraction if memory_fraction is None else memory_fraction)


def limit_options(max_running, max_tokens_per_step, cuda_graph_max_batch, memory_fraction) -> dict:
    """The engine-limit options by option name, for :func:`recipe_overrides` (None: not given)."""
    return {"--max-running": max_running, "--max-tokens-per-step": max_tokens_per_step,
            "--cuda-graph-max-batch": cuda_graph_max_batch, "--memory-fraction": memory_fraction}


def recipe_overrides(recipe, systems: list[str], precision: str | None, stack: str | None,
                     kv_dtype: str | None, limits: dict[str, float | None] | None = None) -> list[str]:
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
            out.append(f"--stack {stack} overrides recipe {recipe.name}'s software stack {', '.join(own)} "
                       "(the recipe's engine)")
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


def load_recipe(engine: str | None, workload: str | None, model: str | None = None,
                systems: list[str] | None = None, isl: int | None = None, osl: int | None = None):
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
        note_lines([f"recipe {recipe.name} ships off (deploy/engines.RECIPES_OFF: validate and --as-deployed do not "
                    "use it; deploy/engines.py says why); --engine runs it as asked"])
    if model is not None:
        from jalapeno.specs.catalog import load_model

        spec = load_model(model)
        name = spec.name
        # a config.json of the recipe's model under another name (DeepSeek-R1-0528/config.json, as downloaded) is the
        # same model: it was refused ('written for deepseek-r1, not DeepSeek-R1-0528'); the shapes decide (break49)
        if name != recipe.model and dataclasses.replace(spec, name=recipe.model) != load_model(recipe.model):
            differs = f" (its config.json's shapes differ from {recipe.model}'s)" if model.lower().endswith(".json") else ""
            raise SpecError("--engine", f"recipe {recipe.name} is written for {recipe.model}, not {name}{differs}",
                            f"give -m {recipe.model} (the recipe's model; -m defaults to deepseek-r1), use a recipe "
                            f"for {name}, or drop --engine")
    if systems:
        from jalapeno.specs.catalog import load_system

        other = [n for n in (load_system(x).name for x in systems) if n not in recipe.systems]
        if other:
            raise SpecError("--engine", f"recipe {recipe.name} is written for {', '.join(recipe.systems)}, "
                            f"not {', '.join(other)}", "use a recipe for that system, or drop --engine")
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


def limit_kwargs(recipe, concurrency: float | None, max_running: int | None, max_tokens: int | None,
                 graph: int | None) -> dict:
    """Deployment keyword arguments: the recipe's limits, then the explicit options over them.

    Raises:
        SpecError: the recipe sizes its running cap to the benchmark's concurrency
            (``max_running_is_concurrency``) and neither a concurrency nor ``--max-running`` is given
            (an open-loop rate ran uncapped, silently).
    """
    if recipe is not None and recipe.max_running_is_concurrency and concurrency is None and max_running is None:
        raise SpecError("--engine", f"{recipe.name} sizes its running requests to the benchmark's concurrency "
                        "(max_batch_size = CONC), which an open-loop rate does not give",
                        "pass --max-running N with the rate, or use --concurrency")
    kw = recipe.deployment_kwargs(concurrency) if recipe else {}
    for key, val in (("max_running", max_running), ("max_tokens_per_step", max_tokens),
                     ("cuda_graph_max_batch", graph)):
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
        raise SpecError("--engine", f"{recipe.name} sets the MTP draft length by load, which an open-loop "
                        "rate does not give", "pass --mtp K --mtp-acceptance A, or use --concurrency")
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
        raise SpecError("--serving", f"recipe {recipe.name} serves {mode} ({recipe.serving}) and --serving "
                        f"{base.serving} was given", f"drop --serving (or give --serving {recipe.serving}), or drop "
                        "--engine")
    if recipe is not None:
        opt = recipe_options(recipe, base, f"engine: {recipe.label}")
        if serving_explicit:
            opt = replace(opt, serving=base.serving)
        if base.mtp is not None:
            opt = replace(opt, mtp=base.mtp)
    over = {k: v for k, v in (("max_running", max_running), ("max_tokens_per_step", max_tokens),
                              ("cuda_graph_max_batch", graph)) if v is not None}
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
        raise SpecError("--engine", f"recipe {recipe.name} serves disaggregated and the deployment is aggregated",
                        'give --prefill "..." and --decode "..." pools, or drop --engine')
    raise SpecError("--engine", f"recipe {recipe.name} serves aggregated and the deployment has prefill/decode pools",
                    "drop --prefill/--decode (use --tp/--dp/--ep), or drop --engine")


AS_DEPLOYED_HELP = ("Systems with an engine recipe run as deployed (its precision, MTP, serving, limits); the others "
                    "as stated.")


def refuse_with_as_deployed(given: dict[str, object]) -> None:
    """``--as-deployed`` lets each system's recipe set these options: refuse the ones given (not None).

    Raises:
        SpecError: field ``--as-deployed``, naming the options to drop.
    """
    names = [opt for opt, v in given.items() if v is not None]
    if names:
        raise SpecError("--as-deployed", f"{', '.join(names)} would be overridden by each system's engine recipe",
                        f"drop {', '.join(names)} (recipes set them), or drop --as-deployed to state them")


def deployed_recipes(pricers, model: str, workload: str | None, isl: int | None, osl: int | None,
                     precisions: dict[str, list[str]] | None) -> dict:
    """System name → the engine recipe it is deployed with for this model and workload (``--as-deployed``;
    systems without one are left out). Where ``precisions`` is given, each such system's entry becomes
    the recipe's precision (in place), as the recipe pins it."""
    from jalapeno.deploy.engines import deployed_recipe
    from jalapeno.specs.catalog import is_catalog_system

    out = {}
    for p in pricers:  # a user file named like a catalog system is not deployed with its recipe
        r = deployed_recipe(p.system.name, model) if is_catalog_system(p.system) else None
        if r is not None:
            out[p.system.name] = r.for_workload(_preset_name(workload, isl, osl), p.system.name)
            if precisions is not None:
                precisions[p.system.name] = [r.precision]
    return out


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
        out.append({"field": r.field, "value": r.value, "span": f"{off}{n} {r.span}", "source": r.source,
                    "charged": charged})
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
        raise SpecError(field, f"{dispatch!r} on a prefill pool: dispatch is priced for a pool that decodes "
                        "(random: the fullest rank's decodes; refill: prompts on the rank a finished request left; "
                        "cost/adp_rank.py); a prefill pool's prompts are priced at the busiest rank "
                        "of a balanced dispatch", "drop dp_dispatch= from --prefill "
                        '(give it on --decode, e.g. --decode "dp=32,ep=32,dp_dispatch=random")')
    if dp == 1:
        fix = "give --dp above 1, or drop --dp-dispatch" if option == "--dp-dispatch" else \
            f"give dp= above 1 (attention data parallelism) in {option}, or drop dp_dispatch="
        raise SpecError(field, f"{dispatch!r} on a pool of one attention-DP rank: there is no rank to choose, so it "
                        "would change nothing", fix)


def mtp_unlike(recipes: dict, stated: list[str]) -> str:
    """The sentence after compare --as-deployed's recipe line where a recipe runs MTP and a system without a
    recipe runs as stated, without it: Jalapeño's max 138.9 tok/s/user read 0.43x GB300's as-deployed 321.4
    (MTP up to 3 drafts); with --mtp 3 --mtp-acceptance 0.75 it reads 326.1. '' where nothing differs.

    The suggested --mtp-acceptance is the one the recipes are priced at (Recipe.mtp_for: the engine profile's
    fitted acceptance where data/stack_fits.toml has one, 0.8 for dynamo-trtllm on DeepSeek-R1; the recipe's assumed
    one otherwise): it read the recipe's assumed 0.75 beside deployments labelled MTP3@0.8 (newuser49).

    >>> from types import SimpleNamespace as N
    >>> r = N(mtp_draft_by_seqs_per_rank=((71.0, 3), (float("inf"), 1)), mtp_for=lambda k: N(acceptance=0.8))
    >>> mtp_unlike({"gb300-nvl72": r}, ["jalapeno"])[:81]
    '. The recipes of gb300-nvl72 run MTP (speculative decoding, up to 3 draft tokens)'
    >>> mtp_unlike({"gb300-nvl72": r}, ["jalapeno"])[-48:]
    '--mtp 3 --mtp-acceptance 0.8` prices it with MTP'
    >>> mtp_unlike({"gb300-nvl72": r}, []), mtp_unlike({"b200": N(mtp_draft_by_seqs_per_rank=None)}, ["jalapeno"])
    ('', '')
    """
    mtp = {n: r for n, r in recipes.items() if getattr(r, "mtp_draft_by_seqs_per_rank", None)}
    if not mtp or not stated:
        return ""
    k = max(d for r in mtp.values() for _, d in r.mtp_draft_by_seqs_per_rank)
    acc = [r.mtp_for(k).acceptance for r in mtp.values() if k in (d for _, d in r.mtp_draft_by_seqs_per_rank)]
    a = f"{min(acc):g}" if acc else "A"
    return (f". The recipes of {', '.join(mtp)} run MTP (speculative decoding, up to {k} draft tokens); "
            f"{', '.join(stated)} {'runs' if len(stated) == 1 else 'run'} without it, so per-user speeds and the "
            f"ratios at them are not like for like: `jalapeno compare -s {','.join(stated)} --mtp {k} "
            f"--mtp-acceptance {a}` prices {'it' if len(stated) == 1 else 'them'} with MTP")
