"""The gfx942 dense-op calibration clock of fit/amd_clock_caps, fitted on the peer runs of AMD's MLPerf Llama-2-70B
Offline engine, and the AMD rows with the declared clock caps priced (issue 18; docs/gap_large_batch_decode.md
"Round 55 (mlperf55)").

Fit split: fit/amd_clock_caps.PEER_OFFLINE_RUNS, the v5.1 closed Offline runs of other submitters at AMD's own engine
and caps (Dell MI300X; ASUSTeK, MiTAC, Quanta MI325X). A peer's throughput per chip is its chip's AMD validation row's
measured figure times the ratio of their LoadGen tokens per second (same engine, dataset and mean output length). For
a clock C the model prices the AMD Offline row of the peer's chip with its compute at the Offline cap (MI300X 1,400,
MI325X 1,700 MHz) over C; each chip is one group, weighted equally; the fitted clock leaves the mean of the group mean
errors at zero (bisection: the error falls as C rises). The AMD validation rows are not in the fit.

Parts: (1) the peers and their errors at the shipped clock; (2) ``--fit``: the bisection; (3) every AMD Llama-2-70B
row (frontier@limits for Server / Interactive, as validate maps them) with the switch off and on.

Usage: ``python scripts/amd_clock_cap55.py [--fit]`` (about half a minute; ``--fit`` a minute more).
"""

from __future__ import annotations

import argparse
import contextlib

import jalapeno.fit.amd_clock_caps as acc

#: the bisection's bracket (MHz) and tolerance: the clock lies between MI300X's Offline cap and gfx942's boost
BRACKET_MHZ = (1400.0, 2100.0)
TOL_MHZ = 1.0


@contextlib.contextmanager
def calibration(clock_mhz: float, on: bool = True):
    """fit/amd_clock_caps with the switch ``on`` and the dense-op calibration clock ``clock_mhz``, restored after."""
    old = acc.MLPERF_AMD_CLOCK_CAP_ON, acc.GFX942_DENSE_CALIBRATION_MHZ
    acc.MLPERF_AMD_CLOCK_CAP_ON, acc.GFX942_DENSE_CALIBRATION_MHZ = on, clock_mhz
    try:
        yield
    finally:
        acc.MLPERF_AMD_CLOCK_CAP_ON, acc.GFX942_DENSE_CALIBRATION_MHZ = old


def amd_rows(ids=None):
    """The MLPerf MI300X / MI325X rows as validate maps them (MeasuredPoints; ``ids``: only these)."""
    from jalapeno.fit.mlperf import load_mlperf

    ml, _ = load_mlperf(server_mapping="frontier@limits")
    return [p for p in ml if p.system in ("mi300x", "mi325x") and (ids is None or p.id in ids)]


def predicted(ids=None) -> dict[str, tuple[float, float]]:
    """{row id: (measured, predicted throughput per chip)} of the AMD rows under the current switch state."""
    from jalapeno.fit.validate import predict_points
    from jalapeno.fit.validation_run import calibrated_systems

    f = predict_points(amd_rows(ids), calibrated_systems())
    f = f[f.metric == "throughput_per_chip"]
    return {i: (float(m), float(p)) for i, m, p in zip(f.id, f.measured, f.predicted)}


def peer_measured() -> list[tuple[str, str, float]]:
    """(submitter, chip, throughput per chip) of each peer run: its validation row's measured figure times the ratio of
    their tokens per second."""
    from jalapeno.fit.mlperf import load_mlperf

    ml, _ = load_mlperf(server_mapping="frontier@limits")
    meas = {p.id: p.measured["throughput_per_chip"] for p in ml}
    out = []
    for sub, _system, chip, tps, _sps in acc.PEER_OFFLINE_RUNS:
        key, amd_tps, _ = acc.AMD_OFFLINE_RUNS[chip]
        out.append((sub, chip, meas[key] * tps / amd_tps))
    return out


def peer_errors(clock_mhz: float, peers) -> dict[str, list[float]]:
    """{chip: [error of each peer]} with the Offline rows priced at calibration clock ``clock_mhz``."""
    ids = {v[0] for v in acc.AMD_OFFLINE_RUNS.values()}
    with calibration(clock_mhz):
        pred = predicted(ids)
    out: dict[str, list[float]] = {}
    for _sub, chip, m in peers:
        out.setdefault(chip, []).append(pred[acc.AMD_OFFLINE_RUNS[chip][0]][1] / m - 1.0)
    return out


def group_mean(errors: dict[str, list[float]]) -> float:
    """The mean over chips of each chip's mean error (each group weighted equally).

    >>> group_mean({"a": [0.1, 0.3], "b": [-0.2]})
    0.0
    """
    means = [sum(v) / len(v) for v in errors.values()]
    return sum(means) / len(means)


def fit(peers) -> float:
    """The calibration clock (MHz) at which :func:`group_mean` of the peers' errors is zero (bisection)."""
    lo, hi = BRACKET_MHZ
    while hi - lo > TOL_MHZ:
        mid = (lo + hi) / 2
        if group_mean(peer_errors(mid, peers)) > 0:  # priced too fast: the calibration clock is higher
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def main(run_fit: bool) -> None:
    peers = peer_measured()
    clock = acc.GFX942_DENSE_CALIBRATION_MHZ
    print(f"## (1) The fit split at the shipped calibration clock {clock:,.0f} MHz\n")
    print("| submitter | chip | throughput per chip (tok/s) | model error |")
    print("|---|---|---|---|")
    errs = peer_errors(clock, peers)
    seen: dict[str, int] = {}
    for sub, chip, m in peers:
        i = seen.get(chip, 0)
        seen[chip] = i + 1
        print(f"| {sub} | {chip} | {m:,.1f} | {100 * errs[chip][i]:+.2f}% |")
    print(f"\nmean of the chips' mean errors: {100 * group_mean(errs):+.2f}%")
    if run_fit:
        print(f"\n## (2) Fitted calibration clock: {fit(peers):,.0f} MHz (bisection, tolerance {TOL_MHZ:g} MHz)")
    print("\n## (3) The AMD Llama-2-70B rows, switch off / on (throughput per chip, signed error)\n")
    with calibration(clock, on=False):
        off = predicted()
    with calibration(clock, on=True):
        on = predicted()
    print("| row | measured | off | on |")
    print("|---|---|---|---|")
    for i, (m, p) in off.items():
        print(
            f"| {i.removeprefix('mlperf51_')} | {m:,.1f} | {100 * (p / m - 1):+.1f}% | {100 * (on[i][1] / m - 1):+.1f}% |"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", action="store_true", help="part 2: the bisection for the calibration clock (~1 min)")
    main(ap.parse_args().fit)
