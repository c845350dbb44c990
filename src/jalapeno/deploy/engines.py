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
deploy/engine_memory.py, whose pool is a share of the free memory the engine measures; the KV dtype on the precision);
elsewhere they are recorded: an engine's memory fraction is not a share of the catalog's usable HBM that a profile-free
``Deployment.memory_fraction`` divides; pass ``--memory-fraction`` to set it. With an engine memory profile of the
recipe's own engine (``predict --engine R --engine-memory sglang-0.5``) the recipe's fraction is applied unless
``--memory-fraction`` is given; a profile of another engine is refused (cli/engine_opts.check_recipe_memory).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

from jalapeno.deploy.deployment import MTP, Deployment, Pool, check_budget_per, check_prefill_steps
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.specs.moe_backends import check_moe_backend

_REQUIRED = ("name", "engine", "version", "systems", "model", "source", "precision", "serving")
_LIMITS = ("max_running", "max_tokens_per_step", "cuda_graph_max_batch", "token_budget")
_OPTIONAL = (*_LIMITS, "tp", "budget_per", "budget_per_source", "prefill_attention_dp", "image", "memory_fraction", "recv_interval_by_concurrency", "mtp_draft_by_seqs_per_rank",
             "tep_max_seqs_per_worker", "adp_balance_timeout_iters", "max_running_is_concurrency", "mtp_acceptance_single", "mtp_acceptance_chain", "overlap", "kv_dtype", "prefill_steps",
             "moe_backend", "sized_to_load", "assumed", "workload", "default_for", "search_space", "engine_version", "engine_version_source")


def _table(pairs, key: str, where: str) -> tuple[tuple[float, int], ...]:
    """A by-load table [[upper bound, value], ...]: ascending bounds, the last one inf."""
    try:
        out = tuple((float(b), int(v)) for b, v in pairs)
    except (TypeError, ValueError):
        raise SpecError(f"{where}.{key}", "not a list of [bound, integer] pairs", "write e.g. [[48, 3], [inf, 1]]") from None
    bounds = [b for b, _ in out]
    if not out or bounds != sorted(bounds) or not math.isinf(bounds[-1]) or any(v < 1 for _, v in out):
        raise SpecError(f"{where}.{key}", "bounds must ascend and end with inf, values >= 1",
                        "write e.g. [[48, 3], [100, 2], [inf, 1]]")
    return out


def _lookup(table: tuple[tuple[float, int], ...], x: float) -> int:
    return next(v for bound, v in table if x <= bound)


