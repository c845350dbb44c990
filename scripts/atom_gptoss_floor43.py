"""ATOM 0.1.1 gpt-oss-120b on MI355X (rows 42 / 49): can ATOM's front end be fitted, and how low can the TPOT go (issue 18, round 43).

Question (round 42's leads): ATOM borrows vLLM's InferenceX front end (fit/stack_fit.SAME_SERVER); can it have its
own, fitted on ATOM points with a declared split? And row 49's measured TPOT (14.2 ms, 1k/1k, C 128) leaves a decode
step of 11.9 ms under the sourced launch (recipe ``atom-mi355x-gptoss-fp4``: FP8 KV cache, prefill-only steps) where
the model prices 15.2 ms: which term is it?

Printed:
1. every ATOM InferenceX point with a TTFT (concurrency, split) against the rules a front-end fit needs:
   fit/stack_fit.MIN_POINTS fit points at concurrency <= FRONTEND_MAX_CONCURRENCY, or published low-load medians
   for fit/median_front.MEDIAN_FRONT;
2. rows 42 / 49 under the recipe: measured median TTFT, the model's, the front end it carries (vLLM's twin entry,
   a + b x mean ISL), the engine part (model less front end) and the room the measurement leaves for a front end;
   and the (a, b) the two rows alone would ask (two equations, two unknowns: what the rows ask, not a fit);
3. a TPOT floor per row: the routed experts of the decode step at aiter's own gfx950 a16w4 time (the kernel ATOM
   0.1.1 ran, round 39's table, the rows' 127-128 tokens), every other op of the model's decode step at its roofline
   time without fixed costs (no kernel floor, no MoE floor, no step overhead), plus the stall: the prompts admitted
   per decode step (decode batch / mean output length, closed loop at the steady state) times one prompt-only step
   at the same no-fixed-cost roofline, its routed experts at no less than one read of the padded MXFP4 weights at
   aiter's measured decode rate; and the same floor with the other decode ops' bytes moved at the chip's datasheet
   HBM peak. That floor against the measured TPOT and the model's;
4. the median TPOT and TTFT of InferenceX's closed loop (``closed_loop``: ATOM 0.1.1's prompt-only steps, every
   waiting prompt in one step up to 16,384 tokens) at the floor's steps and at the model's, with the priced front end.

Sources: InferenceX @2be3de60f gptoss_fp4_mi355x_atom_slurm.sh (the launch); ROCm/ATOM @f969215aa scheduler.py
(prefill-only steps) and moe.py (a16w4 on gfx950, padding to 3,072); ROCm/aiter gptoss_a16w4_tuned_fmoe.csv
@c2b69b9b87 (scripts/mi355x_gptoss_a16w4_moe39.py holds the figures). Nothing is fitted or written.
Run: python scripts/atom_gptoss_floor43.py   (about 30 s)
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

import jalapeno.deploy.engines as engines
from jalapeno.cost.step import Batch, pool_step_cost
from jalapeno.fit.heldout import split_labels
from jalapeno.fit.median_front import MEDIAN_FRONT
from jalapeno.fit.stack_fit import FRONTEND_MAX_CONCURRENCY, MIN_POINTS, SAME_SERVER
from jalapeno.fit.validate import predict_points
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS
from jalapeno.serve.analytic import frontend_s
from jalapeno.serve.queueing import REQUESTS_PER_USER
from jalapeno.specs.workload import INFERENCEX_RANGE_RATIO

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _served_point import served_point  # noqa: E402  (scripts/_served_point.py)

RECIPE = "atom-mi355x-gptoss-fp4"
ROWS = ("inferencex_points:42", "inferencex_points:49")
#: gpt-oss-120b experts as ATOM 0.1.1 stores them: 128 experts, hidden and intermediate padded 2,880 -> 3,072
#: (atom/model_ops/moe.py @f969215aa pad_align), gate+up (2 x 3,072) and down, MXFP4 (4 bits + one 8-bit scale / 32)
PADDED_EXPERT_BYTES = 3 * 3072 * 3072 * (4 + 8 / 32) / 8
EXPERTS, LAYERS = 128, 36
#: ATOM 0.1.1's prompt tokens a step (atom/model_engine/arg_utils.py @f969215aa EngineArgs default max_num_batched_tokens)
STEP_TOKENS = 16384


def _moe39():
    """scripts/mi355x_gptoss_a16w4_moe39.py as a module (its aiter table and interpolation)."""
    path = Path(__file__).with_name("mi355x_gptoss_a16w4_moe39.py")
    spec = importlib.util.spec_from_file_location("moe39", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def stall_floor_s(decode_batch: float, mean_osl: float, prompt_step_s: float) -> float:
    """Seconds a decode step's users wait out prompt-only steps, per decode step: the closed loop admits
    ``decode_batch / mean_osl`` prompts a decode step (each finished request is replaced), each alone in a
    prompt-only step of ``prompt_step_s``.

    Raises ValueError on a non-positive batch or length.

    >>> round(stall_floor_s(128.0, 1024.0, 0.016) * 1e3, 3)
    2.0
    """
    if not (decode_batch > 0 and mean_osl > 0):
        raise ValueError(f"decode_batch and mean_osl must be positive, got {decode_batch}, {mean_osl}")
    return decode_batch / mean_osl * prompt_step_s


def front_end_solve(isl: tuple[float, float], room_s: tuple[float, float]) -> tuple[float, float]:
    """The (a s, b s per token) with a + b x isl[i] = room_s[i] for two prompts of different length.

    Raises ValueError when the two lengths are equal.

    >>> a, b = front_end_solve((1000.0, 8000.0), (0.02, 0.076))
    >>> round(a, 6), round(b * 1e6, 3)
    (0.012, 8.0)
    """
    if isl[0] == isl[1]:
        raise ValueError("two different prompt lengths are needed")
    b = (room_s[1] - room_s[0]) / (isl[1] - isl[0])
    return room_s[0] - b * isl[0], b


def closed_loop(decode_s: float, prompt_s, isl: int, osl: int, concurrency: int, front_s: float, seed: int = 0):
    """InferenceX's closed loop on an engine that runs prompt-only steps (ATOM 0.1.1's scheduler: every waiting prompt,
    up to :data:`STEP_TOKENS`, in one prompt-only step before any decode step), stepped one engine step at a time.

    ``concurrency`` users each issue ``REQUESTS_PER_USER`` requests (all start at once), prompt and output lengths
    uniform integers in [``INFERENCEX_RANGE_RATIO`` x L, L]; a request reaches the scheduler ``front_s`` after it is
    sent (a user sends its next request when its last token leaves). ``decode_s``: one decode step (s, any batch);
    ``prompt_s(n)``: one prompt-only step of n prompts (s). Returns (median TPOT s, median TTFT s, mean prompts a
    prompt-only step), TPOT per request as InferenceX's client takes it ((last - first token) / (output - 1)).

    Raises ValueError on a non-positive step, concurrency or length.

    >>> tpot, ttft, per = closed_loop(0.01, lambda n: 0.0, 10, 10, 1, 0.0)
    >>> round(tpot, 6), round(ttft, 6), per
    (0.01, 0.0, 1.0)
    """
    if not (decode_s > 0 and concurrency >= 1 and isl >= 1 and osl >= 2 and front_s >= 0):
        raise ValueError(
            f"decode_s, concurrency, isl, osl >= 2 and front_s >= 0 needed, got "
            f"{decode_s}, {concurrency}, {isl}, {osl}, {front_s}"
        )
    rng = np.random.default_rng(seed)
    n = concurrency * REQUESTS_PER_USER
    lengths = [rng.integers(int(INFERENCEX_RANGE_RATIO * x), x + 1, n) for x in (isl, osl)]
    isls, osls = lengths
    sent = np.zeros(n)
    waiting = [(front_s, r) for r in range(concurrency)]
    running: dict[int, list[float]] = {}
    tpot, ttft, steps, prompts, t, nxt = [], [], 0, 0, 0.0, concurrency
    while len(tpot) < n:
        ready = sorted(w for w in waiting if w[0] <= t)
        if ready:
            batch, tokens = [], 0
            for w in ready:
                if batch and tokens + isls[w[1]] > STEP_TOKENS:
                    break
                batch.append(w)
                tokens += isls[w[1]]
            for w in batch:
                waiting.remove(w)
            t += prompt_s(len(batch))
            steps, prompts = steps + 1, prompts + len(batch)
            for _, r in batch:
                running[r] = [1.0, t]
                ttft.append(t - sent[r])
            continue
        if not running:
            t = min(w[0] for w in waiting)
            continue
        t += decode_s
        done = []
        for r, st in running.items():
            st[0] += 1
            if st[0] >= osls[r]:
                done.append(r)
        for r in done:
            tpot.append((t - running.pop(r)[1]) / (osls[r] - 1))
            if nxt < n:
                sent[nxt] = t
                waiting.append((t + front_s, nxt))
                nxt += 1
    return float(np.median(tpot)), float(np.median(ttft)), prompts / steps


def _bare_s(row: dict) -> float:
    """An op row's roofline time without its fixed cost (s)."""
    return max(float(row["memory_s"]), float(row["compute_s"]))


