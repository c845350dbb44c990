"""Leave-one-system-out (LOSO): the end-to-end error of a chip priced without its own measurements.

For each system with kernel tables, its efficiency set is replaced by a borrowed one, exactly as a
derived system (Jalapeño, Vera Rubin) borrows: the parameters of the nearest measured system of
another chip (``LOSO_DONOR``; never the same silicon in another board, so B300 does not borrow
GB300's Blackwell Ultra set), and its measured end-to-end points are predicted with it. That error
is the honest estimate of the error on a chip with no measurements, and it sets the low/high band
of every derived set (fit/calibrate.derived_set): ``band_error`` in the shipped
``data/validation/loso_error.toml`` (written by ``scripts/run_loso.py``).

The rule: when system S is left out, nothing S measured — its kernel tables and end-to-end rows, and those of
its same-silicon twin (:data:`SAME_SILICON`) — reaches S's prediction, directly or through another system's
fit. So (1) the donor's set is refitted with those tables withheld (:func:`loso_set`;
fit/calibrate.calibrate_system ``withheld``): every rule that fills one system's fit from another's tables
skips them — the NVLink generation's NCCL ramp (fit/collectives.generation_frames), the kernel paths imputed
from a KERNEL_PATH_SIBLING and the all-to-all of an A2A_FABRIC_SIBLING (fit/kernel_tables.py); the shipped
donor set, fitted with them, is not borrowed, and its routed experts' HBM fraction is pooled over the
measured systems but the left-out pair, as every chip without MoE tables takes it (fit/moe_transfer.py); (2) under the borrowed set the pricer reads none of S's
per-system measurements (cost/pricer.measured_here: MoE width term, engines' measured all-reduce, MoE and
attention backend kernels), as a derived system has none; (3) the software stacks' fixed costs are refitted
without S's and its twin's end-to-end rows (fit/stack_fit.fit_all ``withheld_systems``; :func:`run_loso`).
Each rule's test: tests/unit/test_loso_withheld.py; what each moves: scripts/loso_sources.py.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from jalapeno.errors import SpecError
from jalapeno.specs.calibration import SAME_SILICON, withheld_systems  # noqa: F401 (re-exported)

#: held-out system → the measured system whose set it borrows (another chip: Hopper borrows
#: Blackwell, Blackwell borrows Blackwell Ultra and back, in the same board form)
LOSO_DONOR = {
    "h100": "b200",
    "h200": "b200",
    "b200": "b300",
    "gb200-nvl72": "gb300-nvl72",
    "b300": "b200",
    "gb300-nvl72": "gb200-nvl72",
}
#: metrics pooled into a system's LOSO error: TPOT and throughput per chip (interactivity is 1/TPOT
#: of the same rows, so it would count them twice; TTFT is dominated by the front-end and queue
#: terms, not by the kernel parameters a borrowed set replaces)
LOSO_METRICS = ("tpot_s", "throughput_per_chip")
LOSO_FILE = "loso_error.toml"


def withheld_tables(name: str) -> frozenset:
    """The aiconfigurator system folders withheld when ``name`` is left out: its own and its same-silicon
    twin's (:data:`SAME_SILICON`).

    >>> sorted(withheld_tables("b200")), sorted(withheld_tables("gb300-nvl72"))
    (['b200_sxm', 'gb200'], ['b300_sxm', 'gb300'])
    """
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS

    return frozenset(AIC_SYSTEM_DIRS[n] for n in withheld_systems(name) if n in AIC_SYSTEM_DIRS)


def loso_set(name: str) -> dict:
    """The borrowed set of held-out ``name``: its donor's parameters as the donor's calibration fits them
    with ``name``'s tables (and its twin's) withheld (fit/calibrate.calibrate_system ``withheld``), as a
    derived set. The shipped donor set is not borrowed: it reads other systems' tables where its own lack
    them (NVLink generation NCCL ramps, KERNEL_PATH_SIBLING kernel paths, the A2A_FABRIC_SIBLING all-to-all),
    so it carries the left-out system's measurements. Its routed experts' HBM fraction is not the donor's but,
    as for every chip without MoE tables, the median over the measured systems' fits and formats
    (fit/moe_transfer.py), each pooled system (fit/moe_transfer.MOE_POOL, less ``name`` and its twin) refitted
    with the same tables withheld. Needs the ``[calibrate]`` extra (about 20 s: four refits).

    Raises:
        SpecError: ``name`` has no donor, or the aiconfigurator-core package is missing.
    """
    donor = LOSO_DONOR.get(name)
    if donor is None:
        raise SpecError("system", f"no leave-one-out donor for {name}", f"use one of {', '.join(LOSO_DONOR)}")
    from jalapeno.fit.calibrate import calibrate_system
    from jalapeno.specs.catalog import load_system

    from jalapeno.fit.moe_transfer import MOE_POOL, with_pooled_moe

    withheld, out = withheld_tables(name), withheld_systems(name)
    pool = {n: calibrate_system(load_system(n), withheld)["parameters"] for n in MOE_POOL if n not in out}
    return {
        "system": name,
        "parameters": with_pooled_moe(pool[donor], pool),
        "provenance": {
            "derived_from": donor,
            "left_out": name,
            "withheld_tables": sorted(withheld),
            "moe_hbm_pooled_over": sorted(pool),
        },
    }


def pooled_error(rows: pd.DataFrame) -> dict:
    """Median / p90 absolute error of the LOSO_METRICS rows of ``rows``, and the bias as the median
    speed error (positive: the model is too fast; a TPOT error e counts as 1/(1 + e) − 1)."""
    d = rows[rows.metric.isin(LOSO_METRICS)].dropna(subset=["error"])
    if d.empty:
        return {"n": 0, "median_ape": float("nan"), "p90_ape": float("nan"), "bias": float("nan")}
    e = d.error.to_numpy()
    speed = np.where(d.metric.to_numpy() == "tpot_s", 1.0 / (1.0 + e) - 1.0, e)
    return {
        "n": int(e.size),
        "median_ape": float(np.median(np.abs(e))),
        "p90_ape": float(np.percentile(np.abs(e), 90)),
        "bias": float(np.median(speed)),
    }


def run_loso(
    out_dir: Path, systems: tuple[str, ...] | None = None, on_progress=None, refit_stacks: bool = True
) -> dict[str, dict]:
    """Predict each held-out system's measured points with its borrowed set.

    Writes the borrowed sets to ``out_dir/<system>.toml`` (a calibration directory) and returns,
    per system: ``donor``, ``loso`` (pooled_error of the borrowed set) and ``rows`` (the per-point
    rows). With ``refit_stacks`` (default) the software stacks' fixed costs are refitted without the
    system's end-to-end rows and its twin's (fit/stack_fit.fit_all ``withheld_systems``; minutes per twin pair);
    without, the shipped fits (fitted on its rows too) price it.
    """
    from jalapeno.fit.calibrate import to_toml
    from jalapeno.fit.stack_fit import fit_all
    from jalapeno.fit.validation_run import run_validation

    out_dir.mkdir(parents=True, exist_ok=True)
    names = systems or tuple(LOSO_DONOR)
    res, fits = {}, {}
    for i, n in enumerate(names):
        if on_progress:
            on_progress(n, i, len(names))
        (out_dir / f"{n}.toml").write_text(to_toml(loso_set(n), "derived"))
        out = withheld_systems(n)  # twins withhold the same rows: one stack refit serves both
        if refit_stacks and out not in fits:
            fits[out] = fit_all(withheld_systems=out)
        r = run_validation(efficiency=str(out_dir), systems=(n,), stack_fits=fits.get(out))
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
