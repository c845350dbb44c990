"""What the held-out GB200/GB300 aiconfigurator TTFT rows need for a 20% median (issue 18, round 31; diagnosis).

Reads a `jalapeno validate --held-out --json -o X.csv` table (columns source, system, framework, mode, isl, osl,
concurrency, deployment, metric, error, quality, split), keeps the aiconfigurator ``ttft_s`` rows of gb200-nvl72 and
gb300-nvl72 outside the fit split and unflagged (the issue's held-out judgement), and
prints per system the median |error|, the rows within the 20% goal and how many more the median needs; then the
rows split by engine x mode x ISL/OSL x load per prefill GPU (C / (x·tp·dp) of the prefill pool, round 26's bands),
each group's rows within 20%, over (+) and under (−) by more, so one can read whether a one-signed term could
bring a group in. ``--ranks`` prints TensorRT-LLM's attention-DP request assignment (the busiest rank's prompts of a
step of S equal prompts on dp ranks) against the model's max(S/dp, min(S, 1)) (cost/adp_rank.py). Nothing is predicted
or fitted. Run: python scripts/gb_ttft_median_need.py VALIDATE.csv [--rows] [--ranks]
"""

from __future__ import annotations

import argparse
import heapq
import math
import re
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from adp_poisson_rank import expected_busiest_rank  # noqa: E402  (a sibling script)

SYSTEMS = ("gb200-nvl72", "gb300-nvl72")
GOAL = 0.20  # issue 18: TTFT median |error| <= 20% per system
LOAD_BANDS = [0, 2, 16, 128, math.inf]  # C per prefill GPU, round 26 (docs/gap_aic_ttft.md)
LOAD_LABELS = ["<=2", "2-16", "16-128", ">128"]
_POOL = re.compile(r"P (\d+)x\(attn TP(\d+) DP(\d+)")


def prefill_gpus(deployment: str) -> float:
    """GPUs of a disaggregated row's prefill pool, x·tp·dp from its deployment text; NaN when aggregated.

    >>> prefill_gpus("disagg P 4x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp4]")
    16.0
    >>> math.isnan(prefill_gpus("agg attn TP8 DP1 · MoE TP1 EP8 [fp4]"))
    True
    """
    m = _POOL.search(str(deployment))
    return float(int(m[1]) * int(m[2]) * int(m[3])) if m else math.nan


def held_out_ttft(path: str, need: set, systems=SYSTEMS) -> pd.DataFrame:
    """The issue's held-out aiconfigurator TTFT rows of ``systems`` in a validate CSV (outside the fit split, no
    quality flag, an error); ``need``: the columns the caller reads, each refused by name when missing."""
    d = pd.read_csv(path)
    missing = ({"source", "system", "metric", "error", "split", "quality"} | set(need)) - set(d.columns)
    if missing:
        raise SystemExit(
            f"{path}: missing column(s) {sorted(missing)}; fix: pass a `jalapeno validate --held-out "
            "--json -o X.csv` table (it carries split and quality)"
        )
    return d[
        (d.source == "aiconfigurator")
        & (d.metric == "ttft_s")
        & d.system.isin(systems)
        & (d.split != "fit")
        & d.quality.isna()
        & d.error.notna()
    ].copy()


def held_out_rows(path: str) -> pd.DataFrame:
    """The issue's held-out GB200/GB300 aiconfigurator TTFT rows of a validate CSV, with error e (fraction)."""
    d = held_out_ttft(path, {"deployment", "concurrency"})
    d["engine"] = d.framework.str.split().str[0]
    d["isl_osl"] = d.isl.astype(int).astype(str) + "/" + d.osl.astype(int).astype(str)
    d["load"] = pd.cut(d.concurrency / d.deployment.map(prefill_gpus), LOAD_BANDS, labels=LOAD_LABELS)
    d["load"] = d["load"].astype(str).where(d["mode"] == "disagg", "agg")
    return d


