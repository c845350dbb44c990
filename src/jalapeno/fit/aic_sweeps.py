"""The InferenceX sweep behind a group of aiconfigurator ``silicon_sample.csv`` rows, and its MTP use.

aiconfigurator-core 0.12.0's sample does not record speculative decoding, yet several of its
TensorRT-LLM DeepSeek-R1 groups are InferenceX MTP sweeps: the rows' ``measured=`` time is the
commit time of the InferenceX change that triggered the sweep, and that change's perf-changelog
names the configurations it ran (``data/validation/aic_sweeps.toml``, each entry with its commit,
changelog keys and launch script). :func:`sweep_of` finds a row's entry; :func:`with_sweep_mtp` the MTP
its launch script ran at the row's layout; :func:`with_sweep_launch` the launch script's attention-DP
context balancing and running cap on an attention-DP row (TensorRT-LLM ``attention_dp_config``, the
mechanism of serve/queueing.adp_balance_wait_s, which the engine recipes already carry);
:func:`with_sweep_kernels` the KV-cache dtype and MoE kernel backend the launch script sets (the
engine recipes' ``kv_dtype`` and ``moe_backend``); :func:`with_sweep_batch_wait` the script's TensorRT-LLM
batch waiting (serve/batch_wait.py); fit/aic_sweep_layouts.with_sweep_expert_parallel the MoE expert parallelism a vLLM
script turns on (or never turns on) whatever the configuration's ``ep``; :func:`with_sweep_limits` a vLLM script's
``--max-num-batched-tokens`` and ``--gpu-memory-utilization``; :func:`with_sweep_token_limit` a TensorRT-LLM script's
``--max_num_tokens`` sized to the load (one whole prompt a step).
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from jalapeno.deploy.layout import DP_DISPATCH
from jalapeno.deploy.memory_fit import driver_share_as_usable
from jalapeno.deploy.recipe import DraftRule
from jalapeno.errors import JalapenoError, SpecError
from jalapeno.specs.efficiency import Efficiency

SWEEPS = Path(__file__).resolve().parents[1] / "data" / "validation" / "aic_sweeps.toml"
_KEYS = {"system", "model", "engine", "version", "precision", "measured", "config_key", "spec", "mtp_draft",
         "mtp_draft_dp_attention", "source", "adp_balance_timeout_iters", "max_batch_dp_attention", "kv_dtype",
         "moe_backend", "batch_wait_timeout_iters", "batch_wait_max_tokens_ratio", "batch_wait_workload",
         "batch_wait_from_concurrency", "batch_wait_below_tp", "expert_parallel", "max_num_batched_tokens", "memory_fraction",
         "dp_attention_ep", "low_latency_tp_chips", "no_expert_parallel", "decode_dp_dispatch",
         "max_num_tokens_sized", "config_dp_attention", "dp_attention_from"}
#: ``max_batch_dp_attention``: the launch script's per-rank ``max_batch_size`` under attention DP as
#: ``conc/N`` (CONC / N, CONC itself below N: ``$(( CONC < N ? CONC : CONC / N ))``) or ``conc/dp``
#: (``$((CONC/TP))`` with TP the attention-DP degree).
_MAX_BATCH = re.compile(r"conc/(\d+|dp)")
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
    #: is k = 0), and sets no chunked prefill (:func:`with_sweep_token_limit`); False = the script passes 8192 or more
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
        SpecError: an unknown key, a missing field, a spec other than mtp/none, or an MTP entry
            without a positive draft length (naming the entry and the fix).
    """
    out = []
    for i, e in enumerate(tomllib.loads(path.read_text()).get("sweep", [])):
        where = f"{path.name}: sweep[{i}]"
        if set(e) - _KEYS:
            raise SpecError(where, f"unknown key(s) {sorted(set(e) - _KEYS)}", f"use {', '.join(sorted(_KEYS))}")
        missing = {"system", "model", "engine", "version", "precision", "measured", "config_key", "spec",
                   "source"} - set(e)
        if missing:
            raise SpecError(where, f"missing {sorted(missing)}", "give every field the file header lists")
        if e["spec"] not in ("mtp", "none"):
            raise SpecError(f"{where}.spec", repr(e["spec"]), 'use "mtp" or "none"')
        t = e.get("adp_balance_timeout_iters", 0)
        if isinstance(t, bool) or not isinstance(t, int) or t < 0:
            raise SpecError(f"{where}.adp_balance_timeout_iters", repr(t),
                            "give the launch script's attention_dp_config timeout_iters (a whole number of steps)")
        mb = e.get("max_batch_dp_attention", "")
        if mb != "" and (not isinstance(mb, str) or _MAX_BATCH.fullmatch(mb) is None):
            raise SpecError(f"{where}.max_batch_dp_attention", repr(mb),
                            'write the launch script\'s per-rank max_batch_size as "conc/N" or "conc/dp"')
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

            check_batch_wait(e.get("batch_wait_timeout_iters", 0), e.get("batch_wait_max_tokens_ratio", 0.0), f"{where}.")
            if not e.get("batch_wait_workload") or not isinstance(e.get("batch_wait_from_concurrency"), int):
                raise SpecError(f"{where}.batch_wait_workload", "batch waiting without the workload and load it applies to",
                                'give batch_wait_workload (e.g. "1k1k") and batch_wait_from_concurrency (e.g. 64) '
                                "from the launch script's DELAY_BATCHING condition")
        bt = e.get("batch_wait_below_tp", 0)
        if isinstance(bt, bool) or not isinstance(bt, int) or bt < 0:
            raise SpecError(f"{where}.batch_wait_below_tp", repr(bt),
                            "give the TP the launch script's batch-waiting condition stays below (${TP} -lt N: N), "
                            "or leave it out")
        mb = e.get("max_num_batched_tokens", "")
        if mb != "" and (not isinstance(mb, str) or (m := _BATCHED.fullmatch(mb)) is None or int(m.group(1)) < 1):
            raise SpecError(f"{where}.max_num_batched_tokens", repr(mb),
                            'write the launch script\'s --max-num-batched-tokens as "N" or "K*isl" (for $((ISL * K)))')
        mf = e.get("memory_fraction", 0.0)
        if "memory_fraction" in e and (isinstance(mf, bool) or not isinstance(mf, (int, float)) or not 0 < mf <= 1):
            raise SpecError(f"{where}.memory_fraction", repr(mf),
                            "give the launch script's --gpu-memory-utilization, a fraction in (0, 1]")
        for key, fix in _FLAGS.items():  # a flag other than true/false, or one that contradicts the entry
            on = e.get(key, False)
            clash = on and ((key == "max_num_tokens_sized" and e["engine"] != "trtllm")
                            or (key == "no_expert_parallel" and e.get("expert_parallel")))
            if not isinstance(on, bool) or clash:
                raise SpecError(f"{where}.{key}", repr(on), fix)
        lt = e.get("low_latency_tp_chips", 0)
        if isinstance(lt, bool) or not isinstance(lt, int) or lt < 0 or lt == 1:
            raise SpecError(f"{where}.low_latency_tp_chips", repr(lt),
                            "give the chips of the decode pools the low-latency scripts run at tensor parallelism "
                            "(a whole number >= 2), or leave it out")
        if e.get("decode_dp_dispatch", "balanced") not in DP_DISPATCH:
            raise SpecError(f"{where}.decode_dp_dispatch", repr(e["decode_dp_dispatch"]),
                            f"write one of {', '.join(DP_DISPATCH)} (random: the decode server picks a rank per request "
                            "at random), or leave it out")
        if "dp_attention_from" in e:  # (workload, CONC) pairs
            from jalapeno.fit.aic_sweep_layouts import dp_attention_pairs as pairs
            e = {**e, "dp_attention_from": pairs(e["dp_attention_from"], f"{where}.dp_attention_from")}
        if e["spec"] == "mtp" and not (e.get("mtp_draft", 0) > 0 and e.get("mtp_draft_dp_attention", 0) > 0):
            raise SpecError(where, "an MTP sweep without draft lengths",
                            "give mtp_draft and mtp_draft_dp_attention from its launch script")
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
    return next((s for s in load_sweeps() if (s.system, s.model, s.engine, s.version, s.precision, s.measured)
                 == (system, model, engine, version, precision, date)), None)


