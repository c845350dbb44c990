"""The shipped catalog (systems and models) and lookup by name or path.

A name is resolved against the package data; anything that looks like a path (contains a path
separator or ends in ``.toml``/``.json``) is read from disk, so a user adds a system or model by
writing one file and passing its path wherever a name is accepted.
"""

from __future__ import annotations

import difflib
import os
import shlex
from functools import lru_cache
from importlib import resources
from pathlib import Path

from jalapeno.errors import UnknownNameError
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.files import TOML_EXAMPLE, chain_stamp, file_stamp
from jalapeno.specs.hardware import System
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.model_file import load_model_file

_DATA = resources.files("jalapeno") / "data"


def _names(sub: str, ext: str) -> list[str]:
    return sorted(p.name[: -len(ext)] for p in (_DATA / sub).iterdir() if p.name.endswith(ext))


def list_systems() -> list[str]:
    """Names of the shipped systems."""
    return _names("systems", ".toml")


def list_models() -> list[str]:
    """Names of the shipped models."""
    return _names("models", ".json")


def name_text(x) -> str:
    """A catalog name or file path as text: a ``str`` as given, a ``pathlib.Path`` (any ``os.PathLike``) as its
    path; the loaders take either (``load_model(Path("config.json"))`` was refused as "expected a name or a path,
    got PosixPath", and ``load_system(["h200"])`` raised TypeError: unhashable type, in their caches; break55).

    >>> name_text("h200"), name_text(Path("my/chip.toml"))
    ('h200', 'my/chip.toml')

    Raises:
        UnknownNameError: anything else (a list, a number, None, bytes), naming its type.
    """
    if isinstance(x, os.PathLike):
        x = os.fspath(x)
    if isinstance(x, str):
        return x
    raise UnknownNameError(
        "name",
        f"expected a name or a path (a str or a pathlib.Path), got {type(x).__name__}",
        "pass one catalog name (`jalapeno hardware list`, `jalapeno models list`) or one file path",
    )


def _looks_like_path(s: str, ext: str) -> bool:
    s = name_text(s)
    return "/" in s or "\\" in s or s.lower().endswith(ext)  # MY.TOML too (agentic:A.TOML and X.CSV were read)


def _is_file(name: str) -> bool:
    """``Path(name).is_file()``, False where the OS refuses the name itself: a 5,000-character model name
    raised 'File name too long', which the CLI reported as a failure to write its output."""
    try:
        return Path(name).is_file()
    except OSError:
        return False


def _is_dir(name: str) -> bool:
    """``Path(name).is_dir()``, False where the OS refuses the name itself (as :func:`_is_file`)."""
    try:
        return Path(name).is_dir()
    except OSError:
        return False


def _unknown(kind: str, name: str, known: list[str], cmd: str) -> UnknownNameError:
    ext, what = {"system": (".toml", "a system TOML"), "model": (".json", "a config.json")}[kind]
    if kind == "system" and name and _is_file(name) and Path(name).suffix.lower() in (".yaml", ".yml"):
        # was "pass it as ./my.yaml (read as a system TOML)", which then failed as malformed TOML (newuser51)
        return UnknownNameError(
            kind,
            f"{name!r} is a YAML file, and a system is read from a TOML file (no YAML reader)",
            f"write it as TOML, e.g. {TOML_EXAMPLE}, and pass that .toml",
        )
    if name and _is_file(name):  # ``hardware show my.cfg``: a file, read as a name for its suffix
        return UnknownNameError(
            kind,
            f"{name!r} is a file but not a catalog {kind}, and a file is read as "
            f"{what} only when its path ends in {ext} or holds a folder",
            f"pass it as ./{name} (read as {what}), or rename it to end in {ext}",
        )
    if name and _is_dir(name):  # ``-m Llama-3.3-70B`` (a model's folder, here) was 'unknown model', as any typo
        inner = Path(name) / "config.json"
        meant = f"./{inner}" if kind == "model" and inner.is_file() else f"the path of {what} in it"
        return UnknownNameError(
            kind,
            f"{name!r} is a folder here, not a catalog {kind} (a {kind} file is read from its path)",
            f"pass {meant}",
        )
    parts = [p.strip() for p in name.split(",") if p.strip()]
    if len(parts) > 1:  # ``frontier -s h200,h100`` was 'unknown system ... (did you mean 'h200'?)'
        several = "; `jalapeno compare --systems A,B` compares several" if kind == "system" else ""
        return UnknownNameError(
            kind,
            f"unknown {kind} {name!r}: a comma-separated list where one {kind} is taken",
            f"give one {kind}, e.g. {parts[0]}{several}",
        )
    other, other_cmd, others = (
        ("model", "models", list_models()) if kind == "system" else ("system", "hardware", list_systems())
    )
    if name in others:  # `-s llama-3.3-70b -m h200`: was 'unknown model 'h200'' with the model list only (break50)
        return UnknownNameError(
            kind,
            f"{name!r} is a catalog {other}, not a {kind}",
            f"give a {kind} here (one of {', '.join(known)}) and {name} where a {other} goes "
            f"(`jalapeno {other_cmd} show {name}`)",
        )
    hint = _did_you_mean(name, known)
    return UnknownNameError(
        kind, f"unknown {kind} {name!r}{hint}", f"use one of {', '.join(known)} (`jalapeno {cmd} list`) or a file path"
    )


