"""InferenceX H200 interactivity (held out: rows of split ``held_out`` and ``none``, goal miss 9.1 / 25.3 / −6.1%):
which rows make each statistic, what the rows' launch scripts record, and two sourced mechanisms priced as what-ifs
(issue 18, round 41, h200int41; docs/gap_aic_itl.md "round 41, h200int41"). Nothing is shipped or written.

Part 1 (VALIDATE_CSV: ``jalapeno validate --json -o VALIDATE_CSV``, every row with ``split`` and ``quality``). The
rows of the group, by signed error, with their launch script's limits as read at the rows' dates (the constants
below, each with its commit), and which rows set the median |error|, the bias (median signed error) and the p90
(linear interpolation, numpy's default).

Part 2 (``--whatif``, about 10 s: three InferenceX validations of H200 and B200). The TensorRT-LLM single-node MTP
scripts size ``--max_num_tokens`` to the load, ((k + 1)·max_batch + ISL + 64) rounded up to 64, per attention-DP rank,
with no chunked prefill; the aiconfigurator rows of the same scripts carried it before round 41
(fit/aic_sweep_launch.with_sweep_token_limit), the InferenceX rows priced through the launch recipe did not (the
default 8,192-token budget an instance, 1,024 tokens a rank at DP8). Round 41 gives the recipes the rule
(data/engines.toml ``max_num_tokens_sized``, ``max_batch_dp_attention``; fit/searched.with_launch_token_limit) and,
where every rank's max_batch is full, the refill dispatch (part 3; fit/aic_sweep_launch.REFILL_ON_FULL_SLOTS). The
part prints every InferenceX row that moves between three runs: neither (the recipe rule and refill switched off),
the sized limit alone (refill off), and both (as shipped).

Part 3 (``--whatif``). Where prompts land when the slots are full. The row-25 script sizes ``max_batch_size`` to
CONC/TP a rank, so at concurrency 256 on DP8 every rank holds its 32 requests and a new one can only go where a request
finished (TensorRT-LLM ``executor_request_queue._balance_requests_across_ranks``: no rank above ⌈(active + new)/dp⌉),
a uniformly random rank; the context balance holds the prompts until every rank has one or ``timeout_iters`` = 60
steps pass (serve/adp_balance). Each rank's sized ``max_num_tokens`` (8,320) holds one 8k prompt a step, so a rank
with m held prompts runs them in m steps, the other ranks decoding beside it (the MoE exchange syncs the ranks). The
part draws releases (arrivals on random ranks until all dp ranks are hit or the window's Poisson(a·T) arrivals run
out; 20,000 draws, seed 0) and prices each release's prompt steps with the model's step (the round-40 table,
scripts/h200_adp_prompt_cost40.model_steps: 239 decoding at 7,800 context beside g prompts of 7,373 tokens, one a
rank): Σ_k (step(n_k) − step(0)), n_k the ranks with at least k prompts, as the whole-instance time one prompt on a
rank costs, 8·Σ/N; beside the same prompts spread evenly (the balanced rule, cost/adp_rank.busiest_rank_prompts) and
the run's 2.53 s (round 40). The shipped rule (cost/adp_rank, ``refill``) prices a step's expected busiest rank
instead of these discrete releases.

Usage: python scripts/h200_ix_int41.py VALIDATE_CSV [--whatif]
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

#: The launch-script limits of each row, read at the commit in force on the row's date (SemiAnalysisAI/InferenceX).
#: ``recorded``: whether the model's deployment of the InferenceX row carries them (data/engines.toml).
SCRIPTS = {
    "inferencex_points:25": (
        "benchmarks/dsr1_fp8_h200_trt_mtp_slurm.sh @008b91a9dd78: DP8 MTP1, max_batch_size CONC/TP = 32 a rank, "
        "max_num_tokens ((MTP+1)*32 + 8192 + 127)/64*64 = 8320 a rank, no chunked prefill, timeout_iters 60, "
        "stream_interval 10",
        "max_batch and max_num_tokens yes from round 41 (recipe max_num_tokens_sized, max_batch_dp_attention); "
        "before: the default 8192 an instance, 1024 a rank",
    ),
    "inferencex_points:32": (
        "Dynamo recipe files (NVIDIA/srt-slurm @5063eb43 recipes/trtllm/h200/1k1k/*): prefill max_num_tokens 8192 a rank",
        "yes (recipe dynamo-trt-dsr1-fp8 workload 1k1k)",
    ),
    "inferencex_points:43": (
        "benchmarks/gptoss_fp4_h200_trt_slurm.sh @f6a9d0b6adf1: TP1, max_batch_size CONC, max_num_tokens 20000, "
        "no chunked prefill, moe_config.backend TRITON, stream_interval 20",
        "yes (recipe trtllm-h200-gptoss-fp4)",
    ),
    "inferencex_points:50": ("as row 43", "yes (recipe trtllm-h200-gptoss-fp4)"),
    "sglang": (
        "benchmarks/single_node/dsr1_fp8_h200.sh @ed5867f9e (in force 2026-05-12..06-02, the rows' v0.5.12 run of "
        "2026-05-17): TP8, --max-running-requests 512 (1k1k) / 256, --chunked-prefill-size 32768, "
        "--mem-fraction-static 0.82, --attention-backend flashinfer, --stream-interval 10",
        "yes but the attention backend (data/attention_backends.toml has no FlashInfer MLA entry)",
    ),
}
DP, TIMEOUT_ITERS = 8, 60
RUN_PER_PROMPT_S = 2.53  # round 40, scripts/h200_adp_prompt_cost40.py part 1 (row 25's measured TTFT and TPOT)


def quantile(values: list[float], p: float) -> float:
    """Linear-interpolation quantile (numpy's default).

    >>> quantile([1.0, 2.0, 3.0, 4.0], 0.9)
    3.7
    """
    v = sorted(values)
    k = (len(v) - 1) * p
    f = int(k)
    c = min(f + 1, len(v) - 1)
    return v[f] + (v[c] - v[f]) * (k - f)


def group_rows(path: str, source: str = "inferencex", system: str = "h200", metric: str = "interactivity") -> list:
    """(id, row) of the group's held-out rows (split held_out or none, no quality flag), by signed error."""
    with open(path, newline="") as f:
        rows = [
            r
            for r in csv.DictReader(f)
            if r["source"] == source
            and r["system"] == system
            and r["metric"] == metric
            and r["split"] in ("held_out", "none")
            and not r["quality"]
        ]
    return sorted(rows, key=lambda r: float(r["error"]))


def part1(path: str) -> None:
    rows = group_rows(path)
    if not rows:
        raise SystemExit(f"error: {path} has no InferenceX H200 interactivity rows; fix: pass an all-rows validate CSV")
    e = [100 * float(r["error"]) for r in rows]
    a = sorted(abs(x) for x in e)
    print(
        f"part 1: InferenceX H200 interactivity, n {len(e)}: median |e| {statistics.median(a):.1f}, "
        f"p90 {quantile(a, 0.9):.1f}, bias {statistics.median(e):+.1f} (%)"
    )
    for r, x in zip(rows, e):
        key = r["id"] if r["id"] in SCRIPTS else "sglang"
        print(
            f"  {r['id']:22s} {r['split']:8s} {r['model']:13s} {r['framework']:10s} {r['isl']:>5s}/{r['osl']:<5s} "
            f"C {float(r['concurrency']):6.0f}  meas {float(r['measured']):7.2f} pred {float(r['predicted']):7.2f} "
            f"{x:+6.1f}%"
        )
        if key == r["id"] or r["id"].endswith(":58"):
            print(f"      script: {SCRIPTS[key][0]}\n      recorded: {SCRIPTS[key][1]}")
    n = len(e)
    mid = (n - 1) / 2
    print(
        f"  bias = mean of the signed errors ranked {math.floor(mid) + 1} and {math.ceil(mid) + 1}: "
        f"{e[math.floor(mid)]:+.1f}, {e[math.ceil(mid)]:+.1f}; median |e| of {a[math.floor(mid)]:.1f}, "
        f"{a[math.ceil(mid)]:.1f}; p90 between {a[-2]:.1f} and {a[-1]:.1f}"
    )


def _run(sized: bool, refill: bool):
    """InferenceX H200 + B200 validation rows with the recipe rule (``sized``) and the refill dispatch switched."""
    import jalapeno.fit.aic_sweep_launch as launch
    import jalapeno.fit.searched as searched
    from jalapeno.fit.validation_run import run_validation

    orig_limit, orig_refill = searched.with_launch_token_limit, launch.REFILL_ON_FULL_SLOTS
    if not sized:
        searched.with_launch_token_limit = lambda dep, *a, **k: dep
    launch.REFILL_ON_FULL_SLOTS = refill
    try:
        return run_validation(use_aiconfigurator=False, systems=("h200", "b200"))["rows"]
    finally:
        searched.with_launch_token_limit, launch.REFILL_ON_FULL_SLOTS = orig_limit, orig_refill


def part2() -> None:
    runs = [_run(False, False), _run(True, False), _run(True, True)]
    m = (
        runs[0]
        .merge(runs[1], on=["id", "metric"], suffixes=("", "_sized"))
        .merge(
            runs[2][["id", "metric", "error", "predicted"]].rename(
                columns={"error": "error_both", "predicted": "p_both"}
            ),
            on=["id", "metric"],
        )
    )
    moved = m[
        ((m["predicted"] - m["p_both"]).abs() > 1e-9 * m["predicted"].abs())
        | ((m["predicted"] - m["predicted_sized"]).abs() > 1e-9 * m["predicted"].abs())
    ]
    print("part 2: InferenceX rows that move, error % with neither / the sized limit alone / both (shipped)")
    for _, r in moved.iterrows():
        print(
            f"  {r['system']:5s} {r['id']:22s} {r['metric']:20s} {r['split']:8s} "
            f"{100 * r['error']:+6.1f} / {100 * r['error_sized']:+6.1f} / {100 * r['error_both']:+6.1f}"
        )
    if moved.empty:
        print("  no row moves")


def release_cost(
    arrivals_per_window: float, extra_s: list[float], dp: int = DP, draws: int = 20000, seed: int = 0
) -> tuple[float, float, float]:
    """(mean prompts a release, whole-instance s per prompt on a rank with random ranks, the same spread evenly).

    ``extra_s[g]``: the model's step with g prompts (one a rank) less its decode-only step, g = 0..dp.

    >>> n, rnd, even = release_cost(1e-9, [0.0] + [1.0] * 8, dp=8, draws=100)
    >>> round(n, 3), round(rnd, 3), round(even, 3)  # one prompt a release: one step of 1 s, 8·1/1
    (1.0, 8.0, 8.0)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    tot_n = tot_r = tot_e = 0.0
    ex = np.asarray(extra_s, dtype=float)
    for _ in range(draws):
        n_max = max(int(rng.poisson(arrivals_per_window)), 1)  # a window with none releases nothing
        loads = np.zeros(dp, dtype=int)
        for _i in range(n_max):
            loads[rng.integers(dp)] += 1
            if (loads > 0).all():  # the round completes: released at once
                break
        n = int(loads.sum())
        ranks_at_k = [(loads >= k).sum() for k in range(1, loads.max() + 1)]
        even = np.full(dp, n // dp) + (np.arange(dp) < n % dp)
        even_at_k = [(even >= k).sum() for k in range(1, even.max() + 1)]
        tot_n += n
        tot_r += ex[ranks_at_k].sum()
        tot_e += ex[even_at_k].sum()
    return tot_n / draws, float(dp * tot_r / tot_n), float(dp * tot_e / tot_n)


def part3() -> None:
    from h200_adp_prompt_cost40 import model_steps

    steps, _d8k, _ = model_steps()
    extra = [t - steps[0] for t in steps]
    print(
        f"part 3: one prompt a rank a step, random vs even ranks (the run: {RUN_PER_PROMPT_S:.2f} s per prompt "
        "on a rank)"
    )
    for at in (13.0, 20.0, 26.0):
        n, rnd, even = release_cost(at, extra)
        print(
            f"  a·T = {at:4.0f}: {n:5.2f} prompts a release; per prompt on a rank: random {rnd:.2f} s, even {even:.2f} s"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="jalapeno validate --json -o CSV (all rows)")
    ap.add_argument("--whatif", action="store_true", help="parts 2 and 3 (about 10 s)")
    a = ap.parse_args(argv)
    part1(a.csv)
    if a.whatif:
        part2()
        part3()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