def with_sweep_mtp(dep, sweep: Sweep | None, acceptance_single: float, acceptance_chain: float):
    """(deployment, spec, note) of a row its sweep ran: ``dep`` (deploy/deployment.Deployment) with the
    sweep's MTP at its layout (acceptance ``acceptance_single`` for one draft token, ``acceptance_chain``
    per token for more: the validation's stated assumptions), the sweep's spec ("mtp"/"none"; "" without
    a sweep) and a note naming the sweep ("" without one).
    """
    if sweep is None or dep is None:
        return dep, "", ""
    k = sweep.draft_tokens(dep.decode.layout.dp)
    if not k:
        return dep, sweep.spec, f"InferenceX sweep {sweep.config_key} (no MTP; data/validation/aic_sweeps.toml)"
    from jalapeno.deploy.deployment import MTP

    mtp = MTP(k, acceptance_single if k == 1 else acceptance_chain)
    return (replace(dep, mtp=mtp), "mtp", f"InferenceX MTP sweep {sweep.config_key}: MTP{k} (its launch script), "
            f"acceptance {mtp.acceptance} assumed (data/validation/aic_sweeps.toml)")


def with_sweep_launch(dep, sweep: Sweep | None, concurrency: float):
    """(deployment, note) of an aggregated attention-DP row its sweep ran: ``dep`` with the launch script's
    TensorRT-LLM attention-DP context balancing (``adp_balance_timeout_iters``: each rank holds its new
    prompts until every rank has one, at most that many steps; serve/queueing.adp_balance_wait_s) and, where
    the script passes one, its running cap (``max_running`` = dp x the per-rank ``max_batch_size`` at the
    row's ``concurrency``: whether the slots are full decides how new requests reach the ranks). Rows
    without attention DP, disaggregated rows and sweeps whose script sets no balancing are returned as
    they are, with "".

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("b200", "deepseek-r1", "trtllm", "1", "fp4", "2026-01-01", "k", "mtp", "", 3, 1, 60, "conc/4")
    >>> d, note = with_sweep_launch(Deployment(get_precision("fp4"), Pool(Layout(tp=1, dp=4, ep=4))), s, 256)
    >>> d.adp_balance_timeout_iters, d.max_running
    (60, 256)
    >>> with_sweep_launch(Deployment(get_precision("fp4"), Pool(Layout(tp=4, ep=4))), s, 256)[0].max_running is None
    True
    """
    if sweep is None or dep is None or dep.prefill is not None or not sweep.adp_balance_timeout_iters:
        return dep, ""
    dp = dep.decode.layout.dp
    if dp <= 1:
        return dep, ""
    kw = {"adp_balance_timeout_iters": sweep.adp_balance_timeout_iters}
    per_rank = sweep.max_batch_per_rank(concurrency, dp)
    if per_rank is not None:
        kw["max_running"] = per_rank * dp
    cap = f", max_batch_size {per_rank} per rank ({sweep.max_batch_dp_attention})" if per_rank is not None else ""
    return replace(dep, **kw), (f"attention-DP context balancing, timeout_iters {sweep.adp_balance_timeout_iters}{cap}: "
                                f"InferenceX sweep {sweep.config_key}'s launch script (data/validation/aic_sweeps.toml)")