@dataclass(frozen=True)
class Recipe:
    """One engine recipe (fields as the keys documented in ``data/engines.toml``).

    Limits that are None are not set by the recipe (the engine's own default or the load-sized value applies;
    jalapeno keeps its defaults). ``assumed`` maps each assumed field to why. ``budget_per`` (``instance`` |
    ``rank``, deploy/deployment.BUDGET_PER) says whether the engine counts its limits per instance or per
    attention-DP rank; ``budget_per_source`` cites the engine source or docs that say so. ``prefill_attention_dp``:
    the recipe's prefill workers run attention data-parallel (DEPn) rather than TP. ``tp``: the tensor-parallel size
    the recipe's flags are for, when its launch script sets them per TP (None: any).
    """

    name: str
    engine: str
    version: str
    systems: tuple[str, ...]
    model: str
    source: str
    precision: str
    serving: str
    image: str = ""
    max_running: int | None = None
    max_tokens_per_step: int | None = None
    cuda_graph_max_batch: int | None = None
    token_budget: int | None = None
    tp: int | None = None
    budget_per: str = "instance"
    budget_per_source: str = ""
    prefill_attention_dp: bool = False
    memory_fraction: float | None = None
    recv_interval_by_concurrency: tuple[tuple[float, int], ...] = ((math.inf, 1),)
    mtp_draft_by_seqs_per_rank: tuple[tuple[float, int], ...] | None = None
    tep_max_seqs_per_worker: int | None = None
    #: attention-DP context balancing (TRT-LLM attention_dp_config enable_balance, timeout_iters)
    adp_balance_timeout_iters: int | None = None
    #: the launch script sizes max_batch_size to the concurrency (CONC, or CONC / ranks per
    #: attention-DP rank): the instance runs exactly as many requests as the benchmark sends
    max_running_is_concurrency: bool = False
    mtp_acceptance_single: float | None = None
    mtp_acceptance_chain: float | None = None
    overlap: str = "none"
    kv_dtype: str | None = None
    prefill_steps: str = "mixed"  # the engine's scheduling of prompts beside decode (deployment.PREFILL_STEPS)
    moe_backend: str | None = None  # the MoE kernel backend the launch script forces (specs/moe_backends.py)
    sized_to_load: tuple[str, ...] = ()
    assumed: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    workload: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    default_for: tuple[str, ...] = ()
    #: the aggregated layouts (tp, dp, ep) the benchmark's search space ran with this recipe
    #: (``search_space``); empty = not stated (every layout a sweep enumerates)
    search_space: tuple[tuple[int, int, int], ...] = ()
    engine_version: str = ""  # the release the stack's version rules read, when ``version`` names another program
    engine_version_source: str = ""  # where that pairing is stated (required with engine_version)

    @property
    def label(self) -> str:
        """``name (engine version)``."""
        return f"{self.name} ({self.engine} {self.version})"

    def for_workload(self, name: str | None, system: str | None = None) -> Recipe:
        """The recipe with its overrides for workload ``name`` (e.g. ``"1k1k"``) applied, then those for that
        workload on ``system`` (a ``"1k1k@b200"`` key: recipes whose settings differ by system)."""
        over = dict(self.workload.get(name or "", {}))
        if system:
            over.update(self.workload.get(f"{name or ''}@{system}", {}))
        return replace(self, **over) if over else self

    def recv_interval_at(self, concurrency: float | None) -> int:
        """Scheduler poll interval (decode steps) at a concurrency; None = the highest load's."""
        t = self.recv_interval_by_concurrency
        return t[-1][1] if concurrency is None else _lookup(t, concurrency)

    @property
    def draft_lengths(self) -> tuple[int, ...]:
        """Draft lengths the recipe runs at some load ((), without MTP)."""
        return tuple(dict.fromkeys(k for _, k in self.mtp_draft_by_seqs_per_rank or ()))

    def mtp_for(self, k: int) -> MTP:
        """MTP with ``k`` drafts at the acceptance of the recipe's engine profile on its model (data/stacks.toml:
        fitted or published, specs/stacks.py) if it gives one, else the recipe's (assumed) acceptance for that length."""
        from jalapeno.specs.stacks import stack_for_framework

        a = stack_for_framework(self.engine, self.systems[0]).acceptance(self.model, k)
        if a is None:
            a = self.mtp_acceptance_single if k == 1 else self.mtp_acceptance_chain
        if a is None:
            raise SpecError(f"engine recipe {self.name}", "runs MTP but gives no acceptance",
                            "add mtp_acceptance_single / mtp_acceptance_chain to data/engines.toml")
        return MTP(k, a)

    def mtp_at(self, seqs_per_rank: float) -> MTP | None:
        """The MTP the recipe runs with this many decoding sequences per attention rank."""
        if not self.mtp_draft_by_seqs_per_rank:
            return None
        return self.mtp_for(_lookup(self.mtp_draft_by_seqs_per_rank, seqs_per_rank))

    def deployment_kwargs(self, concurrency: float | None = None) -> dict:
        """Deployment keyword arguments the recipe sets: its limits and poll interval."""
        out = {k: getattr(self, k) for k in _LIMITS if getattr(self, k) is not None}
        out["recv_interval"] = self.recv_interval_at(concurrency)
        if self.adp_balance_timeout_iters is not None:
            out["adp_balance_timeout_iters"] = self.adp_balance_timeout_iters
        if self.max_running_is_concurrency and concurrency is not None:
            out["max_running"] = max(int(math.ceil(concurrency)), 1)
        if self.budget_per != "instance":
            out["budget_per"] = self.budget_per
        if self.prefill_steps != "mixed":
            out["prefill_steps"] = self.prefill_steps
        return out

    def sourced(self) -> dict[str, str]:
        """Each value the recipe sets → where it comes from (its source, or the assumption)."""
        keys = [k for k in ("precision", "serving", *_OPTIONAL[:-3]) if getattr(self, k, None) not in (None, (), "", False)
                and k != "budget_per_source" and (k != "budget_per" or self.budget_per_source)]
        out = {k: (f"assumed: {self.assumed[k]}" if k in self.assumed else self.source) for k in keys}
        if "budget_per" in out and "budget_per" not in self.assumed:
            out["budget_per"] = self.budget_per_source
        return out


