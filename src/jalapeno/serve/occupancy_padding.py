"""The CUDA-graph padding an open-loop (Poisson) run's fluctuating batch pays: E[τ(N)] − τ(E[N]).

A padding CUDA-graph engine runs a decode-only step at the smallest captured batch at or above its batch
(serve/limits.graph_padded), and under attention DP every rank replays the graph of the largest rank's batch:
TensorRT-LLM's ``CUDAGraphRunner.maybe_get_cuda_graph`` all-gathers ``[can_run_cuda_graph, batch_size]`` over the
ranks (tensorrt_llm/_torch/pyexecutor/cuda_graph_runner.py; docs/model.md §8.7, round 27). The step time τ(n) of
n sequences is therefore a staircase: nearly flat between captured sizes, a jump at each (the MLPerf DeepSeek-R1
engines capture [128, 256, 384, 512] a rank: 79.3 ms at 383 a rank against 89.7 at 510 on NVIDIA B200,
docs/gap_large_batch_decode.md round 45).

A closed-loop run at concurrency C holds its batch fixed, so pricing the step at the mean batch is right there. An
open-loop run at a Poisson rate does not: the requests in flight are those of an M/G/∞ queue, Poisson with mean
c = the point's decode batch (Little), so a load whose mean sits just under a captured size crosses it in a share of
its steps, and its mean step is E[τ(N)], N ~ Poisson(c), not τ(c). :func:`padding_excess_s` is that difference per
output token, signed (a mean just above a size drops below it in some steps).

ASSUMPTIONS: the ranks hold equal shares (the largest rank's n/dp; TensorRT-LLM's balancing keeps no rank above
⌈(active + new)/dp⌉ at admission, but departures unbalance it in between, so this is a lower bound on the crossings:
at 372 a rank over dp 8 the equal share crosses 384 in 3.9% of steps, the largest of eight independent Poisson(372)
ranks in 91%, 1 − P(N <= 384)^8, review54);
the fluctuation of the batch is Poisson (the M/G/∞ count at the mean arrival rate, its service times taken as
independent of the count); the decode-only step stands for every step (the prompt steps run eagerly, unpadded).

Switch: :data:`OCCUPANCY_PADDING_ON` (fit/latency_limits adds the excess to the p99 TPOT it judges an open-loop
load by when on, a row with a LoadGen run only).
"""

from __future__ import annotations

import numpy as np

#: Judge an open-loop (LoadGen Server / Interactive) load's p99 TPOT with the CUDA-graph padding its Poisson batch
#: pays on average (:func:`padding_excess_s`) added (fit/latency_limits._judged_p99s). Round 54 (mlperf54).
OCCUPANCY_PADDING_ON = True

#: Standard deviations of the Poisson batch each side of its mean the expectation sums over (mass outside < 1e-6).
SPAN_SD = 5.0


def poisson_support(c: float) -> tuple[np.ndarray, np.ndarray]:
    """The integers within :data:`SPAN_SD` standard deviations of ``c`` (at least 0) and their Poisson(``c``) weights,
    renormalised to sum to 1: ((M,), (M,)), the terms :func:`poisson_mean_of` sums."""
    from scipy.stats import poisson

    sd = np.sqrt(max(c, 1e-12))
    n = np.arange(max(0.0, np.floor(c - SPAN_SD * sd)), np.ceil(c + SPAN_SD * sd) + 1.0)
    w = poisson.pmf(n, c)
    return n, w / np.sum(w)


def poisson_mean_of(step_at, c: float) -> float:
    """E[step_at(N)] for N ~ Poisson(``c``), summed over the integers within :data:`SPAN_SD` standard deviations
    (renormalised, :func:`poisson_support`); ``step_at`` maps an (M,) array of batches to (M,) step times.

    >>> round(poisson_mean_of(lambda n: 2.0 * n, 40.0), 3)  # linear: the mean's own value, 80
    80.0
    >>> round(poisson_mean_of(lambda n: np.where(n > 40, 1.0, 0.0), 40.0), 4)  # P(N > 40) at mean 40
    0.4581
    """
    n, w = poisson_support(c)
    return float(np.sum(w * np.asarray(step_at(n), dtype=float)))


def padding_excess_s(model, pricer, dep, wl, pts) -> np.ndarray:
    """E[τ(N)] − τ(c) per output token (s), (N,), of ``dep``'s open-loop points ``pts``: c the point's decode batch
    per instance, N ~ Poisson(c), τ the decode-only step (serve/open_loop.decode_step_s: padded to the captured
    CUDA-graph batch), converted to TPOT by the point's own TPOT over its step time. Zero for a deployment without
    captured sizes (no staircase) or a disaggregated one (its decode pool's batch is not a Poisson count of the
    arrivals here; not priced). Every point's c and Poisson support are priced in one decode_step_s call (review54:
    a call per point cost 0.7 s of validate --mlperf's 35 s, 1,672 calls).

    The TPOT conversion is checked for pp = 1 only (every LoadGen row's engine, round 54): decode_step_s is a
    micro-batch step times pp, and whether ``pts``' TPOT / step time carries pp again is not (an ASSUMPTION to check
    before a pipelined open-loop row is priced).
    """
    from jalapeno.serve.open_loop import decode_step_s

    out = np.zeros(len(pts))
    if not dep.cuda_graph_batch_sizes or dep.prefill is not None or not len(pts):
        return out
    batch = np.asarray(pts.decode_batch, dtype=float)
    todo = [i for i, c in enumerate(batch) if c >= 1.0 and np.isfinite(c)]
    if not todo:
        return out
    supports = [poisson_support(float(batch[i])) for i in todo]
    # one call: the means c first, then each point's support (batches below one priced at one, as an idle step)
    ns = np.concatenate([batch[todo]] + [np.maximum(n, 1.0) for n, _ in supports])
    steps = np.asarray(decode_step_s(model, pricer, dep, wl, ns), dtype=float)
    at = len(todo)
    for j, i in enumerate(todo):
        n, w = supports[j]
        mean = float(np.sum(w * steps[at : at + n.size]))
        at += n.size
        per_token = float(pts.tpot_s[i]) / float(pts.step_time_s[i]) if pts.step_time_s[i] > 0 else 1.0
        out[i] = (mean - float(steps[j])) * per_token
    return out
