"""Engine recipes: how measured systems are deployed, from ``data/engines.toml`` (one home).

A recipe is one engine + version serving one model on a family of systems as a public launch script does (InferenceX
recipes at a pinned commit): its precision, aggregated or disaggregated serving, engine limits (max running requests,
tokens per step, CUDA-graph batch ceiling, token budget, memory fraction, scheduler poll interval), MTP draft length by
load and the assumed acceptance, two-batch overlap and KV format. Every value is quoted from the recipe's ``source`` or
named in its ``assumed`` table with the reason (docs/model.md §8.6). Limits the recipe sizes to the benchmark's
concurrency (``sized_to_load``) are not caps of the recipe: each published entry (``[[identified]]``) sets its own
decode ``max_batch_size``, which does bind (the Dynamo entries run concurrencies above their decode slots).

``overlap`` is applied (a recipe's sweeps run with it, not ``auto``). ``memory_fraction`` and ``kv_dtype`` are applied
to the measured runs a recipe describes (:func:`launch_limits`: SGLang's fraction with the SGLang memory profile of
deploy/engine_memory.py, whose pool is a share of the free memory the engine measures; the KV dtype on the precision)
and ``kv_dtype`` to the published entries of the recipe (deploy/identified.IdentifiedConfig.deployment);
elsewhere they are recorded: an engine's memory fraction is not a share of the catalog's usable HBM that a profile-free
``Deployment.memory_fraction`` divides; pass ``--memory-fraction`` to set it. With an engine memory profile of the
recipe's own engine (``predict --engine R --engine-memory sglang-0.5``) the recipe's fraction is applied unless
``--memory-fraction`` is given; a profile of another engine is refused (cli/engine_memory_opts.check_recipe_memory).

This module loads the file and looks recipes up; the record is deploy/recipe.py, the published entries
deploy/identified.py, the released checkpoints deploy/checkpoints.py.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

from jalapeno.deploy.deployment import MTP, Pool
from jalapeno.deploy.identified import IdentifiedConfig, _identified
from jalapeno.deploy.layout import Layout  # noqa: F401 (the doctests of launch_mtp)
from jalapeno.deploy.recipe import Recipe, _recipe, workload_key
from jalapeno.errors import SpecError, choice_hint

__all__ = ["IdentifiedConfig", "RECIPES_OFF", "Recipe", "workload_key"]

#: Recipes kept in data/engines.toml with their sources but matched to no measured run by :func:`launch_recipe`
#: (shipped off; ``--engine NAME`` still runs them). ``atom-mi355x-gptoss-fp4`` (issue 18 round 42, mi355x42): ATOM
#: 0.1.1's FP8 KV cache and prefill-only steps, both read at the rows' snapshot, take held-out InferenceX MI355X
#: interactivity from 10.9 / 25.3 / +2.8% to 14.7 / 27.6 / +4.0% (median / p90 / bias; row 49 -11.3 -> -18.9%, row 42
#: -4.9 -> -2.6%): with them the gpt-oss TP1 decode step is priced ~3 ms above what row 49 allows
#: (docs/gap_large_batch_decode.md, round 42), so they wait for that step's price.
RECIPES_OFF = frozenset({"atom-mi355x-gptoss-fp4"})


def _checkpoint(entry: list, where: str) -> tuple[str, str, str | None]:
    """One ``[checkpoints]`` entry: ``[preset, source]``, or ``[preset, source, substitutes]`` for a
    checkpoint released for chips that cannot run the ``substitutes`` preset (AMD's MXFP4 DeepSeek
    for the NVFP4 one: ``Supported Hardware: AMD MI350/MI355``)."""
    if len(entry) not in (2, 3):
        raise SpecError(
            where,
            f"entry {entry!r} has {len(entry)} fields",
            "write [preset, source] or [preset, source, preset it substitutes for]",
        )
    return entry[0], entry[1], entry[2] if len(entry) == 3 else None


@lru_cache(maxsize=1)
def _data() -> tuple[dict[str, Recipe], MappingProxyType, tuple[IdentifiedConfig, ...]]:
    raw = tomllib.loads((resources.files("jalapeno") / "data" / "engines.toml").read_text(encoding="utf-8"))
    recipes = {}
    for i, r in enumerate(raw.get("recipe", [])):
        rec = _recipe(r, i)
        if rec.name in recipes:
            raise SpecError("data/engines.toml", f"recipe {rec.name!r} given twice", "name each recipe once")
        recipes[rec.name] = rec
    ck = MappingProxyType(
        {
            m: tuple(_checkpoint(e, f"data/engines.toml: checkpoints.{m}") for e in v)
            for m, v in raw.get("checkpoints", {}).items()
        }
    )
    ident = tuple(_identified(r, i, recipes) for i, r in enumerate(raw.get("identified", [])))
    return recipes, ck, ident


def identified_config(
    system: str,
    model: str,
    framework: str,
    precision: str,
    isl: int,
    osl: int,
    concurrency: float | None,
    mtp: bool | None = None,
) -> IdentifiedConfig | None:
    """The published recipe entry a measured point is identified with, or None.

    A point matches an ``[[identified]]`` entry when every key (system, model, framework,
    precision, ISL, OSL) is equal and its concurrency is in the entry's list; ``mtp`` (the point
    says it ran with MTP: True, without: False, unknown: None) keeps the entries that agree. The
    match identifies the deployment only when exactly one entry remains: a concurrency that
    appears in exactly one entry of the benchmark's search space (docs/model.md §8.6); two
    entries (e.g. an MTP and a non-MTP one at the same concurrency, the point silent on MTP) give
    None.
    """
    hits = identified_candidates(system, model, framework, precision, isl, osl, concurrency, mtp)
    return hits[0] if len(hits) == 1 else None


def identified_candidates(
    system: str,
    model: str,
    framework: str,
    precision: str,
    isl: int,
    osl: int,
    concurrency: float | None,
    mtp: bool | None = None,
) -> list[IdentifiedConfig]:
    """Every ``[[identified]]`` entry that ran this point's system, model, framework, precision,
    ISL/OSL and concurrency (and agrees with its MTP use when ``mtp`` is given), in file order."""
    if concurrency is None:
        return []
    key = (system, model, framework, precision, isl, osl)
    return [
        c
        for c in _data()[2]
        if (c.system, c.model, c.framework, c.precision, c.isl, c.osl) == key
        and round(concurrency) in c.concurrency
        and (mtp is None or (c.mtp_draft > 0) == mtp)
    ]


def recipes() -> dict[str, Recipe]:
    """Every recipe by name."""
    return dict(_data()[0])


def get_recipe(name: str) -> Recipe:
    """The recipe called ``name``.

    Raises:
        SpecError: unknown name (the message lists the recipes).
    """
    try:
        return _data()[0][name]
    except KeyError:
        raise SpecError(
            "--engine",
            f"unknown engine recipe {name!r}{choice_hint(name, _data()[0])}",  # as --system's
            f"use one of {', '.join(_data()[0])} (data/engines.toml)",
        ) from None


def deployed_recipe(system: str, model: str) -> Recipe | None:
    """The recipe a measured system is deployed with for ``model`` (``default_for``), or None."""
    for r in _data()[0].values():
        if r.model == model and system in r.default_for:
            return r
    return None


def launch_recipe(
    system: str,
    model: str,
    framework: str,
    precision: str,
    serving: str = "agg",
    tp: int | None = None,
    mtp: bool | None = None,
) -> Recipe | None:
    """The recipe whose launch script ran a measured point, or None (no recipe, or more than one).

    A recipe matches when it lists ``system`` and serves ``model`` at ``precision`` in ``serving``
    mode with the point's engine: ``framework`` (InferenceX ``framework``) equals the recipe's
    engine, a ``-rocm`` engine serving the same framework on MI systems; a recipe written for one
    tensor-parallel size (``tp``) matches only a point of that size. Of an MTP and a plain recipe that
    match alike (two launch scripts), ``mtp`` (whether the point runs MTP) picks the one that does.
    A recipe named in :data:`RECIPES_OFF` matches nothing.

    >>> launch_recipe("b200", "deepseek-r1", "sglang", "fp8", tp=8).recv_interval_at(64)
    30
    >>> launch_recipe("b200", "deepseek-r1", "sglang", "fp8", tp=4).token_budget
    8192
    >>> [launch_recipe("mi355x", "deepseek-r1", "sglang", "quark-mxfp4", mtp=m).name for m in (False, True)]
    ['sglang-mi355x-dsr1-fp4', 'sglang-mi355x-dsr1-fp4-mtp']
    """
    fw = framework.strip().split(" ")[0].lower()
    hits = [
        r
        for r in _data()[0].values()
        if r.name not in RECIPES_OFF
        and system in r.systems
        and r.model == model
        and r.precision == precision
        and r.serving == serving
        and r.engine.removesuffix("-rocm") == fw
        and (r.tp is None or tp is None or r.tp == tp)
    ]
    if len(hits) > 1 and mtp is not None:
        hits = [r for r in hits if bool(r.draft_lengths) == mtp]
    return hits[0] if len(hits) == 1 else None


def launch_limits(
    system: str,
    model: str,
    framework: str,
    precision: str,
    tp: int,
    isl: int,
    osl: int,
    concurrency: float,
    serving: str = "agg",
    mtp: bool | None = None,
) -> tuple[dict, str]:
    """Deployment keywords of the recipe whose launch script ran a measured point (its limits and
    scheduler poll interval at this load, :func:`launch_recipe`; ``serving`` "agg" or "disagg", ``tp``
    the decode pool's; ``mtp``: the point runs MTP) and a note naming it; ``({}, "")`` when no recipe
    describes the run. An SGLang recipe with a memory fraction also gives its memory profile at that
    fraction (engine_memory.recipe_memory), a recipe with a KV dtype ``kv_dtype`` (:func:`with_launch_kv`).

    >>> kw, note = launch_limits("b200", "deepseek-r1", "sglang", "fp8", 8, 1024, 1024, 32)
    >>> kw["recv_interval"], kw["token_budget"]
    (30, 32768)
    >>> kw, _ = launch_limits("mi355x", "deepseek-r1", "sglang-disagg", "quark-mxfp4", 1, 1024, 1024, 2048, "disagg", False)
    >>> kw["max_running"], kw["token_budget"], kw["budget_per"]  # per attention-DP rank (the MoRI recipe)
    (160, 16384, 'rank')
    """
    r = launch_recipe(system, model, framework, precision, serving=serving, tp=tp, mtp=mtp)
    if r is None:
        return {}, ""
    r = r.for_workload(workload_key(isl, osl), system)
    kw = r.deployment_kwargs(concurrency)
    note = f"token budget {kw.get('token_budget')}, poll every {kw['recv_interval']} decode steps"
    from jalapeno.deploy.engine_memory import recipe_memory

    profile, fraction = recipe_memory(r)  # validation's KV pool: the recipe's profile at its fraction
    if profile is not None:
        kw.update(engine_memory=profile, memory_fraction=fraction)
        note += f"; KV pool of {profile.name} at --mem-fraction-static {fraction:g}"
    if r.kv_dtype is not None:
        kw["kv_dtype"] = r.kv_dtype
        note += f", KV {r.kv_dtype}"
    return kw, f"engine limits of recipe {r.name} ({note})"


def launch_budget(
    system: str,
    model: str,
    framework: str,
    precision: str,
    decode: Pool,
    isl: int,
    osl: int,
    concurrency: float,
    mtp: bool,
) -> dict:
    """Deployment keywords for the prefill token budget of the disaggregated launch recipe that ran a
    topology-parsed point (deploy/engines.launch_recipe, serving ``disagg``, at ``isl``/``osl`` with
    that workload's overrides, at ``concurrency``): ``token_budget`` and, where the recipe counts
    it per attention-DP rank, ``budget_per``; ``{}`` when no recipe describes the run or it sets
    no budget (then the deployment's default, 8192, applies as before).

    >>> launch_budget("b200", "deepseek-r1", "dynamo-sglang", "fp4", Pool(Layout(tp=8, ep=8), 6), 1024, 1024, 32, True)
    {'token_budget': 32768}
    """
    rec = launch_recipe(system, model, framework, precision, serving="disagg", tp=decode.layout.tp, mtp=mtp)
    if rec is None:
        return {}
    kw = rec.for_workload(workload_key(isl, osl), system).deployment_kwargs(concurrency)
    return {k: kw[k] for k in ("token_budget", "budget_per") if k in kw}


def with_launch_kv(precision, kw: dict):
    """``precision`` with the KV dtype a :func:`launch_limits` dict names (popped from ``kw``)."""
    kv = kw.pop("kv_dtype", None)
    return precision.with_options(kv=kv) if kv is not None else precision


def launch_mtp(
    system: str,
    model: str,
    framework: str,
    precision: str,
    decode: Pool,
    concurrency: float,
    serving: str = "agg",
    isl: int | None = None,
    osl: int | None = None,
) -> MTP | None:
    """The MTP (draft length, acceptance) the launch recipe of a measured MTP point runs at this load
    (:func:`launch_recipe` in ``serving`` mode, its draft rule (recipe.DraftRule) at the attention-DP degree and
    the sequences per attention rank of ``decode``, the aggregated or decode pool; at ``isl``/``osl`` with that
    workload's overrides); None when no recipe describes
    the run or the recipe states no draft length.

    >>> launch_mtp("mi355x", "deepseek-r1", "atom", "fp8", Pool(Layout(tp=8)), 4)  # accept ~0, ATOM #755
    MTP(draft_tokens=3, acceptance=0.0)
    >>> launch_mtp("b200", "deepseek-r1", "dynamo-sglang", "fp4", Pool(Layout(tp=8, ep=8), 6), 32, "disagg")
    MTP(draft_tokens=2, acceptance=0.75)
    >>> launch_mtp("mi355x", "deepseek-r1", "sglang", "quark-mxfp4", Pool(Layout(tp=8)), 64)  # EAGLE, 3 steps
    MTP(draft_tokens=3, acceptance=0.75)
    """
    r = launch_recipe(system, model, framework, precision, serving, tp=decode.layout.tp, mtp=True)
    if r is not None and isl is not None and osl is not None:  # a workload's own draft rule, if it has one
        r = r.for_workload(workload_key(isl, osl), system)
    return r.mtp_at(concurrency / (decode.workers * decode.layout.dp), decode.layout.dp) if r is not None else None
