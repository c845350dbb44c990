"""aiconfigurator's disaggregated TTFT rows as two client terms: a fixed floor every request pays and the
idle-start burst share (issue 18 item 6b, round 47; the fit behind fit/client_floor.DISAGG_TERMS).

sa-bench, the client of the InferenceX-export rows (NVIDIA/srt-slurm @c88ef731,
``src/srtctl/benchmarks/scripts/sa-bench/bench.sh`` and ``benchmark_serving.py``), runs for each concurrency C a
warm-up of 2·C prompts at 250 requests/s in a separate ``benchmark_serving.py`` process, then, in a new process, the
counted 10·C prompts at ``--request-rate inf`` under a semaphore of C: the counted run's first wave starts on an idle
engine once, and its mean TTFT (``mean_ttft_ms = np.mean(ttfts)``) is over every counted request, the first wave
included. So the sourced share of the idle-start burst is one wave in R = 10 (serve/queueing.REQUESTS_PER_USER);
the shipped client shares (0.65 SGLang, 0.35 TensorRT-LLM) are fitted constants. Each request also opens its own
aiohttp session (``async_request_dynamo_completions``: a new connection unless ``--reuse-http-connections``) and its
clock starts before the POST, so the connect, Dynamo's HTTP front end (tokenise, route) and the first SSE chunk's
detokenise are in every TTFT: a fixed floor.

Every unflagged disaggregated aiconfigurator TTFT row of the ``inferencex-db`` client is priced twice with
fit/client_floor off (stack_fit's shares, no floor: what the terms are fitted on), once as such and once with no
burst (scripts/gb_ttft_twins38.NO_BURST). TTFT is linear in the share (serve/queueing.idle_start), so a
row's TTFT at a floor F and share w is ``steady + F + (w / w_shipped)·burst``. Per engine (sglang, trtllm, vllm) three
variants, each fitted on the fit split's rows only (grid, mean |log(model / measured)|) and reported on the
held-out rows: ``share`` (w alone, F = 0), ``wave`` (w = 1/R, the sourced first wave; F fitted) and ``both``
(F and w fitted). The floor adds to the steady TTFT and to the wave's times alike, so the burst's lateness is
unchanged (its effect on the closed loop's request rate is left out here; fit/client_floor ships the ``both``
column's values and reprices).

Run: python scripts/aic_gb_ttft_terms47.py ALL.csv [--cache PARTS.csv]  (ALL.csv: `jalapeno validate --json -o`,
every split; pricing about 1 s a row; --cache writes / reads the priced parts)
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(__file__))

#: the counted run's first wave: one in R = 10 prompts a user (sa-bench ``NUM_PROMPTS_MULT`` 10; serve/queueing)
WAVE_SHARE = 0.1
#: the grids searched (s; share)
FLOORS = np.round(np.arange(0.0, 0.4001, 0.0125), 4)
SHARES = np.round(np.arange(0.05, 1.0001, 0.05), 3)
GOAL = 0.20
VARIANTS = ("shipped", "share", "wave", "both")


def rows(path: str) -> pd.DataFrame:
    """The unflagged disaggregated aiconfigurator TTFT rows of the fit and held-out splits, indexed by id."""
    d = pd.read_csv(path)
    d = d[(d.source == "aiconfigurator") & (d.metric == "ttft_s") & (d["mode"] == "disagg")]
    d = d[d.split.isin(["fit", "held_out"]) & d.quality.isna()]
    return d.set_index("id")


def price(ids) -> pd.DataFrame:
    """Per id: the stack's engine, the client, the shipped share, the model's TTFT (s) and its burst part (s)."""
    from gb_ttft_twins38 import NO_BURST, _points, _price

    from jalapeno.fit.validate import point_stack
    from jalapeno.serve.queueing import REQUESTS_PER_USER

    import jalapeno.fit.client_floor as cf

    out = []
    was, cf.CLIENT_FLOOR_ON = cf.CLIENT_FLOOR_ON, False  # stack_fit's shares, no floor: what the terms are fitted on
    try:
        priced = [(p, point_stack(p)) for p in _points(ids) if p.timed_by == "inferencex-db"]
    finally:
        cf.CLIENT_FLOOR_ON = was
    for p, st in priced:
        ttft = _price(p, p.system, st)[0]
        steady = _price(p, p.system, dataclasses.replace(st, prefill_burst_fraction=NO_BURST))[0]
        w0 = st.prefill_burst_fraction
        out.append(
            {
                "id": p.id,
                "engine": st.name.split("@")[0],
                "model_ttft_s": ttft,
                "steady_s": steady,
                "burst_s": ttft - steady,
                "w0": 1.0 / REQUESTS_PER_USER if w0 is None else float(w0),
            }
        )
    return pd.DataFrame(out).set_index("id")


def ttft_at(steady, burst, w0, floor, share):
    """TTFT (s) at a floor ``floor`` (s) and burst share ``share``: steady + floor + (share / w0)·burst.

    >>> float(ttft_at(1.0, 0.65, 0.65, 0.2, 0.1))  # late 1 s: 1 + 0.2 + 0.1
    1.3
    """
    return np.asarray(steady, float) + floor + np.asarray(burst, float) * share / np.asarray(w0, float)


def loss(measured, model) -> float:
    """Mean |log(model / measured)| (the fit's objective; symmetric in over- and under-prediction).

    >>> round(loss([1.0, 1.0], [2.0, 0.5]), 4)
    0.6931
    """
    return float(np.mean(np.abs(np.log(np.asarray(model, float) / np.asarray(measured, float)))))


def fit(d: pd.DataFrame, variant: str) -> tuple[float, float]:
    """(floor s, share) of ``variant`` minimising :func:`loss` on ``d`` (fit rows of one engine); ties: the first
    (smallest floor, smallest share) grid point. ``shipped`` returns (0, NaN): the shipped share."""
    if variant == "shipped":
        return 0.0, float("nan")
    floors = FLOORS if variant in ("wave", "both") else np.array([0.0])
    shares = np.array([WAVE_SHARE]) if variant == "wave" else SHARES
    best = (np.inf, 0.0, 0.0)
    for f in floors:
        for w in shares:
            v = loss(d.measured, ttft_at(d.steady_s, d.burst_s, d.w0, f, w))
            if v < best[0] - 1e-12:
                best = (v, float(f), float(w))
    return best[1], best[2]


def predict(d: pd.DataFrame, floor: float, share: float) -> np.ndarray:
    """TTFT (s) of ``d``'s rows at (floor, share); share NaN = each row's shipped share."""
    w = d.w0 if np.isnan(share) else share
    return ttft_at(d.steady_s, d.burst_s, d.w0, floor, w)


def summary(err: pd.Series) -> str:
    """'n median|err| p90|err| bias' in %."""
    a = err.abs()
    return f"n {len(err):4d}  {100 * a.median():5.1f}  {100 * a.quantile(0.9):6.1f}  {100 * err.median():+6.1f}"


def evaluate(d: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Each variant fitted per engine on the fit rows; returns d with an ``err_<variant>`` column a variant and the
    fitted (floor, share) by (engine, variant)."""
    d = d.copy()
    params = {}
    for eng, g in d.groupby("engine"):
        f = g[g.split == "fit"]
        for v in VARIANTS:
            params[eng, v] = fit(f, v)
            d.loc[g.index, f"err_{v}"] = predict(g, *params[eng, v]) / g.measured - 1
    return d, params


def apply(d: pd.DataFrame, params: dict, table: str, out: str, variant: str = "both") -> None:
    """Write ``table`` with ``variant``'s TTFT (predicted, error) on ``d``'s rows (the other rows as they are)."""
    t = pd.read_csv(table)
    for eng, g in d.groupby("engine"):
        new = pd.Series(predict(g, *params[eng, variant]), index=g.index)
        hit = t.metric.eq("ttft_s") & t.id.isin(g.index)
        t.loc[hit, "predicted"] = t.loc[hit, "id"].map(new).to_numpy()
        t.loc[hit, "error"] = t.loc[hit, "predicted"] / t.loc[hit, "measured"] - 1
    t.to_csv(out, index=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", help="jalapeno validate --json -o ALL.csv (every split)")
    ap.add_argument("--cache", help="CSV of the priced parts: read if it exists, else written")
    ap.add_argument(
        "--apply",
        nargs=2,
        metavar=("TABLE", "OUT"),
        help="write TABLE (a validate CSV) with the ``both`` variant's TTFT on the rows priced here, to OUT",
    )
    a = ap.parse_args()
    d = rows(a.table)
    if a.cache and os.path.exists(a.cache):
        p = pd.read_csv(a.cache).set_index("id")
    else:
        p = price(d.index)
        if a.cache:
            p.to_csv(a.cache)
    d = d.join(p, how="inner")
    d, params = evaluate(d)
    print("fitted on the fit split (floor s, share):")
    for (eng, v), (f, w) in params.items():
        print(f"  {eng:8s} {v:8s} floor {f:.4f}  share {'shipped' if np.isnan(w) else f'{w:.2f}'}")
    for split in ("held_out", "fit"):
        s = d[d.split == split]
        print(f"\n{split}: n / median |err| % / p90 % / median err %")
        for v in VARIANTS:
            print(f"  ALL        {v:8s} {summary(s[f'err_{v}'])}")
        for key, g in s.groupby(["system", "engine"]):
            for v in VARIANTS:
                print(f"  {key[0]:12s} {key[1]:7s} {v:8s} {summary(g[f'err_{v}'])}")
        for sysname, g in s.groupby("system"):
            for v in VARIANTS:
                print(f"  {sysname:12s} (all)   {v:8s} {summary(g[f'err_{v}'])}")
    if a.apply:
        apply(d, params, *a.apply)
    bands = pd.cut(d.concurrency, [0, 8, 64, 512, np.inf], labels=["C<=8", "C9-64", "C65-512", "C>512"])
    print("\nheld out by load band (median err %):")
    h = d[d.split == "held_out"].assign(band=bands)
    print(
        h.groupby(["engine", "band"], observed=True)[[f"err_{v}" for v in VARIANTS]]
        .median()
        .mul(100)
        .round(1)
        .to_string()
    )


if __name__ == "__main__":
    main()