def needed(errors: pd.Series, goal: float = GOAL) -> int:
    """Rows that must come within ``goal`` for the median |error| to be at most it (0 when it already is).

    The median of n values is <= goal once floor(n/2) + 1 of them are (n odd: the middle one; n even: both middle).

    >>> needed(pd.Series([0.1, 0.3, 0.5, 0.6]))  # 1 within, 3 needed in all: 2 more
    2
    >>> needed(pd.Series([0.1, 0.15, 0.5]))
    0
    """
    return max(len(errors) // 2 + 1 - int((errors.abs() <= goal).sum()), 0)


def trt_busiest_rank(prompts: int, dp: int, tokens: int = 1024) -> int:
    """Prompts on the busiest attention-DP rank when ``prompts`` equal prompts reach an idle TensorRT-LLM worker.

    NVIDIA/TensorRT-LLM ``tensorrt_llm/_torch/pyexecutor/executor_request_queue.py`` (1.1-1.2 releases): the new
    requests go one by one to the rank with the fewest active tokens (a heap of (tokens, requests, rank)), a rank
    leaving the heap once it holds ``expected_num_active_requests`` = ceil(total / dp) requests. With equal prompts
    every rank fills to ceil(prompts / dp) in turn, so the busiest rank holds ceil(prompts / dp).

    >>> [trt_busiest_rank(s, 4) for s in (1, 4, 5, 8, 9)]
    [1, 1, 2, 2, 3]
    """
    if prompts < 0 or dp < 1:
        raise ValueError(f"prompts {prompts} must be >= 0 and dp {dp} >= 1; fix: pass counts")
    cap = -(-prompts // dp)
    heap = [(0, 0, r) for r in range(dp)]
    load = [0] * dp
    for _ in range(prompts):
        tok, n, r = heapq.heappop(heap)
        load[r] = n + 1
        if n + 1 < cap:
            heapq.heappush(heap, (tok + tokens, n + 1, r))
    return max(load)


def model_busiest_rank(prompts: int, dp: int) -> float:
    """The model's busiest-rank prompts of a step, max(S/dp, min(S, 1)) (cost/adp_rank.py, round 20).

    >>> model_busiest_rank(5, 4)
    1.25
    """
    from jalapeno.cost.adp_rank import busiest_rank_prompts  # the model's own function, not a copy of it

    return float(busiest_rank_prompts(prompts, dp)[0])


def poisson_busiest_rank(mu: float, dp: int) -> float:
    """Mean busiest-rank prompts of TensorRT-LLM steps whose prompt count is Poisson with mean ``mu``: E[⌈S/dp⌉],
    scripts/adp_poisson_rank.expected_busiest_rank at one point (one implementation for both scripts).

    Below one prompt a step the model's f(mu) = mu is linear while two prompts of one step on two ranks cost one:
    at mu = 1, dp = 4, E[⌈S/4⌉] = P(1 <= S <= 4) + 2·P(5 <= S <= 8) + ... = 0.6285 + 2·0.0037 + ... = 0.6358
    (Poisson(1): P(1..4) = e^-1·(1 + 1/2 + 1/6 + 1/24), P(5..8) = e^-1·(1/120 + 1/720 + ...)).

    >>> round(poisson_busiest_rank(1.0, 4), 4)
    0.6358
    """
    if mu < 0 or dp < 1:
        raise ValueError(f"mu {mu} must be >= 0 and dp {dp} >= 1; fix: pass a mean prompt count and a DP degree")
    return float(expected_busiest_rank([mu], dp)[0])


def rank_rows(d: pd.DataFrame, path: str) -> pd.DataFrame:
    """Held-out TensorRT-LLM disaggregated rows of an attention-DP prefill pool: µ, an upper bound of the prompts a
    step carries (the pool's measured λ = C / (TTFT + (OSL − 1)·TPOT) over its x workers, times the measured TTFT,
    which is at least one step), and E[⌈S/dp⌉] (Poisson S) against the model's f(µ); rows with µ > 4·dp (queued: the
    step is budget-filled, the window not a step) are left out."""
    full = pd.read_csv(path)
    tpot = full[(full.source == "aiconfigurator") & (full.metric == "tpot_s")].set_index("id").measured
    out = []
    for r in d[(d.engine == "trtllm") & (d["mode"] == "disagg")].itertuples():
        m = _POOL.search(r.deployment)
        x, dp = int(m[1]), int(m[3])
        if dp < 2 or r.id not in tpot.index:
            continue
        lam = r.concurrency / (r.measured + (r.osl - 1) * tpot[r.id])
        mu = lam / x * r.measured
        if mu > 4 * dp:
            continue
        eng, mod = poisson_busiest_rank(mu, dp), model_busiest_rank(mu, dp)
        out.append(
            {
                "id": r.id.split("_disagg_")[-1],
                "system": r.system,
                "dp": dp,
                "mu_max": mu,
                "engine": eng,
                "model": mod,
                "engine/model": eng / mod,
                "error": r.error,
            }
        )
    return pd.DataFrame(out)


def ranks_table(dps=(2, 4, 8)) -> None:
    """TensorRT-LLM's busiest rank against the model's, for steps of 1 .. 3·dp equal prompts."""
    for dp in dps:
        cells = [f"S={s}: {trt_busiest_rank(s, dp)}/{model_busiest_rank(s, dp):.2f}" for s in range(1, 3 * dp + 1)]
        print(f"dp {dp} (engine/model prompts on the busiest rank):", ", ".join(cells))


def main(path: str, show_rows: bool) -> None:
    d = held_out_rows(path)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_rows", 200)
    for system, g in d.groupby("system"):
        e = g.error
        print(
            f"{system}: n {len(g)}, median |error| {e.abs().median():.1%}, bias {e.median():+.1%}, "
            f"within 20% {(e.abs() <= GOAL).sum()}, more needed {needed(e)}"
        )
        grp = g.groupby(["engine", "mode", "isl_osl", "load"], observed=True).error
        table = pd.DataFrame(
            {
                "n": grp.size(),
                "med|e|": grp.apply(lambda x: x.abs().median()),
                "bias": grp.median(),
                "within": grp.apply(lambda x: (x.abs() <= GOAL).sum()),
                "over": grp.apply(lambda x: (x > GOAL).sum()),
                "under": grp.apply(lambda x: (x < -GOAL).sum()),
            }
        )
        print(table.round(3).to_string(), "\n")
        if show_rows:
            cols = ["id", "framework", "isl_osl", "concurrency", "load", "measured", "predicted", "error"]
            print(g.sort_values(["engine", "isl_osl", "concurrency"])[cols].to_string(index=False), "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="a `jalapeno validate --held-out --json -o X.csv` table")
    ap.add_argument("--rows", action="store_true", help="also print every row")
    ap.add_argument("--ranks", action="store_true", help="also print the attention-DP busiest-rank table")
    a = ap.parse_args()
    main(a.csv, a.rows)
    if a.ranks:
        ranks_table()
        print(rank_rows(held_out_rows(a.csv), a.csv).round(3).to_string(index=False))
