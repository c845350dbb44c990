"""A system TOML file → the SI dataclasses of specs/hardware.py (:class:`~jalapeno.specs.hardware.System`).

File (validated with pydantic, ``extra="forbid"``: the schema is specs/system_file.py) → frozen dataclasses in
SI units; file keys carry their unit (``hbm_bandwidth_tb_per_s``) and are converted once, here. A schema error is
one SpecError naming the key as the file names it (:func:`_pydantic_to_spec_error`, also used by specs/die.py).
Split from specs/hardware.py (round 50, module budget); every name here stays importable from there
(hardware.LOADER_NAMES). Schema reference: ``docs/catalog.md``.
"""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from types import MappingProxyType

from pydantic import BaseModel, ValidationError

from jalapeno import units
from jalapeno.errors import SpecError
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY, Efficiency
from jalapeno.specs.field_checks import FILE_BUILD
from jalapeno.specs.files import parse_toml, read_user_text, toml_syntax_fix
from jalapeno.specs.hardware import Chip, HostLink, LinkLevel, System
from jalapeno.specs.kv_tiers import parse_kv_tiers
from jalapeno.specs.sourced import Sourced, SourcedCapability, SourcedNames
from jalapeno.specs.plausibility import check_plausible, check_range
from jalapeno.specs.schema_errors import describe
from jalapeno.specs.system_file import COUNT_KEYS, DieFile, SystemFile


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
        item = (
            node[x]
            if isinstance(x, int) and isinstance(node, list) and x < len(node)
            else (node.get(x) if isinstance(node, dict) else None)
        )
        name = item.get("name") if isinstance(x, int) and isinstance(item, dict) else None
        parts.append(name if isinstance(name, str) and name else str(x))
        node = item
    return ".".join(parts)


def _table_keys(model: type[BaseModel], loc: tuple) -> list[str]:
    """The keys the schema ``model`` allows in the table at ``loc`` (a pydantic error's loc without its last
    key: list indices and a keyed table's keys skipped), or [] where ``loc`` leaves the schema's tables.

    >>> _table_keys(SystemFile, ("levels", 0))[:3], "sram_mib" in _table_keys(SystemFile, ("chip",))
    (['name', 'chips', 'scope'], True)
    """
    from jalapeno.specs.system_overrides import VARIANT_KEYS, _inner

    if model is SystemFile and not loc:  # a file's own top-level keys, read before the schema (specs/variants.py)
        return [*SystemFile.model_fields, *VARIANT_KEYS]
    node, keyed = model, False
    for x in loc:
        if isinstance(x, int) or keyed:  # a [[list]] entry, or the key of a dict[str, table]
            keyed = False
            continue
        field = node.model_fields.get(x) if isinstance(x, str) else None
        sub, kind = _inner(field.annotation) if field is not None else (None, "value")
        if sub is None:
            return []
        node, keyed = sub, kind == "dict"
    return list(node.model_fields)


