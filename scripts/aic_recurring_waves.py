"""aiconfigurator's fixed-length TTFT with and without the recurring-wave regime (docs/model.md §8.7, §12).

Predicts aiconfigurator's matched end-to-end rows (``pip install -e ".[calibrate]"``) twice — as
``jalapeno validate`` does (the first wave of an idle start, then waves that spread) and with
``recurring_waves`` (serve/queueing.py effect 6: every wave repeats the first one's burst, as the
simulator shows for a fixed-length closed loop whose users start together) — and prints the TTFT
median |error| and bias per (system, model, engine, mode), overall, and TPOT/interactivity (which
the regime does not touch). Run: python scripts/aic_recurring_waves.py   (~30 s)
"""

from __future__ import annotations

import argparse

import pandas as pd

from jalapeno.fit.validate import load_aiconfigurator, predict_points


def _summary(df: pd.DataFrame, keys) -> pd.DataFrame:
    ok = df.dropna(subset=["error"])
    return ok.groupby(keys).error.agg(n="count", median=lambda e: e.abs().median(), bias="median")


def main() -> None:
    points, _ = load_aiconfigurator()
    spread, recur = predict_points(points), predict_points(points, recurring_waves=True)
    keys = ["system", "model", "stack", "mode"]
    for metric in ("ttft_s", "tpot_s", "interactivity"):
        a = _summary(spread[spread.metric == metric], ["metric"])
        b = _summary(recur[recur.metric == metric], ["metric"])
        print(
            f"{metric}: spread {a['median'].iloc[0]:.1%} (bias {a['bias'].iloc[0]:+.1%}), recurring "
            f"{b['median'].iloc[0]:.1%} (bias {b['bias'].iloc[0]:+.1%}), n {int(a['n'].iloc[0])}"
        )
    a = _summary(spread[spread.metric == "ttft_s"], keys)
    b = _summary(recur[recur.metric == "ttft_s"], keys)
    t = a.join(b.add_suffix(" recurring"))
    print("\n| system | model | engine | mode | n | TTFT spread | bias | TTFT recurring | bias |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (s, m, e, mode), r in t.iterrows():
        print(
            f"| {s} | {m} | {e} | {mode} | {int(r['n'])} | {r['median']:.1%} | {r['bias']:+.1%} | "
            f"{r['median recurring']:.1%} | {r['bias recurring']:+.1%} |"
        )


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
