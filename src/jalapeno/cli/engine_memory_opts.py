"""``--engine-memory`` (predict, step, simulate): the engine memory profile option, its checks and its breakdown.

A profile (deploy/engine_memory.py, data/engine_memory.toml) sizes the KV pool as the engine's start-up does;
:func:`check_recipe_memory` and :func:`check_stack_memory` refuse a profile of one engine beside a recipe or a
``--stack`` of another, and :func:`memory_breakdown_lines` prints each term of the pool
(deploy/engine_pool.engine_memory_breakdown). Split from cli/engine_opts.py (round 53, module budget).
"""

from __future__ import annotations

import typer

from jalapeno.errors import SpecError


def engine_memory_option(engine: bool = True):
    """``--engine-memory``; ``engine``: whether the command also takes ``--engine`` (``step --help``
    described a recipe default through an option step does not have)."""
    default = (
        "Default: with --engine, the profile validation sizes that recipe's runs by (SGLang recipes: "
        "sglang-0.5 at their fraction), else none; 'none' drops it."
        if engine
        else "Default: none."
    )
    return typer.Option(
        None,
        "--engine-memory",
        help="Engine memory profile (data/engine_memory.toml): vllm-0.11 (the KV pool is what the "
        "start-up profiling leaves: sampler, activations, non-torch memory; --memory-fraction "
        "is its gpu_memory_utilization) or sglang-0.5 (pool = free memory x "
        "--memory-fraction (mem_fraction_static) - weights; admission reserves outputs). " + default,
    )


def check_recipe_memory(recipe, profile) -> None:
    """Raises SpecError when an engine memory profile of one engine is given with a recipe of another
    (``--engine sglang-b200-dsr1-fp4 --engine-memory vllm-0.11`` sized SGLang's KV pool by vLLM's
    start-up profiling, silently). A recipe's ``engine`` names its engine family (data/engines.toml:
    sglang, sglang-rocm, dynamo-sglang, trtllm, ...), a profile's the engine it models."""
    if recipe is None or profile is None or profile.engine in recipe.engine.split("-"):
        return
    raise SpecError(
        "--engine-memory",
        f"{profile.name} is {profile.engine}'s memory profile and recipe {recipe.name} runs {recipe.engine}",
        "drop --engine-memory, or give the profile of the recipe's engine (sglang-0.5 for SGLang recipes)",
    )


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
    raise SpecError(
        "--engine-memory",
        f"{profile.name} is {profile.engine}'s memory profile and --stack "
        f"{stack.strip()} prices {'/'.join(engines)}'s fixed costs: one engine would size the KV pool, "
        "another run the steps",
        f"give the memory profile of the stack's engine, a --stack of {profile.engine}'s, or drop --engine-memory",
    )


def memory_breakdown_lines(b: dict) -> list[str]:
    """Lines showing each term of deploy/engine_pool.engine_memory_breakdown ``b`` (GiB)."""
    gib = 2.0**30
    total = "driver-reported" if b["device_total_sourced"] else "catalog usable HBM (no driver figure)"
    if "free_before_load" in b:  # SGLang: pool = F·m − weights
        free = "logged" if b["free_before_load_sourced"] else "device total less the assumed context"
        pool = (
            f"KV pool {b['kv_pool'] / gib:.2f} GiB = {b['max_total_tokens']:,} tokens"
            if b["kv_pool"] > 0
            else f"KV pool {b['kv_pool'] / gib:.2f} GiB: the engine does not start"
        )
        return [
            f"engine memory ({b['profile']}) per chip: {b['free_before_load'] / gib:.2f} GiB free before "
            f"loading ({free}; device {b['device_total'] / gib:.2f} GiB {total}) x {b['utilization']:.2f} = "
            f"{b['budget'] / gib:.2f} GiB for weights + KV (the rest: activations, CUDA graphs)",
            f"  weights {b['weights'] / gib:.2f} GiB",
            f"  {pool}",
        ]
    pool = (
        f"KV pool {b['kv_pool'] / gib:.2f} GiB -> longest request admitted {b['max_model_len']:,} tokens"
        if b["kv_pool"] > 0
        else f"KV pool {b['kv_pool'] / gib:.2f} GiB: the engine does not start"
    )
    head = (
        f"engine memory ({b['profile']}) per chip: {b['device_total'] / gib:.2f} GiB {total} x "
        f"{b['utilization']:.2f} = {b['budget'] / gib:.2f} GiB budget ({b['reserve'] / gib:.2f} GiB outside it: "
        "CUDA context, CUDA graphs)"
    )
    terms = (
        f"  weights {b['weights'] / gib:.2f} GiB; sampler peak {b['sampler'] / gib:.2f} GiB "
        f"({b['sampler_rows']} rows); forward peak {b['forward'] / gib:.2f} GiB "
        f"({b['max_num_batched_tokens']} tokens); torch peak {b['torch_peak'] / gib:.2f} GiB; "
        f"non-torch {b['non_torch'] / gib:.2f} GiB"
    )
    return [head, terms, f"  {pool}"]
