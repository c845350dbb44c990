"""What the GB200/GB300 TensorRT-LLM disaggregated aiconfigurator rows keep of their TTFT error after the round-robin
decode-slot wait, row by row (issue 18, round 30; diagnosis, nothing fitted).

Each unflagged GB200/GB300 TensorRT-LLM disaggregated row of a validate CSV (``jalapeno validate -o FILE``; its
``quality`` column) is predicted three times: as shipped, with the load-aware router (no round-robin wait: the wait
is the difference) and with no idle-start burst (the burst share set to ~0: the burst is the difference). It prints
per row the decode pool (workers x slots a worker: the recipe's decode cap, fit/aic_decode_caps.py), the load against
that cap, the measured and predicted TTFT, the wait, the burst, what is left (measured − predicted) and the TPOT
error (positive: the model's TPOT too slow), then the medians by ISL/OSL and by load band. Run:
python scripts/gb_trt_disagg_residual.py VALIDATE.csv [--held-out]
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np
import pandas as pd

#: a burst share that removes the idle-start burst without dividing by zero (as scripts/aic_ttft_split.py)
_NO_BURST = 1e-12
SYSTEMS = ("gb200-nvl72", "gb300-nvl72")


def _ttft(points, stack_of) -> pd.Series:
    from jalapeno.fit.validate import predict_points

    got = predict_points(points, stack_of=stack_of)
    return got[got.metric == "ttft_s"].set_index("id").predicted


def main() -> None:
    from jalapeno.fit.validate import load_aiconfigurator, point_stack

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("validate_csv")
    ap.add_argument("--held-out", action="store_true", help="only the rows the CSV's split marks held_out")
    args = ap.parse_args()
    csv = pd.read_csv(args.validate_csv)
    csv = csv[(csv.source == "aiconfigurator") & (csv.metric.isin(["ttft_s", "tpot_s"]))]
    keep = csv[(csv.metric == "ttft_s") & csv.quality.isna()]
    if args.held_out:
        keep = keep[keep.split == "held_out"]
    tpot_err = csv[csv.metric == "tpot_s"].set_index("id").error
    pts = [
        p
        for p in load_aiconfigurator()[0]
        if p.mode == "disagg" and p.system in SYSTEMS and p.framework.startswith("trtllm") and p.id in set(keep.id)
    ]
    full = _ttft(pts, point_stack)
    no_rr = _ttft(pts, lambda p: dataclasses.replace(point_stack(p), disagg_router="load_aware"))
    no_burst = _ttft(pts, lambda p: dataclasses.replace(point_stack(p), prefill_burst_fraction=_NO_BURST))
    rows = []
    for p in pts:
        d = p.deployment
        slots = d.max_running * d.decode.layout.dp if d.max_running is not None else None
        cap = d.decode.workers * slots if slots else None
        m = p.measured["ttft_s"]
        rows.append(
            {
                "row": p.id.split("_disagg_")[-1],
                "sys": p.system[:5],
                "fw": p.framework.split()[-1],
                "prec": p.precision,
                "isl": p.isl,
                "osl": p.osl,
                "C": int(p.concurrency),
                "pool": f"{d.decode.workers}x{slots or '-'}",
                "C/cap": p.concurrency / cap if cap else np.nan,
                "meas": m,
                "pred": full[p.id],
                "rr": full[p.id] - no_rr[p.id],
                "burst": full[p.id] - no_burst[p.id],
                "left": m - full[p.id],
                "err": full[p.id] / m - 1,
                "tpot_err": tpot_err.get(p.id, np.nan),
            }
        )
    df = pd.DataFrame(rows).sort_values(["sys", "isl", "osl", "pool", "C"])
    with pd.option_context("display.width", 250, "display.max_rows", 500, "display.float_format", "{:.3f}".format):
        print(df.to_string(index=False))
        band = pd.cut(df["C/cap"], [0, 0.5, 0.99, 1.01, np.inf], labels=["<0.5", "0.5-1", "=1 (cap)", ">1"])
        agg = {
            "n": ("err", "size"),
            "err_med": ("err", "median"),
            "abs_med": ("err", lambda e: e.abs().median()),
            "left_med_s": ("left", "median"),
            "rr_med_s": ("rr", "median"),
            "tpot_err_med": ("tpot_err", "median"),
        }
        print("\nby system and ISL/OSL")
        print(df.groupby(["sys", "isl", "osl"]).agg(**agg).to_string())
        print("\nby system and load against the decode cap")
        print(df.assign(band=band).groupby(["sys", "band"], observed=True).agg(**agg).to_string())


if __name__ == "__main__":
    main()
