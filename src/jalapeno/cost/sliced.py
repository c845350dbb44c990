"""The sliced chip: a second pricer, with slices, local HBM, an on-die network and placement.

A chip of S slices (specs/die.py) gives each slice 1/S of the compute, HBM stacks and HBM
bandwidth. Every op is split over the slices so that each does 1/S of its FLOPs and reads 1/S of
its HBM bytes (balanced placements), so each slice's compute and HBM times equal the flat chip's
(cost/roofline.py: FLOP/S ÷ (peak/S · η) = FLOP ÷ (peak · η)). What the slicing adds is the on-die
traffic, which depends on where the op's bytes live (the *placement*):

``local_first`` (explicit placement, as Jalapeño's software is reported to do): every weight
  matrix is split by output columns over the slices (experts by their intermediate dimension), the
  KV cache by token blocks (split-KV), each slice reads only its local stacks. The split costs the
  exchange of the op's activations: every slice needs the whole input of a column-split GEMM,
  attention's queries and partial outputs are combined across slices — (S − 1)·A bytes on die for
  an op with A activation bytes; element-wise ops run on each slice's own rows (no exchange).
``striped`` (a GPU's uniform, interleaved address space): every byte lives on all stacks in
  turn, so (S − 1)/S of the weights, KV and activations a slice reads are remote; the activation
  exchange of the split rides on those remote reads. On-die bytes = local_first's
  + (S − 1)/S·(W + K) (+ (S − 1)/S·A for element-wise ops): striping is never cheaper.
``best``: per op and point the cheapest of local_first, local_first with a row split (GEMMs and
  experts split by rows: each slice needs every weight, multicast on die, (S − 1)·W bytes
  instead of (S − 1)·A — cheaper for large prefill GEMMs), local_first with a head split of
  attention (:data:`HEAD_SPLIT_ON`: each slice runs its heads on the Q/K/V its own column split of
  the projections made, and needs every KV-cache byte, multicast: (S − 1)·K instead of (S − 1)·A —
  free for a prompt without a cached prefix) and striped.

HBM reads are conserved: local reads + remote reads = the op table's bytes (every byte is read
once from some stack; activation copies between slices are exchange, not reads).

On-die time of N bytes spread uniformly over the slices (module docstring of specs/die.py for
port and bisection bandwidth, both per direction):

    t_net = max(N/S ÷ port, N·S/(4(S − 1)) ÷ bisection) + kernels · diameter · hop_latency   (N > 0)

(of N bytes between all pairs, a fraction S/(2(S − 1)) crosses a balanced cut, half each way).
The op's time is the roofline over the three resources, on-die transfers streaming concurrently
with HBM reads as DMA engines and load pipelines do:

    t_op = max(t_compute, t_hbm, t_net) + kernels · t_launch

so a one-slice chip, or an infinite on-die network, gives exactly the flat pricer's time, and the
binding constraint can be ``on_die_network``. Inter-chip collectives are priced as on the flat chip
(the chip's link ports are taken to be spread over the slices — NVLink ports on both Blackwell
dies, Jalapeño's I/O chiplet over all slices — so received bytes land at their slice).

The efficiency set stays the calibrated one: for GPUs it was measured on the real (striped) chip,
so this pricer adds time only where the network binds; it does not re-charge what calibration saw.
Derivation, sources and a worked example: docs/chip.md.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from jalapeno.cost.optable import OpTable
from jalapeno.cost.pricer import SystemPricer
from jalapeno.cost.roofline import OpTimes, op_times
from jalapeno.errors import SpecError, choice_hint
from jalapeno.specs.die import ONE_SLICE, PLACEMENTS, Die
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.hardware import System

#: op kinds whose work is split over the slices by output columns (their inputs are exchanged)
SPLIT_KINDS = ("gemm", "moe", "attention")
#: op kinds that may instead be split by rows (weights multicast to every slice)
ROW_SPLIT_KINDS = ("gemm", "moe")
#: ``best`` may split attention by heads (slice53). local_first splits it by KV token blocks (split-KV) and exchanges
#: (S − 1)·A: right for decode, where A is the queries and partial outputs, but a prompt's attention has A = its
#: whole Q, K, V and output (DeepSeek-R1, 8,192 tokens on one Jalapeño chip: 41 GB, so 205 GB on die over 6 slices).
#: Split by heads instead, each slice's heads read the Q/K/V rows the column split of q_b_proj / kv_b_proj (or
#: qkv_proj) left on that slice and write outputs o_proj gathers (charged to o_proj), so no activation moves, and
#: every slice needs every KV-cache byte (MLA's one latent head; for GQA with at least S KV heads an upper bound),
#: multicast: (S − 1)·K on die. Heads that do not divide by S (128 over 6) are taken as balanced (22 vs 21 heads,
#: within 5%), an approximation. Only ``best`` reads it; the flat pricer and local_first / striped do not move.
#: False: ``best`` chooses among local_first, row_split and striped only (round 52's prices).
HEAD_SPLIT_ON = True


@dataclass(frozen=True, slots=True)
class SliceTraffic:
    """Where one op table's bytes come from on a sliced chip, (n_ops, N) arrays, bytes per step.

    Attributes:
        hbm_local_bytes: read from the reading slice's own stacks (summed over slices).
        hbm_remote_bytes: read from another slice's stacks (cross the on-die network).
        exchange_bytes: activation copies between slices (gathers, partial-result combines).
        network_s: on-die time of each op (module docstring), seconds.
        split: (n_ops, N) the placement each op uses at each point (``best`` chooses per point).
    """

    hbm_local_bytes: np.ndarray
    hbm_remote_bytes: np.ndarray
    exchange_bytes: np.ndarray
    network_s: np.ndarray
    split: np.ndarray

    @property
    def network_bytes(self) -> np.ndarray:
        """Bytes crossing the on-die network, (n_ops, N)."""
        return self.hbm_remote_bytes + self.exchange_bytes


def network_time(die: Die, net_bytes: np.ndarray, kernels: np.ndarray) -> np.ndarray:
    """On-die time of ``net_bytes`` (n_ops, N) spread uniformly over the slices (module docstring).

    >>> from jalapeno.specs.die import Die
    >>> d = Die(slices=2, topology="pair", link_bandwidth_bytes_per_s=5e12, hop_latency_s=0.0)
    >>> float(network_time(d, np.array([[1e9]]), np.array([1.0]))[0, 0])  # 0.5 GB each way at 5 TB/s
    0.0001
    """
    s = die.slices
    if s == 1:
        return np.zeros_like(net_bytes, dtype=float)
    n = np.asarray(net_bytes, dtype=float)
    port = n / s / die.port_bandwidth_bytes_per_s
    cut = n * s / (4.0 * (s - 1)) / die.bisection_bandwidth_bytes_per_s
    lat = np.asarray(kernels, dtype=float).reshape(-1, 1) * die.diameter * die.hop_latency_s
    return np.where(n > 0, np.maximum(port, cut) + lat, 0.0)


def _traffic_of(ops: OpTable, s: int, how: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(HBM local bytes, HBM remote bytes, exchange bytes), (n_ops, N), of every op under one placement ``how``.

    Local bytes are the placement's own reads from each slice's stacks, not the op table's bytes less the remote
    ones, so :func:`slice_summary`'s ``byte_check`` (local + remote − op table bytes) can catch a placement that
    loses or double-counts a byte.
    """
    kinds = np.array(ops.kind, dtype=object).reshape(-1, 1)
    split = np.isin(kinds, SPLIT_KINDS)
    a, w, k = ops.act_bytes, ops.weight_bytes, ops.kv_bytes
    own = w + k + a  # column/row/head splits: each slice reads its 1/S share of W, K and A from its own stacks
    if how == "local_first":
        return own, np.zeros_like(a), np.where(split, (s - 1) * a, 0.0)
    if how == "row_split":
        rowable = np.isin(kinds, ROW_SPLIT_KINDS)
        return own, np.zeros_like(a), np.where(rowable, (s - 1) * w, np.where(split, (s - 1) * a, 0.0))
    if how == "head_split":  # attention by heads: its KV multicast; every other op as local_first (HEAD_SPLIT_ON)
        return own, np.zeros_like(a), np.where(kinds == "attention", (s - 1) * k, np.where(split, (s - 1) * a, 0.0))
    if how == "striped":  # 1/S of what a slice reads is on its own stacks, (S − 1)/S on the others'
        remote = (s - 1) / s * (w + k + a)
        return (w + k + a) / s, remote, np.where(split, (s - 1) * a - (s - 1) / s * a, 0.0)
    raise SpecError("placement", f"unknown placement {how!r}", f"use one of {PLACEMENTS}")