def _bytes(row: dict) -> float:
    """An op row's bytes moved (weights, KV cache, activations)."""
    return float(row["weight_bytes"]) + float(row["kv_bytes"]) + float(row["act_bytes"])


def prompt_steps(model, pricer, dep, tokens: float, weight_read_s: float):
    """Two callables n -> seconds of one prompt-only step of n prompts of ``tokens`` each: the floor (every op at its
    roofline time without fixed costs, the routed experts at no less than ``weight_read_s``) and the model's (its op
    times with their fixed costs, plus the stack's step overhead). Memoised per n."""
    cache: dict[int, tuple[float, float]] = {}

    def both(n: int) -> tuple[float, float]:
        if n not in cache:
            b = Batch.make(prefill_tokens=np.array([n * tokens]), prefill_ctx=0.0, prefill_seqs=np.array([float(n)]))
            rows = _step_rows(model, pricer, dep, b)
            moe = max(sum(_bare_s(r) for r in rows if r["op"] == "moe.experts"), weight_read_s)
            floor = moe + sum(_bare_s(r) for r in rows if r["op"] != "moe.experts")
            cache[n] = floor, sum(float(r["time_s"]) for r in rows) + pricer.efficiency.step_overhead_s
        return cache[n]

    return (lambda n: both(n)[0]), (lambda n: both(n)[1])


