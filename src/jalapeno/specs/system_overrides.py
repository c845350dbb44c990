"""Dotted-key overrides of a system's file form: ``--set chip.hbm_stacks=8`` and a variant file's keys.

A key follows the system TOML (``chip.hbm_stacks``, ``chip.peak_dense_tflops.fp8``,
``levels.<name or index>.bandwidth_gb_per_s``, ``power.allin_kw_per_chip``, ``efficiency.<parameter>``);
a value is read as TOML. :func:`parse_sets` reads ``KEY=VALUE`` strings into (key, value) pairs,
:func:`apply_overrides` applies them to the parsed TOML dict, walking the schema
(specs/system_file.SystemFile) beside it so that an unknown key is named with the nearest known one, and
:func:`split_overrides` separates the ``efficiency.*`` ones. Nothing is validated here beyond the keys:
the system built from the result passes the ordinary schema validation (specs/variants.py builds it).
"""

from __future__ import annotations

import copy
import difflib
import re
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from jalapeno.errors import SpecError
from jalapeno.specs.files import parse_toml
from jalapeno.specs.sourced import Sourced
from jalapeno.specs.system_file import ChipFile, SystemFile

#: Top-level keys of a variant file that are not system fields.
VARIANT_KEYS = ("base", "calibration")
Overrides = tuple[tuple[str, Any], ...]
#: chip fields that give one quantity in GB or GiB: an override in one unit replaces the base's other
_UNIT_TWINS = {"hbm_capacity_gb": "hbm_capacity_gib", "hbm_usable_gb": "hbm_usable_gib"}
_UNIT_TWINS.update({v: k for k, v in _UNIT_TWINS.items()})