def _search_space(entries, where: str) -> tuple[tuple[int, int, int], ...]:
    """``[{ tp = 8, ep = 1 }, ...]`` (dp default 1) → ((tp, dp, ep), ...)."""
    out = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or set(e) - {"tp", "dp", "ep"} or "tp" not in e:
            raise SpecError(f"{where}[{i}]", f"{e!r} is not a layout", "write { tp = N, ep = M } (dp optional)")
        vals = (e["tp"], e.get("dp", 1), e.get("ep", 1))
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in vals):
            raise SpecError(f"{where}[{i}]", f"{e!r}: degrees must be whole numbers >= 1", "use e.g. { tp = 8, ep = 1 }")
        out.append(vals)
    return tuple(out)


def _recipe(raw: dict, i: int) -> Recipe:
    where = f"data/engines.toml recipe {raw.get('name', i)}"
    unknown = set(raw) - set(_REQUIRED) - set(_OPTIONAL)
    if unknown:
        raise SpecError(where, f"unknown keys {sorted(unknown)}", "use the keys listed at the top of data/engines.toml")
    missing = [k for k in _REQUIRED if not raw.get(k)]
    if missing:
        raise SpecError(where, f"missing {missing}", "every recipe needs " + ", ".join(_REQUIRED))
    if raw["serving"] not in ("agg", "disagg"):
        raise SpecError(f"{where}.serving", f"{raw['serving']!r}", "use agg or disagg")
    if raw.get("overlap", "none") not in ("none", "tbo"):
        raise SpecError(f"{where}.overlap", f"{raw['overlap']!r}", "use none or tbo")
    check_prefill_steps(raw.get("prefill_steps", "mixed"), f"{where}.prefill_steps")
    check_moe_backend(raw.get("moe_backend"), f"{where}.moe_backend")
    if raw.get("engine_version") and not str(raw.get("engine_version_source", "")).strip():
        raise SpecError(f"{where}.engine_version_source", "engine_version without its source", "cite where it is stated")
    if "budget_per" in raw:
        check_budget_per(raw["budget_per"], f"{where}.budget_per")
        if not str(raw.get("budget_per_source", "")).strip():
            raise SpecError(f"{where}.budget_per_source", "budget_per is given without its source",
                            "cite the engine source or docs that say how the engine counts its limits")
    assumed = raw.get("assumed", {})
    bad = [k for k, v in assumed.items() if not (isinstance(v, str) and v.strip())
           or k not in (*_REQUIRED, *_OPTIONAL)]
    if bad:
        raise SpecError(f"{where}.assumed", f"entries {bad} name no field or give no reason", "write field = \"why\"")
    kw = dict(raw)
    kw["systems"] = tuple(raw["systems"])
    kw["default_for"] = tuple(raw.get("default_for", ()))
    kw["sized_to_load"] = tuple(raw.get("sized_to_load", ()))
    kw["assumed"] = MappingProxyType(dict(assumed))
    kw["workload"] = MappingProxyType({w: MappingProxyType(dict(o)) for w, o in raw.get("workload", {}).items()})
    kw["search_space"] = _search_space(raw.get("search_space", []), f"{where}.search_space")
    for key in ("recv_interval_by_concurrency", "mtp_draft_by_seqs_per_rank"):
        if key in raw:
            kw[key] = _table(raw[key], key, where)
    for wname, over in kw["workload"].items():
        on = wname.partition("@")[2]
        if on and on not in kw["systems"]:
            raise SpecError(f"{where}.workload.{wname}", f"system {on!r} is not one of the recipe's systems",
                            f"use one of {', '.join(kw['systems'])} after '@'")
        if set(over) - set(_LIMITS) - {"memory_fraction"}:
            raise SpecError(f"{where}.workload.{wname}", "overrides only limits", f"use {', '.join(_LIMITS)}")
    return Recipe(**kw)


