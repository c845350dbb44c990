"""Calibrated efficiency sets shipped with the catalog (``data/calibration/<system>.toml``).

Each file is written by ``jalapeno calibrate`` (fit/calibrate.py) and records its
provenance. A *measured* set was fitted on that system's kernel tables; a *derived* set (no
tables: Jalapeño, Vera Rubin) borrows the nearest measured family's values and carries a
``low``/``high`` band; a *partial* set (AMD) has some parameters fitted on its own kernel tables
(amd-aiter's tuned GEMM / fused-MoE tables) and the rest derived, with bands on the derived ones. Selection names: ``calibrated`` (the mid set; default), ``low``, ``high``,
``spec`` (the documented defaults of specs/efficiency.py, no calibration).
"""

from __future__ import annotations

import difflib

import tomllib
from functools import lru_cache
from importlib import resources
from pathlib import Path

from jalapeno.errors import SpecError, UnknownNameError, choice_hint
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY, Efficiency, flatten_params, nest_params
from jalapeno.specs.files import parse_toml, read_user_text
from jalapeno.specs.schema_errors import as_written
from jalapeno.specs.w4a16_moe import with_w4a16_form

EFFICIENCY_SETS = ("calibrated", "low", "high", "spec")
_DIR = resources.files("jalapeno") / "data" / "calibration"


@lru_cache(maxsize=32)
def load_calibration(system: str) -> dict | None:
    """The calibration file of a shipped system, or None when there is none."""
    f = _DIR / f"{system}.toml"
    if not f.is_file():
        return None
    return tomllib.loads(f.read_text())


def _calibration_path(which: str, system: str) -> Path | None:
    """The calibration file ``which`` names when it is a path: a ``.toml`` file, or a directory
    written by ``jalapeno calibrate --out-dir DIR`` (its ``<system>.toml``); None for a set name."""
    p = Path(which)
    if p.suffix.lower() == ".toml":  # MY.TOML was 'a file but not a calibration .toml'
        return p
    if p.is_file():  # ``--efficiency points.csv`` was "points.csv/h200.toml not found"
        raise UnknownNameError(
            "efficiency",
            f"{which} is a file but not a calibration .toml",
            "give a set name (calibrated, low, high, spec), a calibration .toml file or a "
            "directory written by `jalapeno calibrate --out-dir DIR` (holding <system>.toml)",
        )
    if "/" in which or "\\" in which or p.is_dir():
        if not p.is_dir():  # was "DIR/h200.toml not found" for a folder that does not exist
            raise UnknownNameError(
                "efficiency",
                f"the folder {which} does not exist",
                "give a set name (calibrated, low, high, spec), an existing directory written by "
                "`jalapeno calibrate --out-dir DIR` (holding <system>.toml) or a calibration .toml file",
            )
        f = p / f"{Path(system).stem}.toml"
        if not f.is_file():
            raise _missing_in_folder(which, p, Path(system).stem)
        return f
    return None


def _missing_in_folder(which: str, folder: Path, stem: str) -> UnknownNameError:
    """The error for a calibration folder without ``<stem>.toml``, naming the systems it does hold: after
    ``calibrate -s h200 --out-dir DIR``, ``validate --efficiency DIR`` said "DIR/gb200-nvl72.toml not found. Fix: give
    ... a directory written by `jalapeno calibrate --out-dir DIR`", of a directory so written (newuser51)."""
    from jalapeno.specs.catalog import list_systems

    held = sorted(f.stem for f in folder.glob("*.toml"))
    holds = f"it holds {', '.join(held)}" if held else "it holds no calibration .toml"
    only = (
        f", or price only the systems it holds ({', '.join(held)}; validate and compare take --systems)" if held else ""
    )
    write = (
        f"write {stem}'s with `jalapeno calibrate -s {stem} --out-dir {which}`"
        if stem in list_systems()
        else f"give the calibration .toml file itself (--efficiency FILE.toml), or copy one there as {stem}.toml"
    )
    return UnknownNameError(
        "efficiency",
        f"{folder / (stem + '.toml')} not found: {holds} (`jalapeno calibrate "
        "--out-dir DIR` writes the systems its --systems names)",
        write + only,
    )