def with_sweep_batch_wait(dep, sweep: Sweep | None, isl: int, osl: int, concurrency: float):
    """(deployment, note) of an aggregated row without attention DP that its sweep's launch script ran with
    TensorRT-LLM batch waiting (its ``DELAY_BATCHING``: ``batch_wait_timeout_iters`` and
    ``batch_wait_max_tokens_ratio`` on one workload from one concurrency up, below one TP where the script
    says so: ``batch_wait_below_tp``; serve/batch_wait.py); ``dep`` and "" otherwise (TensorRT-LLM skips the
    hold under attention DP).

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("b200", "deepseek-r1", "trtllm", "1", "fp8", "2026-01-01", "k", "none", "",
    ...           batch_wait_timeout_iters=40, batch_wait_max_tokens_ratio=0.8, batch_wait_workload="1k1k",
    ...           batch_wait_from_concurrency=64)
    >>> d = Deployment(get_precision("fp8"), Pool(Layout(tp=8)))
    >>> with_sweep_batch_wait(d, s, 1024, 1024, 64)[0].batch_wait_timeout_iters
    40
    >>> with_sweep_batch_wait(d, s, 1024, 1024, 32)[0].batch_wait_timeout_iters  # below the script's CONC 64
    0
    >>> s8 = replace(s, batch_wait_from_concurrency=1, batch_wait_below_tp=8)  # the Llama-70B scripts' TP < 8
    >>> [with_sweep_batch_wait(Deployment(get_precision("fp8"), Pool(Layout(tp=t))), s8, 1024, 1024, 4)[0]
    ...  .batch_wait_timeout_iters for t in (4, 8)]
    [40, 0]
    """
    from jalapeno.deploy.recipe import workload_key

    if (sweep is None or dep is None or dep.prefill is not None or not sweep.batch_wait_timeout_iters
            or dep.decode.layout.dp > 1 or workload_key(isl, osl) != sweep.batch_wait_workload
            or concurrency < sweep.batch_wait_from_concurrency
            or (sweep.batch_wait_below_tp and dep.decode.layout.tp >= sweep.batch_wait_below_tp)):
        return dep, ""
    return (replace(dep, batch_wait_timeout_iters=sweep.batch_wait_timeout_iters,
                    batch_wait_max_tokens_ratio=sweep.batch_wait_max_tokens_ratio),
            f"batch waiting {sweep.batch_wait_timeout_iters} steps / {sweep.batch_wait_max_tokens_ratio:g} of "
            f"max_num_tokens: InferenceX sweep {sweep.config_key}'s launch script (data/validation/aic_sweeps.toml)")


