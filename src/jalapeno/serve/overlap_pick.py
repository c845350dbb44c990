"""A layout's aggregated points serially and under two-batch overlap, the faster kept at each decode batch.

The sweep (analysis/sweep.py) evaluates every layout with an EP all-to-all both ways and keeps, at each decode
batch of its grid, the variant with the higher throughput per chip (a feasible one before an infeasible one).
Which one wins depends on the decode step alone (throughput and feasibility: serve/analytic.agg_head). A prompt
longer than one rank's token budget adds its chunk steps, each priced beside the decode batch
(serve/chunked.long_chunks: N·K' rows for N batches and K' distinct chunks), and they enter only the prompt's
prefill time, so TTFT and the concurrency. At long prompts they are most of a layout's rows (``compare -w
128k1k``: DP64 ranks with a 256-token budget give about 480 chunks a batch), so :func:`faster_by_point` prices
them for the variant kept at each batch only, not for both, and reads their step times and intervals alone
(cost/step.step_times: no bounds or memory fit), where they are many (:data:`SPLIT_MIN_CHUNK_STEPS`); fewer
join each variant's call on its step kinds, as in aggregated_by_batch. Round 37 (speed37): ``compare -w 128k1k``
in one process 8.4-9.4 -> 4.9-5.2 s CPU with the other cuts of the round (benchmarks/bench_compare.py).

The figures are those :func:`~jalapeno.serve.analytic.aggregated_by_batch` gives, byte for byte: step_cost
prices every point of a batch on its own (Batch.joined, Batch.distinct: a call on some of a batch's points gives
those points' figures), and everything after the step cost is elementwise in the points (tests/unit/
test_overlap_pick.py compares both ways).
"""

from __future__ import annotations

import numpy as np

from jalapeno.cost.batch import Batch
from jalapeno.cost.pricer import Pricer
from jalapeno.cost.step import pool_step_times
from jalapeno.deploy.deployment import Deployment
from jalapeno.serve.analytic import agg_head, agg_plan, agg_tail
from jalapeno.serve.serving_points import ServingPoints
from jalapeno.serve.chunked import long_chunks
from jalapeno.serve.limits import floored_steps, prompt_floor_s
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload

#: Fewest chunk steps (distinct batches x distinct chunks K') for which :func:`faster_by_point` prices them apart,
#: for the variant kept at each batch; below it they join each variant's call on its step kinds, as in
#: aggregated_by_batch. A speed choice (the figures are the same either way): a step call costs about 1 ms
#: besides about 2.4 µs a point (``compare -w 128k1k``, round 37), and pricing the chunk steps apart adds one or
#: two calls a layout, so it pays from several hundred chunk steps on; ``compare`` (8k1k: K' <= 32) stays joined.
SPLIT_MIN_CHUNK_STEPS = 1024


def faster_by_point(
    model: ModelSpec, pricer: Pricer, variants: list[Deployment], wl: Workload, batches
) -> list[tuple[Deployment, ServingPoints]]:
    """The serial deployment ``variants[0]`` and its two-batch-overlap variant ``variants[1]`` (the same layout)
    at decode batches ``batches`` (N,), each clipped to the instance's cap and each distinct clipped batch once
    (in order of first appearance): (deployment, its points) for the serial variant at the batches where it
    wins and the overlap variant where it wins (higher throughput per chip, or feasible where the serial one is
    not), each left out where it wins nowhere. The points are :func:`~jalapeno.serve.analytic.aggregated_by_batch`'s
    at those batches."""
    plans = [agg_plan(model, pricer, d, wl, batches, join=False) for d in variants]
    _, first = np.unique(plans[0][0], return_index=True)  # the same batch grid for every variant (same memory fit)
    first = np.sort(first)
    n, kd = plans[0][0].shape[0], _distinct_chunks(plans[0])
    split = first.size * kd >= SPLIT_MIN_CHUNK_STEPS
    if (
        kd and not split
    ):  # few chunk steps: priced beside the step kinds (one call a variant), as aggregated_by_batch does
        plans = [
            p[:-1] + (Batch.joined(p[-1], long_chunks(d, p[8], p[7], wl.decode_ctx)[1]),)
            for d, p in zip(variants, plans)
        ]
    # the overlap variant first: its call builds the batch's tables and their halves at once, the serial one reuses them
    heads = [agg_head(model, pricer, d, wl, p) for d, p in zip(variants[::-1], plans[::-1])][::-1]
    off, on = ({k: v[first] for k, v in h.items()} for h, _ in heads)
    use = on["feasible"] & (~off["feasible"] | (on["tput"] > off["tput"]))
    out = []
    for d, plan_, head, (_, long_s), sel in zip(variants, plans, (off, on), heads, (~use, use)):
        if sel.any():
            rows = np.flatnonzero(sel)
            long_s = (
                _long_steps(model, pricer, d, wl, plan_, first[rows])
                if split
                else tuple(a.reshape(n, -1)[first[rows]].ravel() if kd else a for a in long_s)
            )
            out.append((d, agg_tail(pricer, d, wl, plan_, {k: v[rows] for k, v in head.items()}, long_s)))
    return out


def _distinct_chunks(plan_: tuple) -> int:
    """K': the distinct chunk steps of a batch point in an agg_plan (its long prompts' chunks), 0 for none."""
    return int(plan_[10][3].max()) + 1 if plan_[9] else 0


def _long_steps(
    model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload, plan_: tuple, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The floored step times and intervals (s) of the long-prompt chunk steps of the plan's points ``rows``
    ((M·K',) each, point major, as agg_head gives them from a joined batch; empty where no prompt is that long)."""
    b_pre, lengths, long = plan_[7], plan_[8], plan_[9]
    if not long:
        return np.zeros(0), np.zeros(0)
    lay = dep.decode.layout
    chunks = long_chunks(dep, lengths, b_pre[rows], wl.decode_ctx)[1]
    step_s, interval_s = pool_step_times(model, pricer, dep, lay, chunks)
    return floored_steps(
        step_s, chunks.decode_seqs - 1, chunks.prefill_tokens, prompt_floor_s(model, dep, pricer=pricer)
    ), interval_s
