"""The layouts a sweep enumerates (analysis/sweep.py): stage sizes, aggregated and disaggregated layouts whose
weights fit, their EPLB twins, and ``predict``'s default layout.

- stage sizes: powers of two up to ``factor`` x the scale-up domain (capped at ``System.max_chips``), and the
  domain size itself (72 on NVL72) (:func:`stage_sizes`);
- aggregated: attention TP t in {1, 2, 4, 8} dividing the stage and the head count, attention DP S/t, MoE EP = S
  (wide EP) and EP = 1 for S <= 8; dense models TP only (:func:`aggregated_layouts`);
- disaggregated: prefill TP/TEP of 1-8 chips (attention DP with ``prefill_dp``; context parallel for mean prompts
  from :data:`CP_PREFILL_MIN_ISL`), decode TEP of <= 8 chips or DP-attention + wide EP from 8 chips
  (:func:`disaggregated_layouts`);
- EPLB twins of the MoE layouts with EP >= :data:`EPLB_MIN_EP` under skewed routing (:func:`with_eplb`);
- a layout is kept when it is valid for the model and system and its weights take under 95% of the engine's
  usable HBM (deploy/memory_fit.usable_fraction; :func:`weights_misfit` says why not).

Moved from analysis/sweep.py (round 46, module budget); analysis/sweep.py imports these names back. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import replace

from jalapeno.deploy.layout import EPLB_MAX_PER_EXPERT, Layout, for_model, validate_layout
from jalapeno.deploy.memory_fit import usable_fraction, weight_bytes_per_chip
from jalapeno.errors import JalapenoError, SpecError
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import Precision
from jalapeno.specs.hardware import System
from jalapeno.specs.model import ModelSpec

#: redundant experts the sweep tries with EPLB: DeepSeek-V3 deploys 32 (report §3.4, prefill
#: EP32: 9 slots per GPU), the SGLang large-scale-EP recipe ``--ep-num-redundant-experts 32``
EPLB_REDUNDANT = 32
#: smallest EP degree the sweep tries EPLB at (the published gains are at EP8-EP72; below, the
#: contiguous imbalance is small: 1.18x the mean rank at EP4 for DeepSeek-R1)
EPLB_MIN_EP = 8
#: Mean prompt length from which the sweep also tries context-parallel prefill workers, and their
#: CP degrees. Engines offer prefill CP for long prompts (SGLang prefill CP, vLLM
#: ``prefill_context_parallel_size``); below 32K a TP/TEP worker of <= 8 chips prefills one
#: prompt in a few chunk steps and CP only adds chips (a sweep-size choice, keeping compare fast).
CP_PREFILL_MIN_ISL = 32768
CP_DEGREES = (2, 4)


def _fits(
    model: ModelSpec,
    system: System,
    layout: Layout,
    precision: Precision,
    eff: Efficiency,
    memory_fraction: float | None = None,
) -> bool:
    """Whether ``layout`` is valid for the model and system and its weights take under 95% of the engine's usable HBM."""
    try:
        validate_layout(layout, model, system)
    except JalapenoError:
        return False
    usable = system.chip.hbm_usable_bytes * usable_fraction(eff, memory_fraction)
    return weight_bytes_per_chip(model, layout, precision, system=system) < 0.95 * usable


def stage_sizes(system: System, factor: int) -> list[int]:
    """Stage sizes to try: powers of two up to factor x scale-up (and the domain size)."""
    su = system.scale_up_chips
    top = min(system.max_chips, factor * su)
    sizes = {2**i for i in range(0, 16) if 2**i <= top}
    sizes.add(min(su, top))
    return sorted(sizes)


