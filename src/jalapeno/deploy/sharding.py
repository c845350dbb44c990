"""How one model's state splits over the chips of a layout: the one home of sharding shapes.

Both the memory fit (deploy/memory_fit.py: what each chip stores) and the op table
(cost/ops.py, cost/attention.py: what each chip computes and reads) read these numbers, so the
two can never disagree. Conventions of deploy/layout.py:

- layers per stage: ceil(L / pp) on the heaviest stage, as a share ceil(L/pp)/L of the model;
- attention heads per rank: H / tp (TP divides the heads, checked by the layout);
- GQA KV heads per rank: ceil(KV / tp), at least one (replicated once tp exceeds KV heads);
- routed experts per EP rank: ceil(E / ep) (the busiest rank when EP does not divide E), or
  (E + R) / ep expert slots with EPLB's R redundant experts (Layout.eplb);
- tensor parallelism inside each expert: moe_tp = tp · dp / ep;
- MoE token exchange: an all-to-all dispatch/combine over the stage exactly when attention is
  data-parallel and the experts expert-parallel (dp > 1 and ep > 1, the DeepEP layout).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jalapeno.deploy.layout import Layout
from jalapeno.specs.model import ModelSpec


def kv_heads_per_rank(model: ModelSpec, tp: int) -> int:
    """GQA KV heads each TP rank stores: ceil(kv/tp), at least one (replicated beyond kv = tp).

    >>> from types import SimpleNamespace as N
    >>> kv_heads_per_rank(N(attention=N(num_kv_heads=8)), 16)
    1
    """
    return max(1, math.ceil(model.attention.num_kv_heads / tp))


def experts_per_rank(model: ModelSpec, ep: int, redundant: int | None = None) -> int:
    """Routed expert slots each expert-parallel rank holds (0 for a dense model).

    ceil(E / ep) without EPLB; (E + R) / ep with R redundant experts (the layout check makes ep
    divide E + R). Each slot stores one expert's weights, so the memory fit grows by R/ep experts
    per MoE layer per chip.

    >>> from types import SimpleNamespace as N
    >>> experts_per_rank(N(moe=N(num_experts=384)), 5)
    77
    >>> experts_per_rank(N(moe=N(num_experts=256)), 32, 32)
    9
    """
    if not model.moe:
        return 0
    if redundant is None:
        return math.ceil(model.moe.num_experts / ep)
    return math.ceil((model.moe.num_experts + redundant) / ep)


def has_ep_all_to_all(model: ModelSpec, layout: Layout) -> bool:
    """Whether a MoE layer of ``model`` under ``layout`` exchanges tokens by all-to-all.

    True for attention DP with EP (dp > 1 and ep > 1): each rank dispatches its own tokens to the
    experts' ranks and combines the results (DeepEP). Otherwise the MoE layer all-reduces over TP
    (dp = 1) or all-gathers / reduce-scatters over the stage (ep = 1). Two-batch overlap hides
    exactly this exchange (cost/overlap.py).

    >>> from types import SimpleNamespace as N
    >>> has_ep_all_to_all(N(moe=object()), Layout(tp=1, dp=8, ep=8)), has_ep_all_to_all(N(moe=object()), Layout(tp=8, ep=8))
    (True, False)
    """
    return model.moe is not None and layout.dp > 1 and layout.ep > 1


@dataclass(frozen=True, slots=True)
class Sharding:
    """Per-chip shapes of ``model`` under ``layout`` (heaviest pipeline stage).

    Attributes:
        layer_share: ceil(L/pp)/L, the fraction of the model's layers on the heaviest stage.
        heads_per_rank: attention (query) heads per TP rank, H/tp.
        kv_heads_per_rank: GQA KV heads per TP rank (see :func:`kv_heads_per_rank`).
        experts_per_rank: routed experts per EP rank (see :func:`experts_per_rank`).
        moe_tp: tensor parallelism inside each expert, tp·dp/ep.
    """

    layer_share: float
    heads_per_rank: float
    kv_heads_per_rank: int
    experts_per_rank: int
    moe_tp: int


#: :func:`sharding`'s answers by (id of the model, layout) → (model, answer): a fixed-concurrency solve asks it
#: for the same few dozen layouts thousands of times (the entry holds its model: a live id; a frozen answer)
_SHARDING: dict[tuple, tuple] = {}
_SHARDING_KEEP = 256


def sharding(model: ModelSpec, layout: Layout) -> Sharding:
    """The per-chip shapes of ``model`` under ``layout`` (see the module docstring)."""
    key = (id(model), layout) if type(layout) is Layout else None  # (a duck-typed layout is worked out each time)
    hit = _SHARDING.get(key)
    if hit is not None and hit[0] is model:
        return hit[1]
    out = Sharding(
        layer_share=math.ceil(model.num_layers / layout.pp) / model.num_layers,
        heads_per_rank=model.attention.num_heads / layout.tp,
        kv_heads_per_rank=kv_heads_per_rank(model, layout.tp),
        experts_per_rank=experts_per_rank(model, layout.ep, layout.eplb),
        moe_tp=layout.moe_tp,
    )
    if key is None:
        return out
    if len(_SHARDING) >= _SHARDING_KEEP:
        del _SHARDING[next(iter(_SHARDING))]
    _SHARDING[key] = (model, out)
    return out
