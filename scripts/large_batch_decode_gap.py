"""DeepSeek-R1 attention-DP decode at >= 128 sequences per rank: the model's step against three independent
published sources, and how much of the gap a prompt prefilled on one rank could carry (issue 18; diagnosis only).

Evidence (measured step = the decoding sequences per rank over the per-GPU output rate, or the mean TPOT; no MTP):

- TensorRT-LLM's "How to get best performance on DeepSeek-R1 in TensorRT-LLM" (docs/source/blogs/
  Best_perf_practice_on_DeepSeek-R1_in_TensorRT-LLM.md, NVIDIA/TensorRT-LLM, 2025), "max-throughput" runs:
  B200 NVFP4, attention DP 8 + EP 8, max_batch_size 384 per rank, concurrency 3072, ISL 1K / OSL 2K from a real
  dataset, max_num_tokens 1536: 11.7967 tok/s/user, 17.5825 req/s; H200 FP8, DP 8 + EP 8, 128 per rank,
  concurrency 1024, max_num_tokens 1127: 10.4899 tok/s/user, 5.1942 req/s. Neither config sets
  attention_dp_config (no context balancing).
- MLPerf Inference v5.1 DeepSeek-R1 (data/validation/mlperf_points.csv; engines fit/mlperf.MLPERF_ENGINES and
  MLPERF_LIMIT_ENGINES): NVIDIA B200 Offline (512 per rank, 33,379 output tok/s; the step includes the run's drain,
  an upper bound), NVIDIA B200 Server (mean TPOT 66.46 ms at ~155 decoding per rank by Little's law), HPE H200
  Offline (216 per rank). Contexts: the datasets' output-weighted resident mean (Workload.decode_ctx, ~4.8 k).

For each it prints the measured step and the model's (cost/step.step_cost at the trtllm@1.2.0rc2 profile):
``decode`` — the decode-only step; ``even`` — the step with the prompts arriving per step spread over the ranks,
as serve/analytic prices an attention-DP instance (cost/ops.build_step_ops divides prefill tokens by DP);
``hot`` — a prompt is prefilled whole on one rank (TensorRT-LLM gives each new request to one attention-DP rank;
without attention_dp_config.enable_balance nothing holds it for the others), and every MoE layer's collective makes
the other ranks wait for that rank: the step is priced with every rank carrying one mean prompt, less the routed
experts' extra time (the experts see the instance's true tokens), in the share q = 1 − exp(−prompts per step) of
steps that carry a prompt (Poisson arrivals; the rest decode only).

Two corrections from the MLPerf submissions' own configs (inference_results_v5.1 @965182b
closed/{NVIDIA,HPE}/configs/*/{Offline,Server}/deepseek-r1.py, read in round 19, mla19):

- ``slots`` vs ``resident``: an Offline row's sequences per rank are its ``gpu_batch_size`` slots only while the KV
  pool holds them; the pool is ``kvcache_free_gpu_mem_frac`` of the memory free after load (fit/mlperf
  MLPERF_ENGINES ``kv_free_fraction``; deploy/memory_fit.free_fraction_as_memory_fraction), and at the row's
  resident context the resident count is min(slots, KV capacity) (deploy/kv_capacity.kv_capacity_seqs). HPE's H200
  (FP8 weights, fraction 0.6) holds ~122 of its 216 slots, so its measured step is ~122 over the per-GPU rate,
  not 216 (serving already caps it so: only this script assumed full slots). B200 (FP4, 0.9) holds all 512.
- ``padded``: the configs set ``cuda_graph_batch_sizes: [128, 256, 384, 512]`` with ``cuda_graph_padding_enabled``;
  TensorRT-LLM's PyTorch executor (tensorrt_llm/_torch/pyexecutor/cuda_graph_runner.py ``_get_padded_batch``)
  all-gathers the attention-DP ranks' batch sizes, takes the largest, rounds it up to the next captured size and
  fills the rank's batch with dummy generation requests (``add_dummy_requests(..., is_gen=True)``: one token of
  context each). The column prices the decode-only step at the padded batch (dummy rows add rows, not context);
  None where the source states no graph sizes (the blog rows).

Reading: ``decode`` and ``even`` are 1.5-2.2x faster than measured on every source; the hot rank carries part of
the B200 and H200 blog gaps and little of MLPerf's (whose configs enable attention-DP balancing:
``adp_balancing_enable``, so the hot rank does not apply there); graph padding carries ~5 ms of the B200 Server
row's ~38 ms gap (155 -> 256 per rank) and under 1 ms of H200 Offline's (122 -> 128); a term that grows with the sequences per rank remains
(docs/gap_large_batch_decode.md). Nothing is modelled or written.
Run: python scripts/large_batch_decode_gap.py   (about twenty seconds)
"""

from __future__ import annotations

import math

from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.memory_fit import free_fraction_as_memory_fraction
from jalapeno.deploy.kv_capacity import kv_capacity_seqs
from jalapeno.fit.mlperf import MLPERF_ENGINES, load_mlperf
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.formats import get_precision

STACK = "trtllm@1.2.0rc2"
#: (label, system, precision, sequences per rank, mean context, mean ISL, prompts per step (instance),
#: measured step s) of the two blog runs (module docstring; contexts ISL + OSL/2 of fixed 1K/2K lengths)
BLOG = [
    ("blog B200 fp4 DEP8 384/rank", "b200", "fp4", 384, 1024 + 2048 / 2, 1024, 17.5825 / 11.7967, 1 / 11.7967),
    ("blog H200 fp8 DEP8 128/rank", "h200", "fp8", 128, 1024 + 2048 / 2, 1024, 5.1942 / 10.4899, 1 / 10.4899),
]
#: MLPerf rows: result id -> (label, sequences per rank) (Offline: the engine's slots; Server: Little's law)
MLPERF = {
    "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Offline": ("MLPerf B200 Offline 512/rank", 512),
    "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server": ("MLPerf B200 Server ~155/rank", None),
    "mlperf51_HPE_HPE_Cray_XD670_H200_SXM_141GBx8_TRT_deepseek-r1_Offline": ("MLPerf H200 Offline 216 slots", 216),
}
DP = 8
#: the MLPerf DeepSeek-R1 configs' ``cuda_graph_batch_sizes`` (padding enabled; module docstring)
MLPERF_GRAPHS = (128, 256, 384, 512)


