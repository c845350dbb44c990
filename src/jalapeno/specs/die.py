"""The chip inside: slices (dies, or regions of one die) with local HBM, and the network joining them.

A system TOML may describe its chip's structure in a ``[die]`` table::

    [die]
    slices = { value = 2, source = "..." }                 # units that own local HBM stacks (absent: one per stack)
    compute_dies = { value = 8, source = "..." }           # optional: compute dies on them (XCDs)
    topology = "pair"                                      # pair | ring | mesh2d | full_mesh
    mesh_shape = [2, 3]                                    # mesh2d only: rows x columns = slices (absent: most square)
    link_bandwidth_tb_per_s = { value = 5.0, source = "...", low = 5.0, high = 10.0 }  # per link, per direction
    hop_latency_ns = { value = 100, source = "...", estimate = true, low = 50, high = 300 }
    placement = "striped"                                  # what the chip's software does by default

A slice has 1/slices of the chip's compute, HBM stacks, HBM bandwidth and SRAM. A chip without
a ``[die]`` table is one slice (the flat chip). The SI form is :class:`Die`; the pricer that uses
it is cost/sliced.py. Derivation and sources: docs/chip.md.

Topology arithmetic (per direction, B = link bandwidth):

- ``pair`` (2 slices, one link): port = B, bisection = B, diameter 1.
- ``ring`` (S slices): port = 2B, bisection = 2B, diameter ⌊S/2⌋.
- ``mesh2d`` (r x c): port = the mean degree x B (degree 2-4), bisection = the links a balanced
  cut crosses (r if c is even, else c if r is even, else min(r, c)), diameter r + c − 2.
- ``full_mesh`` (S slices): port = (S − 1) B, bisection = (S/2)² B (⌊S/2⌋·⌈S/2⌉), diameter 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType

from pydantic import ValidationError

from jalapeno import units
from jalapeno.errors import SpecError
from jalapeno.specs.system_load import _pydantic_to_spec_error
from jalapeno.specs.sourced import Banded
from jalapeno.specs.system_file import DieFile

TOPOLOGIES = ("pair", "ring", "mesh2d", "full_mesh")
PLACEMENTS = ("local_first", "striped", "best")


@dataclass(frozen=True, slots=True)
class Die:
    """A chip's slices and on-die network (SI units).

    Attributes:
        slices: units that own local HBM stacks (and 1/slices of compute and SRAM).
        topology: ``pair``, ``ring``, ``mesh2d`` or ``full_mesh`` (module docstring).
        mesh_shape: (rows, columns) for ``mesh2d``, else ().
        link_bandwidth_bytes_per_s: one on-die link, per direction.
        hop_latency_s: latency of one hop of the on-die network.
        placement: the placement the chip's software uses by default (``striped`` = a GPU's
            uniform, interleaved address space; ``local_first`` = explicit local placement).
        compute_dies: compute dies on the slices (e.g. 8 XCDs on MI300X's 4 I/O dies); 0 = slices.
        bands: file key → (low, high) of each banded number, in file units.
    """

    slices: int
    topology: str
    link_bandwidth_bytes_per_s: float
    hop_latency_s: float
    placement: str = "striped"
    mesh_shape: tuple[int, ...] = ()
    compute_dies: int = 0
    bands: MappingProxyType = field(default_factory=lambda: MappingProxyType({}), compare=False)

    def __post_init__(self) -> None:
        if self.slices < 1 or int(self.slices) != self.slices:
            raise SpecError("die.slices", f"must be a whole number >= 1, got {self.slices}", "give e.g. 2")
        if self.topology not in TOPOLOGIES:
            raise SpecError("die.topology", f"unknown topology {self.topology!r}", f"use one of {TOPOLOGIES}")
        if self.placement not in ("local_first", "striped"):
            raise SpecError("die.placement", f"unknown placement {self.placement!r}", "use local_first or striped")
        if not (self.link_bandwidth_bytes_per_s > 0 and self.hop_latency_s >= 0):
            raise SpecError(
                "die.link_bandwidth",
                "needs a positive bandwidth and a non-negative latency",
                "give link_bandwidth_tb_per_s > 0 and hop_latency_ns >= 0",
            )
        _check_shape(self.topology, self.slices, self.mesh_shape)

    @property
    def degree(self) -> float:
        """Mean number of on-die links per slice."""
        return _links(self.topology, self.slices, self.mesh_shape)[0]

    @property
    def bisection_links(self) -> float:
        """Links a balanced cut of the slices crosses."""
        return _links(self.topology, self.slices, self.mesh_shape)[1]

    @property
    def diameter(self) -> int:
        """Hops between the two farthest slices."""
        return _links(self.topology, self.slices, self.mesh_shape)[2]

    @property
    def port_bandwidth_bytes_per_s(self) -> float:
        """What one slice can send (or receive) on die per direction: mean degree x link bandwidth."""
        if self.slices == 1:
            return float("inf")
        return self.degree * self.link_bandwidth_bytes_per_s

    @property
    def bisection_bandwidth_bytes_per_s(self) -> float:
        """Bandwidth across a balanced cut, per direction."""
        if self.slices == 1:
            return float("inf")
        return self.bisection_links * self.link_bandwidth_bytes_per_s


def _links(topology: str, s: int, shape: tuple[int, ...]) -> tuple[float, float, int]:
    """(mean degree, links across a balanced cut, diameter) of ``s`` slices (module docstring)."""
    if s == 1:
        return 0.0, 0.0, 0
    if topology == "pair" or (topology == "ring" and s == 2):
        return 1.0, 1.0, 1
    if topology == "ring":
        return 2.0, 2.0, s // 2
    if topology == "full_mesh":
        return float(s - 1), float((s // 2) * (s - s // 2)), 1
    r, c = shape
    cut = r if c % 2 == 0 else c if r % 2 == 0 else min(r, c)
    return 2.0 * (2 * r * c - r - c) / (r * c), float(cut), r + c - 2


def _check_shape(topology: str, slices: int, shape) -> None:
    if topology == "mesh2d":
        if not shape or len(shape) != 2 or any(int(x) < 1 for x in shape):
            raise SpecError(
                "die.mesh_shape",
                f"mesh2d needs [rows, columns], got {list(shape) if shape else shape}",
                "add e.g. mesh_shape = [2, 3]",
            )
        if shape[0] * shape[1] != slices:
            raise SpecError(
                "die.mesh_shape",
                f"{list(shape)} holds {shape[0] * shape[1]} slices but the die has {slices}",
                "make rows x columns equal slices",
            )
    elif shape:
        raise SpecError("die.mesh_shape", f"is only for mesh2d (topology is {topology!r})", "remove mesh_shape")
    if topology == "pair" and slices not in (1, 2):
        raise SpecError(
            "die.topology",
            f"pair joins 2 slices, the die has {slices}",
            "use ring, mesh2d or full_mesh for more than 2 slices",
        )


#: the flat chip: one slice, no on-die network
ONE_SLICE = Die(slices=1, topology="pair", link_bandwidth_bytes_per_s=float("inf"), hop_latency_s=0.0)


def auto_mesh(slices: int) -> tuple[int, int]:
    """The most nearly square rows x columns holding ``slices`` (rows <= columns).

    >>> auto_mesh(6), auto_mesh(8), auto_mesh(7)
    ((2, 3), (2, 4), (1, 7))
    """
    rows = max(r for r in range(1, int(slices**0.5) + 1) if slices % r == 0)
    return rows, slices // rows


def die_from_dict(data: dict, hbm_stacks: int, where: str = "system") -> Die:
    """Validate a ``[die]`` table and convert it to SI (:func:`die_from_file`).

    Raises:
        SpecError: a malformed table (and what :func:`die_from_file` raises).
    """
    try:
        f = DieFile.model_validate(data)
    except ValidationError as err:
        raise _pydantic_to_spec_error(err, f"{where}: die", data, DieFile) from None
    return die_from_file(f, hbm_stacks, where)


def die_from_file(f: DieFile, hbm_stacks: int, where: str = "system") -> Die:
    """A validated ``[die]`` table (specs/system_file.DieFile) in SI.

    Raises:
        SpecError: a mesh shape that does not hold the slices, HBM stacks that do not divide
            evenly over the slices (each slice owns whole local stacks), or a link bandwidth / hop latency
            outside the low/high band its own table states (a --set of the value alone may leave it).
    """
    s = f.slices.value if f.slices is not None else hbm_stacks
    if s != int(s):
        raise SpecError(f"{where}: die.slices", f"must be a whole number, got {s}", "give e.g. 2")
    if hbm_stacks % int(s):
        raise SpecError(
            f"{where}: die.slices",
            f"{int(s)} slices cannot each own whole HBM stacks of the chip's {hbm_stacks}",
            "make chip.hbm_stacks a multiple of die.slices",
        )
    if int(s) == 1:
        return replace(ONE_SLICE, placement=f.placement)
    bands = {}
    for key in ("link_bandwidth_tb_per_s", "hop_latency_ns"):
        v: Banded = getattr(f, key)
        bands[key] = lo, hi = (v.low if v.low is not None else v.value, v.high if v.high is not None else v.value)
        # the file's band holds its value; a --set what-if moves the value alone (its source records the override)
        if not lo <= v.value <= hi and not v.source.startswith("override "):
            raise SpecError(
                f"{where}: die.{key}",
                f"value {v.value:g} lies outside its band {lo:g} to {hi:g}",
                "give low <= value <= high (the band sensitivity and audit sweep), or move the band",
            )
    try:
        shape = tuple(f.mesh_shape or ()) or (auto_mesh(int(s)) if f.topology == "mesh2d" else ())
        return Die(
            slices=int(s),
            topology=f.topology,
            mesh_shape=shape,
            link_bandwidth_bytes_per_s=f.link_bandwidth_tb_per_s.value * units.TB,
            hop_latency_s=f.hop_latency_ns.value * 1e-9,
            placement=f.placement,
            compute_dies=int(f.compute_dies.value) if f.compute_dies else 0,
            bands=MappingProxyType(bands),
        )
    except SpecError as e:
        raise SpecError(f"{where}: {e.field}", e.problem, e.fix) from None
