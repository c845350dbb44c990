"""Aggregated TTFT beyond the model's steady state, counted in engine steps (issue 18, ttftdsr16).

Each unflagged aggregated aiconfigurator row (fit/validate.load_aiconfigurator; flagged rows of fit/aic_quality.py
left out) is predicted without the idle-start burst (the client's burst share set to ~0, every other fitted constant
as shipped; scripts/aic_ttft_split.predict_parts), and what the measurement keeps beyond that steady TTFT is divided
by the model's decode step, τ = TPOT·a (a tokens per step with MTP; the model's own TPOT, which meets these rows
within ~10-30%): :func:`lag_steps`. A lag that is flat in steps across MTP, prompt length and load is a per-request
delay counted in engine iterations (a response released every n iterations, a poll); one flat in milliseconds is a
front end; one that grows with the load is a queue or the first wave.

Table 1: DeepSeek-R1 rows by engine release, system, MTP and ISL at C <= 16 (median steps, ms and τ). Table 2:
every model and release of the InferenceX export client by concurrency (median steps). Table 3: the prompts one
step of the InferenceX TensorRT-LLM DeepSeek-R1 scripts admits, from their ``--max_num_tokens`` (:func:`script_max_num_tokens`,
:func:`whole_prompts_per_step`): TensorRT-LLM schedules whole prompts (no chunked prefill is set), so a budget of
ISL + (k + 1)·B + 64 tokens carries one prompt per step whatever the load. ``--what-if`` prices the TensorRT-LLM
1.1.0rc2 / 1.2.0rc6 DeepSeek-R1 rows with their scripts' ``--max_num_tokens`` as the step cap and token budget (per
attention-DP rank, as TensorRT-LLM counts it) and the SGLang DeepSeek-R1 rows with the export client's aggregated
burst share at 0.1 (one wave in R = 10) and 0.3 instead of the fitted one: median |error| / bias by group, nothing
written. Diagnosis only: nothing here is modelled.
Run: python scripts/aic_ttft_lag_steps.py [--what-if]   (about three minutes, five with --what-if)
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aic_ttft_split import predict_parts  # noqa: E402  (a sibling script: the four TTFT predictions of a row)

#: Concurrency up to which table 1 reads a row as low load (the first wave and the queue stay small there).
LOW_LOAD = 16
#: Concurrency bins of table 2.
CONC_BINS = (0, 4, 8, 16, 32, 64, 128, 1e6)
#: The InferenceX TensorRT-LLM DeepSeek-R1 launch scripts' slack and rounding of ``--max_num_tokens``:
#: ``MAX_NUM_TOKENS=$(( ((MTP+1)*MAX_BATCH_SIZE+ISL+64+63)/64*64 ))`` (benchmarks/dsr1_fp8_h200_trt_mtp_slurm.sh,
#: dsr1_fp4_b200_trt_mtp_slurm.sh @bf3456727; without MTP ``($CONC+$ISL+64+63)/64*64``, dsr1_fp8_b200_trt_slurm.sh
#: @2ee1e0018; the 1.2.0rc6 non-MTP scripts add a floor of 8192, dsr1_fp8_b200_trt.sh @ec7bafaae).
SCRIPT_SLACK_TOKENS = 64
SCRIPT_ROUND_TOKENS = 64


def lag_steps(measured_s, steady_s, tpot_s, tokens_per_step=1.0):
    """(measured − steady) / (TPOT · a): the TTFT a row keeps beyond the model's steady state, in decode steps.

    Args:
        measured_s, steady_s: measured TTFT and the model's TTFT without the burst, s, scalars or (N,).
        tpot_s: the model's TPOT, s per token, > 0; tokens_per_step: a, tokens a step emits (1 without MTP), >= 1.

    Raises:
        ValueError: a TPOT <= 0 or a < 1 (names the field).

    >>> round(float(lag_steps(0.313, 0.133, 0.008, 2.5)), 6)  # 180 ms over 20 ms steps
    9.0
    """
    tpot = np.asarray(tpot_s, dtype=float)
    a = np.asarray(tokens_per_step, dtype=float)
    if np.any(tpot <= 0):
        raise ValueError("tpot_s: the decode step needs a positive TPOT; give the model's predicted TPOT in s")
    if np.any(a < 1):
        raise ValueError("tokens_per_step: a step emits at least one token; give 1 without MTP")
    return (np.asarray(measured_s, dtype=float) - np.asarray(steady_s, dtype=float)) / (tpot * a)


def script_max_num_tokens(isl: int, max_batch: float, draft_tokens: int = 0, floor: int = 0) -> int:
    """``--max_num_tokens`` of the InferenceX TensorRT-LLM DeepSeek-R1 scripts: (k + 1)·B + ISL + 64, rounded up
    to a multiple of 64, at least ``floor`` (8192 in the 1.2.0rc6 non-MTP scripts; :data:`SCRIPT_SLACK_TOKENS`).

    Raises:
        ValueError: an ISL or batch below 1, or a negative draft length (names the field).

    >>> script_max_num_tokens(1024, 64, 3), script_max_num_tokens(8192, 4), script_max_num_tokens(1024, 64, floor=8192)
    (1344, 8320, 8192)
    """
    if isl < 1 or max_batch < 1:
        raise ValueError("isl, max_batch: a prompt and a batch hold at least one token / request")
    if draft_tokens < 0:
        raise ValueError("draft_tokens: the MTP draft length is 0 (no MTP) or more")
    t = (draft_tokens + 1) * max_batch + isl + SCRIPT_SLACK_TOKENS
    return max(int(math.ceil(t / SCRIPT_ROUND_TOKENS) * SCRIPT_ROUND_TOKENS), floor)


def whole_prompts_per_step(max_num_tokens: int, decode_rows: float, longest_prompt: int) -> int:
    """Whole prompts of up to ``longest_prompt`` tokens that one step of ``max_num_tokens`` admits beside
    ``decode_rows`` decode tokens, at least one (an engine without chunked prefill schedules a prompt whole).

    Raises:
        ValueError: a prompt length below 1 (names the field).

    >>> whole_prompts_per_step(1344, 252, 1024), whole_prompts_per_step(8192, 60, 1024)
    (1, 7)
    """
    if longest_prompt < 1:
        raise ValueError("longest_prompt: a prompt holds at least one token")
    return max(int((max_num_tokens - decode_rows) // longest_prompt), 1)


def _script_budget(p):
    """Point ``p`` with its InferenceX TensorRT-LLM script's ``--max_num_tokens`` as step cap and token budget
    (per attention-DP rank), for the 1.1.0rc2 / 1.2.0rc6 DeepSeek-R1 releases (others unchanged)."""
    from dataclasses import replace

    rel = p.framework.split()[-1]
    if p.model != "deepseek-r1" or not p.framework.startswith("trtllm") or not rel.startswith(("1.1.0rc2", "1.2.0rc6")):
        return p
    d = p.deployment
    lay = d.decode.layout
    k = d.mtp.draft_tokens if d.mtp else 0
    batch = p.concurrency / lay.dp if (d.mtp and lay.dp > 1) else p.concurrency
    t = script_max_num_tokens(p.isl, batch, k, 8192 if (rel.startswith("1.2") and not d.mtp) else 0)
    return replace(p, deployment=replace(d, max_tokens_per_step=t, token_budget=t, budget_per="rank"))


def what_if(points) -> None:
    """Print the two what-ifs of the module docstring (median |error| / bias of TTFT by group)."""
    from dataclasses import replace

    from jalapeno.fit.validate import point_stack, predict_points

    def table(df):
        t = df[df.metric == "ttft_s"].assign(ae=lambda x: x.error.abs())
        return t.groupby(["system", "framework", "precision"]).apply(
            lambda g: f"{g.ae.median():.1%} / {g.error.median():+.1%} n{len(g)}", include_groups=False
        )

    trt = [p for p in points if p.model == "deepseek-r1" and p.framework.startswith("trtllm")]
    print("\n== what-if: TensorRT-LLM DeepSeek-R1 rows at their scripts' --max_num_tokens (shipped -> what-if)")
    print(
        pd.concat(
            {
                "shipped": table(predict_points(trt)),
                "script budget": table(predict_points([_script_budget(p) for p in trt])),
            },
            axis=1,
        ).to_string()
    )
    sgl = [
        p
        for p in points
        if p.model == "deepseek-r1" and p.framework.startswith("sglang") and p.client == "inferencex-db"
    ]
    cols = {"shipped": table(predict_points(sgl))}
    for w in (0.3, 0.1):
        cols[f"share {w}"] = table(
            predict_points(sgl, stack_of=lambda p, w=w: replace(point_stack(p), agg_burst_fraction=w))
        )
    print("\n== what-if: SGLang DeepSeek-R1 rows, the export client's aggregated burst share (shipped -> 0.3, 0.1)")
    print(pd.concat(cols, axis=1).to_string())


def _frame():
    from jalapeno.fit.aic_quality import aic_source_flags, aic_ttft_flags
    from jalapeno.fit.validate import load_aiconfigurator

    points, _ = load_aiconfigurator()
    flagged = set(aic_ttft_flags(points)) | set(aic_source_flags(points))
    pts = [p for p in points if p.mode == "agg" and p.id not in flagged]
    meta = pd.DataFrame(
        [
            {
                "id": p.id,
                "release": p.framework,
                "mtp": bool(p.deployment and p.deployment.mtp),
                "a": p.deployment.mtp.tokens_per_step if p.deployment and p.deployment.mtp else 1.0,
            }
            for p in pts
        ]
    ).set_index("id")
    df = predict_parts(pts).join(meta)
    df = df[df.noburst.notna() & df.measured_ttft_s.notna() & (df.predicted_tpot_s > 0)].copy()
    df["steps"] = lag_steps(df.measured_ttft_s, df.noburst, df.predicted_tpot_s, df.a)
    df["ms"] = 1e3 * (df.measured_ttft_s - df.noburst)
    df["tau_ms"] = 1e3 * df.predicted_tpot_s * df.a
    return df


def main(with_what_if: bool = False) -> None:
    df = _frame()
    pd.set_option("display.width", 250)
    pd.set_option("display.max_rows", 300)
    low = df[(df.model == "deepseek-r1") & (df.conc <= LOW_LOAD)]
    print(f"== DeepSeek-R1 aggregated, C <= {LOW_LOAD}: measured minus the steady TTFT (no burst), median")
    print(
        low.groupby(["engine", "release", "system", "mtp", "isl"])
        .agg(n=("steps", "size"), steps=("steps", "median"), ms=("ms", "median"), tau_ms=("tau_ms", "median"))
        .round(1)
        .to_string()
    )
    exp = df[df.client == "inferencex-db"].assign(cb=pd.cut(df.conc, list(CONC_BINS)))
    print("\n== InferenceX export client, every model: the same in steps (median) by concurrency")
    print(
        exp.pivot_table(index=["model", "release"], columns="cb", values="steps", aggfunc="median", observed=True)
        .round(1)
        .to_string()
    )
    print(
        "\n== InferenceX TensorRT-LLM DeepSeek-R1 scripts: --max_num_tokens and the whole prompts a step admits "
        "(ISL = the longest prompt, B decoding beside it)"
    )
    rows = []
    for isl in (1024, 8192):
        for conc in (4, 16, 64, 256):
            for k, floor, label in ((0, 0, "no MTP, 1.1.0rc2"), (0, 8192, "no MTP, 1.2.0rc6"), (3, 0, "MTP3")):
                t = script_max_num_tokens(isl, conc, k, floor)
                rows.append(
                    {
                        "isl": isl,
                        "conc": conc,
                        "script": label,
                        "max_num_tokens": t,
                        "prompts per step": whole_prompts_per_step(t, (k + 1) * (conc - 1), isl),
                    }
                )
    print(
        pd.DataFrame(rows).pivot_table(index=["isl", "conc"], columns="script", values="prompts per step").to_string()
    )

    if with_what_if:
        from jalapeno.fit.aic_quality import aic_source_flags, aic_ttft_flags
        from jalapeno.fit.validate import load_aiconfigurator

        points, _ = load_aiconfigurator()
        flagged = set(aic_ttft_flags(points)) | set(aic_source_flags(points))
        what_if([p for p in points if p.mode == "agg" and p.id not in flagged])


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--what-if", action="store_true", help="also the script-budget and burst-share what-ifs")
    main(ap.parse_args().what_if)
