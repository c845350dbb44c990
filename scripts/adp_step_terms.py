"""TensorRT-LLM DeepSeek-R1 aggregated rows at attention DP: the step terms the brief named, sized per row.

Question (issue 18, round 30, adpstep30): aiconfigurator's aggregated TensorRT-LLM DeepSeek-R1 rows written at
attention DP are priced too fast (TPOT), in every sweep and release. Which term of the attention-DP step is missing?
Each candidate is priced with the model's own step (open_loop.decode_pool_step, the row's stack, deployment and decode
batch as validation serves it: serve/point.serve_at_concurrency) and printed in ms per decode step beside the gap
(measured TPOT − modelled TPOT). Nothing is fitted or written.

Candidates (sources in docs/gap_aic_itl.md, round 30 section):

- ``pad``: every attention-DP rank runs the batch of the fullest rank. TensorRT-LLM's CUDA-graph runner all-gathers
  (can_run_graph, batch) over the attention-DP ranks and pads every rank to the largest batch before rounding up to a
  captured size (``tensorrt_llm/_torch/pyexecutor/cuda_graph_runner.py`` ``_get_padded_batch``); the dispatch keeps
  the ranks within one request of each other (``executor_request_queue.py`` ``_balance_requests_across_ranks``: no
  rank above ⌈(active + new)/dp⌉). Priced: the step at dp·⌈B/dp⌉ sequences minus the step at B.
- ``kv``: the step waits for the rank with the most KV to read. Decoding contexts are uniform on [ISL, ISL + OSL]
  (a closed loop in steady state), coefficient of variation cv = (OSL/√12)/(ISL + OSL/2); a rank's n = B/dp sequences
  sum to a context cv/√n above or below the mean, and the fullest of dp ranks is e_dp·cv/√n above it (e_dp = E[max of
  dp standard normals], cost/adp_rank.expected_max_std_normal). Priced: the step with every context raised so (an
  upper bound: it raises every rank).
- ``xchg``: the other MoE token exchange (all-gather + reduce-scatter where the stack prices an all-to-all, and the
  reverse): the release question of cost/moe_exchange.py.
- ``host``: the profile's per-TP-rank host cost (``tp_rank_step_s``, priced on attention-TP pools only) applied to the
  attention-DP ranks, which TensorRT-LLM's mapping puts in the same ``tp`` group (``Mapping(tp_size=dp,
  enable_attention_dp=True)``; the request broadcast and the attention-DP all-gathers run over it every iteration).
  Shipped in round 30 (``Efficiency.tp_rank_step_dp``, set by the ``trtllm`` and ``dynamo-trtllm`` profiles): the
  model now prices it, so ``err_sourced%`` adds it only where the row's profile does not.
- ``tables``: the attention module and routed experts read from TensorRT-LLM 1.3.0rc20's own kernel tables (aiconfigurator-core
  ``mla_generation_module_perf`` at 128 heads, ``moe_perf`` balanced; scripts/trt_decode_split.py) minus the model's
  (not a term: how far the priced kernels sit from the measured ones of a later release).

Each delta is carried to TPOT as Δ·min(1, TPOT/step) (one decode step per token without MTP; a share of a step
with it); ``need`` is the gap as a per-step time (gap / that share), the constant a fixed per-step term would have
to be. Run: python scripts/adp_step_terms.py [--all-loads]   (about 1 min; --all-loads adds the attention-TP rows at
C ≥ 64 for contrast). Needs the aiconfigurator-core package for ``tables`` (pip install -e ".[calibrate]").
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from jalapeno.cost.adp_rank import expected_max_std_normal
from jalapeno.cost.pool_backends import with_pool_backends
from jalapeno.cost.priced import moe_all_to_all
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload, with_stack_mtp
from jalapeno.serve.limits import decode_step_s
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trt_decode_split import HEADS, LAYERS, MOE_LAYERS, _tables, interp_loglog  # noqa: E402

MODEL = "deepseek-r1"


def _step(model, pricer, dep, b: float, ctx: float) -> tuple[float, object]:
    """Decode-only step (s, cost/step.StepCost) at ``b`` sequences of the instance and mean context ``ctx``, as
    served (serve/open_loop.decode_pool_step: the pool's backends, graph-padded; the CUDA-graph ceiling applied)."""
    sc = decode_pool_step(model, pricer, dep, ctx, [b])
    return float(decode_step_s(sc, pricer.efficiency, dep, np.array([b]), dep.decode.layout)[0]), sc


def rows(all_loads: bool) -> pd.DataFrame:
    """One record per TensorRT-LLM DeepSeek-R1 aggregated aiconfigurator row at attention DP (and, with
    ``all_loads``, at attention TP with C ≥ 64)."""
    model = load_model(MODEL)
    tables: dict = {}
    out = []
    for p in load_aiconfigurator()[0]:
        if p.model != MODEL or p.mode != "agg" or "trtllm" not in p.framework or not p.measured.get("tpot_s"):
            continue
        st = point_stack(p)
        wl, dep = point_workload(p), with_stack_mtp(p.deployment, st, p.model)
        lay = dep.decode.layout
        if lay.dp == 1 and not (all_loads and p.concurrency >= 64):
            continue
        pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
        run = serve_at_concurrency(model, pricer, dep, wl, [p.concurrency])
        b, ctx = float(run.decode_batch[0]), float(wl.decode_ctx)
        pr = with_pool_backends(pricer, dep.decode, model, lay, dep.precision.kv_cache.name)
        step, sc = _step(model, pricer, dep, b, ctx)
        tpot = float(run.tpot_s[0])
        share = min(1.0, tpot / step)
        n = b / lay.dp
        pad = _step(model, pricer, dep, lay.dp * math.ceil(n - 1e-9), ctx)[0] - step if lay.dp > 1 else 0.0
        cv = (wl.mean_osl / math.sqrt(12.0)) / (wl.mean_isl + wl.mean_osl / 2.0)
        kv_up = expected_max_std_normal(lay.dp) * cv / math.sqrt(max(n, 1.0))
        kv = _step(model, pricer, dep, b, ctx * (1.0 + kv_up))[0] - step if lay.dp > 1 else 0.0
        a2a = moe_all_to_all(pr, lay, model)
        other = replace(dep.decode, moe_exchange="nvlink_all_to_all_above_top_k" if a2a else "all_to_all")
        xchg = _step(model, pricer, replace(dep, decode=other), b, ctx)[0] - step  # the pool's exchange swapped
        host = (
            lay.tp * (lay.dp - 1) * pr.efficiency.tp_rank_step_s
        )  # (tp·dp − 1) − (tp − 1) ranks: cost/step.step_overhead
        host_new = 0.0 if pr.efficiency.tp_rank_step_dp else host  # priced already where the profile sets it
        fmt = dep.precision.modules["routed_experts"].compute
        if (p.system, fmt) not in tables:
            tables[p.system, fmt] = _tables(p.system, fmt)
        mod, moe = tables[p.system, fmt]
        ops = {o["op"]: o["time_s"] for o in sc.op_rows(0)}
        attn_m = sum(v for k, v in ops.items() if k.startswith("attn."))
        grid = (
            mod[mod.num_heads == HEADS // lay.tp].pivot_table(
                index="batch_size", columns="step", values="latency", aggfunc="min"
            )
            * 1e-3
        )
        attn_t = LAYERS * interp_loglog(grid, max(n, 1.0), ctx)
        moe_tp = lay.tp * lay.dp // lay.ep
        curve = (
            moe[(moe.moe_tp_size == moe_tp) & (moe.moe_ep_size == lay.ep)].groupby("num_tokens").latency.min() * 1e-3
        )
        moe_t = MOE_LAYERS * interp_loglog(curve, max(b, 1.0)) if len(curve) > 1 else np.nan
        tab = attn_t - attn_m + moe_t - ops.get("moe.experts", 0.0)
        meas = p.measured["tpot_s"]
        rec = {
            "row": p.id.removeprefix("aic:"),
            "system": p.system,
            "fmt": fmt,
            "stack": st.name,
            "attn": f"DP{lay.dp}" if lay.dp > 1 else f"TP{lay.tp}",
            "mtp": dep.mtp is not None,
            "isl": int(wl.mean_isl),
            "osl": int(wl.mean_osl),
            "C": p.concurrency,
            "per_rank": n,
            "measured": meas * 1e3,
            "model": tpot * 1e3,
            "error%": (tpot / meas - 1) * 100,
            "step": step * 1e3,
            "gap": (meas - tpot) * 1e3,
            "need": (meas - tpot) / share * 1e3,
        }
        for k, v in (("pad", pad), ("kv", kv), ("xchg", xchg), ("host", host), ("tables", tab)):
            rec[k] = v * share * 1e3
        rec["err_sourced%"] = ((tpot + (pad + kv + host_new) * share) / meas - 1) * 100
        out.append(rec)
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--all-loads", action="store_true", help="add the attention-TP rows at C >= 64 for contrast")
    a = ap.parse_args()
    pd.set_option("display.width", 250)
    pd.set_option("display.max_rows", 500)
    s = rows(a.all_loads)
    if s.empty:
        raise SystemExit("no TensorRT-LLM DeepSeek-R1 aggregated aiconfigurator rows found")
    print("== per row (ms per output token; error % = model / measured - 1; terms carried to TPOT)")
    print(s.sort_values(["system", "fmt", "attn", "mtp", "isl", "osl", "C"]).round(2).to_string(index=False))
    g = s.groupby(["system", "fmt", "attn", "mtp"])
    cols = ["per_rank", "measured", "model", "error%", "gap", "pad", "kv", "xchg", "host", "tables", "err_sourced%"]
    t = g[cols].median().round(2)
    t.insert(0, "n", g.size())
    t["need_min"], t["need_max"] = g["need"].min().round(1), g["need"].max().round(1)
    print("\n== medians per (system, format, attention, MTP)")
    print(t.to_string())


if __name__ == "__main__":
    main()
