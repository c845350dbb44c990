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
(:func:`parse_sets`, :func:`load_variant`). Every override passes through the ordinary schema
validation (specs/hardware.py), so a variant can be no less valid than a catalog file. A variant's
TDP, sustained and all-in power and $/chip-hour follow its components relative to the catalog
system its chain starts from (specs/power.py), unless the variant states them.

Public functions:
    :func:`apply_overrides` (raw system dict + dotted overrides → new dict; the building block a
    design search calls), :func:`resolve_system_data` (file → merged dict + its efficiency origin),
    :func:`load_variant` (name/path + overrides → :class:`~jalapeno.specs.hardware.System`),
    :func:`variant_efficiency` (the efficiency set a system is priced with), :func:`with_overrides`
    (a loaded system + overrides → (System, Efficiency) for set ``which``), :func:`efficiency_note`.
"""

from __future__ import annotations

import copy
import difflib
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from jalapeno.errors import SpecError, UnknownNameError
from jalapeno.specs.calibration import EFFICIENCY_SETS, base_efficiency
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY, Efficiency, flatten_params, nest_params
from jalapeno.specs.hardware import Sourced, System, SystemFile, SystemOrigin, read_system_toml, system_from_dict
from jalapeno.specs.files import base_reference, chain_stamp

#: Top-level keys of a variant file that are not system fields.
VARIANT_KEYS = ("base", "calibration")
#: ``calibration`` value meaning the documented defaults.
SPEC = "spec"
Overrides = tuple[tuple[str, Any], ...]
#: chip fields that give one quantity in GB or GiB: an override in one unit replaces the base's other
_UNIT_TWINS = {"hbm_capacity_gb": "hbm_capacity_gib", "hbm_usable_gb": "hbm_usable_gib"}
_UNIT_TWINS.update({v: k for k, v in _UNIT_TWINS.items()})


# ---- overrides on the raw (file-form) dict ---------------------------------------------------

def parse_sets(items: Iterable[str], option: str = "--set") -> Overrides:
    """Parse ``KEY=VALUE`` strings (``--set chip.hbm_stacks=8``) into (dotted key, value) pairs.

    VALUE is read as a TOML value (``8``, ``0.25e-6``, ``"text"``, ``true``); anything that is not
    TOML is kept as text. An inline table is read as a variant file reads one: its keys are the
    dotted keys under KEY (``chip={hbm_stacks=8}`` is ``chip.hbm_stacks=8``), except a sourced
    number ``{value = ..., source = "..."}``, which replaces that entry whole.

    Raises:
        SpecError: an item without ``=`` or with an empty key; a key given twice; an empty inline
            table (it sets nothing).

    >>> parse_sets(["chip.hbm_stacks=8", "efficiency.kernel_launch_s=2.5e-7", "name=my-chip"])
    (('chip.hbm_stacks', 8), ('efficiency.kernel_launch_s', 2.5e-07), ('name', 'my-chip'))
    >>> parse_sets(["chip.peak_dense_tflops={fp8=5000, fp4=20000}"])
    (('chip.peak_dense_tflops.fp8', 5000), ('chip.peak_dense_tflops.fp4', 20000))
    """
    out = []
    for item in items:
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or not key or any(not p for p in key.split(".")):
            raise SpecError(option, f"{item!r} is not KEY=VALUE",
                            f"write e.g. {option} chip.hbm_stacks=8 (dotted keys as in the system TOML)")
        try:
            value = tomllib.loads(f"v = {text.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            value = text.strip()
        # an inline table merges its keys, as in a variant file (it replaced the whole table:
        # chip={hbm_stacks=8} reported chip.name missing, chip.peak_dense_tflops={fp8=5} set
        # chip.peak_dense_tflops.peak_dense_tflops.fp8, efficiency={...} was called not a table)
        for leaf, v in _set_leaves(key, value, option):
            if any(k == leaf for k, _ in out):  # the last one won, silently, and the label named both
                raise SpecError(f"{option} {leaf}", "given twice", f"give {leaf} once, with the value you mean")
            out.append((leaf, _frozen(v)))
    return tuple(out)


def _set_leaves(key: str, value: Any, option: str) -> list[tuple[str, Any]]:
    """``(dotted key, value)`` leaves of one ``--set`` value: an inline table's keys under ``key``
    (nested tables too), a sourced ``{value = ...}`` table or any other value as itself."""
    if not isinstance(value, dict) or (_is_sourced(value) and not key.startswith("efficiency")):
        return [(key, value)]
    if not value:
        raise SpecError(f"{option}: {key}", "an empty inline table sets nothing",
                        f"give the keys to change, e.g. {option} {key}.<field>=<value> (or {key}={{<field> = <value>}})")
    return [leaf for k, v in value.items() for leaf in _set_leaves(f"{key}.{k}", v, option)]


def _frozen(v: Any) -> Any:
    """Lists → tuples, tables → sorted item tuples read back by :func:`_thawed` (hashable for caching)."""
    if isinstance(v, list):
        return tuple(_frozen(x) for x in v)
    if isinstance(v, dict):
        return _Table(tuple((k, _frozen(x)) for k, x in v.items()))
    return v


class _Table(tuple):
    """A TOML inline table given on the command line, kept hashable."""


def _thawed(v: Any) -> Any:
    if isinstance(v, _Table):
        return {k: _thawed(x) for k, x in v}
    if isinstance(v, tuple):
        return [_thawed(x) for x in v]
    return v


def _is_sourced_model(sub: Any) -> bool:
    """A schema node that is a sourced number (Sourced, or a subclass such as a banded one)."""
    return isinstance(sub, type) and issubclass(sub, Sourced)


def _is_sourced(d: Any) -> bool:
    """A ``{value = ..., source = "..."}`` entry (either key marks it: one without the other is
    that entry with a key missing, not a table of fields named value or source)."""
    return isinstance(d, Mapping) and ("value" in d or "source" in d)


def _inner(ann: Any) -> tuple[type | None, str]:
    """The pydantic model a field annotation holds and how: ``model`` (X or X | None), ``list``
    (list[X]), ``dict`` (dict[key, X]); (None, ``value``) for a plain value."""
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann, "model"
    origin, args = get_origin(ann), get_args(ann)
    if origin is list:
        return _inner(args[0])[0], "list"
    if origin is dict:
        return _inner(args[1])[0], "dict"
    for a in args:  # X | None
        m, kind = _inner(a)
        if m is not None:
            return m, kind
    return None, "value"


def _known_keys(data: Mapping[str, Any], model: type = SystemFile, prefix: str = "") -> list[str]:
    """Every dotted key the schema allows here (link levels by their names in ``data``)."""
    out = []
    for name, f in model.model_fields.items():
        sub, kind = _inner(f.annotation)
        key = prefix + name
        if _is_sourced_model(sub) or sub is None:
            out.append(key)
        elif kind == "model":
            out += _known_keys(data.get(name) or {}, sub, key + ".")
        elif kind == "list":
            for lv in data.get(name) or []:
                out += _known_keys(lv, sub, f"{key}.{lv.get('name')}.")
        elif kind == "dict":
            out += [f"{key}.{k}" for k in (data.get(name) or {})] or [key]
    return out


def _unknown_key(key: str, where: str, data: Mapping[str, Any]) -> SpecError:
    close = difflib.get_close_matches(key, _known_keys(data), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return SpecError(f"{where}: {key}", f"unknown system field{hint}",
                     "use a dotted key of the system TOML (docs/catalog.md), e.g. chip.hbm_stacks, "
                     "chip.peak_dense_tflops.fp8, levels.rack.bandwidth_gb_per_s, power.allin_kw_per_chip, "
                     "efficiency.kernel_launch_s")


def _level(levels: list, p: str, key: str, where: str) -> dict:
    for lv in levels:
        if isinstance(lv, Mapping) and lv.get("name") == p:
            return lv
    if p.isdigit() and int(p) < len(levels):
        return levels[int(p)]
    names = ", ".join(str(lv.get("name")) for lv in levels if isinstance(lv, Mapping))
    raise SpecError(f"{where}: {key}", f"no link level named {p!r}",
                    f"use one of {names} (or an index 0-{len(levels) - 1})")


def _apply_one(data: dict, key: str, value: Any, where: str) -> None:
    """Set one dotted ``key`` of the file-form ``data`` in place, walking the schema beside it."""
    parts = key.split(".")
    if parts[0] == "efficiency":  # free-form here; Efficiency.with_overrides validates it
        node = data.setdefault("efficiency", {})
        for p in parts[1:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
        return
    node, model, i = data, SystemFile, 0
    while True:
        p = parts[i]
        if model is None or p not in model.model_fields:
            raise _unknown_key(key, where, data)
        sub, kind = _inner(model.model_fields[p].annotation)
        last = i == len(parts) - 1
        if last or (kind == "dict" and i == len(parts) - 2):
            break
        if kind == "list":
            node, model, i = _level(node.setdefault(p, []), parts[i + 1], key, where), sub, i + 2
            if i >= len(parts):
                raise SpecError(f"{where}: {key}", "names a link level, not one of its fields",
                                f"write e.g. {key}.bandwidth_gb_per_s=<value>")
            continue
        if _is_sourced_model(sub) or kind != "model":
            raise SpecError(f"{where}: {key}", f"{'.'.join(parts[: i + 1])} is a value, not a table",
                            f"write {'.'.join(parts[: i + 1])}=<value>")
        node, model, i = node.setdefault(p, {}), sub, i + 1
    if kind == "dict" and len(parts) == i + 1 and not isinstance(value, Mapping):  # chip.peak_dense_tflops=3400
        keys = sorted(node[p], key=lambda k: (k != "fp8", k)) if isinstance(node.get(p), Mapping) else ["<key>"]
        raise SpecError(f"{where}: {key}", f"{key} is a table (one value per key: {', '.join(keys)}), not a single "
                        "value", f"set one of its keys, e.g. {key}.{keys[0]}=<value>")
    if kind == "dict":  # peak_dense_tflops.fp8: the key inside the table is the schema's to check
        node, p = node.setdefault(p, {}), parts[-1]
    if _is_sourced_model(sub) and not isinstance(value, Mapping):
        old = node.get(p)
        if _is_sourced(old):
            value = {**old, "value": value,
                     "source": f"override {key} = {value!r} ({where}; was {old['value']!r}: {old.get('source', '')})"}
        else:
            value = {"value": value, "source": f"override {key} = {value!r} ({where})", "estimate": True}
    node[p] = copy.deepcopy(value)


def apply_overrides(data: Mapping[str, Any], overrides: Iterable[tuple[str, Any]], where: str = "--set") -> dict:
    """A copy of the parsed system TOML ``data`` with dotted-key ``overrides`` applied.

    Keys follow the file: ``chip.hbm_stacks``, ``chip.peak_dense_tflops.fp8``,
    ``levels.<name or index>.bandwidth_gb_per_s``, ``power.allin_kw_per_chip``,
    ``efficiency.<parameter>`` / ``efficiency.gemm.fp8.peak_fraction``. A bare value on a sourced
    entry replaces its ``value`` and records the override in its ``source``; a ``{value, source}``
    table replaces the entry. A capacity in the other unit (``chip.hbm_capacity_gib`` where the
    base gives ``hbm_capacity_gb``; likewise ``hbm_usable_*``) replaces the base's. The result is not validated here: :func:`system_from_dict` does it
    (``load_variant`` / ``with_overrides`` call it), so every check on a catalog file applies.

    Raises:
        SpecError: an unknown key (with the nearest known one), a link level that does not exist,
            a key that walks into a number, or one capacity given in both units.
    """
    out, overrides = copy.deepcopy(dict(data)), list(overrides)
    for key, value in overrides:
        twin = _UNIT_TWINS.get(key.removeprefix("chip.")) if key.startswith("chip.") else None
        if twin is not None and f"chip.{twin}" in dict(overrides):
            raise SpecError(f"{where}: {key}", f"and chip.{twin} give one capacity twice", "give one of them")
        if twin is not None:  # --set chip.hbm_capacity_gib=X on h200 (which gives _gb): 'give exactly one of'
            out.get("chip", {}).pop(twin, None)
        if key in VARIANT_KEYS:
            raise SpecError(f"{where}: {key}", f"{key} names where a system comes from, not a field",
                            "pass the base as --system (or write base = ... in a TOML file)")
        if key == "efficiency" and not isinstance(value, Mapping):
            raise SpecError(f"{where}: efficiency", "is a table of parameters",
                            "write efficiency.<parameter>=<value>, e.g. efficiency.kernel_launch_s=2.5e-7")
        _apply_one(out, key, _thawed(value), where)
    return out


def split_overrides(overrides: Iterable[tuple[str, Any]]) -> tuple[Overrides, Overrides]:
    """(hardware overrides, efficiency overrides with the ``efficiency.`` prefix removed)."""
    hw, eff = [], []
    for k, v in overrides:
        if k.startswith("efficiency."):
            eff.append((k[len("efficiency."):], v))
        else:
            hw.append((k, v))
    return tuple(hw), tuple(eff)


# ---- files with a base ------------------------------------------------------------------------

def _leaf_overrides(d: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """A variant file's keys as dotted leaf overrides (a ``{value, source}`` table is one leaf)."""
    out = []
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and not _is_sourced(v) and k != "efficiency":
            out.extend(_leaf_overrides(v, key + "."))
        else:
            out.append((key, v))
    return out


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
        raise SpecError(f"{path.name}: base", "the base chain loops back to this file",
                        "point base at a catalog system or a file that does not name this one")
    if not isinstance(data, dict):
        raise SpecError(path.name, "not a TOML table", "pass a system TOML file")
    if shipped:
        for k in VARIANT_KEYS:
            data.pop(k, None)
        eff = tuple(flatten_params(data.pop("efficiency", {}) or {}).items())
        return data, SystemOrigin(calibration=path.stem, efficiency=eff, where=path.name, root=path.stem)
    base = data.pop("base", None)
    calibration = data.pop("calibration", None)
    if calibration is not None and (not isinstance(calibration, str) or
                                    (calibration != SPEC and calibration not in list_systems())):
        raise SpecError(f"{path.name}: calibration", f"unknown calibration {calibration!r}",
                        f"name a catalog system whose calibration to use ({', '.join(list_systems())}) or \"spec\"")
    own_eff = data.pop("efficiency", {}) or {}
    if not isinstance(own_eff, Mapping):
        raise SpecError(f"{path.name}: efficiency", "must be a table",
                        "write it as [efficiency] with key = value lines")
    # a quoted dotted key ("efficiency.gemm.fp8_block.k_block_s" = ...) is the same override as the
    # [efficiency] table's entry; it was merged into the hardware dict and dropped with it
    quoted = tuple((k[len("efficiency."):], data.pop(k)) for k in [k for k in data if k.startswith("efficiency.")])
    own = tuple(flatten_params(own_eff).items()) + quoted
    if base is None:
        cal = None if calibration in (None, SPEC) else calibration
        return data, SystemOrigin(calibration=cal, efficiency=own, where=path.name,
                                  explicit=calibration is not None or bool(own), root=str(path))
    if not isinstance(base, str) or not base:
        raise SpecError(f"{path.name}: base", f"must be a system name or path, got {base!r}",
                        'write base = "jalapeno" (a catalog name) or a TOML path')
    base_ref = base_reference(path, base)
    try:
        bdata, borigin = resolve_system_data(base_ref, _chain + (key,))
    except UnknownNameError as e:  # was 'system: unknown system ...', not naming the file or its key
        if e.field != "system":
            raise
        raise UnknownNameError(f"{path.name}: base", e.problem, e.fix) from None
    leaves = _leaf_overrides(data)
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
    return merged, SystemOrigin(calibration=cal, efficiency=eff, base=base, where=path.name, explicit=True,
                                overrides=borigin.overrides + tuple((k, v) for k, v in leaves
                                                                    if k not in ("name", "description")),
                                root=borigin.root)