def _did_you_mean(name: str, known: list[str]) -> str:
    """' (did you mean ...?)' for an unknown catalog name, or ''.

    Case is ignored (``GB300`` read as ``b300`` by spelling distance). In order, the first rule with a
    match wins: the same name in another case; a family name the catalog name starts (``gb300``,
    ``kimi-k2``, ``qwen3``: ``-`` or ``.`` follows); a catalog name with a suffix added (``h200-sxm``,
    ``deepseek-r1-0528``); one dash-separated part of a catalog name (``rubin``, ``r1``, ``nvl72``);
    else the nearest spelling (difflib). Several matches of one rule are all offered.

    >>> _did_you_mean("GB300", ["b300", "gb300-nvl72"]), _did_you_mean("nvl72", ["gb200-nvl72", "gb300-nvl72"])
    (" (did you mean 'gb300-nvl72'?)", " (did you mean one of 'gb200-nvl72', 'gb300-nvl72'?)")
    """
    n = name.strip().lower()
    rules = (
        lambda k: k == n,
        lambda k: k.startswith(n) and k[len(n) : len(n) + 1] in ("-", "."),
        lambda k: n.startswith(f"{k}-"),
        lambda k: n in k.replace(".", "-").split("-"),
    )
    close: list[str] = []
    for rule in rules:
        close = [k for k in known if n and rule(k)]
        if close:
            break
    close = close or difflib.get_close_matches(n, known, n=1)
    if not close:
        return ""
    if len(close) == 1:
        return f" (did you mean {close[0]!r}?)"
    return f" (did you mean one of {', '.join(repr(k) for k in close)}?)"


def system_path(name_or_path: str):
    """(is_shipped, path) of a system name or TOML path; a path that is a shipped catalog file is that system
    (as :func:`is_catalog_system` already held it for bands, recipes and kernel tables).

    Raises:
        UnknownNameError: not a shipped name and not a path.
    """
    if _looks_like_path(name_or_path, ".toml"):
        p = Path(name_or_path)
        stem = p.stem
        if stem in list_systems() and p.is_file():  # the shipped file by its own path is the catalog system
            with resources.as_file(_DATA / "systems" / f"{stem}.toml") as q:
                if p.resolve() == Path(q).resolve():  # `-s .../data/systems/h200.toml` was priced with the
                    return True, Path(q)  # default efficiencies, not H200's calibration (break50)
        return False, p
    known = list_systems()
    if name_or_path not in known:
        raise _unknown("system", name_or_path, known, "hardware")
    with resources.as_file(_DATA / "systems" / f"{name_or_path}.toml") as p:
        return True, Path(p)


