"""Hardware specs: chip, link hierarchy, power and cost of a system, read from one TOML file.

File (validated with pydantic, ``extra="forbid"``: the schema is specs/system_file.py) → frozen dataclasses in
SI units. Every numeric value in the file is an inline table ``{ value = ..., source = "..." }``; optional
``alternatives`` keeps what other sources say and ``estimate = true`` marks a derived estimate.
File keys carry their unit (``hbm_bandwidth_tb_per_s``); conversion happens once, here.
Schema reference: ``docs/catalog.md``.
"""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ValidationError

from jalapeno import units
from jalapeno.errors import SpecError
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY, Efficiency
from jalapeno.specs.field_checks import FILE_BUILD, check_number, check_usable
from jalapeno.specs.files import parse_toml, read_user_text, toml_syntax_fix
from jalapeno.specs.kv_tiers import parse_kv_tiers
from jalapeno.specs.sourced import Sourced, SourcedCapability, SourcedNames
from jalapeno.specs.plausibility import check_plausible, check_range
from jalapeno.specs.schema_errors import describe
from jalapeno.specs.system_file import COUNT_KEYS, DieFile, SystemFile

#: Names of the system file's schema that lived here until round 38 and now live in specs/system_file.py.
#: ``from jalapeno.specs.hardware import ChipFile`` keeps working (module ``__getattr__`` below) with a
#: DeprecationWarning naming the new place; new code imports them from jalapeno.specs.system_file.
#: (SystemFile, DieFile and COUNT_KEYS, which this module uses, are imported above and read without a warning.)
MOVED_TO_SYSTEM_FILE = ("ChipFile", "LevelFile", "HostFile", "PowerFile", "CostFile", "TOPOLOGIES")


