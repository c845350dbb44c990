"""TensorRT-LLM attention-TP decode of DeepSeek-V3-architecture models: the step's terms, and the all-reduce + RMSNorm
fusion the engine runs there and the model does not (issue 18, round 45, tep45; diagnosis and what-if, nothing ships).

Question (gb300ultra45, docs/gap_disagg_overprediction.md round 45): aiconfigurator's TensorRT-LLM attention-TP decode
pools (TEP4 / TEP8, attention DP 1) of DeepSeek-R1 at 5-96 concurrency are priced 5-7% slow on GB300 and GB200 alike.
Which term of the decode step is overpriced?

1. Per row (every aiconfigurator DeepSeek-R1 / Kimi K2.5 TensorRT-LLM row whose decode pool runs attention TP > 1 and
   attention DP 1, on the systems asked), served as validation serves it (serve/point.serve_at_concurrency with the
   row's stack, fit/validate.point_stack) and the decode-only step at the modelled decode batch
   (serve/open_loop.decode_pool_step) split into: ``launch`` (the ops' fixed per-kernel cost, ``kernel_launch_s`` per
   kernel), ``step_ovh`` (the rest of the step beyond its ops and collectives: cost/step.step_overhead, the per-step and
   per-TP-rank costs), ``attn`` / ``experts`` / ``gemm`` (other GEMMs: shared expert, router, dense FFN, LM head) /
   ``elem`` (``layer.elementwise``: the residual adds + RMSNorms, 2 kernels a layer) by their time beyond the launch
   cost, and ``ar`` (the TP all-reduces: calls, bytes per call and time per call, priced from TensorRT-LLM's own
   ``custom_allreduce_perf`` table where the system has one, cost/engine_allreduce.py).
2. The what-if: the same row with the profile's all-reduce + residual + RMSNorm fusion on
   (Stack.with_allreduce_rms_fusion, cost/allreduce_rms.py): the ``layer.elementwise`` op is dropped at the fused steps
   and the fused all-reduce is priced from TensorRT-LLM's table (the same table these rows already use, so only the
   norms move). Source that TensorRT-LLM runs it on these pools: NVIDIA/TensorRT-LLM
   tensorrt_llm/_torch/models/modeling_deepseekv3.py, ``DeepseekV3DecoderLayer``: ``enable_fusion`` unless
   ``TRTLLM_DEEPSEEK_EAGER_FUSION_DISABLED`` is set, and off with attention DP; on every MoE layer
   ``PRE_MOE_FUSION = POST_MOE_FUSION = enable_fusion and has_tp``, and ``forward_MoE`` then runs both all-reduces with
   ``AllReduceFusionOp.RESIDUAL_RMS_NORM`` (the post-attention norm, and the next layer's input norm) instead of the
   separate ``post_attention_layernorm`` / ``next_layer_layernorm`` calls; dense layers fuse the post-MLP one always
   and the pre-MLP one for NVFP4 (``RESIDUAL_RMS_NORM_QUANT_NVFP4``). Kimi K2.5 runs the same model class
   (DeepseekV3ForCausalLM). Limits of the what-if: the fused steps are those of the existing rule's size cap (vLLM's
   FUSION_MAX_MIB table: 1 MiB per rank at TP8 on Blackwell, 73 tokens of 7,168), not a TensorRT-LLM limit (none read);
   the three dense layers of an FP8 checkpoint keep one unfused norm in TensorRT-LLM and drop both here (3 x 2.6 us);
   the stack fit (kernel_launch_s, step_overhead_s, tp_rank_step_s, fitted with the norms unfused) is not rerun.
3. Medians per (system, model, precision, release, attention TP): n, measured and modelled TPOT, the signed error
   before and with the fusion, the step's terms.
4. Release pairs (:func:`release_ratio`): where one (system, model, precision, mode, ISL/OSL, attention TP, MTP) group
   holds rows of two releases, the later release's measured and modelled TPOT interpolated (linear in log batch, inside its
   own batch range) at each earlier-release row's decode batch, over the earlier row's: how much faster the later
   release runs the same step, measured, against what the model prices (the profile pins no release difference here).

Round 46 (arfusion46) builds the fusion into the ``trtllm`` / ``dynamo-trtllm`` profiles (data/stacks.toml), shipped
off (specs/stacks.ENGINE_AR_RMS_ON): the "before" columns here are the row with the fusion off, the terms those of the
unfused step, whichever way the switch stands.
Nothing is fitted or written; predictions do not move. Run: python scripts/trt_tp_rms_fusion45.py
[--systems gb200-nvl72,gb300-nvl72,b200,h200] [--rows]   (about 20 s)
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload, with_stack_mtp
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model

#: models served by TensorRT-LLM's DeepseekV3ForCausalLM (the fusion rule read there)
MODELS = ("deepseek-r1", "kimi-k2.5")
SYSTEMS = "gb200-nvl72,gb300-nvl72,b200,h200"
#: op name prefix -> term of the split (table 1); the rest of the ops are ``gemm``
TERMS = (("attn.", "attn"), ("moe.experts", "experts"), ("layer.elementwise", "elem"))


def op_terms(ops: pd.DataFrame) -> dict:
    """Seconds of a step's ops by term: ``launch`` (their fixed per-kernel cost, ``overhead_s``) and each term's time
    beyond it (``TERMS``; every other op is ``gemm``). ``ops``: StepCost.op_rows as a frame (op, time_s, overhead_s).

    >>> f = pd.DataFrame({"op": ["attn.q", "moe.experts", "lm_head"], "time_s": [3.0, 5.0, 2.0], "overhead_s": [1.0, 1.0, 0.5]})
    >>> op_terms(f)
    {'launch': 2.5, 'attn': 2.0, 'experts': 4.0, 'elem': 0.0, 'gemm': 1.5}
    """
    beyond = ops.time_s - ops.overhead_s
    out = {"launch": float(ops.overhead_s.sum())}
    taken = np.zeros(len(ops), dtype=bool)
    for prefix, term in TERMS:
        m = ops.op.str.startswith(prefix).to_numpy()
        out[term] = float(beyond[m].sum())
        taken |= m
    out["gemm"] = float(beyond[~taken].sum())
    return out


def _served(model, p, st):
    pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
    wl, dep = point_workload(p), with_stack_mtp(p.deployment, st, p.model)
    run = serve_at_concurrency(model, pricer, dep, wl, [p.concurrency])
    b = float(run.decode_batch[0])
    return float(run.tpot_s[0]), b, decode_pool_step(model, pricer, dep, wl.decode_ctx, [b])


def split_rows(systems: tuple[str, ...]) -> pd.DataFrame:
    """One record per aiconfigurator TensorRT-LLM row of :data:`MODELS` on ``systems`` whose decode pool runs attention
    TP > 1 and DP 1 (module docstring, tables 1-2); times in ms, ``ar_us`` per call."""
    models = {m: load_model(m) for m in MODELS}
    out = []
    for p in load_aiconfigurator()[0]:
        lay = p.deployment.decode.layout
        if (
            p.model not in MODELS
            or p.system not in systems
            or "trtllm" not in p.framework
            or lay.tp < 2
            or lay.dp != 1
            or not p.measured.get("tpot_s")
        ):
            continue
        st = point_stack(p)  # fused since round 46 (the profile's allreduce_rms_fusion): "before" turns it off
        tpot, b, sc = _served(models[p.model], p, st.with_allreduce_rms_fusion(False))
        fused_tpot = _served(models[p.model], p, st.with_allreduce_rms_fusion(True))[0]
        ops, co = pd.DataFrame(sc.op_rows(0)), pd.DataFrame(sc.collective_rows(0))
        ar = co[co.kind == "all_reduce"]
        t = op_terms(ops)
        step = float(sc.step_time_s[0])
        meas = p.measured["tpot_s"]
        out.append(
            {
                "row": p.id.split("_trtllm_")[-1],
                "system": p.system,
                "model": p.model,
                "fmt": p.precision,
                "release": st.version or "",
                "tp": lay.tp,
                "mtp": dep_mtp(p, st),
                "batch": b,
                "measured": meas * 1e3,
                "model_ms": tpot * 1e3,
                "error": tpot / meas - 1,
                "fused_error": fused_tpot / meas - 1,
                "step": step * 1e3,
                **{k: v * 1e3 for k, v in t.items()},
                "ar": float(ar.time_s.sum()) * 1e3,
                "ar_calls": float(ar.calls.sum()),
                "ar_kib": float(ar.bytes_per_call.max()) / 1024 if len(ar) else 0.0,
                "ar_us": float((ar.time_s / ar.calls).max()) * 1e6 if len(ar) else 0.0,
                "ar_alg": ",".join(sorted(set(ar.algorithm))),
                "isl_osl": f"{p.mode} {p.isl}x{p.osl}",
                "step_ovh": (step - sum(t.values()) - float(co.time_s.sum())) * 1e3,
            }
        )
    return pd.DataFrame(out)


def release_ratio(early: pd.DataFrame, late: pd.DataFrame, col: str) -> np.ndarray:
    """``late[col]`` interpolated linearly in log batch at each of ``early``'s batches, over ``early[col]`` (NaN outside
    ``late``'s batch range). Frames with ``batch`` and ``col``.

    >>> e = pd.DataFrame({"batch": [2.0, 8.0, 64.0], "t": [10.0, 10.0, 10.0]})
    >>> l = pd.DataFrame({"batch": [1.0, 4.0, 16.0], "t": [8.0, 9.0, 10.0]})
    >>> release_ratio(e, l, "t").round(3).tolist()
    [0.85, 0.95, nan]
    """
    lo = late.sort_values("batch")
    x, xl = np.log(early.batch.to_numpy(float)), np.log(lo.batch.to_numpy(float))
    y = np.interp(x, xl, lo[col].to_numpy(float))
    y = np.where((x < xl[0]) | (x > xl[-1]), np.nan, y)
    return y / early[col].to_numpy(float)


def release_pairs(s: pd.DataFrame) -> pd.DataFrame:
    """Table 4 (module docstring): per group with two or more releases, each later release against the earliest."""
    out = []
    for key, g in s.groupby(["system", "model", "fmt", "isl_osl", "tp", "mtp"]):
        rels = sorted(r for r in g.release.unique() if r)
        for late in rels[1:]:
            e, lt = g[g.release == rels[0]], g[g.release == late]
            if len(lt) < 2:
                continue
            rm, rp = release_ratio(e, lt, "measured"), release_ratio(e, lt, "model_ms")
            ok = ~np.isnan(rm)
            if ok.any():
                out.append(
                    {
                        "group": " ".join(map(str, key)),
                        "early": rels[0],
                        "late": late,
                        "n": int(ok.sum()),
                        "measured_late/early": float(np.median(rm[ok])),
                        "model_late/early": float(np.median(rp[ok])),
                    }
                )
    return pd.DataFrame(out)


def dep_mtp(p, st) -> int:
    """Draft tokens of the row's decode step as served (its deployment with the stack's MTP)."""
    m = with_stack_mtp(p.deployment, st, p.model).mtp
    return int(m.draft_tokens) if m is not None else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", default=SYSTEMS, help="comma-separated catalog systems")
    ap.add_argument("--rows", action="store_true", help="print every row")
    a = ap.parse_args()
    pd.set_option("display.width", 250)
    s = split_rows(tuple(a.systems.split(",")))
    if s.empty:
        raise SystemExit(f"no TensorRT-LLM attention-TP rows of {', '.join(MODELS)} on {a.systems}")
    terms = ["step", "launch", "step_ovh", "attn", "experts", "gemm", "elem", "ar", "ar_us"]
    algs = s.groupby(["system", "tp"]).ar_alg.agg(lambda a: ",".join(sorted(set(",".join(a).split(",")))))
    if a.rows:
        print("== per row (ms; ar_us per all-reduce call)")
        print(
            s.sort_values(["system", "model", "fmt", "release", "tp", "batch"])[
                [
                    "row",
                    "release",
                    "tp",
                    "mtp",
                    "batch",
                    "measured",
                    "model_ms",
                    "error",
                    "fused_error",
                    *terms,
                    "ar_kib",
                ]
            ]
            .round(3)
            .to_string(index=False)
        )
    g = s.groupby(["system", "model", "fmt", "release", "tp"])
    t = g[["batch", "measured", "model_ms", "error", "fused_error", *terms]].median().round(3)
    t.insert(0, "n", g.size())
    print("\n== medians per (system, model, precision, release, attention TP)")
    print(t.to_string())
    print("\n== all-reduce pricing per (system, attention TP)")
    print(algs.to_string())
    pairs = release_pairs(s)
    if not pairs.empty:
        print(
            "\n== release pairs: the later release's TPOT at the earlier release's decode batches, over the earlier's (medians)"
        )
        print(pairs.round(3).to_string(index=False))
    print("\n== signed TPOT error, median / mean, before -> with the fusion, per (system, model)")
    h = s.groupby(["system", "model"])
    print(
        pd.DataFrame(
            {
                "n": h.size(),
                "median": h.error.median(),
                "mean": h.error.mean(),
                "median_fused": h.fused_error.median(),
                "mean_fused": h.fused_error.mean(),
            }
        )
        .round(3)
        .to_string()
    )


if __name__ == "__main__":
    main()
