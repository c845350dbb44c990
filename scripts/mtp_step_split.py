"""The MTP verify step of a disaggregated decode worker, split by op, against the step its measured TPOT implies.

For each matched InferenceX row (default: the B200 Dynamo + TRT-LLM sweep of
``ctx1_gen5_tep8_batch32_eplb0_mtp3``, rows 13-17) the decode pool of the row's validation deployment
is priced at the sequences per decode worker the row runs (C / workers, capped by the pool's
``max_running``), with the pool's MoE and attention backends (cost/pool_backends.with_pool_backends), as
serve/disagg.decode_curve does. Columns: the modelled step and its parts (routed experts, the
attention ops, the collectives, the k drafting passes, the rest), and the step the measured TPOT
implies at the deployment's MTP setting,

    step_implied = TPOT_measured · tokens_per_step,   tokens_per_step = (1 − α^(k+1)) / (1 − α),

so the gap is in step units (α as validated: fitted on the stack's InferenceX rows, data/stack_fits.toml).
A second table prices what the recipe's CUDA-graph padding would add once the sequences are spread
unevenly over the workers: each of C users sits on one of W workers at random (binomial, p = 1/W),
a worker with m sequences serves b = min(m, max_batch_size) of them at the step of the smallest
captured batch ≥ b (TensorRT-LLM ``cuda_graph_config.enable_padding``), and a served user's step is
the request-weighted mean,

    step_user = Σ_m P(m)·b·τ(pad(b)) / Σ_m P(m)·b.

Nothing here changes the model. docs/gap_mtp_verify_step.md reads the output.
Run: python scripts/mtp_step_split.py [ROW ...]   (ROW = the number after inferencex_points:)
"""

from __future__ import annotations

import argparse
from math import comb

import numpy as np

#: Captured decode batch sizes of the B200 recipe ``ctx1_gen5_tep8_batch32_eplb0_mtp3`` (decode
#: ``cuda_graph_config.batch_sizes`` with ``enable_padding: true``; NVIDIA/srt-slurm
#: recipes/trtllm/b200-fp4/1k1k/mtp/ctx1_gen5_tep8_batch32_eplb0_mtp3.yaml @75f6e32a, unchanged since).
RECIPE_GRAPH_SIZES = (1, 2, 3, 4, 5, 8, 9, 10, 16, 17, 18, 29, 30, 31, 32)

ROWS = (13, 14, 15, 16, 17)


def graph_padded(m: int, sizes=RECIPE_GRAPH_SIZES) -> int:
    """The batch a worker with ``m`` decoding sequences runs: the smallest captured size ≥ m, or
    ``m`` itself above the largest (run eagerly, unpadded).

    Raises:
        ValueError: ``m`` < 1 or an empty ``sizes``.
    """
    if m < 1:
        raise ValueError(f"graph_padded: m = {m}; give at least one decoding sequence")
    if not sizes:
        raise ValueError("graph_padded: sizes is empty; give the recipe's captured batch sizes")
    above = [s for s in sizes if s >= m]
    return min(above) if above else m


def per_user_step(step_of, users: int, workers: int, cap: int, sizes=None) -> float:
    """Request-weighted mean step (units of ``step_of``) when ``users`` sit on ``workers`` at random.

    Args:
        step_of: callable, step time of a worker running a batch of m sequences (m ≥ 1).
        users, workers: closed-loop users and decode workers (each user on one worker, p = 1/workers).
        cap: largest batch a worker runs (its ``max_batch_size``); more sequences wait unserved and
            are not counted (their wait is not a decode step).
        sizes: captured CUDA-graph batch sizes to pad to, or None for no padding.

    Raises:
        ValueError: ``users``, ``workers`` or ``cap`` below 1.
    """
    for name, v in (("users", users), ("workers", workers), ("cap", cap)):
        if v < 1:
            raise ValueError(f"per_user_step: {name} = {v}; give a positive integer")
    p = 1.0 / workers
    num = den = 0.0
    for m in range(1, users + 1):
        pm = comb(users, m) * p**m * (1 - p) ** (users - m)
        served = min(m, cap)
        num += pm * served * step_of(graph_padded(served, sizes) if sizes else served)
        den += pm * served
    return num / den