def slice_traffic(ops: OpTable, die: Die, placement: str) -> SliceTraffic:
    """On-die traffic and time of every op of ``ops`` under ``placement`` (module docstring).

    Raises:
        SpecError: an unknown placement.
    """
    if placement not in PLACEMENTS:
        raise SpecError("placement", f"unknown placement {placement!r}", f"use one of {PLACEMENTS}")
    s = die.slices
    best_of = ("local_first", "row_split") + (("head_split",) if HEAD_SPLIT_ON else ()) + ("striped",)
    candidates = best_of if placement == "best" else (placement,)
    best = None
    for how in candidates:
        local, remote, exch = _traffic_of(ops, s, how)
        t = network_time(die, remote + exch, ops.kernels)
        if best is None:
            best = [local, remote, exch, t, np.full(t.shape, how, dtype=object)]
            continue
        better = t < best[3]
        for i, new in enumerate((local, remote, exch, t, how)):
            best[i] = np.where(better, new, best[i])
    local, remote, exch, t, split = best
    return SliceTraffic(local, remote, exch, t, split)


@dataclass(frozen=True, slots=True, repr=False)
class SlicedPricer(SystemPricer):
    """Ops priced on a chip of slices with local HBM and an on-die network (module docstring).

    Args:
        system: the hardware; its ``chip.die`` gives the slices (None = one slice: the flat chip).
        efficiency: the efficiency set (the same calibrated set as the flat pricer).
        placement: ``local_first``, ``striped`` or ``best``; "" = the chip's own (``die.placement``).

    Raises:
        SpecError: ``system``/``efficiency`` of the wrong type, or an unknown placement.
    """

    system: System
    efficiency: Efficiency
    placement: str = ""

    def __post_init__(self) -> None:
        SystemPricer.__post_init__(self)
        if self.placement and self.placement not in PLACEMENTS:
            raise SpecError(
                "--placement",
                f"unknown placement {self.placement!r}{choice_hint(self.placement, PLACEMENTS)}",
                f"use one of {', '.join(PLACEMENTS)}",
            )

    @property
    def die(self) -> Die:
        """The chip's slices (one slice where the catalog gives no ``[die]`` table)."""
        return self.system.chip.die or ONE_SLICE

    @property
    def placement_used(self) -> str:
        """The placement the prices use (``placement`` or the chip's default)."""
        return self.placement or self.die.placement

    def traffic(self, ops: OpTable) -> SliceTraffic:
        """On-die traffic of ``ops`` under this pricer's placement."""
        return slice_traffic(ops, self.die, self.placement_used)

    def op_times(self, ops: OpTable) -> OpTimes:
        """Roofline op times (seconds, (n_ops, N)) plus the network time of each op's slice traffic."""
        flat = op_times(ops, self.system.chip, self.efficiency)
        net = self.traffic(ops).network_s
        return OpTimes.combine(flat.compute_s, flat.memory_s, flat.overhead_s, net)

    def with_die(self, die: Die) -> SlicedPricer:
        """The same pricer on a chip with another slice structure (what-ifs: docs/chip.md)."""
        return replace(self, system=replace(self.system, chip=replace(self.system.chip, die=die)))