@dataclass(frozen=True)
class IdentifiedConfig:
    """One published recipe entry a measured point is identified with (``[[identified]]`` in
    data/engines.toml): the point's system, model, framework, precision, ISL/OSL, concurrency (and
    MTP use, when the point says) select exactly this entry of the benchmark's search space
    (``source``).

    Attributes:
        name: the recipe entry's name (e.g. ``ctx11_gen1_dep16_batch256_eplb256_mtp1``).
        recipe: the engine recipe it belongs to (its budget semantics, MTP acceptance).
        concurrency: the concurrencies the benchmark ran this entry at (its ``conc-list``).
        prefill, decode: pools (workers x layout); ``prefill`` None for aggregated serving.
        mtp_draft: draft length the entry runs (0: none); acceptance from the recipe.
        token_budget: prefill tokens per step as the entry sets them (per rank with a per-rank
            recipe), or None for the recipe's own.
        decode_max_batch: the decode workers' ``max_batch_size`` (TRT-LLM: per attention-DP rank;
            per worker under attention TP), or None when not read. It caps the decode batch: a
            concurrency above workers x ranks x max_batch queues for admission (the entry
            ``ctx1_gen4_tep8_batch8`` serves concurrency 48 with 32 decode slots).
    """

    name: str
    recipe: str
    system: str
    model: str
    framework: str
    precision: str
    isl: int
    osl: int
    concurrency: tuple[int, ...]
    prefill: Pool | None
    decode: Pool
    mtp_draft: int
    token_budget: int | None
    source: str
    decode_max_batch: int | None = None

    def deployment(self) -> Deployment:
        """The entry as a Deployment: pools, MTP (recipe acceptance), the recipe's budgets at its workload, system."""
        from jalapeno.specs.formats import get_precision

        rec = get_recipe(self.recipe).for_workload(workload_key(self.isl, self.osl), self.system)
        kw = {k: v for k, v in rec.deployment_kwargs().items() if k in ("token_budget", "budget_per")}
        if self.token_budget is not None:
            kw["token_budget"] = self.token_budget
        mtp = rec.mtp_for(self.mtp_draft) if self.mtp_draft else None
        return Deployment(get_precision(self.precision), self.decode, prefill=self.prefill, mtp=mtp,
                          max_running=self.decode_max_batch, recipe=f"identified: {self.name} ({rec.label})", **kw)


def _pool(raw: dict | None, where: str, allowed=("tp", "dp", "ep", "eplb", "workers", "moe_backend")) -> Pool | None:
    if raw is None:
        return None
    lay = {k: raw[k] for k in ("tp", "dp", "ep", "eplb") if k in raw}
    if set(raw) - set(allowed):
        raise SpecError(where, f"unknown keys {sorted(set(raw) - set(allowed))}", f"use {', '.join(allowed)}")
    check_moe_backend(raw.get("moe_backend"), f"{where}.moe_backend")
    return Pool(Layout(**lay), int(raw.get("workers", 1)), raw.get("moe_backend"))


