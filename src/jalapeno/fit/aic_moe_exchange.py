"""The MoE token exchange of a disaggregated SGLang aiconfigurator row's prefill pool, from the recipes that ran it.

The SGLang profile prices attention-DP pools with DeepEP's all-to-all (data/stacks.toml ``moe_exchange``), which the
decode pools of the GB200 / GB300 DeepSeek-R1 FP4 sweeps run (``moe-a2a-backend: deepep``). Their DEP prefill pools
do not: the recipes of the SGLang 0.5.8 / 0.5.8.post1 runs set ``moe-runner-backend: flashinfer_cutlass``,
``quantization: modelopt_fp4``, ``enable-dp-attention``, ``ep-size`` = ``dp-size`` and no ``moe-a2a-backend``, for
which SGLang quantises the tokens to NVFP4, all-gathers them over the EP group and reduce-scatters the BF16 outputs
(``should_use_flashinfer_cutlass_moe_fp4_allgather``). :data:`PREFILL_GATHER` names, per (system, precision), the
releases whose runs those recipes launched; a row of a listed release whose prefill pool runs attention DP with
MoE EP = attention DP takes ``Pool.moe_exchange = "nvfp4_all_gather"`` (priced by cost/ops.py as an NVFP4
all-gather and a BF16 reduce-scatter of the group's tokens, fit/collectives speeds). The decode pool keeps the
stack's DeepEP all-to-all, with its dispatch in NVFP4 (``all_to_all_nvfp4``): every such recipe sets
``SGLANG_MOE_NVFP4_DISPATCH: "1"`` in its decode_environment ("Use nvfp4 for moe dispatch (on flashinfer_cutlass or
flashinfer_cutedsl moe runner backend)", sgl-project/sglang docs/references/environment_variables.md); switch
:data:`DECODE_NVFP4_DISPATCH_ON`. The SGLang 0.5.5.post2 runs (Dynamo's own scripts, ``--enable-deepep-moe`` on both pools;
data/validation/aic_sweeps.toml) are not listed and keep it too.

Sources (read, not assumed): sgl-project/sglang ``python/sglang/srt/layers/moe/utils.py`` @d737979c
``should_use_flashinfer_cutlass_moe_fp4_allgather`` (no a2a backend, flashinfer_cutlass runner, DP attention,
modelopt_fp4, MoE EP = attention DP); NVIDIA/srt-slurm @5063eb43 (the branch the InferenceX runners checked out,
fit/aic_sgl_recv.py) ``recipes/gb200-fp4/{1k1k,1k8k}/{mid-curve,max-tpt}.yaml`` and
``recipes/gb300-fp4/{1k1k,1k8k}/{mid_curve,max_tpt,mid-curve,max-tpt}.yaml``: every DEP4 prefill pool as above,
every DEP decode pool ``moe-a2a-backend: deepep``; their 8k1k and low-latency prefill pools run TP4 with
``flashinfer_trtllm`` (no attention DP: the rule does not apply). Switch: :data:`PREFILL_GATHER_ON`.
"""

from __future__ import annotations

from dataclasses import replace

from jalapeno.deploy.deployment import Deployment

