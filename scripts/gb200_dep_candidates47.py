"""InferenceX GB200 Dynamo-TRT DeepSeek-R1 decode pools: the brief's candidate terms for the DEP32 MTP3 step gap, sized.

Question (issue 18, round 47, gb200dep47): InferenceX GB200 throughput/chip bias +6.0% (held out, n 8) is led by row 7
(ctx1_gen1_dep32_batch4_eplb0_mtp3: throughput +19.4%, TPOT −14.7%). Which term of the wide-EP attention-DP decode step
with MTP3 does the model under-price? Each candidate is sized with the model's own step (serve/point.
serve_at_concurrency, then serve/open_loop.decode_pool_step at the decode batch it settles on) for rows 3 (TEP8 MTP3,
control), 7 (DEP32 MTP3) and 9 (DEP16 MTP1) and printed in ms per verify step beside the gap (measured TPOT × tokens a
step − modelled step). Nothing is fitted, written or shipped. Candidates (recipe fields from the row notes' srt-slurm
recipe, SemiAnalysisAI/InferenceX benchmarks/multi_node/srt-slurm-recipes/dsr1/trtllm/gb200-fp4/1k1k/disagg/mtp/):

- ``a2a``: the MoE dispatch + combine priced against TensorRT-LLM 1.2.0rc6's measured NVLink one-sided kernel on GB200
  (aiconfigurator-core ``gb200/comm/trtllm/1.3.0rc10/trtllm_alltoall_perf``; NVFP4, DeepSeek's shape), on the 58 main
  MoE layers at (1 + k) rows a sequence AND on the k MTP drafting passes (pass 1 at 1 + k rows, passes 2..k at one).
- ``lm_tp``: ``enable_lm_head_tp_in_adp: true`` (every DEP recipe). TensorRT-LLM's MTP head then all-gathers the
  draft rows over an LM-head TP group and reads 1/tp of the vocabulary: tp = nearest_in_buckets(256 // rows,
  [1, gpus_per_node]), the next power of two clamped to the buckets (``tensorrt_llm/_torch/utils.py``
  ``create_lm_head_tp_mapping``; 4 GPUs a GB200 tray). The model
  prices each of the k drafting heads at the full vocabulary (attention TP1): the term is the saving, negative.
- ``kv``: the step waits for the rank with the most context (uniform on [ISL, ISL + OSL] in a closed loop, cv =
  (OSL/√12)/(ISL + OSL/2); the fullest of dp ranks e_dp·cv/√n above the mean, e_dp = cost/adp_rank.
  expected_max_std_normal): the MLA decode op raised by that fraction (an upper bound).
- ``pad``: CUDA-graph padding to the recipe's captured sizes (row 7: 1, 2, 4 with padding; 4 a rank is captured: 0).
- ``cap``: the recipe's ``max_batch_size`` × dp against the model's decode batch (the pool cannot exceed it).
- ``experts``: the routed experts if TensorRT-LLM's CuTe-DSL kernel ran as slow as its measured CUTLASS one (no
  TensorRT-LLM CuTe-DSL table exists; data/moe_backends.toml CUTLASS GB200 curve): an upper bound, not a source.
- ``alpha*``: the per-draft MTP acceptance that would close the gap alone (1 + α + … + α^k tokens a step).

Part 2 (``--host``): the per-rank host step cost. The dynamo-trtllm profile counts the attention-DP ranks in the
TensorRT-LLM executor's TP group (``tp_rank_step_dp = true``, data/stacks.toml: the CUDA-graph runner's per-step
``tp_allgather`` over tp·dp ranks) but carries ``tp_rank_step_s`` = 0 (its step costs are the efficiency sets').
Every InferenceX Dynamo-TRT point with an identified deployment and a measured TPOT is served with the profile as
shipped and with the trtllm profile's fitted ``tp_rank_step_s`` (data/stack_fits.toml ``[fits.trtllm]``, fitted on
aiconfigurator TensorRT-LLM rows; acceptance not refitted), TPOT error each.

Needs the ``[calibrate]`` extra (the all-to-all table). Run: python scripts/gb200_dep_candidates47.py [--host]
(about 30 s; --host about 2 minutes)
"""

from __future__ import annotations

import sys
from dataclasses import replace
from importlib import resources

import numpy as np
from scipy.optimize import brentq

from jalapeno.cost.adp_rank import expected_max_std_normal
from jalapeno.fit.entries import with_stack_mtp
from jalapeno.fit.kernel_tables import load_table
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import point_stack
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.moe_backends import moe_backend_curves
from jalapeno.specs.stacks import get_stack
from jalapeno.specs.workload import Workload