def _concurrencies(raw, where: str) -> tuple[int, ...]:
    """An entry's ``concurrency``: one integer or a list of them (the benchmark's ``conc-list``)."""
    vals = raw if isinstance(raw, list) else [raw]
    if not vals or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in vals):
        raise SpecError(f"{where}.concurrency", f"{raw!r} is not a positive integer or a list of them",
                        "write e.g. concurrency = [4, 8, 12]")
    return tuple(vals)


def _identified(raw: dict, i: int, recipes: dict) -> IdentifiedConfig:
    where = f"data/engines.toml identified {raw.get('name', i)}"
    need = ("name", "recipe", "system", "model", "framework", "precision", "isl", "osl", "concurrency", "decode", "source")
    missing = [k for k in need if not raw.get(k)]
    if missing:
        raise SpecError(where, f"missing {missing}", "every identified entry needs " + ", ".join(need))
    if raw["recipe"] not in recipes:
        raise SpecError(f"{where}.recipe", f"unknown recipe {raw['recipe']!r}", f"use one of {', '.join(recipes)}")
    mb = raw["decode"].get("max_batch")
    if mb is not None and (isinstance(mb, bool) or not isinstance(mb, int) or mb < 1):
        raise SpecError(f"{where}.decode.max_batch", f"{mb!r} is not a positive integer",
                        "give the decode workers' max_batch_size from the recipe file")
    return IdentifiedConfig(raw["name"], raw["recipe"], raw["system"], raw["model"], raw["framework"], raw["precision"],
                            int(raw["isl"]), int(raw["osl"]), _concurrencies(raw["concurrency"], where),
                            _pool(raw.get("prefill"), f"{where}.prefill"),
                            _pool(raw["decode"], f"{where}.decode",
                                  ("tp", "dp", "ep", "eplb", "workers", "max_batch", "moe_backend")),
                            int(raw.get("mtp_draft", 0)), raw.get("token_budget"), raw["source"], mb)


def _checkpoint(entry: list, where: str) -> tuple[str, str, str | None]:
    """One ``[checkpoints]`` entry: ``[preset, source]``, or ``[preset, source, substitutes]`` for a
    checkpoint released for chips that cannot run the ``substitutes`` preset (AMD's MXFP4 DeepSeek
    for the NVFP4 one: ``Supported Hardware: AMD MI350/MI355``)."""
    if len(entry) not in (2, 3):
        raise SpecError(where, f"entry {entry!r} has {len(entry)} fields", "write [preset, source] or "
                        "[preset, source, preset it substitutes for]")
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
    ck = MappingProxyType({m: tuple(_checkpoint(e, f"data/engines.toml: checkpoints.{m}") for e in v)
                           for m, v in raw.get("checkpoints", {}).items()})
    ident = tuple(_identified(r, i, recipes) for i, r in enumerate(raw.get("identified", [])))
    return recipes, ck, ident


def identified_config(system: str, model: str, framework: str, precision: str, isl: int, osl: int,
                      concurrency: float | None, mtp: bool | None = None) -> IdentifiedConfig | None:
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


def identified_candidates(system: str, model: str, framework: str, precision: str, isl: int, osl: int,
                          concurrency: float | None, mtp: bool | None = None) -> list[IdentifiedConfig]:
    """Every ``[[identified]]`` entry that ran this point's system, model, framework, precision,
    ISL/OSL and concurrency (and agrees with its MTP use when ``mtp`` is given), in file order."""
    if concurrency is None:
        return []
    key = (system, model, framework, precision, isl, osl)
    return [c for c in _data()[2] if (c.system, c.model, c.framework, c.precision, c.isl, c.osl) == key
            and round(concurrency) in c.concurrency and (mtp is None or (c.mtp_draft > 0) == mtp)]


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
        raise SpecError("--engine", f"unknown engine recipe {name!r}",
                        f"use one of {', '.join(_data()[0])} (data/engines.toml)") from None


