"""AMD's MLPerf v5.1 Llama-2-70B runs at their declared GPU clock caps (issue 18; diagnosis, docs/gap_large_batch_decode.md
"Round 53 (amdmlperf53)").

Every AMD-harness Llama-2-70B run starts with ``run_harness.sh``, which sources ``scripts/power_settings.sh
<model> <gpu> <scenario>`` before ``main.py`` (mlcommons/inference_results_v5.1 @965182b,
``closed/AMD/code/llama2-70b-99/{run_harness.sh,scripts/power_settings.sh}``; the same file in the ASUSTeK, Dell,
GigaComputing, MiTAC, Quanta and Vultr ``code`` trees and in ``open/AMD``). On gfx942 it puts each GPU in
performance-determinism mode at a maximum GFX clock per scenario (``rocm-smi --setperfdeterminism MHZ``) and sets a
SoC P-state (``amd-smi set --soc-pstate``); on MI355X it sets nothing ("no power setting found"). Performance
determinism: "PMFW tries to maintain sustained performance level ... To guarantee that it remains within the power
cap, a max GFX frequency needs to be specified in this mode" (Linux commit 6be6424684cb, "drm/amd/pm: Enable
performance determinism on aldebaran"). The MI325X hipBLASLt override file ``tuning_spx_1700_formatted.txt``
(round 32 (4): "1700 may be a clock") is named after the 1,700 MHz cap of MI325X's Offline / Interactive runs.

The script prints (1) the caps against the measured MI325X / MI300X pair ratios, the HBM ratio and AMD's
max-achievable-FLOPs clocks (``fit/amd.SUSTAINED_CLOCK_MHZ``), and (2) the compute clock factor r (the model's
``cost/roofline.POWER_CLOCK`` with ``chip.dense_clock_ratio`` = r: ops at or above ``DENSE_UTILISATION`` of peak run at
r of the calibrated speed) at which each AMD row's throughput error crosses zero, and the clock the gfx942
calibration would have to carry for the row's cap to give that r (cap / r). Nothing is fitted or shipped: the
two Offline rows give that clock independently (one unknown, two rows: a consistency check, not a fit).

Usage: ``python scripts/amd_clock_caps53.py [--scan]`` (``--scan``: part 2, ~1 min).
"""

from __future__ import annotations

import argparse
import contextlib

import numpy as np

#: (chip, scenario) -> (perf-determinism max GFX clock MHz, SoC P-state) of AMD's Llama-2-70B runs
#: (closed/AMD/code/llama2-70b-99/scripts/power_settings.sh @965182b, functions llama2-70b_{offline,server,
#: interactive}); MI355X: none set (the script echoes "no power setting found for: mi355x")
CLOCK_CAPS = {
    ("mi300x", "Offline"): (1400, 1),
    ("mi325x", "Offline"): (1700, 0),
    ("mi300x", "Server"): (1300, 1),
    ("mi325x", "Server"): (1600, 0),
    ("mi300x", "Interactive"): (2000, 0),
    ("mi325x", "Interactive"): (1700, 0),
}
#: HBM bandwidth TB/s (data/systems/mi300x.toml, mi325x.toml: AMD datasheets)
HBM_TB_S = {"mi300x": 5.3, "mi325x": 6.0}
#: gfx942 / gfx950 boost clock MHz (AMD Instinct MI300X / MI325X / MI355X datasheets: the clock the peaks assume)
BOOST_MHZ = {"mi300x": 2100.0, "mi325x": 2100.0, "mi355x": 2400.0}
#: the compute clock factors the scan prices each row at (cost/roofline.POWER_CLOCK, chip.dense_clock_ratio <= 1)
RATIOS = (0.7, 0.8, 0.9, 1.0)
SYSTEMS = ("mi300x", "mi325x", "mi355x")


def cap_ratio(scenario: str) -> float:
    """MI325X's cap over MI300X's for ``scenario`` (Offline / Server / Interactive).

    Raises:
        KeyError: a scenario without caps.
    """
    return CLOCK_CAPS[("mi325x", scenario)][0] / CLOCK_CAPS[("mi300x", scenario)][0]


def zero_crossing(ratios: tuple[float, ...], errors: list[float]) -> float:
    """The r at which the error (a fraction, rising with r) is 0: linear between the two grid points that bracket
    it, or extrapolated from the two nearest ends when none does (rows the model prices too slow even at r = 1).

    Raises:
        ValueError: fewer than two points, or a flat pair where the line is needed.
    """
    r, e = np.asarray(ratios, float), np.asarray(errors, float)
    if len(r) < 2 or len(r) != len(e):
        raise ValueError("ratios and errors: two or more points of equal count are needed")
    for i in range(len(r) - 1):
        if e[i] <= 0.0 <= e[i + 1] or e[i] >= 0.0 >= e[i + 1]:
            j = i
            break
    else:
        j = 0 if abs(e[0]) < abs(e[-1]) else len(r) - 2
    if e[j + 1] == e[j]:
        raise ValueError("a flat error between two clock factors has no zero crossing")
    return float(r[j] - e[j] * (r[j + 1] - r[j]) / (e[j + 1] - e[j]))


def implied_table_clock(cap_mhz: float, r0: float) -> float:
    """The clock (MHz) the calibration must carry for a run held at ``cap_mhz`` to price at factor ``r0``."""
    return cap_mhz / r0