def _split(p, seqs_per_worker):
    """(model, dep, pricer, StepCost) of the row's decode pool at ``seqs_per_worker`` (array)."""
    from jalapeno.cost.pool_backends import with_pool_backends
    from jalapeno.cost.step import Batch, step_cost
    from jalapeno.fit.mlperf_scenarios import priced_point

    model, pricer, dep, wl = priced_point(p)
    lay = dep.decode.layout
    pricer = with_pool_backends(pricer, dep.decode, model, lay)
    b = np.asarray(seqs_per_worker, dtype=float)
    ctx = np.full(b.shape, wl.decode_ctx)
    sc = step_cost(
        model,
        pricer,
        lay,
        dep.precision,
        Batch.make(decode_seqs=b, decode_ctx=ctx),
        dep.mtp,
        dep.memory_fraction,
        engine_memory=dep.memory_profile,
    )
    return dep, sc


def main(rows) -> None:
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validation_run import DEFAULT_POINTS

    want = {f"inferencex_points:{r}": r for r in rows}
    pts, _ = load_inferencex(DEFAULT_POINTS)
    print(
        "| row | C | seqs/worker | TPOT meas ms | step implied ms | step model ms | gap ms | experts ms | "
        "attention ms | collectives ms | draft ms | rest ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    pad_rows = []
    for p in pts:
        if p.id not in want or p.deployment is None or not p.measured.get("tpot_s") or p.deployment.decode is None:
            continue
        dep0 = p.deployment
        workers, cap = dep0.decode.workers, dep0.max_running or 10**9
        s = min(p.concurrency / workers, cap)
        dep, sc = _split(p, [s])
        tps = dep.mtp.tokens_per_step if dep.mtp else 1.0
        names = np.array(sc.ops.name)
        t = sc.times.time_s[:, 0]
        experts = t[names == "moe.experts"].sum()
        attn = t[np.char.startswith(names.astype(str), "attn.")].sum()
        coll = sc.coll_time_s[:, 0].sum()
        step, draft = sc.step_time_s[0], sc.draft_s[0]
        implied = p.measured["tpot_s"] * tps
        print(
            f"| {want[p.id]} | {p.concurrency:g} | {s:.1f} | {p.measured['tpot_s'] * 1e3:.2f} | {implied * 1e3:.2f} | "
            f"{step * 1e3:.2f} | {(implied - step) * 1e3:+.2f} | {experts * 1e3:.2f} | {attn * 1e3:.2f} | "
            f"{coll * 1e3:.2f} | {draft * 1e3:.2f} | {(step - experts - attn - coll - draft) * 1e3:.2f} |"
        )
        pad_rows.append((p, int(p.concurrency), workers, int(min(cap, 32))))
    if not pad_rows:
        return
    p = pad_rows[0][0]
    cap = max(r[3] for r in pad_rows)
    _, sc = _split(p, np.arange(1, cap + 1))
    tau = sc.step_time_s
    print("\n| C | workers | step at C/W ms | random spread ms | random spread + graph padding ms |")
    print("|---|---|---|---|---|")
    for _, users, workers, c in pad_rows:
        mean = tau[min(int(round(users / workers)), c) - 1]
        spread = per_user_step(lambda m: tau[m - 1], users, workers, c)
        padded = per_user_step(lambda m: tau[m - 1], users, workers, c, RECIPE_GRAPH_SIZES)
        print(f"| {users} | {workers} | {mean * 1e3:.2f} | {spread * 1e3:.2f} | {padded * 1e3:.2f} |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rows", nargs="*", type=int, default=list(ROWS), help="InferenceX row numbers")
    main(ap.parse_args().rows)