def _suffix(overrides: Overrides) -> str:
    """``+key=value,...`` for a variant's name, each value as it was written (an inline table as
    ``{value=2, source=...}``, not the tuple it is kept as).

    >>> _suffix(parse_sets(["chip.hbm_stacks=8", 'power.allin_kw_per_chip={value=2, source="my rack"}']))
    '+chip.hbm_stacks=8,power.allin_kw_per_chip={value=2, source=my rack}'
    """
    def shown(v: Any) -> str:
        v = _thawed(v)
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k}={shown(x)}" for k, x in v.items()) + "}"
        if isinstance(v, list):
            return "[" + ", ".join(shown(x) for x in v) + "]"
        return str(v)
    return "+" + ",".join(f"{k}={shown(v)}" for k, v in overrides)


def build_variant(data: Mapping[str, Any], origin: SystemOrigin, overrides: Iterable[tuple[str, Any]] = (),
                  where: str = "--set", rename: bool = True) -> System:
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


def _as_written(e: SpecError, hw: Overrides) -> SpecError:
    """A bare override value named as written (``chip.hbm_stacks``), not as the schema's entry
    ``chip.hbm_stacks.value``: a variant file's fix read ``e.g. chip.hbm_stacks.value = 8``,
    which then failed on a missing source, and a design space's key was not matched."""
    head, sep, loc = e.field.rpartition(": ")
    key = loc.removesuffix(".value")
    if not any(k == key and not isinstance(_thawed(v), Mapping) for k, v in hw):
        return e
    return type(e)(f"{head}{sep}{key}", e.problem, e.fix.replace(f"{key}.value", key))


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


