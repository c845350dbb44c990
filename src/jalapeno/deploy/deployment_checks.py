"""The checks of a deployment's engine settings (split from deploy/deployment.py, round 47, module budget; that module
re-exports every public name): the engine's memory fraction, whole-number limits, whose limits an engine counts
(``budget_per``), TensorRT-LLM's batch waiting, how an aggregated engine schedules prefill beside decode
(``prefill_steps``) and the recipe label; and (round 53) a Deployment's own checks as it is made
(:func:`check_deployment`, :func:`check_rank_budget`). Each refusal is one SpecError naming the field and the fix.
"""

from __future__ import annotations

from jalapeno.deploy.graph_capture import check_graph_sizes
from jalapeno.deploy.overlap_mode import check_overlap
from jalapeno.errors import SpecError, check_bool, choice_hint


#: Help text of the ``--memory-fraction`` CLI option.
MEMORY_FRACTION_HELP = (
    "Engine's share of usable HBM for weights + KV + activations (vLLM "
    "gpu_memory_utilization, SGLang mem_fraction_static); default: the efficiency "
    "set's 1 - memory_reserve_fraction = 0.96 of usable HBM."
)


def check_memory_fraction(f):
    """Return ``f`` if it is None or in (0, 1].

    Raises:
        SpecError: anything else (field ``--memory-fraction``, the option that sets it).
    """
    if f is not None and (isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 < f <= 1):
        raise SpecError(
            "--memory-fraction",
            f"must be in (0, 1], got {f!r}",
            "give the engine's share of HBM, e.g. 0.9 (vLLM gpu_memory_utilization)",
        )
    return f


def positive_int_or_none(value, field: str, option: str) -> None:
    """Refuse a limit that is neither None (unset) nor a whole number >= 1 (a bool is not one).

    Raises:
        SpecError: naming ``field`` and ``option``, the setting that sets it.
    """
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SpecError(
            field, f"must be a positive integer, got {value!r}", f"give {option} N with N >= 1 (or leave it unset)"
        )


#: Whose token and batch limits an engine counts (``Deployment.budget_per``): ``instance`` — the
#: limit is the whole instance's, divided over its attention-DP ranks (SGLang: with
#: ``--enable-dp-attention``, ``server_args.py`` sets ``chunked_prefill_size //= dp_size``, and the
#: TP worker divides ``max_running_requests`` by dp_size; jalapeno's default); ``rank`` — every
#: attention-DP rank runs its own scheduler under the limit (TensorRT-LLM: each rank's PyExecutor
#: schedules up to ``max_batch_size`` requests and ``max_num_tokens`` tokens,
#: ``tensorrt_llm/_torch/pyexecutor/py_executor.py``, ``_balance_adp_requests`` spreading context
#: requests over the ranks; the InferenceX GB200 recipe ``ctx11_gen1_dep16_batch256`` serves 4301
#: users on 16 DP ranks with ``max_batch_size: 256``, which only a per-rank cap allows).
BUDGET_PER = ("instance", "rank")


def _one_of(value, allowed: tuple, field: str, what: str, fix: str) -> None:
    """Refuse ``value`` unless it is in ``allowed``: one SpecError naming ``field`` and the fix."""
    if value not in allowed:
        raise SpecError(field, f"unknown {what} {value!r}{choice_hint(value, allowed)}", fix)


def check_batch_wait(timeout_iters, ratio, where: str = "") -> None:
    """Check TensorRT-LLM's batch-waiting settings (Deployment.batch_wait_timeout_iters and
    batch_wait_max_tokens_ratio; ``where`` prefixes the field names).

    Raises:
        SpecError: a timeout that is not a whole number >= 0, or a ratio outside [0, 1] (a share of
            max_num_tokens), naming the field and the fix.
    """
    if isinstance(timeout_iters, bool) or not isinstance(timeout_iters, int) or timeout_iters < 0:
        raise SpecError(
            f"{where}batch_wait_timeout_iters",
            f"must be a whole number of steps >= 0, got {timeout_iters!r}",
            "give TensorRT-LLM's batch_wait_timeout_iters (e.g. 40; 0 = off)",
        )
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0.0 <= float(ratio) <= 1.0:
        raise SpecError(
            f"{where}batch_wait_max_tokens_ratio",
            f"must be a share of max_num_tokens in [0, 1], got {ratio!r}",
            "give TensorRT-LLM's batch_wait_max_tokens_ratio (e.g. 0.8; 0 = off)",
        )


def check_budget_per(value: str, field: str = "budget_per") -> None:
    """Refuse anything but :data:`BUDGET_PER`.

    Raises:
        SpecError: naming ``field`` and the two accepted values.
    """
    _one_of(
        value,
        BUDGET_PER,
        field,
        "budget scope",
        "use instance (SGLang: limits divided over attention-DP ranks) or rank "
        "(TensorRT-LLM: limits per attention-DP rank)",
    )


#: How an aggregated engine schedules prefill beside decode: ``mixed`` (a step carries the decode
#: batch and the prefill chunks together: vLLM V1 chunked prefill, TensorRT-LLM in-flight batching)
#: or ``separate`` (prefill-first: a step with new prompts carries only them and the decoding
#: sequences wait it out; ROCm/ATOM's Scheduler.schedule @7934d5e8f returns a prefill-only batch
#: whenever a prompt is admitted, "TODO for prefill/decode mixed batch").
PREFILL_STEPS = ("mixed", "separate")


