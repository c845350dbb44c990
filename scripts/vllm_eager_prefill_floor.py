"""vLLM's eager disaggregated prefill worker (Kimi K2.5 on GB200): counted in host calls, priced with the eager floor.

Question (round 28, vllmeager28; nixl28's lead): the srt-slurm recipes the GB200 vLLM 0.18.0 Kimi K2.5 FP4 disaggregated
rows ran (NVIDIA/srt-slurm @8294e64e, branch sa-submission-q2-2026, ``recipes/vllm/kimi-k2.5/{1k1k,8k1k}/disagg-gb200-*``)
start the prefill worker with ``enforce-eager: true`` (no CUDA graphs, no torch.compile), ``no-enable-chunked-prefill``
and ``max-num-batched-tokens: 16384``: every prompt runs as one eager step. The model prices no eager floor for vLLM
(fit/trt_prompt_graphs.with_prompt_graphs sets ``eager_prompt_call_s`` for TensorRT-LLM only). Would TensorRT-LLM's
shipped floor, max(host calls x rate, GPU) (cost/host_calls.py, serve/limits.prompt_floor_s), carried over to this
worker, explain the rows' too-fast TTFT?

Parts (nothing in the package moves; the validate CSV is unchanged):

1. :data:`CALLS`: the host calls of one eager context-only (prefill worker) forward per decoder layer, read in vLLM's
   source through the source index (the stored versions, newer than v0.18.0: the 1.1 GB repository is over the
   ``fetch`` limit, so the tag itself could not be read; the layer structure is what is counted), with every
   assumption named. :func:`step_calls` totals them for Kimi K2.5 (61 layers, the first dense).
2. ``--rows``: the 14 rows' TTFT as shipped and with a prefill floor H (in-process what-ifs of ``jalapeno validate``,
   one subprocess each, ~20 s each) on a grid of H, and the floor each low-load row (C <= 8) needs for the model to
   meet it (H_need, interpolated). One step per prompt (no chunking), so H is one number per step whatever the count
   or the rate: the 1k and 8k rows must agree on it for the mechanism to hold.

Run: python scripts/vllm_eager_prefill_floor.py            (the count, instant)
     python scripts/vllm_eager_prefill_floor.py --rows     (the what-ifs, about two minutes)
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import tempfile
from dataclasses import replace

#: Where each part was read (vllm-project/vllm, the versions the source index stored; vLLM 0.18.0's layer structure
#: is assumed to be theirs).
SOURCES = {
    "mla": "vllm/model_executor/layers/mla.py @00b9b7ad MultiHeadLatentAttentionWrapper.forward",
    "mla_impl": "vllm/v1/attention/backends/mla/common.py (stored version) MLACommonImpl.forward, _forward_prefill, "
    "_concat_k_nope_k_pe, _run_prefill_new_tokens_trtllm_ragged (the recipe's attention-config "
    "use_trtllm_ragged_deepseek_prefill)",
    "layer": "vllm/model_executor/models/deepseek_v2.py @b863fe5b DeepseekV2DecoderLayer.forward (RMSNorm with a "
    "residual: one fused_add_rms_norm custom op, recipe custom_ops +rms_norm)",
    "moe": "vllm/model_executor/models/deepseek_v2.py @b863fe5b DeepseekV2MoE.forward (router GEMM in float32, "
    "SharedFusedMoE, routed scaling, shared add)",
    "recipe": "NVIDIA/srt-slurm @8294e64e recipes/vllm/kimi-k2.5/*/disagg-gb200-*.yaml: prefill DP4 + EP, "
    "enforce-eager, FLASHINFER_MLA, fp8 KV, all2all-backend flashinfer_nvlink_one_sided, "
    "VLLM_USE_FLASHINFER_MOE_FP4=1",
}

#: Host calls of one eager prefill-only decoder layer, (part, source key, calls, what). A call is round 26's (eager26):
#: one call from Python into torch (an ATen op, views, slices and allocations included; a custom op; a CUDA event or
#: stream call). ASSUMED where marked (not read, or read only in part).
CALLS = (
    (
        "mla",
        "mla",
        1,
        "fused_qkv_a_proj GEMM (attention projections BF16: ASSUMED, NVIDIA's NVFP4 checkpoints "
        "quantize the MoE experts)",
    ),
    ("mla", "mla", 1, "qkv_lora.split"),
    ("mla", "mla", 2, "q_a_layernorm: output allocation + rms_norm custom op"),
    ("mla", "mla", 1, "q_b_proj GEMM"),
    ("mla", "mla", 1, "kv_lora.split"),
    ("mla", "mla", 2, "kv_a_layernorm: output allocation + rms_norm custom op"),
    ("mla", "mla", 2, "q.view, k_pe.unsqueeze"),
    ("mla", "mla", 4, "rotary: q[..., nope:] slice, rotary_embedding custom op, the write-back slice + copy_"),
    ("mla", "mla", 2, "mla_attn: output allocation + the unified MLA attention custom op"),
    ("mla", "mla", 1, "o_proj GEMM"),
    ("mla_impl", "mla_impl", 4, "forward: output, q, k_c_normed, k_pe sliced to num_actual_tokens"),
    ("mla_impl", "mla_impl", 4, "forward: decode_q, prefill_q, prefill_k_pe, prefill_k_c_normed slices"),
    ("mla_impl", "mla_impl", 3, "concat_and_cache_mla: k_pe.squeeze, slot_mapping.flatten, the cache-write op"),
    ("mla_impl", "mla_impl", 1, "kv_cache.view(fp8)"),
    ("mla_impl", "mla_impl", 3, "_forward_prefill: kv_b_proj GEMM, view, split"),
    ("mla_impl", "mla_impl", 5, "_concat_k_nope_k_pe: torch.empty + two slice-and-copy writes"),
    ("mla_impl", "mla_impl", 2, "trtllm_ragged_attention_deepseek (FlashInfer) + its output allocation (ASSUMED one)"),
    ("mla_impl", "mla_impl", 3, "output_prefill[..., :v] slice, flatten, output.copy_"),
    ("layer", "layer", 2, "input_layernorm and post_attention_layernorm with the residual (fused_add_rms_norm)"),
    ("moe", "moe", 1, "hidden_states.view"),
    ("moe", "moe", 2, "hidden_states.to(float32) + the router GEMM"),
    ("moe", "moe", 2, "SharedFusedMoE: output allocation + the moe_forward_shared custom op"),
    ("moe", "moe", 4, "shared expert: gate_up GEMM, SiluAndMul (allocation + op), down GEMM (BF16: ASSUMED)"),
    ("moe", "moe", 4, "shared expert on the auxiliary stream: event record / wait, stream switch (ASSUMED 4)"),
    ("moe", "moe", 3, "NVFP4 quantize of the routed input: output + scale allocations + op (ASSUMED)"),
    ("moe", "moe", 4, "flashinfer_nvlink_one_sided dispatch: metadata + payload all-to-all (ASSUMED 4, not read)"),
    ("moe", "moe", 2, "FlashInfer TRTLLM-gen NVFP4 MoE (routing inside the kernel: ASSUMED) + output allocation"),
    ("moe", "moe", 2, "combine all-to-all + its output (ASSUMED 2, not read)"),
    ("moe", "moe", 2, "final_hidden_states *= routed_scaling_factor; += shared_output"),
)
#: A dense MLP layer (Kimi K2.5's first, first_k_dense_replace = 1): gate_up GEMM, SiluAndMul (2), down GEMM.
DENSE_MLP = 4


def part_calls(part: str) -> int:
    """Sum of :data:`CALLS` of one part (``mla``, ``mla_impl``, ``layer``, ``moe``).

    >>> part_calls("mla"), part_calls("mla_impl"), part_calls("layer"), part_calls("moe")
    (17, 25, 2, 26)
    """
    return sum(n for p, _, n, _ in CALLS if p == part)


def step_calls(layers: int = 61, dense: int = 1) -> int:
    """Host calls of one eager prefill-only forward through every decoder layer (embedding, final norm, LM head,
    sampler and the model runner's input preparation not counted).

    >>> step_calls()  # 1 x (17 + 25 + 2 + 4) + 60 x (17 + 25 + 2 + 26)
    4248
    """
    attn = part_calls("mla") + part_calls("mla_impl") + part_calls("layer")
    return dense * (attn + DENSE_MLP) + (layers - dense) * (attn + part_calls("moe"))


def _run_whatif(h_s: float, out: str) -> None:
    """``jalapeno validate`` with every vLLM disaggregated row's prefill worker given an eager floor of ``h_s``
    seconds (Kimi K2.5's TensorRT-LLM count, cost/host_calls, scaled by the rate so the floor is ``h_s``)."""
    import jalapeno.fit.aic_rows as rows
    from jalapeno.cost.host_calls import step_host_calls
    from jalapeno.specs.catalog import load_model

    rate = h_s / step_host_calls(load_model("kimi-k2.5"), False)
    orig = rows.with_prompt_graphs

    def patched(dep, engine, model, precision, release, isl, osl, conc):
        if dep is not None and engine.split()[0] == "vllm" and dep.prefill is not None and rate > 0:
            return replace(dep, eager_prompt_call_s=rate), "what-if: eager prefill floor"
        return orig(dep, engine, model, precision, release, isl, osl, conc)

    rows.with_prompt_graphs = patched
    from jalapeno.cli.app import main as cli

    sys.argv = ["jalapeno", "validate", "-o", out]
    cli()


def _ttft(path: str) -> dict:
    """{row id: (ISL, concurrency, measured, predicted)} of the GB200 vLLM disaggregated TTFT rows of a validate CSV."""
    with open(path) as f:
        return {
            r["id"]: (int(r["isl"]), float(r["concurrency"]), float(r["measured"]), float(r["predicted"]))
            for r in csv.DictReader(f)
            if r["system"].startswith("gb200")
            and r["framework"].startswith("vllm")
            and r["mode"] == "disagg"
            and r["metric"] == "ttft_s"
        }


def rows_report(rate_s: float = 24e-6, grid=(0.2, 0.3, 0.4, 0.5)) -> dict:
    """Part 2 of the module docstring: each row's TTFT shipped (no floor), with the counted floor
    (:func:`step_calls` x ``rate_s``) and with the floors of ``grid`` (s); and the floor H_need at which the model
    meets the row (linear interpolation on the grid; nan where no floor of the grid reaches the measurement or the
    row is above C = 8, where queueing and not the lone prompt sets TTFT). Returns {row id: H_need}."""
    floors = [0.0, step_calls() * rate_s, *grid]
    got = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, h in enumerate(floors):
            out = os.path.join(tmp, f"{i}.csv")
            subprocess.run([sys.executable, __file__, "--whatif", repr(h), out], check=True, stdout=subprocess.DEVNULL)
            got.append(_ttft(out))
    print(
        f"counted floor {step_calls()} calls x {rate_s * 1e6:g} us = {floors[1] * 1e3:.0f} ms; predicted TTFT (s) "
        f"at the floors (ms) {', '.join(f'{h * 1e3:.0f}' for h in floors)}"
    )
    need = {}
    for rid in sorted(got[0], key=lambda r: got[0][r][:2]):
        isl, c, meas, _ = got[0][rid]
        pred = [g[rid][3] for g in got]
        h = float("nan")
        if c <= 8:
            for (h0, p0), (h1, p1) in zip(zip(floors, pred), zip(floors[1:], pred[1:])):
                if p0 <= meas <= p1 and p1 > p0:
                    h = h0 + (meas - p0) * (h1 - h0) / (p1 - p0)
        need[rid] = h
        print(
            f"{isl:5d} C={c:5.0f} measured {meas:7.3f}  predicted "
            + " ".join(f"{x:7.3f}" for x in pred)
            + f"   H_need {h * 1e3:5.0f} ms"
        )
    return need


if __name__ == "__main__":
    if sys.argv[1:2] == ["--whatif"]:
        _run_whatif(float(sys.argv[2]), sys.argv[3])
    elif sys.argv[1:2] == ["--rows"]:
        rows_report()
    else:
        for key, where in SOURCES.items():
            print(f"{key:9s} {where}")
        for part in ("mla", "mla_impl", "layer", "moe"):
            print(f"{part:9s} {part_calls(part):3d} calls a layer")
        print(
            f"dense MLP {DENSE_MLP:3d}; one eager prefill step of Kimi K2.5 (61 layers, 1 dense): {step_calls()} calls"
            f" = {step_calls() * 24e-6 * 1e3:.0f} ms at TensorRT-LLM's 24 us a call (fit/trt_prompt_graphs)"
        )
