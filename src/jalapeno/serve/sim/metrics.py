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
_FRAME_COLUMNS = (
    ("id", "id", np.int64),
    ("session", "session", np.int64),
    ("turn", "turn", np.int64),
    ("instance", "instance", np.int64),
    ("arrival_s", "arrival_s", float),
    ("first_scheduled_s", "first_scheduled_s", float),
    ("first_token_s", "first_token_s", float),
    ("done_s", "done_s", float),
    ("input_tokens", "isl", np.int64),
    ("output_tokens", "osl", np.int64),
    ("cached_tokens", "cached_tokens", np.int64),
    ("preemptions", "preemptions", np.int64),
)


def request_frame(requests) -> pd.DataFrame:
    """One row per counted request, with derived latencies (seconds)."""
    counted = [r for r in requests if r.counted]
    n = len(counted)
    # column by column (np.fromiter), not a list of row tuples: a million requests stay ~0.1 GB
    df = pd.DataFrame(
        {col: np.fromiter((getattr(r, attr) for r in counted), dtype=dt, count=n) for col, attr, dt in _FRAME_COLUMNS}
    )
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
        "requests": int(len(df)),
        "duration_s": dur,
        "chips": chips,
        "throughput_per_chip": (tokens_in + tokens_out) / dur / chips,
        "output_throughput_per_chip": tokens_out / dur / chips,
        "request_rate_per_s": len(df) / dur,
        "ttft_s": _stats(df.ttft_s.to_numpy()),
        "tpot_s": _stats(df.tpot_s.to_numpy()),
        "e2e_s": _stats(df.e2e_s.to_numpy()),
        "queue_s": _stats(df.queue_s.to_numpy()),
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


def steady_state(arrival_s, first_token_s, done_s, isl, osl, counted, chips: int) -> dict:
    """Throughput per chip over the window where the load is on: from the first counted arrival
    to the last arrival of the run (closed loop: the pool holds C requests until the last one is
    issued; open loop and traces: arrivals still come). The whole-run figure (:func:`summarize`)
    also spans the drain after the last arrival, when fewer and fewer requests run (a short run's
    drain is a large share: docs/gap_gb200_fp4_8k1k.md, "The drain after the pool empties").

    Every request of the run counts (warm-up ones run in the window too), credited at the rate it
    makes progress: its ISL + OSL tokens evenly over its life ``[arrival_s, done_s]`` (so the
    window's figure is Σ (ISL + OSL)/E2E over the requests in flight — the analytic model's
    C·(ISL + OSL)/E2E by Little's law — and phase-locked arrivals, a short run's waves, do not
    bunch its prompts into the window), its output tokens evenly over ``[first_token_s, done_s]``.

    Args: arrays of shape (N,) over all requests (s, s, s, tokens, tokens, bool); ``chips`` > 0.

    Returns:
        ``{"window_s", "throughput_per_chip", "output_throughput_per_chip"}`` (tok/s/chip); an empty
        dict when the window is empty (every request arrives at once).

    >>> r = steady_state([0, 0, 10], [1, 1, 11], [10, 10, 20], [100, 100, 100], [10, 10, 10],
    ...                  [True, True, True], 1)
    >>> r["window_s"], r["throughput_per_chip"], r["output_throughput_per_chip"]
    (10.0, 22.0, 2.0)
    """
    arrival_s, ft, done = (np.asarray(x, dtype=float) for x in (arrival_s, first_token_s, done_s))
    isl, osl, counted = np.asarray(isl, dtype=float), np.asarray(osl, dtype=float), np.asarray(counted, dtype=bool)
    if not counted.any():
        return {}
    t0, t1 = float(arrival_s[counted].min()), float(arrival_s.max())
    if not t1 > t0:
        return {}

    def share(a, b):  # the window's share of each interval [a, b] (an instant: 1 inside, 0 out)
        span = b - a
        inside = np.clip(np.minimum(b, t1) - np.maximum(a, t0), 0.0, None)
        return np.where(span > 0, inside / np.where(span > 0, span, 1.0), ((b >= t0) & (b <= t1)).astype(float))

    tok = float(np.sum((isl + osl) * share(arrival_s, done)))
    out_tok = float(np.sum(osl * share(ft, done)))
    w = t1 - t0
    return {"window_s": w, "throughput_per_chip": tok / w / chips, "output_throughput_per_chip": out_tok / w / chips}


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
