"""System variants: a system defined as a base plus dotted-key overrides.

A system TOML may name a base (``base = "jalapeno"``: any catalog name or a TOML path, relative
paths against the variant's folder) and override any field by its dotted key::

    base = "jalapeno"
    name = "jalapeno-8stack"
    chip.hbm_stacks = { value = 8, source = "one report says eight HBM sites" }
    chip.hbm_bandwidth_tb_per_s = 20.5            # a bare number keeps the base's source, marked
    levels.rack.bandwidth_gb_per_s = 900          # a link level by its name (or index)
    efficiency.kernel_launch_s = 0.25e-6          # efficiency parameters under efficiency.*

The variant inherits the base's efficiency set — its calibration (``calibrated`` and the
``low``/``high`` band) and the base's own ``[efficiency]`` table — unless it names another with
``calibration = "<catalog system>"`` (that system's calibration file) or ``calibration = "spec"``
(the documented defaults). ``--set KEY=VALUE`` on the command line applies the same overrides
(parsed and applied by specs/system_overrides.py; :func:`load_variant`). Every override passes
through the ordinary schema validation (specs/system_file.py, via specs/hardware.py), so a variant can be no less valid than
a catalog file. A variant's TDP, sustained and all-in power and $/chip-hour follow its components
relative to the catalog system its chain starts from (specs/power.py), unless the variant states them.

Public functions:
    :func:`resolve_system_data` (file → merged dict + its efficiency origin), :func:`build_variant`,
    :func:`load_variant` (name/path + overrides → :class:`~jalapeno.specs.hardware.System`),
    :func:`variant_efficiency` (the efficiency set a system is priced with), :func:`with_overrides`
    (a loaded system + overrides → (System, Efficiency) for set ``which``), :func:`efficiency_note`,
    :func:`moved_together` (what a spec search moves with a key: usable HBM with capacity, shared ports);
    ``parse_sets``, ``apply_overrides`` (raw system dict + dotted overrides → new dict; the building
    block a design search calls) and ``split_overrides`` live in specs/system_overrides.py and are
    re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from jalapeno.errors import SpecError, UnknownNameError
from jalapeno.specs.calibration import EFFICIENCY_SETS, base_efficiency
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY, Efficiency, flatten_params, nest_params
from jalapeno.specs.hardware import System, SystemOrigin
from jalapeno.specs.system_load import read_system_toml, system_from_dict
from jalapeno.specs.files import base_reference, chain_stamp
from jalapeno.specs.system_overrides import (  # noqa: F401  (parse_sets re-exported: the overrides lived here)
    VARIANT_KEYS,
    Overrides,
    _as_written,
    _is_sourced,
    _suffix,
    apply_overrides,
    parse_sets,
    split_overrides,
    value_types,
)

#: ``calibration`` value meaning the documented defaults.
SPEC = "spec"


def _leaf_overrides(d: Mapping[str, Any], prefix: str = "", where: str = "") -> list[tuple[str, Any]]:
    """A variant file's keys as dotted leaf overrides (a ``{value, source}`` table is one leaf).

    Raises:
        SpecError: an empty table (``chip.peak_dense_tflops = {}``, a bare ``[power]``): it set
            nothing, silently, where ``--set KEY={}`` is refused.
    """
    out = []
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and not v and k != "efficiency":
            raise SpecError(
                f"{where}: {key}",
                "an empty table sets nothing",
                f"give the keys to change, e.g. {key}.<field> = <value>, or drop it",
            )
        if isinstance(v, Mapping) and not _is_sourced(v) and k != "efficiency":
            out.extend(_leaf_overrides(v, key + ".", where))
        else:
            out.append((key, v))
    return out


#: the keys a ``[[levels]]`` entry must give (specs/system_file.LevelFile's required fields)
_LEVEL_REQUIRED = ("chips", "scope", "topology", "bandwidth_gb_per_s", "latency_us")


def _check_levels_list(levels: Any, base_levels: Any, where: str, base: str) -> None:
    """Refuse a variant's ``[[levels]]`` entry that names one of its base's levels but leaves out a required key.

    A ``[[levels]]`` list is one value: it replaces the base's whole list. A variant of h200 with ``[[levels]]
    name = "node", bandwidth_gb_per_s = ...`` (one field changed, as a user meant) was refused as 'levels.node.chips:
    is missing. Fix: add levels.node.chips to the file', and adding every key then dropped h200's cluster level and
    its in-network reduction, silently (break52); the dotted key changes the one field (docs/catalog.md, Variants).

    Raises:
        SpecError: naming ``<file>: levels``, the base's levels, the key left out and the dotted key to write.
    """
    if not isinstance(levels, list) or not isinstance(base_levels, list):
        return
    names = [lv.get("name") for lv in base_levels if isinstance(lv, Mapping)]
    for lv in levels:
        missing = [k for k in _LEVEL_REQUIRED if k not in lv] if isinstance(lv, Mapping) else []
        if missing and lv.get("name") in names:
            given = next((k for k in lv if k != "name"), "<key>")
            raise SpecError(
                f"{where}: levels",
                f"[[levels]] replaces all of {base}'s levels ({', '.join(names)}), and "
                f"its entry {lv['name']!r} gives no {missing[0]}: a variant changes a field of its base's "
                "level by the dotted key",
                f"write levels.{lv['name']}.{given} = ... (no [[levels]]), or "
                "give every level in full to replace the hierarchy",
            )


def levels_replaced_note(system: System, overrides: Iterable[tuple[str, Any]] = ()) -> str | None:
    """The note for a full ``[[levels]]`` list (a variant file's, or ``--set levels=[...]`` among ``overrides``, the
    ``--set`` pairs) that drops levels of the loaded ``system``'s root catalog system or their in-network reduction,
    or None. The list replaces the whole hierarchy (:func:`_check_levels_list`): a variant of h200 giving its node
    level in full dropped h200's 8,192-chip cluster level and the node's in-switch (NVLS) reduction with no word
    (break52). Not refused: a what-if network is meant to work."""
    o, on_line = system.origin, {k.split(":", 1)[-1] for k, _ in overrides}
    if o is None or o.root is None or "levels" not in {k for k, _ in o.overrides} | on_line:
        return None
    who = "--set levels" if "levels" in on_line else f"{o.where or system.name}: [[levels]]"
    root = load_variant(o.root)
    own = {lv.name: lv for lv in system.levels}
    lost = [f"{lv.name} ({lv.chips:,} chips, {lv.scope})" for lv in root.levels if lv.name not in own]
    lost += [
        f"{lv.name}'s in-switch reduction (in_network_reduction)"
        for lv in root.levels
        if lv.in_network_reduction and lv.name in own and not own[lv.name].in_network_reduction
    ]
    if not lost:
        return None
    return (
        f"{who} replaces all of {root.name}'s link levels, and leaves out {', '.join(lost)}: the variant is priced "
        f"on {', '.join(own)} alone; to change one field of a level, write levels.<name>.<key> = ... instead "
        "(docs/catalog.md, Variants)"
    )


def _check_name(name: Any, path: Path, stated: bool) -> None:
    """Refuse a user file's system name holding a colon (the stem of a variant file without ``name``, when not
    ``stated``): ``--set NAME:KEY=VALUE`` splits at the first ':', so ``name = "lab:h200"`` could not be targeted.
    A space is allowed: the name then needs shell quotes (``--baseline "my rack"``), nothing breaks, and HTML-escaping
    tests name systems with spaces (tests/browser/test_pages.py). Other malformed names are left to the schema
    (``"  "``: empty; a line break: not printable).

    Raises:
        SpecError: field ``<file>: name``.
    """
    if not (isinstance(name, str) and name.strip() and name.isprintable()) or ":" not in name:
        return
    word = name.strip().replace(":", "-")
    fix = f'write name = "{word}" (no colon)' if stated else f'add name = "{word}" to the file'
    raise SpecError(
        f"{path.name}: name",
        f"{name!r} holds a colon: --set NAME:KEY=VALUE splits at the first ':', so the name cannot be targeted",
        fix,
    )


def _unknown_base(path: Path, base: str, e: UnknownNameError) -> UnknownNameError:
    """The error for a ``base`` that is neither a catalog system nor a system TOML path, saying what ``base``
    accepts: ``base = "x.json"`` said "unknown system ... or a file path" (or, where x.json lay in the working
    folder, "pass it as ./x.json"), of a value that names a file (break45)."""
    from jalapeno.specs.catalog import list_systems

    hint = e.problem.split(f"unknown system {base!r}", 1)[1] if e.problem.startswith("unknown system") else ""
    return UnknownNameError(
        f"{path.name}: base",
        f"unknown system {base!r}{hint}, and not a system TOML path (a "
        "path ends in .toml or holds a folder, and is read relative to this file's folder)",
        f"base takes a catalog name ({', '.join(list_systems())}; `jalapeno hardware list`) or "
        'the path of a system TOML, e.g. base = "./my-system.toml"',
    )


def resolve_system_data(name_or_path: str, _chain: tuple[str, ...] = ()) -> tuple[dict, SystemOrigin]:
    """The full (file-form) dict of a system, its base chain resolved, and where its efficiency
    set comes from.

    A shipped system is its own calibration; a file with ``base`` inherits its base's calibration
    and ``[efficiency]`` table (its own table applies on top) unless it says ``calibration``; a file
    with neither is priced with the documented defaults (``origin.calibration`` None).

    Raises:
        UnknownNameError: unknown base name. SpecError: a base cycle, a malformed file, an unknown
            ``calibration`` name, a bad override key.
    """
    from jalapeno.specs.catalog import list_systems, system_path

    shipped, path = system_path(name_or_path)
    data = read_system_toml(path)  # first: a missing file or a looping link is refused by name (resolve() raised)
    key = str(path.resolve())
    if key in _chain:
        raise SpecError(
            f"{path.name}: base",
            "the base chain loops back to this file",
            "point base at a catalog system or a file that does not name this one",
        )
    if not isinstance(data, dict):
        raise SpecError(path.name, "not a TOML table", "pass a system TOML file")
    if shipped:
        for k in VARIANT_KEYS:
            data.pop(k, None)
        eff = tuple(flatten_params(data.pop("efficiency", {}) or {}).items())
        return data, SystemOrigin(calibration=path.stem, efficiency=eff, where=path.name, root=path.stem)
    _check_name(data.get("name", path.stem if "base" in data else None), path, "name" in data)
    base = data.pop("base", None)
    calibration = data.pop("calibration", None)
    if calibration is not None and (
        not isinstance(calibration, str) or (calibration != SPEC and calibration not in list_systems())
    ):
        raise SpecError(
            f"{path.name}: calibration",
            f"unknown calibration {calibration!r}",
            f'name a catalog system whose calibration to use ({", ".join(list_systems())}) or "spec"',
        )
    own_eff = data.pop("efficiency", {}) or {}
    if not isinstance(own_eff, Mapping):
        raise SpecError(
            f"{path.name}: efficiency", "must be a table", "write it as [efficiency] with key = value lines"
        )
    # a quoted dotted key ("efficiency.gemm.fp8_block.k_block_s" = ...) is the same override as the
    # [efficiency] table's entry; it was merged into the hardware dict and dropped with it
    quoted = tuple((k[len("efficiency.") :], data.pop(k)) for k in [k for k in data if k.startswith("efficiency.")])
    own = tuple(flatten_params(own_eff).items()) + quoted
    if base is None:
        cal = None if calibration in (None, SPEC) else calibration
        return data, SystemOrigin(
            calibration=cal,
            efficiency=own,
            where=path.name,
            explicit=calibration is not None or bool(own),
            root=str(path),
        )
    if not isinstance(base, str) or not base:
        raise SpecError(
            f"{path.name}: base",
            f"must be a system name or path, got {base!r}",
            'write base = "jalapeno" (a catalog name) or a TOML path',
        )
    base_ref = base_reference(path, base)
    try:
        bdata, borigin = resolve_system_data(base_ref, _chain + (key,))
    except UnknownNameError as e:  # was 'system: unknown system ...', not naming the file or its key
        if e.field != "system":
            raise
        raise _unknown_base(path, base, e) from None
    except SpecError as e:  # was 'b.toml: file not found', naming neither this file nor where the path was read from
        if e.field != base_ref or e.problem != "file not found":
            raise
        raise SpecError(
            f"{path.name}: base",
            f"{base!r} is read as {base_ref} (a path is relative to this file's folder): file not found",
            "give a catalog name (`jalapeno hardware list`) or the "
            "path of an existing TOML, relative to this file or absolute",
        ) from None
    _check_levels_list(data.get("levels"), bdata.get("levels"), path.name, base)
    leaves = _leaf_overrides(data, where=path.name)
    merged = apply_overrides(bdata, leaves, where=path.name)
    merged.setdefault("name", path.stem)
    if "name" not in data:
        merged["name"] = path.stem
    if "description" not in data:
        merged["description"] = f"{bdata.get('description', base)} (variant {path.stem} of {base})"
    if calibration is None:
        cal, eff = borigin.calibration, borigin.efficiency + own
    else:
        cal, eff = (None if calibration == SPEC else calibration), own
    return merged, SystemOrigin(
        calibration=cal,
        efficiency=eff,
        base=base,
        where=path.name,
        explicit=True,
        overrides=borigin.overrides + tuple((k, v) for k, v in leaves if k not in ("name", "description")),
        root=borigin.root,
    )


def build_variant(
    data: Mapping[str, Any],
    origin: SystemOrigin,
    overrides: Iterable[tuple[str, Any]] = (),
    where: str = "--set",
    rename: bool = True,
) -> System:
    """A :class:`System` from a resolved dict and origin with dotted ``overrides`` applied.

    Hardware overrides change the dict (then the schema validates it); ``efficiency.*`` overrides
    are added to the origin (validated by :func:`variant_efficiency`, here too). With ``rename``
    and overrides, the name gets ``+key=value,...`` so tables keep the variant apart from its base.

    Raises:
        SpecError: a bad key or a value the schema refuses (named with ``where``).
    """
    overrides = tuple(overrides)
    hw, eff = split_overrides(overrides)
    d = apply_overrides(data, hw, where) if hw else dict(data)
    d.pop("efficiency", None)
    if rename and overrides and not any(k == "name" for k, _ in hw):
        d["name"] = f"{d.get('name', 'system')}{_suffix(overrides)}"
    new_origin = origin.extended(eff, overrides, data=d)
    if new_origin.efficiency:
        try:
            _efficiency_from(new_origin, "calibrated")  # validates the efficiency overrides now, naming the key
        except SpecError as e:  # a bad --set value was named as a key of the system's file ('jalapeno.toml: ...')
            key = e.field.rpartition(": ")[2]
            if any(f"efficiency.{k}" == key or f"efficiency.{k}".startswith(key + ".") for k, _ in eff):
                raise SpecError(f"{where}: {key}", e.problem, e.fix) from None
            raise
    try:
        sys_ = system_from_dict(d, where=where if hw else origin.where or where)
    except SpecError as e:
        raise _as_written(e, (*origin.overrides, *hw)) from None  # a variant file's keys and --set's
    object.__setattr__(sys_, "origin", new_origin)
    return _follow_power(sys_)


def _follow_power(sys_: System) -> System:
    """A variant's TDP, sustained and all-in power and $/chip-hour follow its components
    (specs/power.py), relative to the root it derives from; values the variant states are kept."""
    from jalapeno.specs.power import POWER_KEYS, follow_variant

    o = sys_.origin
    hw = [k for k, _ in o.overrides if not k.startswith("efficiency.")]
    if o.root is None or not hw:
        return sys_
    root = load_variant(o.root)
    stated = {k for k in hw if k in POWER_KEYS}
    out = follow_variant(sys_, root, stated)
    if out is not sys_:
        object.__setattr__(out, "origin", o)
    return out


def load_variant(name_or_path: str, overrides: Overrides = ()) -> System:
    """A system by catalog name or TOML path (a ``base`` chain resolved) with ``overrides``.

    ``overrides`` (dotted key, value) pairs, as :func:`parse_sets` returns them. Without overrides
    this is what ``load_system`` returns. Cached per (name, overrides, their value types, the
    modification stamps of the file and its base chain: an edited file or base is read again).

    Raises:
        UnknownNameError: unknown name or base. SpecError: a malformed file or override.
    """
    overrides = tuple(overrides)
    return _load_variant(name_or_path, overrides, value_types(overrides), chain_stamp(name_or_path))


@lru_cache(maxsize=128)
def _load_variant(name_or_path: str, overrides: Overrides, _types: tuple, _stamp: tuple | None) -> System:
    data, origin = resolve_system_data(name_or_path)
    _, path = _path_of(name_or_path)
    sys_ = build_variant(data, origin, overrides, where=origin.where if not overrides else "--set")
    object.__setattr__(sys_, "path", str(path))
    return sys_


def _path_of(name_or_path: str):
    from jalapeno.specs.catalog import system_path

    return system_path(name_or_path)


def _efficiency_from(origin: SystemOrigin | None, which: str) -> Efficiency:
    origin = origin or SystemOrigin()
    if origin.calibration is None:
        base = DEFAULT_EFFICIENCY if which in EFFICIENCY_SETS else base_efficiency(origin.where or "system", which)
    else:
        base = base_efficiency(origin.calibration, which)
    if not origin.efficiency:
        return base
    over = nest_params(dict(origin.efficiency))
    parts = ", ".join(f"{k}={v}" for k, v in origin.efficiency if k != "source")
    src = over.pop("source", None) or f"{base.source}; overrides: {parts}"
    return base.with_overrides({**over, "source": src}, where=f"{origin.where or 'system'}: efficiency")


def variant_efficiency(system: System, which: str = "calibrated") -> Efficiency:
    """The efficiency set ``which`` (calibrated, low, high, spec or a calibration path) that
    ``system`` is priced with: its origin's calibration, then the ``[efficiency]`` tables and
    ``efficiency.*`` overrides along its base chain.

    Raises:
        UnknownNameError: unknown set. SpecError: a bad efficiency override (named).
    """
    return _efficiency_from(system.origin, which)


def with_overrides(
    system: System,
    overrides: Sequence[tuple[str, Any]],
    which: str = "calibrated",
    where: str = "--set",
    rename: bool = True,
) -> tuple[System, Efficiency]:
    """``system`` with dotted-key ``overrides`` applied, and the efficiency set ``which`` it then
    has — the public entry point for what-ifs (sensitivity, audit, design search).

    The system is rebuilt from its file form (so every schema check applies). A system built in
    code (no file form) takes only ``efficiency.*`` overrides, on the documented defaults.

    Raises:
        SpecError: a bad key or value; a hardware override on a system built in code.
    """
    overrides = tuple(overrides)
    origin = system.origin
    if origin is None or origin.data is None:
        hw, eff = split_overrides(overrides)
        if hw:
            raise SpecError(
                f"{where}: {hw[0][0]}",
                f"{system.name} was built in code, not read from a file",
                "load it with load_system(name or path) to override hardware fields",
            )
        origin = (origin or SystemOrigin()).extended(eff, overrides)
        return replace(system, origin=origin), _efficiency_from(origin, which)
    new = build_variant(origin.data, origin, overrides, where, rename)
    object.__setattr__(new, "path", system.path)
    return new, variant_efficiency(new, which)


#: Bytes of one unit of a chip's HBM capacity keys (``chip.hbm_capacity_gb`` / ``_gib``, ``chip.hbm_usable_*``).
_CAPACITY_UNITS = {"gb": 1e9, "gib": 2.0**30}


def moved_together(system: System, overrides: Mapping[str, float]) -> dict[str, float]:
    """The overrides a spec *search* (audit's "what the chip would need", ``explore``) moves with ``overrides``
    ({dotted key: value}) on ``system``, beyond those given; ``--set`` and variant files move none of these (they say
    what they set). Two links, both as the system's own file states them:

    * a nominal HBM capacity (``chip.hbm_capacity_gb``/``_gib``) moves the usable capacity the file states
      (``chip.hbm_usable_gb``/``_gib``) at the file's usable/nominal ratio (GB300: 279/288 GB; Jalapeño 216/216 GiB),
      so usable never passes nominal and the engine sees the larger chip; a file with no usable key reads usable
      as nominal already (specs/system_load.py);
    * a level reached through its inner level's ports (``shares_ports_with_inner``: Jalapeño's rack through the
      tray's ~600 GB/s ports) set faster than those ports raises the inner level's ``bandwidth_gb_per_s`` to it: a
      rack at 1,200 GB/s needs ports at 1,200, and the link power prices those ports (specs/power.chip_power,
      ``P_link = 2 x B x 8 bit x serdes pJ/bit``: 700 + 2 x 600 GB/s x 8 x 5 pJ/bit = 748 W at 1,200), where the
      rack alone cost no watts (specs/power.scale_up_bytes_per_s counts the inner level's own ports only).

    Returns {key: value} of the added overrides only (empty when none applies). Values are in each key's unit."""
    out: dict[str, float] = {}
    data = system.origin.data if system.origin is not None else None
    chip = (data or {}).get("chip", {})
    for unit, per in _CAPACITY_UNITS.items():
        cap = overrides.get(f"chip.hbm_capacity_{unit}")
        if cap is None or any(k.startswith("chip.hbm_usable_") for k in overrides):
            continue
        usable_key = next((f"chip.hbm_usable_{u}" for u in _CAPACITY_UNITS if f"hbm_usable_{u}" in chip), None)
        if usable_key is not None:
            ratio = system.chip.hbm_usable_bytes / system.chip.hbm_capacity_bytes
            out[usable_key] = cap * per * ratio / _CAPACITY_UNITS[usable_key.rsplit("_", 1)[1]]
    levels = system.levels
    for i, lv in enumerate(levels[1:], 1):
        inner = levels[i - 1]
        mine = next(
            (
                overrides[k]
                for k in (f"levels.{lv.name}.bandwidth_gb_per_s", f"levels.{i}.bandwidth_gb_per_s")
                if k in overrides
            ),
            None,
        )
        inner_keys = (f"levels.{inner.name}.bandwidth_gb_per_s", f"levels.{i - 1}.bandwidth_gb_per_s")
        if not lv.shares_ports_with_inner or mine is None or any(k in overrides for k in inner_keys):
            continue
        if mine > inner.bandwidth_bytes_per_s / 1e9 * 1.0001:
            out[inner_keys[0]] = float(mine)
    return out


def efficiency_note(system: System) -> str | None:
    """A one-line note for a user file with neither a base nor its own efficiency set, saying
    which set it is priced with; None otherwise."""
    o = system.origin
    if o is None or o.calibration is not None or o.explicit:
        return None
    return (
        f"{o.where or system.name} has no base and no [efficiency]: priced with the documented default "
        "efficiencies (set 'spec', no calibration); add base = \"<catalog system>\" to inherit a "
        'calibrated set, or calibration = "<catalog system>" to borrow one'
    )
