"""Plausible ranges of hardware values: a unit slip is an error, not a plausible-looking result.

A system TOML gives each number in the unit its key names (``hbm_bandwidth_tb_per_s``). A value
typed in another unit (bytes for GB, W for kW, FLOP/s for TFLOPS, seconds for µs) is off by
10^3-10^12 and would otherwise price a chip that cannot exist. Each key has one range below, wide
on purpose: from the shipped catalog's span (H100 to Vera Rubin NVL72, the 11 systems in
``data/systems``; spans as of this module) widened by about 10x each way and more where real
outliers exist (wafer-scale parts, toy test systems), so any real or hypothetical accelerator
fits and a slip of a factor 1,000 does not. Relations that hold for every real chip are checked
too: a narrower format's peak is not below a wider one's (FP8 >= BF16, FP4 >= FP8), sustained
power <= TDP, and all-in power per chip >= the chip's own power.

:func:`check_plausible` is called wherever a :class:`~jalapeno.specs.hardware.System` is built
from data (``system_from_dict``: catalog TOML, user TOML, ``base =`` variants and ``--set``
overrides alike). Ranges are documented in ``docs/catalog.md`` ("Plausible ranges").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jalapeno import units
from jalapeno.errors import SpecError


@dataclass(frozen=True, slots=True)
class Range:
    """A plausible range of one file key, in the key's unit.

    Attributes:
        key: the file key (dotted, as in the TOML).
        unit: the key's unit as written in the file.
        lo, hi: the range (inclusive).
        catalog: the shipped catalog's span, for the message and the docs.
        hint: how the common slip looks (what the number would be in the neighbouring unit).
    """

    key: str
    unit: str
    lo: float
    hi: float
    catalog: str
    hint: str


#: Most chips in one system or fleet, a named plausibility bound (not a measurement): 1e9 chips is ~100x the
#: order of 10 million AI accelerators installed worldwide by 2025. ``plan --chips`` (analysis/fleet.py) and a
#: system file's ``levels.N.chips`` share it: a cluster level of 1e18 chips priced a 1 MB all-reduce over
#: 1e18 chips in 178 µs without a word.
MAX_CHIPS = 10**9

#: One range per hardware key. Catalog spans: data/systems/*.toml (H100 ... Vera Rubin NVL72).
RANGES: dict[str, Range] = {
    r.key: r
    for r in (
        Range(
            "chip.peak_dense_tflops",
            "TFLOPS",
            1.0,
            2e5,
            "989 (H100 BF16) to 35,000 (Vera Rubin FP4)",
            "dense TFLOPS: 989 for H100 BF16, not 9.89e14 FLOP/s and not the sparse figure",
        ),
        Range(
            "chip.fp32_vector_tflops",
            "TFLOPS",
            0.1,
            1e4,
            "67 (H100, H200) to 90 (GB200)",
            "FP32 TFLOPS of the vector units (not the TF32 tensor-core figure): 67 for H100",
        ),
        Range(
            "chip.hbm_capacity",
            "GB",
            0.1,
            1e4,
            "80 (H100) to 288 (B300, MI355X, Vera Rubin)",
            "GB per chip: 141 for H200, not 1.41e11 bytes",
        ),
        Range(
            "chip.hbm_bandwidth_tb_per_s",
            "TB/s",
            0.01,
            500.0,
            "3.35 (H100) to 22 (Vera Rubin)",
            "TB/s per chip: 4.8 for H200, not 4800 (GB/s)",
        ),
        Range("chip.hbm_stacks", "stacks", 1, 64, "5 (H100) to 8", "a count of HBM stacks"),
        Range(
            "chip.sram_mib",
            "MiB",
            0.1,
            1e6,
            "50 (H100) to 256 (MI300X)",
            "MiB per chip (up to ~42,000 for a wafer-scale part)",
        ),
        # the tile model's keys (cost/tiles.py; --chip-model tiled): SMs or CUs, shared memory / LDS per unit, MMA rows
        Range(
            "chip.compute_units", "units", 1, 1e6, "132 (H100) to 304 (MI300X)", "a count of SMs (NVIDIA) or CUs (AMD)"
        ),
        Range(
            "chip.sram_per_unit_kib",
            "KiB",
            1.0,
            1e5,
            "64 (AMD LDS) to 228 (Hopper, Blackwell)",
            "KiB of shared memory / LDS per SM or CU: 228 for H100, not 233472 (bytes)",
        ),
        Range("chip.mma_tile_m", "rows", 1, 4096, "16 (AMD) to 128 (Blackwell)", "rows of one MMA tile: 64 for Hopper"),
        Range(
            "chip.dense_clock_ratio",
            "x",
            0.2,
            1.0,
            "0.840 (MI300X against MI325X) to 1 (every other chip)",
            "a ratio of clocks at most 1 (sustained / calibrated), not MHz",
        ),
        Range("chip.tdp_w", "W", 10.0, 5e4, "700 (H100) to 1,800 (Vera Rubin)", "watts: 1000 for B200, not 1.0 (kW)"),
        Range("chip.sustained_w", "W", 10.0, 5e4, "550 (Jalapeño)", "watts: 550, not 0.55 (kW)"),
        Range(
            "power.allin_kw_per_chip",
            "kW",
            0.05,
            100.0,
            "1.15 (Jalapeño) to 2.98 (Vera Rubin)",
            "kW per chip: 1.73 for H100, not 1730 (W)",
        ),
        Range(
            "cost.usd_per_chip_hour",
            "$/chip-hour",
            0.01,
            1000.0,
            "1.12 (MI300X) to 3.18 (Vera Rubin)",
            "dollars per chip-hour: 1.30 for H100",
        ),
        Range(
            "levels.bandwidth_gb_per_s",
            "GB/s",
            0.1,
            5e4,
            "50 (400 Gb/s NIC) to 1,800 (NVLink 6)",
            "GB/s per chip per direction: 450 for NVLink 4, not 450,000 (MB/s) or 3600 (Gb/s)",
        ),
        Range("levels.latency_us", "µs", 0.001, 1e4, "1 to 5", "microseconds: 1.0, not 1e-6 (seconds)"),
        Range(
            "levels.chips",
            "chips",
            1,
            MAX_CHIPS,
            "8 (HGX node) to 8,192 (a fat-tree cluster)",
            "a count of the chips the level joins, not bytes or links",
        ),
        Range("host.bandwidth_gb_per_s", "GB/s", 0.1, 5e4, "50 to 225", "GB/s per chip per direction"),
        Range("host.latency_us", "µs", 0.001, 1e4, "1 to 3", "microseconds: 1.0, not 1e-6 (seconds)"),
        Range(
            "kv_tiers.bandwidth_gb_per_s",
            "GB/s",
            0.01,
            5e4,
            "7 (a U.2 NVMe drive) to 450 (NVLink-C2C to host)",
            "GB/s per chip per direction: 32 for a shared PCIe Gen5 x16, not 32e9 (B/s) or 256 (Gb/s)",
        ),
        Range(
            "kv_tiers.latency_us",
            "µs",
            0.01,
            1e6,
            "5 (NVLink-C2C) to 100 (NVMe)",
            "microseconds: 100 for an NVMe read, not 1e-4 (seconds)",
        ),
        Range(
            "kv_tiers.capacity_gb_per_chip",
            "GB",
            0.1,
            1e6,
            "48 (Jalapeño host) to 7,680 (Vera Rubin SSD)",
            "GB per chip (x usable_fraction): 250 for a DGX's host memory, not 2.5e11 (bytes)",
        ),
        Range(
            "die.link_bandwidth_tb_per_s",
            "TB/s",
            1e-4,
            500.0,
            "1.1 (Jalapeño) to 5 (B200 NV-HBI)",
            "TB/s per link per direction: 5.0 for B200, not 5000 (GB/s)",
        ),
        Range(
            "die.hop_latency_ns",
            "ns",
            1.0,
            1e5,
            "50 (Jalapeño) to 150 (MI300X)",
            "nanoseconds: 100, not 1e-7 (seconds) or 0.1 (µs)",
        ),
        # shown by hardware show, priced by nothing: 1e308 printed a 309-digit die count (break52)
        Range(
            "die.compute_dies",
            "dies",
            1,
            1024,
            "8 (MI300X, MI325X, MI355X: XCDs)",
            "a count of compute dies (XCDs), not of CUs or SMs",
        ),
    )
}


def _check(where: str, key: str, shown_key: str, value: float) -> None:
    r = RANGES[key]
    if not (r.lo <= value <= r.hi):
        shown = f"{value:.4g} {r.unit}" if math.isfinite(value) else "a value past float range in SI units (inf)"
        raise SpecError(
            f"{where}: {shown_key}",
            f"{shown} is outside the plausible range {r.lo:g}-{r.hi:g} {r.unit} (catalog: {r.catalog})",
            f"check the unit: {r.hint} (ranges: docs/catalog.md, specs/plausibility.py)",
        )


def check_range(where: str, key: str, value: float) -> None:
    """One value against its :data:`RANGES` entry, for a check that must run before the whole
    system is built (:func:`check_plausible`): a die laid out over 1e30 HBM stacks searched 1e15
    mesh shapes first.

    Raises:
        SpecError: ``value`` (in the key's unit) outside the range.
    """
    _check(where, key, key, value)


def _check_capacity(where: str, system, stem: str, nbytes: float) -> None:
    """The HBM range check under the key the file gave (``chip.hbm_capacity_gib`` in GiB, else
    ``_gb`` in GB): a GiB value out of range was reported as ``chip.hbm_capacity_gb`` in GB, a key
    the file did not have."""
    if f"chip.{stem}_gib" not in system.sources:
        _check(where, "chip.hbm_capacity", f"chip.{stem}_gb", nbytes / units.GB)
        return
    r, value, f = RANGES["chip.hbm_capacity"], nbytes / units.GiB, units.GB / units.GiB
    if not (r.lo * f <= value <= r.hi * f):
        shown = f"{value:.4g} GiB" if math.isfinite(value) else "a value past float range in SI units (inf)"
        raise SpecError(
            f"{where}: chip.{stem}_gib",
            f"{shown} is outside the plausible range {r.lo * f:.3g}-{r.hi * f:.4g} GiB (catalog: {r.catalog} GB)",
            "check the unit: GiB per chip: 216 for Jalapeño, not 2.32e11 bytes "
            "(ranges: docs/catalog.md, specs/plausibility.py)",
        )


def check_plausible(system, where: str = "system") -> None:
    """Refuse hardware values outside :data:`RANGES` or breaking the relations every chip obeys.

    Args:
        system: a :class:`~jalapeno.specs.hardware.System` (SI units; converted back to the file's
            units for the message).
        where: the file or option it came from, for the message.

    Raises:
        SpecError: naming the key, the value in the key's unit, the range, the catalog's span and
            the likely slip.
    """
    c = system.chip
    for fmt, v in c.peak_flop_per_s.items():
        _check(where, "chip.peak_dense_tflops", f"chip.peak_dense_tflops.{fmt}", v / units.TFLOPS)
    if c.fp32_vector_flop_per_s is not None:
        _check(where, "chip.fp32_vector_tflops", "chip.fp32_vector_tflops", c.fp32_vector_flop_per_s / units.TFLOPS)
    _check_capacity(where, system, "hbm_capacity", c.hbm_capacity_bytes)
    _check_capacity(where, system, "hbm_usable", c.hbm_usable_bytes)
    _check(where, "chip.hbm_bandwidth_tb_per_s", "chip.hbm_bandwidth_tb_per_s", c.hbm_bandwidth_bytes_per_s / units.TB)
    _check(where, "chip.hbm_stacks", "chip.hbm_stacks", c.hbm_stacks)
    if c.sram_bytes is not None:
        _check(where, "chip.sram_mib", "chip.sram_mib", c.sram_bytes / units.MiB)
    for key, v in (
        ("compute_units", c.compute_units),
        ("mma_tile_m", c.mma_tile_m),
        ("sram_per_unit_kib", None if c.sram_per_unit_bytes is None else c.sram_per_unit_bytes / units.KiB),
    ):
        if v is not None:
            _check(where, f"chip.{key}", f"chip.{key}", v)
    _check(where, "chip.tdp_w", "chip.tdp_w", c.tdp_w)
    _check(where, "chip.dense_clock_ratio", "chip.dense_clock_ratio", c.dense_clock_ratio)
    if c.sustained_w is not None:
        _check(where, "chip.sustained_w", "chip.sustained_w", c.sustained_w)
    _check(where, "power.allin_kw_per_chip", "power.allin_kw_per_chip", system.allin_power_w_per_chip / units.KW)
    _check(where, "cost.usd_per_chip_hour", "cost.usd_per_chip_hour", system.usd_per_chip_hour)
    for lv in system.levels:
        _check(
            where,
            "levels.bandwidth_gb_per_s",
            f"levels[{lv.name}].bandwidth_gb_per_s",
            lv.bandwidth_bytes_per_s / units.GB,
        )
        _check(where, "levels.latency_us", f"levels[{lv.name}].latency_us", lv.latency_s / units.US)
        _check(where, "levels.chips", f"levels[{lv.name}].chips", lv.chips)
    if system.host is not None:
        _check(
            where, "host.bandwidth_gb_per_s", "host.bandwidth_gb_per_s", system.host.bandwidth_bytes_per_s / units.GB
        )
        _check(where, "host.latency_us", "host.latency_us", system.host.latency_s / units.US)
    for t in system.kv_tiers:
        _check(
            where,
            "kv_tiers.bandwidth_gb_per_s",
            f"kv_tiers.{t.name}.bandwidth_gb_per_s",
            t.bandwidth_bytes_per_s / units.GB,
        )
        _check(where, "kv_tiers.latency_us", f"kv_tiers.{t.name}.latency_us", t.latency_s / units.US)
        _check(
            where,
            "kv_tiers.capacity_gb_per_chip",
            f"kv_tiers.{t.name}.capacity_gb_per_chip",
            t.capacity_bytes / units.GB,
        )
    die = c.die
    if die is not None and die.slices > 1:
        _check(
            where,
            "die.link_bandwidth_tb_per_s",
            "die.link_bandwidth_tb_per_s",
            die.link_bandwidth_bytes_per_s / units.TB,
        )
        _check(where, "die.hop_latency_ns", "die.hop_latency_ns", die.hop_latency_s / (units.US / 1e3))
        for key, ends in die.bands.items():  # the band sensitivity and audit sweep (newuser52): a low of 1e-308
            for end, v in zip(("low", "high"), ends):  # TB/s was accepted (break52)
                _check(where, f"die.{key}", f"die.{key}.{end}", v)
    if die is not None and die.compute_dies:
        _check(where, "die.compute_dies", "die.compute_dies", die.compute_dies)
    _check_relations(system, where)


#: Formats from wider to narrower: a narrower format's dense peak is never below a wider one's on
#: any shipped chip (each halving of the width doubles or keeps the tensor-core rate).
_WIDER_FIRST = ("bf16", "fp8", "fp4")


def _check_relations(system, where: str) -> None:
    c = system.chip
    peaks = [(f, c.peak_flop_per_s[f]) for f in _WIDER_FIRST if f in c.peak_flop_per_s]
    for (wide, pw), (narrow, pn) in zip(peaks, peaks[1:]):
        if pn < pw:
            raise SpecError(
                f"{where}: chip.peak_dense_tflops.{narrow}",
                f"the {narrow.upper()} peak {pn / units.TFLOPS:,.0f} TFLOPS is below the "
                f"{wide.upper()} peak {pw / units.TFLOPS:,.0f} TFLOPS (a narrower format is never slower)",
                "check both are dense TFLOPS (not sparse) of the same chip",
            )
    if c.sustained_w is not None and c.sustained_w > c.tdp_w:
        raise SpecError(
            f"{where}: chip.sustained_w",
            f"sustained {c.sustained_w:g} W exceeds the TDP {c.tdp_w:g} W (chip.tdp_w)",
            "check both are in W; a lower TDP (a power cap) needs "
            f"chip.sustained_w at most it too, e.g. chip.sustained_w = {c.tdp_w:g}",
        )
    own = min(c.tdp_w, c.sustained_w or c.tdp_w)
    if system.allin_power_w_per_chip < own:
        raise SpecError(
            f"{where}: power.allin_kw_per_chip",
            f"all-in {system.allin_power_w_per_chip / units.KW:g} kW per chip is below the chip's own {own:g} W",
            "check it is in kW and tdp_w in W: all-in power includes the chip, host, network and facility share",
        )
