"""The InferenceX sweep behind a group of aiconfigurator ``silicon_sample.csv`` rows, and its MTP use.

aiconfigurator-core 0.12.0's sample does not record speculative decoding, yet several of its
TensorRT-LLM DeepSeek-R1 groups are InferenceX MTP sweeps: the rows' ``measured=`` time is the
commit time of the InferenceX change that triggered the sweep, and that change's perf-changelog
names the configurations it ran (``data/validation/aic_sweeps.toml``, each entry with its commit,
changelog keys and launch script). :func:`load_sweeps` reads and checks the entries, :func:`sweep_of` finds a
row's entry; fit/aic_sweep_launch.py applies its launch script's engine settings (MTP, attention-DP balancing,
batch waiting, kernels, limits) to the row's deployment, fit/aic_sweep_layouts.py the MoE layouts it restates.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from jalapeno.deploy.layout import DP_DISPATCH
from jalapeno.deploy.recipe import DraftRule
from jalapeno.errors import JalapenoError, SpecError

SWEEPS = Path(__file__).resolve().parents[1] / "data" / "validation" / "aic_sweeps.toml"
_KEYS = {
    "system",
    "model",
    "engine",
    "version",
    "precision",
    "measured",
    "config_key",
    "spec",
    "mtp_draft",
    "mtp_draft_dp_attention",
    "source",
    "adp_balance_timeout_iters",
    "max_batch_dp_attention",
    "kv_dtype",
    "moe_backend",
    "batch_wait_timeout_iters",
    "batch_wait_max_tokens_ratio",
    "batch_wait_workload",
    "batch_wait_from_concurrency",
    "batch_wait_below_tp",
    "expert_parallel",
    "max_num_batched_tokens",
    "memory_fraction",
    "dp_attention_ep",
    "low_latency_tp_chips",
    "no_expert_parallel",
    "decode_dp_dispatch",
    "max_num_tokens_sized",
    "config_dp_attention",
    "dp_attention_from",
}
#: ``max_batch_dp_attention``: the launch script's per-rank ``max_batch_size`` under attention DP as
#: ``conc/N`` (CONC / N, CONC itself below N: ``$(( CONC < N ? CONC : CONC / N ))``) or ``conc/dp``
#: (``$((CONC/TP))`` with TP the attention-DP degree).
_MAX_BATCH = re.compile(r"conc/([1-9]\d*|dp)")  # N >= 1: "conc/0" divided by zero
#: ``max_num_batched_tokens``: a number of tokens, or ``K*isl`` (the script's ``$((ISL * K))``)
_BATCHED = re.compile(r"(\d+)(\*isl)?")


@dataclass(frozen=True)
class Sweep:
    """One entry of aic_sweeps.toml (its header documents the fields)."""

    system: str
    model: str
    engine: str
    version: str
    precision: str
    measured: str
    config_key: str
    spec: str
    source: str
    mtp_draft: int = 0
    mtp_draft_dp_attention: int = 0
    #: the launch script's ``attention_dp_config.timeout_iters`` (``enable_balance: true``) under attention
    #: DP; 0 = the script sets no balancing
    adp_balance_timeout_iters: int = 0
    #: the script's per-rank ``max_batch_size`` rule under attention DP (:data:`_MAX_BATCH`); "" = the
    #: script passes none (the engine's default, far above the sweep's concurrencies)
    max_batch_dp_attention: str = ""
    #: the KV-cache storage format the script sets (specs/formats KV names); "" = the engine's default
    #: (the model's dtype)
    kv_dtype: str = ""
    #: the MoE kernel backend the script forces (specs/moe_backends.MOE_BACKENDS); "" = none named
    moe_backend: str = ""
    #: TensorRT-LLM batch waiting the script sets (``DELAY_BATCHING``): timeout (steps) and token ratio, on the
    #: workload ``batch_wait_workload`` (deploy/recipe.workload_key) from ``batch_wait_from_concurrency`` up;
    #: 0 = the script sets none
    batch_wait_timeout_iters: int = 0
    batch_wait_max_tokens_ratio: float = 0.0
    batch_wait_workload: str = ""
    batch_wait_from_concurrency: int = 0
    #: ... at tensor-parallel sizes below this one only (the script's ``${TP} -lt N``); 0 = at every TP
    batch_wait_below_tp: int = 0
    #: the script passes vLLM's ``--enable-expert-parallel`` whatever the configuration's ``ep`` (its test
    #: ``[ "$EP_SIZE" -ge 1 ]`` holds for the sweep matrix's default ep 1): MoE EP over every chip of the
    #: instance (fit/aic_sweep_layouts.with_sweep_expert_parallel); False = the row's own MoE layout
    expert_parallel: bool = False
    #: the script never passes ``--enable-expert-parallel`` whatever the configuration's ``ep`` (InferenceX PR #1019:
    #: "script has no EP support"): vLLM's MoE TP over every chip of the instance, where the row's fields say MoE EP
    #: (fit/aic_sweep_layouts.with_sweep_expert_parallel); False = the row's own MoE layout
    no_expert_parallel: bool = False
    #: the script runs every attention-DP pool with DeepEP expert parallelism over the pool's chips (SGLang
    #: ``--tp-size N --dp-size N --enable-dp-attention --enable-deepep-moe``: InferenceX's "DEP N"), where the
    #: rows' fields write SGLang's tp-size as MoE TP N (fit/aic_sweep_layouts.with_sweep_expert_parallel); False = the fields
    dp_attention_ep: bool = False
    #: disaggregated rows whose decode pool spans this many chips ran the sweep's low-latency script modes, which
    #: run both pools at tensor parallelism over the pool (SGLang ``--tp-size N --dp-size 1 --ep-size 1``, no
    #: ``--enable-dp-attention``: attention TP N, MoE TP N) whatever the rows' fields say (fit/aic_sweep_layouts._low_latency_tp);
    #: 0 = the sweep has no such mode
    low_latency_tp_chips: int = 0
    #: how the decode server spreads requests over its attention-DP ranks (deploy/layout.DP_DISPATCH): "random"
    #: where the engine release sends each to rank ``bootstrap_room % dp`` and the router draws the room at random
    #: (SGLang before PR #16110 behind Dynamo 0.7; fit/aic_sweep_layouts.with_sweep_dp_dispatch); "balanced" = round robin
    decode_dp_dispatch: str = "balanced"
    #: the vLLM script's ``--max-num-batched-tokens`` (TensorRT-LLM's ``--max_num_tokens``) (:data:`_BATCHED`: "2048"
    #: or "2*isl"): tokens one step processes, decode rows and prompt chunks together; "" = the script passes none
    max_num_batched_tokens: str = ""
    #: the script's ``--gpu-memory-utilization``; 0 = the script passes none
    memory_fraction: float = 0.0
    #: the TensorRT-LLM script sizes ``--max_num_tokens`` to the load, T = ⌈((k + 1)·B + ISL + 64)/64⌉·64 with B its
    #: ``max_batch_size`` (CONC without attention DP) and k the MTP draft tokens (the non-MTP scripts' ``CONC + ISL + 64``
    #: is k = 0), and sets no chunked prefill (fit/aic_sweep_launch.with_sweep_token_limit); False = the script passes 8192 or more
    max_num_tokens_sized: bool = False
    #: the disaggregated recipes run every pool the configuration's search-space entry marks ``dp-attn`` at attention
    #: DP over its chips where the rows' fields write the configuration's ``tp`` as attention TP
    #: (fit/aic_sweep_layouts.with_sweep_config_layouts); False = the fields
    config_dp_attention: bool = False
    #: the aggregated script's DP_ATTENTION switch: (workload, CONC) pairs (deploy/recipe.workload_key: "1k1k") from
    #: which the script turns on ``enable_attention_dp`` over its TP chips, where the rows' fields write attention TP
    #: (fit/aic_sweep_layouts.with_sweep_dp_attention); () = the fields' layout
    dp_attention_from: tuple[tuple[str, int], ...] = ()

    def batched_tokens(self, isl: int) -> int | None:
        """The script's ``max_num_batched_tokens`` at input length ``isl`` (None: it passes none).

        >>> Sweep("b200", "minimax-m2.5", "vllm", "0.19.0", "fp8", "2026-04-22", "k", "none", "",
        ...       max_num_batched_tokens="2*isl").batched_tokens(1024)
        2048
        """
        m = _BATCHED.fullmatch(self.max_num_batched_tokens)
        if m is None:
            return None
        return int(m.group(1)) * (isl if m.group(2) else 1)

    def max_batch_per_rank(self, concurrency: float, dp: int) -> int | None:
        """The per-rank ``max_batch_size`` the script passes at ``concurrency`` on an attention-DP ``dp``
        layout (None: it passes none).

        >>> s = Sweep("b200", "deepseek-r1", "trtllm", "1", "fp4", "2026-01-01", "k", "mtp", "", 3, 1, 60, "conc/4")
        >>> s.max_batch_per_rank(256, 8), s.max_batch_per_rank(2, 8)
        (64, 2)
        >>> Sweep("h200", "deepseek-r1", "trtllm", "1", "fp8", "2026-01-01", "k", "mtp", "", 3, 1, 60,
        ...       "conc/dp").max_batch_per_rank(128, 8)
        16
        """
        m = _MAX_BATCH.fullmatch(self.max_batch_dp_attention)
        if m is None:
            return None
        c = int(concurrency)
        if m.group(1) == "dp":
            return max(c // dp, 1)
        n = int(m.group(1))
        return c if c < n else c // n

    @property
    def draft_rule(self) -> DraftRule | None:
        """The launch script's draft length by layout (deploy/recipe.DraftRule, the rule engine recipes use):
        ``mtp_draft`` without attention DP, ``mtp_draft_dp_attention`` with it; None without MTP."""
        if self.spec != "mtp":
            return None
        return DraftRule(((math.inf, self.mtp_draft),), ((math.inf, self.mtp_draft_dp_attention),))

    def draft_tokens(self, attention_dp: int) -> int:
        """Draft tokens per step at a layout's attention DP degree (0 without MTP)."""
        rule = self.draft_rule
        return 0 if rule is None else rule.draft_at(None, attention_dp)


