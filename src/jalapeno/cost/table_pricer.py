"""The table-lookup pricer: ops priced by interpolating measured kernel latencies directly.

A second implementation of the :class:`jalapeno.cost.pricer.Pricer` protocol, for chips that have
measured kernel tables (the idea of aiconfigurator's and InferSim's lookup, none of their code).
For every op kind and compute format with a table (GEMMs and routed-expert MoE blocks today), a
:class:`KernelSurface` holds, on a regular grid over (log2 FLOP per kernel, log2 weight bytes per
kernel), the median of log(measured / roofline) of the table's rows, the roofline being this
chip's calibrated :class:`~jalapeno.cost.pricer.RooflinePricer` on the same op built by the same
op builder. An op is priced as its roofline time times the interpolated correction: at a
measured shape that is the measured latency; between shapes it is interpolated (bilinear in the
logs); beyond the table it keeps the nearest shape's correction over the roofline's scaling.
Every other op (attention, norms, collectives) is priced by the roofline pricer unchanged.

The surfaces are built from the kernel tables by fit/table_lookup.py (``load_table_pricer``);
this module only evaluates them, vectorised over thousands of points per call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from jalapeno.cost.optable import OpTable
from jalapeno.cost.pricer import SystemPricer
from jalapeno.cost.roofline import OpTimes, op_times
from jalapeno.errors import SpecError
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.hardware import System

#: grid step of a surface in log2 units (a factor sqrt(2) in FLOP and in bytes): the tables'
#: shapes are spaced by powers of two, so every cell of the populated range holds rows
GRID_STEP_LOG2 = 0.5


@dataclass(frozen=True, slots=True)
class KernelSurface:
    """log(measured / roofline) on a grid over (log2 FLOP per kernel, log2 weight bytes per kernel).

    Attributes:
        x0, y0: log2 coordinates of the first grid cell's centre.
        step: cell width in log2 units.
        values: (nx, ny) log-ratio per cell (empty cells filled from their nearest measured ones).
        rows: measured kernel rows behind the surface.
    """

    x0: float
    y0: float
    step: float
    values: np.ndarray
    rows: int

    @classmethod
    def from_points(cls, flop_per_kernel, bytes_per_kernel, log_ratio, step: float = GRID_STEP_LOG2) -> KernelSurface:
        """Grid the scattered measurements (arrays (n,)): per cell the median log-ratio; empty
        cells take the mean of their filled neighbours, repeated until the grid is full.

        Raises:
            SpecError: no finite point.
        """
        with np.errstate(divide="ignore", invalid="ignore"):  # non-positive work: dropped below
            x = np.log2(np.asarray(flop_per_kernel, dtype=float))
            y = np.log2(np.asarray(bytes_per_kernel, dtype=float))
        v = np.asarray(log_ratio, dtype=float)
        ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(v)
        if not ok.any():
            raise SpecError(
                "kernel table", "no measured row with positive FLOP and weight bytes", "check the table's formats"
            )
        x, y, v = x[ok], y[ok], v[ok]
        x0, y0 = np.floor(x.min() / step) * step, np.floor(y.min() / step) * step
        ix = np.floor((x - x0) / step).astype(int)
        iy = np.floor((y - y0) / step).astype(int)
        nx, ny = ix.max() + 1, iy.max() + 1
        cell = ix * ny + iy
        order = np.argsort(cell, kind="stable")
        cells, starts = np.unique(cell[order], return_index=True)
        grid = np.full(nx * ny, np.nan)
        grid[cells] = [np.median(s) for s in np.split(v[order], starts[1:])]
        grid = _fill(grid.reshape(nx, ny))
        return cls(float(x0 + step / 2), float(y0 + step / 2), step, grid, int(ok.sum()))

    def log_ratio(self, flop_per_kernel, bytes_per_kernel) -> np.ndarray:
        """Bilinear interpolation of the grid at the given points (any equal shapes), clamped to
        the grid's edge beyond it."""
        nx, ny = self.values.shape
        fx = np.clip((np.log2(flop_per_kernel) - self.x0) / self.step, 0, nx - 1)
        fy = np.clip((np.log2(bytes_per_kernel) - self.y0) / self.step, 0, ny - 1)
        i0, j0 = (
            np.minimum(np.floor(fx).astype(int), max(nx - 2, 0)),
            np.minimum(np.floor(fy).astype(int), max(ny - 2, 0)),
        )
        i1, j1 = np.minimum(i0 + 1, nx - 1), np.minimum(j0 + 1, ny - 1)
        tx, ty = fx - i0, fy - j0
        g = self.values
        return (
            (1 - tx) * (1 - ty) * g[i0, j0]
            + tx * (1 - ty) * g[i1, j0]
            + (1 - tx) * ty * g[i0, j1]
            + tx * ty * g[i1, j1]
        )