def inventory() -> None:
    """Part 1: ATOM InferenceX points with a TTFT, against what a front-end fit needs."""
    pts = load_inferencex(DEFAULT_POINTS)[0]
    labels = split_labels(pts)
    mine = [p for p in pts if p.framework == "atom" and p.measured.get("ttft_s") is not None]
    print("| row | model | ISL/OSL | C | split |\n|---|---|---|---|---|")
    for p in mine:
        print(f"| {p.id.split(':')[1]} | {p.model} | {p.isl}/{p.osl} | {p.concurrency} | {labels[p.id]} |")
    low = [p for p in mine if labels[p.id] == "fit" and (p.concurrency or 0) <= FRONTEND_MAX_CONCURRENCY]
    print(
        f"\nATOM points with a TTFT: {len(mine)}; fit points at C <= {FRONTEND_MAX_CONCURRENCY}: {len(low)} "
        f"(a front-end fit needs {MIN_POINTS}); published low-load medians (fit/median_front.MEDIAN_FRONT): "
        f"{'atom-rocm' in MEDIAN_FRONT}; front end taken from SAME_SERVER: {SAME_SERVER.get('atom-rocm')}"
    )


def _step_rows(model, pricer, dep, batch: Batch) -> list[dict]:
    lay = dep.decode.layout
    sc = pool_step_cost(
        model,
        pricer,
        dep,
        lay,
        batch,
    )
    return sc.op_rows(0)