def _pydantic_to_spec_error(
    err: ValidationError, where: str, data=None, model: type[BaseModel] = SystemFile
) -> SpecError:
    """The first schema error, the key named as the file names it, in the project's words
    (specs/schema_errors.describe: never pydantic's ``Input should be`` / ``Field required``); ``model`` is the
    schema ``data`` was checked against (an unknown key's near spelling is looked up in it)."""
    errs = err.errors()
    # a misspelt key is both unknown and (its right spelling) missing: name the one the user wrote
    e = next((x for x in errs if x["type"] == "extra_forbidden"), errs[0])
    if e["loc"] and e["loc"][-1] == "[key]":  # a key of a keyed table (peak_dense_tflops.fp3)
        e = {**e, "loc": e["loc"][:-1]}
        key = _named_loc(e["loc"], data)
        expected = (e.get("ctx") or {}).get("expected", "?")
        return SpecError(
            f"{where}: {key}",
            f"{e['loc'][-1]!r} is not a key of this table",
            f"rename it to one of {expected} ({key.rpartition('.')[0]}.<key>)",
        )
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
        fix = (
            f'give both: --set \'{fp4}={{formats = ["mxfp4", "nvfp4"], source = "<where it comes from>"}}\' '
            "(the FP4 block formats the FP4 tensor cores consume)"
        )  # =nvfp4 was told the file's [table] form
    elif option and e["type"] == "missing" and loc.endswith((".value", ".source")):  # a {value, source} table
        fix = (
            f'give both: --set {(entry := loc.rpartition(".")[0])}={{value = <number>, source = "<where it comes '
            f'from>"}}, or the bare number: --set {entry}=<number>'
        )
    if count and e["type"] == "value_error":  # a fraction for a count: the number fix, as for a word
        fix = (
            f"write a whole number, e.g. --set {loc.removesuffix('.value')}=8"
            if option
            else f"write a whole number, e.g. {loc}.value = 8"
        )
    if e["type"] == "extra_forbidden":
        missing = [str(x["loc"][-1]) for x in errs if x["type"] == "missing" and x["loc"][:-1] == e["loc"][:-1]]
        near = difflib.get_close_matches(str(e["loc"][-1]), missing, n=1)
        optional = difflib.get_close_matches(str(e["loc"][-1]), _table_keys(model, e["loc"][:-1]), n=1)
        wrapped = isinstance(e.get("input"), dict) and set(e["input"]) & set(_table_keys(model, e["loc"][:-1]))
        if near:
            fix = f"write {near[0]} (a required key, missing), not {e['loc'][-1]}"
        elif optional:  # sram_mb for sram_mib, bse for base: was only 'remove it or correct its spelling' (break55)
            fix = f"write {optional[0]} (a key of this table), not {e['loc'][-1]}"
        elif wrapped:  # [system] base = ...: a table holding this one's own keys (break55)
            fix = f"remove the [{_named_loc(e['loc'], data)}] header line: the keys under it belong one level up"
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
            peak_flop_per_s=MappingProxyType({k: v.value * units.TFLOPS for k, v in c.peak_dense_tflops.items()}),
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
                    raise SpecError(
                        f"{where}: levels.{i}.torus_dims",
                        f"{lv.torus_dims} hold {n} chips but the level has {lv.chips}",
                        "make the product equal chips",
                    )
            levels.append(
                LinkLevel(
                    name=lv.name,
                    chips=lv.chips,
                    bandwidth_bytes_per_s=lv.bandwidth_gb_per_s.value * units.GB,
                    latency_s=lv.latency_us.value * units.US,
                    topology=lv.topology,
                    scope=lv.scope,
                    in_network_reduction=lv.in_network_reduction,
                    links_per_chip=lv.links_per_chip,
                    torus_dims=tuple(lv.torus_dims) if lv.torus_dims else None,
                    shares_ports_with_inner=lv.shares_ports_with_inner,
                )
            )
        sources: dict[str, str] = {}
        _collect_sources(f, "", sources)
        tiers, absent = parse_kv_tiers(f.kv_tiers)
        if f.efficiency:
            efficiency_overrides(data, where)  # validates the table; the set itself is not kept
        system = System(
            name=f.name,
            description=f.description,
            chip=chip,
            levels=tuple(levels),
            allin_power_w_per_chip=f.power.allin_kw_per_chip.value * units.KW,
            usd_per_chip_hour=f.cost.usd_per_chip_hour.value,
            vendor_verified=f.vendor_verified,
            sources=MappingProxyType(sources),
            host=HostLink(
                f.host.location,
                f.host.bandwidth_gb_per_s.value * units.GB,
                f.host.latency_us.value * units.US,
                f.host.note,
            )
            if f.host
            else None,
            kv_tiers=tiers,
            kv_tiers_absent=absent,
        )
    finally:
        FILE_BUILD.reset(token)
    check_plausible(system, where)  # a unit slip is an error (specs/plausibility.py)
    if usable > cap * 1.0001:  # after the ranges: 0.001 GiB is a unit slip; the keys as the file has them
        uk, ck = (
            f"chip.{k}_{'gb' if getattr(c, k + '_gb') is not None else 'gib'}" for k in ("hbm_usable", "hbm_capacity")
        )
        raise SpecError(
            f"{where}: {uk}",
            f"usable {usable / units.GiB:.4g} GiB exceeds {ck}, {cap / units.GiB:.4g} GiB",
            f"make {uk} <= {ck} (a variant that lowers the capacity sets {uk} too)",
        )
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
    text = read_user_text(
        path, "a system TOML file", "pass a system name from `jalapeno hardware list` or the path of a TOML file"
    )
    try:
        data = parse_toml(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(str(path), f"malformed TOML: {e}", toml_syntax_fix(text, path)) from None
    if not data:  # an empty file was refused as 'name: Field required'
        raise SpecError(
            str(path),
            "the file holds no keys (empty, or comments only)",
            'write a system (schema in docs/catalog.md) or a variant: base = "h200" and the keys it changes',
        )
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