def value_types(overrides: Overrides) -> tuple:
    """The type of every override value, nested (a cache-key companion to ``overrides``).

    ``True == 1 == 1.0`` in Python, so a cache keyed on the overrides alone hands the result of
    ``--set k=true`` to a later ``--set k=1`` (which a boolean field must refuse) in the same
    process; keying on these types as well keeps them apart.

    >>> value_types((("a", True), ("b", 1), ("c", (1.0, "x"))))
    ('bool', 'int', ('float', 'str'))
    """
    def one(v: Any) -> Any:
        return tuple(one(x) for x in v) if isinstance(v, tuple) else type(v).__name__
    return tuple(one(v) for _, v in overrides)


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


def with_overrides(system: System, overrides: Sequence[tuple[str, Any]], which: str = "calibrated",
                   where: str = "--set", rename: bool = True) -> tuple[System, Efficiency]:
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
            raise SpecError(f"{where}: {hw[0][0]}", f"{system.name} was built in code, not read from a file",
                            "load it with load_system(name or path) to override hardware fields")
        origin = (origin or SystemOrigin()).extended(eff, overrides)
        return replace(system, origin=origin), _efficiency_from(origin, which)
    new = build_variant(origin.data, origin, overrides, where, rename)
    object.__setattr__(new, "path", system.path)
    return new, variant_efficiency(new, which)


def efficiency_note(system: System) -> str | None:
    """A one-line note for a user file with neither a base nor its own efficiency set, saying
    which set it is priced with; None otherwise."""
    o = system.origin
    if o is None or o.calibration is not None or o.explicit:
        return None
    return (f"{o.where or system.name} has no base and no [efficiency]: priced with the documented default "
            "efficiencies (set 'spec', no calibration); add base = \"<catalog system>\" to inherit a "
            "calibrated set, or calibration = \"<catalog system>\" to borrow one")
