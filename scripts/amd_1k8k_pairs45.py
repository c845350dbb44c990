"""AMD 1k/1k against 8k/1k at one chip, engine and concurrency: which decode-step term the model misprices (issue 18, round 45).

Question: the held-out AMD InferenceX 1k/1k rows are further off than their 8k/1k siblings — gpt-oss-120b on MI325X
vLLM (row 51 −33.7% interactivity, row 44 −5.4%), on MI355X ATOM (row 49 −11.3%, row 42 −4.9%), DeepSeek-R1 on MI355X
MoRI-SGLang disaggregated (row 31 +31.4%, row 24 +10.5%). Is the overprice a constant of the step, or a term that
differs between the two prompt lengths (the prompts' share of steps, the decode batch, the launch)?

Printed, nothing fitted or written, no prediction moves:

1. per row (and MI325X's TP1 1k/1k run at C 64, which lost the best-per-GPU selection to row 51: its TPOT lower
   bound from scripts/gptoss_rocm_tp_bound37.py): the layout as priced, the model's decode batch, the measured and
   modelled TPOT, and the modelled TPOT split into the decode-only step's terms at that batch and context — routed
   experts (``moe`` ops), attention, the other ops, collectives, the rest of the step (fixed per-step costs) — and
   the stall (TPOT less the decode-only step: the prompts' prefill work the decoding users wait out);
2. per pair (same chip, engine, TP and concurrency; the two prompt lengths): the model's excess (model − measured
   TPOT) at 1k and at 8k in ms, and the slope error — the model's 8k − 1k TPOT difference less the measured one,
   which holds only attention and the stall (every context-independent term cancels). A pair with a slope error near
   zero has one excess, in ms, at both lengths: a context-independent overprice whose percentage is larger at 1k only
   because the 1k step is shorter;
3. the launch differences between each pair's runs, as read from the sources (constant ``LAUNCH``);
4. for the like-for-like aggregated pairs, two readings of one scale k on the model's prompt prefill: k_stall, the scale
   on both rows' stalls that closes the slope error with attention as priced, and k_ttft, the scale on the prefill
   part of the 8k/1k row's TTFT that meets its measured TTFT with the front end, first step and waits as priced
   (:func:`prefill_factors`). Agreement says one prefill misprice explains both the short slope and the TTFT.

Sources: SemiAnalysisAI/InferenceX .github/configs/amd-master.yaml (@87250a0e2 gptoss-fp4-mi3{00,25}x-vllm,
@008b91a9dd78 gptoss-fp4-mi355x-atom, @5e2c705d3cbd dsr1-fp4-mi355x-sglang-disagg) and the launch scripts named in
``LAUNCH``. Run: python scripts/amd_1k8k_pairs45.py   (about 10 s)
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/_served_point.py, imported where used

#: pair label -> (1k/1k row, 8k/1k row), InferenceX point numbers (data/validation/inferencex_points.csv)
PAIRS = {
    "MI355X ATOM gpt-oss TP1 C128": (49, 42),
    "MI300X vLLM gpt-oss TP1 C64": (53, 45),
    "MI325X vLLM gpt-oss C64 (1k TP2, 8k TP1)": (51, 44),
    "MI325X vLLM gpt-oss TP1 C64 (1k: the lost run)": ("51@tp1", 44),
    "MI355X MoRI-SGLang DeepSeek-R1 DEP8 decode C2048": (31, 24),
}

#: what differs between each pair's two runs, as read (sources in the text)
LAUNCH = {
    "MI355X ATOM gpt-oss TP1 C128": (
        "one key gptoss-fp4-mi355x-atom (@008b91a9dd78): TP1 at C 16-128 (1k/1k) and C 4-128 (8k/1k); the launch "
        "(benchmarks/gptoss_fp4_mi355x_atom_slurm.sh @2be3de60f) differs only by --max-model-len 10240 at 8k/1k "
        "(no limit flag at 1k/1k): no speed flag differs"
    ),
    "MI300X vLLM gpt-oss TP1 C64": (
        "one key gptoss-fp4-mi300x-vllm, one script benchmarks/single_node/gptoss_fp4_mi300x.sh (@87250a0e2): only "
        "MAX_MODEL_LEN and the lengths differ"
    ),
    "MI325X vLLM gpt-oss C64 (1k TP2, 8k TP1)": (
        "gptoss-fp4-mi325x-vllm (@87250a0e2): 1k/1k ran TP1/2/4/8 at C 4-64, 8k/1k ran TP2 only at C 4-8, so the "
        "8k/1k C 64 row is TP1 and the 1k/1k one TP2 (closed-loop identity): the pair differs in TP, not only "
        "in context; the script (gptoss_fp4_mi325x.sh) is the same, with VLLM_ROCM_QUICK_REDUCE_QUANTIZATION=INT4 "
        "acting at TP2 only"
    ),
    "MI325X vLLM gpt-oss TP1 C64 (1k: the lost run)": (
        "the like-for-like pair: 1k/1k TP1 C 64 ran (search space above) but lost the best-per-GPU selection, "
        "so only a lower bound on its TPOT is known"
    ),
    "MI355X MoRI-SGLang DeepSeek-R1 DEP8 decode C2048": (
        "dsr1-fp4-mi355x-sglang-disagg (@5e2c705d3cbd): 1x DEP4 prefill (1k/1k) against 4x DEP4 (8k/1k), the "
        "same 1x DEP8 decode instance with 160 running a rank (recipe sglang-mori-mi355x-dsr1-fp4-dep): both "
        "decode pools sit at their 1,280 cap at C 2,048, so the decode batch is the same at both lengths"
    ),
}


def pair_split(meas_1k: float, model_1k: float, meas_8k: float, model_8k: float) -> dict[str, float]:
    """The model's TPOT excess at each length and the slope error of a 1k/8k pair (module docstring, (2)).

    Args:
        meas_1k, model_1k, meas_8k, model_8k: measured and modelled TPOT of the pair's 1k/1k and 8k/1k runs, s
            (any one unit; the outputs carry it).

    Returns:
        ``excess_1k`` / ``excess_8k`` (model − measured), ``pct_1k`` / ``pct_8k`` (excess over measured, %),
        ``slope_error`` ((model_8k − model_1k) − (meas_8k − meas_1k), = excess_8k − excess_1k).

    Raises:
        ValueError: a measured TPOT that is not positive.

    By hand, rows 49 / 42 (MI355X ATOM): measured 14.20 / 25.10 ms, model 16.00 / 26.39 ms: excess +1.80 / +1.29 ms,
    +12.7 / +5.1%, slope error −0.51 ms.

    >>> s = pair_split(14.20, 16.00, 25.10, 26.39)
    >>> round(s["excess_1k"], 2), round(s["excess_8k"], 2), round(s["pct_1k"], 1), round(s["slope_error"], 2)
    (1.8, 1.29, 12.7, -0.51)
    """
    if meas_1k <= 0 or meas_8k <= 0:
        raise ValueError(
            f"pair_split: measured TPOTs must be positive (got {meas_1k}, {meas_8k}); pass the rows' measured tpot_s"
        )
    e1, e8 = model_1k - meas_1k, model_8k - meas_8k
    return {
        "excess_1k": e1,
        "excess_8k": e8,
        "pct_1k": 100 * e1 / meas_1k,
        "pct_8k": 100 * e8 / meas_8k,
        "slope_error": e8 - e1,
    }


def prefill_factors(
    slope_error: float, stall_1k: float, stall_8k: float, ttft_meas: float, ttft_model: float, ttft_prefill: float
) -> tuple[float, float]:
    """Two readings of one scale k on the model's prompt prefill (module docstring, (4)).

    Args:
        slope_error: the pair's slope error (:func:`pair_split`), s.
        stall_1k, stall_8k: the model's stall at 1k/1k and 8k/1k (TPOT less the decode-only step), s.
        ttft_meas, ttft_model: the 8k/1k row's measured TTFT and the model's (the statistic the row publishes), s.
        ttft_prefill: the prefill part of the model's mean 8k/1k TTFT (serve/ttft_parts.PARTS ``prefill_s``), s.

    Returns:
        (k_stall, k_ttft): k_stall = 1 − slope_error / (stall_8k − stall_1k), the scale on both stalls that closes
        the slope error with attention as priced; k_ttft = 1 + (ttft_meas − ttft_model) / ttft_prefill, the scale on
        the prefill part that meets the measured TTFT with the front end, first step and waits as priced.

    Raises:
        ValueError: a stall that does not grow from 1k to 8k, or a non-positive prefill part.

    By hand, MI300X rows 53 / 45: slope error −4.63 ms, stalls 1.63 / 10.54 ms: k_stall = 1 + 4.63 / 8.91 = 1.52.

    >>> round(prefill_factors(-4.63e-3, 1.63e-3, 10.54e-3, 0.443, 0.2845, 0.15)[0], 2)
    1.52
    """
    if stall_8k <= stall_1k:
        raise ValueError(
            f"prefill_factors: the 8k/1k stall ({stall_8k}) must exceed the 1k/1k one ({stall_1k}); "
            "pass a pair whose decoding users wait out prompts (not a disaggregated decode pool)"
        )
    if ttft_prefill <= 0:
        raise ValueError(
            f"prefill_factors: ttft_prefill must be positive (got {ttft_prefill}); pass ttft_parts' prefill_s"
        )
    return 1.0 - slope_error / (stall_8k - stall_1k), 1.0 + (ttft_meas - ttft_model) / ttft_prefill


def _bound37():
    """scripts/gptoss_rocm_tp_bound37.py as a module (its loser_tpot_bound_s and ROWS)."""
    path = Path(__file__).with_name("gptoss_rocm_tp_bound37.py")
    spec = importlib.util.spec_from_file_location("tp_bound37", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _points() -> dict:
    """InferenceX points by number, with ``"51@tp1"``: row 51's workload on row 44's TP1 deployment."""
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validation_run import DEFAULT_POINTS

    want = {n for pair in PAIRS.values() for n in pair if isinstance(n, int)}
    pts = {int(p.id.split(":")[1]): p for p in load_inferencex(DEFAULT_POINTS)[0] if p.id.split(":")[1].isdigit()}
    missing = sorted(want - set(pts))
    if missing:
        raise SystemExit(f"InferenceX rows {missing} not in {DEFAULT_POINTS}: the script reads rows {sorted(want)}")
    out = {n: pts[n] for n in want}
    out["51@tp1"] = dataclasses.replace(pts[51], deployment=pts[44].deployment)
    return out


def price(p) -> dict:
    """Row ``p`` as validation prices it: its decode batch, TPOT (s) and the TPOT's terms (s; module docstring, (1))."""
    from jalapeno.cost.step import Batch, pool_step_cost
    from jalapeno.serve.limits import decode_step_s
    from jalapeno.serve.ttft_parts import ttft_parts

    from _served_point import served_point

    model, pricer, dep, wl, run = served_point(p)
    batch = float(run.decode_batch[0])
    lay = dep.decode.layout
    sc = pool_step_cost(
        model,
        pricer,
        dep,
        lay,
        Batch.make(decode_seqs=np.array([batch]), decode_ctx=wl.decode_ctx),
    )
    step = float(decode_step_s(sc, pricer.efficiency, dep, np.array([batch]), lay)[0])
    kinds: dict[str, float] = {}
    for r in sc.op_rows(0):
        kinds[r["kind"]] = kinds.get(r["kind"], 0.0) + r["time_s"]
    coll = float(sum(c["time_s"] for c in sc.collective_rows(0)))
    experts, attention = kinds.pop("moe", 0.0), kinds.pop("attention", 0.0)
    other = sum(kinds.values())
    tpot = float(run.tpot_s[0])
    ttft_stat = run.ttft_p50_s if p.ttft_median else run.ttft_s
    parts = ttft_parts(model, pricer, dep, wl, run)
    return {
        "ttft": float(ttft_stat[0]),
        "ttft_prefill": float(parts["prefill_s"][0]),
        "batch": batch,
        "ctx": float(np.asarray(wl.decode_ctx).ravel()[0]),
        "tpot": tpot,
        "step": step,
        "experts": experts,
        "attention": attention,
        "other": other,
        "collectives": coll,
        "rest": step - experts - attention - other - coll,
        "stall": tpot - step,
    }


