"""A software stack: the fixed costs of a serving engine as a named, sourced profile (:class:`Stack`).

A stack is what the serving software adds to the kernels' work, independent of the chip's
efficiencies: the per-kernel launch/tail cost (``kernel_launch_s``) times the share of the op
table's kernels that launch separately (``fusion``: 1 for a GPU engine that graphs but does not
fuse across ops; below 1 for a whole-graph compiler), the software cost of a collective call
(``collective_launch_s``), the per-step cost outside kernels (``step_overhead_s``: scheduler,
sampling, input preparation), the front end a request passes before its first token
(``request_overhead_s`` + ``prompt_overhead_s_per_token`` x ISL: HTTP server, tokenisation,
hand-off), the engine's default compute/communication overlap and the MTP acceptance it reaches
on a model. Formulas: docs/model.md (fixed costs), docs/stacks.md (profiles, fits, the compiled
anchor).

A field left unset (``None``) keeps the value of the system's efficiency set (specs/efficiency.py),
so a stack changes only what it says. Each profile gives every value's source (``sources``) —
a fit on a declared split of end-to-end points (fit/stack_fit.py; the split and the held-out
error are in its ``fit`` table), a published figure, or a named assumption — and a ``low`` /
``high`` band per field (``low``: the slower end). Bands are plain named fields so that
sensitivity and audit can move them.

The profile named ``kernel`` sets every fixed cost to zero: kernel-level questions (what do the
kernels alone take?) without the engine. The shipped profiles (``data/stacks.toml``) are read,
validated and looked up by specs/stacks.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TypeVar

from jalapeno.errors import SpecError, check_bool
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.engine_versions import VersionRule, version_key

#: Fixed-cost fields a stack may set, each an :class:`~jalapeno.specs.efficiency.Efficiency` field
#: of the same name (seconds; seconds per prompt token).
COST_FIELDS: tuple[str, ...] = (
    "kernel_launch_s",
    "collective_launch_s",
    "step_overhead_s",
    "tp_rank_step_s",
    "request_overhead_s",
    "prompt_overhead_s_per_token",
    "first_wave_stall_s",
    "prompt_step_s_per_token",
)
#: Numeric fields with bands: the fixed costs and the fusion factor.
BAND_FIELDS: tuple[str, ...] = (*COST_FIELDS, "fusion")
#: The profile every system runs with unless told otherwise (the efficiency sets' own fixed costs).
DEFAULT_STACK = "default"
#: what :func:`memo_copy` copies (a Stack; a Precision in specs/fp4_checkpoint)
T = TypeVar("T")


def _empty() -> MappingProxyType:
    return MappingProxyType({})


_STACK_TAG = re.compile(r" \+ stack ")
#: A benchmark client's burst shares (Efficiency.prefill_burst_fraction, agg_burst_fraction): set by a
#: client entry only (specs/stacks.CLIENT_FIELDS, :meth:`Stack.for_client`), applied by :meth:`Stack.apply`.
BURST_FIELDS: tuple[str, ...] = ("prefill_burst_fraction", "agg_burst_fraction")
#: (id of a profile, client) -> (that profile, its copy with the client's front end); see Stack.for_client
_CLIENT_COPIES: dict[tuple[int, str], tuple] = {}
#: (id of a profile, engine version) -> (that profile, its copy at that version); see Stack.at_version
_VERSION_COPIES: dict[tuple[int, str], tuple] = {}
#: (id of a profile, "on"/"off") -> (that profile, its copy with the GEMM + all-reduce fusion set); see
#: Stack.with_gemm_allreduce_fusion
_FUSION_COPIES: dict[tuple[int, str], tuple] = {}
#: Behaviour fields a profile may state, each copied onto the Efficiency field of the same name (Stack.apply)
_BEHAVIOUR_FIELDS: tuple[str, ...] = (
    "moe_exchange",
    "all_reduce_table",
    "logits_bytes_per_elem",
    "gemm_allreduce_fusion",
    "allreduce_rms_fusion",
    "allreduce_rms_rule",
    "moe_width_term",
    "disagg_handshake",
    "disagg_router",
    "disagg_prebuilt",
    "tp_rank_step_dp",
    "kv_handoff_fanout",
    "fused_a_prefetch",
    "admission_lag_steps",
    "admission_lag_with_mtp",
)


def memo_copy(cache: dict, key: Hashable, profile: T, make: Callable[[], T]) -> T:
    """One copy of ``profile`` per ``key`` (``make()`` builds it), held in ``cache``: callers group points by stack
    identity (fit/validate.predict_points), so a fresh copy per point would solve each point alone. Keyed by the
    profile's id, checked to still be that profile (an id is reused once its object is freed); ``cache`` is cleared
    past 1024 entries. The one helper behind :meth:`Stack.at_version`, :meth:`Stack.for_client`,
    :meth:`Stack.with_gemm_allreduce_fusion`, fit/client_floor.with_client_floor and, for a Precision rather than
    a Stack, specs/fp4_checkpoint.checkpoint_precision.

    >>> cache, p = {}, Stack("demo", "a demo profile", "none")
    >>> a = memo_copy(cache, "v1", p, lambda: replace(p, name="demo@v1"))
    >>> a is memo_copy(cache, "v1", p, lambda: replace(p, name="other")), a.name, len(cache)
    (True, 'demo@v1', 1)
    """
    hit = cache.get((id(profile), key))
    if hit is None or hit[0] is not profile:
        if len(cache) > 1024:
            cache.clear()
        hit = cache[(id(profile), key)] = (profile, make())
    return hit[1]


@dataclass(frozen=True)
class Stack:
    """One serving-software profile (keys as documented in ``data/stacks.toml``).

    Attributes:
        name, label: short name (``--stack NAME``) and a readable description.
        engines: framework names of measured points this profile prices (``sglang``, ``trt``, ...).
        base: profile whose values this one inherits where it sets none ("" for none).
        kernel_launch_s, collective_launch_s, step_overhead_s, tp_rank_step_s, request_overhead_s,
            prompt_overhead_s_per_token, first_wave_stall_s, prompt_step_s_per_token: fixed costs (s, s per TP
            rank beyond the first, s per prompt token, s once per benchmark run, s per prompt token a step
            carries); None keeps the efficiency set's value.
        prefill_burst_fraction, agg_burst_fraction: share of a disaggregated / aggregated run's counted
            requests that meet a prefill burst (Efficiency); set by a client entry only, None = 1/R.
        fusion: share of the op table's kernels that launch separately (1: every kernel; the
            effective per-kernel cost is ``kernel_launch_s x fusion``).
        overlap: the engine's default two-batch overlap ("none", "tbo") or None (not stated).
        moe_exchange: the engine's MoE token exchange (specs/efficiency.MOE_EXCHANGE_NAMES), or None (the
            efficiency set's, ``all_to_all``).
        all_reduce_table: the engine whose measured all-reduce prices the TP all-reduces
            (specs/efficiency.ALL_REDUCE_TABLE_NAMES; cost/engine_allreduce.py), or None (the
            efficiency set's, ``none``: the link-hierarchy model).
        logits_bytes_per_elem: bytes per logit element the engine's LM-head TP all-gather moves
            (2: the model's BF16, cast to FP32 after the gather), or None (the efficiency set's, 2).
        gemm_allreduce_fusion: the engine fuses each row-parallel GEMM with its TP all-reduce
            (TensorRT-LLM's ``gemm_allreduce_plugin``; Efficiency.gemm_allreduce_fusion), or None (the
            efficiency set's, False). An engine build option: a measured point that declares it sets it
            with :meth:`with_gemm_allreduce_fusion`.
        allreduce_rms_fusion: the engine fuses each TP all-reduce with the residual add + RMSNorm after
            it (vLLM's ``pass_config.fuse_allreduce_rms``; Efficiency.allreduce_rms_fusion), or None (the
            efficiency set's); switched per launch script with :meth:`with_allreduce_rms_fusion`.
        allreduce_rms_rule: whose rule decides the steps that fusion covers (``vllm`` or ``sglang``;
            Efficiency.allreduce_rms_rule, cost/allreduce_rms.py), or None (the efficiency set's, ``vllm``).
        moe_width_term: the engine's routed-expert kernels pay the per-rank width term at MoE TP > 1
            (cost/moe_width.py, fitted on TensorRT-LLM's kernels; Efficiency.moe_width_term), or None
            (the efficiency set's, False).
        tp_rank_step_dp: the per-TP-rank step cost counts the attention-DP ranks too (the engine's executor
            group is attention TP x DP; Efficiency.tp_rank_step_dp), or None (the efficiency set's, False).
        kv_handoff_fanout: the disaggregated KV hand-off sends an MLA cache whole to every decode attention-TP
            rank (Efficiency.kv_handoff_fanout; serve/disagg.handoff_copies), or None (the efficiency set's, False).
        fused_a_prefetch: the engine's BF16 fused-A GEMM prefetches its weights under the MoE all-reduce before it
            (Efficiency.fused_a_prefetch; cost/ops.fused_a_cover), or None (the efficiency set's, False).
        admission_lag_steps: steps the engine's aggregated loop adds before a prompt it reads while busy can run
            (Efficiency.admission_lag_steps; serve/overlap_loop.admission_lag_s), or None (the efficiency set's, 0).
        admission_lag_with_mtp: the engine keeps that loop with MTP (Efficiency.admission_lag_with_mtp;
            serve/overlap_loop.lag_steps), or None (the efficiency set's, False).
        disagg_handshake: the engine's disaggregated handshake (specs/efficiency_params.DISAGG_HANDSHAKE_NAMES;
            serve/handshake.py), or None (the efficiency set's, ``none``).
        disagg_router: the front end's choice of decode worker (specs/efficiency_params.DISAGG_ROUTER_NAMES;
            serve/rr_wait.py), or None (the efficiency set's, ``load_aware``).
        disagg_prebuilt: an attention-DP decode rank's admitting iteration
            (specs/efficiency_params.DISAGG_PREBUILT_NAMES; serve/prebuilt_skip.py), or None (the efficiency
            set's, ``merge``).
        mtp_acceptance: model → {"single": alpha at one draft, "chain": alpha per token at >= 2}.
        low, high: band values of :data:`BAND_FIELDS` (low = slower).
        sources: field → where its value comes from.
        fit: the fit's report (split, n, errors) when the values were fitted.
        clients: benchmark client (a measured point's ``source``: ``inferencex``,
            ``aiconfigurator``) → its front end on this engine ({request_overhead_s,
            prompt_overhead_s_per_token, prefill_burst_fraction, agg_burst_fraction});
            :meth:`for_client` applies it. The profile's own front end is the one its ``sources``
            name (SGLang's: InferenceX's client).
    """

    name: str
    label: str
    source: str
    engines: tuple[str, ...] = ()
    base: str = ""
    kernel_launch_s: float | None = None
    collective_launch_s: float | None = None
    step_overhead_s: float | None = None
    tp_rank_step_s: float | None = None
    request_overhead_s: float | None = None
    prompt_overhead_s_per_token: float | None = None
    first_wave_stall_s: float | None = None
    prompt_step_s_per_token: float | None = None
    prefill_burst_fraction: float | None = None
    agg_burst_fraction: float | None = None
    fusion: float = 1.0
    overlap: str | None = None
    moe_exchange: str | None = None
    all_reduce_table: str | None = None
    logits_bytes_per_elem: float | None = None
    gemm_allreduce_fusion: bool | None = None
    allreduce_rms_fusion: bool | None = None
    allreduce_rms_rule: str | None = None
    moe_width_term: bool | None = None
    tp_rank_step_dp: bool | None = None
    kv_handoff_fanout: bool | None = None
    fused_a_prefetch: bool | None = None
    admission_lag_steps: float | None = None
    admission_lag_with_mtp: bool | None = None
    disagg_handshake: str | None = None
    disagg_router: str | None = None
    disagg_prebuilt: str | None = None
    mtp_acceptance: MappingProxyType = field(default_factory=_empty)
    low: MappingProxyType = field(default_factory=_empty)
    high: MappingProxyType = field(default_factory=_empty)
    sources: MappingProxyType = field(default_factory=_empty)
    fit: MappingProxyType = field(default_factory=_empty)
    default_for: tuple[str, ...] = ()
    clients: MappingProxyType = field(default_factory=_empty)
    version_rules: tuple[VersionRule, ...] = ()
    version: str = ""

    def at_version(self, version: str) -> Stack:
        """This profile as engine version ``version`` behaves: the :attr:`version_rules` whose
        range holds it applied, named ``NAME@VERSION`` (``--stack trtllm@1.1.0rc2.post2``).
        A profile without rules, or an empty ``version``, is returned unchanged.

        >>> r = VersionRule("moe_exchange", "nvlink_all_to_all_above_top_k", "", "1.2.0rc3", "src")
        >>> s = Stack("t", "t", "t", moe_exchange="nvlink_all_to_all", version_rules=(r,))
        >>> s.at_version("1.1.0rc2.post2").moe_exchange, s.at_version("1.2.0rc6.post3").moe_exchange
        ('nvlink_all_to_all_above_top_k', 'nvlink_all_to_all')

        Raises:
            SpecError: ``version`` is not a release number (``1.2.0rc6.post3``).
        """
        if not version or not self.version_rules:
            return self
        key = version_key(version, "engine version")

        def make() -> Stack:
            rules = [r for r in self.version_rules if r.holds(key)]
            srcs = {**self.sources, **{r.field: f"{self.name} {r.span}: {r.source}" for r in rules}}
            return replace(
                self,
                name=f"{self.name}@{version}",
                version=version,
                sources=MappingProxyType(srcs),
                **{r.field: r.value for r in rules},
            )

        return memo_copy(_VERSION_COPIES, version, self, make)

    def rules_at(self, version: str) -> tuple[VersionRule, ...]:
        """The version rules that apply at engine version ``version`` (none for "")."""
        if not version:
            return ()
        key = version_key(version, "engine version")
        return tuple(r for r in self.version_rules if r.holds(key))

    def version_note(self, version: str, off_fields: frozenset[str] = frozenset()) -> str:
        """What pinning engine release ``version`` does to this profile, in one sentence ("" for no
        version or a profile without rules): the rules whose range holds it, each with its range (a
        rule open below, ``< B``, covers every older release, ``0.0.1`` included), or that none does:
        the profile's own fields, its newest behaviour. A rule on a field in ``off_fields`` (the caller's:
        fields whose cost a shipped-off switch gates, cli/common.switched_off_fields) is said to be not charged.

        >>> r = VersionRule("moe_exchange", "a2a_above_top_k", "", "1.2.0rc3", "src")
        >>> s = Stack("t", "t", "t", moe_exchange="a2a", version_rules=(r,))
        >>> print(s.version_note("0.0.1"))  # doctest: +NORMALIZE_WHITESPACE
        t@0.0.1 takes the version rule moe_exchange = a2a_above_top_k (t < 1.2.0rc3); its other fields are
        the profile's newest behaviour
        >>> print(s.version_note("0.0.1", frozenset({"moe_exchange"})))  # doctest: +NORMALIZE_WHITESPACE
        t@0.0.1 takes the version rule moe_exchange = a2a_above_top_k (NOT CHARGED: its switch is off; t < 1.2.0rc3);
        its other fields are the profile's newest behaviour
        >>> print(s.version_note("2.0"))
        t@2.0 takes no version rule (t's rules: moe_exchange < 1.2.0rc3): the profile's newest behaviour

        Raises:
            SpecError: ``version`` is not a release number.
        """
        if not version or not self.version_rules:
            return ""
        rules = self.rules_at(version)
        if not rules:
            named = ", ".join(f"{r.field} {r.span}" for r in self.version_rules)
            return f"{self.name}@{version} takes no version rule ({self.name}'s rules: {named}): the profile's newest behaviour"
        off = {r.field: "NOT CHARGED: its switch is off; " if r.field in off_fields else "" for r in rules}
        applied = "; ".join(f"{r.field} = {r.value} ({off[r.field]}{self.name} {r.span})" for r in rules)
        return (
            f"{self.name}@{version} takes the version rule{'s' if len(rules) > 1 else ''} {applied}; its other "
            "fields are the profile's newest behaviour"
        )

    def for_client(self, client: str) -> Stack:
        """This profile with the front end measured through benchmark client ``client`` (its
        ``clients`` entry), else unchanged.

        >>> s = Stack("x", "x", "x", request_overhead_s=0.1, clients={"aic": {"request_overhead_s": 0.02}})
        >>> s.for_client("aic").request_overhead_s, s.for_client("other").request_overhead_s
        (0.02, 0.1)
        """
        front = self.clients.get(client)
        if not front:
            return self
        return memo_copy(
            _CLIENT_COPIES,
            client,
            self,
            lambda: replace(
                self,
                **front,
                sources=MappingProxyType(
                    {
                        **self.sources,
                        **{f: f"client {client}: {self.sources.get(f'clients.{client}', 'fitted')}" for f in front},
                    }
                ),
            ),
        )

    def with_gemm_allreduce_fusion(self, on: bool) -> Stack:
        """This profile with the GEMM + TP all-reduce fusion switched ``on`` (one copy per profile
        and setting, so points that share it are solved together), named ``NAME+gemm_ar`` when on.

        >>> s = Stack("x", "x", "x")
        >>> s.with_gemm_allreduce_fusion(True).name, s.with_gemm_allreduce_fusion(True) is s.with_gemm_allreduce_fusion(True)
        ('x+gemm_ar', True)

        Raises:
            SpecError: ``on`` is not a bool.
        """
        return self._switched(
            "gemm_allreduce_fusion",
            "+gemm_ar",
            "on",
            on,
            "pass True where the engine build declares the fused GEMM + all-reduce, else False",
        )

    def with_allreduce_rms_fusion(self, on: bool) -> Stack:
        """This profile with the all-reduce + residual add + RMSNorm fusion switched ``on`` (vLLM's
        ``--compilation_config.pass_config.fuse_allreduce_rms``; one copy per profile and setting), named
        ``NAME+ar_rms`` when on.

        >>> s = Stack("x", "x", "x")
        >>> s.with_allreduce_rms_fusion(True).name, s.with_allreduce_rms_fusion(True).with_allreduce_rms_fusion(False).name
        ('x+ar_rms', 'x')

        Raises:
            SpecError: ``on`` is not a bool.
        """
        return self._switched(
            "allreduce_rms_fusion",
            "+ar_rms",
            "ar_rms_on",
            on,
            "pass True where the launch script sets pass_config.fuse_allreduce_rms, else False",
        )

    def _switched(self, field: str, suffix: str, memo: str, on: bool, fix: str) -> Stack:
        """This profile with the engine switch ``field`` set to ``on``, ``suffix`` on its name when on (one
        memoised copy per profile and setting: ``memo`` when on, ``memo`` with "on" -> "off" when off).

        Raises:
            SpecError: ``on`` is not a bool (``fix`` says what to pass).
        """
        check_bool(field, on, fix)
        if bool(getattr(self, field)) == on:
            return self
        return memo_copy(
            _FUSION_COPIES,
            memo if on else memo.removesuffix("on") + "off",
            self,
            lambda: replace(self, name=f"{self.name}{suffix}" if on else self.name.removesuffix(suffix), **{field: on}),
        )

    def costs(self, which: str = "calibrated") -> dict[str, float]:
        """The fixed costs the profile sets (``which``: calibrated, low or high), kernel launch
        already multiplied by ``fusion``.

        >>> s = Stack("x", "x", "x", kernel_launch_s=4e-6, fusion=0.5, high={"kernel_launch_s": 2e-6})
        >>> s.costs()["kernel_launch_s"], s.costs("high")["kernel_launch_s"]
        (2e-06, 1e-06)

        Raises:
            SpecError: ``which`` is not calibrated, low or high.
        """
        band = {"calibrated": {}, "low": self.low, "high": self.high}.get(which)
        if band is None:
            raise SpecError("stack band", f"unknown band {which!r}", "use calibrated, low or high")
        vals = {f: band.get(f, getattr(self, f)) for f in BAND_FIELDS}
        out = {f: vals[f] for f in COST_FIELDS if vals[f] is not None}
        if "kernel_launch_s" in out:
            out["kernel_launch_s"] = out["kernel_launch_s"] * vals["fusion"]
        return out

    def apply(self, eff: Efficiency, which: str = "calibrated") -> Efficiency:
        """``eff`` with this profile's fixed costs (band ``which``) and the stack named in its source."""
        costs = self.costs(which)
        # a client's burst shares (for_client), not fixed costs
        costs = {**costs, **{f: getattr(self, f) for f in BURST_FIELDS if getattr(self, f) is not None}}
        stated = {f: getattr(self, f) for f in _BEHAVIOUR_FIELDS if getattr(self, f) is not None}
        changed = {f: v for f, v in stated.items() if v != getattr(eff, f)}
        if changed:
            eff = replace(eff, **changed)
        if self.name == DEFAULT_STACK and which == "calibrated" or not costs:
            return eff
        base = _STACK_TAG.split(eff.source)[0]
        return replace(
            eff.with_overrides(costs, f"stack {self.name}"),
            source=f"{base} + stack {self.name}" + ("" if which == "calibrated" else f" ({which})"),
        )

    def acceptance(self, model: str, draft_tokens: int) -> float | None:
        """MTP per-token acceptance on ``model`` at ``draft_tokens`` drafts (None: not given)."""
        a = self.mtp_acceptance.get(model)
        if a is None:
            return None
        return a.get("single" if draft_tokens == 1 else "chain")

    @property
    def has_band(self) -> bool:
        """True when the profile's low or high band differs from its value (the ``default``
        profile's band is data for sensitivity and audit, not swept by ``compare --bands``)."""
        return self.name != DEFAULT_STACK and any(
            self.low.get(f, getattr(self, f)) != getattr(self, f)
            or self.high.get(f, getattr(self, f)) != getattr(self, f)
            for f in BAND_FIELDS
        )
