"""DeepEP-style MoE dispatch / combine across nodes: bytes on the NICs and on NVLink, and the time.

DeepEP (deepseek-ai/DeepEP; docs/legacy.md for the V1 kernels the serving engines ship) has two
kernel families, and they put different bytes on the links:

- **low-latency** (decode; CUDA-graph compatible): every token is sent once per selected expert
  (k copies; the receive buffer is laid out per local expert), straight to the expert's rank:
  copies to a rank of the same node over NVLink, the rest over the NIC (RDMA)::

      nic_bytes = T·k·row·(g − s)/g        nvl_bytes = T·k·row·(s − 1)/g

- **normal** (prefill; the host waits for the GPU's received-token counts, so not CUDA-graph
  compatible): a token crosses the network once per destination *node* (to the rank with the same
  local index there), then is forwarded over NVLink once per destination *rank* of that node::

      nic_bytes = T·row·(N − 1)·p_node     p_node = 1 − (1 − 1/N)^k   (a given other node is hit)
      nvl_bytes = T·row·R·(s − 1)/s        R = g·(1 − (1 − 1/g)^k)     (distinct destination ranks)

  with node-limited routing (DeepSeek-V3 sends a token to at most ``max_nodes`` = 4 nodes) the
  destination nodes per token are min(N·p_node', max_nodes) (p_node' = 1 − (1 − 1/N)^k, own node
  included) and the remote share is scaled to that cap.

T = tokens per rank, k = experts per token, g = EP ranks, s = ranks per node (the system's first
link level), N = ⌈g/s⌉ nodes, row = hidden·bytes per value (+ hidden/128·4 B of FP8 block scales).
Combine sends the same pattern back in BF16 (row = 2·hidden; the sum is done by the receiver).
Uniform routing over experts is assumed (DeepEP's own benchmarks route uniformly at random).

Time of one call (either family)::

    t = latency + max(nic_bytes / B_nic, nvl_bytes / B_nvl)

B_nic = the scale-out level's per-GPU bandwidth × ``scale_out_link_fraction`` (the efficiency
set's NIC fraction, sourced from DeepEP's low-latency figures, docs/model.md §13); B_nvl = the
scale-up bandwidth × :data:`DEEPEP_NVLINK_FRACTION`; latency = the scale-out level's one-way latency
+ ``collective_launch_s`` (the same terms every scale-out collective pays, cost/collectives.py).
Checked against every published DeepEP V1 figure (H800, one CX7 400 Gb/s NIC per GPU) in
docs/collectives.md (scripts/check_collectives.py); the serving model's hierarchical all-to-all
(cost/collectives.py) prices the low-latency family's bytes (k copies per decode row), and
:func:`deepep_call` states which family a call would run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jalapeno.errors import SpecError, UnknownNameError
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.hardware import System

DEEPEP_MODES = ("low_latency", "normal")
DEEPEP_KINDS = ("dispatch", "combine")

#: Share of the per-direction NVLink bandwidth DeepEP's kernels reach: 153 GB/s dispatch (158 GB/s
#: combine) of H800's ~160 GB/s (deepseek-ai/DeepEP docs/legacy.md, normal kernels, intranode EP8,
#: 4096 tokens). DeepEP's benchmark counts every received row, the rank's own included, and 1/8 of
#: them never cross NVLink, so the link carries 153 × 7/8 = 134 GB/s: 0.837 of 160. Fitted on that
#: intranode dispatch row only; every internode and low-latency row in docs/collectives.md is held out.
DEEPEP_NVLINK_FRACTION = 153.0 * 7.0 / 8.0 / 160.0

#: FP8 block scales DeepEP sends with each FP8 row: one fp32 scale per 128 values
#: (DeepEP tests: ``per_token_cast_to_fp8``, 128-wide groups).
FP8_SCALE_BYTES_PER_VALUE = 4.0 / 128.0

#: Most nodes DeepSeek-V3's node-limited routing sends one token to (DeepSeek-V3 report §2.1.2, M = 4).
DEEPSEEK_MAX_NODES = 4


@dataclass(frozen=True, slots=True)
class DeepEPCall:
    """One DeepEP dispatch or combine, per rank.

    Attributes:
        time_s: latency of the call, s.
        nic_bytes: bytes one rank sends over its NIC.
        nvlink_bytes: bytes one rank sends (or forwards) over NVLink.
        logical_bytes: the bytes DeepEP's benchmarks divide by the time to report a bandwidth
            (low-latency: all T·k copies; normal internode: T·row per destination node, its own
            node included; normal intranode: T·row per destination rank), for the cross-check.
        bound: ``nic`` or ``nvlink`` (the larger of the two transfer times).
    """

    time_s: float
    nic_bytes: float
    nvlink_bytes: float
    logical_bytes: float
    bound: str


def row_bytes(hidden: int, kind: str, fp8_dispatch: bool = True) -> float:
    """Bytes of one token row: FP8 + block scales (dispatch, ``fp8_dispatch``) or BF16.

    >>> row_bytes(7168, "dispatch"), row_bytes(7168, "combine")
    (7392.0, 14336.0)
    """
    if kind == "dispatch" and fp8_dispatch:
        return hidden * (1.0 + FP8_SCALE_BYTES_PER_VALUE)
    return hidden * 2.0


def deepep_call(
    mode: str,
    kind: str,
    ep: int,
    tokens_per_rank: float,
    hidden: int,
    top_k: int,
    system: System,
    eff: Efficiency,
    fp8_dispatch: bool = True,
    max_nodes: int | None = DEEPSEEK_MAX_NODES,
    nvlink_bytes_per_s: float | None = None,
) -> DeepEPCall:
    """Time and bytes of one DeepEP dispatch or combine on ``system`` (module docstring).

    Args:
        mode: ``low_latency`` or ``normal``.
        kind: ``dispatch`` or ``combine``.
        ep: EP ranks g (packed: s per node, innermost level first).
        tokens_per_rank: T, tokens each rank dispatches.
        hidden: model hidden size.
        top_k: experts per token k.
        system, eff: the system (first level = the NVLink domain, next = the NICs) and efficiency set.
        fp8_dispatch: dispatch in FP8 with block scales (DeepEP's benchmarks and DeepSeek's serving).
        max_nodes: node-limited routing cap (normal mode); None = no cap.
        nvlink_bytes_per_s: per-direction NVLink bandwidth to use instead of the system's (e.g. H800's
            ~160 GB/s for the published figures).

    Returns:
        :class:`DeepEPCall`.

    Raises:
        UnknownNameError: unknown mode or kind. SpecError: ep < 2, non-positive sizes, or a system
        without a scale-out level while the group spans nodes.
    """
    if mode not in DEEPEP_MODES:
        raise UnknownNameError("mode", f"unknown DeepEP mode {mode!r}", f"use one of {', '.join(DEEPEP_MODES)}")
    if kind not in DEEPEP_KINDS:
        raise UnknownNameError("kind", f"unknown DeepEP call {kind!r}", f"use one of {', '.join(DEEPEP_KINDS)}")
    if ep < 2 or hidden <= 0 or top_k <= 0 or tokens_per_rank < 0:
        raise SpecError(
            "deepep",
            f"ep={ep}, hidden={hidden}, top_k={top_k}, tokens={tokens_per_rank}",
            "give ep >= 2, positive hidden and top_k, tokens >= 0",
        )
    node = system.levels[0]
    s = min(node.chips, ep) if node.chips > 1 else 1
    n_nodes = math.ceil(ep / s)
    if n_nodes > 1 and len(system.levels) < 2:
        raise SpecError(
            "system",
            f"{system.name} has no level beyond its {s}-chip domain for EP{ep}",
            "use a system with a scale-out level",
        )
    row = row_bytes(hidden, kind, fp8_dispatch)
    t_rows = float(tokens_per_rank) * row
    if mode == "low_latency":
        copies = t_rows * top_k
        nic = copies * (ep - s) / ep
        nvl = copies * (s - 1) / ep
        logical = copies
    else:
        ranks = ep * (1.0 - (1.0 - 1.0 / ep) ** top_k)
        nvl = t_rows * ranks * (s - 1) / s
        if n_nodes == 1:
            nic, logical = 0.0, t_rows * ranks
        else:
            hit = 1.0 - (1.0 - 1.0 / n_nodes) ** top_k
            nodes = n_nodes * hit
            scale = min(1.0, max_nodes / nodes) if max_nodes else 1.0
            nic = t_rows * (n_nodes - 1) * hit * scale
            logical = t_rows * nodes * scale
    b_nvl = (nvlink_bytes_per_s or node.bandwidth_bytes_per_s) * DEEPEP_NVLINK_FRACTION
    t_nvl = nvl / b_nvl
    if n_nodes > 1:
        outer = system.level_for_group(ep)
        t_nic = nic / (outer.bandwidth_bytes_per_s * eff.scale_out_link_fraction)
        latency = outer.latency_s + eff.collective_launch_s
    else:
        t_nic, latency = 0.0, node.latency_s + eff.collective_launch_s
    bound = "nic" if t_nic >= t_nvl else "nvlink"
    return DeepEPCall(latency + max(t_nic, t_nvl), nic, nvl, logical, bound)