def deployed_recipe(system: str, model: str) -> Recipe | None:
    """The recipe a measured system is deployed with for ``model`` (``default_for``), or None."""
    for r in _data()[0].values():
        if r.model == model and system in r.default_for:
            return r
    return None


def launch_recipe(system: str, model: str, framework: str, precision: str, serving: str = "agg",
                  tp: int | None = None, mtp: bool | None = None) -> Recipe | None:
    """The recipe whose launch script ran a measured point, or None (no recipe, or more than one).

    A recipe matches when it lists ``system`` and serves ``model`` at ``precision`` in ``serving``
    mode with the point's engine: ``framework`` (InferenceX ``framework``) equals the recipe's
    engine, a ``-rocm`` engine serving the same framework on MI systems; a recipe written for one
    tensor-parallel size (``tp``) matches only a point of that size. Of an MTP and a plain recipe that
    match alike (two launch scripts), ``mtp`` (whether the point runs MTP) picks the one that does.

    >>> launch_recipe("b200", "deepseek-r1", "sglang", "fp8", tp=8).recv_interval_at(64)
    30
    >>> launch_recipe("b200", "deepseek-r1", "sglang", "fp8", tp=4).token_budget
    8192
    >>> [launch_recipe("mi355x", "deepseek-r1", "sglang", "quark-mxfp4", mtp=m).name for m in (False, True)]
    ['sglang-mi355x-dsr1-fp4', 'sglang-mi355x-dsr1-fp4-mtp']
    """
    fw = framework.strip().split(" ")[0].lower()
    hits = [r for r in _data()[0].values()
            if system in r.systems and r.model == model and r.precision == precision and r.serving == serving
            and r.engine.removesuffix("-rocm") == fw and (r.tp is None or tp is None or r.tp == tp)]
    if len(hits) > 1 and mtp is not None:
        hits = [r for r in hits if bool(r.draft_lengths) == mtp]
    return hits[0] if len(hits) == 1 else None


def workload_key(isl: int, osl: int) -> str:
    """The recipes' workload key of an ISL/OSL pair (``"1k1k"``, ``"8k1k"``; data/engines.toml).

    >>> workload_key(8192, 1024)
    '8k1k'
    """
    return f"{round(isl / 1024)}k{round(osl / 1024)}k"


