"""The routed-expert block of an MoE layer as one op, and the hidden vectors its all-to-all moves per rank.

cost/ops.build_step_ops builds a step's op table; the MoE layer's routed experts are one op of kind ``moe``
(:func:`add_routed_experts`: the grouped gate, up and down GEMMs over the busiest rank's token-expert
assignments, the touched experts' weights, the routing passes), shared with the MoE kernel calibration
(fit/moe_kernels.py) so both price the same op. Under attention DP with EP the layer's dispatch and combine move
:func:`dispatch_copies` hidden vectors per rank (DeepEP's low-latency layout at decode, one copy per destination
rank at prefill) of :func:`dispatch_bytes_per_elem` bytes each. Arrays are (N,), one per batch point.
"""

from __future__ import annotations

import numpy as np

from jalapeno.cost.moe import dispatch_ranks
from jalapeno.cost.optable import MOE_KERNELS, OpBuilder


def dispatch_bytes_per_elem(weight_format: str) -> float:
    """Bytes per hidden element an MoE all-to-all dispatch sends: 1 when the experts compute in FP8
    or FP4 (the activations are quantised before the send), else 2 (BF16). The combine returns BF16."""
    return 1.0 if weight_format in ("fp8", "fp4") else 2.0


def dispatch_copies(decode_rows, prefill_tokens, top_k: int, ep: int, ranks=None) -> np.ndarray:
    """Hidden vectors one attention rank sends in an MoE all-to-all dispatch (and gets back in the
    combine), for its decode rows and prefill tokens (arrays (N,)).

    Decode steps run DeepEP's low-latency kernels, which send a token once per selected expert
    (their receive buffer is laid out per local expert: deepseek-ai/DeepEP README, low-latency
    ``low_latency_dispatch``): top_k copies. Prefill steps run the normal kernels, which send a
    token once per destination rank holding any of its experts (``get_dispatch_layout`` →
    ``is_token_in_rank``; the combine returns one reduced vector per rank): with the k experts on
    distinct ranks uniformly, E[ranks] = ep·(1 − (1 − 1/ep)^k) copies — 3.60 at EP4 and 6.45 at
    EP16 for DeepSeek's top-8, against 8 — the own rank's copy included (the all-to-all's
    (g − 1)/g term, cost/collectives.py, keeps it off the links). ``ranks``: that expectation worked out
    already, an (N,) array of every column's (cost/layout_columns.py); None: from ``ep``.

    >>> round(float(dispatch_copies(0.0, 1.0, 8, 4)), 4)  # 4·(1 − 0.75^8)
    3.5995
    >>> float(dispatch_copies(1.0, 0.0, 8, 4))
    8.0
    """
    if ranks is None:
        ranks = dispatch_ranks(top_k, ep)
    return np.asarray(decode_rows, dtype=float) * top_k + np.asarray(prefill_tokens, dtype=float) * ranks


def add_routed_experts(
    ob: OpBuilder,
    name: str,
    fmt: str,
    load,
    touched,
    h: float,
    inter,
    expert_weight_elems,
    w_bytes,
    act_in_bytes,
    scan_bytes=0.0,
    count: float = 1.0,
    weights: str = "",
    split: float = 1.0,
) -> None:
    """The routed-expert block of one MoE layer on one rank (op kind ``moe``), per occurrence:

    - FLOPs 2 · load · 3 · h · I (gate, up and down GEMMs over the rank's token-expert assignments);
    - weights: the ``touched`` experts' elements x bytes;
    - activations: load · (h·b_in + 2·I·2 + I·b_in + h·2) (input, gate/up output, quantised
      activation, output) + ``scan_bytes`` (routing/permute/finalize passes);
    - rows per expert = load / touched (the grouped GEMMs' row count), MOE_KERNELS kernels;
    - ``weights``: the experts' stored format where it names kernels of its own (cost/optable.MOE_WEIGHT_KEYS:
      "mxfp4"), carried as the op's ``key`` for the engine-backend pricer (cost/moe_backend.py); "" otherwise;
    - ``split``: the MoE TP degree (``inter`` is already the per-rank width), for the width term
      (cost/moe_width.py).

    Shared by the step's op table and the MoE calibration (fit/calibrate.py), so both price
    the same op. Arrays are (N,) or scalars.
    """
    load, touched = np.asarray(load, dtype=float), np.asarray(touched, dtype=float)
    ob.op(
        name,
        "moe",
        fmt,
        flop=2.0 * load * 3 * h * inter,
        weight=touched * expert_weight_elems * w_bytes,
        act=load * (h * act_in_bytes + 2 * inter * 2 + inter * act_in_bytes + h * 2) + scan_bytes,
        rows=np.where(touched > 0, load / np.maximum(touched, 1e-9), 0.0),
        kernels=MOE_KERNELS,
        count=count,
        kn=(h, inter),
        key=weights,
        split=split,
    )
