"""aiconfigurator's MoE kernel rows under each collector routing against the calibrated form (issue 18).

Every ``moe_perf`` row names the token-to-expert routing it was timed under (``balanced`` or
``power_law_<alpha>``); fit/collector_routing.py reads each with its own routing (the measured rank's
expected assignments and distinct experts). For one system and compute format this prints the calibrated
routed-expert form's error (fit/kernels.moe_model_s with the system's ``moe[fmt]``, as scripts/moe_table_vs_form.py
prices it) per routing and per token band over every row of the system's table,
then, for one shape and layout (default DeepSeek-R1 at EP8), per token count: each routing's measured
latency, the rank's assignments and distinct experts, and the form. Nothing is fitted or written.
docs/model.md §8.6 quotes its H200 fp8 figures.
Run: python scripts/moe_routing_check.py SYSTEM FMT [--tp 1] [--ep 8] [--backend trtllm] [--max-tokens 4096]
(needs the aiconfigurator-core package: pip install -e ".[calibrate]")
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_table
from jalapeno.fit.kernels import moe_model_s, moe_rows
from jalapeno.specs.catalog import load_efficiency, load_system

#: token bands of the summary (inclusive bounds)
BANDS = ((1, 2), (4, 32), (48, 256), (320, 2048), (3072, 10**9))


def routed_rows(df: pd.DataFrame, system: str, fmt: str) -> pd.DataFrame:
    """Every row of ``df`` in compute format ``fmt``, each read with its own routing, with the calibrated
    form's time (``pred``, s) and signed error (``err``)."""
    s, eff = load_system(system), load_efficiency(system)
    d = moe_rows(df, "balanced", distributions=tuple(df.distribution.unique()))
    d = d[d.fmt == fmt]
    p = (eff.moe_peak(fmt), eff.moe_half(fmt), eff.moe_hbm(fmt), None, eff.moe_passes(fmt))
    pred = moe_model_s(s, d, fmt, *p)
    return d.assign(pred=pred, err=pred / d.t.to_numpy() - 1.0)


def band_summary(d: pd.DataFrame) -> pd.DataFrame:
    """Median |error| and median signed error (bias) per routing and token band; one row per pair."""
    out = []
    for lo, hi in BANDS:
        x = d[(d.num_tokens >= lo) & (d.num_tokens <= hi)]
        for dist, e in x.groupby("distribution").err:
            out.append(
                {
                    "distribution": dist,
                    "tokens": f"{lo}-{hi}" if hi < 10**9 else f">={lo}",
                    "median_ape": float(np.median(np.abs(e))),
                    "bias": float(np.median(e)),
                    "n": int(len(e)),
                }
            )
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("system")
    ap.add_argument("fmt", help="compute format of the table rows: fp8, fp4, bf16")
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--ep", type=int, default=8)
    ap.add_argument("--backend", default="trtllm")
    ap.add_argument("--hidden", type=int, default=7168)
    ap.add_argument("--experts", type=int, default=256)
    ap.add_argument("--max-tokens", type=int, default=4096)
    a = ap.parse_args()
    df, version = load_table(AIC_SYSTEM_DIRS[a.system], "moe", "moe_perf", a.backend)
    d = routed_rows(df, a.system, a.fmt)
    print(f"{a.system} {a.backend} {version} moe_perf, {a.fmt}: calibrated form against every row, by routing")
    print("| routing | tokens | median abs error | median signed error | n |\n|---|---|---|---|---|")
    for r in band_summary(d).itertuples(index=False):
        print(f"| {r.distribution} | {r.tokens} | {r.median_ape:.1%} | {r.bias:+.1%} | {r.n} |")
    x = d[
        (d.hidden_size == a.hidden)
        & (d.num_experts == a.experts)
        & (d.moe_tp_size == a.tp)
        & (d.moe_ep_size == a.ep)
        & (d.num_tokens <= a.max_tokens)
    ]
    if x.empty:
        raise SystemExit(f"no {a.fmt} rows at hidden {a.hidden}, {a.experts} experts, moe_tp {a.tp}, moe_ep {a.ep}")
    dists = sorted(x.distribution.unique())
    print(
        f"\nhidden {a.hidden}, {a.experts} experts, moe_tp {a.tp}, moe_ep {a.ep}: per routing measured us / "
        "assignments / experts / form us"
    )
    print("| T | " + " | ".join(dists) + " |\n|---|" + "---|" * len(dists))
    for t, g in x.groupby("num_tokens"):
        g = g.set_index("distribution")
        cells = [
            f"{g.t[k] * 1e6:.0f} / {g.load[k]:.1f} / {g.touched[k]:.1f} / {g.pred[k] * 1e6:.0f}"
            if k in g.index
            else "-"
            for k in dists
        ]
        print(f"| {int(t)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
