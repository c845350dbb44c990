"""Leave-one-system-out (LOSO): the end-to-end error of a chip priced without its own kernel tables.

For each system with kernel tables, its efficiency set is replaced by a borrowed one, exactly as a
derived system (Jalapeño, Vera Rubin) borrows: the parameters of the nearest measured system of
another chip (``LOSO_DONOR``; never the same silicon in another board, so B300 does not borrow
GB300's Blackwell Ultra set), and its measured end-to-end points are predicted with it. That error
is the honest estimate of the error on a chip with no measurements, and it sets the low/high band
of every derived set (fit/calibrate.derived_set): ``band_error`` in the shipped
``data/validation/loso_error.toml`` (written by ``scripts/run_loso.py``).
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from jalapeno.errors import SpecError

#: held-out system → the measured system whose set it borrows (another chip: Hopper borrows
#: Blackwell, Blackwell borrows Blackwell Ultra and back, in the same board form)
LOSO_DONOR = {"h100": "b200", "h200": "b200", "b200": "b300", "gb200-nvl72": "gb300-nvl72",
              "b300": "b200", "gb300-nvl72": "gb200-nvl72"}
#: metrics pooled into a system's LOSO error: TPOT and throughput per chip (interactivity is 1/TPOT
#: of the same rows, so it would count them twice; TTFT is dominated by the front-end and queue
#: terms, not by the kernel parameters a borrowed set replaces)
LOSO_METRICS = ("tpot_s", "throughput_per_chip")
LOSO_FILE = "loso_error.toml"


def loso_set(name: str, calibrated: dict[str, dict]) -> dict:
    """The borrowed set of held-out ``name``: its donor's parameters, as a derived set.

    Raises:
        SpecError: ``name`` has no donor.
    """
    donor = LOSO_DONOR.get(name)
    if donor is None:
        raise SpecError("system", f"no leave-one-out donor for {name}", f"use one of {', '.join(LOSO_DONOR)}")
    params = dict(calibrated[donor]["parameters"])
    for key in own_table_keys(name, donor):  # fitted on the left-out system's own tables: not borrowed
        params.pop(key, None)
    return {"system": name, "parameters": params, "provenance": {"derived_from": donor, "left_out": name}}


def own_table_keys(name: str, donor: str) -> tuple[str, ...]:
    """Parameters of ``donor``'s calibrated set that its calibration fitted on ``name``'s kernel tables:
    the all-to-all latency where ``name`` is ``donor``'s fabric sibling (fit/kernel_tables.A2A_FABRIC_SIBLING:
    GB300's is fitted on GB200's table). Borrowing them would feed the left-out system's measurements into
    its own left-out prediction.

    >>> own_table_keys("gb200-nvl72", "gb300-nvl72"), own_table_keys("b200", "b300")
    (('all_to_all_latency_s',), ())
    """
    from jalapeno.fit.kernel_tables import A2A_FABRIC_SIBLING, AIC_SYSTEM_DIRS

    own, lent = AIC_SYSTEM_DIRS.get(name), AIC_SYSTEM_DIRS.get(donor)
    return ("all_to_all_latency_s",) if own is not None and A2A_FABRIC_SIBLING.get(lent) == own else ()


def pooled_error(rows: pd.DataFrame) -> dict:
    """Median / p90 absolute error of the LOSO_METRICS rows of ``rows``, and the bias as the median
    speed error (positive: the model is too fast; a TPOT error e counts as 1/(1 + e) − 1)."""
    d = rows[rows.metric.isin(LOSO_METRICS)].dropna(subset=["error"])
    if d.empty:
        return {"n": 0, "median_ape": float("nan"), "p90_ape": float("nan"), "bias": float("nan")}
    e = d.error.to_numpy()
    speed = np.where(d.metric.to_numpy() == "tpot_s", 1.0 / (1.0 + e) - 1.0, e)
    return {"n": int(e.size), "median_ape": float(np.median(np.abs(e))),
            "p90_ape": float(np.percentile(np.abs(e), 90)), "bias": float(np.median(speed))}


def run_loso(out_dir: Path, systems: tuple[str, ...] | None = None, on_progress=None) -> dict[str, dict]:
    """Predict each held-out system's measured points with its borrowed set.

    Writes the borrowed sets to ``out_dir/<system>.toml`` (a calibration directory) and returns,
    per system: ``donor``, ``loso`` (pooled_error of the borrowed set) and ``rows`` (the per-point
    rows).
    """
    from jalapeno.fit.calibrate import to_toml
    from jalapeno.fit.validation_run import run_validation
    from jalapeno.specs.calibration import load_calibration

    out_dir.mkdir(parents=True, exist_ok=True)
    names = systems or tuple(LOSO_DONOR)
    cal = {n: load_calibration(n) for n in {*names, *(LOSO_DONOR[n] for n in names)}}
    res = {}
    for i, n in enumerate(names):
        if on_progress:
            on_progress(n, i, len(names))
        (out_dir / f"{n}.toml").write_text(to_toml(loso_set(n, cal), "derived"))
        r = run_validation(efficiency=str(out_dir), systems=(n,))
        res[n] = {"donor": LOSO_DONOR[n], "loso": pooled_error(r["rows"]), "rows": r["rows"]}
    return res


def load_loso() -> dict:
    """The shipped LOSO results (``data/validation/loso_error.toml``): ``band_error`` and
    per-system errors.

    Raises:
        SpecError: the file is missing or has no ``band_error``.
    """
    p = Path(str(resources.files("jalapeno") / "data" / "validation" / LOSO_FILE))
    if not p.is_file():
        raise SpecError(str(p), "file not found", "run python scripts/run_loso.py")
    d = tomllib.loads(p.read_text())
    if not isinstance(d.get("band_error"), float) or not 0 < d["band_error"] < 1:
        raise SpecError(f"{p}: band_error", "missing or not a fraction in (0, 1)", "run python scripts/run_loso.py")
    return d