def with_sweep_kernels(dep, sweep: Sweep | None):
    """(deployment, note) of a row its sweep ran: ``dep`` with the launch script's KV-cache dtype
    (``kv_dtype``: the precision's KV format replaced) and MoE kernel backend (``moe_backend``: the decode
    pool's, priced by cost/pricer.with_moe_backend where the system measured it); ``dep`` and "" when the
    sweep sets neither (or there is no sweep).

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("b200", "gpt-oss-120b", "trtllm", "1", "mxfp4", "2026-01-01", "k", "none", "", kv_dtype="fp8_e4m3",
    ...           moe_backend="trtllm")
    >>> d, note = with_sweep_kernels(Deployment(get_precision("mxfp4"), Pool(Layout(tp=2))), s)
    >>> d.precision.kv_cache.name, d.decode.moe_backend
    ('fp8', 'trtllm')
    """
    if sweep is None or dep is None or not (sweep.kv_dtype or sweep.moe_backend):
        return dep, ""
    kw, said = {}, []
    if sweep.kv_dtype:
        kw["precision"] = dep.precision.with_options(kv=sweep.kv_dtype)
        said.append(f"KV cache {sweep.kv_dtype}")
    if sweep.moe_backend:
        kw["decode"] = replace(dep.decode, moe_backend=sweep.moe_backend)
        said.append(f"MoE backend {sweep.moe_backend}")
    return replace(dep, **kw), f"{', '.join(said)}: InferenceX sweep {sweep.config_key}'s launch script (data/validation/aic_sweeps.toml)"