CHIP_MODELS = ("flat", "sliced", "tiled")


def chip_model_pricer(pricer, chip_model: str = "flat", placement: str = ""):
    """``pricer`` as the flat roofline pricer (``flat``), a :class:`SlicedPricer` (``sliced``) or
    the tile-model pricer (``tiled``, cost/tiles.py).

    Raises:
        SpecError: an unknown chip model, a placement given without the sliced model, or a chip
            without the tile figures for ``tiled``.
    """
    if chip_model not in CHIP_MODELS:
        raise SpecError(
            "--chip-model",
            f"unknown chip model {chip_model!r}{choice_hint(chip_model, ('flat', 'sliced', 'tiled'))}",
            "use flat, sliced or tiled",
        )
    if chip_model != "sliced" and placement:
        raise SpecError(
            "--placement", "applies to the sliced chip model only", "add --chip-model sliced, or drop --placement"
        )
    origin = getattr(pricer.system, "origin", None)
    die_keys = [k for k, _ in getattr(origin, "overrides", ()) if k.startswith("die.")]
    if chip_model != "sliced" and die_keys:
        raise SpecError(
            "--set",
            f"{die_keys[0]} changes only the sliced chip model, and --chip-model is {chip_model}",
            "add --chip-model sliced (or step --slices), or drop the die.* override",
        )
    if chip_model == "flat":
        return pricer
    if chip_model == "tiled":
        from jalapeno.cost.tiles import TiledPricer

        return TiledPricer(pricer.system, pricer.efficiency)
    return SlicedPricer(pricer.system, pricer.efficiency, placement)


