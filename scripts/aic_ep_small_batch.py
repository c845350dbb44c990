#!/usr/bin/env python3
"""What-if: the H200 gpt-oss-120b TensorRT-LLM rows of 2025-11-02 priced at MoE EP = TP (as their script ran them)
and at MoE TP (the fields), TPOT by workload and concurrency: whether EP at small batch is over-priced.

Round 29 (dpattn29; docs/gap_aic_ttft.md, "The 2025-11-02 TensorRT-LLM rows' DP_ATTENTION switch as run"): ep28
restated these rows to EP = TP (gptoss_fp4_h200_trt_slurm.sh @9596d23d7, ``--ep_size=$TP``) and the TP2 TPOT bias
moved +0.2 → +4.6%. Nothing is written.

Run:
    python scripts/aic_ep_small_batch.py [--tp 2]
"""

from __future__ import annotations

import argparse
import dataclasses

import pandas as pd


def main(argv=None) -> None:
    """Print measured TPOT (ms), the EP and TP predictions (ms) and their errors (%) per (ISL, OSL, C)."""
    from importlib.resources import files

    from jalapeno.fit.validate import load_aiconfigurator, predict_points

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tp", type=int, default=2, help="the rows' tensor-parallel size (2, 4 or 8)")
    args = ap.parse_args(argv)
    f = pd.read_csv(files("aiconfigurator_core") / "systems" / "silicon_sample.csv")
    f = f[
        f["id"].str.contains("gpt_oss_120b_h200_sxm_trtllm")
        & f["id"].str.contains(f"_tp{args.tp}_")
        & f["silicon_data_source"].str.contains("measured=2025-11-02")
    ]
    pts = load_aiconfigurator(f)[0]
    as_tp = [
        dataclasses.replace(
            p,
            deployment=dataclasses.replace(
                p.deployment,
                decode=dataclasses.replace(
                    p.deployment.decode, layout=dataclasses.replace(p.deployment.decode.layout, ep=1)
                ),
            ),
        )
        for p in pts
    ]
    ep, tp = (d[d["metric"] == "tpot_s"].set_index("id") for d in (predict_points(pts), predict_points(as_tp)))
    out = ep[["isl", "osl", "concurrency", "measured", "predicted", "error"]].join(
        tp[["predicted", "error"]].add_suffix("_tp")
    )
    out = out.groupby(["isl", "osl", "concurrency"]).mean(numeric_only=True)
    print(
        pd.DataFrame(
            {
                "measured_ms": 1e3 * out["measured"],
                "ep_ms": 1e3 * out["predicted"],
                "tp_ms": 1e3 * out["predicted_tp"],
                "ep_err_%": 100 * out["error"],
                "tp_err_%": 100 * out["error_tp"],
            }
        )
        .round(2)
        .to_string()
    )


if __name__ == "__main__":
    main()
