"""GB200 disaggregated DeepSeek-R1 rows of a validate CSV, grouped by the decode pool's layout (round 43, gb200ix43;
diagnosis, nothing fitted or written; docs/gap_disagg_overprediction.md, "IX GB200 throughput bias").

The decode layout is read from the deployment column (``D Nx(attn TPa DPb ...)``: attention TP a, DP b); per source,
framework, layout and metric it prints n and the median signed error (predicted / measured − 1). A DEP32 pool
(attention DP32, MoE EP32 over eight NVL72 trays) is where both the InferenceX and the aiconfigurator rows price the
decode step too fast (TPOT error negative). Run: python scripts/gb200_decode_layout43.py VALIDATE.csv
(``jalapeno validate --held-out -o VALIDATE.csv``).
"""

from __future__ import annotations

import re
import sys

import pandas as pd

_DECODE = re.compile(r"D (\d+)x\(attn TP(\d+) DP(\d+)")
METRICS = ("tpot_s", "throughput_per_chip", "interactivity")


def decode_layout(deployment: str) -> str:
    """The decode pool's attention layout of a deployment string, ``"TPaDPb"``; ``"?"`` when it names none.

    >>> decode_layout("disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp4]")
    'TP1DP32'
    >>> decode_layout("")
    '?'
    """
    m = _DECODE.search(str(deployment))
    return f"TP{m[2]}DP{m[3]}" if m else "?"


def main(path: str) -> None:
    """Print the groups of the validate CSV at ``path`` (columns system, mode, model, deployment, metric, error)."""
    d = pd.read_csv(path)
    d = d[(d.system == "gb200-nvl72") & (d["mode"] == "disagg") & d.model.str.contains("deepseek")]
    d = d[d.metric.isin(METRICS)].assign(decode=d.deployment.map(decode_layout))
    g = d.groupby(["source", "framework", "decode", "metric"]).error.agg(["count", "median"])
    print(g.round(3).to_string())


if __name__ == "__main__":
    main(sys.argv[1])