#: The optional true/false keys of a sweep entry, each with the fix of a bad value (not a bool; ``max_num_tokens_sized``
#: on an engine other than TensorRT-LLM; ``no_expert_parallel`` beside ``expert_parallel``).
_FLAGS = {
    "max_num_tokens_sized": "write true only on a TensorRT-LLM sweep whose script sizes --max_num_tokens as "
    "((MTP+1)*max_batch + ISL + 64) rounded up to 64, else leave it out",
    "config_dp_attention": "write true where the recipes run the configuration's dp-attn pools at attention DP, else leave it out",
    "dp_attention_ep": "write true where the launch scripts run attention-DP pools with DeepEP expert parallelism, "
    "else leave it out",
    "no_expert_parallel": "write true where the launch script never passes --enable-expert-parallel (and leave "
    "expert_parallel out), else leave it out",
    "expert_parallel": "write true where the launch script always passes --enable-expert-parallel, else leave it out",
}


@cache
def load_sweeps(path: Path = SWEEPS) -> tuple[Sweep, ...]:
    """The entries of ``path``.

    Raises:
        SpecError: malformed TOML, an unknown key, a missing field, a spec other than mtp/none, or an MTP entry
            without a positive draft length (naming the entry and the fix).
    """
    out = []
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as err:  # raised as it was, naming neither the file nor a fix
        raise SpecError(path.name, f"malformed TOML: {err}", "fix the TOML syntax") from None
    for i, e in enumerate(raw.get("sweep", [])):
        where = f"{path.name}: sweep[{i}]"
        if set(e) - _KEYS:
            raise SpecError(where, f"unknown key(s) {sorted(set(e) - _KEYS)}", f"use {', '.join(sorted(_KEYS))}")
        missing = {
            "system",
            "model",
            "engine",
            "version",
            "precision",
            "measured",
            "config_key",
            "spec",
            "source",
        } - set(e)
        if missing:
            raise SpecError(where, f"missing {sorted(missing)}", "give every field the file header lists")
        if e["spec"] not in ("mtp", "none"):
            raise SpecError(f"{where}.spec", repr(e["spec"]), 'use "mtp" or "none"')
        t = e.get("adp_balance_timeout_iters", 0)
        if isinstance(t, bool) or not isinstance(t, int) or t < 0:
            raise SpecError(
                f"{where}.adp_balance_timeout_iters",
                repr(t),
                "give the launch script's attention_dp_config timeout_iters (a whole number of steps)",
            )
        mb = e.get("max_batch_dp_attention", "")
        if mb != "" and (not isinstance(mb, str) or _MAX_BATCH.fullmatch(mb) is None):
            raise SpecError(
                f"{where}.max_batch_dp_attention",
                repr(mb),
                'write the launch script\'s per-rank max_batch_size as "conc/N" or "conc/dp" (N >= 1)',
            )
        if e.get("kv_dtype"):
            from jalapeno.specs.formats import get_kv_format

            try:
                get_kv_format(e["kv_dtype"])
            except JalapenoError as err:
                raise SpecError(f"{where}.kv_dtype", repr(e["kv_dtype"]), err.fix) from None
        if e.get("moe_backend"):
            from jalapeno.specs.moe_backends import check_moe_backend

            check_moe_backend(e["moe_backend"], f"{where}.moe_backend")
        if e.get("batch_wait_timeout_iters") or e.get("batch_wait_max_tokens_ratio"):
            from jalapeno.deploy.deployment import check_batch_wait

            check_batch_wait(
                e.get("batch_wait_timeout_iters", 0), e.get("batch_wait_max_tokens_ratio", 0.0), f"{where}."
            )
            if not e.get("batch_wait_workload") or not isinstance(e.get("batch_wait_from_concurrency"), int):
                raise SpecError(
                    f"{where}.batch_wait_workload",
                    "batch waiting without the workload and load it applies to",
                    'give batch_wait_workload (e.g. "1k1k") and batch_wait_from_concurrency (e.g. 64) '
                    "from the launch script's DELAY_BATCHING condition",
                )
        bt = e.get("batch_wait_below_tp", 0)
        if isinstance(bt, bool) or not isinstance(bt, int) or bt < 0:
            raise SpecError(
                f"{where}.batch_wait_below_tp",
                repr(bt),
                "give the TP the launch script's batch-waiting condition stays below (${TP} -lt N: N), or leave it out",
            )
        mb = e.get("max_num_batched_tokens", "")
        if mb != "" and (not isinstance(mb, str) or (m := _BATCHED.fullmatch(mb)) is None or int(m.group(1)) < 1):
            raise SpecError(
                f"{where}.max_num_batched_tokens",
                repr(mb),
                'write the launch script\'s --max-num-batched-tokens as "N" or "K*isl" (for $((ISL * K)))',
            )
        mf = e.get("memory_fraction", 0.0)
        if "memory_fraction" in e and (isinstance(mf, bool) or not isinstance(mf, (int, float)) or not 0 < mf <= 1):
            raise SpecError(
                f"{where}.memory_fraction",
                repr(mf),
                "give the launch script's --gpu-memory-utilization, a fraction in (0, 1]",
            )
        for key, fix in _FLAGS.items():  # a flag other than true/false, or one that contradicts the entry
            on = e.get(key, False)
            clash = on and (
                (key == "max_num_tokens_sized" and e["engine"] != "trtllm")
                or (key == "no_expert_parallel" and e.get("expert_parallel"))
            )
            if not isinstance(on, bool) or clash:
                raise SpecError(f"{where}.{key}", repr(on), fix)
        lt = e.get("low_latency_tp_chips", 0)
        if isinstance(lt, bool) or not isinstance(lt, int) or lt < 0 or lt == 1:
            raise SpecError(
                f"{where}.low_latency_tp_chips",
                repr(lt),
                "give the chips of the decode pools the low-latency scripts run at tensor parallelism "
                "(a whole number >= 2), or leave it out",
            )
        if e.get("decode_dp_dispatch", "balanced") not in DP_DISPATCH:
            raise SpecError(
                f"{where}.decode_dp_dispatch",
                repr(e["decode_dp_dispatch"]),
                f"write one of {', '.join(DP_DISPATCH)} (random: the decode server picks a rank per request "
                "at random), or leave it out",
            )
        if "dp_attention_from" in e:  # (workload, CONC) pairs
            from jalapeno.fit.aic_sweep_layouts import dp_attention_pairs as pairs

            e = {**e, "dp_attention_from": pairs(e["dp_attention_from"], f"{where}.dp_attention_from")}
        if e["spec"] == "mtp" and not (e.get("mtp_draft", 0) > 0 and e.get("mtp_draft_dp_attention", 0) > 0):
            raise SpecError(
                where,
                "an MTP sweep without draft lengths",
                "give mtp_draft and mtp_draft_dp_attention from its launch script",
            )
        out.append(Sweep(**{k: str(v) if k in ("version", "measured") else v for k, v in e.items()}))
    return tuple(out)


