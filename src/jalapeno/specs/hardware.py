"""Hardware specs: chip, link hierarchy, power and cost of a system, as frozen dataclasses in SI units.

A system TOML file (validated with pydantic, ``extra="forbid"``: the schema is specs/system_file.py) becomes these
dataclasses in specs/system_load.py (:func:`system_from_dict`, :func:`load_system_file`; split from this module in
round 50, module budget), whose names stay importable from here (:data:`LOADER_NAMES`, module ``__getattr__``).
Every numeric value in the file is an inline table ``{ value = ..., source = "..." }``; optional ``alternatives``
keeps what other sources say and ``estimate = true`` marks a derived estimate. File keys carry their unit
(``hbm_bandwidth_tb_per_s``); conversion happens once, in specs/system_load.py. Schema reference: ``docs/catalog.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from jalapeno.errors import SpecError
from jalapeno.specs.field_checks import check_number, check_usable
from jalapeno.moved import moved_names

#: Names of the system file's schema that lived here until round 38 and now live in specs/system_file.py.
#: ``from jalapeno.specs.hardware import ChipFile`` keeps working (jalapeno/moved.py) with a DeprecationWarning
#: naming the new place; new code imports them from jalapeno.specs.system_file.
MOVED_TO_SYSTEM_FILE = ("ChipFile", "LevelFile", "HostFile", "PowerFile", "CostFile", "TOPOLOGIES")


#: Names of the file → System path that lived here until round 50 and now live in specs/system_load.py; they stay
#: importable from here without a warning for callers outside the package (``from jalapeno.specs.hardware import
#: system_from_dict``), resolved on first use (jalapeno/moved.py: specs/system_load.py imports this module, so not
#: at import time).
LOADER_NAMES = (
    "system_from_dict",
    "efficiency_overrides",
    "read_system_toml",
    "load_system_file",
    "_pydantic_to_spec_error",
)
__getattr__ = moved_names(
    __name__,
    {"jalapeno.specs.system_load": LOADER_NAMES},
    deprecated={"jalapeno.specs.system_file": (MOVED_TO_SYSTEM_FILE, "round 38")},
)


# ---- SI dataclasses ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Chip:
    """One accelerator chip (SI units).

    Attributes:
        peak_flop_per_s: dense peak FLOP/s by compute format (no 2:4 sparsity).
        hbm_capacity_bytes / hbm_usable_bytes: nominal and engine-visible HBM.
        hbm_bandwidth_bytes_per_s: total HBM bandwidth.
        hbm_stacks: HBM stacks (or slices wired to local stacks).
        sram_bytes: on-chip SRAM (L2 + scratchpads); None where unpublished.
        tdp_w: rated board/chip power; sustained_w: sustained under load where known.
        die: the chip's slices and on-die network (:class:`jalapeno.specs.die.Die`), None = one slice.
    """

    name: str
    peak_flop_per_s: MappingProxyType
    hbm_capacity_bytes: float
    hbm_usable_bytes: float
    hbm_bandwidth_bytes_per_s: float
    hbm_stacks: int
    sram_bytes: float | None
    tdp_w: float
    sustained_w: float | None
    #: slices and on-die network (specs/die.py); None = one slice (the flat chip)
    die: Any = None
    #: compute units (SMs/CUs), shared memory per unit and the tensor-core tile's smallest M, for
    #: the tile model (cost/tiles.py); None where unpublished
    compute_units: int | None = None
    sram_per_unit_bytes: float | None = None
    mma_tile_m: int | None = None
    #: the FP4 block-scaled formats its FP4 tensor cores consume (``mxfp4``, ``nvfp4``); None = not
    #: stated (every FP4 format accepted: a hypothetical chip)
    fp4_block_formats: frozenset[str] | None = None
    #: FP32 peak FLOP/s of the vector (non-tensor) units, for FP32 GEMMs (MiniMax-M2's gate); None where not given
    fp32_vector_flop_per_s: float | None = None
    #: the chip's sustained clock under dense matrix load over the clock its architecture's compute calibration
    #: prices (a board held lower by its power limit: MI300X 1,230 / 1,464 MHz against MI325X); 1.0 where not
    #: given. Read by cost/roofline.op_times for ops at >= DENSE_UTILISATION of peak when POWER_CLOCK is on
    dense_clock_ratio: float = 1.0
    #: (dense, light) compute clock ratios of a run held at a declared GPU clock cap: the cap over the clock the
    #: calibration prices ops at or above cost/roofline.DENSE_UTILISATION of peak at, and over the clock it prices the
    #: lighter ops at (fit/amd_clock_caps.clock_cap_of; read by cost/roofline.capped_clock); None = no cap. Set on a
    #: priced point's system only (fit/measured_point.with_clock_cap), never by a system file
    clock_cap: tuple[float, float] | None = None
    #: CUDA compute capability, major x 10 + minor (file's chip.compute_capability "10.3" -> 103); None: not given
    compute_capability: int | None = None

    def __post_init__(self) -> None:
        """Refuse what no chip has (a number not finite or not positive, a dense clock ratio outside (0, 1]): the
        checks of the file path that need no range (specs/field_checks.check_number), and usable HBM above the
        capacity (check_usable; a file's build names its own keys instead, after the ranges, so a unit slip is named first).

        Raises:
            SpecError: naming ``Chip.<field>``.
        """
        for fmt, v in self.peak_flop_per_s.items():
            check_number("Chip", f"peak_flop_per_s[{fmt!r}]", v, unit=" FLOP/s")
        for name in ("hbm_capacity_bytes", "hbm_usable_bytes", "hbm_bandwidth_bytes_per_s", "tdp_w"):
            check_number("Chip", name, getattr(self, name))
        for name in (
            "sram_bytes",
            "sustained_w",
            "fp32_vector_flop_per_s",
            "sram_per_unit_bytes",
            "compute_capability",
        ):
            if getattr(self, name) is not None:
                check_number("Chip", name, getattr(self, name))
        check_number("Chip", "hbm_stacks", self.hbm_stacks, strict=False, integer=True)
        # a ratio of clocks (sustained / calibrated): above 1 sped a chip up past its rated peak (plausibility.py)
        check_number("Chip", "dense_clock_ratio", self.dense_clock_ratio, high=1.0)
        for i, v in enumerate(self.clock_cap or ()):
            check_number("Chip", f"clock_cap[{i}]", v)
        check_usable(self.hbm_usable_bytes, self.hbm_capacity_bytes)

    @property
    def formats(self) -> frozenset[str]:
        """The compute formats the chip states a dense peak for (bf16, fp8, fp4, int8)."""
        return frozenset(self.peak_flop_per_s)

    def runs_fp4_block(self, fmt: str) -> bool:
        """Whether the FP4 tensor cores consume block format ``fmt`` (``mxfp4``/``nvfp4``) natively.

        >>> Chip("x", MappingProxyType({}), 1, 1, 1, 1, None, 1, None, fp4_block_formats=frozenset({"mxfp4"})).runs_fp4_block("nvfp4")
        False
        """
        return self.fp4_block_formats is None or fmt in self.fp4_block_formats

    def peak(self, fmt: str) -> float:
        """Peak FLOP/s in ``fmt`` (the caller resolves fallbacks first; "fp32": the vector units')."""
        return self.fp32_vector_flop_per_s if fmt == "fp32" else self.peak_flop_per_s[fmt]


@dataclass(frozen=True, slots=True)
class LinkLevel:
    """One level of the interconnect hierarchy (chip → tray/node → rack → cluster).

    Attributes:
        chips: chips reachable within this level (the domain size).
        bandwidth_bytes_per_s: per chip, per direction, at this level.
        latency_s: one-way latency of a small message at this level (per hop on a torus).
        topology: switched, full_mesh, torus3d or fat_tree.
        scope: scale_up (load/store fabric) or scale_out (NICs).
        shares_ports_with_inner: the chip reaches this level through the same ports as the
            level inside it (so traffic to both levels shares one per-chip bandwidth).
    """

    name: str
    chips: int
    bandwidth_bytes_per_s: float
    latency_s: float
    topology: str
    scope: str
    in_network_reduction: bool = False
    links_per_chip: int | None = None
    torus_dims: tuple[int, ...] | None = None
    shares_ports_with_inner: bool = False

    def __post_init__(self) -> None:
        """Refuse a level of no chips, a bandwidth not positive or a negative latency (specs/field_checks.check_number).

        Raises:
            SpecError: naming ``LinkLevel.<field>``.
        """
        check_number("LinkLevel", "chips", self.chips, low=1.0, strict=False, integer=True)
        check_number("LinkLevel", "bandwidth_bytes_per_s", self.bandwidth_bytes_per_s)
        check_number("LinkLevel", "latency_s", self.latency_s, strict=False)


@dataclass(frozen=True, slots=True)
class HostLink:
    """The host-CPU-to-chip path: where the CPUs sit, per-chip bandwidth (per direction), latency."""

    location: str
    bandwidth_bytes_per_s: float
    latency_s: float
    note: str = ""


@dataclass(frozen=True, slots=True)
class SystemOrigin:
    """Where a system came from and which efficiency set prices it (specs/variants.py).

    Attributes:
        calibration: the catalog system whose calibration file (``data/calibration/<name>.toml``)
            gives the efficiency set and its low/high band; None: the documented defaults.
        efficiency: ``[efficiency]`` overrides along the base chain, then ``efficiency.*``
            overrides, as (dotted key, value) pairs applied in order.
        base: the ``base`` a variant file names (None for a file without one).
        overrides: every dotted override applied on top of the file (``--set``), in order.
        where: the file the system was read from (for messages).
        explicit: the file chose its efficiency set (a base, ``calibration`` or ``[efficiency]``).
        data: the system in file form after the overrides (what further overrides start from).
        root: the catalog name (or file path) the base chain starts from; its power components
            anchor the variant's (specs/power.py). None: built in code.
    """

    calibration: str | None = None
    efficiency: tuple = ()
    base: str | None = None
    overrides: tuple = ()
    where: str = ""
    explicit: bool = False
    data: Any = field(default=None, compare=False, repr=False)
    root: str | None = None

    def extended(self, efficiency: tuple, overrides: tuple, data: Any = None) -> SystemOrigin:
        """This origin with more efficiency and dotted overrides (and the new file form)."""
        return replace(
            self,
            efficiency=self.efficiency + tuple(efficiency),
            overrides=self.overrides + tuple(overrides),
            explicit=self.explicit or bool(efficiency),
            data=self.data if data is None else data,
        )


@dataclass(frozen=True, slots=True)
class System:
    """A system: chip, link hierarchy, power and cost — hardware facts only.

    The serving stack's efficiencies are a separate input (specs/efficiency.py); a pricer
    (cost/pricer.py) pairs a system with one efficiency set.

    Attributes:
        allin_power_w_per_chip: provisioned power per chip incl. host, network, facility.
        usd_per_chip_hour: total cost of ownership per chip-hour.
        sources: dotted file key → source text of every number.
        origin: where it came from and which efficiency set prices it (None: built in code).
    """

    name: str
    description: str
    chip: Chip
    levels: tuple[LinkLevel, ...]
    allin_power_w_per_chip: float
    usd_per_chip_hour: float
    vendor_verified: bool
    sources: MappingProxyType = field(compare=False)
    path: str = field(default="", compare=False)
    host: HostLink | None = None
    origin: SystemOrigin | None = field(default=None, compare=False)
    kv_tiers: tuple = ()  # specs/kv_tiers.KVTier, nearest first (HBM excluded)
    kv_tiers_absent: tuple = ()  # lower tiers the file declares absent

    def __post_init__(self) -> None:
        """Refuse an all-in power not positive or a negative cost (specs/field_checks.check_number).

        Raises:
            SpecError: naming ``System.<field>``.
        """
        check_number("System", "allin_power_w_per_chip", self.allin_power_w_per_chip)
        check_number("System", "usd_per_chip_hour", self.usd_per_chip_hour, strict=False)

    def __repr__(self) -> str:
        """Short (the generated one printed every source, 8,000 characters): the name and what it is."""
        return f"System({self.name}: {self.description})"

    @property
    def scale_up_chips(self) -> int:
        """Size of the largest scale-up domain."""
        up = [lv.chips for lv in self.levels if lv.scope == "scale_up"]
        return max(up) if up else 1

    @property
    def max_chips(self) -> int:
        """Chips of the whole system (the outermost level's domain)."""
        return self.levels[-1].chips

    def level_for_group(self, group: int) -> LinkLevel:
        """The innermost level whose domain holds ``group`` chips placed contiguously.

        Raises:
            SpecError: the group is larger than the whole system.
        """
        for lv in self.levels:
            if group <= lv.chips:
                return lv
        raise SpecError(
            "group size", f"{group} chips exceed {self.name}'s {self.max_chips}", f"use at most {self.max_chips} chips"
        )


def at_calibration_clock(system: System) -> System:
    """``system`` with its chip at the clock its architecture's compute calibration prices (Chip.dense_clock_ratio
    1.0): the kernel tables a calibration fits are that clock's times by definition, so a fit through the pricer must
    not slow them again (fit/calibrate.calibrate_catalog)."""
    if system.chip.dense_clock_ratio == 1.0:
        return system
    return replace(system, chip=replace(system.chip, dense_clock_ratio=1.0))
