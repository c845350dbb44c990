"""One engine recipe (:class:`Recipe`) and its parsing from a ``[[recipe]]`` table of ``data/engines.toml``.

The recipes themselves, their lookups for measured points and the published entries are in deploy/engines.py
(which documents what a recipe is and which of its values are applied); this module is the record and its checks.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from jalapeno.deploy.deployment import MTP, check_budget_per, check_prefill_steps
from jalapeno.deploy.graph_capture import check_padding
from jalapeno.errors import SpecError, check_bool
from jalapeno.specs.engine_versions import version_key
from jalapeno.specs.kv_cache import get_kv_format
from jalapeno.specs.attention_backends import check_attention_backend
from jalapeno.specs.moe_backends import check_moe_backend

_REQUIRED = ("name", "engine", "version", "systems", "model", "source", "precision", "serving")
_LIMITS = ("max_running", "max_tokens_per_step", "cuda_graph_max_batch", "token_budget")
_OPTIONAL = (
    *_LIMITS,
    "tp",
    "budget_per",
    "budget_per_source",
    "prefill_attention_dp",
    "image",
    "memory_fraction",
    "recv_interval_by_concurrency",
    "token_budget_by_concurrency",
    "mtp_draft_by_seqs_per_rank",
    "mtp_draft_attention_dp_by_seqs_per_rank",
    "tep_max_seqs_per_worker",
    "adp_balance_timeout_iters",
    "cuda_graph_padding",
    "max_running_is_concurrency",
    "mtp_acceptance_single",
    "mtp_acceptance_chain",
    "overlap",
    "kv_dtype",
    "prefill_steps",
    "moe_backend",
    "attention_backend",
    "sized_to_load",
    "max_num_tokens_sized",
    "max_batch_dp_attention",
    "assumed",
    "workload",
    "default_for",
    "search_space",
    "engine_version",
    "engine_version_source",
)


#: the by-load tables a recipe (and a workload override) may give: [[upper bound, integer value], ...]
_TABLES = (
    "recv_interval_by_concurrency",
    "token_budget_by_concurrency",
    "mtp_draft_by_seqs_per_rank",
    "mtp_draft_attention_dp_by_seqs_per_rank",
)
#: what a ``workload.<name>`` override may set: the limits, the memory fraction and the by-load tables but the poll's
_WORKLOAD_KEYS = (*_LIMITS, "memory_fraction", *_TABLES[1:])


def _check_limits(raw, where: str) -> None:
    """A recipe's (or workload override's) limits are positive whole numbers and its memory fraction is in
    (0, 1]: a deployment built from it would otherwise blame a CLI option the user never gave
    (``--cuda-graph-max-batch``), and a non-integer CUDA-graph ceiling silently captured no sizes.

    Raises:
        SpecError: naming ``<where>.<key>``.
    """
    for key in (*_LIMITS, "adp_balance_timeout_iters", "tep_max_seqs_per_worker"):
        v = raw.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise SpecError(
                f"{where}.{key}",
                f"must be a positive whole number, got {v!r}",
                f"write {key} = N with N >= 1 as the launch script sets it (or drop the key)",
            )
    f = raw.get("memory_fraction")
    if f is not None and (isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 < f <= 1):
        raise SpecError(
            f"{where}.memory_fraction",
            f"must be in (0, 1], got {f!r}",
            "write the launch's share, e.g. memory_fraction = 0.85 (SGLang --mem-fraction-static)",
        )


def _table(pairs, key: str, where: str) -> tuple[tuple[float, int], ...]:
    """A by-load table [[upper bound, value], ...]: ascending bounds, the last one inf."""
    try:
        out = tuple((float(b), int(v)) for b, v in pairs)
    except (TypeError, ValueError):
        raise SpecError(
            f"{where}.{key}", "not a list of [bound, integer] pairs", "write e.g. [[48, 3], [inf, 1]]"
        ) from None
    bounds = [b for b, _ in out]
    if not out or bounds != sorted(bounds) or not math.isinf(bounds[-1]) or any(v < 1 for _, v in out):
        raise SpecError(
            f"{where}.{key}",
            "bounds must ascend and end with inf, values >= 1",
            "write e.g. [[48, 3], [100, 2], [inf, 1]]",
        )
    return out


def _lookup(table: tuple[tuple[float, int], ...], x: float) -> int:
    return next(v for bound, v in table if x <= bound)


@dataclass(frozen=True)
class DraftRule:
    """The MTP draft length a launch script runs, keyed by the layout and the load (the one rule: engine recipes,
    ``Recipe.draft_rule``, and the aiconfigurator rows' InferenceX sweeps, fit/aic_sweeps.Sweep, read it).

    Attributes:
        by_seqs_per_rank: ((upper bound on the decoding sequences per attention rank, draft length), ...), bounds
            ascending, the last inf (Dynamo + TRT-LLM FP4: 3 drafts up to 71 sequences per rank, 2 up to 76, 1 above).
        attention_dp: the table of the same form for a layout with attention data parallelism (decode ``dp`` > 1);
            None: ``by_seqs_per_rank`` applies there too. InferenceX's single-node TRT-LLM scripts run ``MTP=3``,
            ``MTP=1`` when ``DP_ATTENTION`` is true: ``((inf, 3),)`` and ``((inf, 1),)``.
    """

    by_seqs_per_rank: tuple[tuple[float, int], ...]
    attention_dp: tuple[tuple[float, int], ...] | None = None

    @property
    def lengths(self) -> tuple[int, ...]:
        """Every draft length the rule gives on some layout and load, in table order."""
        return tuple(dict.fromkeys(k for _, k in (*self.by_seqs_per_rank, *(self.attention_dp or ()))))

    def draft_at(self, seqs_per_rank: float | None, attention_dp: int = 1) -> int | None:
        """Draft tokens per step with ``seqs_per_rank`` decoding sequences per attention rank on a layout of
        attention-DP degree ``attention_dp``; None when the load is unknown (``seqs_per_rank`` None) and the
        length at this layout depends on it.

        >>> r = DraftRule(((math.inf, 3),), attention_dp=((math.inf, 1),))
        >>> r.draft_at(None, 1), r.draft_at(64, 8), r.lengths
        (3, 1, (3, 1))
        >>> DraftRule(((48, 3), (math.inf, 1))).draft_at(None) is None
        True
        """
        table = self.attention_dp if attention_dp > 1 and self.attention_dp is not None else self.by_seqs_per_rank
        if seqs_per_rank is None:
            ks = {k for _, k in table}
            return ks.pop() if len(ks) == 1 else None
        return _lookup(table, seqs_per_rank)


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
    #: the token budget by benchmark concurrency, where the script sets it by load (over ``token_budget``)
    token_budget_by_concurrency: tuple[tuple[float, int], ...] | None = None
    tp: int | None = None
    budget_per: str = "instance"
    budget_per_source: str = ""
    prefill_attention_dp: bool = False
    memory_fraction: float | None = None
    recv_interval_by_concurrency: tuple[tuple[float, int], ...] = ((math.inf, 1),)
    mtp_draft_by_seqs_per_rank: tuple[tuple[float, int], ...] | None = None
    #: the draft length by load on attention-DP layouts (DraftRule.attention_dp; None: the table above)
    mtp_draft_attention_dp_by_seqs_per_rank: tuple[tuple[float, int], ...] | None = None
    tep_max_seqs_per_worker: int | None = None
    #: the launch's CUDA-graph padding switch (TRT-LLM cuda_graph_config.enable_padding; None: the engine's
    #: default, deploy/graph_capture.captured_sizes)
    cuda_graph_padding: bool | None = None
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
    attention_backend: str | None = None  # the attention backend the launch names (specs/attention_backends.py)
    sized_to_load: tuple[str, ...] = ()
    #: the TensorRT-LLM launch script sizes --max_num_tokens to the load, ((k + 1)·max_batch + ISL + 64) to 64, with no
    #: chunked prefill (fit/aic_sweep_launch.sized_token_limit; applied to the aggregated InferenceX rows the
    #: benchmark's search space identifies, fit/searched.searched_runs)
    max_num_tokens_sized: bool = False
    #: the script's per-rank max_batch_size under attention DP: "conc/dp" or "conc/N" (fit/aic_sweeps.Sweep's rule)
    max_batch_dp_attention: str = ""
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
    def draft_rule(self) -> DraftRule | None:
        """The recipe's MTP draft length by layout and load (None: the recipe runs no MTP)."""
        if not self.mtp_draft_by_seqs_per_rank:
            return None
        return DraftRule(self.mtp_draft_by_seqs_per_rank, self.mtp_draft_attention_dp_by_seqs_per_rank)

    @property
    def draft_lengths(self) -> tuple[int, ...]:
        """Draft lengths the recipe runs on some layout and load ((), without MTP)."""
        return self.draft_rule.lengths if self.draft_rule else ()

    def mtp_for(self, k: int) -> MTP:
        """MTP with ``k`` drafts at the acceptance of the recipe's engine profile on its model (data/stacks.toml:
        fitted or published, specs/stacks.py) if it gives one, else the recipe's (assumed) acceptance for that length.

        Raises:
            SpecError: neither gives an acceptance (the fix names the data/engines.toml keys).
        """
        from jalapeno.specs.stacks import stack_for_framework

        a = stack_for_framework(self.engine, self.systems[0], "engine").acceptance(self.model, k)
        if a is None:
            a = self.mtp_acceptance_single if k == 1 else self.mtp_acceptance_chain
        if a is None:
            raise SpecError(
                f"engine recipe {self.name}",
                "runs MTP but gives no acceptance",
                "add mtp_acceptance_single / mtp_acceptance_chain to data/engines.toml",
            )
        return MTP(k, a)

    def mtp_at(self, seqs_per_rank: float, attention_dp: int = 1) -> MTP | None:
        """The MTP the recipe runs with this many decoding sequences per attention rank on a layout of
        attention-DP degree ``attention_dp`` (:class:`DraftRule`); None without MTP."""
        rule = self.draft_rule
        return None if rule is None else self.mtp_for(rule.draft_at(seqs_per_rank, attention_dp))

    def deployment_kwargs(self, concurrency: float | None = None) -> dict:
        """Deployment keyword arguments the recipe sets: its limits and poll interval."""
        out = {k: getattr(self, k) for k in _LIMITS if getattr(self, k) is not None}
        out["recv_interval"] = self.recv_interval_at(concurrency)
        if self.token_budget_by_concurrency:  # as the poll interval: None = the highest load's
            t = self.token_budget_by_concurrency
            out["token_budget"] = t[-1][1] if concurrency is None else _lookup(t, concurrency)
        sizes = self.graph_sizes(out.get("cuda_graph_max_batch"))
        if sizes is not None:
            from jalapeno.deploy.graph_capture import pad_routing

            out["cuda_graph_batch_sizes"], out["cuda_graph_max_batch"] = sizes, sizes[-1]
            out["cuda_graph_pad_routing"] = pad_routing(self.engine)
        if self.adp_balance_timeout_iters is not None:
            out["adp_balance_timeout_iters"] = self.adp_balance_timeout_iters
        if self.max_running_is_concurrency and concurrency is not None:
            out["max_running"] = max(int(math.ceil(concurrency)), 1)
        if self.budget_per != "instance":
            out["budget_per"] = self.budget_per
        if self.prefill_steps != "mixed":
            out["prefill_steps"] = self.prefill_steps
        return out

    def graph_sizes(self, max_batch: int | None) -> tuple[int, ...] | None:
        """The decode batch sizes per attention rank the recipe's engine captures and pads to with
        ``--cuda-graph-max-bs`` / ``cuda_graph_config.max_batch_size`` ``max_batch`` (deploy/graph_capture: its
        rule at the release the recipe runs, ``engine_version`` when ``version`` names a wrapper; with drafts
        SGLang's speculative list; SGLang's and vLLM's rules are the 0.5.x / V1 ones whatever the release, so a
        recipe that does not state it, e.g. ``sglang-mi300x-dsr1-fp8``, takes them too); None without a ceiling, without padding or where the rule is not read.

        >>> from jalapeno.deploy.engines import get_recipe
        >>> get_recipe("trtllm-h200-dsr1-fp8-mtp").graph_sizes(128)[-3:]  # the script's enable_padding: true
        (112, 120, 128)
        >>> get_recipe("sglang-mi355x-dsr1-fp4-mtp").graph_sizes(128)[:10]  # EAGLE/NEXTN: SGLang's draft list
        (1, 2, 3, 4, 5, 6, 7, 8, 10, 12)
        """
        from jalapeno.deploy.graph_capture import ENGINE_FAMILY, captured_sizes

        if max_batch is None:
            return None
        version = self.engine_version or self.version
        if ENGINE_FAMILY.get(self.engine) == "trtllm":  # its list changed with the release: it must be a number
            try:
                version_key(version)
            except SpecError:
                return None  # a wrapper's release without its runtime's (engine_version): not dated, not padded
        return captured_sizes(
            self.engine, version, max_batch, speculative=bool(self.draft_lengths), padding=self.cuda_graph_padding
        )

    def sourced(self) -> dict[str, str]:
        """Each value the recipe sets → where it comes from (its source, or the assumption)."""
        keys = [
            k
            for k in ("precision", "serving", *_OPTIONAL[:-3])
            if getattr(self, k, None) not in (None, (), "", False)
            and k != "budget_per_source"
            and (k != "budget_per" or self.budget_per_source)
        ]
        out = {k: (f"assumed: {self.assumed[k]}" if k in self.assumed else self.source) for k in keys}
        if "budget_per" in out and "budget_per" not in self.assumed:
            out["budget_per"] = self.budget_per_source
        return out


def _check_sized_tokens(raw: dict, where: str) -> None:
    """The load-sized TensorRT-LLM ``--max_num_tokens`` keys: ``max_num_tokens_sized`` true/false, on a TensorRT-LLM
    engine only (the sizing rule is that engine's launch script, fit/aic_sweep_launch.sized_token_limit), and
    ``max_batch_dp_attention`` "conc/dp" or "conc/N" with N >= 1, given only with ``max_num_tokens_sized`` (no
    other path reads it: fit/searched.with_launch_token_limit).

    Raises:
        SpecError: naming the key and the fix ("conc/0" divided by zero; an SGLang recipe marked sized was priced
            by TensorRT-LLM's rule; a per-rank cap without the sizing was read by nothing).
    """
    sized = raw.get("max_num_tokens_sized", False)
    check_bool(f"{where}.max_num_tokens_sized", sized, "write true or false")
    if sized and "trt" not in str(raw["engine"]).split("-"):
        raise SpecError(
            f"{where}.max_num_tokens_sized",
            f"is true on the {raw['engine']!r} engine: the load-sized "
            "--max_num_tokens is TensorRT-LLM's launch script's rule",
            "set it only on a TensorRT-LLM recipe (engine trt or dynamo-trt), or remove it",
        )
    mb = raw.get("max_batch_dp_attention", "")
    if not re.fullmatch(r"(conc/([1-9]\d*|dp))?", str(mb)) or not isinstance(mb, str):
        raise SpecError(
            f"{where}.max_batch_dp_attention",
            repr(mb),
            'write "conc/dp" or "conc/N" with N >= 1 (the per-rank max_batch_size the script passes)',
        )
    if mb and not sized:
        raise SpecError(
            f"{where}.max_batch_dp_attention",
            f"{mb!r} without max_num_tokens_sized = true: only the load-sized --max_num_tokens reads it",
            "add max_num_tokens_sized = true, or remove it",
        )


def _search_space(entries, where: str) -> tuple[tuple[int, int, int], ...]:
    """``[{ tp = 8, ep = 1 }, ...]`` (dp default 1) → ((tp, dp, ep), ...)."""
    out = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or set(e) - {"tp", "dp", "ep"} or "tp" not in e:
            raise SpecError(f"{where}[{i}]", f"{e!r} is not a layout", "write { tp = N, ep = M } (dp optional)")
        vals = (e["tp"], e.get("dp", 1), e.get("ep", 1))
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in vals):
            raise SpecError(
                f"{where}[{i}]", f"{e!r}: degrees must be whole numbers >= 1", "use e.g. { tp = 8, ep = 1 }"
            )
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
    check_padding(raw.get("cuda_graph_padding"), f"{where}.cuda_graph_padding")
    _check_limits(raw, where)
    check_attention_backend(raw.get("attention_backend"), f"{where}.attention_backend")
    _check_sized_tokens(raw, where)
    if raw.get("kv_dtype") is not None:  # a KV format the engine spells (fp8_e4m3): applied to launches and entries
        get_kv_format(raw["kv_dtype"], f"{where}.kv_dtype")
    if raw.get("engine_version") and not str(raw.get("engine_version_source", "")).strip():
        raise SpecError(
            f"{where}.engine_version_source", "engine_version without its source", "cite where it is stated"
        )
    if "budget_per" in raw:
        check_budget_per(raw["budget_per"], f"{where}.budget_per")
        if not str(raw.get("budget_per_source", "")).strip():
            raise SpecError(
                f"{where}.budget_per_source",
                "budget_per is given without its source",
                "cite the engine source or docs that say how the engine counts its limits",
            )
    assumed = raw.get("assumed", {})
    bad = [k for k, v in assumed.items() if not (isinstance(v, str) and v.strip()) or k not in (*_REQUIRED, *_OPTIONAL)]
    if bad:
        raise SpecError(f"{where}.assumed", f"entries {bad} name no field or give no reason", 'write field = "why"')
    kw = dict(raw)
    kw["systems"] = tuple(raw["systems"])
    kw["default_for"] = tuple(raw.get("default_for", ()))
    kw["sized_to_load"] = tuple(raw.get("sized_to_load", ()))
    kw["assumed"] = MappingProxyType(dict(assumed))
    kw["workload"] = MappingProxyType(
        {
            w: MappingProxyType({k: _table(v, k, f"{where}.workload.{w}") if k in _TABLES else v for k, v in o.items()})
            for w, o in raw.get("workload", {}).items()
        }
    )
    kw["search_space"] = _search_space(raw.get("search_space", []), f"{where}.search_space")
    for key in _TABLES:
        if key in raw:
            kw[key] = _table(raw[key], key, where)
    if "mtp_draft_attention_dp_by_seqs_per_rank" in raw and "mtp_draft_by_seqs_per_rank" not in raw:
        raise SpecError(
            f"{where}.mtp_draft_attention_dp_by_seqs_per_rank",
            "given without mtp_draft_by_seqs_per_rank (the draft length without attention DP)",
            "write e.g. mtp_draft_by_seqs_per_rank = [[inf, 3]] "
            "beside mtp_draft_attention_dp_by_seqs_per_rank = [[inf, 1]] (MTP=3, MTP=1 with attention DP)",
        )
    for wname, over in kw["workload"].items():
        on = wname.partition("@")[2]
        if on and on not in kw["systems"]:
            raise SpecError(
                f"{where}.workload.{wname}",
                f"system {on!r} is not one of the recipe's systems",
                f"use one of {', '.join(kw['systems'])} after '@'",
            )
        if set(over) - set(_WORKLOAD_KEYS):
            raise SpecError(
                f"{where}.workload.{wname}",
                "overrides only limits, the memory fraction and by-load tables",
                f"use {', '.join(_WORKLOAD_KEYS)}",
            )
        _check_limits(over, f"{where}.workload.{wname}")
    return Recipe(**kw)


def workload_key(isl: int, osl: int) -> str:
    """The recipes' workload key of an ISL/OSL pair (``"1k1k"``, ``"8k1k"``; data/engines.toml).

    >>> workload_key(8192, 1024)
    '8k1k'
    """
    return f"{round(isl / 1024)}k{round(osl / 1024)}k"
