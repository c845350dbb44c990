"""aiconfigurator's held-out interactivity outliers (the model over 40% too fast) set beside their own sweeps.

docs/gap_aic_itl.md (round 32, aicq32) asks of every held-out aiconfigurator row whose interactivity the model
over-predicts by more than :data:`OUTLIER` whether its data's quality rules (fit/aic_quality.py, rules A-F;
fit/aic_consistency.py, G and H) should flag it or the model misses a mechanism. A quality rule compares a row
with other rows; a row that continues its own sweep gives such a rule nothing to hold it to. So each outlier is
printed beside the rows of its campaign (system, model, framework and release, precision, mode, ISL, OSL and
deployment string, fit and held-out splits alike, flagged rows included), with three readings of the sweep:

1. ``err``: each row's interactivity error at its concurrency (``*`` marks the outlier, ``f`` a row of the fit
   split, ``q`` a flagged row): an outlier inside a sweep whose other rows, fitted ones too, carry the same excess
   is the model's, not the row's;
2. ``dTPOT = a + b*C``: measured minus modelled TPOT (ms) over the sweep, least squares in the concurrency C (a
   constant a is a fixed per-step cost the model lacks, a slope b one that grows with the batch);
3. the group's counts: outliers, the campaign's rows, and the held-out rows of the group within 25%.

``--moe-table`` adds vLLM's own measured MoE kernel at MiniMax-M2.5's shape on H200 (aiconfigurator-core's
``h200_sxm/moe/vllm/{0.19.0,0.24.0}/moe_perf``: hidden 3072, 1536 per expert, 256 experts, top 8, block FP8,
MoE TP4 EP1, the H200 vLLM 0.16.0 rows' layout), ms per layer by tokens and routing distribution, to set beside
the model's ``moe.experts`` row of ``jalapeno step -s h200 -m minimax-m2.5 -p fp8 --kv-dtype bf16 --tp 4 --ep 1
-b B -c 1536 --stack vllm`` (summed over the 62 layers).

Input: a ``jalapeno validate -o X.csv`` table of every row (its ``split`` and ``quality`` columns; held out is
``split != fit`` with ``quality`` empty, as ``jalapeno validate --held-out`` judges). The model is not run.
Run: python scripts/aic_heldout_outliers.py ALL.csv [--moe-table]   (seconds)
"""

from __future__ import annotations

import argparse
import csv
import math
from collections import defaultdict

#: An outlier: the model's interactivity above the measured by more than this fraction (the task's threshold).
OUTLIER = 0.40
#: The fields of one campaign sweep (one deployment at every load it was run).
SWEEP = ("system", "model", "framework", "precision", "mode", "isl", "osl", "deployment")
#: The fields of one outlier group (the docs' table rows).
GROUP = ("system", "model", "framework", "mode")


def _f(x: str) -> float:
    try:
        return float(x)
    except ValueError:
        return math.nan


def load(path: str) -> dict[str, dict[str, dict]]:
    """Row id -> metric -> CSV row, aiconfigurator rows only."""
    out: dict[str, dict[str, dict]] = defaultdict(dict)
    with open(path, newline="") as fh:
        for r in csv.DictReader(fh):
            if r["source"] == "aiconfigurator":
                out[r["id"]][r["metric"]] = r
    return out


def held_out(r: dict) -> bool:
    """The held-out judgement's row: not in the fit split, not flagged (``jalapeno validate --held-out``)."""
    return r["split"] != "fit" and not r["quality"]


