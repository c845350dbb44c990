"""MI300X InferenceX TTFT rows split by recipe: the fixed cost and per-token slope of the under-prediction (issue 18, round 35).

Reads a ``jalapeno validate --json -o FILE.csv`` output, keeps the InferenceX MI300X ``ttft_s`` rows, prints each
row's measured and predicted TTFT (s) and error, and for every (model, framework, deployment) family with rows at two
or more input lengths the straight line through the gap measured − predicted against ISL: its intercept (ms, a
fixed cost per request) and slope (µs per prompt token, a prefill-rate shortfall). Nothing is fitted into the model
or written. Run: python scripts/ix_mi300x_ttft_split35.py VALIDATE.csv
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd


def main(path: str) -> None:
    d = pd.read_csv(path)
    d = d[(d.source == "inferencex") & (d.system == "mi300x") & (d.metric == "ttft_s")]
    cols = ["id", "model", "framework", "stack", "isl", "osl", "concurrency", "measured", "predicted", "error"]
    print(d[cols].to_string(index=False))
    print(f"\nmedian |error| {np.median(np.abs(d.error)) * 100:.1f}%  bias {np.median(d.error) * 100:+.1f}%")
    for key, g in d.groupby(["model", "framework", "deployment"]):
        if g.isl.nunique() < 2:
            continue
        gap = g.measured - g.predicted
        slope, icpt = np.polyfit(g.isl.astype(float), gap, 1)
        ratio = (g.measured / g.predicted).round(2).tolist()
        print(
            f"{' · '.join(key)}: gap = {icpt * 1e3:+.1f} ms {slope * 1e6:+.2f} µs/token × ISL; measured/predicted {ratio}"
        )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/ix_mi300x_ttft_split35.py VALIDATE.csv (from jalapeno validate --json -o)")
    main(sys.argv[1])