def pair_table(points) -> list[tuple[str, float, float, float, float]]:
    """(scenario, measured MI325X / MI300X per-chip throughput, cap ratio, HBM ratio, MAF clock ratio) per scenario
    both chips ran (``points``: the MLPerf throughput rows, predict_points' frame with id / system / measured)."""
    from jalapeno.fit.amd import SUSTAINED_CLOCK_MHZ

    out = []
    for sc in ("Offline", "Server", "Interactive"):
        m = {
            s: points[(points.system == s) & points.id.str.endswith("_" + sc)].measured.mean()
            for s in ("mi300x", "mi325x")
        }
        out.append(
            (
                sc,
                m["mi325x"] / m["mi300x"],
                cap_ratio(sc),
                HBM_TB_S["mi325x"] / HBM_TB_S["mi300x"],
                SUSTAINED_CLOCK_MHZ["mi325x"] / SUSTAINED_CLOCK_MHZ["mi300x"],
            )
        )
    return out


@contextlib.contextmanager
def clock_factor(r: float):
    """Price every system of :data:`SYSTEMS` with its dense compute at factor ``r`` (POWER_CLOCK on)."""
    import jalapeno.cost.roofline as roofline
    import jalapeno.fit.table_lookup as table_lookup

    orig, orig_clock = table_lookup.load_any_pricer, roofline.POWER_CLOCK

    def patched(system, efficiency="calibrated", overrides=(), pricer="roofline", stack=None):
        more = (("chip.dense_clock_ratio", r),) if system in SYSTEMS else ()
        return orig(system, efficiency, tuple(overrides) + more, pricer, stack)

    table_lookup.load_any_pricer, roofline.POWER_CLOCK = patched, True
    try:
        yield
    finally:
        table_lookup.load_any_pricer, roofline.POWER_CLOCK = orig, orig_clock


def amd_rows():
    """The MLPerf AMD rows (MeasuredPoints, ``frontier@limits`` for Server / Interactive as validate maps them)."""
    from jalapeno.fit.mlperf import load_mlperf

    ml, _ = load_mlperf(server_mapping="frontier@limits")
    return [p for p in ml if p.system in SYSTEMS]


def predict(pts):
    """predict_points' throughput-per-chip rows for ``pts``, indexed by id."""
    from jalapeno.fit.validate import predict_points
    from jalapeno.fit.validation_run import calibrated_systems

    f = predict_points(pts, calibrated_systems())
    return f[f.metric == "throughput_per_chip"].set_index("id")


def scan(pts) -> dict[str, list[float]]:
    """{row id: error at each of :data:`RATIOS`}."""
    out: dict[str, list[float]] = {}
    for r in RATIOS:
        with clock_factor(r):
            f = predict(pts)
        for i, e in f.error.items():
            out.setdefault(i, []).append(float(e))
    return out


def _scenario(row_id: str) -> str:
    return row_id.rsplit("_", 1)[-1]


def main(run_scan: bool) -> None:
    pts = amd_rows()
    base = predict(pts)
    print("## (1) The declared clock caps against the MI325X / MI300X pair (throughput per chip)\n")
    print(
        "| scenario | MI300X cap, SoC P-state | MI325X cap, SoC P-state | measured ratio | cap ratio | HBM ratio "
        "| MAF clock ratio | model ratio |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for sc, meas, cap, hbm, maf in pair_table(base.reset_index()):
        model = (
            base[(base.system == "mi325x") & base.index.str.endswith("_" + sc)].predicted.mean()
            / base[(base.system == "mi300x") & base.index.str.endswith("_" + sc)].predicted.mean()
        )
        a, b = CLOCK_CAPS[("mi300x", sc)], CLOCK_CAPS[("mi325x", sc)]
        print(
            f"| {sc} | {a[0]} MHz, {a[1]} | {b[0]} MHz, {b[1]} | {meas:.3f} | {cap:.3f} | {hbm:.3f} | {maf:.3f} "
            f"| {model:.3f} |"
        )
    if not run_scan:
        return
    print("\n## (2) The compute clock factor at which each row's error is zero, and the calibration clock it implies\n")
    print(
        "| row | error at r = " + " / ".join(f"{r:g}" for r in RATIOS) + " (%) | r at zero | cap MHz "
        "| implied calibration clock MHz |"
    )
    print("|---|---|---|---|---|")
    for i, errs in scan(pts).items():
        r0 = zero_crossing(RATIOS, errs)
        system = base.loc[i].system
        cap = CLOCK_CAPS.get((system, _scenario(i)), (None,))[0]
        if _scenario(i) == "Interactive":  # frontier@limits, two different engines (round 43): no clock read
            clock = "- (Interactive: frontier@limits, not the run's engine)"
        elif cap:
            clock = f"{implied_table_clock(cap, r0):,.0f}"
        else:
            clock = f"none set ({BOOST_MHZ[system] * r0:,.0f} at boost)"
        errs_s = " / ".join(f"{100 * e:+.1f}" for e in errs)
        print(f"| {i.removeprefix('mlperf51_')} | {errs_s} | {r0:.3f} | {cap or '-'} | {clock} |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scan", action="store_true", help="part 2: the clock factor scan (~1 min)")
    main(ap.parse_args().scan)