def main() -> None:
    saved = engines.RECIPES_OFF
    engines.RECIPES_OFF = saved - {RECIPE}
    try:
        inventory()
        pts = [p for p in load_inferencex(DEFAULT_POINTS)[0] if p.id in ROWS]
        pred = predict_points(pts).set_index(["id", "metric"])["predicted"]
        moe39 = _moe39()
        print(
            "\n| row | mean ISL | TTFT meas / model ms | front end priced ms | engine part ms | room for a front end ms |"
        )
        print("|---|---|---|---|---|---|")
        isl, rooms, floors, loops = [], [], [], []
        for p in pts:
            model, pricer, dep, wl, run = served_point(p)
            front = frontend_s(pricer.efficiency, wl.mean_isl)
            ttft, meas = float(pred[(p.id, "ttft_s")]), p.measured["ttft_s"]
            engine = ttft - front
            isl.append(wl.mean_isl)
            rooms.append(meas - engine)
            print(
                f"| {p.id.split(':')[1]} | {wl.mean_isl:.0f} | {meas * 1e3:.1f} / {ttft * 1e3:.1f} | {front * 1e3:.1f} | "
                f"{engine * 1e3:.1f} | {(meas - engine) * 1e3:.1f} |"
            )
            batch = float(run.decode_batch[0])
            dec = _step_rows(model, pricer, dep, Batch.make(decode_seqs=np.array([batch]), decode_ctx=wl.decode_ctx))
            moe_dec = LAYERS * float(moe39.a16w4_layer_s(batch)[0])
            other_dec = sum(_bare_s(r) for r in dec if r["op"] != "moe.experts")
            hbm = pricer.system.chip.hbm_bandwidth_bytes_per_s  # the datasheet peak (data/systems/mi355x.toml)
            other_peak = sum(_bytes(r) for r in dec if r["op"] != "moe.experts") / hbm
            rate = EXPERTS * PADDED_EXPERT_BYTES / (moe39.a16w4_layer_s(128.0)[0])  # aiter's decode read rate, B/s
            floor_p, model_p = prompt_steps(
                model, pricer, dep, wl.mean_isl, LAYERS * EXPERTS * PADDED_EXPERT_BYTES / rate
            )
            prompt = floor_p(1)
            stall = stall_floor_s(batch, wl.mean_osl, prompt)
            floors.append((p, batch, moe_dec, other_dec, other_peak, prompt, stall, float(run.tpot_s[0]), rate))
            model_dec = sum(float(r["time_s"]) for r in dec) + pricer.efficiency.step_overhead_s
            loops.append(
                (
                    p,
                    front,
                    closed_loop(moe_dec + other_peak, floor_p, p.isl, p.osl, int(p.concurrency), front),
                    closed_loop(model_dec, model_p, p.isl, p.osl, int(p.concurrency), front),
                )
            )
        a, b = front_end_solve(tuple(isl), tuple(rooms))
        print(
            f"\nWhat the two rows alone ask (not a fit: two points, C 128, both judged): a = {a * 1e3:.1f} ms, "
            f"b = {b * 1e6:.2f} us a prompt token (priced: vLLM's twin entry)"
        )
        print(
            "\n| row | decode batch | routed experts, aiter a16w4 ms | other decode ops, no fixed cost ms | "
            "prompt-only step, no fixed cost ms | stall a decode step ms | TPOT floor ms | floor, other decode ops at "
            "the HBM peak ms | measured | model |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for p, batch, moe_dec, other_dec, other_peak, prompt, stall, tpot, rate in floors:
            floor = moe_dec + other_dec + stall
            print(
                f"| {p.id.split(':')[1]} | {batch:.1f} | {moe_dec * 1e3:.2f} | {other_dec * 1e3:.2f} | "
                f"{prompt * 1e3:.2f} | {stall * 1e3:.2f} | {floor * 1e3:.2f} | {(floor - other_dec + other_peak) * 1e3:.2f} | "
                f"{p.measured['tpot_s'] * 1e3:.2f} | "
                f"{tpot * 1e3:.2f} |"
            )
        print(
            "\n| row | front end ms | closed loop, floor steps: TPOT / TTFT ms (prompts a prompt step) | "
            "closed loop, the model's steps | measured TPOT / TTFT ms |\n|---|---|---|---|---|"
        )
        for p, front, (ft, ff, fn), (mt, mf, mn) in loops:
            print(
                f"| {p.id.split(':')[1]} | {front * 1e3:.1f} | {ft * 1e3:.2f} / {ff * 1e3:.1f} ({fn:.2f}) | "
                f"{mt * 1e3:.2f} / {mf * 1e3:.1f} ({mn:.2f}) | {p.measured['tpot_s'] * 1e3:.2f} / "
                f"{p.measured['ttft_s'] * 1e3:.1f} |"
            )
        print(
            f"\naiter's decode read rate at 128 tokens: {floors[0][-1] / 1e12:.2f} TB/s on "
            f"{EXPERTS * PADDED_EXPERT_BYTES / 1e9:.2f} GB a layer of padded MXFP4 experts"
        )
    finally:
        engines.RECIPES_OFF = saved


if __name__ == "__main__":
    main()
