"""Roofline time of each op: max(compute, memory) plus a fixed per-kernel cost.

    t_op = max(FLOP / (F_fmt · eta_c), bytes / (W · eta_m)) + kernels · t_launch

F_fmt is the chip's dense peak in the op's compute format, W its HBM bandwidth. eta_c depends on
the op: GEMMs follow eta(m) = gemm_peak_fraction_f · m / (m + gemm_half_rows_f) in their row count m
(a few-row GEMM cannot fill a tensor-core tile), per compute format f, or per GEMM kernel key where
the op names one (OpTable.key: ``fp8_block`` for block-scaled FP8 weights, priced by gemm[fp8_block]
at the FP8 peak); attention kernels use
attention_peak(f) (attention_peak_fraction for BF16; FP8 attention kernels reach a lower
fraction of their higher peak, specs/efficiency.py), except the ops that name a measured kernel
family (OpTable.kernel: the MLA decode and prefill kernels), which use that family's
mla_decode[f] / mla_prefill[f] peak and HBM fractions (falling back to the generic attention
values when unset). eta_m = gemm_hbm_fraction_f for GEMMs (weight streaming), hbm_fraction
for every other op. The routed-expert block of an MoE layer (kind ``moe``) has the same form with
its own parameters (moe_peak_fraction_f, moe_half_rows_f, moe_hbm_fraction_f: grouped GEMMs plus
permute/quantise/finalize, fitted on measured MoE layers; block-scaled FP8 experts by moe[fp8_block] where a
set has it, specs/efficiency.Efficiency.moe_entry) and, when moe_floor_s (or the entry's floor_s) is set, a fixed
cost of it per layer instead of its kernels' launches. A GEMM whose entry sets k_block_s
(block-scaled FP8: the k loop serial per output tile) takes at least (k / 128) · k_block_s besides
its launch, whatever its bytes (:func:`k_serial_s`; counted in its compute term). An op of a measured
kernel family whose entry sets floor_s (the MLA generation kernel) costs at least floor_s per kernel
besides its roofline, in place of its launches when they are less (:func:`kernel_floor_s`). A chip whose board power
holds its clock under dense matrix load below the clock its architecture's calibration prices (Chip.dense_clock_ratio
r < 1) runs an op that reaches at least :data:`DENSE_UTILISATION` of its format's peak at r of that speed (compute
/ r) when :data:`POWER_CLOCK` is on (:func:`power_clock`). Parameters and their sources: specs/efficiency.py,
docs/model.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jalapeno.cost.optable import MOE_KERNELS, OpTable
from jalapeno.errors import SpecError
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.hardware import Chip
from jalapeno.specs.kernel_efficiency import K_BLOCK


#: whether a chip's Chip.dense_clock_ratio slows its dense compute-bound ops (:func:`power_clock`). Built in round 41
#: (mi3xx41, docs/gap_large_batch_decode.md; on: MLPerf MI300X 21.4% -> 4.3%, InferenceX MI300X TTFT 20.0 -> 19.4%
#: held out) and shipped OFF: its named assumption, that the gfx942 calibration prices MI325X's clock, is contradicted
#: by the provenance of the GEMM rows the MI300X/MI325X sets fit on (fit/amd.py: aiter PR #365's block-scale rows
#: were tuned on MI300X, so their times already carry MI300X's power-held clock and the ratio would count it twice);
#: the decision to ship had rested on held-out figures (review41). Round 42 settled it: the tables carry the clock of
#: the board that tuned them (MI325X- vs MI300X-tuned rows at the same shapes 1.158x apart;
#: scripts/gfx942_table_clock.py), so the objection holds; the per-family clock it implies moves MLPerf MI325X
#: 5.9% -> 9.6% and is not built (docs/model.md §4).
POWER_CLOCK = False
#: an op at or above this fraction of its format's peak draws enough power to be held at the board's power-limited
#: clock; below it (decode's few-row GEMMs and fused MoE, 0.6-10% of peak) it runs unthrottled. Named assumption of
#: round 26 (scripts/gfx942_power.py DENSE_UTILISATION): half of AMD's max-achievable dense FP8 utilisation, 1,273 /
#: 2,615 TFLOP/s = 0.49 on MI300X (ROCm blog "Measuring Max-Achievable FLOPs - Part 2", 2025-02-27, Table 1)
DENSE_UTILISATION = 0.25


def power_clock(compute_s: np.ndarray, eta: np.ndarray, ratio: float) -> np.ndarray:
    """Compute times (n_ops, N), s, with the ops at or above :data:`DENSE_UTILISATION` of peak (``eta``, the
    fraction of its format's peak each op reaches, same shape) slowed to a clock ``ratio`` (0, 1] of the calibrated
    one: compute / ratio there, unchanged elsewhere.

    >>> power_clock(np.array([[1.0], [1.0]]), np.array([[0.5], [0.1]]), 0.5).ravel().tolist()
    [2.0, 1.0]

    Raises:
        SpecError: ``ratio`` outside (0, 1].
    """
    if not 0.0 < ratio <= 1.0:
        raise SpecError(
            "chip.dense_clock_ratio",
            f"{ratio!r} is outside (0, 1]",
            "give the sustained clock over the calibrated one, e.g. 1230 / 1464 = 0.840",
        )
    if ratio == 1.0:
        return compute_s
    return np.where(eta >= DENSE_UTILISATION, compute_s / ratio, compute_s)


@dataclass(frozen=True, slots=True)
class OpTimes:
    """Per-op times (n_ops, N), seconds.

    ``network_s``: on-die network time where a pricer models the chip's slices (cost/sliced.py);
    None on the flat chip. ``time_s`` = max(compute, memory, network) + overhead.
    """

    compute_s: np.ndarray
    memory_s: np.ndarray
    overhead_s: np.ndarray
    time_s: np.ndarray
    network_s: np.ndarray | None = None

    @property
    def network(self) -> np.ndarray:
        """On-die network time, zeros on the flat chip, (n_ops, N)."""
        return np.zeros_like(self.compute_s) if self.network_s is None else self.network_s

    @classmethod
    def combine(
        cls, compute_s: np.ndarray, memory_s: np.ndarray, overhead_s: np.ndarray, network_s: np.ndarray | None = None
    ) -> "OpTimes":
        """Per-op times from their terms by the roofline rule: time = max(compute, memory, network) + overhead.

        Every pricer that changes a term (overlap, tiles, slices, kernel backends) recombines through this one
        rule, so the rule lives in one place. Arrays (n_ops, N), seconds; ``network_s`` None on the flat chip.
        """
        bound = np.maximum(compute_s, memory_s)  # a fresh array: the rest in place (the same operations)
        if network_s is not None:
            np.maximum(bound, network_s, out=bound)
        return cls(compute_s, memory_s, overhead_s, np.add(bound, overhead_s, out=bound), network_s)


def gemm_efficiency(rows, eff: Efficiency, fmt: str = "bf16") -> np.ndarray:
    """Achieved fraction of peak of a GEMM in ``fmt`` with ``rows`` rows: eta_f · m / (m + m_half_f).

    >>> float(gemm_efficiency(32.0, Efficiency()))
    0.375
    """
    m = np.asarray(rows, dtype=float)
    return eff.gemm_peak(fmt) * m / (m + eff.gemm_half(fmt))


def k_serial_s(table: OpTable, eff: Efficiency) -> np.ndarray:
    """(n_ops, N) least time of each GEMM op's serial k loop: (k / K_BLOCK) · gemm[key].k_block_s
    per kernel, times the op's count (its ``kernels``); 0 for every other op, for a GEMM whose own
    entry (its key's, no fallback: the term is one kernel's) sets no k_block_s and for a table
    without shapes (``kn`` empty). Seconds.

    >>> from jalapeno.cost.optable import OpBuilder
    >>> ob = OpBuilder(1); ob.gemm("g", "fp8", 8.0, 7168.0, 1536.0, 1.0, 1.0, key="fp8_block")
    >>> e = Efficiency().with_overrides({"gemm": {"fp8_block": {"k_block_s": 1.5e-7}}})
    >>> round(float(k_serial_s(ob.build()[0], e)[0, 0]) * 1e6, 3)  # 56 blocks of 0.15 µs
    8.4
    """
    return _k_serial(table, tuple(_k_block_s(kind, key, eff) for kind, key in zip(table.kind, table.keys)))


def kernel_floor_s(table: OpTable, eff: Efficiency) -> np.ndarray:
    """(n_ops, 1) least fixed time per kernel of each op of a measured kernel family whose entry
    for the op's format sets ``floor_s`` (KernelEfficiency.floor_s: the family's time per kernel
    at its smallest shapes, as its table times it in a CUDA graph); 0 for every other op. Seconds.

    >>> from jalapeno.cost.optable import OpBuilder
    >>> ob = OpBuilder(1); ob.op("a", "attention", "fp8", flop=1.0, kernels=2, kernel="mla_decode")
    >>> e = Efficiency().with_overrides({"mla_decode": {"fp8": {"floor_s": 8e-6}}})
    >>> float(kernel_floor_s(ob.build()[0], e)[0, 0]), float(kernel_floor_s(ob.build()[0], Efficiency())[0, 0])
    (8e-06, 0.0)
    """
    out = np.zeros((len(table.name), 1))
    for i, (fam, f) in enumerate(zip(table.kernel or (), table.fmt)):
        entry = getattr(eff, fam).get(f) if fam else None
        if entry is not None and entry.floor_s:
            out[i] = entry.floor_s
    return out


def _width_factors(table: OpTable, is_moe, terms, rows, half) -> np.ndarray:
    """(n_ops, N) compute multipliers of the routed-expert width term (1 for other ops, and for
    experts stored in a format with kernels of their own, ``key`` MXFP4: not the kernels fitted)."""
    from jalapeno.cost.moe_width import width_factor

    out = np.ones_like(table.flop)
    for i, (mo, f, k, key) in enumerate(zip(is_moe, table.fmt, table.split, table.keys)):
        if mo and k > 1 and f in terms and key == f:
            out[i] = width_factor(table.kn[i][1], k, rows[i], half[i, 0], *terms[f])
    return out


@dataclass(frozen=True, slots=True)
class _PerOp:
    """What :func:`op_times` takes from the chip and the efficiency set for each op of a table: arrays
    (n_ops, 1) of the format's peak FLOP/s, whether the op is GEMM-like, its GEMM/MoE peak fraction and half
    rows, its attention-kernel peak fraction, its HBM fraction (eta_m), its least fixed time per kernel
    (max(launch, kernel floor), s), and per op the serial-k time per k block and kernel (0: none), s."""

    peak: np.ndarray
    is_gemm: np.ndarray
    top: np.ndarray
    half: np.ndarray
    attn: np.ndarray
    eta_m: np.ndarray
    per_kernel_s: np.ndarray
    k_block_s: tuple[float, ...]


#: :class:`_PerOp` by (chip, efficiency set, the table's formats, GEMM keys, kinds, kernel families): a
#: sweep prices a dozen op-table shapes hundreds of times on one chip and set, and these terms depend
#: on nothing else. Keyed by the identity of the chip and the set (both frozen), which each entry holds
#: so that no other object takes their ids; cleared when it reaches :data:`_PER_OP_KEEP` entries.
_PER_OP: dict[tuple, tuple] = {}
_PER_OP_KEEP = 256


def _per_op(table: OpTable, chip: Chip, eff: Efficiency) -> _PerOp:
    """The per-op terms of ``table`` on ``chip`` with ``eff`` (:class:`_PerOp`), from the cache where
    an earlier table of the same formats, keys, kinds and kernel families was priced on them."""
    fam = table.kernel or ("",) * len(table.name)
    key = (id(chip), id(eff), table.fmt, table.keys, table.kind, fam)
    hit = _PER_OP.get(key)
    if hit is not None and hit[0] is chip and hit[1] is eff:
        return hit[2]
    n_ops = len(table.name)
    is_moe = [k == "moe" for k in table.kind]

    # GEMMs by their kernel key (fp8_block), MoE by their entry (Efficiency.moe_entry: the format, or fp8_block)
    entry = [eff.moe_entry(f, g) if mo else "" for f, g, mo in zip(table.fmt, table.keys, is_moe)]

    def per_op(gemm_fn, moe_fn) -> np.ndarray:
        return np.array(
            [moe_fn(e) if mo else gemm_fn(g) for e, g, mo in zip(entry, table.keys, is_moe)], dtype=float
        ).reshape(n_ops, 1)

    is_gemm = np.array([k in ("gemm", "moe") for k in table.kind]).reshape(n_ops, 1)
    # an FP32 GEMM (MiniMax-M2's gate, cost/ops.py) runs on the vector FMA units at Chip.peak("fp32"): no MMA tile
    # to fill, so no few-rows penalty (half_rows 0; named assumption), at the set's BF16 GEMM peak fraction
    vector = np.array([f == "fp32" for f in table.fmt]).reshape(n_ops, 1)
    other_m = np.array([eff.kernel_hbm(k, f) for k, f in zip(fam, table.fmt)], dtype=float).reshape(n_ops, 1)
    floors = [eff.moe_floor(e) if mo else None for e, mo in zip(entry, is_moe)]
    launch = np.array([fl / MOE_KERNELS if fl is not None else eff.kernel_launch_s for fl in floors])
    out = _PerOp(
        peak=np.array([chip.peak(f) for f in table.fmt], dtype=float).reshape(n_ops, 1),
        is_gemm=is_gemm,
        top=per_op(eff.gemm_peak, eff.moe_peak),
        half=np.where(vector, 0.0, per_op(eff.gemm_half, eff.moe_half)),
        attn=np.array([eff.kernel_peak(k, f) for k, f in zip(fam, table.fmt)], dtype=float).reshape(n_ops, 1),
        eta_m=np.where(is_gemm, per_op(eff.gemm_hbm, eff.moe_hbm), other_m),
        per_kernel_s=np.maximum(launch.reshape(n_ops, 1), kernel_floor_s(table, eff)),
        k_block_s=tuple(_k_block_s(kind, key, eff) for kind, key in zip(table.kind, table.keys)),
    )
    if len(_PER_OP) >= _PER_OP_KEEP:
        _PER_OP.clear()
    _PER_OP[key] = (chip, eff, out)
    return out


def _k_block_s(kind: str, key: str, eff: Efficiency) -> float:
    """Serial-k time per k block of one kernel of an op (:func:`k_serial_s`'s tau), s; 0 for none."""
    entry = eff.gemm.get(key) if kind == "gemm" else None
    return (entry.k_block_s or 0.0) if entry is not None else 0.0


def _k_serial(table: OpTable, k_block_s: tuple[float, ...]) -> np.ndarray:
    """:func:`k_serial_s` from the per-op taus ``k_block_s`` (the same arithmetic, op by op)."""
    n = table.flop.shape[1] if table.flop.ndim == 2 else 0
    out = np.zeros((len(table.name), n))
    idx, rows = _k_serial_rows(table, k_block_s)
    if idx:
        out[idx] = rows
    return out


def _k_serial_rows(table: OpTable, k_block_s: tuple[float, ...]) -> tuple[list[int], np.ndarray | None]:
    """The ops of :func:`_k_serial` with a serial-k term (tau > 0 and a table with shapes) and their rows of it,
    (len(ops), N); ([], None) where none has one."""
    idx = [i for i, tau in enumerate(k_block_s) if tau > 0] if table.kn else []
    if not idx:
        return idx, None
    if all(type(table.kn[i][0]) in (float, int) for i in idx):  # scalar k: every such op in one go,
        k = np.array([table.kn[i][0] for i in idx], dtype=float).reshape(-1, 1)  # the same arithmetic per element
        tau = np.array([k_block_s[i] for i in idx], dtype=float).reshape(-1, 1)
        return idx, np.where(table.rows[idx] > 0, k / K_BLOCK * tau * table.kernels[idx].reshape(-1, 1), 0.0)
    return idx, np.stack(
        [
            np.broadcast_to(
                np.where(
                    table.rows[i] > 0,
                    np.asarray(table.kn[i][0], dtype=float) / K_BLOCK * k_block_s[i] * table.kernels[i],
                    0.0,
                ),
                table.rows[i].shape,
            )
            for i in idx
        ]
    )


def capped_clock(compute_s: np.ndarray, eta: np.ndarray, dense_ratio: float, light_ratio: float) -> np.ndarray:
    """Compute times (n_ops, N), s, of a run held at a declared GPU clock cap (Chip.clock_cap): the ops at or above
    :data:`DENSE_UTILISATION` of peak (``eta``, same shape) at ``dense_ratio`` of their calibrated speed (the cap over
    the calibration's dense-op clock, fit/amd_clock_caps.py), the lighter ops at ``light_ratio`` (the cap over the
    boost clock they are calibrated at): compute / ratio.

    >>> capped_clock(np.array([[1.0], [1.0]]), np.array([[0.5], [0.1]]), 0.5, 0.8).ravel().tolist()
    [2.0, 1.25]
    """
    return np.where(eta >= DENSE_UTILISATION, compute_s / dense_ratio, compute_s / light_ratio)


def op_times(table: OpTable, chip: Chip, eff: Efficiency, moe_width=None) -> OpTimes:
    """Roofline time of every op in ``table`` on ``chip`` with the efficiency set ``eff``.

    ``moe_width``: {compute format: (c, p)} of the routed experts' width term (cost/moe_width.py):
    the compute time of a ``moe`` op split over MoE TP k > 1 is multiplied by
    cost/moe_width.width_factor (fading with the row penalty at few rows per expert); None or
    a format absent from it: no term.

    The pricing rule of :class:`jalapeno.cost.pricer.RooflinePricer`; calibration fits through it.
    The per-op terms that depend only on the ops' formats, keys, kinds and kernel families come from
    :func:`_per_op` (computed once per chip, set and table shape).
    """
    n_ops = len(table.name)
    c = _per_op(table, chip, eff)
    m = np.maximum(table.rows, 1e-9)
    eta = np.where(c.is_gemm, c.top * m / (m + c.half), c.attn)  # gemm_efficiency, per op
    compute = table.flop / (c.peak * eta)
    if POWER_CLOCK:
        compute = power_clock(compute, np.broadcast_to(eta, compute.shape), chip.dense_clock_ratio)
    if chip.clock_cap is not None:
        compute = capped_clock(compute, np.broadcast_to(eta, compute.shape), *chip.clock_cap)
    if moe_width and table.split and table.kn:
        compute = compute * _width_factors(table, [k == "moe" for k in table.kind], moe_width, m, c.half)
    idx, serial = _k_serial_rows(table, c.k_block_s)
    if idx:  # the other ops' serial-k term is 0, below their compute time (>= 0): max(compute, 0) is compute
        compute[idx] = np.maximum(compute[idx], serial)
    total_bytes = table.bytes
    memory = total_bytes / (chip.hbm_bandwidth_bytes_per_s * c.eta_m)
    active = (table.flop + total_bytes) > 0  # an op with no work at a point launches nothing
    fixed = table.kernels.reshape(n_ops, 1) * c.per_kernel_s
    overhead = np.where(active, fixed, 0.0)
    return OpTimes.combine(compute, memory, overhead)


#: a compute-bound op reaching under this fraction of its format's peak is labelled with what holds it there
LOW_PEAK_FRACTION = 0.10


def compute_limit_labels(table: OpTable, chip: Chip, eff: Efficiency, compute_s: np.ndarray, i: int = 0) -> list[str]:
    """What sets each op's compute time at point ``i``, for an op table's ``bound`` column: ``"serial-k floor"``
    where the block-scaled GEMM's serial k loop (:func:`k_serial_s`, ``gemm[key].k_block_s``) is the time, ``"few
    rows: P% of peak"`` where the GEMM/MoE row-count rule m/(m + half_rows) (or a kernel family's fraction) holds
    the op under :data:`LOW_PEAK_FRACTION` of its format's peak, ``""`` otherwise (the op runs near its fitted
    asymptote). ``compute_s``: (n_ops, N) compute times of :func:`op_times`, s.

    >>> from jalapeno.cost.optable import OpBuilder
    >>> from jalapeno.specs.catalog import load_system
    >>> ob = OpBuilder(1); ob.gemm("g", "fp8", 1.0, 7168.0, 1536.0, 1.0, 1.0, key="fp8_block")
    >>> t = ob.build()[0]; chip = load_system("h200").chip
    >>> e = Efficiency().with_overrides({"gemm": {"fp8_block": {"k_block_s": 1.5e-7}}})
    >>> compute_limit_labels(t, chip, e, op_times(t, chip, e).compute_s)
    ['serial-k floor']
    """
    serial = k_serial_s(table, eff)
    out = []
    for j, f in enumerate(table.fmt):
        c = float(compute_s[j, i])
        flop = float(table.flop[j, i])
        if c <= 0 or flop <= 0:
            out.append("")
        elif serial.shape[1] and serial[j, i] > 0 and serial[j, i] >= c * (1 - 1e-9):
            out.append("serial-k floor")
        else:
            frac = flop / (chip.peak(f) * c)
            what = "few rows: " if table.kind[j] in ("gemm", "moe") else ""
            out.append(f"{what}{frac:.1%} of peak" if frac < LOW_PEAK_FRACTION else "")
    return out
