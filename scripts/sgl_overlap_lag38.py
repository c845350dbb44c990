"""What-if: SGLang's overlap event loop admits an arriving prompt one step late; the TTFT lag priced on a validate CSV (issue 18, round 38).

SGLang's default scheduler loop (``Scheduler.event_loop_overlap``, sglang 0.5.12 wheel,
``python/sglang/srt/managers/scheduler.py``) reads new requests at the top of an iteration, then schedules and launches
the next batch, then blocks in ``pop_and_process`` on the *previous* batch's result. So the iteration that reads a
request begins when step k − 1 ends on the GPU, and step k is already queued behind it: the prompt's batch runs after
step k. A prompt arriving while the engine decodes for others waits the rest of the step in flight and one whole step
more, 1.5 τ on average against the 0.5 τ of a loop that launches what it reads at once (``event_loop_normal``); the
first token leaves when the prompt's own step ends (its result is the one the next iteration blocks on), so nothing
is added after it. A lone user finds the loop idle (it polls every pass): no lag at C = 1. :func:`loop_waits` walks
that loop structure for arrivals at given times.

:func:`lag_whatif` adds the one step, τ·min(C − 1, 1) with τ the row's predicted mean step (its predicted TPOT: no
SGLang aggregated row has MTP), to the predicted TTFT of every SGLang aggregated row of a ``jalapeno validate --json
-o FILE.csv`` output, InferenceX and aiconfigurator alike, and prints the TTFT figures before and after per source and
system (every row, and held out: not in the fit split, no data-quality flag), then the InferenceX SGLang rows one by
one. Nothing in the package changes; the front end the stack fit carries (data/stack_fits.toml) is left as fitted.

:func:`split_check` tests the other reading of rows whose TTFT is too short while their TPOT is too long (prefill time
the model books on the decoding requests' TPOT where the engine books it on the arriving prompt's TTFT): time moved
between the two is conserved per request, so the TPOT surplus over a request's decode steps, (TPOT_pred − TPOT_meas)·
(mean OSL − 1), would have to match the TTFT shortfall, TTFT_meas − TTFT_pred. It prints both for the InferenceX
SGLang aggregated rows that measure both (mean OSL = (1 + 0.8)/2·OSL: the client's --random-range-ratio 0.8).

Run: python scripts/sgl_overlap_lag38.py VALIDATE.csv [--k 1.0]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd


def loop_waits(arrivals_s, step_s: float, overlap: bool = True) -> np.ndarray:
    """Time from each arrival (s after the first step starts) to the start of the step that carries its prompt, s.

    GPU steps of ``step_s`` run back to back from t = 0. The normal loop reads at each step boundary and launches
    what it read into the step that starts there; the overlap loop reads at the same boundary (when its blocking
    wait on the step that just ended returns) but the step starting there was launched one iteration earlier, so
    the prompt's step starts one boundary later.

    >>> loop_waits([0.25, 1.0], 1.0, overlap=False).tolist(), loop_waits([0.25, 1.0], 1.0).tolist()
    ([0.75, 0.0], [1.75, 1.0])
    """
    a = np.asarray(arrivals_s, dtype=float)
    read = np.ceil(a / step_s - 1e-12) * step_s  # the boundary at which the loop's read returns
    return read + (step_s if overlap else 0.0) - a


def judged(df: pd.DataFrame) -> pd.DataFrame:
    """The held-out judgement's rows: not in the fit split and no data-quality flag."""
    q = df["quality"].fillna("").astype(str)
    return df[(df["split"] != "fit") & (q == "")]


def lag_whatif(df: pd.DataFrame, k: float = 1.0) -> pd.DataFrame:
    """The ``ttft_s`` rows of a validate frame with ``lag_s`` and the ``after`` prediction and error columns.

    ``lag_s`` = k·τ·min(C − 1, 1) on SGLang aggregated rows (``stack`` starting ``sglang``, ``mode`` agg), τ the same
    row's predicted ``tpot_s``; 0 elsewhere. A SGLang aggregated row with MTP (τ ≠ TPOT) is refused."""
    t = df[df["metric"] == "ttft_s"].copy()
    tau = df[df["metric"] == "tpot_s"][["source", "id", "predicted"]].rename(columns={"predicted": "tau_s"})
    t = t.merge(tau, on=["source", "id"], how="left")
    sg = t["stack"].astype(str).str.startswith("sglang") & (t["mode"] == "agg")
    mtp = sg & t["deployment"].fillna("").str.contains("MTP")
    if mtp.any():
        raise SystemExit(
            f"{int(mtp.sum())} SGLang aggregated rows with MTP: their step is TPOT × tokens per step; "
            "extend lag_whatif before reading them"
        )
    busy = np.clip(t["concurrency"].astype(float) - 1.0, 0.0, 1.0)
    t["lag_s"] = np.where(sg, k * t["tau_s"].fillna(0.0) * busy, 0.0)
    t["sglang_agg"] = sg
    t["after_predicted"] = t["predicted"] + t["lag_s"]
    t["after_error"] = t["after_predicted"] / t["measured"] - 1.0
    return t