def load_system(name_or_path: str | os.PathLike, overrides: tuple = ()) -> System:
    """A system (hardware facts only) by catalog name or TOML path, a ``base`` chain resolved and
    dotted ``overrides`` ((key, value) pairs, specs/variants.py) applied.

    Raises:
        UnknownNameError: not a shipped name and not a path.
        SpecError: the file is malformed (the message names the key), or ``overrides`` are not
            (key, value) pairs (specs/system_overrides.check_pairs: ``"chip.hbm_stacks=8"`` raised ValueError).
    """
    from jalapeno.specs.system_overrides import check_pairs
    from jalapeno.specs.variants import load_variant

    return load_variant(name_text(name_or_path), check_pairs("load_system: overrides", overrides))


def load_efficiency(name_or_path: str | os.PathLike, which: str = "calibrated", overrides: tuple = ()) -> Efficiency:
    """The efficiency set a system is priced with.

    A shipped system starts from its calibration file's set ``which`` (specs/calibration.py:
    ``calibrated`` (default), ``low``, ``high`` or ``spec``); a variant (``base = ...``) from its
    base's; a user TOML with neither a base nor ``calibration = ...`` from the documented
    defaults. The ``[efficiency]`` tables along the chain and ``efficiency.*`` overrides apply on
    top (specs/variants.py).

    Raises:
        UnknownNameError: unknown system or efficiency set.
        SpecError: a malformed file or ``[efficiency]`` entry, or ``overrides`` that are not (key, value)
            pairs (specs/system_overrides.check_pairs).
    """
    from jalapeno.specs.system_overrides import check_pairs, value_types

    overrides = check_pairs("load_efficiency: overrides", overrides)
    name_or_path = name_text(name_or_path)
    return _load_efficiency(name_or_path, which, overrides, value_types(overrides), chain_stamp(name_or_path))


@lru_cache(maxsize=128)
def _load_efficiency(name_or_path: str, which: str, overrides: tuple, _types: tuple, _stamp) -> Efficiency:
    """:func:`load_efficiency`, cached per value types (specs/system_overrides.value_types) and the file's
    stamps, its base chain's included (specs/files.chain_stamp), too."""
    from jalapeno.specs.variants import variant_efficiency

    return variant_efficiency(load_system(name_or_path, overrides), which)


def efficiency_band(name_or_path: str) -> dict[str, Efficiency]:
    """The low / calibrated / high efficiency sets of a system (all three equal for a user file).

    Raises:
        UnknownNameError, SpecError: as :func:`load_efficiency`.
    """
    return {w: load_efficiency(name_or_path, w) for w in ("low", "calibrated", "high")}


_system_path = system_path  # former private name


def is_catalog_system(system: System) -> bool:
    """True for a system loaded from the shipped catalog (not from a user's file)."""
    if system.name not in list_systems():
        return False
    with resources.as_file(_DATA / "systems" / f"{system.name}.toml") as p:
        return Path(system.path).resolve() == Path(p).resolve()


def hardware_show_name(system: System) -> str:
    """What ``jalapeno hardware show`` takes for the file ``system`` came from: its catalog name, also for a
    ``--set`` variant (``jalapeno+chip.hbm_stacks=8`` is no name ``hardware show`` knows, and an estimate's
    source is the catalog file's), else the user file's path.

    >>> hardware_show_name(load_system("jalapeno", (("chip.hbm_stacks", 8),)))
    'jalapeno'
    """
    if is_catalog_system(system) or not system.path:
        return system.name
    stem = Path(system.path).stem
    if stem in list_systems() and Path(load_system(stem).path).resolve() == Path(system.path).resolve():
        return stem
    return str(system.path)


def hardware_show_command(system: System) -> str:
    """The ``jalapeno hardware show`` command that shows ``system`` as it was priced: its name
    (:func:`hardware_show_name`) and, for a ``--set`` variant, the same ``--set KEY=VALUE`` options in order, so a
    set figure (``chip.tdp_w=1000``) is the one it shows, not the catalog's it replaced (ux54). A basis line's
    pointer to a figure's full source (analysis/price_reason).

    >>> hardware_show_command(load_system("gb200-nvl72", (("chip.tdp_w", 1000),)))
    'jalapeno hardware show gb200-nvl72 --set chip.tdp_w=1000'
    >>> hardware_show_command(load_system("h200"))
    'jalapeno hardware show h200'
    """
    from jalapeno.specs.system_overrides import set_value_text

    sets = getattr(system.origin, "overrides", ()) or ()
    opts = "".join(f" --set {shlex.quote(f'{k}={set_value_text(v)}')}" for k, v in sets)
    return f"jalapeno hardware show {shlex.quote(hardware_show_name(system))}{opts}"