def check_prefill_steps(value: str, field: str = "prefill_steps") -> None:
    """Refuse anything but :data:`PREFILL_STEPS`.

    Raises:
        SpecError: naming ``field`` and the two accepted values.
    """
    _one_of(
        value,
        PREFILL_STEPS,
        field,
        "prefill scheduling",
        "use mixed (prefill chunks ride in the decode step) or separate (prefill-first: "
        "prefill-only steps, decode waits)",
    )


#: How the labels in ``Deployment.recipe`` begin: those jalapeno's recipe paths write (cli/engine_opts
#: ``engine: <recipe>``, analysis/comparison ``as deployed: <recipe>``, deploy/identified ``identified: <name> (<recipe>)``).
RECIPE_LABELS = ("engine: ", "as deployed: ", "identified: ")


def check_recipe_label(recipe) -> None:
    """Refuse a ``Deployment.recipe`` that is not None or a label starting with one of :data:`RECIPE_LABELS`:
    ``recipe="bogus"`` (or a recipe's bare name) was accepted and none of a recipe's settings applied.

    Raises:
        SpecError: naming ``recipe``, the label forms and the known recipe names (deploy/engines.recipes).
    """
    if recipe is None or (isinstance(recipe, str) and recipe.startswith(RECIPE_LABELS)):
        return
    from jalapeno.deploy.engines import recipes

    names = sorted(recipes())
    raise SpecError(
        "Deployment: recipe",
        f"{recipe!r:.60} is not a recipe label{choice_hint(recipe, names)}: it only "
        f"labels a deployment, as {' or '.join(repr(p + '<recipe>') for p in RECIPE_LABELS)}, and applies "
        "none of the recipe's settings",
        "leave recipe=None, or apply one with Deployment(..., "
        "**deploy.engines.get_recipe(name).deployment_kwargs(), recipe='engine: ' + name); known recipes: "
        + ", ".join(names),
    )


def check_deployment(d) -> None:
    """Check a Deployment ``d`` whose parts are of their types as it is made (``Deployment.__post_init__``; split
    from deploy/deployment.py, round 53): the engine memory fraction, limits and overlap mode, the per-rank prefill
    budget (:func:`check_rank_budget`), and that context parallelism is on prefill workers only.

    Raises:
        SpecError: memory_fraction outside (0, 1]; a limit that is not a positive integer; an
            unknown overlap; cp > 1 on an aggregated instance or a decode pool (decoding with
            the KV cache split over CP ranks — vLLM's DCP, TRT-LLM's Helix — is not modelled).
    """
    check_memory_fraction(d.memory_fraction)
    check_overlap(d.overlap)
    check_budget_per(d.budget_per)
    check_prefill_steps(d.prefill_steps)
    positive_int_or_none(d.token_budget, "token_budget", "--token-budget")
    positive_int_or_none(d.max_running, "max_running", "--max-running")
    positive_int_or_none(d.max_tokens_per_step, "max_tokens_per_step", "--max-tokens-per-step")
    positive_int_or_none(d.cuda_graph_max_batch, "cuda_graph_max_batch", "--cuda-graph-max-batch")
    check_graph_sizes(d)
    positive_int_or_none(d.recv_interval, "recv_interval", "recv_interval (engine recipe)")
    positive_int_or_none(
        d.adp_balance_timeout_iters,
        "adp_balance_timeout_iters",
        "adp_balance_timeout_iters (engine recipe: attention_dp_config timeout_iters)",
    )
    check_batch_wait(d.batch_wait_timeout_iters, d.batch_wait_max_tokens_ratio)
    check_bool("eager_prompt_alone", d.eager_prompt_alone, "pass eager_prompt_alone=True or False")  # 'yes' read as on
    check_recipe_label(d.recipe)
    if not 0.0 <= d.eager_prompt_call_s < 1e-3:
        raise SpecError(
            "eager_prompt_call_s",
            f"{d.eager_prompt_call_s!r} is not a host time per call",
            "give seconds per call, 0 <= x < 1e-3 (2.4e-5 is 24 µs; 0: prompt steps graphed)",
        )
    check_rank_budget(d)
    if d.decode.layout.cp > 1:
        where = "an aggregated instance" if d.prefill is None else "the decode pool"
        raise SpecError(
            "cp",
            f"context parallelism (CP{d.decode.layout.cp}) on {where}: CP is modelled "
            "for prefill workers only (decode context parallelism is not modelled)",
            'put cp= in the prefill pool only, e.g. --prefill "tp=8,cp=4,workers=1"',
        )


def check_rank_budget(d) -> None:
    """Each attention-DP rank of the pool that prefills (the prefill pool, else the aggregated instance)
    must get at least one prompt token a step: a prompt runs on one rank, chunked at the rank's share
    of the instance budget (``Deployment.prompt_budget``; SGLang ``chunked_prefill_size // dp_size``, which is
    0 below one token a rank: no prompt could start).

    Raises:
        SpecError: ``budget_per`` = ``instance`` and the prefill budget (``token_budget`` within
            ``max_tokens_per_step``) below that pool's attention-DP degree.
    """
    pool = d.prefill or d.decode
    if d.prefill_budget(pool.layout) < pool.layout.dp:
        field = "max_tokens_per_step" if d.prefill_chunk_budget < d.token_budget else "token_budget"
        raise SpecError(
            field,
            f"{d.prefill_chunk_budget} tokens a step split over the {pool.layout.dp} "
            f"attention-DP ranks (dp={pool.layout.dp}) leaves a rank under one prompt token a step",
            f"give at least {pool.layout.dp} tokens a step (engines budget thousands, e.g. 8192), or a smaller dp",
        )
