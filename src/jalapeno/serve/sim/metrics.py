"""Metrics of a simulation, derived from per-request timestamps (definitions: docs/metrics.md).

TTFT = first_token − arrival; TPOT = (done − first_token)/(output − 1); E2E = done − arrival;
queueing delay = first_scheduled − arrival. Throughput per chip = (input + output tokens of the
counted requests) / (last completion − first counted arrival) / chips. Task completion time
(agentic) = last turn done − first turn arrival, think time included.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

QUANTILES = (50, 90, 99)


#: (column, Request attribute, dtype) of the per-request frame
_FRAME_COLUMNS = (("id", "id", np.int64), ("session", "session", np.int64), ("turn", "turn", np.int64),
                  ("instance", "instance", np.int64), ("arrival_s", "arrival_s", float),
                  ("first_scheduled_s", "first_scheduled_s", float), ("first_token_s", "first_token_s", float),
                  ("done_s", "done_s", float), ("input_tokens", "isl", np.int64), ("output_tokens", "osl", np.int64),
                  ("cached_tokens", "cached_tokens", np.int64), ("preemptions", "preemptions", np.int64))


def request_frame(requests) -> pd.DataFrame:
    """One row per counted request, with derived latencies (seconds)."""
    counted = [r for r in requests if r.counted]
    n = len(counted)
    # column by column (np.fromiter), not a list of row tuples: a million requests stay ~0.1 GB
    df = pd.DataFrame({col: np.fromiter((getattr(r, attr) for r in counted), dtype=dt, count=n)
                       for col, attr, dt in _FRAME_COLUMNS})
    df["ttft_s"] = df.first_token_s - df.arrival_s
    df["tpot_s"] = (df.done_s - df.first_token_s) / (df.output_tokens - 1).clip(lower=1)
    df["e2e_s"] = df.done_s - df.arrival_s
    df["queue_s"] = df.first_scheduled_s - df.arrival_s
    return df


def _stats(x: np.ndarray) -> dict[str, float]:
    if x.size == 0:
        return {"mean": float("nan"), **{f"p{q}": float("nan") for q in QUANTILES}}
    return {"mean": float(x.mean()), **{f"p{q}": float(np.percentile(x, q)) for q in QUANTILES}}


def summarize(df: pd.DataFrame, chips: int, tasks: pd.DataFrame | None = None) -> dict:
    """Summary statistics of the counted requests (and tasks)."""
    if df.empty:
        return {"requests": 0}
    start, end = float(df.arrival_s.min()), float(df.done_s.max())
    dur = max(end - start, 1e-12)
    tokens_in, tokens_out = float(df.input_tokens.sum()), float(df.output_tokens.sum())
    prompt_total = tokens_in
    out = {
        "requests": int(len(df)), "duration_s": dur, "chips": chips,
        "throughput_per_chip": (tokens_in + tokens_out) / dur / chips,
        "output_throughput_per_chip": tokens_out / dur / chips,
        "request_rate_per_s": len(df) / dur,
        "ttft_s": _stats(df.ttft_s.to_numpy()), "tpot_s": _stats(df.tpot_s.to_numpy()),
        "e2e_s": _stats(df.e2e_s.to_numpy()), "queue_s": _stats(df.queue_s.to_numpy()),
        "interactivity": 1.0 / float(df.tpot_s.median()) if float(df.tpot_s.median()) > 0 else float("nan"),
        "preemptions": int(df.preemptions.sum()),
        "prefill_tokens": float(prompt_total - df.cached_tokens.sum()),
        "prefix_hit_rate": float(df.cached_tokens.sum() / prompt_total) if prompt_total else 0.0,
        "mean_concurrency_littles_law": len(df) / dur * float(df.e2e_s.mean()),
    }
    if tasks is not None and not tasks.empty:
        out["tasks"] = int(len(tasks))
        out["task_completion_s"] = _stats(tasks.completion_s.to_numpy())
        out["tasks_per_hour_per_chip"] = len(tasks) / dur * 3600 / chips
    return out


def task_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Agentic tasks: one row per session whose every turn was counted and finished."""
    s = df[df.session >= 0]
    if s.empty:
        return pd.DataFrame(columns=["session", "turns", "start_s", "end_s", "completion_s"])
    g = s.groupby("session").agg(turns=("turn", "count"), start_s=("arrival_s", "min"), end_s=("done_s", "max"))
    g["completion_s"] = g.end_s - g.start_s
    return g.reset_index()


def downsample(ts: pd.DataFrame, max_points: int = 2000) -> pd.DataFrame:
    """Every k-th row so that at most ``max_points`` remain."""
    if len(ts) <= max_points:
        return ts
    return ts.iloc[:: int(np.ceil(len(ts) / max_points))].reset_index(drop=True)