def split_check(df: pd.DataFrame, range_ratio: float = 0.8) -> pd.DataFrame:
    """Per InferenceX SGLang aggregated row with a measured TTFT and TPOT: ``tpot_surplus_s`` = (TPOT_pred −
    TPOT_meas)·(mean OSL − 1) and ``ttft_short_s`` = TTFT_meas − TTFT_pred, s (mean OSL = (1 + r)/2·OSL)."""
    keep = (df["source"] == "inferencex") & df["stack"].astype(str).str.startswith("sglang") & (df["mode"] == "agg")
    d = df[keep]
    w = d.pivot_table(
        index=["id", "system", "isl", "osl", "concurrency"], columns="metric", values=["measured", "predicted"]
    ).dropna(subset=[("measured", "ttft_s"), ("measured", "tpot_s")])
    out = pd.DataFrame(index=w.index)
    steps = (1 + range_ratio) / 2 * w.index.get_level_values("osl").to_numpy(dtype=float) - 1
    out["tpot_surplus_s"] = (w[("predicted", "tpot_s")] - w[("measured", "tpot_s")]).to_numpy() * steps
    out["ttft_short_s"] = (w[("measured", "ttft_s")] - w[("predicted", "ttft_s")]).to_numpy()
    return out.reset_index()


def figures(errors: pd.Series) -> str:
    """n, median |error|, p90 |error| and bias (median error) in %."""
    e = errors.dropna().to_numpy()
    if not len(e):
        return "n 0"
    return (
        f"n {len(e):4d}  {np.median(np.abs(e)) * 100:5.1f}% / p90 {np.percentile(np.abs(e), 90) * 100:5.1f}% / "
        f"bias {np.median(e) * 100:+5.1f}%"
    )


def summary(t: pd.DataFrame) -> list[str]:
    """Before → after TTFT figures per source (all, SGLang aggregated) and per system, every row and held out."""
    out = []
    for label, rows in (("every row", t), ("held out", judged(t))):
        out.append(f"## {label}")
        for src, g in rows.groupby("source"):
            for name, sub in ((f"{src} ALL", g), (f"{src} SGLang agg", g[g["sglang_agg"]])):
                out.append(f"{name:32s} before {figures(sub['error'])}   after {figures(sub['after_error'])}")
            for sy, s in g.groupby("system"):
                if s["sglang_agg"].any():
                    out.append(f"  {src} {sy:22s} before {figures(s['error'])}   after {figures(s['after_error'])}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", help="a `jalapeno validate --json -o FILE.csv` output")
    ap.add_argument("--k", type=float, default=1.0, help="steps of lag (1: the overlap loop's)")
    a = ap.parse_args(argv)
    w = loop_waits(np.linspace(0.0005, 9.9995, 10000), 1.0)
    print(
        f"overlap loop, arrivals uniform over 10 steps of τ = 1: mean wait {w.mean():.3f} τ "
        f"(normal loop {loop_waits(np.linspace(0.0005, 9.9995, 10000), 1.0, overlap=False).mean():.3f} τ)\n"
    )
    t = lag_whatif(pd.read_csv(a.csv), a.k)
    print("\n".join(summary(t)))
    ix = t[(t["source"] == "inferencex") & t["sglang_agg"]].sort_values(["system", "isl", "concurrency"])
    print("\n## InferenceX SGLang aggregated rows (TTFT s; lag ms; error before → after)")
    for _, r in ix.iterrows():
        flag = f" [{r['quality']}]" if isinstance(r["quality"], str) and r["quality"] else ""
        print(
            f"{r['id']:24s} {r['system']:7s} {int(r['isl']):5d} C={int(r['concurrency']):3d} {str(r['stack']):20s} "
            f"{r['split']:9s} meas {r['measured']:.3f} pred {r['predicted']:.3f} lag {r['lag_s'] * 1e3:5.1f} "
            f"{r['error'] * 100:+6.1f}% → {r['after_error'] * 100:+6.1f}%{flag}"
        )
    print("\n## Conservation check: TPOT surplus per request against TTFT shortfall, s (InferenceX SGLang agg)")
    for _, r in split_check(pd.read_csv(a.csv)).sort_values(["system", "isl", "concurrency"]).iterrows():
        print(
            f"{r['id']:24s} {r['system']:7s} {int(r['isl']):5d} C={int(r['concurrency']):3d} "
            f"TPOT surplus {r['tpot_surplus_s']:+7.3f}  TTFT shortfall {r['ttft_short_s']:+7.3f}"
        )
    return 0 if not math.isnan(float(t["lag_s"].sum())) else 1


if __name__ == "__main__":
    raise SystemExit(main())
