"""Break aiconfigurator's largest TTFT error groups down by what varies inside them (docs/gap_aic_ttft.md).

Runs `jalapeno validate`'s prediction (fit/validation_run.run_validation, aiconfigurator-core installed:
pip install -e ".[calibrate]") and prints, for the aiconfigurator TTFT groups docs/gap_aic_ttft.md
discusses, the median |error| / bias / n split by engine, ISL, concurrency band and layout, and the rows
of the small groups (measured and predicted TTFT and TPOT). ``--sglang-separate`` also prices the
aggregated SGLang rows with prefill-only steps (Deployment.prefill_steps = "separate") and prints both.
Nothing is fitted or written. Run: python scripts/aic_ttft_groups.py [--rows] [--sglang-separate]
(about a minute each)
"""

from __future__ import annotations

import argparse
import dataclasses

import pandas as pd

from jalapeno.fit.validate import load_aiconfigurator, predict_points
from jalapeno.fit.validation_run import run_validation

BANDS = [0, 4, 16, 64, 256, 1e9]


def _stat(e: pd.Series) -> str:
    e = e.dropna()
    return f"{e.abs().median():.1%} {e.median():+.1%} n{len(e)}" if len(e) else "-"


def _rows(df: pd.DataFrame) -> pd.DataFrame:
    """aiconfigurator TTFT and TPOT side by side, one line per row."""
    p = (
        df[df.metric.isin(["ttft_s", "tpot_s"])]
        .pivot_table(
            index=["id", "framework", "isl", "concurrency", "deployment"],
            columns="metric",
            values=["measured", "predicted"],
        )
        .reset_index()
    )
    p.columns = ["_".join(c).strip("_") for c in p.columns]
    return p.sort_values(["framework", "deployment", "isl", "concurrency"]).drop(columns="id")


def sglang_separate() -> None:
    """The aggregated SGLang rows' TTFT and TPOT with prompt chunks in the decode step and with
    prefill-only steps (every fitted constant unchanged)."""
    pts = [p for p in load_aiconfigurator()[0] if p.framework.startswith("sglang") and p.mode == "agg"]
    sep = [dataclasses.replace(p, deployment=dataclasses.replace(p.deployment, prefill_steps="separate")) for p in pts]
    for name, got in (("mixed", predict_points(pts)), ("separate", predict_points(sep))):
        for metric in ("ttft_s", "tpot_s"):
            e = got[got.metric == metric]
            print(name, metric, "all", _stat(e.error), e.groupby("system").error.agg(_stat).to_dict())


def main(show_rows: bool) -> None:
    rows = run_validation()["rows"]
    aic = rows[rows.source == "aiconfigurator"].copy()
    aic["engine"] = aic.framework.str.split().str[0]
    aic["band"] = pd.cut(aic.concurrency, BANDS, labels=["C<=4", "C<=16", "C<=64", "C<=256", "C>256"])
    aic["moe"] = aic.deployment.str.extract(r"MoE TP\d+ (EP\d+)")[0].fillna("dense")
    aic["prefill"] = aic.deployment.str.extract(r"P \d+x\(attn (TP\d+ DP\d+)")[0]
    ttft = aic[aic.metric == "ttft_s"]
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 30)

    def group(system, model, mode):
        return ttft[(ttft.system == system) & (ttft.model == model) & (ttft["mode"] == mode)]

    print("== B200 DeepSeek-R1 aggregated: engine x ISL x concurrency band")
    g = group("b200", "deepseek-r1", "agg")
    print(g.groupby(["engine", "isl", "band"], observed=True).error.agg(_stat).unstack().to_string())
    print("\n== B200 / B300 DeepSeek-R1 aggregated: engine x precision x MoE layout")
    g = ttft[ttft.system.isin(["b200", "b300"]) & (ttft.model == "deepseek-r1") & (ttft["mode"] == "agg")]
    print(g.groupby(["system", "engine", "precision", "moe", "isl"]).error.agg(_stat).unstack().to_string())
    print("\n== TensorRT-LLM aggregated at C <= 4: measured / predicted medians (s)")
    g = ttft[(ttft.engine == "trtllm") & (ttft["mode"] == "agg") & (ttft.concurrency <= 4)]
    print(
        g.groupby(["system", "model", "isl"])
        .agg(err=("error", _stat), measured=("measured", "median"), predicted=("predicted", "median"))
        .to_string()
    )
    print("\n== Disaggregated, TensorRT-LLM / SGLang: prefill worker layout")
    g = ttft[ttft["mode"] == "disagg"]
    print(
        g.groupby(["engine", "system", "model", "prefill"])
        .agg(
            err=("error", _stat),
            measured=("measured", "median"),
            predicted=("predicted", "median"),
            c_median=("concurrency", "median"),
        )
        .to_string()
    )
    if show_rows:
        for system in ("h100", "h200"):
            print(f"\n== {system} DeepSeek-R1 disaggregated rows")
            print(
                _rows(
                    aic[(aic.system == system) & (aic.model == "deepseek-r1") & (aic["mode"] == "disagg")]
                ).to_string()
            )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", action="store_true", help="also print the H100/H200 disaggregated rows")
    ap.add_argument(
        "--sglang-separate",
        action="store_true",
        help="only compare the aggregated SGLang rows with mixed and with prefill-only steps",
    )
    args = ap.parse_args()
    if args.sglang_separate:
        sglang_separate()
    else:
        main(args.rows)