def launch_limits(system: str, model: str, framework: str, precision: str, tp: int, isl: int, osl: int,
                  concurrency: float, serving: str = "agg", mtp: bool | None = None) -> tuple[dict, str]:
    """Deployment keywords of the recipe whose launch script ran a measured point (its limits and
    scheduler poll interval at this load, :func:`launch_recipe`; ``serving`` "agg" or "disagg", ``tp``
    the decode pool's; ``mtp``: the point runs MTP) and a note naming it; ``({}, "")`` when no recipe
    describes the run. An SGLang recipe with a memory fraction also gives its memory profile at that
    fraction (engine_memory.recipe_memory), a recipe with a KV dtype ``kv_dtype`` (:func:`with_launch_kv`).

    >>> kw, note = launch_limits("b200", "deepseek-r1", "sglang", "fp8", 8, 1024, 1024, 32)
    >>> kw["recv_interval"], kw["token_budget"]
    (30, 32768)
    >>> kw, _ = launch_limits("mi355x", "deepseek-r1", "sglang-disagg", "quark-mxfp4", 1, 1024, 1024, 2048, "disagg")
    >>> kw["max_running"], kw["token_budget"], kw["budget_per"]  # per attention-DP rank (the MoRI recipe)
    (160, 12288, 'rank')
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


def with_launch_kv(precision, kw: dict):
    """``precision`` with the KV dtype a :func:`launch_limits` dict names (popped from ``kw``)."""
    kv = kw.pop("kv_dtype", None)
    return precision.with_options(kv=kv) if kv is not None else precision


def launch_mtp(system: str, model: str, framework: str, precision: str, decode: Pool,
               concurrency: float, serving: str = "agg") -> MTP | None:
    """The MTP (draft length, acceptance) the launch recipe of a measured MTP point runs at this load
    (:func:`launch_recipe` in ``serving`` mode, ``mtp_draft_by_seqs_per_rank`` over the sequences
    per attention rank of ``decode``, the aggregated or decode pool); None when no recipe describes
    the run or the recipe states no draft length.

    >>> launch_mtp("mi355x", "deepseek-r1", "atom", "fp8", Pool(Layout(tp=8)), 4)  # accept ~0, ATOM #755
    MTP(draft_tokens=3, acceptance=0.0)
    >>> launch_mtp("b200", "deepseek-r1", "dynamo-sglang", "fp4", Pool(Layout(tp=8, ep=8), 6), 32, "disagg")
    MTP(draft_tokens=2, acceptance=0.75)
    >>> launch_mtp("mi355x", "deepseek-r1", "sglang", "quark-mxfp4", Pool(Layout(tp=8)), 64)  # EAGLE, 3 steps
    MTP(draft_tokens=3, acceptance=0.75)
    """
    r = launch_recipe(system, model, framework, precision, serving, tp=decode.layout.tp, mtp=True)
    return r.mtp_at(concurrency / (decode.workers * decode.layout.dp)) if r is not None else None


def released_precisions(model: str, default: str) -> tuple[str, ...]:
    """Precision presets the model has released checkpoints in (``[checkpoints]``; else its default)."""
    ck = _data()[1].get(model)
    return tuple(p for p, _, _ in ck) if ck else (default,)


def checkpoint_for(model: str, preset: str, system: str) -> str:
    """The preset ``system`` serves ``model``'s ``preset`` checkpoint as: ``preset``, or the checkpoint
    released as its substitute (``[checkpoints]``' third field) where the chip cannot run it.

    >>> checkpoint_for("deepseek-r1", "fp4", "mi355x"), checkpoint_for("deepseek-r1", "fp4", "b200")
    ('quark-mxfp4', 'fp4')
    """
    from jalapeno.specs.catalog import load_model, load_system
    from jalapeno.specs.formats import check_precision, get_precision

    subs = [p for p, _, sub in _data()[1].get(model, ()) if sub == preset]
    if not subs:
        return preset
    try:
        check_precision(get_precision(preset), load_model(model), load_system(system).chip)
    except SpecError:
        return subs[0]
    return preset


def available_precisions(model: str, default: str, chip_formats, model_spec=None, chip=None) -> tuple[str, ...]:
    """Released precisions the chip computes natively: every module's compute format supported.

    FP8 needs fp8 math (Hopper and later, CDNA3 and later), FP4 fp4 math (Blackwell, CDNA4);
    a preset whose formats the chip lacks would run upcast, which no deployment does. With
    ``model_spec`` and ``chip``, presets the model itself cannot run (specs/formats.check_precision)
    are dropped too. A checkpoint released as a substitute (``[checkpoints]``' third field) is
    offered only where the preset it stands in for is not: MI355X serves DeepSeek-R1 FP4 from
    AMD's MXFP4 checkpoint, B200 from NVIDIA's NVFP4 one.
    """
    from jalapeno.specs.formats import check_precision, get_precision

    fmts = set(chip_formats)
    out = []
    substitutes = {p: sub for p, _, sub in _data()[1].get(model, ()) if sub}
    for name in sorted(released_precisions(model, default), key=lambda n: n in substitutes):
        if substitutes.get(name) in out:  # the chip runs the checkpoint this one stands in for
            continue
        prec = get_precision(name)
        need = {m.compute for m in prec.modules.values()} - {"bf16"}
        if not need <= fmts:
            continue
        if model_spec is not None and chip is not None:
            try:
                check_precision(prec, model_spec, chip)
            except SpecError:
                continue
        out.append(name)
    return tuple(out) or (default,)