def parse_sets(items: Iterable[str], option: str = "--set") -> Overrides:
    """Parse ``KEY=VALUE`` strings (``--set chip.hbm_stacks=8``) into (dotted key, value) pairs.

    VALUE is read as a TOML value (``8``, ``0.25e-6``, ``"text"``, ``true``); anything that is not
    TOML is kept as text. An inline table is read as a variant file reads one: its keys are the
    dotted keys under KEY (``chip={hbm_stacks=8}`` is ``chip.hbm_stacks=8``), except a sourced
    number ``{value = ..., source = "..."}``, which replaces that entry whole.

    Raises:
        SpecError: an item without ``=`` or with an empty key; a key given twice; an empty inline
            table (it sets nothing); a ``name`` with a comma (it separates system names: ``--systems a,b`` is two).

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
            raise SpecError(
                option,
                f"{item!r} is not KEY=VALUE",
                f"write e.g. {option} chip.hbm_stacks=8 (dotted keys as in the system TOML)",
            )
        try:
            value = parse_toml(f"v = {text.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            value = text.strip()
        # an inline table merges its keys, as in a variant file (it replaced the whole table:
        # chip={hbm_stacks=8} reported chip.name missing, chip.peak_dense_tflops={fp8=5} set
        # chip.peak_dense_tflops.peak_dense_tflops.fp8, efficiency={...} was called not a table)
        for leaf, v in _set_leaves(key, value, option):
            if any(k == leaf for k, _ in out):  # the last one won, silently, and the label named both
                raise SpecError(f"{option} {leaf}", "given twice", f"give {leaf} once, with the value you mean")
            if leaf == "name" and "," in str(v):  # a,b read as two systems wherever names are listed (break53)
                raise SpecError(
                    f"{option} name",
                    f"{v!r} holds a comma, which separates system names (--systems a,b is two systems, and compare lists names so)",
                    f"give a name without commas, e.g. {option} name={str(v).replace(',', '-')}",
                )
            out.append((leaf, _frozen(v)))
    return tuple(out)


def check_pairs(where: str, overrides: Any) -> Overrides:
    """``overrides`` as a tuple of (dotted key, value) pairs, read once (a generator is not read twice).

    Args:
        where: the field named in the error (``load_system: overrides``).
        overrides: an iterable of (str, value) pairs; None or () for none.

    Raises:
        SpecError: a string (``"chip.hbm_stacks=8"``: --set's text, not a pair), a mapping, something not
            iterable, or an item that is not a (str, value) pair; the fix names :func:`parse_sets`. A list or
            table value is read as :func:`parse_sets` reads one (a table's keys as dotted leaves; hashable).

    >>> check_pairs("overrides", [("chip.hbm_stacks", 8)])
    (('chip.hbm_stacks', 8),)
    >>> check_pairs("overrides", "chip.hbm_stacks=8")
    Traceback (most recent call last):
    ...
    jalapeno.errors.SpecError: overrides: must be (key, value) pairs, got 'chip.hbm_stacks=8'. Fix: pass e.g. (("chip.hbm_stacks", 4),), or specs/system_overrides.parse_sets(["chip.hbm_stacks=4"])
    """
    try:  # a mapping iterates its keys: {"chip.hbm_stacks": 8} read as the pair ('c', 'h', ...)
        pairs = None if isinstance(overrides, (str, bytes, Mapping)) else () if overrides is None else tuple(overrides)
    except TypeError:  # not iterable (4)
        pairs = None
    if pairs is None or any(
        not (isinstance(o, (tuple, list)) and len(o) == 2 and isinstance(o[0], str)) for o in pairs
    ):
        raise SpecError(
            where,
            f"must be (key, value) pairs, got {overrides!r:.60}",
            'pass e.g. (("chip.hbm_stacks", 4),), or specs/system_overrides.parse_sets(["chip.hbm_stacks=4"])',
        )
    # list and table values read as parse_sets reads them (a table's keys as dotted leaves, values hashable):
    # (("levels.global.torus_dims", [8, 16, 16]),) raised TypeError: unhashable type: 'list' from the loaders'
    # caches (break52)
    return tuple((leaf, _frozen(x)) for k, v in pairs for leaf, x in _set_leaves(k, v, where))


def _set_leaves(key: str, value: Any, option: str) -> list[tuple[str, Any]]:
    """``(dotted key, value)`` leaves of one ``--set`` value: an inline table's keys under ``key``
    (nested tables too), a sourced ``{value = ...}`` table or any other value as itself."""
    if not isinstance(value, dict) or (_is_sourced(value) and not key.startswith("efficiency")):
        return [(key, value)]
    if not value:
        raise SpecError(
            f"{option}: {key}",
            "an empty inline table sets nothing",
            f"give the keys to change, e.g. {option} {key}.<field>=<value> (or {key}={{<field> = <value>}})",
        )
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


#: a second suggestion is shown when its difflib ratio is within this of the first: 'chip.hbm_gib' is as near
#: 'chip.hbm_capacity_gib' (0.727) as 'chip.hbm_usable_gib' (0.774), while 'chip.hbm_stack' is 'chip.hbm_stacks'
#: (0.966) and not 'chip.hbm_usable_gb' (0.688); a named assumption, set on those examples (followup51)
SECOND_SUGGESTION_RATIO_GAP = 0.05

#: 'chip.fp8_tflops', 'chip.peak_fp8_tflops', 'chip.fp8_dense_tflops': the format's row of the peak table
_TFLOPS_ALIAS = re.compile(r"chip\.(?:peak_)?(?:dense_)?([a-z0-9]+?)_(?:dense_)?(?:peak_)?tflops")


def _close_keys(key: str, known: list[str]) -> list[str]:
    """Up to two known keys ``key`` may mean: a known alias first (``chip.<fmt>_tflops`` is
    ``chip.peak_dense_tflops.<fmt>`` for the formats SystemFile's peak table takes), else the one or two keys that
    ``key`` begins, else difflib's closest and its second where as close (:data:`SECOND_SUGGESTION_RATIO_GAP`).

    >>> _close_keys("chip.hbm_gib", ["chip.hbm_usable_gib", "chip.hbm_capacity_gib", "chip.sram_mib"])
    ['chip.hbm_usable_gib', 'chip.hbm_capacity_gib']
    >>> _close_keys("chip.fp8_tflops", ["chip.fp32_vector_tflops", "chip.peak_dense_tflops"])
    ['chip.peak_dense_tflops.fp8']
    >>> _close_keys("chip.hbm_stack", ["chip.hbm_stacks", "chip.hbm_usable_gb"])
    ['chip.hbm_stacks']
    >>> _close_keys("chip.peak", ["chip.name", "chip.tdp_w", "chip.peak_dense_tflops"])
    ['chip.peak_dense_tflops']
    """
    m = _TFLOPS_ALIAS.fullmatch(key)
    formats = get_args(get_args(ChipFile.model_fields["peak_dense_tflops"].annotation)[0])
    if m and m.group(1) in formats:
        return [f"chip.peak_dense_tflops.{m.group(1)}"]
    longer = [c for c in known if c.startswith(key)]  # cut short: 'chip.peak' is 'chip.peak_dense_tflops'
    if 0 < len(longer) <= 2:
        return longer
    close = difflib.get_close_matches(key, known, n=2)
    ratio = [difflib.SequenceMatcher(None, key, c).ratio() for c in close]
    return close[:1] + [c for c, r in zip(close[1:], ratio[1:]) if r >= ratio[0] - SECOND_SUGGESTION_RATIO_GAP]


#: the engine limits the serving commands take as options, each with the names engines give it (vLLM max_num_seqs,
#: max_num_batched_tokens, gpu_memory_utilization; SGLang max_running_requests, mem_fraction_static; TRT-LLM
#: max_batch_size, max_num_tokens): ``--set engine.max_running=64`` names the option (break54)
_ENGINE_OPTIONS = {
    "--max-running": ("max_running", "max_num_seqs", "max_running_requests", "max_batch_size"),
    "--max-tokens-per-step": ("max_tokens_per_step", "max_num_batched_tokens", "max_num_tokens"),
    "--cuda-graph-max-batch": ("cuda_graph_max_batch", "cuda_graph_max_bs"),
    "--memory-fraction": ("memory_fraction", "gpu_memory_utilization", "mem_fraction_static"),
}


def _unknown_key(key: str, where: str, data: Mapping[str, Any]) -> SpecError:
    head, colon, rest = key.partition(":")
    if colon and where == "--set" and rest.split(".")[0] in SystemFile.model_fields:  # was 'unknown system field'
        return SpecError(
            f"{where}: {key}",
            f"{head + ':'!r} picks one of several systems (compare and report "
            "take --set NAME:KEY=VALUE); this command prices one system",
            f"drop {head + ':'!r}: --set {rest}=...",
        )
    if key.split(".")[0] in ("engine", "engines") and "." in key:  # an engine limit is an option, not a system field
        leaf = key.split(".")[-1].replace("-", "_")
        option = next((o for o, names in _ENGINE_OPTIONS.items() if leaf in names), None)
        return SpecError(
            f"{where}: {key}",
            "is not a system field: an engine's settings are the commands' options, not the system file's",
            f"give {option} VALUE"
            if option
            else "give --engine RECIPE (data/engines.toml) or one of its options: " + ", ".join(_ENGINE_OPTIONS),
        )
    known = _known_keys(data)
    close = _close_keys(key, known)
    hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
    table = key.split(".")[0] + "."
    own = [k.removeprefix(table) for k in known if k.startswith(table)]
    if "." in key and own and not any(c.startswith(table) for c in close):
        # 'cost.nosuch' was asked 'did you mean host.note?': another table's key is not what a key of this one means
        more = f" and {len(own) - 6} more" if len(own) > 6 else ""
        hint = f" ([{table[:-1]}] has {', '.join(own[:6])}{more})"
    return SpecError(
        f"{where}: {key}",
        f"unknown system field{hint}",
        "use a dotted key of the system TOML (docs/catalog.md), e.g. chip.hbm_stacks, "
        "chip.peak_dense_tflops.fp8, levels.rack.bandwidth_gb_per_s, power.allin_kw_per_chip, "
        "efficiency.kernel_launch_s",
    )


def _level(levels: list, p: str, key: str, where: str) -> dict:
    for lv in levels:
        if isinstance(lv, Mapping) and lv.get("name") == p:
            return lv
    if p.isdigit() and int(p) < len(levels):
        return levels[int(p)]
    names = ", ".join(str(lv.get("name")) for lv in levels if isinstance(lv, Mapping))
    raise SpecError(
        f"{where}: {key}", f"no link level named {p!r}", f"use one of {names} (or an index 0-{len(levels) - 1})"
    )


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
        if kind == "list" and sub is None:  # kv_tiers.none.0=host was read as a link level: 'no link level named
            # '0'. Fix: use one of  (or an index 0--1)', naming no level (break52)
            k = ".".join(parts[: i + 1])
            raise SpecError(
                f"{where}: {key}",
                f"{k} is a list of values: its items are not set one by one",
                f"write the whole list, e.g. {k}=[...] (as in the system TOML)",
            )
        if kind == "list":
            node, model, i = _level(node.setdefault(p, []), parts[i + 1], key, where), sub, i + 2
            if i >= len(parts):
                raise SpecError(
                    f"{where}: {key}",
                    "names a link level, not one of its fields",
                    f"write e.g. {key}.bandwidth_gb_per_s=<value>",
                )
            continue
        if _is_sourced_model(sub) or kind != "model":
            k = ".".join(parts[: i + 1])  # chip.sram_mib.source=...: the sourced entry is set whole
            raise SpecError(
                f"{where}: {key}",
                f"{k} is a value, not a table",
                f"write {k}=<value>"
                + (
                    f" (its source then records the override), or {k}={{value = <number>, "
                    f'source = "<where it comes from>"}}'
                    if _is_sourced_model(sub)
                    else ""
                ),
            )
        node, model, i = node.setdefault(p, {}), sub, i + 1
    if kind == "dict" and len(parts) == i + 1 and not isinstance(value, Mapping):  # chip.peak_dense_tflops=3400
        keys = sorted(node[p], key=lambda k: (k != "fp8", k)) if isinstance(node.get(p), Mapping) else ["<key>"]
        raise SpecError(
            f"{where}: {key}",
            f"{key} is a table (one value per key: {', '.join(keys)}), not a single value",
            f"set one of its keys, e.g. {key}.{keys[0]}=<value>",
        )
    if kind == "dict":  # peak_dense_tflops.fp8: the key inside the table is the schema's to check
        node, p = node.setdefault(p, {}), parts[-1]
    if _is_sourced_model(sub) and not isinstance(value, Mapping):
        old = node.get(p)
        if _is_sourced(old):
            value = {
                **old,
                "value": value,
                "source": f"override {key} = {value!r} ({where}; was {old['value']!r}: {old.get('source', '')})",
            }
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
    base gives ``hbm_capacity_gb``; likewise ``hbm_usable_*``) replaces the base's. The result is not validated here:
    specs/system_load.system_from_dict does it
    (specs/variants.load_variant / with_overrides call it), so every check on a catalog file applies.

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
            raise SpecError(
                f"{where}: {key}",
                f"{key} names where a system comes from, not a field",
                "pass the base as --system (or write base = ... in a TOML file)",
            )
        if key == "efficiency" and not isinstance(value, Mapping):
            raise SpecError(
                f"{where}: efficiency",
                "is a table of parameters",
                "write efficiency.<parameter>=<value>, e.g. efficiency.kernel_launch_s=2.5e-7",
            )
        _apply_one(out, key, _thawed(value), where)
    return out


def split_overrides(overrides: Iterable[tuple[str, Any]]) -> tuple[Overrides, Overrides]:
    """(hardware overrides, efficiency overrides with the ``efficiency.`` prefix removed)."""
    hw, eff = [], []
    for k, v in overrides:
        if k.startswith("efficiency."):
            eff.append((k[len("efficiency.") :], v))
        else:
            hw.append((k, v))
    return tuple(hw), tuple(eff)


def _suffix(overrides: Overrides) -> str:
    """``+key=value,...`` for a variant's name, each value as it was written (an inline table as
    ``{value=2, source=...}``, not the tuple it is kept as).

    >>> _suffix(parse_sets(["chip.hbm_stacks=8", 'power.allin_kw_per_chip={value=2, source="my rack"}']))
    '+chip.hbm_stacks=8,power.allin_kw_per_chip={value=2, source=my rack}'
    >>> _suffix(parse_sets(["vendor_verified=false"]))
    '+vendor_verified=false'
    """

    return "+" + ",".join(f"{k}={set_value_text(v)}" for k, v in overrides)


def set_value_text(v: Any) -> str:
    """A ``--set`` value as typed: ``false`` (not Python's ``False``), tables and lists in TOML-like brackets; the
    variant name's suffix and specs/catalog.hardware_show_command's ``--set KEY=VALUE`` (ux54).

    >>> set_value_text(False), set_value_text(1000), set_value_text(2.5e-07)
    ('false', '1000', '2.5e-07')
    """
    v = _thawed(v)
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}={set_value_text(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(set_value_text(x) for x in v) + "]"
    return str(v).lower() if isinstance(v, bool) else str(v)  # vendor_verified=false, as typed (was False)


def _as_written(e: SpecError, hw: Overrides) -> SpecError:
    """A bare override value named as written (``chip.hbm_stacks``), not as the schema's entry
    ``chip.hbm_stacks.value``: a variant file's fix read ``e.g. chip.hbm_stacks.value = 8``,
    which then failed on a missing source, and a design space's key was not matched."""
    head, sep, loc = e.field.rpartition(": ")
    key = loc.removesuffix(".value")
    if not any(k == key and not isinstance(_thawed(v), Mapping) for k, v in hw):
        return e
    return type(e)(f"{head}{sep}{key}", e.problem, e.fix.replace(f"{key}.value", key))


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