def line_fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(a, b) of y = a + b*x by least squares; b = 0 for fewer than two distinct x.

    >>> line_fit([1, 2, 3], [3, 5, 7])
    (1.0, 2.0)
    """
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return my, 0.0
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - b * mx, b


def is_outlier(r: dict) -> bool:
    """A held-out row (:func:`held_out`) whose model interactivity exceeds the measured by more than :data:`OUTLIER`.

    >>> is_outlier({"split": "held_out", "quality": "", "error": "0.41"}), is_outlier({"split": "fit", "quality": "",
    ... "error": "2.0"}), is_outlier({"split": "none", "quality": "rule G", "error": "2.0"})
    (True, False, False)
    """
    return held_out(r) and _f(r["error"]) > OUTLIER


def tpot_excess(rows: dict[str, dict[str, dict]], ids: list[str]) -> tuple[list[float], list[float]]:
    """(concurrencies, measured minus modelled TPOT in ms) of the rows ``ids`` whose TPOT no rule flagged."""
    xs, ys = [], []
    for j in ids:
        t = rows[j].get("tpot_s")
        if t and not t["quality"] and not math.isnan(_f(t["measured"])) and not math.isnan(_f(t["predicted"])):
            xs.append(_f(t["concurrency"]))
            ys.append((_f(t["measured"]) - _f(t["predicted"])) * 1e3)
    return xs, ys


def minimax_moe_table() -> None:
    """Print vLLM's measured block-FP8 MoE at MiniMax-M2.5's shape, MoE TP4 EP1, on H200 (module docstring)."""
    from importlib.resources import files

    import pandas as pd

    for version, kernel in (("0.19.0", "vllm_fused_moe"), ("0.24.0", "vllm_fp8moe_triton_tritonexperts")):
        path = (
            files("aiconfigurator_core")
            / "systems"
            / "data"
            / "h200_sxm"
            / "moe"
            / "vllm"
            / version
            / "moe_perf.parquet"
        )
        d = pd.read_parquet(str(path))
        d = d[
            (d.hidden_size == 3072)
            & (d.inter_size == 1536)
            & (d.num_experts == 256)
            & (d.topk == 8)
            & (d.moe_dtype == "fp8_block")
            & (d.kernel_source == kernel)
            & (d.moe_tp_size == 4)
            & (d.moe_ep_size == 1)
            & d.num_tokens.isin([4, 8, 16, 32, 64])
        ]
        print(f"vLLM {version} {kernel}, ms per layer:")
        print(d.groupby(["num_tokens", "distribution"]).latency.median().unstack().round(4).to_string(), "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", help="jalapeno validate -o table of every row (split and quality columns)")
    ap.add_argument("--moe-table", action="store_true", help="also print vLLM's measured MoE at MiniMax's shape")
    args = ap.parse_args()
    if args.moe_table:
        minimax_moe_table()
    rows = load(args.csv)
    sweeps: dict[tuple, list[str]] = defaultdict(list)
    for i, m in rows.items():
        if "interactivity" in m:
            sweeps[tuple(m["interactivity"][k] for k in SWEEP)].append(i)
    outliers = [i for i, m in rows.items() if "interactivity" in m and is_outlier(m["interactivity"])]
    groups: dict[tuple, list[str]] = defaultdict(list)
    for i in outliers:
        groups[tuple(rows[i]["interactivity"][k] for k in GROUP)].append(i)
    ho = [
        m["interactivity"]
        for m in rows.values()
        if "interactivity" in m and held_out(m["interactivity"]) and not math.isnan(_f(m["interactivity"]["error"]))
    ]
    print(
        f"held-out aiconfigurator interactivity rows: {len(ho)}; over-predicted by more than "
        f"{OUTLIER:.0%}: {len(outliers)} in {len(groups)} groups\n"
    )
    for g in sorted(groups, key=lambda k: (-len(groups[k]), k)):
        ids = groups[g]
        print(f"== {' | '.join(g)}: {len(ids)} outlier(s)")
        seen = set()
        for i in ids:
            r = rows[i]["interactivity"]
            key = tuple(r[k] for k in SWEEP)
            if key in seen:
                continue
            seen.add(key)
            members = sorted(sweeps[key], key=lambda j: _f(rows[j]["interactivity"]["concurrency"]))
            cells = []
            for j in members:
                mi = rows[j]["interactivity"]
                mark = "*" if j in ids else ("q" if mi["quality"] else ("f" if mi["split"] == "fit" else ""))
                cells.append(f"{_f(mi['concurrency']):g}{mark}:{_f(mi['error']):+.0%}")
            xs, ys = tpot_excess(rows, members)
            print(f"  {r['precision']} {r['isl']}/{r['osl']} {r['deployment']}")
            print(f"    err by C: {'  '.join(cells)}")
            if xs:
                a, b = line_fit(xs, ys)
                tp = ", ".join(f"{x:g}:{y:+.1f}" for x, y in zip(xs, ys))
                print(f"    dTPOT ms by C: {tp}  ->  a = {a:+.1f} ms, b = {b * 1e3:+.2f} us per sequence")
        camp = [
            m["interactivity"]
            for m in rows.values()
            if "interactivity" in m and tuple(m["interactivity"][k] for k in GROUP) == g
        ]
        camp_ho = [r for r in camp if held_out(r)]
        fit = [_f(r["error"]) for r in camp if r["split"] == "fit" and not r["quality"]]
        within = sum(abs(_f(r["error"])) <= 0.25 for r in camp_ho)
        fit_txt = (
            f"fit-split median error {sorted(fit)[len(fit) // 2]:+.0%} (n {len(fit)})" if fit else "no fit-split rows"
        )
        print(f"  group: {len(camp)} rows, {len(camp_ho)} held out ({within} within 25%), {fit_txt}\n")


if __name__ == "__main__":
    main()
