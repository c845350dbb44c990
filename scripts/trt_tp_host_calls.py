"""TensorRT-LLM's eager prompt floor against TP: does counting the host calls that exist only at TP > 1 explain why the H200 gpt-oss-120b (TRITON MoE) floor grows from TP1 to TP8? (issue 18, round 28, triton28; negative result, nothing shipped).

Round 27 (h200ttft27, docs/gap_aic_ttft.md) priced the H200 gpt-oss-120b TensorRT-LLM rows' eager prompt step at
host calls × 24 µs (cost/host_calls.TRITON_MOE, 65 calls a layer at every TP) and left the rows' implied 1k step
growing from ~50 ms at TP1 to ~80 ms at TP8. This script counts, from TensorRT-LLM's source, the calls of one eager
gpt-oss layer that depend on TP and on the MoE EP size (:data:`TP_CALLS`, every call with file@commit), prices the
floor by TP with them at the shipped rate (no new constant), and sets the result against the rows:

1. the per-layer count by (TP, EP) against the calls per layer the rows' implied 1k step needs (C ≤ 8);
2. a what-if: the H200 gpt-oss-120b rows priced with the by-TP count (the shipped ``eager_prompt_call_s`` scaled
   by count / 65, which is exact: the floor is calls × rate and a GQA layer makes the same calls mixed or not),
   TTFT median |error| / bias by ISL and TP, shipped → what-if; nothing is written;
3. the cross-model check of a TP-growing host cost: every eager TensorRT-LLM aggregated group at C ≤ 8, the implied
   prompt step (measured − front end − load − burst) against max(counted floor, the model's GPU step), by TP.

Run: python scripts/trt_tp_host_calls.py   (about 20 s)
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trt_eager_context_floor import _stat  # noqa: E402  (median |error| / bias / n)

#: Where the TP- and EP-dependent calls were read: NVIDIA/TensorRT-LLM and triton-lang/triton (triton_kernels), at
#: the commits the source index stored (newer than the rows' gpt-oss-dev image; round 27 read the same files).
SOURCES = {
    "block": "tensorrt_llm/_torch/models/modeling_gpt_oss.py @050b6cb9 TransformerBlock.forward: forward_tp when "
    "is_tp (mapping.has_tp() and no attention DP), else forward_normal",
    "norm": "tensorrt_llm/_torch/modules/rms_norm.py @0419019a RMSNorm.forward: one flashinfer_fused_add_rmsnorm call "
    "with a residual",
    "ar2025": "tensorrt_llm/_torch/distributed/ops.py AllReduce.forward, the 2025 versions in the source index: "
    "returns its input at tp_size 1, else one torch.ops.trtllm.allreduce (fusion op RESIDUAL_RMS_NORM "
    "carries the norm)",
    "ar2026": "tensorrt_llm/_torch/distributed/ops.py @0071496d AllReduce.forward: input.contiguous() before "
    "torch.ops.trtllm.tunable_allreduce (AUTO strategy)",
    "ep": "tensorrt_llm/_torch/modules/fused_moe/fused_moe_triton.py @00131d71 TritonEPRouter.__call__ -> "
    "prune_routing_ep when ep > 1",
    "compaction": "triton-lang/triton python/triton_kernels/triton_kernels/compaction.py @27db8db5 compaction",
}
#: The calls of one eager gpt-oss-120b layer that depend on TP or EP: (source key, call, count, when). ``when``:
#: "tp1" only at TP 1 (forward_normal), "tp>1" only at TP > 1 (forward_tp), "tp>1 2026" only with the 2026
#: AllReduce.forward, "ep>1" only with the MoE EP size > 1. Not ATen calls (not counted, eager26's definition):
#: AllReduceParams(...), the strategy and MNNVL/symmetric-memory checks, tensor metadata (.stride(), .shape).
TP_CALLS = (
    ("norm", "post_attention_layernorm (fused residual add)", 1, "tp1"),
    ("norm", "next_layer_layernorm (fused residual add)", 1, "tp1"),
    ("ar2025", "all-reduce + post_attention_layernorm (RESIDUAL_RMS_NORM)", 1, "tp>1"),
    ("ar2025", "all-reduce + next_layer_layernorm (RESIDUAL_RMS_NORM)", 1, "tp>1"),
    ("ar2026", "input.contiguous() before the first all-reduce", 1, "tp>1 2026"),
    ("ar2026", "input.contiguous() before the second all-reduce", 1, "tp>1 2026"),
    ("ep", "_routing_shift_bitmatrix_range launch", 1, "ep>1"),
    ("ep", "_routing_clear_bitmatrix launch", 1, "ep>1"),
    ("compaction", "torch.empty_like ret_yv", 1, "ep>1"),
    ("compaction", "torch.empty_like ret_yi", 1, "ep>1"),
    ("compaction", "_masked_compaction launch", 1, "ep>1"),
)
#: The TP- and EP-dependent calls eager26's shipped gpt-oss layer holds at every TP (scripts/trt_eager_host_calls
#: CALLS["gptoss_layer"]: "all-reduce + post_attention_layernorm" 2, "all-reduce + next layer's RMSNorm" 2).
SHIPPED_TP_PART = 4


def tp_part(tp: int, ep: int, ar_2026: bool = True) -> int:
    """The TP/EP-dependent calls of one eager gpt-oss layer (:data:`TP_CALLS`).

    >>> tp_part(1, 1), tp_part(2, 1, False), tp_part(8, 8, False), tp_part(8, 8)
    (2, 2, 7, 9)
    """

    def on(when: str) -> bool:
        return {"tp1": tp == 1, "tp>1": tp > 1, "tp>1 2026": tp > 1 and ar_2026, "ep>1": ep > 1}[when]

    return sum(n for _, _, n, when in TP_CALLS if on(when))


def layer_calls(tp: int, ep: int, ar_2026: bool = True) -> int:
    """Host calls of one eager gpt-oss-120b layer on the TRITON path by (TP, EP): the shipped count
    (cost/host_calls.layer_host_calls, 65) with its TP part (:data:`SHIPPED_TP_PART`) replaced by :func:`tp_part`.

    >>> layer_calls(1, 1), layer_calls(8, 8), layer_calls(8, 8, False)
    (63, 70, 68)
    """
    from jalapeno.cost.host_calls import layer_host_calls
    from jalapeno.specs.catalog import load_model

    shipped = layer_host_calls(load_model("gpt-oss-120b"), True, True, "triton")
    return shipped - SHIPPED_TP_PART + tp_part(tp, ep, ar_2026)


def script_ep(tp: int) -> int:
    """The MoE EP size every H200 gpt-oss-120b TensorRT-LLM row ran: ``--ep_size=$TP`` (InferenceX
    benchmarks/gptoss_fp4_h200_trt_slurm.sh @e06929c70, the script of the 2025-11-02 rows) and ``--ep_size=$EP_SIZE``
    with ``ep`` = ``tp`` in every search-space entry of .github/configs/nvidia-master.yaml gptoss-fp4-h200-trt
    (@b60289e52, 2025-11; @35c7eb342, 2025-12-15: "For all sequence lengths, EP=TP"). The aiconfigurator sample
    gives the 2025-11-02 ("unstated") rows moe_ep_size 1, moe_tp_size = tp.

    >>> script_ep(4)
    4
    """
    return tp


def what_if(df_rows) -> pd.DataFrame:
    """The H200 gpt-oss-120b TensorRT-LLM rows predicted with the shipped floor and with the by-TP count.

    Returns one row per measured point: ``isl``, ``tp``, ``conc``, ``m`` (measured TTFT, s), ``shipped`` and
    ``by_tp`` (predicted TTFT, s).
    """
    from aic_ttft_split import predict_parts

    from jalapeno.cost.host_calls import layer_host_calls
    from jalapeno.specs.catalog import load_model

    shipped = layer_host_calls(load_model("gpt-oss-120b"), True, True, "triton")
    out = []
    for label, scale in (
        ("shipped", lambda p: 1.0),
        (
            "by_tp",
            lambda p: layer_calls(p.deployment.decode.layout.tp, script_ep(p.deployment.decode.layout.tp)) / shipped,
        ),
    ):
        pts = [
            dataclasses.replace(
                p,
                deployment=dataclasses.replace(
                    p.deployment, eager_prompt_call_s=p.deployment.eager_prompt_call_s * scale(p)
                ),
            )
            for p in df_rows
        ]
        d = predict_parts(pts)
        out.append(d.full.rename(label))
    base = {p.id: p for p in df_rows}
    res = pd.concat(out, axis=1)
    res["m"] = [base[i].measured["ttft_s"] for i in res.index]
    res["isl"] = [base[i].isl for i in res.index]
    res["tp"] = [base[i].deployment.decode.layout.tp for i in res.index]
    res["conc"] = [base[i].concurrency for i in res.index]
    return res.dropna()


def cross_model() -> pd.DataFrame:
    """Every eager TensorRT-LLM aggregated group without attention DP at C ≤ 8: the implied prompt step against the
    counted floor H (shipped counts × the shipped rate) and the model's GPU-only step ``lone``, medians by group
    and TP; ``excess`` = implied − max(H, lone), s."""
    from aic_ttft_split import parts, predict_parts

    from jalapeno.cost.host_calls import step_host_calls
    from jalapeno.fit.aic_quality import aic_source_flags, aic_ttft_flags
    from jalapeno.fit.validate import load_aiconfigurator
    from jalapeno.specs.catalog import load_model

    points, _ = load_aiconfigurator()
    flagged = set(aic_ttft_flags(points)) | set(aic_source_flags(points))
    sel = [
        dataclasses.replace(p, deployment=dataclasses.replace(p.deployment, eager_prompt_call_s=0.0))
        for p in points
        if p.mode == "agg"
        and p.framework.split()[0] == "trtllm"
        and p.id not in flagged
        and p.concurrency <= 8
        and p.deployment.eager_prompt_call_s > 0
        and p.deployment.decode.layout.dp == 1
    ]
    rate = {p.id: p.deployment.eager_prompt_call_s for p in points}
    df = predict_parts(sel)
    df = df[df.full.notna() & df.measured_ttft_s.notna()].copy()
    df = df.assign(**parts(df.full, df.noburst, df.bare, df.lone))
    by = {p.id: p for p in sel}
    df["implied"] = df.measured_ttft_s - df.front - df.load - df.burst
    df["H"] = [
        (step_host_calls(load_model(by[i].model), by[i].concurrency > 1, 0, by[i].deployment.decode.moe_backend) or 0)
        * rate[i]
        for i in df.index
    ]
    for col, f in (
        ("system", lambda p: p.system),
        ("model", lambda p: p.model),
        ("isl", lambda p: p.isl),
        ("tp", lambda p: p.deployment.decode.layout.tp),
    ):
        df[col] = [f(by[i]) for i in df.index]
    g = df.groupby(["system", "model", "isl", "tp"]).agg(
        n=("implied", "size"), implied=("implied", "median"), lone=("lone", "median"), H=("H", "median")
    )
    g["excess"] = g.implied - g[["lone", "H"]].max(axis=1)
    return g


def main() -> None:
    from h200_gptoss_trt_floor import LOW_LOAD, frame, needed_calls_per_layer

    from jalapeno.fit.trt_prompt_graphs import TRTLLM_EAGER_CALL_S as C
    from jalapeno.fit.validate import load_aiconfigurator

    print("== TP/EP-dependent calls of one eager gpt-oss layer (TP_CALLS)")
    for key, call, n, when in TP_CALLS:
        print(f"  [{when:>9}] {n} {call}  ({key})")
    for k, v in SOURCES.items():
        print(f"  {k}: {v}")

    df = frame()
    low = df[(df.system == "h200") & (df.conc <= LOW_LOAD) & (df.isl == 1024)]
    print(
        f"\n== H200 gpt-oss-120b, 1k, C <= {LOW_LOAD}: implied step, the calls/layer it needs at {C * 1e6:.0f} µs,"
        " the by-TP count (EP = TP, as the script ran) and its floor"
    )
    for tp, g in low.groupby("tp"):
        need = needed_calls_per_layer(g.implied.median(), C, 36)
        n26, n25 = layer_calls(tp, script_ep(tp)), layer_calls(tp, script_ep(tp), False)
        print(
            f"  TP{tp}: n {len(g)}, implied {g.implied.median() * 1e3:.1f} ms (GPU {g.lone.median() * 1e3:.1f} ms): "
            f"needs {need:.0f} calls/layer; counted {n25}-{n26} (shipped 65) = {n25 * 36 * C * 1e3:.1f}-"
            f"{n26 * 36 * C * 1e3:.1f} ms"
        )

    points, _ = load_aiconfigurator()
    rows = [
        p
        for p in points
        if p.system == "h200" and p.model == "gpt-oss-120b" and p.mode == "agg" and p.framework.split()[0] == "trtllm"
    ]
    res = what_if(rows)
    print(f"\n== what-if (nothing written): H200 gpt-oss-120b TTFT, shipped -> by-TP count, n {len(res)}")
    print(f"  all: {_stat(res.shipped / res.m - 1)} -> {_stat(res.by_tp / res.m - 1)}")
    for key, g in res.groupby(["isl", "tp"]):
        print(f"  {key}: {_stat(g.shipped / g.m - 1)} -> {_stat(g.by_tp / g.m - 1)}")

    print("\n== every eager TensorRT-LLM aggregated group, C <= 8: implied step vs max(counted floor H, GPU), s")
    with pd.option_context("display.width", 160):
        print(cross_model().round(4).to_string())


if __name__ == "__main__":
    main()