def _fill(grid: np.ndarray) -> np.ndarray:
    """Fill NaN cells with the mean of their filled 4-neighbours, front by front."""
    g = grid.copy()
    while np.isnan(g).any():
        pad = np.pad(g, 1, constant_values=np.nan)
        nb = np.stack([pad[:-2, 1:-1], pad[2:, 1:-1], pad[1:-1, :-2], pad[1:-1, 2:]])
        cnt = np.isfinite(nb).sum(0)
        mean = np.where(cnt > 0, np.nansum(nb, 0) / np.maximum(cnt, 1), np.nan)
        hole = np.isnan(g) & (cnt > 0)
        if not hole.any():
            break
        g[hole] = mean[hole]
    return g


@dataclass(frozen=True, slots=True, repr=False)
class TablePricer(SystemPricer):
    """Measured-kernel lookup for the ops with a table, roofline for the rest (module docstring).

    Attributes:
        system, efficiency: as :class:`~jalapeno.cost.pricer.RooflinePricer`; the roofline the
            corrections multiply is priced with ``efficiency`` (a band set scales the lookup by
            its roofline ratio to the calibrated set).
        surfaces: (op kind, compute format) → :class:`KernelSurface` (``("gemm", "fp8")``); GEMMs
            by their kernel key (``("gemm", "fp8_block")``: OpTable.keys).
        source: what the surfaces were built from (package, table versions), for records.

    Raises:
        SpecError: ``system`` is not a System, ``efficiency`` not an Efficiency, or a surface key
            is not an (op kind, format) pair.
    """

    system: System
    efficiency: Efficiency
    surfaces: dict = field(default_factory=dict)
    source: str = ""

    def __post_init__(self) -> None:
        SystemPricer.__post_init__(self)
        for k in self.surfaces:
            if not (isinstance(k, tuple) and len(k) == 2):
                raise SpecError(
                    "pricer.surfaces",
                    f"key {k!r} is not an (op kind, format) pair",
                    'key surfaces like ("gemm", "fp8")',
                )

    def op_times(self, ops: OpTable) -> OpTimes:
        """Roofline op times (seconds, (n_ops, N)) scaled by the measured kernel surfaces where they cover an op."""
        base = op_times(ops, self.system.chip, self.efficiency)
        if not self.surfaces:
            return base
        scale = np.ones_like(base.time_s)
        for i, (kind, fmt, key) in enumerate(zip(ops.kind, ops.fmt, ops.keys)):
            surf = self.surfaces.get((kind, key if kind == "gemm" else fmt))
            if surf is None:
                continue
            k = np.maximum(np.asarray(ops.kernels[i], dtype=float), 1e-30)
            flop, wb = ops.flop[i] / k, ops.weight_bytes[i] / k
            ok = (flop > 0) & (wb > 0)
            if ok.any():
                scale[i, ok] = np.exp(surf.log_ratio(flop[ok], wb[ok]))
        return OpTimes(base.compute_s * scale, base.memory_s * scale, base.overhead_s * scale, base.time_s * scale)
