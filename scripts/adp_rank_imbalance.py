"""How much of the attention-DP decode-step gap the busiest DP rank's batch can carry (issue 18).

Under attention data parallelism with CUDA-graph padding every rank runs the step at the *fullest*
rank's batch (TensorRT-LLM ``CUDAGraphRunner._get_padded_batch``: ``max`` over a ``tp_allgather`` of
the ranks' batch sizes, docs/gap_gb200_fp4_8k1k.md Update 8; SGLang pads its DP-attention graph to
the largest rank's token count). The model prices the step at the mean rank's batch n = decoding
sequences per decode worker / DP. How far the fullest rank sits above n depends on how the engine
assigns requests to ranks:

- ``balanced`` — TensorRT-LLM's executor gives each new request to the least-loaded rank (a heap
  over the ranks' active request counts, ``executor_request_queue._balance_requests_across_ranks``);
  SGLang's decode server round-robins (``--load-balance-method`` resolves to ``round_robin`` on a
  ``decode`` server). Counts then stay within about one request of each other: busiest ≤ n + 1.
- ``random`` — every request on a uniformly random rank, independently (SGLang's prefill side
  ``follow_bootstrap_room``, rank = random bootstrap room mod DP; a router that pins ranks at random).
  At any instant the counts of B = n·DP decoding sequences are multinomial(B, 1/DP), so the busiest
  rank holds about n + σ·E_DP with σ = sqrt(n·(1 − 1/DP)) (normal approximation of each count) and
  E_DP the expected largest of DP independent standard normals (:func:`expected_max_std_normal`).
  This is the least even rule any engine read uses, so it bounds the term from above.

For every disaggregated DeepSeek-R1 row of aiconfigurator-core's silicon sample whose decode pool
runs attention DP (and every matched InferenceX disaggregated attention-DP row), it prints the model's
decoding sequences per rank n, its TPOT error, the measured-minus-model TPOT in ms, the step priced at
the busiest rank under each rule (capped at the rank's slots, ``max_batch_size``, where the recipe sets
one) relative to the step at n (cost/step.step_cost at the pool's MoE
backend, serve/limits.decode_step_s), and the TPOT error the row would have with the step priced at
the busiest rank (a disaggregated decode's TPOT is proportional to its step). Then the median TPOT
error per (system, engine, DP) group, as is and with each rule, and per (system, engine, DP, ISL) group
of ≥ 3 rows the least-squares line gap_ms = a + b·n (the gap's shape: a flat per-token cost, or one that
grows with the sequences per rank). Nothing is fitted into the model or written.
Used by docs/gap_disagg_overprediction.md ("The busiest attention-DP rank").

Run: python scripts/adp_rank_imbalance.py [--source aiconfigurator|inferencex]
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections import defaultdict

import numpy as np

#: Integration grid for :func:`expected_max_std_normal` (the integrand is < 1e-12 outside ±8 for DP ≤ 1024).
_GRID = np.linspace(-8.0, 8.0, 16001)


def expected_max_std_normal(ranks: int) -> float:
    """E[max of ``ranks`` independent standard normals] = ∫ x·r·φ(x)·Φ(x)^(r−1) dx (trapezoid rule).

    Args:
        ranks: number of attention-DP ranks, ≥ 1.

    Returns:
        The expectation (0 for one rank; 1/sqrt(π) = 0.5642 for two).

    Raises:
        ValueError: ``ranks`` < 1, naming the field.
    """
    if ranks < 1:
        raise ValueError(f"ranks = {ranks}: the attention-DP width must be >= 1. Fix: pass the decode pool's DP")
    x = _GRID
    phi = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    cdf = 0.5 * (1.0 + np.array([math.erf(v / math.sqrt(2.0)) for v in x]))
    return float(np.trapezoid(x * ranks * phi * cdf ** (ranks - 1), x))


def busiest_rank_batch(mean_per_rank: float, ranks: int, rule: str) -> float:
    """Expected sequences on the fullest of ``ranks`` attention-DP ranks holding ``mean_per_rank`` on average.

    Args:
        mean_per_rank: decoding sequences per rank on average (n ≥ 0).
        ranks: attention-DP width (≥ 1).
        rule: ``"balanced"`` (least-loaded or round-robin assignment: n + 1, and n for one rank) or
            ``"random"`` (uniform independent assignment: n + sqrt(n·(1 − 1/ranks))·E_ranks).

    Returns:
        The busiest rank's expected batch, sequences.

    Raises:
        ValueError: a negative ``mean_per_rank``, ``ranks`` < 1, or an unknown ``rule``, naming the field.
    """
    if mean_per_rank < 0:
        raise ValueError(f"mean_per_rank = {mean_per_rank}: must be >= 0. Fix: pass sequences per rank")
    if rule == "balanced":
        if ranks < 1:
            raise ValueError(f"ranks = {ranks}: the attention-DP width must be >= 1. Fix: pass the decode pool's DP")
        return mean_per_rank + (1.0 if ranks > 1 else 0.0)
    if rule == "random":
        sigma = math.sqrt(mean_per_rank * (1.0 - 1.0 / ranks)) if ranks >= 1 else 0.0
        return mean_per_rank + sigma * expected_max_std_normal(ranks)
    raise ValueError(f"rule = {rule!r}: unknown. Fix: use 'balanced' or 'random'")


def _points(source: str):
    """The disaggregated DeepSeek-R1 points with an attention-DP decode pool and a measured TPOT."""
    from importlib.resources import files

    from jalapeno.fit.validate import load_aiconfigurator
    from jalapeno.fit.ix_points import load_inferencex

    if source == "aiconfigurator":
        pts, _ = load_aiconfigurator()
    else:
        pts, _ = load_inferencex(files("jalapeno") / "data" / "validation" / "inferencex_points.csv")
        pts = [p for p in pts if p.mapping == "matched"]
    for p in pts:
        dep = p.deployment
        if (
            p.model == "deepseek-r1"
            and p.mode == "disagg"
            and dep is not None
            and dep.prefill is not None
            and dep.decode.layout.dp > 1
            and p.measured.get("tpot_s")
        ):
            yield p


def main() -> None:
    from jalapeno.cost.pool_backends import with_moe_backend
    from jalapeno.cost.step import Batch, step_cost
    from jalapeno.fit.mlperf_scenarios import priced_point
    from jalapeno.serve.limits import decode_step_s
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default="aiconfigurator", choices=("aiconfigurator", "inferencex"))
    args = ap.parse_args()
    model = load_model("deepseek-r1")
    groups: dict[tuple, list[tuple[float, float, float]]] = defaultdict(list)
    shapes: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    print(
        "system       engine               ISL      C   W  DP  n/rank  TPOT_err  gap_ms  "
        "step+bal  step+rand  err@bal  err@rand"
    )
    for p in _points(args.source):
        _, pr, dep, wl = priced_point(p)  # p.model is deepseek-r1 (_points)
        r = serve_at_concurrency(model, pr, dep, wl, [p.concurrency])
        lay, workers = dep.decode.layout, dep.decode.workers
        per_worker = float(r.request_rate_per_s[0] * r.tpot_s[0] * (wl.mean_osl - 1)) / workers
        n = per_worker / lay.dp
        if not n >= 1.0:  # the model decodes < 1 sequence per rank: nothing to balance
            continue
        prm = with_moe_backend(pr, dep.decode.moe_backend, model, lay)

        def step(batch_per_rank: float) -> float:
            b = np.array([batch_per_rank * lay.dp])
            sc = step_cost(
                model,
                prm,
                lay,
                dep.precision,
                Batch.make(decode_seqs=b / lay.pp, decode_ctx=wl.decode_ctx),
                dep.mtp,
                memory_fraction=dep.memory_fraction,
                engine_memory=dep.memory_profile,
            )
            return float(decode_step_s(sc, prm.efficiency, dep, b, lay)[0])

        # a rank never holds more than its slots (max_batch_size per rank, where the recipe sets one)
        cap = dep.running_limit(lay) / lay.dp if dep.max_running else math.inf
        s0 = step(n)
        d_bal = step(min(busiest_rank_batch(n, lay.dp, "balanced"), max(cap, n))) / s0 - 1
        d_rand = step(min(busiest_rank_batch(n, lay.dp, "random"), max(cap, n))) / s0 - 1
        meas, pred = p.measured["tpot_s"], float(r.tpot_s[0])
        err = pred / meas - 1
        e_bal, e_rand = (1 + err) * (1 + d_bal) - 1, (1 + err) * (1 + d_rand) - 1
        engine = str(p.framework)
        groups[(p.system, engine, lay.dp)].append((err, e_bal, e_rand))
        shapes[(p.system, engine, lay.dp, p.isl)].append((n, (meas - pred) * 1e3))
        print(
            f"{p.system[:12]:12s} {engine[:20]:20s} {p.isl:5d} {p.concurrency:6g} {workers:3d} {lay.dp:3d} "
            f"{n:7.1f}  {err:+7.1%}  {(meas - pred) * 1e3:6.2f}  {d_bal:+7.1%}  {d_rand:+8.1%}  "
            f"{e_bal:+7.1%}  {e_rand:+7.1%}"
        )
    print("\nmedian TPOT error per group: as is / busiest rank balanced / busiest rank random  (n rows)")
    for key in sorted(groups):
        rows = groups[key]
        med = [statistics.median(c[i] for c in rows) for i in range(3)]
        print(
            f"  {key[0]:12s} {key[1][:20]:20s} DP{key[2]:<3d} {med[0]:+7.1%} / {med[1]:+7.1%} / {med[2]:+7.1%}  ({len(rows)})"
        )
    print("\nshape of the gap (measured - model TPOT, ms) per group of >= 3 rows: a + b x n/rank")
    for key in sorted(k for k, v in shapes.items() if len(v) >= 3):
        n_, gap = np.array(shapes[key]).T
        b, a = np.polyfit(n_, gap, 1)
        print(
            f"  {key[0]:12s} {key[1][:20]:20s} DP{key[2]:<3d} ISL {key[3]:5d}: a {a:+6.2f} ms, b {b * 1e3:+7.1f} us per "
            f"sequence per rank  (n {n_.min():.0f}-{n_.max():.0f}, gap {gap.min():+.1f}..{gap.max():+.1f} ms, "
            f"{len(n_)} rows)"
        )


if __name__ == "__main__":
    main()