#: rows: (InferenceX row, recipe max_batch_size, recipe CUDA-graph sizes, recipe enable_lm_head_tp_in_adp)
ROWS = ((3, 8, None, False), (7, 4, (1, 2, 4), True), (9, 256, None, True))
MOE_LAYERS = 58  # DeepSeek-R1: 61 layers, first 3 dense
GPUS_PER_TRAY = 4  # GB200 NVL72 compute tray


def _loglog(curve, x: float) -> float:
    t, y = curve
    return float(np.exp(np.interp(np.log(x), np.log(t), np.log(y))))


def a2a_one_sided(ep: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Measured dispatch + combine (s) of TensorRT-LLM's NVLink one-sided all-to-all at EP ``ep`` on GB200, by tokens
    a rank (NVFP4, hidden 7168, top-8 of 256), or None where the table has no such EP size."""
    df, _ = load_table("gb200", "comm", "trtllm_alltoall_perf")
    df = df[(df.moe_dtype == "nvfp4") & (df.hidden_size == 7168) & (df.topk == 8) & (df.num_experts == 256)]
    df = df[(df.kernel_source == "NVLinkOneSided") & (df.moe_ep_size == ep)]
    ops = [df[df.op_name == o].groupby("num_tokens").latency.min() for o in ("alltoall_dispatch", "alltoall_combine")]
    if any(o.empty for o in ops):
        return None
    tok = ops[0].index.intersection(ops[1].index)
    return tok.to_numpy(float), (ops[0][tok] + ops[1][tok]).to_numpy() * 1e-3


def lm_head_tp(rows: float, gpus_per_node: int = GPUS_PER_TRAY) -> int:
    """TensorRT-LLM's LM-head TP size under attention DP for ``rows`` head rows a rank (``create_lm_head_tp_mapping``):
    ``nearest_in_buckets(256 // rows, [1, gpus_per_node])`` = the next power of two of 256 // rows (1 below 1),
    clamped to [1, ``gpus_per_node``] (``tensorrt_llm/_torch/utils.py`` ``nearest_in_buckets``).

    >>> lm_head_tp(4), lm_head_tp(256), lm_head_tp(128), lm_head_tp(1)
    (4, 1, 2, 4)
    """
    raw = 256 // max(int(rows), 1)
    return int(min(max(1 << max(raw - 1, 0).bit_length(), 1), gpus_per_node))


def accepted_per_step(alpha: float, k: int) -> float:
    """Tokens a sequence emits per verify step with k drafts at per-draft acceptance ``alpha`` (chained).

    >>> round(accepted_per_step(0.8, 3), 3)
    2.952
    """
    return float(sum(alpha**i for i in range(k + 1)))


def row_terms(p, max_batch: int, graph_sizes, lm_tp_on: bool) -> dict:
    """The candidate terms (module docstring) of InferenceX point ``p``, ms a verify step."""
    st = point_stack(p)
    dep = with_stack_mtp(p.deployment, st, p.model)
    model, pr = load_model(p.model), load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
    wl = Workload(f"{p.isl}/{p.osl}", p.isl, p.osl, 0.8)
    b = float(serve_at_concurrency(model, pr, dep, wl, [p.concurrency]).decode_batch[0])
    sc = decode_pool_step(model, pr, dep, wl.decode_ctx, [b])
    lay, mtp = dep.decode.layout, dep.mtp
    k, a = (mtp.draft_tokens, mtp.acceptance) if mtp else (0, 0.0)
    n = b / lay.dp
    step = sc.step_time_s[0] * 1e3
    implied = p.measured["tpot_s"] * accepted_per_step(a, k) * 1e3
    ops = dict(zip(sc.ops.name, sc.times.time_s[:, 0]))
    coll = dict(zip(sc.collectives.name, sc.coll_time_s[:, 0]))
    out = {
        "row": p.id.split(":")[1],
        "layout": f"DP{lay.dp} EP{lay.ep} MTP{k}",
        "batch": b,
        "per_rank": n,
        "model_ms": step,
        "implied_ms": implied,
        "gap_ms": implied - step,
    }
    priced = (coll.get("moe.dispatch", 0.0) + coll.get("moe.combine", 0.0)) / MOE_LAYERS
    tab = a2a_one_sided(lay.ep) if lay.dp > 1 else None
    if tab is not None and priced > 0:
        main = MOE_LAYERS * (_loglog(tab, n * (1 + k)) - priced)
        # drafting passes priced at the main layer's line per call (upper side: the line falls with rows)
        draft = (_loglog(tab, n * (1 + k)) - priced) + (k - 1) * (_loglog(tab, max(n, 1.0)) - priced) if k else 0.0
        out["a2a_ms"] = (main + draft) * 1e3
    else:
        out["a2a_ms"] = 0.0
    tp = lm_head_tp(n) if (lm_tp_on and lay.dp > 1) else 1
    out["lm_tp_ms"] = -k * ops.get("lm_head", 0.0) * (1 - 1 / tp) * 1e3
    cv = (p.osl / np.sqrt(12)) / (p.isl + p.osl / 2)
    out["kv_ms"] = ops.get("attn.mla_decode", 0.0) * expected_max_std_normal(lay.dp) * cv / np.sqrt(n) * 1e3
    padded = min((s for s in graph_sizes if s >= np.ceil(n - 1e-9)), default=n) if graph_sizes else float("nan")
    out["pad_rows"] = float(padded - n)  # nan: the recipe's captured sizes not carried here
    out["cap"] = f"{b:.0f}/{max_batch * lay.dp}"
    cut = [c for c in moe_backend_curves(p.system, "cutlass", 7168, 2048, 256, 8, 1, lay.ep) if c[0] == "fp4"]
    group = n * (1 + k) * lay.dp
    out["experts_ms"] = (
        (MOE_LAYERS * _loglog((np.asarray(cut[0][2], float), np.asarray(cut[0][3])), group) - ops["moe.experts"]) * 1e3
        if cut and dep.decode.moe_backend == "cutedsl"
        else 0.0
    )
    need = step / p.measured["tpot_s"] / 1e3
    out["alpha_star"] = (
        brentq(lambda x: accepted_per_step(x, k) - need, 0.0, 1.0) if k and need < k + 1 else float("nan")
    )
    return out


def host_errors(pts) -> list[tuple]:
    """(id, system, decode layout, MTP drafts, TPOT error shipped, TPOT error with the trtllm profile's
    ``tp_rank_step_s``) of every Dynamo-TRT point in ``pts`` with a deployment and a measured TPOT (part 2)."""
    per_rank = get_stack("trtllm").tp_rank_step_s
    out = []
    for p in pts:
        st = point_stack(p)
        if not st.name.startswith("dynamo-trtllm") or p.deployment is None or not p.measured.get("tpot_s"):
            continue
        model, wl = load_model(p.model), Workload(f"{p.isl}/{p.osl}", p.isl, p.osl, 0.8)
        errs = []
        for s in (st, replace(st, tp_rank_step_s=per_rank)):
            dep = with_stack_mtp(p.deployment, s, p.model)
            pr = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=s)
            errs.append(
                float(serve_at_concurrency(model, pr, dep, wl, [p.concurrency]).tpot_s[0]) / p.measured["tpot_s"] - 1
            )
        lay = p.deployment.decode.layout
        k = p.deployment.mtp.draft_tokens if p.deployment.mtp else 0
        out.append((p.id, p.system, f"TP{lay.tp} DP{lay.dp} EP{lay.ep}", k, *errs))
    return out


def main() -> None:
    pts = {
        p.id: p
        for p in load_inferencex(resources.files("jalapeno") / "data" / "validation" / "inferencex_points.csv")[0]
    }
    if "--host" in sys.argv[1:]:
        print(
            f"TPOT error: shipped (tp_rank_step_s 0) -> trtllm profile's {get_stack('trtllm').tp_rank_step_s * 1e6:g} us a rank"
        )
        for i, system, lay, k, e0, e1 in host_errors(pts.values()):
            print(f"{i:24s} {system:12s} D {lay:16s} MTP{k}  {e0:+.1%} -> {e1:+.1%}")
        return
    print("ms a verify step; gap = measured TPOT x tokens a step (MTP@0.8 chained) - model step")
    cols = (
        "row",
        "layout",
        "batch",
        "per_rank",
        "model_ms",
        "implied_ms",
        "gap_ms",
        "a2a_ms",
        "lm_tp_ms",
        "kv_ms",
        "pad_rows",
        "cap",
        "experts_ms",
        "alpha_star",
    )
    print(" | ".join(cols))
    for r, cap, graphs, lm in ROWS:
        t = row_terms(pts[f"inferencex_points:{r}"], cap, graphs, lm)
        print(" | ".join(f"{t[c]:.2f}" if isinstance(t[c], float) else str(t[c]) for c in cols))


if __name__ == "__main__":
    main()