def __getattr__(name: str):
    """A schema name moved to specs/system_file.py (:data:`MOVED_TO_SYSTEM_FILE`), returned from there with a
    DeprecationWarning; any other missing name raises AttributeError as usual."""
    if name in MOVED_TO_SYSTEM_FILE:
        import warnings

        from jalapeno.specs import system_file
        warnings.warn(f"jalapeno.specs.hardware.{name} moved to jalapeno.specs.system_file.{name} (round 38); "
                      f"import it from there", DeprecationWarning, stacklevel=2)
        return getattr(system_file, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
        for name in ("sram_bytes", "sustained_w", "fp32_vector_flop_per_s", "sram_per_unit_bytes", "compute_capability"):
            if getattr(self, name) is not None:
                check_number("Chip", name, getattr(self, name))
        check_number("Chip", "hbm_stacks", self.hbm_stacks, strict=False, integer=True)
        # a ratio of clocks (sustained / calibrated): above 1 sped a chip up past its rated peak (plausibility.py)
        check_number("Chip", "dense_clock_ratio", self.dense_clock_ratio, high=1.0)
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
        return replace(self, efficiency=self.efficiency + tuple(efficiency), overrides=self.overrides + tuple(overrides),
                       explicit=self.explicit or bool(efficiency), data=self.data if data is None else data)


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
        raise SpecError("group size", f"{group} chips exceed {self.name}'s {self.max_chips}",
                        f"use at most {self.max_chips} chips")


def at_calibration_clock(system: System) -> System:
    """``system`` with its chip at the clock its architecture's compute calibration prices (Chip.dense_clock_ratio
    1.0): the kernel tables a calibration fits are that clock's times by definition, so a fit through the pricer must
    not slow them again (fit/calibrate.calibrate_catalog)."""
    if system.chip.dense_clock_ratio == 1.0:
        return system
    return replace(system, chip=replace(system.chip, dense_clock_ratio=1.0))


def _si_capacity(gb: Sourced | None, gib: Sourced | None) -> float | None:
    if gb is not None:
        return gb.value * units.GB
    if gib is not None:
        return gib.value * units.GiB
    return None


def _collect_sources(obj, prefix: str, out: dict[str, str]) -> None:
    if isinstance(obj, Sourced):
        s = obj.source + (" (estimate)" if obj.estimate else "")
        if obj.alternatives:
            s += f"; other sources: {obj.alternatives}"
        out[prefix] = s
    elif isinstance(obj, (SourcedNames, SourcedCapability)):  # fp4_block_formats, compute_capability: hardware show
        out[prefix] = obj.source
    elif isinstance(obj, BaseModel):
        for k in type(obj).model_fields:
            _collect_sources(getattr(obj, k), f"{prefix}.{k}" if prefix else k, out)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _collect_sources(v, f"{prefix}.{k}", out)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            name = getattr(v, "name", i)
            _collect_sources(v, f"{prefix}[{name}]", out)


def _named_loc(loc: tuple, data) -> str:
    """``loc`` dotted, a list index given as its element's ``name`` where it has one
    (``levels.rack.chips``, as ``--set`` and the file name it, not ``levels.0.chips``)."""
    parts, node = [], data
    for x in loc:
        item = node[x] if isinstance(x, int) and isinstance(node, list) and x < len(node) else (
            node.get(x) if isinstance(node, dict) else None)
        name = item.get("name") if isinstance(x, int) and isinstance(item, dict) else None
        parts.append(name if isinstance(name, str) and name else str(x))
        node = item
    return ".".join(parts)


def _pydantic_to_spec_error(err: ValidationError, where: str, data=None) -> SpecError:
    """The first schema error, the key named as the file names it, in the project's words
    (specs/schema_errors.describe: never pydantic's ``Input should be`` / ``Field required``)."""
    errs = err.errors()
    # a misspelt key is both unknown and (its right spelling) missing: name the one the user wrote
    e = next((x for x in errs if x["type"] == "extra_forbidden"), errs[0])
    if e["loc"] and e["loc"][-1] == "[key]":  # a key of a keyed table (peak_dense_tflops.fp3)
        e = {**e, "loc": e["loc"][:-1]}
        key = _named_loc(e["loc"], data)
        expected = (e.get("ctx") or {}).get("expected", "?")
        return SpecError(f"{where}: {key}", f"{e['loc'][-1]!r} is not a key of this table",
                         f"rename it to one of {expected} ({key.rpartition('.')[0]}.<key>)")
    loc = _named_loc(e["loc"], data)
    if not loc and e["type"] == "value_error":  # a whole-file check: the message names its table first
        table, sep, rest = str(e.get("msg", "")).removeprefix("Value error, ").partition(": ")
        if sep and table in SystemFile.model_fields:
            return SpecError(f"{where}: {table}", rest, f"correct [{table}] (see docs/catalog.md for the schema)")
    loc = loc or "(top level)"
    option = "--set" if where.startswith("--set") else None  # the value came from the command line
    count = loc.removesuffix(".value") in COUNT_KEYS
    problem, fix = describe(e, loc, "docs/catalog.md", option, whole=count)
    fp4 = loc.removesuffix(".source").removesuffix(".formats")  # {formats, source}: no value, no bare number
    if option and fp4.endswith("fp4_block_formats") and e["type"] in ("missing", "model_type", "dict_type"):
        fix = (f"give both: --set '{fp4}={{formats = [\"mxfp4\", \"nvfp4\"], source = \"<where it comes from>\"}}' "
               "(the FP4 block formats the FP4 tensor cores consume)")  # =nvfp4 was told the file's [table] form
    elif option and e["type"] == "missing" and loc.endswith((".value", ".source")):  # a {value, source} table
        fix = (f'give both: --set {(entry := loc.rpartition(".")[0])}={{value = <number>, source = "<where it comes '
               f'from>"}}, or the bare number: --set {entry}=<number>')
    if count and e["type"] == "value_error":  # a fraction for a count: the number fix, as for a word
        fix = (f"write a whole number, e.g. --set {loc.removesuffix('.value')}=8" if option else
               f"write a whole number, e.g. {loc}.value = 8")
    if e["type"] == "extra_forbidden":
        missing = [str(x["loc"][-1]) for x in errs
                   if x["type"] == "missing" and x["loc"][:-1] == e["loc"][:-1]]
        near = difflib.get_close_matches(str(e["loc"][-1]), missing, n=1)
        if near:
            fix = f"write {near[0]} (a required key, missing), not {e['loc'][-1]}"
    shown = loc.removesuffix(".value") if option and e["type"] != "missing" else loc
    return SpecError(f"{where}: {shown}", problem, fix)


def _die(f: DieFile | None, hbm_stacks: int, where: str):
    if f is None:
        return None
    from jalapeno.specs.die import die_from_file

    check_range(where, "chip.hbm_stacks", hbm_stacks)  # before the slices are laid out: 1e30 stacks hung auto_mesh
    return die_from_file(f, hbm_stacks, where)


def system_from_dict(data: dict, where: str = "system") -> System:
    """Validate a parsed system TOML and convert it to SI.

    The file's ``[efficiency]`` table is checked here (so a bad key fails at load, naming it) but
    not kept: it is read by :func:`jalapeno.specs.catalog.load_efficiency`.

    Raises:
        SpecError: a missing, unknown, non-positive or inconsistent field (named in the message).
    """
    try:
        f = SystemFile.model_validate(data)
    except ValidationError as err:
        raise _pydantic_to_spec_error(err, where, data) from None
    token = FILE_BUILD.set(True)  # the file's checks below name its keys (see FILE_BUILD)
    try:
        c = f.chip
        cap = _si_capacity(c.hbm_capacity_gb, c.hbm_capacity_gib)
        usable = _si_capacity(c.hbm_usable_gb, c.hbm_usable_gib) or cap
        chip = Chip(
            name=c.name,
            peak_flop_per_s=MappingProxyType({k: v.value * units.TFLOPS
                                              for k, v in c.peak_dense_tflops.items()}),
            hbm_capacity_bytes=cap,
            hbm_usable_bytes=usable,
            hbm_bandwidth_bytes_per_s=c.hbm_bandwidth_tb_per_s.value * units.TB,
            hbm_stacks=int(c.hbm_stacks.value),
            sram_bytes=c.sram_mib.value * units.MiB if c.sram_mib else None,
            tdp_w=c.tdp_w.value,
            sustained_w=c.sustained_w.value if c.sustained_w else None,
            die=_die(f.die, int(c.hbm_stacks.value), where),
            compute_units=int(c.compute_units.value) if c.compute_units else None,
            fp32_vector_flop_per_s=c.fp32_vector_tflops.value * units.TFLOPS if c.fp32_vector_tflops else None,
            sram_per_unit_bytes=c.sram_per_unit_kib.value * units.KiB if c.sram_per_unit_kib else None,
            mma_tile_m=int(c.mma_tile_m.value) if c.mma_tile_m else None,
            fp4_block_formats=frozenset(c.fp4_block_formats.formats) if c.fp4_block_formats else None,
            dense_clock_ratio=c.dense_clock_ratio.value if c.dense_clock_ratio else 1.0,
            compute_capability=c.compute_capability.sm if c.compute_capability else None,
        )
        levels = []
        for i, lv in enumerate(f.levels):
            if lv.topology == "torus3d":
                n = lv.torus_dims[0] * lv.torus_dims[1] * lv.torus_dims[2]
                if n != lv.chips:
                    raise SpecError(f"{where}: levels.{i}.torus_dims", f"{lv.torus_dims} hold {n} chips "
                                    f"but the level has {lv.chips}", "make the product equal chips")
            levels.append(LinkLevel(
                name=lv.name, chips=lv.chips, bandwidth_bytes_per_s=lv.bandwidth_gb_per_s.value * units.GB,
                latency_s=lv.latency_us.value * units.US, topology=lv.topology, scope=lv.scope,
                in_network_reduction=lv.in_network_reduction, links_per_chip=lv.links_per_chip,
                torus_dims=tuple(lv.torus_dims) if lv.torus_dims else None,
                shares_ports_with_inner=lv.shares_ports_with_inner))
        sources: dict[str, str] = {}
        _collect_sources(f, "", sources)
        tiers, absent = parse_kv_tiers(f.kv_tiers)
        if f.efficiency:
            efficiency_overrides(data, where)  # validates the table; the set itself is not kept
        system = System(
            name=f.name, description=f.description, chip=chip, levels=tuple(levels),
            allin_power_w_per_chip=f.power.allin_kw_per_chip.value * units.KW,
            usd_per_chip_hour=f.cost.usd_per_chip_hour.value,
            vendor_verified=f.vendor_verified, sources=MappingProxyType(sources),
            host=HostLink(f.host.location, f.host.bandwidth_gb_per_s.value * units.GB,
                          f.host.latency_us.value * units.US, f.host.note) if f.host else None,
            kv_tiers=tiers, kv_tiers_absent=absent)
    finally:
        FILE_BUILD.reset(token)
    check_plausible(system, where)  # a unit slip is an error (specs/plausibility.py)
    if usable > cap * 1.0001:  # after the ranges: 0.001 GiB is a unit slip; the keys as the file has them
        uk, ck = (f"chip.{k}_{'gb' if getattr(c, k + '_gb') is not None else 'gib'}" for k in ("hbm_usable", "hbm_capacity"))
        raise SpecError(f"{where}: {uk}", f"usable {usable / units.GiB:.4g} GiB exceeds {ck}, {cap / units.GiB:.4g} GiB",
                        f"make {uk} <= {ck} (a variant that lowers the capacity sets {uk} too)")
    return system


def efficiency_overrides(data: dict, where: str = "system", base: Efficiency | None = None) -> Efficiency:
    """The efficiency set of a parsed system TOML: ``base`` (default: the documented defaults)
    with the file's ``[efficiency]`` table applied.

    Raises:
        SpecError: an unknown parameter or a value out of range (named in the message).
    """
    eff = base or DEFAULT_EFFICIENCY
    table = data.get("efficiency") or {}
    if not isinstance(table, dict):
        raise SpecError(f"{where}: efficiency", "must be a table", "write it as [efficiency] with key = value lines")
    if table:
        over = dict(table)
        over.setdefault("source", f"{data.get('name', where)} TOML [efficiency]")
        eff = eff.with_overrides(over, where=f"{where}: efficiency")
    return eff


def read_system_toml(path: Path) -> dict:
    """Parse a system TOML file (no schema check).

    Raises:
        SpecError: missing file, TOML syntax error, not UTF-8.
    """
    path = Path(path)
    text = read_user_text(path, "a system TOML file",
                          "pass a system name from `jalapeno hardware list` or the path of a TOML file")
    try:
        data = parse_toml(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(str(path), f"malformed TOML: {e}", toml_syntax_fix(text, path)) from None
    if not data:  # an empty file was refused as 'name: Field required'
        raise SpecError(str(path), "the file holds no keys (empty, or comments only)",
                        'write a system (schema in docs/catalog.md) or a variant: base = "h200" and the keys it changes')
    return data


def load_system_file(path: Path) -> System:
    """Read a system TOML file.

    Raises:
        SpecError: missing file, TOML syntax error, or a schema violation naming the key.
    """
    path = Path(path)
    data = read_system_toml(path)
    sys_ = system_from_dict(data, where=path.name)
    object.__setattr__(sys_, "path", str(path))
    return sys_
