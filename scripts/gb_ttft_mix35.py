"""Why the held-out GB200/GB300 aiconfigurator TTFT medians are about twice B200/B300's (issue 18, round 35; diagnosis).

Reads a `jalapeno validate --held-out --json -o X.csv` table, keeps the aiconfigurator ``ttft_s`` rows outside the fit
split and unflagged (the issue's held-out judgement) of gb200-nvl72, gb300-nvl72, b200 and b300, and prints per system
the median |error| and median signed error of all rows and of the like-for-like subset: the same model (DeepSeek-R1)
and mode. The claim it checks: the NVL72 systems' rows are all DeepSeek-R1/Kimi-K2.5 (mostly disaggregated) rows,
while most B200/B300 rows are aggregated dense or mid-size MoE rows; on DeepSeek-R1 alone B200 is no better than GB200.
Nothing is predicted or fitted. Run: python scripts/gb_ttft_mix35.py VALIDATE.csv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gb_ttft_median_need as median_need  # noqa: E402  (a sibling script)

SYSTEMS = ("gb200-nvl72", "gb300-nvl72", "b200", "b300")


def held_out(path: str) -> pd.DataFrame:
    """The issue's held-out aiconfigurator TTFT rows of SYSTEMS in a validate CSV, with |error| as ``ae``
    (gb_ttft_median_need.held_out_ttft's filter)."""
    d = median_need.held_out_ttft(path, {"model", "mode"}, SYSTEMS)
    d["ae"] = d.error.abs()
    return d


def summary(d: pd.DataFrame) -> pd.DataFrame:
    """Per (system, subset) the row count, median |error| and median signed error (fractions)."""
    parts = [
        d.assign(subset="all"),
        d[d.model == "deepseek-r1"].assign(subset="deepseek-r1"),
        d[(d.model == "deepseek-r1") & (d["mode"] == "disagg")].assign(subset="deepseek-r1 disagg"),
        d[(d.model == "deepseek-r1") & (d["mode"] == "agg")].assign(subset="deepseek-r1 agg"),
    ]
    a = pd.concat(parts)
    return (
        a.groupby(["system", "subset"])
        .agg(n=("ae", "size"), median=("ae", "median"), bias=("error", "median"))
        .round(3)
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv", help="a `jalapeno validate --held-out --json -o X.csv` table")
    args = p.parse_args()
    d = held_out(args.csv)
    pd.set_option("display.width", 200)
    print(summary(d).to_string())
    print()
    print(
        d.groupby(["system", "mode", "model"])
        .agg(n=("ae", "size"), median=("ae", "median"), bias=("error", "median"))
        .round(3)
        .to_string()
    )


if __name__ == "__main__":
    main()
