"""The TOML schema of a system file (``data/systems/*.toml``, a user's ``--system FILE``): its tables and keys
with their units and checks, validated by pydantic (``extra="forbid"``; every number an inline table
``{ value = ..., source = "..." }``, specs/sourced.Sourced). specs/system_load.system_from_dict turns a validated
file into the SI dataclasses; reference: ``docs/catalog.md``.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import Field, StrictBool, StrictInt, field_validator, model_validator

from jalapeno.specs.kv_tiers import TiersFile
from jalapeno.specs.link_levels import check_level_order
from jalapeno.specs.sourced import Banded, Name, SchemaVersion, Sourced, SourcedCapability, SourcedNames, _Strict

# Sourced keys that count things (a float in the schema, a whole number by their validators):
# a bad value's fix asks for a whole number.
COUNT_KEYS = ("chip.hbm_stacks", "chip.compute_units", "chip.mma_tile_m")


class ChipFile(_Strict):
    """``[chip]``: peaks (TFLOP/s dense, per format), HBM capacity (GB or GiB) and bandwidth (TB/s), stacks, TDP (W)
    and the optional tile-model keys; a bad count or a missing capacity is refused naming the key."""

    name: Name  # '' was accepted: messages then named no chip; so were blanks, line breaks
    peak_dense_tflops: dict[Literal["bf16", "fp8", "fp4", "int8"], Sourced]
    fp32_vector_tflops: Sourced | None = None  # FP32 on the CUDA cores (no tensor cores): Chip.peak("fp32")
    hbm_capacity_gb: Sourced | None = None
    hbm_capacity_gib: Sourced | None = None
    hbm_usable_gb: Sourced | None = None
    hbm_usable_gib: Sourced | None = None
    hbm_bandwidth_tb_per_s: Sourced
    hbm_stacks: Sourced

    @field_validator("hbm_stacks", "compute_units", "mma_tile_m")
    @classmethod
    def _whole_counts(cls, v: Sourced | None, info) -> Sourced | None:
        if v is not None and v.value != int(v.value):  # compute_units 0.5 was read as 0 and blamed on sram_per_unit_kib
            what = {"hbm_stacks": "stacks", "compute_units": "SMs / CUs"}.get(info.field_name, "tile rows")
            raise ValueError(f"must be a whole number (a count of {what}), got {v.value:g}")
        return v

    sram_mib: Sourced | None = None
    compute_units: Sourced | None = None  # SMs / CUs: the tile model (cost/tiles.py)
    sram_per_unit_kib: Sourced | None = None
    mma_tile_m: Sourced | None = None
    fp4_block_formats: SourcedNames | None = None
    # NVIDIA's CUDA compute capability ("9.0"): which fused kernels the engines run on it (cost/allreduce_rms.py);
    # absent on non-CUDA chips and in older user files (then the chip name's prefix decides, CAPABILITY_BY_PREFIX)
    compute_capability: SourcedCapability | None = None
    tdp_w: Sourced
    sustained_w: Sourced | None = None
    # sustained clock under dense matrix load over the clock its architecture's compute calibration prices
    # (cost/roofline.POWER_CLOCK; Chip.dense_clock_ratio)
    dense_clock_ratio: Sourced | None = None

    @model_validator(mode="after")
    def _one_capacity(self):
        if (self.hbm_capacity_gb is None) == (self.hbm_capacity_gib is None):
            raise ValueError("give exactly one of hbm_capacity_gb or hbm_capacity_gib")
        if self.hbm_usable_gb is not None and self.hbm_usable_gib is not None:
            raise ValueError("give at most one of hbm_usable_gb or hbm_usable_gib")
        if "bf16" not in self.peak_dense_tflops:
            raise ValueError("peak_dense_tflops needs at least bf16")
        if self.fp4_block_formats is not None and "fp4" not in self.peak_dense_tflops:
            raise ValueError("fp4_block_formats needs an FP4 peak (peak_dense_tflops.fp4)")
        return self


class LevelFile(_Strict):
    """One ``[[levels]]`` entry: a link level's domain size (chips), scope, topology, per-chip bandwidth (GB/s per
    direction) and latency (us); ``torus_dims`` / ``links_per_chip`` where its topology reads them."""

    name: str
    chips: int = Field(gt=0, strict=True)

    @field_validator("name")
    @classmethod
    def _word(cls, v: str) -> str:  # the <name> of --set levels.<name>.*: '' or 'rack.a' was unreachable
        if not (v.isascii() and v.replace("-", "").replace("_", "").isalnum()):
            raise ValueError(
                f"must be one word (letters, digits, - or _: the <name> of --set levels.<name>.*), got {v!r}"
            )
        return v

    scope: Literal["scale_up", "scale_out"]
    topology: Literal["switched", "full_mesh", "torus3d", "fat_tree"]
    bandwidth_gb_per_s: Sourced
    latency_us: Sourced
    in_network_reduction: StrictBool = False  # "yes"/1 were read as true, silently
    links_per_chip: int | None = Field(default=None, gt=0, strict=True)
    torus_dims: list[StrictInt] | None = None  # ["8", "16", "16"] and [true, ...] were read as numbers (break52)
    shares_ports_with_inner: StrictBool = False
    note: str = ""

    @model_validator(mode="after")
    def _torus(self):
        if self.topology == "torus3d":
            d = self.torus_dims
            if not d or len(d) != 3 or any(x <= 0 for x in d):
                raise ValueError("torus3d needs torus_dims = [x, y, z] with positive sizes")
        return self

    @model_validator(mode="after")
    def _links(self):
        """links_per_chip within what the level's topology is priced as (docs/model.md §5): a full mesh
        joins a chip to each of its chips − 1 peers by one link (B·min(g − 1, L)/L), a 3-D torus to two neighbours
        a dimension (6; the bisection bound spreads B over them, cost/collectives.torus_all_to_all_factor). More
        links than that slowed the level instead: 10**30 on MI300X's 8-chip mesh priced a TP8 step 4.5x slower, on
        Jalapeño's torus a 1 MB all-to-all in 1.2e31 µs, silently (break52)."""
        n = self.links_per_chip
        if n is None:
            return self
        if self.topology == "full_mesh" and n > self.chips - 1:
            raise ValueError(
                f"links_per_chip {n} on a full mesh of {self.chips} chips: each chip is joined to its "
                f"{self.chips - 1} peers by one link each, so a group of all {self.chips} would reach "
                f"only {self.chips - 1}/{n} of bandwidth_gb_per_s; give links_per_chip = "
                f"{self.chips - 1} (one link a peer; bandwidth_gb_per_s is the chip's total)"
            )
        if self.topology == "torus3d" and n > 6:
            raise ValueError(
                f"links_per_chip {n} on a 3-D torus: a chip has two neighbours in each of the 3 "
                "dimensions (6 links; bandwidth_gb_per_s is their total), more are not modelled; give "
                "links_per_chip = 6 (or fewer where a dimension is 1)"
            )
        return self


