"""Calibrated efficiency sets shipped with the catalog (``data/calibration/<system>.toml``).

Each file is written by ``jalapeno calibrate`` (fit/calibrate.py) and records its
provenance. A *measured* set was fitted on that system's kernel tables; a *derived* set (no
tables: Jalapeño, Vera Rubin) borrows the nearest measured family's values and carries a
``low``/``high`` band; a *partial* set (AMD) has some parameters fitted on its own kernel tables
(amd-aiter's tuned GEMM / fused-MoE tables) and the rest derived, with bands on the derived ones. Selection names: ``calibrated`` (the mid set; default), ``low``, ``high``,
``spec`` (the documented defaults of specs/efficiency.py, no calibration).
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources

from jalapeno.errors import UnknownNameError
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY, Efficiency, flatten_params, nest_params

EFFICIENCY_SETS = ("calibrated", "low", "high", "spec")
_DIR = resources.files("jalapeno") / "data" / "calibration"


@lru_cache(maxsize=32)
def load_calibration(system: str) -> dict | None:
    """The calibration file of a shipped system, or None when there is none."""
    f = _DIR / f"{system}.toml"
    if not f.is_file():
        return None
    return tomllib.loads(f.read_text())


def base_efficiency(system: str, which: str = "calibrated") -> Efficiency:
    """The efficiency set a shipped system starts from (before its TOML's own overrides).

    Raises:
        UnknownNameError: unknown set name.
    """
    if which not in EFFICIENCY_SETS:
        raise UnknownNameError("efficiency", f"unknown efficiency set {which!r}",
                               f"use one of {', '.join(EFFICIENCY_SETS)}")
    cal = load_calibration(system)
    if which == "spec" or cal is None:
        return DEFAULT_EFFICIENCY
    params = flatten_params(cal.get("parameters", {}))  # a band replaces single parameters, not whole tables
    if which in ("low", "high"):
        params.update(flatten_params(cal.get(which, {})))
    prov = cal.get("provenance", {})
    kind = cal.get("kind")
    what = ("measured kernels" if kind == "measured" else
            f"measured kernels ({prov.get('package', '?')}) + derived from {prov.get('derived_from', '?')}"
            if kind == "partial" else f"derived from {prov.get('derived_from', '?')}")
    parts = [what, prov.get("package", ""), f"set {which}", f"data/calibration/{system}.toml"]
    src = "calibrated (" + "; ".join(p for p in parts if p) + ")"
    return DEFAULT_EFFICIENCY.with_overrides({**nest_params(params), "source": src}, where=f"calibration {system}")
