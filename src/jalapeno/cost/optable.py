"""The op table of one step: a struct of arrays, one row per op, one column per batch point.

Every row carries per-chip counts for the whole step (layer multiplicity folded in): FLOPs,
bytes by kind (weights, KV cache, activations), the GEMM row count that sets its efficiency, the
kernels it launches, its compute format and kind (``gemm``, ``moe``, ``attention``, ``memory``),
whether it repeats on every pipeline stage (layer ops) or runs once per step (embedding, head),
and optionally the measured kernel family that prices it (``kernel``: ``mla_decode`` /
``mla_prefill`` for the MLA attention kernels, which have their own efficiency entries; "" = its
kind's parameters).
Collectives form a second table: kind, group size, per-chip message bytes, calls per step, and
optionally the op whose compute overlaps them by construction (``hidden_under``: the ring KV
exchange of context-parallel attention runs under the attention of the block in hand).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: kernels of one MoE layer's routed-expert block (gate/up grouped GEMM, activation, down grouped
#: GEMM); an op of kind "moe" counts this many per layer, and ``Efficiency.moe_floor_s`` is spread
#: over them
MOE_KERNELS = 3
#: stored routed-expert formats whose MoE kernels are not their compute format's (MXFP4 experts run as
#: W4A8 MXFP4 x MXFP8 on Blackwell, W4A16 on Hopper): an op of kind "moe" with such experts carries the
#: stored format as its ``key``, so an engine-backend pricer can tell its measured curves apart
#: (cost/moe_backend.MeasuredMoePricer); the roofline prices MoE ops by their compute format whatever the key
MOE_WEIGHT_KEYS = ("mxfp4",)


@dataclass(frozen=True, slots=True)
class OpTable:
    """Ops of one step on one chip. Arrays are (n_ops, N); tuples are (n_ops,)."""

    name: tuple[str, ...]
    kind: tuple[str, ...]
    fmt: tuple[str, ...]
    per_stage: np.ndarray
    flop: np.ndarray
    weight_bytes: np.ndarray
    kv_bytes: np.ndarray
    act_bytes: np.ndarray
    rows: np.ndarray
    kernels: np.ndarray
    #: (n_ops,) kernel family with its own efficiency entries (specs/kernel_lookup.KERNEL_FAMILIES), ""
    #: for none; () = none for every op
    kernel: tuple[str, ...] = ()
    #: (n_ops,) the (k, n) of a GEMM-like op's matrix, each a scalar or an array (N,) as given (the
    #: inner and output dimension per row; zeros for other ops), for the tile model (cost/tiles.py),
    #: which broadcasts them; () = unknown. Kept unbroadcast: the sweep builds tables per call.
    kn: tuple[tuple, ...] = ()
    #: (n_ops,) the efficiency entry a GEMM-like op is priced by when finer than its compute format
    #: (``fp8_block``: block-scaled FP8 weights, specs/formats.NumberFormat.gemm_key); for an op of kind
    #: "moe", its experts' stored format where that names other kernels (:data:`MOE_WEIGHT_KEYS`); () = ``fmt``
    key: tuple[str, ...] = ()
    #: (n_ops,) how many ranks split a GEMM-like op's matrix width (the MoE TP degree of the routed
    #: experts: each rank runs the experts ``split`` times narrower, cost/moe_width.py); () = 1 for every op
    split: tuple[float, ...] = ()

    @property
    def keys(self) -> tuple[str, ...]:
        """Per op, the GEMM efficiency key it is priced by (``key`` where given, else ``fmt``)."""
        return self.key or self.fmt

    @property
    def bytes(self) -> np.ndarray:
        """All HBM bytes of each op, (n_ops, N)."""
        return self.weight_bytes + self.kv_bytes + self.act_bytes


@dataclass(frozen=True, slots=True)
class CollectiveTable:
    """Collectives of one step on one chip. ``bytes`` is (n_coll, N), the rest (n_coll,).

    ``hidden_under[j]`` names the op whose time overlaps collective j by design ("" = none):
    cost/step.py exposes only max(0, t_coll − t_op) of such a collective, plus
    min(t_coll, t_op) / ``hidden_stages[j]`` where the two run as a pipeline of that many stages
    (the fused GEMM + all-reduce's waves of output tiles; inf, the default, for the CP ring).
    """

    name: tuple[str, ...]
    kind: tuple[str, ...]
    #: (n_coll,) chips per collective; in the table of a batch joined from several layouts (cost/layout_columns.py)
    #: a group over the stage is an (N,) int array, which cost/priced.price_layouts cuts to each layout's int
    group: tuple[int, ...]
    per_stage: np.ndarray
    bytes: np.ndarray
    calls: np.ndarray
    hidden_under: tuple[str, ...] = ()
    hidden_stages: np.ndarray | None = None

    @property
    def pipeline_p2p(self) -> np.ndarray:
        """(n_coll,) bool: the pipeline-stage hand-off, a send/recv outside the layers (cost/ops.py
        ``pp.send_recv``), charged (pp − 1) times per step. A per-stage send/recv (the CP ring exchange,
        cost/attention.add_cp_ring) is part of every layer and priced with it."""
        return np.array([k == "send_recv" for k in self.kind], dtype=bool) & ~self.per_stage


def _rows(arrays: list) -> np.ndarray:
    """(len(arrays), N) from arrays of shape (N,) each: ``np.stack``'s result, built by ``np.array``
    (a third of the time for a step's hundred-odd rows)."""
    return np.array(arrays, dtype=float)


_F64 = np.dtype(np.float64)  # the native float64 dtype, one object (another dtype takes the conversion path)


class OpBuilder:
    """Collects op and collective rows for N batch points, then freezes them into tables."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._shape = (n,)
        self._ops: list[tuple] = []
        self._colls: list[tuple] = []
        self._filled: dict[float, np.ndarray] = {}  # a scalar's (N,) row, made once (rows are copied by build)

    def _arr(self, x) -> np.ndarray:
        if type(x) is np.ndarray and x.dtype is _F64 and x.shape == self._shape:
            return x  # what np.asarray(x, dtype=float) returns (the hot path: no conversion)
        if type(x) is float or type(x) is int:
            v = float(x)
            if v == 0.0 and math.copysign(1.0, v) < 0:  # -0.0 is the key 0.0: not from the cache
                return np.full(self.n, v)
            row = self._filled.get(v)
            if row is None:
                row = self._filled[v] = np.full(self.n, v)
            return row
        a = np.asarray(x, dtype=float)
        if a.shape == (self.n,):
            return a
        return np.full(self.n, float(a)) if a.ndim == 0 else np.broadcast_to(a, (self.n,))

    def op(
        self,
        name: str,
        kind: str,
        fmt: str,
        *,
        flop=0.0,
        weight=0.0,
        kv=0.0,
        act=0.0,
        rows=1.0,
        kernels: float = 1.0,
        count: float = 1.0,
        per_stage: bool = True,
        kernel: str = "",
        kn: tuple[float, float] = (0.0, 0.0),
        key: str = "",
        split: float = 1.0,
    ) -> None:
        """Add an op; every quantity is per occurrence and is multiplied by ``count``.

        ``kernel``: the kernel family whose efficiency entries price it ("" = those of ``kind``);
        ``kn``: the (k, n) of a GEMM-like op's matrix (scalars or (N,); the tile model's shape);
        ``key``: the GEMM efficiency entry that prices it when finer than ``fmt`` ("" = ``fmt``);
        ``split``: ranks splitting its matrix width (the routed experts' MoE TP; :attr:`OpTable.split`).
        """
        c = float(count)
        if c <= 0:
            return
        if c == 1.0:  # x·1 is x: skip four array multiplications on the hot path (same values)
            self._ops.append(
                (
                    name,
                    kind,
                    fmt,
                    per_stage,
                    self._arr(flop),
                    self._arr(weight),
                    self._arr(kv),
                    self._arr(act),
                    self._arr(rows),
                    kernels * c,
                    kernel,
                    kn,
                    key or fmt,
                    float(split),
                )
            )
            return
        self._ops.append(
            (
                name,
                kind,
                fmt,
                per_stage,
                self._times(flop, c),
                self._times(weight, c),
                self._times(kv, c),
                self._times(act, c),
                self._arr(rows),
                kernels * c,
                kernel,
                kn,
                key or fmt,
                float(split),
            )
        )

    def _times(self, x, c: float) -> np.ndarray:
        """``_arr(x) * c``: a scalar multiplied first (one IEEE product per element either way; 0·c a cached row)."""
        if type(x) is float or type(x) is int:
            return self._arr(float(x) * c)
        return self._arr(x) * c

    def gemm(
        self,
        name: str,
        fmt: str,
        rows,
        k: float,
        n_out: float,
        weight_bytes_per_elem: float,
        act_in_bytes: float,
        *,
        count: float = 1.0,
        per_stage: bool = True,
        kernels: float = 1.0,
        weight_elems=None,
        key: str = "",
    ) -> None:
        """A GEMM [rows, k] x [k, n_out]: 2·rows·k·n FLOPs, k·n weights, rows·(k·b_in + 2·n) act.

        At a point with no rows the GEMM does not run: it reads no weights and launches nothing.
        ``key``: its GEMM efficiency entry when finer than ``fmt`` (``fp8_block``; "" = ``fmt``).
        """
        rows = self._arr(rows)
        w_elems = k * n_out if weight_elems is None else weight_elems
        weight = np.where(rows > 0, w_elems * weight_bytes_per_elem, 0.0)
        self.op(
            name,
            "gemm",
            fmt,
            flop=2.0 * rows * k * n_out,
            weight=weight,
            act=rows * (k * act_in_bytes + 2.0 * n_out),
            rows=rows,
            kernels=kernels,
            count=count,
            per_stage=per_stage,
            kn=(k, n_out),
            key=key,
        )

    def collective(
        self,
        name: str,
        kind: str,
        group: int,
        message_bytes,
        *,
        count: float = 1.0,
        per_stage: bool = True,
        hidden_under: str = "",
        hidden_stages=np.inf,
    ) -> None:
        """Add a collective of ``count`` calls of ``message_bytes`` per chip over ``group`` chips.

        ``hidden_under``: name of an op (already added) whose time overlaps this collective;
        ``hidden_stages``: pipeline stages of that overlap (scalar or (N,); inf: only the excess
        over the op shows; CollectiveTable). ``group`` may be an (N,) int array, every one > 1: the group of
        each column of a batch joined from several layouts (cost/priced.price_layouts cuts it per layout).
        """
        if type(group) is np.ndarray:  # one group per column (cost/layout_columns.py), every one > 1
            if count > 0:
                self._colls.append(
                    (
                        name,
                        kind,
                        group,
                        per_stage,
                        self._arr(message_bytes),
                        float(count),
                        hidden_under,
                        self._arr(hidden_stages),
                    )
                )
            return
        if group <= 1 or count <= 0:
            return
        self._colls.append(
            (
                name,
                kind,
                int(group),
                per_stage,
                self._arr(message_bytes),
                float(count),
                hidden_under,
                self._arr(hidden_stages),
            )
        )

    def build(self) -> tuple[OpTable, CollectiveTable]:
        """The ops and collectives added so far as arrays: (OpTable, CollectiveTable), (n_ops, N) and (n_colls, N)."""
        ops = self._ops
        z = np.zeros((0, self.n))
        table = OpTable(
            name=tuple(o[0] for o in ops),
            kind=tuple(o[1] for o in ops),
            fmt=tuple(o[2] for o in ops),
            per_stage=np.array([o[3] for o in ops], dtype=bool),
            flop=_rows([o[4] for o in ops]) if ops else z,
            weight_bytes=_rows([o[5] for o in ops]) if ops else z,
            kv_bytes=_rows([o[6] for o in ops]) if ops else z,
            act_bytes=_rows([o[7] for o in ops]) if ops else z,
            rows=_rows([o[8] for o in ops]) if ops else z,
            kernels=np.array([o[9] for o in ops], dtype=float),
            kernel=tuple(o[10] for o in ops),
            kn=tuple(o[11] for o in ops),
            key=tuple(o[12] for o in ops),
            split=tuple(o[13] for o in ops),
        )
        cs = self._colls
        colls = CollectiveTable(
            name=tuple(c[0] for c in cs),
            kind=tuple(c[1] for c in cs),
            group=tuple(c[2] for c in cs),
            per_stage=np.array([c[3] for c in cs], dtype=bool),
            bytes=_rows([c[4] for c in cs]) if cs else z,
            calls=np.array([c[5] for c in cs], dtype=float),
            hidden_under=tuple(c[6] for c in cs),
            hidden_stages=_rows([c[7] for c in cs]) if cs else z,
        )
        return table, colls
