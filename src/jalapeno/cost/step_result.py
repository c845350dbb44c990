"""A step's cost for N batch points (:class:`StepCost`, what cost/step.step_cost returns) and its views: records of
its op and collective tables (``op_rows``, ``collective_rows``), its headline numbers (``summary``), one point's
scalars (``time_s``, ``bound_of``, ``flop``, ``hbm_parts``, ``hbm_bytes``), a frame of all points (``to_frame``) and a
one-line repr. Moved from cost/step.py (round 46, module budget); cost/step.py re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jalapeno.cost.optable import CollectiveTable, OpTable
from jalapeno.cost.roofline import OpTimes
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.memory_fit import MemoryFit
from jalapeno.errors import SpecError


@dataclass(frozen=True, slots=True)
class StepCost:
    """Cost of one step for N batch points; per-chip, seconds and bytes. See module docstring.

    ``ops``/``times``/``collectives`` describe the whole (unsplit) step; under two-batch overlap
    (``overlap`` ``tbo``) the step time and attribution come from the two micro-batches instead,
    and ``hidden_comm_s`` (N,) is the all-to-all time they hide (0 where the step runs serially).
    """

    model: str
    system: str
    layout: Layout
    precision: str
    ops: OpTable
    times: OpTimes
    collectives: CollectiveTable
    coll_time_s: np.ndarray
    coll_algorithm: np.ndarray
    coll_level: tuple[str, ...]
    coll_scope: tuple[str, ...]
    step_time_s: np.ndarray
    interval_s: np.ndarray
    draft_s: np.ndarray
    attribution_s: dict
    bound: np.ndarray
    bound_margin: np.ndarray
    bound_level: np.ndarray
    memory: MemoryFit
    feasible: np.ndarray
    reason: np.ndarray
    overlap: str = "none"
    hidden_comm_s: np.ndarray | None = None

    def op_rows(self, i: int = 0) -> list[dict]:
        """The op table of point ``i`` as records (for tables and JSON)."""
        t = self.times
        rows = []
        for j, name in enumerate(self.ops.name):
            c, m, net = t.compute_s[j, i], t.memory_s[j, i], t.network[j, i]
            bound = "compute" if c >= max(m, net) else "hbm_bandwidth" if m >= net else "on_die_network"
            rows.append(
                {
                    "op": name,
                    "kind": self.ops.kind[j],
                    "format": self.ops.fmt[j],
                    "flop": float(self.ops.flop[j, i]),
                    "weight_bytes": float(self.ops.weight_bytes[j, i]),
                    "kv_bytes": float(self.ops.kv_bytes[j, i]),
                    "act_bytes": float(self.ops.act_bytes[j, i]),
                    "compute_s": float(c),
                    "memory_s": float(m),
                    "overhead_s": float(t.overhead_s[j, i]),
                    **({"network_s": float(net)} if t.network_s is not None else {}),
                    "time_s": float(t.time_s[j, i]),
                    "bound": bound,
                    "per_stage": bool(self.ops.per_stage[j]),
                }
            )
        return rows

    def collective_rows(self, i: int = 0) -> list[dict]:
        """The collectives of point ``i`` as records."""
        c = self.collectives
        return [
            {
                "collective": c.name[j],
                "kind": c.kind[j],
                "group": c.group[j],
                "bytes_per_call": float(c.bytes[j, i]),
                "calls": float(c.calls[j]),
                "time_s": float(self.coll_time_s[j, i]),
                "algorithm": str(self.coll_algorithm[j, i]),
                "level": self.coll_level[j],
                "scope": self.coll_scope[j],
            }
            for j in range(len(c.name))
        ]

    def summary(self, i: int = 0) -> dict:
        """Headline numbers of point ``i`` (JSON-ready)."""
        return {
            "model": self.model,
            "system": self.system,
            "layout": self.layout.as_dict(),
            "precision": self.precision,
            "step_time_s": float(self.step_time_s[i]),
            "interval_s": float(self.interval_s[i]),
            "draft_s": float(self.draft_s[i]),
            "bound": str(self.bound[i]),
            "bound_margin": float(self.bound_margin[i]),
            "bound_level": str(self.bound_level[i]),
            "attribution_s": {k: float(v[i]) for k, v in self.attribution_s.items()},
            "flop": float(self.ops.flop[:, i].sum()),
            "weight_bytes": float(self.ops.weight_bytes[:, i].sum()),
            "kv_bytes": float(self.ops.kv_bytes[:, i].sum()),
            "act_bytes": float(self.ops.act_bytes[:, i].sum()),
            "memory": {
                "weights_bytes": float(self.memory.weights_bytes),
                "kv_bytes": float(self.memory.kv_bytes[i]),
                "activation_bytes": float(self.memory.activation_bytes[i]),
                "reserve_bytes": float(self.memory.reserve_bytes),
                "usable_bytes": float(self.memory.usable_bytes),
            },
            "feasible": bool(self.feasible[i]),
            "reason": str(self.reason[i]),
            "overlap": self.overlap,
            "hidden_comm_s": float(self.hidden_comm_s[i]) if self.hidden_comm_s is not None else 0.0,
        }

    # ---- notebook views: scalars of one point, a frame of all, a short repr -------------------
    @property
    def n(self) -> int:
        """Number of batch points N the arrays hold."""
        return int(self.step_time_s.shape[0])

    def _one(self, i: int | None) -> int:
        if i is None:
            if self.n != 1:
                raise SpecError(
                    "i",
                    f"this step cost holds {self.n} points",
                    "pass the point's index, e.g. .time_s(0), or use .to_frame()",
                )
            return 0
        if not -self.n <= i < self.n:
            raise SpecError("i", f"index {i} is outside the {self.n} points", f"pass 0 ... {self.n - 1}")
        return i

    def time_s(self, i: int | None = None) -> float:
        """Step latency of point ``i`` in seconds (``i`` may be left out when N = 1).

        Raises:
            SpecError: ``i`` left out with N > 1, or out of range.
        """
        return float(self.step_time_s[self._one(i)])

    def bound_of(self, i: int | None = None) -> str:
        """Binding constraint of point ``i`` (compute, hbm_bandwidth, scale_up_link, ...)."""
        return str(self.bound[self._one(i)])

    def flop(self, i: int | None = None) -> float:
        """FLOPs per chip of point ``i`` (all ops)."""
        return float(self.ops.flop[:, self._one(i)].sum())

    def hbm_parts(self, i: int | None = None) -> dict[str, float]:
        """HBM bytes per chip of point ``i`` by kind: ``weight_bytes``, ``kv_bytes``, ``act_bytes`` (every op's)."""
        j = self._one(i)
        return {k: float(getattr(self.ops, k)[:, j].sum()) for k in ("weight_bytes", "kv_bytes", "act_bytes")}

    def hbm_bytes(self, i: int | None = None) -> float:
        """HBM bytes per chip of point ``i``: weights + KV cache + activations."""
        return sum(self.hbm_parts(i).values())

    def to_frame(self):
        """One row per point: :meth:`summary`'s scalars (attribution as ``attribution_<bound>_s``,
        memory as ``memory_<part>``; the layout as its label)."""
        import pandas as pd

        rows = []
        for i in range(self.n):
            d = self.summary(i)
            row = {k: v for k, v in d.items() if not isinstance(v, dict)}
            row["layout"] = self.layout.label
            row.update({f"attribution_{k}_s": v for k, v in d["attribution_s"].items()})
            row.update({f"memory_{k}": v for k, v in d["memory"].items()})
            rows.append(row)
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        t = self.step_time_s * 1e3
        head = f"StepCost({self.model} on {self.system}, {self.layout.label}, {self.precision}"
        if self.n == 1:
            return (
                f"{head}: step {t[0]:.3g} ms, {self.bound[0]}-bound x{self.bound_margin[0]:.2g}"
                f"{'' if self.feasible[0] else ', infeasible: ' + str(self.reason[0])})"
            )
        return f"{head}: {self.n} points, step {t.min():.3g}-{t.max():.3g} ms)"
