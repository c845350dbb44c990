"""Layouts that vary by column: one op-table build for several layouts of a fixed-concurrency pass.

A fixed-concurrency pass (serve/lockstep.py) prices 34-42 layouts of one sweep, and each build of a step's op
table (cost/ops.build_step_ops, ~0.35 ms) is mostly Python's and NumPy's per-call cost over a few dozen rows.
Layouts that give the op table the same rows — the same attention TP, MoE TP, exchange (all-to-all or not)
and branches (attention DP > 1, EP > 1), one pipeline stage, no context parallelism, balanced dispatch — differ
only in numbers the rows compute per point: attention DP, EP, the EPLB slots (the busiest rank's share, experts
per rank) and the stage's chips (the MoE exchange's group). :func:`joint_key` says which layouts share rows;
:func:`layout_columns` gives those numbers per column of the joined batch, each worked out per layout exactly
as a build of that layout alone does (a scalar function of the layout, then repeated over the layout's columns),
so every element of the joined tables is the same IEEE operation on the same operands as in a build of its own
layout: the tables are bitwise those of separate builds (cost/priced.price_layouts cuts them per layout).
Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from jalapeno.cost.moe import dispatch_ranks, extreme_value_tail
from jalapeno.deploy.eplb import busiest_rank_share
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.sharding import experts_per_rank, has_ep_all_to_all
from jalapeno.specs.model import ModelSpec


@dataclass(frozen=True, slots=True)
class LayoutColumns:
    """Per-column layout numbers of a joined batch, (N,) each (float unless said).

    Attributes:
        dp: attention DP degree (every one > 1).
        ep: MoE EP degree.
        stage_chips: chips of the stage, tp·dp (int): the MoE exchange's group.
        experts_per_rank: routed expert slots per EP rank (deploy/sharding.experts_per_rank).
        share: busiest EP rank's share of the assignments at the prompt routing σ (deploy/eplb.busiest_rank_share).
        share_decode: the same at the decode routing σ (``share`` where the model routes both alike).
        tail: sqrt(2·ln ep), the extreme-value factor of cost/moe.busiest_rank_assignments.
        ceil_k_ep: ⌈top_k / ep⌉ (the one_token padding's experts per rank).
        ranks: ep·(1 − (1 − 1/ep)^top_k), the ranks a prefill token is dispatched to (cost/expert_ops.dispatch_copies).
    """

    dp: np.ndarray
    ep: np.ndarray
    stage_chips: np.ndarray
    experts_per_rank: np.ndarray
    share: np.ndarray
    share_decode: np.ndarray
    tail: np.ndarray
    ceil_k_ep: np.ndarray
    ranks: np.ndarray


def joint_key(model: ModelSpec, layout: Layout, all_to_all: bool) -> tuple | None:
    """What a layout's op table rows depend on beyond the per-column numbers (module docstring), or None where
    the layout is built alone: no MoE, attention DP 1, pipeline or context parallelism, random dispatch.
    ``all_to_all``: whether the engine runs the MoE all-to-all for it (cost/priced.moe_all_to_all)."""
    if model.moe is None or layout.dp <= 1 or layout.pp != 1 or layout.cp != 1 or layout.dp_dispatch != "balanced":
        return None
    return layout.tp, layout.moe_tp, layout.ep > 1, has_ep_all_to_all(model, layout) and all_to_all


def layout_columns(model: ModelSpec, layouts: list[Layout], sizes: list[int]) -> LayoutColumns:
    """The per-column numbers of a batch joined from parts of ``sizes[i]`` points under ``layouts[i]``
    (:class:`LayoutColumns`); each number worked out per layout as cost/ops.build_step_ops does for one."""
    m = model.moe
    per = {}
    for lay in dict.fromkeys(layouts):
        share = busiest_rank_share(m.num_experts, m.routing_sigma, lay.ep, lay.eplb)
        share_d = (
            busiest_rank_share(m.num_experts, m.decode_routing_sigma, lay.ep, lay.eplb)
            if m.decode_routing_sigma != m.routing_sigma
            else share
        )
        per[lay] = (
            lay.dp,
            lay.ep,
            lay.stage_chips,
            experts_per_rank(model, lay.ep, lay.eplb),
            share,
            share_d,
            extreme_value_tail(lay.ep),
            math.ceil(m.top_k / lay.ep),
            dispatch_ranks(m.top_k, lay.ep),
        )
    rows = [per[lay] for lay in layouts]
    cols = [np.repeat(np.array(c, dtype=float), sizes) for c in zip(*rows)]
    cols[2] = cols[2].astype(int)
    return LayoutColumns(*cols)
