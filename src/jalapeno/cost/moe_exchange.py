"""Which MoE token exchange an engine runs for a layout: all-to-all, or all-gather + reduce-scatter.

The engine's exchange is named by its software stack (``Efficiency.moe_exchange``, one of
specs/efficiency.MOE_EXCHANGE_NAMES, where the engines' rules and their sources are written);
this module applies the rule to an EP group on a system (cost/step.py, cost/ops.py).
"""

from __future__ import annotations


def moe_all_to_all_on(
    exchange: str, group_chips: int, scale_up_chips: int, moe_tp: int = 1, top_k: int | None = None
) -> bool:
    """Whether an EP group of ``group_chips`` (experts split ``moe_tp`` ways) exchanges tokens by
    all-to-all under ``exchange``, else all-gather + reduce-scatter: always with ``all_to_all``;
    with ``all_to_all_nvfp4`` (the same, NVFP4 dispatch); with ``nvlink_all_to_all`` only inside one scale-up domain of ``scale_up_chips`` and with
    whole experts per rank (TensorRT-LLM: "AlltoAll cannot support MoE TP"); with
    ``nvlink_all_to_all_above_top_k`` also only with more ranks than the ``top_k`` experts a
    token selects (None: not checked); never with ``nvfp4_all_gather`` (SGLang's FlashInfer CUTLASS NVFP4
    path gathers at any EP).

    >>> moe_all_to_all_on("nvlink_all_to_all", 16, 8), moe_all_to_all_on("nvlink_all_to_all", 32, 72)
    (False, True)
    >>> moe_all_to_all_on("nvlink_all_to_all", 8, 8, moe_tp=2), moe_all_to_all_on("all_to_all", 64, 8, 8)
    (False, True)
    >>> moe_all_to_all_on("nvlink_all_to_all_above_top_k", 8, 8, top_k=8)  # DeepSeek EP8 on HGX
    False
    >>> moe_all_to_all_on("nvlink_all_to_all_above_top_k", 16, 72, top_k=8)
    True
    >>> moe_all_to_all_on("nvfp4_all_gather", 4, 72, top_k=8)  # SGLang DEP4 prefill, flashinfer_cutlass
    False
    """
    if exchange in ("all_to_all", "all_to_all_nvfp4"):
        return True
    if exchange == "nvfp4_all_gather":
        return False
    if exchange == "nvlink_all_to_all_above_top_k" and top_k is not None and group_chips <= top_k:
        return False
    return group_chips <= scale_up_chips and moe_tp == 1
