"""Why an attention-DP TensorRT-LLM prefill worker delivers fewer prompt tokens/s than priced: the layout twins (issue 18, round 51).

The open question of docs/gap_aic_ttft.md (round 19) and docs/gap_disagg_overprediction.md (rounds 30-39): the
saturated TensorRT-LLM disaggregated prefill pools of aiconfigurator's exports deliver 1.2-2.4x fewer prompt tokens/s
than serve/disagg.prefill_perf prices, most of them attention-DP pools. This script asks the data first, without the
model, which of the candidate mechanisms can be the binding limit:

``twins`` (default; instant): aiconfigurator-core's ``silicon_sample.csv`` holds pairs of disaggregated rows that
agree on everything a row states (system, model, backend, release, precision, ISL, OSL, concurrency, prefill worker
count, decode layout, decode workers and batch) except the **prefill layout**. Per pair: the measured request rate per
prefill worker λ/x = C / (TTFT + (OSL − 1)·TPOT) / x (Little's law, scripts/aic_prefill_capacity.measured_rate), TTFT
and TPOT of each twin, their ratios, and each row's measurement date and workflow run (its ``silicon_data_source``).
A mechanism whose cost depends on the prefill layout (the busiest attention-DP rank, the MoE all-to-all at EP8 against
MoE TP8's all-gather / reduce-scatter, attention DP's balancing wait, the eager step's host calls, which differ by
layout) would separate the twins; :func:`twin_pairs` finds them.

``--capacity`` (a minute): scripts/aic_prefill_capacity.py's plateau table (model / measured prompt tokens/s per prefill
worker over each pool type's queued rows) twice, with fit/aic_recipe_layout.RECIPE_LAYOUT_ON off and on (the layout
InferenceX's metadata audit, PR #919, gives the rows measured before it), so the pool types are what the recipes ran.

``--sizes`` (a minute): per plateau pool type (audited layouts), the candidates the data leave, sized: the KV hand-off
rate a prefill worker sustains at its plateau (DeepSeek-R1's MLA cache, 61 layers × (512 + 64) values a token at the
KV dtype's bytes; serve/kv_handoff prices it), and the packing loss of TensorRT-LLM's whole-prompt context scheduling
(:func:`packed_tokens`: NVIDIA/TensorRT-LLM ``cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp`` @0a949d31 takes a
context request whole when chunking is off and ``break``s at the first that would pass ``max_num_tokens``), priced as
the model's capacity at the packed step over the fluid one.

A diagnosis: nothing is fitted, nothing shipped changes.
Run: python scripts/adp_prefill_twins51.py [--capacity] [--sizes]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

#: the fields a twin pair agrees on (silicon_sample.csv columns)
SAME = [
    "system",
    "model_path",
    "backend",
    "backend_version",
    "precision",
    "isl",
    "osl",
    "conc",
    "prefill_num_workers",
    "decode_num_workers",
    "decode_tp_size",
    "decode_attention_dp_size",
    "decode_moe_ep_size",
    "decode_batch_size",
]
#: the prefill layout the twins differ in
LAYOUT = ["prefill_tp_size", "prefill_attention_dp_size", "prefill_moe_tp_size", "prefill_moe_ep_size"]


def concurrency_of(row_id: str) -> float:
    """The run's concurrency as the row id encodes it (``_c<N>_``), NaN when absent.

    >>> concurrency_of("dsr1_h200_trtllm_fp8_disagg_8192x1024_c128_cfg291"), bool(np.isnan(concurrency_of("x_cfg1")))
    (128.0, True)
    """
    m = re.search(r"_c(\d+)_", str(row_id))
    return float(m.group(1)) if m else float("nan")


def twin_pairs(frame: pd.DataFrame) -> pd.DataFrame:
    """Pairs of disaggregated rows equal on :data:`SAME` and different on :data:`LAYOUT`, one line a pair.

    Columns: the shared fields, ``a`` / ``b`` (row ids), each twin's prefill layout, measured rate per prefill worker,
    TTFT, TPOT and measured date, and ``rate_ratio`` = b's rate / a's (a: the earlier measurement).

    >>> f = pd.DataFrame({"id": ["m_c8_cfg1", "m_c8_cfg2", "m_c8_cfg3"], "mode": "disagg", "system": "s",
    ...     "model_path": "m", "backend": "trtllm", "backend_version": "1", "precision": "fp8", "isl": 1024,
    ...     "osl": 11, "prefill_num_workers": 1, "decode_num_workers": 1, "decode_tp_size": 8,
    ...     "decode_attention_dp_size": 1, "decode_moe_ep_size": 8, "decode_batch_size": 8,
    ...     "prefill_tp_size": [8, 1, 8], "prefill_attention_dp_size": [1, 8, 1], "prefill_moe_tp_size": 1,
    ...     "prefill_moe_ep_size": 8, "silicon_ttft_ms": [1000.0, 1000.0, 900.0], "silicon_tpot_ms": [10.0, 20.0, 10.0],
    ...     "silicon_data_source": ["measured=2026-02-01T0", "measured=2026-03-30T0", "measured=2026-01-01T0"]})
    >>> t = twin_pairs(f)  # cfg1 and cfg3 share a layout: two pairs, each with cfg2
    >>> len(t), sorted(t.b), round(float(t.rate_ratio.iloc[0]), 3)  # cfg3 first: (0.9 + 10·0.01) / (1 + 10·0.02)
    (2, ['m_c8_cfg2', 'm_c8_cfg2'], 0.833)
    """
    f = frame[frame["mode"] == "disagg"].copy()
    f["conc"] = f["id"].map(concurrency_of)
    f["date"] = f["silicon_data_source"].astype(str).str.extract(r"measured=(\d{4}-\d\d-\d\d)")[0].fillna("")
    f["run"] = f["silicon_data_source"].astype(str).str.extract(r"workflow_run_id=(\d+)")[0].fillna("")
    f["rate"] = (
        f["conc"]
        / (f["silicon_ttft_ms"] / 1e3 + (f["osl"] - 1) * f["silicon_tpot_ms"] / 1e3)
        / f["prefill_num_workers"]
    )
    f["layout"] = f.apply(
        lambda r: "TP{} DP{} EP{}".format(
            *(
                int(r[c]) if pd.notna(r[c]) else 0
                for c in ("prefill_tp_size", "prefill_attention_dp_size", "prefill_moe_ep_size")
            )
        ),
        axis=1,
    )
    f = f.dropna(subset=["conc", "rate"])
    out = []
    for key, g in f.groupby(SAME, dropna=False):
        if g["layout"].nunique() < 2:
            continue
        g = g.sort_values(["date", "id"])
        rows = list(g.itertuples(index=False))
        for i, a in enumerate(rows):
            for b in rows[i + 1 :]:
                if a.layout == b.layout:
                    continue
                out.append(
                    {
                        **dict(zip(SAME, key)),
                        "a": a.id,
                        "b": b.id,
                        "layout_a": a.layout,
                        "layout_b": b.layout,
                        "date_a": a.date,
                        "date_b": b.date,
                        "run_a": a.run,
                        "run_b": b.run,
                        "rate_a": a.rate,
                        "rate_b": b.rate,
                        "rate_ratio": b.rate / a.rate,
                        "ttft_ratio": b.silicon_ttft_ms / a.silicon_ttft_ms,
                        "tpot_ratio": b.silicon_tpot_ms / a.silicon_tpot_ms,
                    }
                )
    return pd.DataFrame(out)


def packed_tokens(budget: float, isl: float, range_ratio: float, samples: int = 20000, seed: int = 51) -> float:
    """Mean prompt tokens of a saturated rank's context step that takes whole prompts in arrival order up to ``budget``.

    Lengths uniform in [r·L, L] (InferenceX's ``--random-range-ratio``, specs/workload.py), a fixed pseudo-random
    sequence of ``samples`` of them; a prompt that does not fit heads the next step (TensorRT-LLM's scheduler ``break``s
    there; chunking off). NaN when the longest prompt exceeds the budget (that needs chunking).

    >>> packed_tokens(8192, 8192, 1.0), packed_tokens(2500, 1000, 1.0), bool(np.isnan(packed_tokens(900, 1000, 1.0)))
    (8192.0, 2000.0, True)
    >>> bool(abs(packed_tokens(8192, 8192, 0.8) - 0.9 * 8192) < 15)  # one prompt of mean 0.9 L a step
    True
    """
    if isl > budget:
        return float("nan")
    if range_ratio >= 1.0:
        return float(np.floor(budget / isl) * isl)
    x = np.random.default_rng(seed).uniform(range_ratio * isl, isl, samples)
    steps, total, cur = 0, 0.0, 0.0
    for v in x:
        if cur + v > budget:
            steps, total, cur = steps + 1, total + cur, 0.0
        cur += v
    return total / steps


def mla_handoff_gb_s(tokens_per_s: float, kv_bytes: float = 1.0, layers: int = 61, width: int = 512 + 64) -> float:
    """GB/s of DeepSeek-R1's MLA KV cache one prefill worker hands off at ``tokens_per_s`` prompt tokens/s.

    >>> round(mla_handoff_gb_s(23369.0), 3)  # H200 FP8 8k plateau: 61 × 576 B a token
    0.821
    """
    return tokens_per_s * layers * width * kv_bytes / 1e9


def _sample() -> pd.DataFrame:
    from importlib.resources import files

    return pd.read_csv(files("aiconfigurator_core") / "systems" / "silicon_sample.csv")


def print_twins() -> None:
    t = twin_pairs(_sample())
    t = t[t.backend.str.contains("trt")]
    cols = [
        "system",
        "precision",
        "isl",
        "conc",
        "prefill_num_workers",
        "a",
        "layout_a",
        "date_a",
        "b",
        "layout_b",
        "date_b",
        "rate_a",
        "rate_ratio",
        "ttft_ratio",
        "tpot_ratio",
    ]
    t = t.assign(a=t.a.str.extract(r"(cfg\d+)")[0], b=t.b.str.extract(r"(cfg\d+)")[0])
    print(t[cols].sort_values(["system", "isl", "conc"]).round(4).to_string(index=False))
    print(
        f"\n{len(t)} TensorRT-LLM twin pairs; rate ratio median {t.rate_ratio.median():.4f}, "
        f"max |1 - ratio| {float((t.rate_ratio - 1).abs().max()):.4f}"
    )


def _capacity(audited: bool) -> pd.DataFrame:
    import jalapeno.fit.aic_recipe_layout as arl
    from aic_prefill_capacity import main_frame

    was = arl.RECIPE_LAYOUT_ON
    arl.RECIPE_LAYOUT_ON = audited
    try:
        return main_frame(5.0)
    finally:
        arl.RECIPE_LAYOUT_ON = was


def print_capacity() -> None:
    from aic_prefill_capacity import plateau_table

    trt = lambda df: df[df.engine.str.startswith("trtllm")]  # noqa: E731
    for audited in (False, True):
        print(f"\nRECIPE_LAYOUT_ON = {audited}: TensorRT-LLM plateaus (prompt tokens/s per prefill worker)")
        print(plateau_table(trt(_capacity(audited))).round(2).to_string())


def packed_capacity_ratio(point) -> float:
    """The model's prompt tokens/s of ``point``'s prefill worker at its packed full step over the fluid one (1.0 where
    packing does not apply): τ of a step of B budget tokens against one of the T tokens :func:`packed_tokens` packs a rank.
    """
    from jalapeno.cost.pool_backends import with_pool_backends
    from jalapeno.cost.step import Batch, step_cost
    from jalapeno.deploy.deployment import pool_overlap
    from jalapeno.fit.entries import with_stack_mtp
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import point_stack, point_workload
    from jalapeno.specs.catalog import load_model

    st = point_stack(point)
    dep, model, wl = with_stack_mtp(point.deployment, st, point.model), load_model(point.model), point_workload(point)
    lay = dep.prefill.layout
    pr = with_pool_backends(
        load_any_pricer(point.system, "calibrated", pricer="roofline", stack=st),
        dep.prefill,
        model,
        lay,
        dep.precision.kv_cache.name,
    )
    b = dep.prompt_budget(lay)
    t = packed_tokens(b, wl.isl, wl.range_ratio)
    if not np.isfinite(t):
        return 1.0
    toks = np.array([b, t]) * lay.dp
    sc = step_cost(
        model,
        pr,
        lay,
        dep.precision,
        Batch.make(prefill_tokens=toks, prefill_seqs=toks / wl.mean_isl, prefill_ctx=np.zeros(2)),
        overlap=pool_overlap(dep.overlap, model, lay),
    )
    tau = sc.interval_s
    return float((toks[1] / tau[1]) / (toks[0] / tau[0]))


def print_sizes() -> None:
    import jalapeno.fit.aic_recipe_layout as arl
    from aic_prefill_capacity import plateau_table

    from jalapeno.fit.validate import load_aiconfigurator

    df = _capacity(True)
    t = plateau_table(df).reset_index()
    t = t[t.engine.str.startswith("trtllm")]
    arl.RECIPE_LAYOUT_ON, was = True, arl.RECIPE_LAYOUT_ON
    try:
        by = {p.id: p for p in load_aiconfigurator()[0]}
    finally:
        arl.RECIPE_LAYOUT_ON = was
    keys = ["system", "engine", "model", "precision", "attn", "layout", "isl"]
    top = df.sort_values("measured_tok_s").groupby(keys).tail(1).set_index(keys)["id"]
    t["handoff_gb_s"] = t.measured_max.map(mla_handoff_gb_s)
    t["packed_capacity"] = [packed_capacity_ratio(by[top.loc[tuple(r[k] for k in keys)]]) for _, r in t.iterrows()]
    print(
        t[
            [
                "system",
                "precision",
                "layout",
                "isl",
                "measured_max",
                "model_tok_s",
                "model_over_measured",
                "handoff_gb_s",
                "packed_capacity",
            ]
        ]
        .round(3)
        .to_string(index=False)
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--capacity", action="store_true", help="the plateau table with the audited layouts off and on")
    ap.add_argument("--sizes", action="store_true", help="the KV hand-off and packing loss at each plateau")
    a = ap.parse_args()
    print_twins()
    if a.capacity:
        print_capacity()
    if a.sizes:
        print_sizes()