def padded_batch(per_rank: float, graphs: tuple[int, ...] | None) -> float:
    """The rank's decode batch as TensorRT-LLM runs it: rounded up to the smallest captured graph size
    (``cuda_graph_runner._round_up_batch_size``); unchanged beyond the largest (eager) or with no graphs.

    >>> padded_batch(154.5, MLPERF_GRAPHS), padded_batch(512, MLPERF_GRAPHS), padded_batch(600, MLPERF_GRAPHS)
    (256, 512, 600)
    """
    if not graphs:
        return per_rank
    return next((g for g in sorted(graphs) if g >= per_rank), per_rank)


def resident_per_rank(result_id: str, system: str, prec: str, slots: int, ctx: float) -> float:
    """Sequences per rank an Offline engine holds: min(slots, its KV pool's capacity at ``ctx``) (docstring)."""
    eng = MLPERF_ENGINES[result_id]
    model, sysm, lay, p = load_model("deepseek-r1"), load_system(system), Layout(dp=DP, ep=DP), get_precision(prec)
    frac = free_fraction_as_memory_fraction(eng.kv_free_fraction, model, sysm, lay, p, eng.tokens_per_step, slots)
    cap = kv_capacity_seqs(
        model,
        sysm,
        lay,
        p,
        ctx,
        eng.tokens_per_step * DP,
        load_pricer(system, stack=STACK).efficiency,
        memory_fraction=frac,
    )
    return min(float(slots), float(cap) / DP)


def mlperf_cases() -> list[tuple]:
    """The MLPerf rows as BLOG-style tuples: the step and prompts per step from the measured rate."""
    pts, _ = load_mlperf(server_mapping="frontier@limits")
    out = []
    for p in pts:
        if p.id not in MLPERF:
            continue
        label, per_rank = MLPERF[p.id]
        wl = p.workload
        out_rate = p.measured["throughput_per_chip"] * wl.mean_osl / (wl.mean_isl + wl.mean_osl)  # output tok/s/chip
        prec = "fp4" if "B200" in p.id else "fp8"
        if per_rank is None:  # Server: Little's law on the decode
            step = p.measured["tpot_s"]
            per_rank = out_rate * step
        else:  # Offline: the slots the KV pool holds at the resident context
            per_rank = resident_per_rank(p.id, p.system, prec, per_rank, wl.decode_ctx)
            step = per_rank / out_rate
        prompts = out_rate * DP / wl.mean_osl * step
        out.append((label, p.system, prec, per_rank, wl.decode_ctx, wl.mean_isl, prompts, step))
    return out


def model_steps(system, prec, per_rank, ctx, isl, prompts, graphs=None) -> dict:
    """decode, even, hot and padded steps (module docstring), s."""
    model, pr = load_model("deepseek-r1"), load_pricer(system, stack=STACK)
    lay = Layout(dp=DP, ep=DP)
    b, pad = per_rank * DP, padded_batch(per_rank, graphs) * DP
    # padded rows: dummy generation requests of one context token each (the real rows' context unchanged)
    batches = Batch.make(
        decode_seqs=[b, b, b, pad],
        decode_ctx=[ctx, ctx, ctx, (b * ctx + (pad - b)) / pad],
        prefill_tokens=[0.0, prompts * isl, DP * isl, 0.0],
        prefill_seqs=[0.0, prompts, DP, 0.0],
    )
    sc = step_cost(model, pr, lay, get_precision(prec), batches)

    def experts(i: int) -> float:
        return sum(r["time_s"] for r in sc.op_rows(i) if r["op"] == "moe.experts")

    decode, even, all_hot = (float(sc.step_time_s[i]) for i in range(3))
    hot_step = all_hot - (experts(2) - experts(1))
    q = 1 - math.exp(-prompts)
    padded = float(sc.step_time_s[3]) if graphs else None
    return {"decode": decode, "even": even, "hot": (1 - q) * decode + q * hot_step, "q": q, "padded": padded}


def main() -> None:
    print(
        f"{'case':32s} {'seqs/rank':>9s} {'ctx':>6s} {'prompts/step':>12s} {'measured ms':>11s} "
        f"{'decode':>7s} {'even':>7s} {'hot':>7s} {'padded':>7s} {'measured/even':>13s} {'measured/hot':>12s}"
    )
    for label, system, prec, per_rank, ctx, isl, prompts, step in BLOG + mlperf_cases():
        graphs = MLPERF_GRAPHS if label.startswith("MLPerf") else None
        m = model_steps(system, prec, per_rank, ctx, isl, prompts, graphs)
        pad = "-" if m["padded"] is None else f"{m['padded'] * 1e3:.1f}"
        print(
            f"{label:32s} {per_rank:9.0f} {ctx:6.0f} {prompts:12.2f} {step * 1e3:11.1f} {m['decode'] * 1e3:7.1f} "
            f"{m['even'] * 1e3:7.1f} {m['hot'] * 1e3:7.1f} {pad:>7s} {step / m['even']:13.2f} {step / m['hot']:12.2f}"
        )


if __name__ == "__main__":
    main()