#: the link topologies a level may name (LevelFile.topology; cost/collectives.py prices each)
TOPOLOGIES: tuple[str, ...] = get_args(LevelFile.model_fields["topology"].annotation)


class HostFile(_Strict):
    """``[host]``: where the host CPUs sit, the per-chip host link bandwidth (GB/s per direction) and latency (us)."""

    location: Literal["same_module", "same_node", "separate_tray"]
    bandwidth_gb_per_s: Sourced
    latency_us: Sourced
    note: str = ""


class DieFile(_Strict):
    """``[die]``: the chip's slices and on-die network (specs/die.py): link bandwidth (TB/s), hop latency (ns)."""

    slices: Sourced | None = None  # None: one slice per HBM stack (chip.hbm_stacks)
    compute_dies: Sourced | None = None
    topology: Literal["pair", "ring", "mesh2d", "full_mesh"] = "pair"
    mesh_shape: list[StrictInt] | None = None  # [true, 6] was a 1 x 6 mesh, ["2", 3.0] 2 x 3, silently (break52)
    link_bandwidth_tb_per_s: Banded | None = None
    hop_latency_ns: Banded | None = None
    placement: Literal["local_first", "striped"] = "striped"
    note: str = ""

    @field_validator("slices", "compute_dies")
    @classmethod
    def _whole_dies(cls, v: Sourced | None, info) -> Sourced | None:
        # slices 1.5 was blamed on a missing link_bandwidth_tb_per_s (the network check ran first), break47
        if v is not None and v.value != int(v.value):
            raise ValueError(
                f"must be a whole number (a count of {info.field_name.replace('_', ' ')}), got {v.value:g}"
            )
        return v

    @model_validator(mode="after")
    def _network_given(self):
        if (self.slices is None or self.slices.value > 1) and (
            self.link_bandwidth_tb_per_s is None or self.hop_latency_ns is None
        ):
            raise ValueError("a die of more than one slice needs link_bandwidth_tb_per_s and hop_latency_ns")
        return self


class PowerFile(_Strict):
    """``[power]``: the all-in provisioned power per chip, kW (chip, host, network, cooling and facility overhead)."""

    allin_kw_per_chip: Sourced


class CostFile(_Strict):
    """``[cost]``: the price of a chip-hour, USD."""

    usd_per_chip_hour: Sourced


class SystemFile(_Strict):
    """A whole system file: chip, link levels (innermost first), power, cost and the optional host, die,
    efficiency overrides and KV tiers."""

    schema_version: SchemaVersion = 1
    name: Name
    description: str
    vendor_verified: StrictBool = True  # "yes" marked a user file vendor-verified
    chip: ChipFile
    levels: list[LevelFile] = Field(min_length=1)
    power: PowerFile
    cost: CostFile
    host: HostFile | None = None
    die: DieFile | None = None  # the chip's slices and on-die network (specs/die.py)
    efficiency: dict[str, Any] = Field(default_factory=dict)  # checked by Efficiency.with_overrides
    kv_tiers: TiersFile | None = None  # specs/kv_tiers.py

    @model_validator(mode="after")
    def _levels_grow(self):
        check_level_order(self.levels)
        return self