def measured_date(data_source: str) -> str:
    """The UTC date of ``measured=`` in a row's ``silicon_data_source`` ("" when absent).

    >>> measured_date("source_file=2026-03-25.csv; measured=2026-02-05T19:55:05Z; wip=False")
    '2026-02-05'
    """
    m = re.search(r"measured=(\d{4}-\d\d-\d\d)", str(data_source))
    return m.group(1) if m else ""


#: The release of an aiconfigurator row whose ``backend_version`` is blank: a named unknown, not pandas' "nan".
#: 868 of aiconfigurator-core 0.12.0's 5,221 rows (vLLM, SGLang and TensorRT-LLM; B200, GB200, H100, H200), from
#: InferenceX exports measured 2025-10-29 to 2026-04-02, none naming an image. Such a row's framework reads
#: "ENGINE unstated"; it takes no launch recipe's release (fit/validate.point_release: the recipes name today's
#: image, which may postdate the run: vLLM 0.18.0 for H100 gpt-oss rows of 2025-12-05, whose neighbours of
#: 2025-12-08 state 0.11.2), so its profile prices it at its newest behaviour (no version rule; specs/stacks.py);
#: rule D leaves it out (fit/aic_quality.py). Rules A and B and the repeat merge (fit/aic_duplicates.py) treat the
#: unstated rows of one deployment as one release (assumption: one export, one campaign).
UNSTATED_RELEASE = "unstated"


