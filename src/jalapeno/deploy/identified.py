"""Published recipe entries that measured points are identified with (``[[identified]]`` in data/engines.toml).

:class:`IdentifiedConfig` is one entry (its pools, MTP draft length, budgets and decode ``max_batch_size``) and
:func:`_identified` its parsing; deploy/engines.identified_config finds the entry a point ran.
"""

from __future__ import annotations

from dataclasses import dataclass

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.recipe import workload_key
from jalapeno.errors import SpecError
from jalapeno.specs.moe_backends import check_moe_backend


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
        """The entry as a Deployment: pools, MTP (recipe acceptance), the recipe's budgets at its workload, system,
        and the recipe's KV-cache dtype (``kv_dtype``, as deploy/engines.launch_limits applies it to a launch
        recipe; None: the precision preset's own KV format).

        >>> from jalapeno.deploy.engines import identified_config
        >>> ident = identified_config("gb200-nvl72", "deepseek-r1", "dynamo-trt", "fp4", 1024, 1024, 48, True)
        >>> ident.deployment().precision.kv_cache.name  # the recipe's fp8_e4m3, as the fp4 preset's own
        'fp8'
        """
        from jalapeno.deploy.engines import get_recipe
        from jalapeno.specs.formats import get_precision

        rec = get_recipe(self.recipe).for_workload(workload_key(self.isl, self.osl), self.system)
        kw = {k: v for k, v in rec.deployment_kwargs().items() if k in ("token_budget", "budget_per")}
        if self.token_budget is not None:
            kw["token_budget"] = self.token_budget
        mtp = rec.mtp_for(self.mtp_draft) if self.mtp_draft else None
        precision = get_precision(self.precision)
        if rec.kv_dtype is not None:  # checked when the recipe was read (deploy/recipe._recipe)
            precision = precision.with_options(kv=rec.kv_dtype)
        return Deployment(
            precision,
            self.decode,
            prefill=self.prefill,
            mtp=mtp,
            max_running=self.decode_max_batch,
            recipe=f"identified: {self.name} ({rec.label})",
            **kw,
        )


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
        raise SpecError(
            f"{where}.concurrency",
            f"{raw!r} is not a positive integer or a list of them",
            "write e.g. concurrency = [4, 8, 12]",
        )
    return tuple(vals)


def _identified(raw: dict, i: int, recipes: dict) -> IdentifiedConfig:
    where = f"data/engines.toml identified {raw.get('name', i)}"
    need = (
        "name",
        "recipe",
        "system",
        "model",
        "framework",
        "precision",
        "isl",
        "osl",
        "concurrency",
        "decode",
        "source",
    )
    missing = [k for k in need if not raw.get(k)]
    if missing:
        raise SpecError(where, f"missing {missing}", "every identified entry needs " + ", ".join(need))
    if raw["recipe"] not in recipes:
        raise SpecError(f"{where}.recipe", f"unknown recipe {raw['recipe']!r}", f"use one of {', '.join(recipes)}")
    mb = raw["decode"].get("max_batch")
    if mb is not None and (isinstance(mb, bool) or not isinstance(mb, int) or mb < 1):
        raise SpecError(
            f"{where}.decode.max_batch",
            f"{mb!r} is not a positive integer",
            "give the decode workers' max_batch_size from the recipe file",
        )
    return IdentifiedConfig(
        raw["name"],
        raw["recipe"],
        raw["system"],
        raw["model"],
        raw["framework"],
        raw["precision"],
        int(raw["isl"]),
        int(raw["osl"]),
        _concurrencies(raw["concurrency"], where),
        _pool(raw.get("prefill"), f"{where}.prefill"),
        _pool(raw["decode"], f"{where}.decode", ("tp", "dp", "ep", "eplb", "workers", "max_batch", "moe_backend")),
        int(raw.get("mtp_draft", 0)),
        raw.get("token_budget"),
        raw["source"],
        mb,
    )