def refuse_idle_placement(pricers, placement: str) -> None:
    """Refuse ``--placement`` when every system priced is one slice (H100, H200, or a file without a ``[die]``):
    a placement spreads weights and KV over slices, and with one there is nothing to place, so it changed nothing
    while the output named it (``chip model: sliced (h100 1 slice, best)``; break51). ``pricers``: the pricer of
    each system (one, or a list: a comparison where any system has slices takes it).

    Raises:
        SpecError: naming the systems and the fix.
    """
    prs = pricers if isinstance(pricers, (list, tuple)) else [pricers]
    sliced = [p for p in prs if isinstance(p, SlicedPricer)]
    if not placement or not sliced or any(p.die.slices > 1 for p in sliced):
        return
    names = ", ".join(dict.fromkeys(p.system.name for p in sliced))
    raise SpecError(
        "--placement",
        f"{placement!r} places weights and KV across a chip's slices, and {names} "
        f"{'is' if len(sliced) == 1 else 'are'} one slice (no [die] of several): it would change nothing",
        "drop --placement, or price a chip with slices (e.g. b200, mi300x, jalapeno; docs/chip.md)",
    )


def slice_summary(ops: OpTable, times: OpTimes, pricer: SlicedPricer, i: int = 0) -> dict:
    """Per-slice view of point ``i`` of a step priced by ``pricer`` (what ``jalapeno step --slices`` shows).

    Every placement here is balanced, so each slice does 1/S of the step's FLOPs and HBM reads:
    the rows of ``per_slice`` are equal, and the busiest slice is any of them.

    Returns:
        dict: ``slices``, ``topology``, ``placement``, ``per_slice`` (list of dicts: compute_s, hbm_s,
        network_s, hbm_local_bytes, hbm_remote_bytes, exchange_bytes), ``on_die_bytes`` (whole
        chip), ``network_bound_ops`` (ops whose time the network sets), ``splits`` (op → the
        placement it uses at point ``i``), ``byte_check`` (local + remote HBM reads − the op table's bytes at
        point ``i``, summed over ops: 0 for a placement that reads every byte once; local reads are the placement's
        own, see ``_traffic_of``, so a placement that loses or double-counts bytes shows here).
    """
    die, tr = pricer.die, pricer.traffic(ops)
    s = die.slices
    row = {  # every op of the table counts once (its layer multiplicity is folded in)
        "compute_s": float(times.compute_s[:, i].sum()),
        "hbm_s": float(times.memory_s[:, i].sum()),
        "network_s": float(tr.network_s[:, i].sum()),
        "hbm_local_bytes": float(tr.hbm_local_bytes[:, i].sum() / s),
        "hbm_remote_bytes": float(tr.hbm_remote_bytes[:, i].sum() / s),
        "exchange_bytes": float(tr.exchange_bytes[:, i].sum() / s),
    }
    net_bound = [
        ops.name[j]
        for j in range(len(ops.name))
        if tr.network_s[j, i] > max(times.compute_s[j, i], times.memory_s[j, i])
    ]
    return {
        "slices": s,
        "topology": die.topology,
        "placement": pricer.placement_used,
        "port_bandwidth_bytes_per_s": die.port_bandwidth_bytes_per_s,
        "bisection_bandwidth_bytes_per_s": die.bisection_bandwidth_bytes_per_s,
        "per_slice": [dict(row, slice=k) for k in range(s)],
        "on_die_bytes": float(tr.network_bytes[:, i].sum()),
        "network_bound_ops": net_bound,
        "splits": {ops.name[j]: str(tr.split[j, i]) for j in range(len(ops.name))},
        "byte_check": float((tr.hbm_local_bytes[:, i] + tr.hbm_remote_bytes[:, i] - ops.bytes[:, i]).sum()),
    }
