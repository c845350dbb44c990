"""Parallel layout of one model instance: attention TP x attention DP, MoE EP, PP, CP.

Convention (SGLang/TRT-LLM "DP attention" style): one pipeline stage holds ``tp * dp`` chips.
Attention runs tensor-parallel inside groups of ``tp`` chips and data-parallel across ``dp`` such
groups (each group owns its sequences). MoE layers run expert-parallel over ``ep`` chips with
the remaining factor ``moe_tp = tp * dp / ep`` as tensor parallelism inside each expert. Dense
FFN layers, the shared expert and the LM head are tensor-parallel over the ``tp`` group and
replicated across ``dp``. ``pp`` stages split the layers. Context parallelism ``cp`` (prefill
only) splits every prompt's tokens over ``cp`` replicas of a stage's ``tp * dp`` chips, each
holding the same (TP/EP-sharded) weights and its share of the prompt's KV cache; attention
exchanges KV blocks around the CP ring (Liu et al. 2023, Ring Attention; Megatron-LM context
parallelism; SGLang prefill CP; vLLM ``prefill_context_parallel_size``). Chips per instance =
tp * dp * cp * pp. Placement is contiguous, innermost first: TP, then DP/EP, then CP, then PP
(see cost/collectives.py).
``eplb`` (None = off) turns on the expert-parallel load balancer with that many redundant expert
slots (DeepSeek EPLB; SGLang ``--ep-num-redundant-experts``, vLLM ``--num-redundant-experts``):
the E + R slots are spread evenly over the EP ranks (deploy/eplb.py places them).
``dp_dispatch`` says how the engine spreads requests over the attention-DP ranks: ``balanced``
(round robin, the default) or ``random`` (each request on a uniformly drawn rank, as a disaggregated
SGLang decode server did before PR #16110; cost/adp_rank.busiest_rank_decode prices the fullest rank) or ``refill``
(every rank at its running cap: decodes balanced, each new prompt on the random rank whose request finished;
cost/adp_rank.busiest_rank_prompts).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from numbers import Integral

from jalapeno.errors import InfeasibleDeployment, choice_hint
from jalapeno.specs.hardware import System
from jalapeno.specs.model import ModelSpec

#: how an engine spreads requests over attention-DP ranks (Layout.dp_dispatch; module docstring)
DP_DISPATCH = ("balanced", "random", "refill")


@dataclass(frozen=True, slots=True)
class Layout:
    """Parallel degrees of one model instance (all >= 1), and the EPLB redundant experts.

    Attributes:
        tp, dp, ep, pp: attention TP, attention DP, MoE EP, pipeline stages (module docstring).
        cp: context parallelism: prompt tokens split over ``cp`` replicas of the ``tp * dp``
            stage (prefill workers only; a deployment's decode pool must keep cp = 1).
        eplb: redundant expert slots of the expert-parallel load balancer (None = off).
        dp_dispatch: how requests are spread over the attention-DP ranks (:data:`DP_DISPATCH`).
    """

    tp: int = 1
    dp: int = 1
    ep: int = 1
    pp: int = 1
    cp: int = 1
    eplb: int | None = None
    moe: bool = field(default=True, compare=False)
    dp_dispatch: str = "balanced"

    def __post_init__(self) -> None:
        """Read a numpy integer degree as the int it is: ``Layout(tp=np.int64(8))`` (a degree taken from an
        array) was refused as 'must be a positive integer, got np.int64(8)' where the rest of the API reads
        numpy scalars (tests/bad_inputs/test_good_input38.py; break52). Other values are judged by
        :func:`validate_layout`."""
        if (
            type(self.tp) is int
            and type(self.dp) is int
            and type(self.ep) is int
            and type(self.pp) is int
            and type(self.cp) is int
            and (self.eplb is None or type(self.eplb) is int)
        ):
            return  # every degree an int: the path of every Layout a sweep builds, kept to a few attribute reads
        for name in ("tp", "dp", "ep", "pp", "cp", "eplb"):
            v = getattr(self, name)
            if isinstance(v, Integral) and not isinstance(v, int):
                object.__setattr__(self, name, int(v))

    @property
    def stage_chips(self) -> int:
        """Chips of one context-parallel rank of one pipeline stage (tp * dp): the EP/DP group."""
        return self.tp * self.dp

    @property
    def cp_span(self) -> int:
        """Chips one pipeline stage spans, all CP ranks included (tp * dp * cp)."""
        return self.tp * self.dp * self.cp

    @property
    def chips(self) -> int:
        """Chips in the whole instance (tp * dp * cp * pp)."""
        return self.tp * self.dp * self.cp * self.pp

    @property
    def moe_tp(self) -> int:
        """Tensor parallelism inside each expert (tp * dp / ep)."""
        return self.stage_chips // self.ep

    @property
    def label(self) -> str:
        """Attention parallelism, then MoE parallelism, in the field's terms (docs/metrics.md §1.1):
        ``attn TP<tp> DP<dp> · MoE TP<moe_tp> EP<ep>``, then ``EPLB+R``, ``· CP<cp>``, ``· PP<pp>``
        where used. A dense model (``moe=False``) names its FFN instead: ``attn TP<tp> DP<dp> ·
        FFN TP<tp>`` (dense FFN layers run TP over the attention group, replicated over DP).
        Engines' short forms: DEP8 = attn TP1 DP8 · MoE TP1 EP8; TEP8 = attn TP8 DP1 · MoE TP1 EP8;
        TP8 = attn TP8 DP1 · MoE TP8 EP1.

        >>> Layout(dp=4).label
        'attn TP1 DP4 · MoE TP4 EP1'
        >>> Layout(tp=2, dp=32, ep=64, pp=2, eplb=64).label
        'attn TP2 DP32 · MoE TP1 EP64 EPLB+64 · PP2'
        >>> Layout(tp=8, moe=False).label
        'attn TP8 DP1 · FFN TP8'
        """
        attn = f"attn TP{self.tp} DP{self.dp}"
        if self.moe:
            ok = isinstance(self.ep, int) and self.ep >= 1 and self.stage_chips % self.ep == 0
            ffn = f"MoE TP{self.moe_tp if ok else '?'} EP{self.ep}" + (
                f" EPLB+{self.eplb}" if self.eplb is not None else ""
            )
        else:
            ffn = f"FFN TP{self.tp}"
        parts = [attn, ffn]
        if self.cp > 1:
            parts.append(f"CP{self.cp}")
        if self.pp > 1:
            parts.append(f"PP{self.pp}")
        if self.dp_dispatch != "balanced" and self.dp > 1:
            parts.append(f"DP dispatch {self.dp_dispatch}")
        return " · ".join(parts)

    def as_dict(self) -> dict[str, int | str]:
        """The layout as JSON: tp, dp, ep, pp, cp and the EPLB / dispatch settings where they are set."""
        d = {"tp": self.tp, "dp": self.dp, "ep": self.ep, "pp": self.pp, "cp": self.cp}
        if self.eplb is not None:
            d["eplb_redundant_experts"] = self.eplb
        if self.dp_dispatch != "balanced" and self.dp > 1:  # as the label: one rank has no dispatch
            d["dp_dispatch"] = self.dp_dispatch
        return d


def for_model(layout: Layout, model: ModelSpec) -> Layout:
    """``layout`` labelled for ``model``: ``moe`` set to whether the model has MoE layers.

    >>> from types import SimpleNamespace as N
    >>> for_model(Layout(tp=8), N(moe=None)).label
    'attn TP8 DP1 · FFN TP8'
    """
    moe = model.moe is not None
    return layout if layout.moe == moe else replace(layout, moe=moe)


def validate_layout(layout: Layout, model: ModelSpec, system: System | None, role: str = "") -> None:
    """Check that a layout can run ``model`` on ``system`` (``role`` "prefill" for a disaggregated prefill pool).

    ``system`` None checks what the model and the layout alone decide (every check but the chip count): the CLI
    runs it before ``--pricer table`` loads the system's kernel tables, tens of seconds (followup51).

    Raises:
        InfeasibleDeployment: a degree < 1 (cp included), TP not dividing the heads (nor the GQA KV heads, or a
            multiple of them), EP not dividing tp*dp or
            exceeding the expert count, EP on a dense model, PP over the layer count, or more chips
            than the system has; EPLB that :func:`check_eplb` rejects; a ``dp_dispatch`` other than balanced
            on one attention-DP rank or on a prefill pool (priced by nothing there: a Layout built through the
            API took it silently, break42; the CLI refused both, cli/engine_opts.check_dispatch_ranks). The
            message names the degree and the fix.
    """
    for name in ("tp", "dp", "ep", "pp", "cp"):
        v = getattr(layout, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InfeasibleDeployment(name, f"must be a positive integer, got {v!r}", f"set {name} >= 1")
    if layout.dp_dispatch not in DP_DISPATCH:
        raise InfeasibleDeployment(
            "dp_dispatch",
            f"{layout.dp_dispatch!r} is not one of {', '.join(DP_DISPATCH)}"
            f"{choice_hint(layout.dp_dispatch, DP_DISPATCH)}",
            "give balanced (round robin), random or refill",
        )
    if layout.dp_dispatch != "balanced" and (layout.dp == 1 or role == "prefill"):
        where = (
            "a prefill pool (its prompts are priced at the busiest rank of a balanced dispatch, cost/adp_rank.py)"
            if role == "prefill"
            else "one attention-DP rank (there is no rank to choose)"
        )
        raise InfeasibleDeployment(
            "dp_dispatch",
            f"{layout.dp_dispatch!r} on {where} would change nothing",
            "give dp_dispatch on a decode (or aggregated) pool with dp > 1, or leave it balanced",
        )
    heads = model.attention.num_heads
    if heads % layout.tp:
        raise InfeasibleDeployment(
            "tp",
            f"TP{layout.tp} does not divide {model.name}'s {heads} attention heads",
            "use a TP degree that divides the head count",
        )
    kv = model.attention.num_kv_heads
    if model.attention.kind != "mla" and kv % layout.tp and layout.tp % kv:
        # the engines shard GQA's KV heads over TP, or replicate them when TP exceeds them, and refuse anything
        # else (vLLM model_executor/layers/linear.py QKVParallelLinear: total_num_kv_heads % tp_size == 0 when
        # tp_size < total_num_kv_heads, else tp_size % total_num_kv_heads == 0)
        raise InfeasibleDeployment(
            "tp",
            f"TP{layout.tp} neither divides nor is a multiple of {model.name}'s {kv} KV heads (GQA)",
            "use a TP degree that divides the KV heads or a multiple of them",
        )
    if model.moe is None and layout.ep > 1:
        raise InfeasibleDeployment("ep", f"{model.name} is dense; expert parallelism needs MoE layers", "set ep = 1")
    if layout.stage_chips % layout.ep:
        raise InfeasibleDeployment(
            "ep", f"EP{layout.ep} does not divide tp*dp = {layout.stage_chips}", "make ep a divisor of tp*dp"
        )
    if model.moe is not None and layout.ep > model.moe.num_experts:
        raise InfeasibleDeployment(
            "ep", f"EP{layout.ep} exceeds {model.moe.num_experts} experts", f"use ep <= {model.moe.num_experts}"
        )
    if layout.eplb is not None:
        check_eplb(layout, model)
    if layout.pp > model.num_layers:
        raise InfeasibleDeployment(
            "pp", f"PP{layout.pp} exceeds {model.num_layers} layers", f"use pp <= {model.num_layers}"
        )
    if system is not None and layout.chips > system.max_chips:
        raise InfeasibleDeployment(
            "chips",
            f"{layout.label} needs {layout.chips} chips, {system.name} has at most {system.max_chips}",
            "use smaller parallel degrees",
        )


#: most redundant experts per routed expert that EPLB may add (R <= 1 x E; see :func:`check_eplb`)
EPLB_MAX_PER_EXPERT = 1


def check_eplb(layout: Layout, model: ModelSpec) -> None:
    """EPLB needs a MoE model, EP > 1, 0 <= R <= E redundant experts and EP dividing E + R.

    R <= E (:data:`EPLB_MAX_PER_EXPERT` replicas per expert on average): EPLB replicates the hottest
    experts, and published deployments run R/E of 1/8 to 1/4 (DeepSeek-V3 report §3.4: 32
    redundant experts for 256 in prefill, 64 GPUs of redundant and shared experts in decode;
    SGLang's large-scale EP recipe ``--ep-num-redundant-experts 32``; TensorRT-LLM's wide-EP
    recipes 288 slots for 256 experts). R above E (``--eplb 1000`` for 256 experts) stores more
    replicas than experts, a slip rather than a deployment; it also keeps R below full replication
    E (EP - 1), past which a rank would hold a second copy of an expert it already has.

    Engines spread E + R expert slots evenly over the EP ranks (DeepSeek EPLB: the number of
    replicas must be a multiple of the GPU count; SGLang uses 256 + 32 = 288 slots for EP 12/72).

    Raises:
        InfeasibleDeployment: naming ``eplb`` and the fix (e.g. the nearest valid R).
    """
    r = layout.eplb
    if isinstance(r, bool) or not isinstance(r, int) or r < 0:
        raise InfeasibleDeployment(
            "eplb",
            f"redundant experts must be an integer >= 0, got {r!r}",
            "give --eplb R with R >= 0 (or leave EPLB off)",
        )
    if model.moe is None or layout.ep < 2:
        raise InfeasibleDeployment(
            "eplb",
            "EPLB balances experts over expert-parallel ranks; "
            f"{'a dense model has none' if model.moe is None else 'this layout has EP1'}",
            "leave EPLB off or use ep >= 2",
        )
    e = model.moe.num_experts
    most = EPLB_MAX_PER_EXPERT * e
    if r > most:
        raise InfeasibleDeployment(
            "eplb",
            f"{r} redundant experts is more than {model.name}'s {e} experts (EPLB "
            "replicates the hottest; deployments run 32 for 256: DeepSeek-V3 §3.4, SGLang)",
            f"use --eplb {most} or fewer (engines run 32 for 256 experts)",
        )
    if (e + r) % layout.ep:
        ok = -(-(e + r) // layout.ep) * layout.ep - e
        raise InfeasibleDeployment(
            "eplb",
            f"EP{layout.ep} does not divide {e} experts + {r} redundant = {e + r} slots",
            f"use --eplb {ok} (slots per rank must be equal)",
        )