def main() -> None:
    pts = _points()
    b37 = _bound37()
    r51 = pts[51]
    lost_bound = b37.loser_tpot_bound_s(
        r51.measured["throughput_per_chip"], 64, 1024, 1024, 1, pts[53].measured["ttft_s"]
    )
    measured = {k: p.measured["tpot_s"] for k, p in pts.items() if k != "51@tp1"}
    priced = {k: price(p) for k, p in pts.items()}
    print(
        "| row | chip | engine | TP | ISL | C | decode batch | decode ctx | TPOT meas ms | TPOT model ms | experts | "
        "attention | other ops | collectives | rest of step | stall |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k in (49, 42, 53, 45, 51, "51@tp1", 44, 31, 24):
        p, m = pts[k], priced[k]
        tp = p.deployment.decode.layout.tp
        meas = f"{measured[k] * 1e3:.2f}" if k in measured else f"> {lost_bound * 1e3:.2f} (bound)"
        terms = " | ".join(
            f"{m[t] * 1e3:.2f}" for t in ("experts", "attention", "other", "collectives", "rest", "stall")
        )
        print(
            f"| {k} | {p.system} | {p.framework} | {tp} | {p.isl} | {p.concurrency:g} | {m['batch']:.1f} | "
            f"{m['ctx']:.0f} | {meas} | {m['tpot'] * 1e3:.2f} | {terms} |"
        )
    print(
        "\n| pair (1k row / 8k row) | excess 1k ms (%) | excess 8k ms (%) | model 8k − 1k ms: attention + stall + "
        "rest | measured 8k − 1k ms | slope error ms | measured / model 8k − 1k |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, (k1, k8) in PAIRS.items():
        a, b = priced[k1], priced[k8]
        m1 = measured.get(k1, lost_bound)
        s = pair_split(m1 * 1e3, a["tpot"] * 1e3, measured[k8] * 1e3, b["tpot"] * 1e3)
        d_att, d_stall = b["attention"] - a["attention"], b["stall"] - a["stall"]
        d_model = b["tpot"] - a["tpot"]
        d_meas = measured[k8] - m1
        lt, gt = ("< ", "> ") if k1 not in measured else ("", "")  # against the bound: one-sided
        print(
            f"| {label} ({k1} / {k8}) | {lt}{s['excess_1k']:+.2f} ({s['pct_1k']:+.1f}%) | "
            f"{s['excess_8k']:+.2f} ({s['pct_8k']:+.1f}%) | {d_att * 1e3:+.2f} + {d_stall * 1e3:+.2f} + "
            f"{(d_model - d_att - d_stall) * 1e3:+.2f} | {lt}{d_meas * 1e3:+.2f} | {gt}{s['slope_error']:+.2f} | "
            f"{lt}{d_meas / d_model:.3f} |"
        )
    print(
        "\n| pair | 8k row TTFT meas / model ms | its prefill part ms | k_ttft (prefill scale the TTFT asks) | "
        "k_stall (stall scale the slope asks) |"
    )
    print("|---|---|---|---|---|")
    for label, (k1, k8) in PAIRS.items():
        a, b = priced[k1], priced[k8]
        if b["stall"] <= a["stall"] or pts[k1].deployment != pts[k8].deployment:
            continue  # no stall (a disaggregated decode pool) or a TP-mixed pair
        m1 = measured.get(k1, lost_bound)  # against the bound, the slope error is a lower bound: k_stall an upper one
        s = pair_split(m1, a["tpot"], measured[k8], b["tpot"])
        k_stall, k_ttft = prefill_factors(
            s["slope_error"], a["stall"], b["stall"], pts[k8].measured["ttft_s"], b["ttft"], b["ttft_prefill"]
        )
        lt = "< " if k1 not in measured else ""
        print(
            f"| {label} | {pts[k8].measured['ttft_s'] * 1e3:.1f} / {b['ttft'] * 1e3:.1f} | "
            f"{b['ttft_prefill'] * 1e3:.1f} | {k_ttft:.2f} | {lt}{k_stall:.2f} |"
        )
    print()
    for label, text in LAUNCH.items():
        print(f"- {label}: {text}")


if __name__ == "__main__":
    main()