def with_eplb(layouts: list[Layout], model: ModelSpec, redundant: int | None) -> list[Layout]:
    """``layouts`` plus, for each MoE layout with EP >= ``EPLB_MIN_EP``, its EPLB twin with the
    fewest redundant experts >= ``redundant`` that EP divides E + R by (None: no twins). Only
    under a skewed routing popularity (of the prompt or of the generated tokens): with uniform routing replicas cannot lower the busiest
    rank's expected share, so a twin would only cost memory and sweep time.

    >>> from types import SimpleNamespace as N
    >>> skewed = N(moe=N(num_experts=256, routing_sigma=1.03))
    >>> [lay.label for lay in with_eplb([Layout(dp=64, ep=64)], skewed, 32)]
    ['attn TP1 DP64 · MoE TP1 EP64', 'attn TP1 DP64 · MoE TP1 EP64 EPLB+64']
    >>> len(with_eplb([Layout(dp=64, ep=64)], N(moe=N(num_experts=256, routing_sigma=0.0)), 32))
    1
    """
    if (
        redundant is None
        or model.moe is None
        or not max(model.moe.routing_sigma, getattr(model.moe, "decode_routing_sigma", 0.0)) > 0
    ):
        return layouts
    out = []
    for lay in layouts:
        out.append(lay)
        if lay.ep >= EPLB_MIN_EP and lay.eplb is None:
            e = model.moe.num_experts
            r = -(-(e + redundant) // lay.ep) * lay.ep - e
            out.append(replace(lay, eplb=r))
    return out


def check_sweep_eplb(eplb: int | None, model: ModelSpec) -> None:
    """A sweep's ``--eplb`` R against the model: at most E (deploy/layout.check_eplb), or the sweeps'
    default ``EPLB_REDUNDANT`` for fewer experts (Mixtral's 8: its uniform router gets no EPLB twins).
    The fixed-length sweep and the agentic one (analysis/agentic.sweep_agentic) both call it.

    Raises:
        SpecError: naming ``--eplb``, the model's expert count and the largest R accepted.
    """
    # R <= E (deploy/layout.check_eplb); the sweeps' default 32 stays allowed for fewer experts (Mixtral's 8):
    # those routers are uniform, so the sweep makes no EPLB twins of them (with_eplb)
    most = None if model.moe is None else max(EPLB_MAX_PER_EXPERT * model.moe.num_experts, EPLB_REDUNDANT)
    if eplb is not None and most is not None and eplb > most:
        default = " (or the sweeps' default 32)" if most > model.moe.num_experts else ""
        raise SpecError(
            "--eplb",
            f"{eplb} redundant experts is more than {model.name}'s "
            f"{model.moe.num_experts} experts{default}; EPLB replicates the hottest experts, and "
            "deployments run 32 for 256 (DeepSeek-V3 §3.4, SGLang)",
            f"use --eplb {most} or fewer (engines run 32 for 256 experts), or --eplb off",
        )


def aggregated_layouts(
    model: ModelSpec,
    system: System,
    precision: Precision,
    eff: Efficiency,
    factor: int = 4,
    eplb: int | None = None,
    memory_fraction: float | None = None,
) -> list[Layout]:
    """Valid aggregated layouts whose weights fit in the engine's share of HBM (with EPLB twins,
    see :func:`with_eplb`)."""
    out = []
    heads = model.attention.num_heads
    for s in stage_sizes(system, factor):
        for tp in (1, 2, 4, 8):
            if s % tp or heads % tp:
                continue
            if model.moe is None:
                if tp == s:
                    out.append(Layout(tp=tp))
                continue
            eps = {s} | ({1} if s <= 8 else set())
            for ep in sorted(eps):
                out.append(Layout(tp=tp, dp=s // tp, ep=ep))
        if model.moe is None and s > 8 and heads % s == 0 and s <= 64:
            out.append(Layout(tp=s))
    return [
        for_model(lay, model)
        for lay in with_eplb(out, model, eplb)
        if _fits(model, system, lay, precision, eff, memory_fraction)
    ]


def smallest_fitting_layout(
    model: ModelSpec, system: System, precision: Precision, eff: Efficiency, memory_fraction: float | None = None
) -> Layout | None:
    """The aggregated layout on the fewest chips whose weights fit (``predict``'s default): among
    layouts of equal size, experts over the whole stage first (EP = TP x DP, the usual MoE
    deployment), then the smaller TP. None when nothing fits within 4x the scale-up domain."""
    lays = aggregated_layouts(model, system, precision, eff, memory_fraction=memory_fraction)
    if not lays:
        return None
    return min(lays, key=lambda x: (x.chips, 0 if model.moe is None or x.ep == x.tp * x.dp else 1, x.tp))


def weights_misfit(
    model: ModelSpec,
    system: System,
    layout: Layout,
    precision: Precision,
    eff: Efficiency,
    memory_fraction: float | None = None,
) -> str:
    """Why the weights of ``layout`` do not fit on one chip ("" when they do), in GiB (as every
    memory message: deploy/memory_fit.py)."""
    usable = system.chip.hbm_usable_bytes * usable_fraction(eff, memory_fraction)
    w = weight_bytes_per_chip(model, layout, precision, system=system)
    if w < 0.95 * usable:
        return ""
    return (
        f"the weights do not fit: {w / 2**30:.1f} GiB per chip against {usable / 2**30:.1f} GiB usable "
        f"({system.chip.name}, {for_model(layout, model).label})"
    )


def disaggregated_layouts(
    model: ModelSpec,
    system: System,
    precision: Precision,
    eff: Efficiency,
    factor: int = 4,
    eplb: int | None = None,
    isl: float = 0.0,
    prefill_dp: bool = False,
    memory_fraction: float | None = None,
) -> tuple[list[Layout], list[Layout]]:
    """(prefill layouts, decode layouts) whose weights fit (with EPLB twins, :func:`with_eplb`).

    ``prefill_dp``: MoE prefill workers of 2, 4 and 8 chips are also tried with attention DP
    (DEPn: TP1 DPn EPn), as the Dynamo + TRT-LLM recipes deploy them.

    ``isl``: the mean prompt length; from :data:`CP_PREFILL_MIN_ISL` on, every prefill layout is
    also tried with each of :data:`CP_DEGREES` (where the chips exist).
    """
    moe = model.moe is not None
    pre = []
    for s in (1, 2, 4, 8):
        pre.append(Layout(tp=s, ep=s if moe else 1))
        if prefill_dp and moe and s > 1:
            pre.append(Layout(tp=1, dp=s, ep=s))
        if isl >= CP_PREFILL_MIN_ISL:
            pre += [Layout(tp=s, ep=s if moe else 1, cp=c) for c in CP_DEGREES if s * c <= system.max_chips]
    dec = []
    for s in stage_sizes(system, factor):
        if s <= 8:
            dec.append(Layout(tp=s, ep=s if moe else 1))
        if moe and s >= 8:
            dec.append(Layout(tp=1, dp=s, ep=s))

    def keep(ls: list[Layout]) -> list[Layout]:
        return [
            for_model(lay, model)
            for lay in dict.fromkeys(with_eplb(ls, model, eplb))
            if _fits(model, system, lay, precision, eff, memory_fraction)
        ]

    return keep(pre), keep(dec)
