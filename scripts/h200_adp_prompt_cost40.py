"""InferenceX H200 row 25 (DeepSeek-R1 FP8, TensorRT-LLM 1.1.0rc2.post2, attention DP8 EP8 MTP1, 8k/1k at
concurrency 256): where its time goes, without assuming an MTP acceptance (issue 18, round 40, h200int40; diagnosis,
nothing shipped). docs/gap_aic_itl.md (round 40, h200int40) has the record.

Parts:

1. The share of the instance's time the run spends decoding, read against its 1k/8k twin (the same launch script,
   release, layout and concurrency; aiconfigurator ``..._1024x8192_c256_tp8_ep8_2000``, almost all decode): the twin
   measures the MTP1 decode step as TPOT·(1 + a)·(1 − its prompt share), the 8k/1k row decodes (1/TPOT)/(1 + a) steps
   a second, so the acceptance a cancels and the decode share is r·(1 − s)·TPOT_twin/TPOT_row, r the model's own
   decode-step ratio between the two contexts and s the twin's prompt share in the model. The prompt steps take the
   rest; divided by the prompts a rank receives a second (Little's law on the row's TTFT and TPOT), the whole-instance
   time one prompt on a rank costs. The same for the model's predictions.
2. The model's step (cost/step.step_cost) with g prompts beside the decode batch, one a rank, and the whole-instance
   time per prompt on a rank that g implies, 8·(step(g) − step(0))/g.
3. The prompts one release of TensorRT-LLM's attention-DP context balance carries with the slots full (a freed slot is
   on a random rank; one 8k prompt a rank a step under the script's 8,320-token budget): dp·(1 − e^(−aT/dp)) /
   (1 − e^(−aT)), a prompts a step, T = ``timeout_iters``.

Run: python scripts/h200_adp_prompt_cost40.py VALIDATE.csv (from ``jalapeno validate --json -o VALIDATE.csv``, all
rows: the twins are aiconfigurator rows of the fit split). About 10 s.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys

ROW = "inferencex_points:25"
TWIN_8K1K = "aic:2026_03_25_deepseek_r1_h200_sxm_trtllm_fp8_agg_8192x1024_c256_tp8_0_ep8_0_1251"
TWIN_1K8K = "aic:2026_04_06_deepseek_r1_h200_sxm_trtllm_fp8_agg_1024x8192_c256_tp8_ep8_2000"
DP = 8
TIMEOUT_ITERS = 60  # attention_dp_config.timeout_iters, benchmarks/dsr1_fp8_h200_trt_mtp_slurm.sh @008b91a9dd78
MEAN_ISL_8K, MEAN_OSL = 7373.0, 922.0  # InferenceX --random-range-ratio 0.8: means of U[0.8 L, L]
#: The model's prompt share of the 1k/8k twin's time: 1 − its decode-only MTP1 step (47.96 ms, 252 decoding at 4,600
#: context) over the mean step ``jalapeno predict -w 1k8k -c 256 --engine trtllm-h200-dsr1-fp8-mtp ... --json`` gives
#: (``step_time_s`` 49.32 ms): 0.028.
TWIN_PROMPT_SHARE = 1.0 - 47.96 / 49.32


def residents_rate(concurrency: float, ttft_s: float, tpot_s: float, osl: float = 1024.0) -> tuple[float, float]:
    """Little's law on a closed loop: (sequences decoding, requests per second) from the row's TTFT and TPOT.

    >>> n, lam = residents_rate(256, 8.4824, 0.1061)
    >>> round(n, 1), round(lam, 3)
    (237.4, 2.188)
    """
    d = (osl - 1.0) * tpot_s
    return concurrency * d / (ttft_s + d), concurrency / (ttft_s + d)


def decode_share(tpot_twin_s: float, tpot_row_s: float, ctx_ratio: float, twin_prompt_share: float) -> float:
    """Share of the instance's time the row spends in decode steps, acceptance-free (part 1).

    >>> round(decode_share(0.03069, 0.1061, 1.12, 0.023), 3)
    0.317
    """
    return ctx_ratio * (1.0 - twin_prompt_share) * tpot_twin_s / tpot_row_s


def per_rank_prompt_s(share_decode: float, request_rate: float, dp: int = DP) -> float:
    """Whole-instance time (s) one prompt on a rank costs: the prompt share over the prompts a rank gets a second.

    >>> round(per_rank_prompt_s(0.317, 2.19), 2)
    2.49
    """
    return (1.0 - share_decode) / (request_rate / dp)


def release_prompts_full(arrivals_per_step: float, dp: int = DP, timeout_iters: int = TIMEOUT_ITERS) -> float:
    """Prompts one release carries with the slots full (part 3): the ranks a window's Poisson arrivals hit, given one.

    >>> round(release_prompts_full(0.0), 3), round(release_prompts_full(1e3), 3)
    (1.0, 8.0)
    >>> round(release_prompts_full(23.6 / 60), 2)
    7.58
    """
    at = arrivals_per_step * timeout_iters
    if at <= 1e-12:
        return 1.0
    return dp * -math.expm1(-at / dp) / -math.expm1(-at)


def _rows(path: str) -> dict:
    out: dict = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["id"] in (ROW, TWIN_8K1K, TWIN_1K8K):
                out.setdefault(r["id"], {})[r["metric"]] = (float(r["measured"]), float(r["predicted"]))
    return out


def model_steps() -> tuple[list[float], float, float]:
    """The model's MTP1 step (s) at 239 decoding (7,800 context) beside g = 0..8 prompts of 7,373 tokens, and its
    decode-only steps at 7,800 and 4,600 context (the 1k/8k twin's mean resident context)."""
    import numpy as np

    from jalapeno.cli.common import resolve_precision
    from jalapeno.cli.system_opts import system_pricer
    from jalapeno.cost.step import Batch, step_cost
    from jalapeno.deploy.deployment import MTP
    from jalapeno.deploy.layout import Layout, for_model
    from jalapeno.specs.catalog import load_model

    m = load_model("deepseek-r1")
    pr = system_pricer("h200", "calibrated", None, "trtllm@1.1.0rc2.post2", "roofline")
    prec = resolve_precision(m, "fp8", "fp8", None, False)
    lay = for_model(Layout(tp=1, dp=DP, ep=8), m)
    mtp = MTP(1, 0.675)
    g = np.arange(0, DP + 1, dtype=float)
    n = g.size
    b = Batch.make(
        decode_seqs=np.full(n, 239.0),
        decode_ctx=np.full(n, 7800.0),
        prefill_tokens=g * MEAN_ISL_8K,
        prefill_ctx=np.zeros(n),
        prefill_seqs=g,
    )
    steps = step_cost(m, pr, lay, prec, b, mtp).step_time_s
    twin = step_cost(
        m, pr, lay, prec, Batch.make(decode_seqs=np.array([252.0]), decode_ctx=np.array([4600.0])), mtp
    ).step_time_s
    return [float(x) for x in steps], float(steps[0]), float(twin[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="jalapeno validate --json -o CSV (all rows)")
    a = ap.parse_args(argv)
    rows = _rows(a.csv)
    missing = [k for k in (ROW, TWIN_1K8K) if k not in rows]
    if missing:
        print(f"error: {a.csv} lacks {', '.join(missing)}; fix: pass an all-rows validate CSV", file=sys.stderr)
        return 2
    steps, d8k, d4k = model_steps()
    ratio = d8k / d4k
    print("part 2: the model's step with g prompts (one a rank) beside 239 decoding, and the per-rank prompt cost")
    for g, t in enumerate(steps):
        per = DP * (t - steps[0]) / g if g else float("nan")
        print(f"  g={g}  step {t * 1e3:8.1f} ms   per prompt on a rank {per:6.3f} s")
    print(f"part 1: decode-step ratio 7,800 / 4,600 context (model) {ratio:.3f}")
    twin_share = TWIN_PROMPT_SHARE
    tw_meas, tw_pred = rows[TWIN_1K8K]["tpot_s"]
    for rid in (ROW, TWIN_8K1K):
        if rid not in rows:
            continue
        (tp_m, tp_p), (tt_m, _tt_p) = rows[rid]["tpot_s"], rows[rid]["ttft_s"]
        _, lam = residents_rate(256, tt_m, tp_m)
        sh_m = decode_share(tw_meas, tp_m, ratio, twin_share)
        sh_p = decode_share(tw_pred, tp_p, ratio, twin_share)
        print(
            f"  {rid}: decode share run {sh_m:.3f} / model {sh_p:.3f}; run: {lam:.2f} requests/s, "
            f"{per_rank_prompt_s(sh_m, lam):.2f} s per prompt on a rank"
        )
    print(
        "part 3: prompts a release carries with the slots full, a·T = 13 / 20 / 26:",
        ", ".join(f"{release_prompts_full(x / TIMEOUT_ITERS):.2f}" for x in (13, 20, 26)),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