def row_release(version) -> str:
    """The release of a row's ``backend_version`` cell: the cell as text, :data:`UNSTATED_RELEASE` when blank.

    >>> row_release("0.11.2"), row_release(float("nan")), row_release(" "), row_release(None)
    ('0.11.2', 'unstated', 'unstated', 'unstated')
    """
    text = "" if version is None or (isinstance(version, float) and math.isnan(version)) else str(version).strip()
    return text or UNSTATED_RELEASE


def release_stated(framework: str) -> bool:
    """Whether a framework label "ENGINE RELEASE" names its release (not "vllm unstated", "vllm nan" or "vllm").

    >>> [release_stated(f) for f in ("vllm 0.12.0", "vllm unstated", "vllm nan", "vllm")]
    [True, False, False, False]
    """
    parts = str(framework).split()
    return len(parts) >= 2 and parts[-1].lower() not in (UNSTATED_RELEASE, "nan", "none", "")


def sweep_of(system: str, model: str, framework: str, precision: str, data_source: str) -> Sweep | None:
    """The sweep entry of a row (catalog ``system`` and ``model``, ``framework`` "ENGINE RELEASE",
    catalog ``precision``, its ``silicon_data_source``), or None.

    >>> sweep_of("b200", "deepseek-r1", "trtllm 1.2.0rc6.post3", "fp8", "measured=2026-02-05T00:00:00.000Z").config_key
    'dsr1-fp8-b200-trt-mtp'
    >>> sweep_of("b200", "deepseek-r1", "trtllm 1.2.0rc6.post3", "fp8", "measured=2026-02-04") is None
    True
    """
    date = measured_date(data_source)
    if not date:
        return None
    engine, _, version = framework.strip().partition(" ")
    version = version.strip() if release_stated(framework) else ""  # a row without a release: entries with version ""
    return next(
        (
            s
            for s in load_sweeps()
            if (s.system, s.model, s.engine, s.version, s.precision, s.measured)
            == (system, model, engine, version, precision, date)
        ),
        None,
    )
