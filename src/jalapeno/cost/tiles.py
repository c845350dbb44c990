"""Tile-level mapping of GEMMs: why a few-row GEMM reaches a small fraction of peak.

The flat roofline takes a GEMM's efficiency from calibration, η(m) = η_peak · m / (m + m_half)
(cost/roofline.py). This module derives the shape of that curve from the chip's structure, the
way a GEMM kernel is actually mapped (LLMCompass-style, vectorised over ops and batch points):

- The output [m, n] is cut into tiles of tm x tn (tm ≥ the tensor-core instruction's smallest M:
  64 for Hopper's wgmma, 128 for Blackwell's tcgen05, 16 for CDNA's MFMA), so a GEMM of m < tm rows
  still spends a whole tile's MMA time: the padding term m / (⌈m/tm⌉·tm).
- Tiles are spread over the U compute units (SMs/CUs) in waves; with split-K factor s (the inner
  dimension cut in s parts, partial sums reduced afterwards) there are T·s work units of
  tm·tn·k/s each: the wave term T·s / (⌈T·s/U⌉·U).
- A tile's operands must fit the unit's shared memory with double buffering:
  2 · (tm + tn) · tk · b_in ≤ SRAM per unit, tk = 64 elements (one stage of the k loop).

The structural efficiency is the useful fraction of the machine's MMA time,

    η_struct = m·n / (⌈m/tm⌉·tm · ⌈n/tn⌉·tn) · T·s / (⌈T·s/U⌉·U),   T = ⌈m/tm⌉·⌈n/tn⌉,

maximised over tm ∈ {tile_m, 2·tile_m} (≤ 256), tn ∈ {64, 128, 256} and s ∈ {1, 2, 4, 8, 16} with
k/s ≥ 256 (what an autotuned kernel library picks), and the *tiled* GEMM efficiency is the
calibrated asymptote times it: η_tile(m) = η_peak · η_struct(m, k, n). ``TiledPricer`` prices
GEMMs and routed experts with it (every other op as the flat pricer); ``jalapeno step --tiles``
prints each GEMM's mapping beside the calibrated η(m); docs/chip.md §6 compares the two on the
chips that publish SM/CU counts. Chips that do not (Jalapeño, Rubin) have no tile model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jalapeno.cost.optable import OpTable
from jalapeno.cost.pricer import SystemPricer
from jalapeno.cost.roofline import OpTimes, k_serial_s, op_times
from jalapeno.errors import SpecError
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.hardware import Chip, System

#: elements of the k dimension per pipeline stage of a tile (a common CUTLASS/Triton choice)
TILE_K = 64
#: candidate tile widths (n) and split-K factors an autotuner tries
TILE_N = (64.0, 128.0, 256.0)
SPLIT_K = (1.0, 2.0, 4.0, 8.0, 16.0)
#: smallest k per split: named assumption (four TILE_K stages per part, so the pipeline fills;
#: below it the partial-sum reduction outweighs the extra parallelism)
MIN_K_PER_SPLIT = 256.0


@dataclass(frozen=True, slots=True)
class TileMap:
    """The chosen mapping of GEMMs, arrays of one shape (the broadcast of m, k, n).

    Attributes:
        eta: structural efficiency (useful / spent MMA time), in (0, 1].
        tile_m, tile_n, split_k: the chosen tile and split-K factor.
        waves: waves of work units over the compute units.
    """

    eta: np.ndarray
    tile_m: np.ndarray
    tile_n: np.ndarray
    split_k: np.ndarray
    waves: np.ndarray


def check_tile_chip(chip: Chip, where: str = "--chip-model tiled") -> None:
    """Refuse a chip without the figures the tile model needs.

    Raises:
        SpecError: the chip's TOML gives no compute_units, sram_per_unit_kib or mma_tile_m.
    """
    missing = [
        k
        for k, v in (
            ("compute_units", chip.compute_units),
            ("sram_per_unit_kib", chip.sram_per_unit_bytes),
            ("mma_tile_m", chip.mma_tile_m),
        )
        if v is None
    ]
    if missing:
        raise SpecError(
            where,
            f"{chip.name} does not publish {', '.join(missing)} (the tile model needs them)",
            "use a chip that gives chip.compute_units, chip.sram_per_unit_kib and chip.mma_tile_m "
            "(e.g. h100, b200, mi300x), add them to its TOML with their source, or try assumed values as a what-if: "
            + " ".join(f"--set chip.{k}=N" for k in missing)
            + " (on compare, --set NAME:chip.KEY=N sets one system)",
        )


def gemm_tiles(m, k, n, chip: Chip, act_bytes: float = 2.0) -> TileMap:
    """The best tile mapping of GEMMs [m, k] x [k, n] on ``chip`` (module docstring).

    Args:
        m, k, n: arrays (broadcastable) of rows, inner and output dimension; m = 0 gives eta 0.
        act_bytes: bytes per operand element in shared memory (1 for FP8/FP4 inputs, 2 for BF16).

    Raises:
        SpecError: the chip lacks the tile figures (:func:`check_tile_chip`).

    >>> from jalapeno.specs.catalog import load_system
    >>> t = gemm_tiles(1.0, 7168.0, 2048.0, load_system("h100").chip)   # one row on H100: tm = 64
    >>> float(t.tile_m), round(float(t.eta), 4)
    (64.0, 0.0152)
    """
    check_tile_chip(chip)
    m, k, n = np.broadcast_arrays(np.asarray(m, dtype=float), np.asarray(k, dtype=float), np.asarray(n, dtype=float))
    units, smem, tm0 = float(chip.compute_units), float(chip.sram_per_unit_bytes), float(chip.mma_tile_m)
    best = TileMap(*(np.zeros(m.shape) for _ in range(5)))
    for tm in sorted({tm0, min(2 * tm0, 256.0)}):
        for tn in TILE_N:
            if 2.0 * (tm + tn) * TILE_K * act_bytes > smem:
                continue
            rows_t, cols_t = np.ceil(m / tm), np.ceil(n / tn)
            pad = np.where(m > 0, m * n / np.maximum(rows_t * tm * cols_t * tn, 1e-30), 0.0)
            for s in SPLIT_K:
                ok = (k / s >= MIN_K_PER_SPLIT) | (s == 1.0)
                work = rows_t * cols_t * s
                waves = np.ceil(work / units)
                eta = np.where(ok, pad * work / np.maximum(waves * units, 1e-30), 0.0)
                better = eta > best.eta
                best = TileMap(
                    np.where(better, eta, best.eta),
                    np.where(better, tm, best.tile_m),
                    np.where(better, tn, best.tile_n),
                    np.where(better, s, best.split_k),
                    np.where(better, waves, best.waves),
                )
    if np.any(m > 0) and np.all(best.tile_m[m > 0] == 0):
        raise SpecError(
            "chip.sram_per_unit_kib",
            f"{chip.name}'s {smem / 1024:g} KiB per unit holds no tile",
            "check the value (KiB of shared memory / LDS per SM or CU)",
        )
    return best


def op_tiles(ops: OpTable, chip: Chip) -> TileMap:
    """Tile mapping of every GEMM-like op (kind ``gemm``/``moe`` with a known (k, n)), (n_ops, N);
    other ops get eta 0 (they are priced as on the flat chip)."""
    n_ops = len(ops.name)
    shape = ops.rows.shape
    if ops.kn:
        k = np.stack([np.broadcast_to(np.asarray(a, dtype=float), shape[1:]) for a, _ in ops.kn]).reshape(shape)
        n = np.stack([np.broadcast_to(np.asarray(b, dtype=float), shape[1:]) for _, b in ops.kn]).reshape(shape)
    else:
        k = n = np.zeros(shape)
    ab = np.array([1.0 if f in ("fp8", "fp4") else 2.0 for f in ops.fmt], dtype=float).reshape(n_ops, 1)
    tiled = np.array([kd in ("gemm", "moe") for kd in ops.kind]).reshape(n_ops, 1) & (k > 0) & (n > 0)
    rows = np.where(tiled, ops.rows, 0.0)
    t8 = gemm_tiles(rows, k, n, chip, 1.0)
    t16 = gemm_tiles(rows, k, n, chip, 2.0)
    return TileMap(
        *(
            np.where(ab == 1.0, a, b)
            for a, b in zip(
                (t8.eta, t8.tile_m, t8.tile_n, t8.split_k, t8.waves),
                (t16.eta, t16.tile_m, t16.tile_n, t16.split_k, t16.waves),
            )
        )
    )


@dataclass(frozen=True, slots=True, repr=False)
class TiledPricer(SystemPricer):
    """The flat roofline with GEMM and routed-expert efficiency from the tile model:
    η = η_peak(fmt) · η_struct(m, k, n) instead of η_peak · m / (m + m_half) (module docstring).

    Raises:
        SpecError: wrong argument types, or a chip without the tile figures.
    """

    system: System
    efficiency: Efficiency

    def __post_init__(self) -> None:
        SystemPricer.__post_init__(self)
        check_tile_chip(self.system.chip)

    def op_times(self, ops: OpTable) -> OpTimes:
        """Op times (seconds, (n_ops, N)): a GEMM's compute at its tile-mapping efficiency (:func:`op_tiles`: tiles
        over the compute units, partial waves), not below the serial k loop; memory and overhead as the roofline."""
        flat = op_times(ops, self.system.chip, self.efficiency)
        tiles = op_tiles(ops, self.system.chip)
        n_ops = len(ops.name)
        peak = np.array([self.system.chip.peak(f) for f in ops.fmt], dtype=float).reshape(n_ops, 1)
        e = self.efficiency
        top = np.array(
            [
                e.moe_peak(e.moe_entry(f, g)) if kd == "moe" else e.gemm_peak(g)
                for f, g, kd in zip(ops.fmt, ops.keys, ops.kind)
            ],
            dtype=float,
        ).reshape(n_ops, 1)
        use = tiles.eta > 0
        compute = np.where(use, ops.flop / (peak * top * np.maximum(tiles.eta, 1e-30)), flat.compute_s)
        compute = np.maximum(compute, k_serial_s(ops, self.efficiency))  # the serial k loop (roofline.py)
        return OpTimes.combine(compute, flat.memory_s, flat.overhead_s)


def tile_rows(ops: OpTable, chip: Chip, eff: Efficiency, i: int = 0) -> list[dict]:
    """Each GEMM-like op of point ``i`` with its mapping and both efficiencies (``step --tiles``)."""
    tiles = op_tiles(ops, chip)
    out = []
    for j, name in enumerate(ops.name):
        if tiles.eta[j, i] <= 0:
            continue
        f, kd, g = ops.fmt[j], ops.kind[j], ops.keys[j]
        top = eff.moe_peak(eff.moe_entry(f, g)) if kd == "moe" else eff.gemm_peak(g)
        half = eff.moe_half(eff.moe_entry(f, g)) if kd == "moe" else eff.gemm_half(g)
        m = float(ops.rows[j, i])
        k, n = (float(np.broadcast_to(np.asarray(x, dtype=float), ops.rows.shape[1:])[i]) for x in ops.kn[j])
        out.append(
            {
                "op": name,
                "format": f,
                "m": m,
                "k": k,
                "n": n,
                "tile": f"{tiles.tile_m[j, i]:.0f}x{tiles.tile_n[j, i]:.0f}",
                "split_k": float(tiles.split_k[j, i]),
                "waves": float(tiles.waves[j, i]),
                "eta_struct": float(tiles.eta[j, i]),
                "eta_tiled": float(top * tiles.eta[j, i]),
                "eta_calibrated": float(top * m / (m + half)),
            }
        )
    return out
