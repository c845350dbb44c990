"""Which chip timed each kernel-table family the gfx942 (MI300X / MI325X) calibration reads, and which clock each
table prices (issue 18, round 42; docs/model.md §4 "Power-limited clock", docs/gap_large_batch_decode.md round 42).

Round 41 built a power-limited clock (cost/roofline.POWER_CLOCK, MI300X ``chip.dense_clock_ratio`` 0.840 =
1,230 / 1,464 MHz, AMD's median clocks under the max-achievable dense FP8 GEMM on the 750 W MI300X and the 1,000 W
MI325X: ROCm blog "Measuring Max-Achievable FLOPs - Part 2", Table 1) and shipped it off because the GEMM rows both
gfx942 sets fit on were tuned on MI300X (ROCm/aiter PR #365), so dividing MI300X's compute by 0.840 would count its
clock twice. This script prints, per family, the table, the commit that added its rows and the chip that timed
them (:data:`FAMILIES`, read from each commit's message and the table's ``cu_num``), then readings of "the clock a
table prices" (:data:`READINGS`; ``shipped`` is main's pricing):

- ``provenance``: a table timed on chip A runs at A's sustained (power-held) clock, so it prices chip B at
  B's clock / A's clock (MAF clocks above). The aiter GEMM family and the MLA decode figure were timed on MI300X:
  MI325X's compute there is 1,464 / 1,230 = 1.190x faster (its ``gemm.fp8_block`` / ``gemm.fp8`` /
  ``mla_decode.*`` peak fractions x 1.190, capped at 1) and MI300X is unchanged; the MI355X (gfx950) fused-MoE
  fit and the H200-derived families are lent as fractions of a peak across architectures, with no sourced clock
  for the lender under that load, so both chips keep them at ratio 1 (named assumption).
- ``provenance_dense``: the same, only for the families that reach cost/roofline.DENSE_UTILISATION of peak (round
  41's named assumption: an op below it draws too little power to be held below boost on either board): of the
  MI300X-timed families only ``gemm.fp8`` (0.44 of peak; ``gemm.fp8_block`` 0.24, MLA decode 0.14).
- ``burst``: the tables price a clock at or above both boards' sustained clocks, taken as MI325X's 1,464 MHz: round
  41's POWER_CLOCK (MI300X 0.840, MI325X 1). Contradicted by :data:`BOARD_PAIR`: the same shapes tuned on the two
  boards differ by about the clock ratio, so each board's tuner timed at its own clock.
- ``light_load``: the 304-CU rows' clock from the per-CU comparison below with the 80-CU part at the 2,100 MHz boost
  (named assumption: 80 CUs stay under the power limit), each board at its sustained clock over it.

The tables themselves speak to the tuning clock: aiter's 304-CU and 80-CU (MI308X, aiter ``chip_info``) block-scale
rows share their 117 shapes; at M >= 8,192 (compute-bound) the 304-CU rows are :func:`per_cu_speed` x faster
per CU than the 80-CU rows (median), i.e. the 304-CU rows ran at that fraction of the 80-CU part's clock if both
reach the same work per CU per clock.

:data:`BOARD_PAIR` holds the one direct measurement: ROCm/aiter 84493f0e5b (PR #3951, "gfx942 MI325X") replaced 48
``cu_num`` 304 rows of ``model_configs/a8w8_blockscale_tuned_gemm_ds_v3.csv`` tuned on MI300X by 1a4121e559 (PR #2881,
"dsv3 blockscale gemm config in mi300") with rows tuned on MI325X at the same (M, N, K); the MI300X / MI325X time
ratio at M >= 1,024 is about the MAF clock ratio (read from the aiter history with ``git show``; not vendored).

``--validate`` prices the MI300X / MI325X rows (InferenceX held out, MLPerf all) under each reading and prints
median |error| / p90 / bias per group. Nothing is fitted.

``--pairs`` prints, for every publication that ran both chips, the measured MI300X / MI325X time ratio of TTFT, TPOT
and throughput beside the model's under each reading.

Run: python scripts/gfx942_table_clock.py [--validate] [--pairs]   (about 1 minute each)
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

import jalapeno.cost.roofline as roofline
import jalapeno.fit.table_lookup as table_lookup
from jalapeno.fit.amd import SUSTAINED_CLOCK_MHZ  # the one statement of the clocks (round 43)
from jalapeno.specs.catalog import load_efficiency


class Family(NamedTuple):
    """One kernel-table family a gfx942 set reads: the parameters, the rows, the commit, the chip that timed them."""

    params: str
    table: str
    source: str
    timed_on: str
    read_as: str


#: what the gfx942 sets read and where each family's times come from (module docstring)
FAMILIES = (
    Family(
        "gemm.fp8_block.*, kernel_launch_s",
        "amd-aiter a8w8_blockscale_tuned_gemm, cu_num 304 (117 rows)",
        "ROCm/aiter 1e8ac92007 (PR #365, 2025-05-01): 'add config for 300' beside 'add config for 308' (80 CUs) "
        "and '355'",
        "mi300x",
        "both sets' own GEMM fit (fit/amd.fit_amd) and its median floor",
    ),
    Family(
        "gemm.fp8.*",
        "the fp8_block fit x the per-channel / block-scale time ratio of the cu_num 80 rows",
        "the same commit's 'config for 308' and a8w8_bpreshuffle_tuned_gemm cu_num 80 (MI308X)",
        "mi300x",
        "absolute speed from the MI300X rows; the ratio is taken on one chip (its clock cancels)",
    ),
    Family(
        "mla_decode.{fp8,bf16}.peak_fraction",
        "367 TFLOPS at batch 128 x context 32k / 2,614.9",
        "ROCm/aiter 04427a5d8f (PR #3188): 'Tested on MI300X ... Peak: 367 TFLOPS'",
        "mi300x",
        "fit/amd.AITER_MLA_DECODE_PEAK_FRACTION on every AMD set",
    ),
    Family(
        "moe.{bf16,fp8}.*, moe_floor_s",
        "amd-aiter tuned_fmoe, cu_num 256",
        "aiter's MI355X rows (gfx950)",
        "mi355x",
        "lent (fit/amd.MOE_FROM, DeepSeek's shape held out)",
    ),
    Family(
        "moe.fp8_block.* (fit/amd.GFX942_PACKAGE, off)",
        "data/kernels/aiter_gfx942_fmoe_ds_v3.csv, cu_num 304",
        "ROCm/aiter 84493f0e5b (PR #3951): 'gfx942 MI325X: tuned ... FMoE configs'",
        "mi325x",
        "only with the package on",
    ),
    Family(
        "attention, gemm.bf16, mla_prefill, hbm_fraction",
        "calibrate.derived_set (derived_from = 'h200')",
        "NVIDIA H200 tables",
        "h200",
        "fractions of the AMD peak at its 2,100 MHz boost",
    ),
)
#: MI300X / MI325X time of the same block-scale FP8 shapes tuned on each board (module docstring): (median, 25th and
#: 75th percentile, shapes) at M >= 1,024, from ROCm/aiter 1a4121e559 (MI300X) and 84493f0e5b (MI325X) rows
BOARD_PAIR = (1.158, 1.128, 1.188, 23)
#: compute units of each aiter ``cu_num`` part (fit/amd.AITER_CU; 80: MI308X)
CU_PAIR = (304, 80)
#: the rows taken as compute-bound in :func:`per_cu_speed`
MIN_M = 8192
#: the parameters a family timed on MI300X sets (flat efficiency keys) and the chips under study
MI300X_TIMED = (
    "gemm.fp8_block.peak_fraction",
    "gemm.fp8.peak_fraction",
    "mla_decode.fp8.peak_fraction",
    "mla_decode.bf16.peak_fraction",
)
SYSTEMS = ("mi300x", "mi325x")


def per_cu_speed(rows: pd.DataFrame, cus: tuple[int, int] = CU_PAIR, min_m: int = MIN_M) -> tuple[float, int]:
    """(median per-CU speed of the ``cus[0]`` rows over the ``cus[1]`` rows, shapes) on the (M, N, K) both hold with
    M >= ``min_m``: (t_b / t_a) / (cu_a / cu_b), 1 when both run the same work per CU per second.

    ``rows``: aiter GEMM columns ``cu_num, M, N, K, us``.

    Raises:
        ValueError: no shape with M >= ``min_m`` in both.
    """
    a, b = (rows[rows.cu_num == c].groupby(["M", "N", "K"], as_index=False).us.min() for c in cus)
    j = a.merge(b, on=["M", "N", "K"], suffixes=("_a", "_b"))
    j = j[j.M >= min_m]
    if not len(j):
        raise ValueError(f"no shape with M >= {min_m} at both cu_num {cus}")
    return float(np.median(j.us_b / j.us_a) * cus[1] / cus[0]), int(len(j))


def provenance_overrides(system: str, dense_only: bool = False) -> tuple[tuple[str, float], ...]:
    """``--set`` overrides pricing ``system`` at its sustained clock over the MI300X clock its MI300X-timed
    families carry (:data:`MI300X_TIMED`, x :data:`SUSTAINED_CLOCK_MHZ` ratio, capped at 1); none for MI300X.
    ``dense_only``: only the families whose fraction reaches cost/roofline.DENSE_UTILISATION (round 41's named
    assumption: an op below it draws too little power to be held below its boost clock, on either board)."""
    r = SUSTAINED_CLOCK_MHZ[system] / SUSTAINED_CLOCK_MHZ["mi300x"]
    if r == 1.0:
        return ()
    eff = load_efficiency(system, "calibrated")
    out = []
    for key in MI300X_TIMED:
        op, fmt, _ = key.split(".")
        entry = getattr(eff, op).get(fmt)
        if entry is None or entry.peak_fraction is None:
            continue
        if not dense_only or entry.peak_fraction >= roofline.DENSE_UTILISATION:
            out.append((f"efficiency.{key}", min(1.0, entry.peak_fraction * r)))
    return tuple(out)


#: the readings :func:`reading` prices under (module docstring)
READINGS = ("shipped", "provenance", "provenance_dense", "burst", "light_load")
#: gfx942's boost clock, MHz (AMD Instinct MI300X / MI325X datasheets: the clock the peaks assume); ``light_load``
#: takes it as the 80-CU MI308X's clock under aiter's tuner (named assumption: 80 CUs stay below the power limit)
BOOST_MHZ = 2100.0


@contextlib.contextmanager
def reading(name: str):
    """Price the gfx942 sets under reading ``name`` (:data:`READINGS`, module docstring).

    Raises:
        ValueError: an unknown reading.
    """
    if name not in READINGS:
        raise ValueError(f"reading {name!r} is none of {READINGS}")
    orig, orig_clock = table_lookup.load_any_pricer, roofline.POWER_CLOCK
    extra = (
        {s: provenance_overrides(s, name == "provenance_dense") for s in SYSTEMS}
        if name.startswith("provenance")
        else {}
    )
    if name == "light_load":  # both boards at their sustained clock over the 304-CU rows' clock
        from jalapeno.fit.amd import read_table

        rows_mhz = per_cu_speed(read_table("a8w8_blockscale_tuned_gemm"))[0] * BOOST_MHZ
        extra = {s: (("chip.dense_clock_ratio", min(1.0, SUSTAINED_CLOCK_MHZ[s] / rows_mhz)),) for s in SYSTEMS}

    def patched(system, efficiency="calibrated", overrides=(), pricer="roofline", stack=None):
        more = extra.get(system, ()) if efficiency == "calibrated" else ()
        return orig(system, efficiency, tuple(overrides) + more, pricer, stack)

    table_lookup.load_any_pricer = patched
    roofline.POWER_CLOCK = name in ("burst", "light_load")
    try:
        yield
    finally:
        table_lookup.load_any_pricer, roofline.POWER_CLOCK = orig, orig_clock


def groups(rows: pd.DataFrame) -> pd.DataFrame:
    """Median |error|, p90 |error| and median error (%) per source x system x metric of the unflagged rows."""
    r = rows[(rows.quality.isna() | (rows.quality.astype(str) == "")) & rows.error.notna()]
    g = r.groupby(["source", "system", "metric"]).error
    return pd.DataFrame(
        {
            "n": g.size(),
            "median": g.apply(lambda e: 100 * e.abs().median()),
            "p90": g.apply(lambda e: 100 * e.abs().quantile(0.9)),
            "bias": 100 * g.median(),
        }
    )


def validate(name: str) -> pd.DataFrame:
    """Rows of InferenceX held out and MLPerf (all rows) for :data:`SYSTEMS` under reading ``name``."""
    from jalapeno.cli.validate_cmds import validate as cli_validate

    out = []
    with reading(name), tempfile.TemporaryDirectory() as d:
        for held_out, mlperf in ((True, False), (False, True)):
            path = Path(d) / "rows.csv"
            with contextlib.redirect_stdout(None):
                cli_validate(
                    points=None,
                    aiconfigurator=False,
                    efficiency="calibrated",
                    mlperf=mlperf,
                    stack=None,
                    pricer="roofline",
                    systems=",".join(SYSTEMS),
                    held_out=held_out,
                    json_out=True,
                    html=None,
                    out=str(path),
                )
            rows = pd.read_csv(path)
            out.append(rows[rows.source == ("inferencex" if held_out else "mlperf")])
    return pd.concat(out, ignore_index=True)


def pair_ratios(metric: str) -> list[tuple[str, float, list[float]]]:
    """(pair, measured MI300X/MI325X time ratio, the model's under each of :data:`READINGS`) for every publication
    that ran both chips (scripts/gfx942_pair.py's pairing; ``metric`` a time or a rate, given as a time ratio)."""
    import sys

    from jalapeno.fit.mlperf import load_mlperf
    from jalapeno.fit.validate import predict_points
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validation_run import DEFAULT_POINTS, calibrated_systems

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import gfx942_pair as gp

    ix, _ = load_inferencex(DEFAULT_POINTS)
    ml, _ = load_mlperf(server_mapping="frontier@limits")
    pts = [p for p in ix + ml if p.system in SYSTEMS]
    res = {}
    for name in READINGS:
        with reading(name):
            f = predict_points(pts, calibrated_systems())
        res[name] = f[f.metric == metric].set_index("id")
    keys, ids = gp._ix_keys(), {}
    for r in res["shipped"].dropna(subset=["error"]).itertuples():
        k = keys[r.Index][:10] if r.source == "inferencex" else gp._ml_key(r.Index)
        ids.setdefault(k, {})[r.system] = r.Index
    out, rate = [], metric in ("throughput_per_chip", "interactivity")
    for k, d in sorted(ids.items(), key=str):
        if len(d) < 2:
            continue
        a, b = (res["shipped"].loc[d[s]] for s in SYSTEMS)
        meas = b.measured / a.measured if rate else a.measured / b.measured
        model = [
            (res[n].loc[d[SYSTEMS[1]]].predicted / res[n].loc[d[SYSTEMS[0]]].predicted) ** (1 if rate else -1)
            for n in READINGS
        ]
        out.append((f"{k[0]} {k[4]}/{k[5]} C={k[6]} {k[2]}" if isinstance(k, tuple) else k, meas, model))
    return out


def main(run_validate: bool, pairs: bool) -> None:
    print("| parameters | rows | source | timed on | read as |\n|---|---|---|---|---|")
    for f in FAMILIES:
        print(f"| {f.params} | {f.table} | {f.source} | {f.timed_on} | {f.read_as} |")
    from jalapeno.fit.amd import read_table

    speed, n = per_cu_speed(read_table("a8w8_blockscale_tuned_gemm"))
    med, lo, hi, n_pair = BOARD_PAIR
    clock = SUSTAINED_CLOCK_MHZ["mi325x"] / SUSTAINED_CLOCK_MHZ["mi300x"]
    print(
        f"\nsame shapes tuned on MI300X and MI325X (cu_num 304, M >= 1024, n {n_pair}): time ratio {med:.3f} "
        f"(IQR {lo:.3f}-{hi:.3f}); MAF clock ratio {clock:.3f}"
    )
    print(f"block-scale FP8 rows, cu_num {CU_PAIR[0]} over {CU_PAIR[1]}, per CU, M >= {MIN_M} (n {n}): {speed:.3f}")
    for s in SYSTEMS:
        for dense in (False, True):
            print(f"provenance{'_dense' if dense else ''} overrides {s}: {provenance_overrides(s, dense) or 'none'}")
    if pairs:
        for metric in ("ttft_s", "tpot_s", "throughput_per_chip"):
            print(f"\n{metric}, MI300X / MI325X time ratio: pair | measured | " + " | ".join(READINGS))
            for name, meas, model in pair_ratios(metric):
                print(f"| {name} | {meas:.3f} | " + " | ".join(f"{x:.3f}" for x in model) + " |")
    if not run_validate:
        return
    names = READINGS
    figs = {name: groups(validate(name)) for name in names}
    print(
        "\nmedian |error| / p90 / bias, %\n\n| group | n | " + " | ".join(names) + " |\n|---|---|" + "---|" * len(names)
    )
    for key, row in figs["shipped"].iterrows():
        cells = [
            " / ".join(
                f"{figs[n].loc[key, c]:+.1f}" if c == "bias" else f"{figs[n].loc[key, c]:.1f}"
                for c in ("median", "p90", "bias")
            )
            for n in names
        ]
        print(f"| {' '.join(key)} | {int(row.n)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--validate", action="store_true", help="price the MI300X/MI325X rows under each reading")
    ap.add_argument("--pairs", action="store_true", help="the MI300X/MI325X pairs' measured and modelled ratios")
    a = ap.parse_args()
    main(a.validate, a.pairs)