def with_sweep_limits(dep, sweep: Sweep | None, isl: int):
    """(deployment, note) of an aggregated row whose sweep's vLLM launch script sets
    ``--max-num-batched-tokens`` (a TensorRT-LLM one ``--max_num_tokens``, the same per-step limit) or
    ``--gpu-memory-utilization``: ``dep`` with that many tokens per step
    (the scheduler counts decode rows and prompt chunks against it: ``max_tokens_per_step``, and
    ``token_budget`` for the chunk alone) at input length ``isl``, and that utilization as a share of usable HBM
    (deploy/memory_fit.driver_share_as_usable: vLLM's default 0.9 of the driver memory is the set's default 0.96 of
    usable HBM); ``dep`` and "" when the sweep sets neither, or for a disaggregated row.

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("b200", "minimax-m2.5", "vllm", "0.19.0", "fp8", "2026-04-22", "k", "none", "",
    ...           max_num_batched_tokens="2*isl", memory_fraction=0.9)
    >>> d, note = with_sweep_limits(Deployment(get_precision("fp8"), Pool(Layout(tp=4))), s, 8192)
    >>> d.token_budget, d.max_tokens_per_step, round(d.memory_fraction, 4)
    (16384, 16384, 0.96)
    """
    if sweep is None or dep is None or dep.prefill is not None:
        return dep, ""
    kw, said = {}, []
    n = sweep.batched_tokens(isl)
    if n is not None:
        kw.update(token_budget=n, max_tokens_per_step=n)
        flag = "--max_num_tokens" if sweep.engine == "trtllm" else "--max-num-batched-tokens"
        said.append(f"{flag} {n} ({sweep.max_num_batched_tokens})")
    if sweep.memory_fraction:  # a share of the driver's memory, as a share of usable HBM (these rows have no profile)
        kw["memory_fraction"] = driver_share_as_usable(sweep.memory_fraction, Efficiency())
        said.append(f"--gpu-memory-utilization {sweep.memory_fraction:g} ({kw['memory_fraction']:.3g} of usable HBM)")
    if not kw:
        return dep, ""
    return replace(dep, **kw), f"{', '.join(said)}: InferenceX sweep {sweep.config_key}'s launch script (data/validation/aic_sweeps.toml)"


#: TensorRT-LLM's ``max_num_tokens`` granule in InferenceX's sizing, ``$(( (N + 63) / 64 * 64 ))``, and the slack
#: the scripts add (``+64``): SemiAnalysisAI/InferenceX benchmarks/dsr1_fp4_b200_trt_slurm.sh @9596d23d7, @d22bf9ca9
#: (``MAX_NUM_TOKENS=$(( ($CONC+$ISL+64+63)/64*64 ))``), dsr1_fp{4,8}_b200_trt_mtp_slurm.sh @bf3456727 and
#: dsr1_fp{4,8}_b200_trt_mtp.sh @0aae52d4c / @5d517074c (``$(( ((MTP+1)*MAX_BATCH_SIZE+ISL+64+63)/64*64 ))``)
SIZED_TOKENS_ROUND = 64
SIZED_TOKENS_SLACK = 64