def load_model(name_or_path: str | os.PathLike) -> ModelSpec:
    """A model by catalog name or config.json path (cached; an edited file is read again).

    Raises:
        UnknownNameError: not a shipped name and not a path.
        SpecError / UnsupportedModelError: the config is malformed or not a supported decoder.
    """
    name_or_path = name_text(name_or_path)
    return _load_model(name_or_path, file_stamp(name_or_path) if _looks_like_path(name_or_path, ".json") else None)


@lru_cache(maxsize=64)
def _load_model(name_or_path: str, _stamp: tuple | None) -> ModelSpec:
    if _looks_like_path(name_or_path, ".json"):
        return load_model_file(Path(name_or_path))
    known = list_models()
    if name_or_path not in known:
        raise _unknown("model", name_or_path, known, "models")
    with resources.as_file(_DATA / "models" / f"{name_or_path}.json") as p:
        return load_model_file(p, name=name_or_path)


#: file keys that label or cite a number but price nothing: an edited copy that changes only these is the same
#: hardware (:func:`hardware_changes`)
LABEL_KEYS = frozenset({"name", "description", "source", "note", "estimate", "vendor_verified", "schema_version"})


def _leaves(d, prefix: str = "") -> dict:
    """A system's file form (SystemOrigin.data) as {dotted key: value}, label keys (:data:`LABEL_KEYS`) dropped: a
    ``{value, source}`` table reads as its ``.value`` leaf, a list (``levels``) by index."""
    items = d.items() if isinstance(d, dict) else enumerate(d) if isinstance(d, list) else None
    if items is None:
        return {prefix.rstrip("."): d}
    out: dict = {}
    for k, v in items:
        if k not in LABEL_KEYS:
            out.update(_leaves(v, f"{prefix}{k}."))
    return out


def hardware_changes(system: System, catalog_name: str) -> list[str]:
    """The dotted file keys (``chip.hbm_bandwidth_tb_per_s``, ``levels.0.chips``) whose values in ``system``
    differ from the catalog system ``catalog_name``'s, names, descriptions, sources and notes not counted; [] for a
    copy that changes nothing physical. A system built in code (no file form) differs in everything: ``["*"]``."""
    data = system.origin.data if system.origin is not None else None
    if data is None:
        return ["*"]
    mine, theirs = _leaves(data), _leaves(load_system(catalog_name).origin.data)
    return sorted(k.removesuffix(".value") for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))


def measured_system(system: System) -> str | None:
    """The catalog system whose measurements (kernel tables for ``--pricer table``, the LOSO choice of ``--pricer
    auto``) may price ``system``: data follows a file's provenance, never a bare name (docs/catalog.md, "Whose
    measured data a file gets").

    - the catalog file itself: its name;
    - a variant (``base = "h200"`` along its chain, or ``--set`` on a catalog system): the catalog system its chain
      starts from, whatever the variant's own name: its tables price it as corrections (measured / roofline per
      kernel shape) over the variant's own roofline, so a changed spec moves the figures through the roofline;
    - a user file without a base: the catalog system of its name only when it changes nothing physical
      (:func:`hardware_changes` empty: an unedited copy); a file that reuses a catalog name with other specs
      (a new chip's file named "h200") gets no catalog system's measurements: None.

    >>> measured_system(load_system("h200")), measured_system(load_system("h200", (("chip.hbm_stacks", 8),)))
    ('h200', 'h200')
    """
    if is_catalog_system(system):
        return system.name
    o = system.origin
    if o is not None and o.root in list_systems() and (o.base is not None or o.overrides):
        return o.root
    if o is not None and o.root and system.name in list_systems() and not hardware_changes(system, system.name):
        return system.name
    return None
