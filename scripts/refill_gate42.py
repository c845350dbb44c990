#!/usr/bin/env python3
"""Refill dispatch against TensorRT-LLM's attention-DP context gate, per rank (issue 18, round 42, refill42).

Question: round 41 prices the prompts of an attention-DP step whose ranks are all at their ``max_batch_size`` as
landing on uniformly random ranks, the step's busiest rank running the expected most of n balls in dp bins in ONE step
(``Layout.dp_dispatch`` = ``refill``, cost/adp_rank.busiest_rank_prompts). That made the B200 DEP4 8k/1k C256 fit
row −21% (interactivity, from +15%). How many prompt-carrying steps does a decode lifetime hold, and what does each
cost, by the engine's own schedule?

The schedule, read from NVIDIA/TensorRT-LLM (the releases in these rows, 1.1.0rc2 to 1.2.0rc6):

- ``executor_request_queue._balance_requests_across_ranks``: a new request goes to a rank below
  ``expected_num_active_requests`` = max(⌈(active + new)/dp⌉, max active); with every rank at its cap only the rank whose
  request finished is below it, so the request joins that rank (refill).
- ``PyExecutor._balance_adp_requests`` (``attention_dp_config.enable_balance``, which every refill row's launch script
  sets with ``timeout_iters`` 60 and ``batching_wait_iters`` 0, data/engines.toml): the context requests of every rank
  are held while some rank has none, counting those iterations; all ranks release together once every rank has one,
  or when the count reaches ``timeout_iters`` (then every rank that holds one releases); the count restarts at each
  release.
- The scripts' ``--max_num_tokens`` ((k + 1)·max_batch + ISL + 64, to 64, a rank; fit/aic_sweep_launch.
  sized_token_limit) holds one whole prompt a rank a step: a rank with two held prompts runs them in two releases.

So a step never carries two prompts on one rank; a release carries one prompt on each rank that holds one, and a rank
whose prompts collided keeps the rest for the next release. :func:`simulate` plays that schedule out per rank
(closed loop, C = dp·slots users, lengths uniform in [r·OSL, OSL], MTP acceptance per step), timing every step by a
table of the model's own step with k prompts one a rank beside the decode batch (:func:`step_table`, the balanced
rule: busiest rank one prompt); ``gate=False`` is the lead's "spread" reading (each rank runs its next prompt at once,
one-prompt steps).

Parts (VALIDATE_CSV: ``jalapeno validate --json -o``; about 10 s a row):

1. Per refill row (ISL 8192 unless ``--all``): the gate's prompt-carrying steps per decode lifetime, prompts per
   such step and mean release wait, and the interactivity error as shipped (refill), by the gate, by the spread, and
   by the gate with the prompt part of the step scaled by its twins' TTFT (part 2).
2. Twins: the same system, precision and TensorRT-LLM release at 8k/1k, attention TP, C <= 16 (where TTFT is about one
   prompt step): median measured / predicted TTFT. A what-if only: a factor read from measured rows is not shippable.

Findings (docs/gap_aic_itl.md, round 42): the gate releases one prompt on every rank (4.0 a prompt step at DEP4 C256,
7.8-8.0 at DEP8 C128-256), so by the source the refill rows price as balanced (round 40's +15..+45% interactivity);
the spread reading is −15..−42%. With the twins' TTFT factor (1.08 on 1.2.0rc6.post3, 1.41-1.45 on 1.1.0rc2) the gate
reads +6..+15% on all eight 8k rows, row 948 +10.6%: refill's busiest-rank price stands in for an under-priced
TensorRT-LLM 8k prompt step, which is why the one 1.2.0rc6 row (twins −8%, not −30%) overshoots. On B200 the twins'
missing time grows with the prompt (1k twins 0.87-0.97); the H200 FP8 twins miss ~0.24 s at 1k and 8k alike.

Usage: python scripts/refill_gate42.py VALIDATE_CSV [--all]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from collections import deque

import numpy as np


def simulate(
    dp: int,
    slots: int,
    osl: int,
    range_ratio: float,
    acceptance: float,
    timeout_iters: int,
    step_s,
    gate: bool = True,
    steps: int = 40000,
    warm: int = 8000,
    seed: int = 0,
) -> dict:
    """Play TensorRT-LLM's attention-DP schedule at full slots (module docstring) for ``steps`` engine steps.

    Args:
        dp: attention-DP ranks; slots: ``max_batch_size`` a rank (C = dp·slots users, every slot always taken).
        osl: output tokens, each request's drawn uniformly from [round(range_ratio·osl), osl].
        acceptance: MTP one-draft acceptance (a decode step yields 1 + Bernoulli(acceptance) tokens; 0 without MTP).
        timeout_iters: ``attention_dp_config.timeout_iters``.
        step_s: (dp + 1,) seconds of a step carrying k = 0..dp prompts, one a rank.
        gate: the context gate (``enable_balance``); False: each rank runs its next held prompt every step.
        warm: steps left out of the statistics (the run starts with every request held).

    Returns: dict of ``k`` (prompts in each counted step), ``tpot_s`` and ``ttft_s`` (means over requests that
    finished or started in the counted steps; TTFT from arrival to the end of the prompt's step), ``wait_steps``.

    Raises:
        ValueError: dp, slots or osl below 1, ``step_s`` not of length dp + 1, or warm not below steps.

    >>> r = simulate(1, 1, 5, 1.0, 0.0, 60, [1.0, 3.0], steps=100, warm=50)  # 5-step cycle: 3 s prompt, 4 x 1 s
    >>> round(float((r["k"] > 0).mean()), 3), r["ttft_s"], r["tpot_s"]
    (0.2, 3.0, 1.0)
    """
    t = np.asarray(step_s, dtype=float)
    if min(dp, slots, osl) < 1 or t.shape != (dp + 1,) or not 0 <= warm < steps:
        raise ValueError(
            f"simulate: dp, slots, osl must be >= 1, step_s of length dp + 1 = {dp + 1}, warm < steps; "
            f"got dp={dp}, slots={slots}, osl={osl}, len(step_s)={t.size}, warm={warm}, steps={steps}"
        )
    rng = np.random.default_rng(seed)
    lo = int(round(range_ratio * osl))
    left = np.full((dp, slots), np.nan)  # tokens a decoding request still owes; nan: the slot's request is held
    began, tokens = np.zeros((dp, slots)), np.ones((dp, slots))
    held = [deque((0, s) for s in range(slots)) for _ in range(dp)]  # (arrival step, slot)
    arriving: deque = deque()
    clock = np.zeros(steps + 1)
    count, ks, ttft, tpot, wait = 0, [], [], [], []
    for st in range(steps):
        while arriving and arriving[0][0] <= st:
            _, r, s = arriving.popleft()
            held[r].append((st, s))
        if not gate:
            go = True
        elif all(held):
            go, count = True, 0
        else:
            count += 1
            go = count >= timeout_iters
            count = 0 if go else count
        out = [(r, *held[r].popleft()) for r in range(dp) if go and held[r]]
        clock[st + 1] = clock[st] + t[len(out)]
        decoding = ~np.isnan(left)
        left = np.where(decoding, left - 1 - (rng.random(left.shape) < acceptance), left)
        for r, s in zip(*np.nonzero(decoding & (left <= 0))):
            if st >= warm:
                tpot.append((clock[st + 1] - began[r, s]) / max(tokens[r, s] - 1, 1))
            left[r, s] = np.nan
            arriving.append((st + 1, r, s))  # the user's next request reaches the engine for the next step
        for r, came, s in out:
            tokens[r, s] = rng.integers(lo, osl + 1)
            left[r, s], began[r, s] = tokens[r, s] - 1, clock[st + 1]  # the prompt's step gives the first token
            if st >= warm:
                ttft.append(clock[st + 1] - clock[came])
                wait.append(st - came)
        if st >= warm:
            ks.append(len(out))
    return {
        "k": np.array(ks),
        "tpot_s": float(np.mean(tpot)),
        "ttft_s": float(np.mean(ttft)),
        "wait_steps": float(np.mean(wait)),
    }


def capture_row(point) -> tuple:
    """(model, pricer, dep, workload, decode batch, decode steps a request, shipped predictions frame) of one
    aggregated ``point`` as fit/validate.predict_points prices it (the pricer with the pool's engine backends), read
    by wrapping serve/analytic.agg_head for the one call."""
    import jalapeno.serve.analytic as an
    from jalapeno.fit.validate import predict_points

    seen, plain = {}, an.agg_head

    def record(model, pricer, dep, wl, plan_):
        head, long_s = plain(model, pricer, dep, wl, plan_)
        seen["x"] = (model, pricer, dep, wl, float(head["b"][0]), float(plan_[2]))
        return head, long_s

    an.agg_head = record
    try:
        frame = predict_points([point])
    finally:
        an.agg_head = plain
    return (*seen["x"], frame)


def step_table(model, pricer, dep, wl, decode_batch: float) -> np.ndarray:
    """(dp + 1,) seconds of the model's step beside ``decode_batch`` decoding sequences carrying k = 0..dp mean
    prompt chunks, one a rank (balanced dispatch: the busiest rank runs one), priced as serve/analytic.agg_head prices
    its steps (CUDA-graph padding of the decode-only step, the eager prompt step's host floor), on the pricer agg_head
    received (:func:`capture_row`, already carrying the pool's engine backends). Built by hand, not by
    serve/open_loop.decode_pool_step: its rows carry k = 0..dp prompts in one call on the balanced-dispatch layout,
    and ``decode_batch`` is agg_head's per-step batch, where decode_pool_step prices a decode-only step alone."""
    from dataclasses import replace

    from jalapeno.cost.step import Batch, pool_step_cost
    from jalapeno.serve.agg_batch_cap import _chunk
    from jalapeno.serve.limits import decode_step_s, floored_steps, graph_padded, prompt_floor_s

    lay = replace(dep.decode.layout, dp_dispatch="balanced")
    chunk = _chunk(dep, wl.mean_isl)
    k = np.arange(lay.dp + 1, dtype=float)
    batch = graph_padded(
        dep,
        lay,
        Batch.make(
            decode_seqs=np.full(k.size, decode_batch),
            decode_ctx=wl.decode_ctx,
            prefill_tokens=k * chunk,
            prefill_ctx=(wl.mean_isl - chunk) / 2,
            prefill_seqs=k,
        ),
    )
    sc = pool_step_cost(
        model,
        pricer,
        dep,
        lay,
        batch,
    )
    out = floored_steps(
        sc.step_time_s, batch.decode_seqs - 1, batch.prefill_tokens, prompt_floor_s(model, dep, pricer=pricer)
    )
    out[0] = decode_step_s(sc, pricer.efficiency, dep, np.full(k.size, decode_batch), lay)[0]
    return out


def twin_factor(rows: list[dict], system: str, precision: str, stack: str, isl: str) -> tuple[float, int]:
    """(median measured/predicted TTFT, rows) of the aiconfigurator DeepSeek-R1 TensorRT-LLM aggregated rows of
    ``system``, ``precision`` and ``stack`` at ISL ``isl``/1k with attention TP (DP1) and concurrency <= 16; (1.0, 0)
    without any."""
    r = [
        float(x["measured"]) / float(x["predicted"])
        for x in rows
        if x["source"] == "aiconfigurator"
        and x["metric"] == "ttft_s"
        and x["system"] == system
        and x["precision"] == precision
        and x["stack"] == stack
        and x["mode"] == "agg"
        and x["isl"] == isl
        and x["osl"] == "1024"
        and "DP1 " in x["deployment"]
        and float(x["concurrency"]) <= 16
        and x["model"] == "deepseek-r1"
        and x["framework"].startswith("trtllm")
    ]
    return (statistics.median(r), len(r)) if r else (1.0, 0)


def _points(ids: set[str]) -> list:
    from jalapeno.fit.validate import load_aiconfigurator
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validation_run import DEFAULT_POINTS

    pts = load_inferencex(DEFAULT_POINTS)[0]
    try:
        pts += load_aiconfigurator()[0]
    except Exception:  # noqa: BLE001  (no aiconfigurator package: the InferenceX rows alone)
        pass
    seen, out = set(), []
    for p in pts:
        if p.id in ids and p.id not in seen:
            seen.add(p.id)
            out.append(p)
    return out


def main(argv: list[str] | None = None) -> int:
    """Parts 1 and 2 of the module docstring for the refill rows of a ``validate --json -o`` CSV."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("validate_csv")
    ap.add_argument("--all", action="store_true", help="every refill row, not only ISL 8192")
    args = ap.parse_args(argv)
    rows = list(csv.DictReader(open(args.validate_csv)))
    refill = {r["id"]: r for r in rows if "dispatch refill" in r["deployment"] and (args.all or r["isl"] == "8192")}
    print(
        "row | system stack | dp C | D | gate: prompt steps a lifetime, prompts a prompt step, wait steps | "
        "interactivity error %: shipped, gate, spread, gate x twin TTFT (factor, n)"
    )
    for p in sorted(_points(set(refill)), key=lambda q: q.id):
        model, pricer, dep, wl, b, d, frame = capture_row(p)
        meas = {r["metric"]: r for _, r in frame.iterrows()}
        r0, lay = refill[p.id], dep.decode.layout
        table = step_table(model, pricer, dep, wl, b)
        s, n = twin_factor(rows, r0["system"], r0["precision"], r0["stack"], r0["isl"])
        twin = np.concatenate([table[:1], table[0] + s * (table[1:] - table[0])])
        slots = int(round(dep.max_running / lay.dp))
        acc = dep.mtp.acceptance if dep.mtp is not None else 0.0
        inter = meas["interactivity"]
        runs = [
            simulate(lay.dp, slots, int(wl.osl), wl.range_ratio, acc, dep.adp_balance_timeout_iters or 0, tab, gate=g)
            for tab, g in ((table, True), (table, False), (twin, True))
        ]
        err = [100 * ((1 / x["tpot_s"]) / inter["measured"] - 1) for x in runs]
        k = runs[0]["k"]
        print(
            f"{p.id[-44:]} | {r0['system']} {r0['stack']} | {lay.dp} {int(p.concurrency)} | {d:.0f} | "
            f"{(k > 0).mean() * d:.1f}, {k[k > 0].mean():.2f}, {runs[0]['wait_steps']:.1f} | "
            f"{100 * inter['error']:+.1f}, {err[0]:+.1f}, {err[1]:+.1f}, {err[2]:+.1f} ({s:.2f}, {n})",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