def sized_max_num_tokens(concurrency: float, isl: int, draft_tokens: int) -> int:
    """The script's ``--max_num_tokens`` T = ⌈((k + 1)·C + ISL + 64)/64⌉·64 at concurrency C (its max_batch_size
    without attention DP), input length ``isl`` and k = ``draft_tokens`` (tokens per step).

    >>> sized_max_num_tokens(256, 1024, 0), sized_max_num_tokens(64, 1024, 3), sized_max_num_tokens(4, 8192, 0)
    (1344, 1344, 8320)
    """
    n = (draft_tokens + 1) * max(int(math.ceil(concurrency)), 1) + int(isl) + SIZED_TOKENS_SLACK
    return -(-n // SIZED_TOKENS_ROUND) * SIZED_TOKENS_ROUND


def with_sweep_token_limit(dep, sweep: Sweep | None, isl: int, concurrency: float):
    """(deployment, note) of an aggregated row whose TensorRT-LLM script sizes ``--max_num_tokens`` to the load
    (``max_num_tokens_sized``): ``max_tokens_per_step`` T (:func:`sized_max_num_tokens`) and a prompt budget of one
    whole prompt a step (``token_budget`` = ISL), each per attention-DP rank; ``dep`` and "" otherwise.

    Why one prompt: the scripts set no ``enable_chunked_prefill`` (off by default: NVIDIA/TensorRT-LLM
    tensorrt_llm/llmapi/llm_args.py, ``enable_chunked_prefill: bool = Field(default=False, ...)``), so the micro-batch
    scheduler takes a context request whole or not at all (NVIDIA/TensorRT-LLM
    cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp, "skip chunking": ``if (maxNumTokensRuntime &&
    batchNumTokens + reqNumTokens > maxNumTokensRuntime.value()) break;``), after the running sequences' (k + 1)
    rows each. With the batch full those take (k + 1)·C of T, leaving ISL + 64..127 tokens: room for one prompt of
    at most ISL tokens and never two (two prompts of InferenceX's [0.8·ISL, ISL] need 1.6·ISL). An idle-start wave
    of C prompts is then C steps long, where the default 8192-token budget holds seven to eight 1k prompts a step.
    Assumption: the prompt budget is ISL tokens, so the model's chunked wave (serve/queueing.first_wave_s) carries
    ISL/mean ISL ≈ 1.1 of the [0.8·ISL, ISL] prompts a step, slightly more than the engine's one.

    Under attention DP each rank runs its own scheduler with its own T (NVIDIA/TensorRT-LLM: one PyExecutor per rank,
    fit/aic_rows.RANK_BUDGET_BACKENDS), sized by the script from its ``max_batch_size`` B (the per-rank
    ``max_batch_dp_attention`` where the script passes one: dsr1_fp8_h200_trt_mtp_slurm.sh @bf3456727
    ``MAX_BATCH_SIZE=$((CONC/TP))`` before ``MAX_NUM_TOKENS``; CONC in the non-MTP scripts, which pass none): one
    whole prompt a rank a step, written as instance totals (T·dp, ISL·dp with ``budget_per`` "instance", so that
    Deployment.prompt_budget gives ISL a rank and the running cap keeps its meaning). The 1.2.0rc6 non-MTP
    scripts floor T at 8192 (``MAX_NUM_TOKENS > 8192 ? MAX_NUM_TOKENS : 8192``, dsr1_fp4_b200_trt.sh @6eecc0e66): the
    default budget, so those sweeps leave the field out. At ISL 8k the prompt budget equals the default 8192 either way.

    >>> from jalapeno.deploy.deployment import Deployment, MTP, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("b200", "deepseek-r1", "trtllm", "", "fp4", "2025-11-02", "k", "none", "", max_num_tokens_sized=True)
    >>> d, note = with_sweep_token_limit(Deployment(get_precision("fp4"), Pool(Layout(tp=8))), s, 1024, 256)
    >>> d.max_tokens_per_step, d.token_budget
    (1344, 1024)
    >>> d = Deployment(get_precision("fp4"), Pool(Layout(tp=8)), mtp=MTP(3, 0.75))
    >>> with_sweep_token_limit(d, s, 1024, 64)[0].max_tokens_per_step  # (3 + 1)·64 + 1024 + 64, to 64
    1344
    >>> d = with_sweep_token_limit(Deployment(get_precision("fp4"), Pool(Layout(dp=8, ep=8))), s, 1024, 256)[0]
    >>> d.max_tokens_per_step, d.token_budget, d.prompt_budget(d.decode.layout)  # 1344 and 1024 a rank
    (10752, 8192, 1024.0)
    """
    if sweep is None or dep is None or not sweep.max_num_tokens_sized or dep.prefill is not None:
        return dep, ""
    k = dep.mtp.draft_tokens if dep.mtp is not None else 0
    dp = dep.decode.layout.dp
    per_rank = sweep.max_batch_per_rank(concurrency, dp) if dp > 1 else None
    t = sized_max_num_tokens(concurrency if per_rank is None else per_rank, isl, k)
    if dp > 1:  # one scheduler per rank: the rank's T and one whole prompt, as instance totals (budget_per "instance")
        return (replace(dep, max_tokens_per_step=t * dp, token_budget=int(isl) * dp),
                f"--max_num_tokens {t} per attention-DP rank ((k + 1)·{'CONC' if per_rank is None else 'max_batch'} + "
                f"ISL + 64, to 64), no chunked prefill: one whole prompt a rank a step (token budget {int(isl)} a rank, "
                f"x{dp}): InferenceX sweep {sweep.config_key}'s launch script (data/validation/aic_sweeps.toml)")
    return (replace(dep, max_tokens_per_step=t, token_budget=int(isl)),
            f"--max_num_tokens {t} ((k + 1)·CONC + ISL + 64, to 64), no chunked prefill: one whole prompt a step "
            f"(token budget {int(isl)}): InferenceX sweep {sweep.config_key}'s launch script (data/validation/aic_sweeps.toml)")