def _read_calibration_file(path: Path) -> dict:
    """Parse a calibration TOML given by path.

    Raises:
        UnknownNameError: the file does not exist. SpecError: not TOML, not UTF-8, unreadable; field the path:
            a directory (``--efficiency x.toml`` where x.toml is one said "not found", break54; specs/files.read_user_text
            names it, as for the points and claims files).
    """
    if not path.exists() and not path.is_symlink():  # a directory, a pipe, a dangling link: read_user_text names each
        raise UnknownNameError(
            "efficiency",
            f"{path} not found",
            "give a set name (calibrated, low, high, spec), a directory written by "
            "`jalapeno calibrate --out-dir DIR` (holding <system>.toml) or a calibration .toml file",
        )
    fix = "pass a file written by `jalapeno calibrate --out-dir DIR`"
    if path.is_dir():
        fix = "pass a calibration .toml file, e.g. the <system>.toml `jalapeno calibrate --out-dir DIR` writes in DIR"
    text = read_user_text(path, "a calibration TOML", fix)
    try:
        return parse_toml(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(
            "efficiency",
            f"{path} is not a readable calibration TOML ({e})",  # was the class name only
            "fix its TOML, or pass a file written by `jalapeno calibrate --out-dir DIR`",
        ) from None


#: ``kind`` of a calibration file (fit/calibrate.py writes one of these)
KINDS = ("measured", "derived", "partial")

#: Top-level keys of a calibration file, as fit/calibrate.py writes them (the shipped files'
#: keys): the set's ``parameters``, its ``low``/``high`` band, where it comes from and the fit report.
FILE_KEYS = ("system", "kind", "provenance", "parameters", "low", "high", "report")


def _check_calibration_file(cal: dict, path: Path, system: str) -> None:
    """A calibration file given by path must be of a known ``kind`` and, for a catalog system, fitted
    for that system (an ``h100`` file once priced an A100 without a word).

    Raises:
        SpecError: unknown kind, or another catalog system's file; an unknown top-level key, a
            section that is not a table, or no ``[parameters]`` table.
    """
    from jalapeno.specs.catalog import list_systems

    kind, fitted = cal.get("kind"), cal.get("system")
    if kind is None:
        raise SpecError(
            "efficiency",
            f"{path} has no top-level `kind` key (a calibration file starts with "
            f"system = ..., kind = one of {', '.join(KINDS)}, then [parameters])",
            "pass a file written by `jalapeno calibrate --out-dir DIR`, or use `--set "
            "efficiency.NAME=VALUE` to change single efficiency parameters",
        )
    if kind not in KINDS:
        raise SpecError(
            "efficiency",
            f"{path}: kind {kind!r} is not one of {', '.join(KINDS)}",
            "pass a file written by `jalapeno calibrate --out-dir DIR`",
        )
    if system in list_systems() and fitted is None:  # was "fitted for system None"
        raise SpecError(
            "efficiency",
            f"{path} names no system (a calibration file starts with system = ..., kind = ...)",
            f'add system = "{system}" if it was fitted for {system}, or pass '
            f"{system}'s calibration (a directory holding {system}.toml, or that file)",
        )
    if system in list_systems() and fitted != system:
        raise SpecError(
            "efficiency",
            f"{path} was fitted for system {fitted!r}, not {system}",
            f"pass {system}'s calibration (a directory holding {system}.toml, or that file)",
        )
    # a misspelt [parameters] table priced every op with the documented defaults, labelled as this
    # file's calibrated set; a stray top-level key was ignored alike
    unknown = sorted(set(cal) - set(FILE_KEYS))
    if unknown:
        near = difflib.get_close_matches(unknown[0], FILE_KEYS, n=1)
        raise SpecError(
            "efficiency",
            f"{path}: {unknown[0]!r} is not a key of a calibration file"
            + (f" (did you mean {near[0]!r}?)" if near else ""),
            f"use only {', '.join(FILE_KEYS)} (as `jalapeno calibrate --out-dir DIR` writes them)",
        )
    for key in ("parameters", "low", "high", "provenance", "report"):
        if key in cal and not isinstance(cal[key], dict):
            raise SpecError(
                "efficiency",
                f"{path}: {key} must be a table, got {cal[key]!r}",
                f"write it as [{key}] with key = value lines",
            )
    for key in ("package", "derived_from"):  # named in the set's source label: `package = 2` raised TypeError
        v = cal.get("provenance", {}).get(key)
        if v is not None and not isinstance(v, str):
            raise SpecError(
                "efficiency",
                f"{path}: provenance.{key} must be text, got {as_written(v)}",
                f'write {key} = "<text>" in [provenance] (as `jalapeno calibrate --out-dir DIR` writes it)',
            )
    if not cal.get("parameters"):
        raise SpecError(
            "efficiency",
            f"{path} has no [parameters] table (no fitted value to price with)",
            "pass a file written by `jalapeno calibrate --out-dir DIR` (its [parameters] table holds the fit)",
        )


#: how a wholly derived set's source names its donor family (``calibrated (derived from gb300-nvl72; …)``)
DERIVED_PREFIX = "derived from "


#: Systems whose GPU is the same silicon as another's in another board (NVIDIA: GB200 NVL72 carries the
#: B200 GPU, GB300 NVL72 the B300 Blackwell Ultra GPU; H100 and H200 are the same GH100 die with other
#: HBM). A left-out system's tables are withheld together with its twin's: the twin's kernels are its own.
SAME_SILICON = {
    "b200": "gb200-nvl72",
    "gb200-nvl72": "b200",
    "b300": "gb300-nvl72",
    "gb300-nvl72": "b300",
    "h100": "h200",
    "h200": "h100",
}


def withheld_systems(name: str) -> frozenset:
    """``name`` and its same-silicon twin (:data:`SAME_SILICON`): the systems whose measurements are withheld
    when ``name`` is left out.

    >>> sorted(withheld_systems("b300")), sorted(withheld_systems("jalapeno"))
    (['b300', 'gb300-nvl72'], ['jalapeno'])
    """
    return frozenset(n for n in (name, SAME_SILICON.get(name)) if n)


def derived_from(source: str) -> str | None:
    """The family whose fitted kernel curves a *wholly* derived efficiency set borrows (Jalapeño, Rubin: no kernel
    measurement of their own), read from the ``source`` :func:`base_efficiency` writes; None for a measured set, a
    partial one (AMD: GEMM and MoE measured from amd-aiter's tables, the rest derived) or the spec defaults.

    >>> derived_from("calibrated (derived from gb300-nvl72; set calibrated; data/calibration/jalapeno.toml)")
    'gb300-nvl72'
    >>> derived_from("calibrated (measured kernels (amd-aiter 0.1) + derived from h200; set calibrated; x.toml)") is None
    True
    """
    head = "calibrated (" + DERIVED_PREFIX
    return source[len(head) :].split(";")[0].strip() if source.startswith(head) else None


def base_efficiency(system: str, which: str = "calibrated") -> Efficiency:
    """The efficiency set a system starts from (before its TOML's own overrides).

    ``which``: a set name — ``calibrated`` (the shipped mid set), ``low``, ``high``, ``spec`` (the
    documented defaults) — or a path: a calibration ``.toml`` file or a directory written by
    ``jalapeno calibrate --out-dir DIR`` (its ``<system>.toml``), whose mid set is used.

    Raises:
        UnknownNameError: unknown set name or missing file. SpecError: an unreadable file or a bad
            parameter in it.
    """
    # a set name wins over a same-named folder in the working directory
    path = _calibration_path(which, system) if isinstance(which, str) and which not in EFFICIENCY_SETS else None
    if path is not None:
        cal = _read_calibration_file(path)
        _check_calibration_file(cal, path, system)
        which_label, where = "calibrated", str(path)
    elif which not in EFFICIENCY_SETS:
        raise UnknownNameError(
            "efficiency",
            f"unknown efficiency set {which!r}{choice_hint(which, EFFICIENCY_SETS)}",
            f"use one of {', '.join(EFFICIENCY_SETS)}, or a calibration directory/.toml path",
        )
    else:
        cal, which_label, where = load_calibration(system), which, f"data/calibration/{system}.toml"
    which = which_label
    if which == "spec" or cal is None:
        return DEFAULT_EFFICIENCY
    params = flatten_params(cal.get("parameters", {}))  # a band replaces single parameters, not whole tables
    if which in ("low", "high"):
        params.update(flatten_params(cal.get(which, {})))
    prov = cal.get("provenance", {})
    kind = cal.get("kind")
    what = (
        "measured kernels"
        if kind == "measured"
        else f"measured kernels ({prov.get('package', '?')}) + derived from {prov.get('derived_from', '?')}"
        if kind == "partial"
        else f"{DERIVED_PREFIX}{prov.get('derived_from', '?')}"
    )
    parts = [what, prov.get("package", ""), f"set {which}", where]
    src = "calibrated (" + "; ".join(p for p in parts if p) + ")"
    eff = DEFAULT_EFFICIENCY.with_overrides({**nest_params(params), "source": src}, where=f"calibration {system}")
    # W4A16 experts by the chip's own measured W4A16 MoE kernel where it has one (specs/w4a16_moe.py, shipped on, round 41)
    # (a derived set's low/high take the form at the ends of its held-out error: specs/w4a16_moe.band_form)
    return with_w4a16_form(
        eff, system, prov.get("derived_from") if kind not in ("measured", "partial") else None, which
    )
