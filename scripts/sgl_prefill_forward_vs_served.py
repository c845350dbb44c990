"""SGLang's GB200/GB300 disaggregated prefill: the model's forward step against SGLang's published forward-only rate and the served plateau (issue 18).

Round 26 (scripts/aic_gb_disagg_ttft_sign.py) measured the SGLang prefill pools of the aiconfigurator GB200/GB300
DeepSeek-R1 rows plateauing at 10.3-13.3k prompt tokens/s per GPU, flat across FP4/FP8, GB200/GB300, 1k/8k, where
the model's pool gives 13-26k. This asks whether the model's *forward step* is what is too fast. It prices, with
the rows' own stack and pricer (cost/step.step_cost, one full prefill step, every rank carrying ``per_rank``
tokens of whole prompts), the step a prefill worker runs:

* at the configuration of SGLang's own published GB200 prefill figure — LMSYS, "Deploying DeepSeek on GB200 NVL72
  with PD and Large Scale EP (Part II)", 2025-09-25: 26,156 input tokens/s per GPU at 2,000-token prompts, FP8
  attention and NVFP4 MoE (18,471 with BF16 attention and FP8 MoE). Its reproduction scripts
  (github.com/shifangx/Scripts-SGLang, ``launch_server_in_docker_fp4.sh`` @0583525d) run the prefill worker at DEP8
  (tp = dp = ep = 8, enable-dp-attention), ``--max-prefill-tokens 16384`` (per DP rank), ``--chunked-prefill-size
  65536``, ``--moe-runner-backend flashinfer_cutlass``, ``--enable-single-batch-overlap``, ``--max-total-tokens
  131072``, ``--disable-cuda-graph``; its README ("calculate throughput") reads a rate as the tokens of one full
  forward step over that step's time in a torch profile, per GPU: a forward-only rate, not a served one;
* at the InferenceX recipes the rows ran (NVIDIA/srt-slurm @5063eb43 ``recipes/gb200-fp4/1k1k/mid-curve.yaml``,
  ``recipes/gb300-fp4/1k1k/mid_curve.yaml``: DEP4, ``flashinfer_cutlass``, max-prefill-tokens 32768, chunked-prefill-size
  65536 = 16,384 a rank, single-batch overlap — the same flags as LMSYS's but dp; ``recipes/gb200-fp8/1k1k/max-tpt.yaml``,
  ``recipes/gb300-fp8/1k1k/stp/mid.yaml``: DEP8, ``moe-a2a-backend deepep``, ``deepep-mode normal``,
  chunked-prefill-size 131072 = 16,384 a rank) at 16,384 tokens a rank, and at 2,048 / 1,024 a rank (the 8,192
  default budget the model prices these rows at, split over dp 4 / 8);

beside the measured plateaus of round 26 (:data:`SERVED`, quoted from docs/gap_aic_ttft.md, not recomputed), and
the host time a served token costs outside the forward under two readings (:func:`host_per_token_us`), with the
NIXL descriptors SGLang's KV sender posts a token (:func:`descriptors_per_token`) to turn it into a time a
descriptor. It also prints the DeepEP normal-mode traffic a token costs (:func:`deepep_bytes_per_token`) at the FP8
plateau.

A diagnosis: nothing is fitted, no shipped value changes.
Run: python scripts/sgl_prefill_forward_vs_served.py (about a minute)
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

#: SGLang's published GB200 prefill rate, input tokens/s per GPU (LMSYS GB200 Part II, 2025-09-25; 2,000-token
#: prompts; FP8 attention + NVFP4 MoE, and BF16 attention + FP8 MoE)
LMSYS_FP4, LMSYS_FP8 = 26156.0, 18471.0
#: the measured plateau of the served prefill pools, prompt tokens/s per prefill GPU, keyed (system, precision,
#: nominal ISL, attention-DP size) (round 26, docs/gap_aic_ttft.md §"GB200/GB300 disaggregated: what makes the error
#: change sign"; DEP pools; counted at nominal ISL/OSL, about 5% above the rows' mean lengths)
SERVED = {
    ("gb200-nvl72", "fp4", 1024, 4): 11631.0,
    ("gb200-nvl72", "fp8", 1024, 8): 10340.0,
    ("gb300-nvl72", "fp4", 1024, 4): 11387.0,
    ("gb300-nvl72", "fp8", 1024, 8): 10543.0,
    ("gb200-nvl72", "fp4", 8192, 4): 13336.0,
    ("gb200-nvl72", "fp8", 8192, 8): 12974.0,
}
#: the same for TensorRT-LLM's FP4 DEP prefill pools on the same systems (round 26 table), for contrast
SERVED_TRT_FP4 = {"gb200-nvl72": 23732.0, "gb300-nvl72": 28633.0}
#: DeepEP's README intranode normal-kernel figure on H800 (NVLink bottleneck bandwidth, GB/s; dispatch 153, combine 158)
DEEPEP_H800_GBPS = 153.0


def deepep_bytes_per_token(
    hidden: int = 7168, experts: int = 256, top_k: int = 8, ep: int = 8, moe_layers: int = 58, block: int = 128
) -> float:
    """Bytes one prompt token sends to *other* ranks through DeepEP's normal dispatch and combine over a forward.

    DeepEP sends a token once to each rank holding one of its top-k experts (not once per expert): with
    ``experts / ep`` experts a rank and top-k drawn without replacement, the expected distinct ranks are
    ep · (1 − C(E − E/ep, k) / C(E, k)), of which (ep − 1)/ep are remote. Dispatch carries FP8 values plus one
    FP32 scale per ``block`` (hidden + 4·hidden/block bytes); combine carries BF16 (2·hidden). DeepSeek-R1: hidden
    7168, 256 routed experts, top-8, 58 MoE layers (config.json: first_k_dense_replace 3 of 61).

    >>> round(deepep_bytes_per_token() / 1e6, 2)  # DEP8: 5.29 ranks a token, 4.63 remote
    5.84
    """
    per_rank = experts // ep
    miss = math.comb(experts - per_rank, top_k) / math.comb(experts, top_k)
    remote = ep * (1.0 - miss) * (ep - 1) / ep
    return remote * ((hidden + 4 * hidden // block) + 2 * hidden) * moe_layers


def host_per_token_us(served: float, forward: float | None = None) -> float:
    """Time a served prompt token costs a prefill GPU outside the model's forward step, µs.

    Additive (the host work runs between forwards): 1/served − 1/forward; alone (the host work overlaps the
    forwards and binds: SGLang's overlap scheduler): 1/served.

    >>> round(host_per_token_us(11631.0, 29048.0), 1), round(host_per_token_us(11631.0), 1)
    (51.6, 86.0)
    """
    return 1e6 * (1.0 / served - (1.0 / forward if forward else 0.0))


def descriptors_per_token(layers: int = 61, page: int = 64) -> float:
    """NIXL transfer descriptors SGLang's prefill sender posts per prompt token when no two pages are contiguous.

    sgl-project/sglang ``python/sglang/srt/disaggregation/nixl/conn.py`` ``NixlKVManager.send_kvcache``: the
    request's page indices are grouped into runs contiguous on both sides (``group_concurrent_contiguous``) and
    one (address, length) descriptor is appended per KV buffer (one per layer for MLA) per run, then
    ``get_xfer_descs`` / ``initialize_xfer`` / ``transfer`` post them, called from the scheduler's
    ``send`` of the finished chunk. Page size: ``server_args.py`` sets 64 for ``attention-backend trtllm_mla``
    (the recipes' backend; "TensorRT-LLM MLA only supports page_size of 32 or 64, changing page_size ... to 64").
    Fully fragmented pools give layers / page descriptors a token; contiguous runs give fewer.

    >>> round(descriptors_per_token(), 3)
    0.953
    """
    return layers / page


def _point(points, system: str, prec: str, dp: int):
    """The first disaggregated SGLang DeepSeek-R1 row of ``system`` / ``prec`` with an attention-DP prefill pool."""
    from jalapeno.fit.validate import point_stack

    for p in points:
        if p.mode != "disagg" or p.system != system or p.deployment is None or p.deployment.prefill is None:
            continue
        st = point_stack(p)
        if (
            "sglang" in str(getattr(st, "name", st))
            and p.deployment.precision.name == prec
            and p.deployment.prefill.layout.dp > 1
        ):
            return p, st
    raise LookupError(f"no SGLang disaggregated {prec} row on {system}")


def forward_rate(p, st, dp: int, per_rank, isl: float) -> np.ndarray:
    """The model's prompt tokens/s per GPU of a full prefill step at DEP``dp``, ``per_rank`` tokens a rank of
    whole ``isl``-token prompts (no prefix), priced with the row's stack, pricer and pool backends."""
    from jalapeno.cost.batch import Batch
    from jalapeno.cost.pool_backends import with_pool_backends
    from jalapeno.cost.step import step_cost
    from jalapeno.deploy.deployment import pool_overlap
    from jalapeno.fit.entries import with_stack_mtp
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.specs.catalog import load_model

    dep = with_stack_mtp(p.deployment, st, p.model)
    lay = dataclasses.replace(dep.prefill.layout, dp=dp, ep=dp)
    model = load_model(p.model)
    pr = with_pool_backends(
        load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st),
        dep.prefill,
        model,
        lay,
        dep.precision.kv_cache.name,
    )
    toks = np.asarray(per_rank, dtype=float) * dp
    # a bare prefill forward on the widened layout (no MTP, memory fraction or engine profile): not pool_step_cost
    sc = step_cost(
        model,
        pr,
        lay,
        dep.precision,
        Batch.make(prefill_tokens=toks, prefill_seqs=toks / isl, prefill_ctx=np.zeros_like(toks)),
        overlap=pool_overlap(dep.overlap, model, lay),
    )
    return toks / sc.interval_s / dp


def main() -> None:
    from jalapeno.fit.validate import load_aiconfigurator

    points, _ = load_aiconfigurator()
    print("Model forward-only prefill rate, prompt tokens/s per GPU, against the published and served rates")
    p, st = _point(points, "gb200-nvl72", "fp4", 8)
    lm = float(forward_rate(p, st, 8, [16384], 2000.0)[0])
    print(
        f"  LMSYS config (GB200 FP4 MoE + FP8 attn, DEP8, 16,384 tokens a rank, 2,000-token prompts): model {lm:,.0f}"
        f"  published {LMSYS_FP4:,.0f}  model/published {lm / LMSYS_FP4:.2f}"
    )
    print(
        f"  {'system':12s} {'prec':4s} {'ISL':>5s} {'pool':5s} {'model @16384/rank':>18s} {'@8192 budget':>13s}"
        f" {'served':>8s} {'served/model':>13s} {'h additive us/tok':>18s} {'h alone us/tok':>15s}"
    )
    for (system, prec, isl, dp), served in SERVED.items():
        p, st = _point(points, system, prec, dp)
        mean_isl = 0.9 * isl  # the rows' prompts: random lengths in [0.8, 1.0] x ISL (fit/validate point_workload)
        big, shipped = forward_rate(p, st, dp, [16384, 8192 // dp], mean_isl)
        small = f"{shipped:13,.0f}" if isl <= 8192 // dp else f"{'(chunked)':>13s}"  # 8k prompts chunk at 2,048 / 1,024
        print(
            f"  {system:12s} {prec:4s} {isl:5d} DEP{dp:<2d} {big:18,.0f} {small} {served:8,.0f}"
            f" {served / big:13.2f} {host_per_token_us(served, big):18.1f} {host_per_token_us(served):15.1f}"
        )
    for system, served in SERVED_TRT_FP4.items():
        print(f"  (TensorRT-LLM FP4 DEP4 on {system}: served {served:,.0f}; round 26: model/served 1.21-1.35)")
    print(
        f"  SGLang's NIXL sender: {descriptors_per_token():.3f} transfer descriptors a prompt token "
        "(61 layers, 64-token pages, fragmented) -> h / that = the implied host time a descriptor"
    )
    b = deepep_bytes_per_token()
    for system in ("gb200-nvl72", "gb300-nvl72"):
        gbps = b * SERVED[(system, "fp8", 1024, 8)] / 1e9
        print(
            f"  DeepEP normal at the {system} FP8 DEP8 plateau: {b / 1e6:.2f} MB a token remote -> {gbps:.0f} GB/s a GPU "
            f"each way ({gbps / DEEPEP_H800_GBPS:.0%} of DeepEP's H800 intranode {DEEPEP_H800_GBPS:.0f} GB/s)"
        )


if __name__ == "__main__":
    main()