#: Price the recipes' NVFP4 all-gather prefill exchange (round 44, moeag44; docs/model.md §3.8)
PREFILL_GATHER_ON = True
#: Price the recipes' NVFP4 DeepEP dispatch on the DEP decode pools of the same rows (``SGLANG_MOE_NVFP4_DISPATCH:
#: "1"`` in every GB200 / GB300 FP4 srt-slurm recipe's decode_environment beside ``moe-a2a-backend: deepep``).
#: Shipped OFF (round 44): on, TPOT 0.5-3.6% shorter on cfg483/489/575/576, where 8 of 10 rows are already short
#: (held-out GB300 interactivity p90 13.0 -> 14.0%, TPOT p90 14.2 -> 14.0%; the SGLang fit's held-out TPOT
#: median 11.12 -> 11.23%; docs/model.md §3.8)
DECODE_NVFP4_DISPATCH_ON = False
#: (catalog system, precision) -> (SGLang releases whose runs the srt-slurm recipes launched, source)
PREFILL_GATHER: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {
    ("gb200-nvl72", "fp4"): (
        ("0.5.8",),
        "NVIDIA/srt-slurm @5063eb43 recipes/gb200-fp4/1k1k/mid-curve.yaml (prefill: flashinfer_cutlass, modelopt_fp4, "
        "tp = dp = ep = 4, enable-dp-attention, no moe-a2a-backend)",
    ),
    ("gb300-nvl72", "fp4"): (
        ("0.5.8.post1",),
        "NVIDIA/srt-slurm @5063eb43 recipes/gb300-fp4/1k1k/mid_curve.yaml (prefill: flashinfer_cutlass, modelopt_fp4, "
        "tp = dp = ep = 4, enable-dp-attention, no moe-a2a-backend)",
    ),
}


def with_prefill_moe_exchange(
    dep: Deployment,
    backend: str,
    system: str,
    precision: str,
    release: str,
    on: bool | None = None,
    decode_dispatch: bool | None = None,
) -> tuple[Deployment, str]:
    """(deployment, note): a disaggregated SGLang row's ``dep`` with its prefill pool's MoE exchange set to
    ``nvfp4_all_gather`` where the recipe that ran it gathers (module docstring: the rule, :data:`PREFILL_GATHER`)
    and its DEP decode pool's to ``all_to_all_nvfp4`` (the same recipes' NVFP4 DeepEP dispatch), and a note naming
    the recipe; ``dep`` unchanged and "" for other rows or with both switches off (``on``, ``decode_dispatch``;
    None: :data:`PREFILL_GATHER_ON`, :data:`DECODE_NVFP4_DISPATCH_ON`). ``release``: the row's SGLang release
    (``0.5.8.post1``).

    >>> from jalapeno.deploy.deployment import Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> d = Deployment(get_precision("fp4"), Pool(Layout(dp=32, ep=32)), prefill=Pool(Layout(dp=4, ep=4), 4))
    >>> g = with_prefill_moe_exchange(d, "sglang", "gb300-nvl72", "fp4", "0.5.8.post1")[0]
    >>> g.prefill.moe_exchange, g.decode.moe_exchange  # the decode dispatch's switch is off
    ('nvfp4_all_gather', None)
    >>> with_prefill_moe_exchange(d, "sglang", "gb200-nvl72", "fp4", "0.5.5.post2")[0].prefill.moe_exchange is None
    True
    """
    entry = PREFILL_GATHER.get((system, precision))
    if backend != "sglang" or dep.prefill is None or entry is None or release not in entry[0]:
        return dep, ""
    notes = []
    if decode_dispatch if decode_dispatch is not None else DECODE_NVFP4_DISPATCH_ON:
        lay = dep.decode.layout
        if _dep_pool(lay):
            dep = replace(dep, decode=replace(dep.decode, moe_exchange="all_to_all_nvfp4"))
            notes.append(f"decode MoE dispatch NVFP4 over EP{lay.ep} (SGLANG_MOE_NVFP4_DISPATCH=1)")
    lay = dep.prefill.layout
    if (PREFILL_GATHER_ON if on is None else on) and _dep_pool(lay):
        dep = replace(dep, prefill=replace(dep.prefill, moe_exchange="nvfp4_all_gather"))
        notes.append(
            f"prefill MoE exchange: NVFP4 all-gather + BF16 reduce-scatter over EP{lay.ep} (SGLang "
            "should_use_flashinfer_cutlass_moe_fp4_allgather)"
        )
    return dep, (f"{'; '.join(notes)}: {entry[1]}; fit/aic_moe_exchange.py" if notes else "")


def _dep_pool(lay) -> bool:
    """Whether a pool's layout is the recipes' DEP form: attention DP over every chip, MoE EP = DP."""
    return lay.dp > 1 and lay.ep == lay.dp and lay.tp == 1
