"""Host calls of one eager prompt-carrying step of TensorRT-LLM's PyTorch backend, by layer architecture.

TensorRT-LLM replays CUDA graphs for generation-only batches; a step that carries a prompt runs eagerly unless the
launch script turns on piecewise CUDA graphs (``torch_compile_config.enable_piecewise_cuda_graph``, off by default:
TensorRT-LLM docs/source/features/torch_compile_and_piecewise_cuda_graph.md; serve/limits.py cites
``can_run_cuda_graph``). Eagerly the host makes every call into torch itself and runs ahead of the GPU (no call on the
counted paths waits for it), so the step costs max(host, GPU) with host = calls × the engine's seconds per call
(``Deployment.eager_prompt_call_s``; serve/limits.prompt_floor_s).

A "host call" is one call from Python into torch: an ATen op (views, splits, allocations included), a
``torch.ops.trtllm`` op, a CUDA event record / wait, a stream switch, a ``torch.compile``'d helper called eagerly.
Counted per decoder layer by round 26 (eager26; scripts/trt_eager_host_calls.CALLS holds every row with what it is)
from NVIDIA/TensorRT-LLM ``tensorrt_llm/_torch``, at the commits the source index stored (newer than the rows'
1.2.0rc6; the layer structure is the same in the 2025 and 2026 files read):

- ``modules/attention.py`` @00547a25 ``MLA.forward``, ``forward_impl``, ``forward_context_default``,
  ``forward_absorption_generation``; ``Attention.forward``, ``_attn_impl``;
- ``models/modeling_deepseekv3.py`` @000561df ``DeepseekV3DecoderLayer.forward_MoE`` / ``forward_mlp``,
  ``Deepseekv3MoE.forward``, ``DeepseekV3Gate.forward``;
- ``modules/fused_moe/fused_moe_trtllm_gen.py`` @026946f0 ``forward_impl``, ``run_moe`` (the TRTLLM MoE backend);
- ``models/modeling_llama.py`` ``LlamaDecoderLayer.forward``; ``models/modeling_gpt_oss.py`` @050b6cb9
  ``TransformerBlock.forward_normal``, ``MLPBlock.forward_normal``.

Keyed by the architecture the model spec states (attention kind, MoE or dense MLP, shared experts), not by model name.
MLA runs its context path and, in a step that also carries decoding requests (mixed), its absorption path too
(``MLA.forward_impl`` branches on ``num_contexts`` and ``num_generations``); a GQA layer's one attention call serves
both. Layers of another attention kind, and MoE layers on a backend not in :data:`COUNTED_MOE_BACKENDS`, have no
count: :func:`step_host_calls` returns None and no floor is applied. The TRITON MoE path (Hopper gpt-oss-style layers,
round 27, h200ttft27) was counted in TensorRT-LLM ``modules/fused_moe/fused_moe_triton.py`` @00131d71 and the
triton_kernels it calls (triton-lang/triton ``python/triton_kernels/triton_kernels``), see :data:`TRITON_MOE`.
"""

from __future__ import annotations

from jalapeno.specs.model import ModelSpec

#: MLA attention, calls per layer: the context path (two two-stream overlaps of 6 event/stream calls each, 8 slices
#: and views, ``empty_like`` + a compiled copy to build K, the attention op inside ``trtllm::mla_custom_op_inplace``)
#: and the absorption (generation) path a mixed step adds (cu_*/scheduler and FP8-KV scale buffers, the k_b BMM and
#: ``mla_rope_generation`` on two streams, the v_b BMM). attention.py @00547a25.
MLA_CONTEXT = 37
MLA_ABSORPTION = 33
#: DeepSeek MoE layer after MLA (routed ‖ shared experts on two streams, router GEMM, NVFP4 quantize + scale views +
#: the fused TRTLLM MoE runner, the shared expert's GatedMLP, the fused all-reduce + norms); modeling_deepseekv3.py
#: @000561df, fused_moe_trtllm_gen.py @026946f0.
MLA_MOE_SHARED = 23
#: DeepSeek dense MLP layer after MLA (fused all-reduce + RMSNorm + quantize, GatedMLP, fused all-reduce + norm).
MLA_DENSE = 6
#: A whole GQA layer with a dense gated MLP (LlamaDecoderLayer.forward: norms, quantize + QKV GEMM, attention, o_proj
#: + all-reduce, GatedMLP with its quantizes and all-reduce).
GQA_DENSE = 14
#: A whole GQA layer with a routed MoE and no shared expert (gpt-oss TransformerBlock.forward_normal: QKV GEMM,
#: attention with sinks, o_proj, all-reduce + norm, router GEMM, quantize + the TRTLLM-gen MXFP4 MoE runner, views,
#: all-reduce + next norm).
GQA_MOE = 16
#: Extra calls a DeepSeek-style MoE layer (MLA + routed and shared experts) makes under attention DP (dp > 1) on the
#: TRTLLM MoE path, over :data:`MLA_MOE_SHARED` (round 37, gbttft37). ``modules/fused_moe/fused_moe_trtllm_gen.py``
#: @026946f0 TRTLLMGenFusedMoE.forward_impl: with ``use_dp`` and ``parallel_size > 1`` (``post_quant_comm``) the
#: routing runs before the collective instead of inside the runner — ``routing_method.apply`` → ``modules/fused_moe/
#: routing.py`` Deepseekv3RoutingImpl.apply: ``torch.ops.trtllm.noaux_tc_op`` and two casts (3), then
#: ``token_selected_experts.to(int32)`` and ``token_final_scales.to(bfloat16)`` (2) — the post-quant allgather of
#: [x, x_sf, selected experts, scales] along dim 0 (``distributed/ops.py`` @0071496d ``_allgather`` of a list: per
#: tensor ``.contiguous()`` and ``.view``, one ``torch.ops.trtllm.allgather_list``, per output ``.view``: 4 + 4 + 1 + 4
#: = 13) and the reduce-scatter of the output (``.contiguous()``, ``.view``, the op, ``.view``: 4). The quantize and
#: the runner's calls are those the TP path makes; the decoder layer's fused all-reduce + norm calls become plain
#: residual norms, one for one. This is the path where the engine gathers (the layout's EP group beyond one NVLink
#: domain, experts split, or a release before 1.2.0rc3 at EP <= top-k: cost/moe_exchange.moe_all_to_all_on); where it
#: runs the all-to-all, :data:`ADP_MOE_A2A_EXTRA`. CUTLASS and WIDEEP under attention DP were not read and keep the TP
#: count (a lower bound, as before).
ADP_MOE_EXTRA = 3 + 2 + 13 + 4
#: The same layer's extra calls where forward_impl runs the all-to-all (round 37 review, read at the same @026946f0):
#: ``select_alltoall_method_type`` picks AlltoallMethodType.NVLinkOneSided whenever attention DP runs with whole
#: experts per rank and ``MnnvlMemory.supports_mnnvl()`` (every NVLink up: HGX B200 as well as GB200/GB300; the
#: top-k condition was dropped by PR #8950 before 1.2.0rc3, so the rows' 1.2.0rc6 runs it; the TensorRT-LLM engine
#: profiles' ``moe_exchange = "nvlink_all_to_all"`` prices the same exchange). Calls: the routing and its two casts as
#: above (3 + 2), ``token_final_scales.to(float32)`` (1), ``MoeAlltoAll.dispatch`` (``distributed/moe_alltoall.py``
#: stored @02126b0b, newer: ``torch.ops.trtllm.moe_a2a_dispatch`` and, with the invalid expert id TRTLLM-gen needs,
#: ``moe_a2a_sanitize_expert_ids``: 2; the watchdog is off by default), the received tensors' four ``.view`` and the
#: scales' ``.to(bfloat16)`` (5), the output's ``.view`` and ``moe_a2a_combine`` (2); no reduce-scatter
#: (``MoE.reducescatter_or_allreduce`` skips it under the all-to-all). ASSUMED: the rows' release makes the same calls
#: (its dispatch read at a newer version; ConfigurableMoE's wrapper, where it runs, not read). Both counts take the
#: routing as DeepSeek-R1's fused ``noaux_tc_op`` (n_group 8, 32 experts a group: routing.py @0f3e29af and an older
#: stored version agree); Kimi-K2.5 (n_group = topk_group = 1, 384 experts) takes the fused op in the older stored
#: routing.py and the unfused PyTorch short path (``get_scores``, topk, gather, type_as, sum, add, divide, scale: 8
#: calls, not 1) in @0f3e29af, so its count is a lower bound by up to 7 (model specs do not carry n_group).
ADP_MOE_A2A_EXTRA = 3 + 2 + 1 + 2 + 5 + 2
#: MoE backends whose attention-DP path :data:`ADP_MOE_EXTRA` counts (None = the recipe names none: the TRTLLM path,
#: as :data:`COUNTED_MOE_BACKENDS` takes it)
ADP_COUNTED_MOE_BACKENDS = (None, "trtllm")
#: Extra calls of one MTP drafting pass beyond one MoE decoder layer (DeepseekV3MTP.forward: the embedding and
#: hidden norms, the concat, eh_proj); the speculative worker's sampling and acceptance code is not counted.
MTP_EXTRA = 4
#: The MoE part of :data:`GQA_MOE` on the TRTLLM path (quantize the input + scale view, the MXFP4 MoE runner, output
#: slice + contiguous; fused_moe_trtllm_gen.py forward_impl / run_moe): what the TRITON path replaces.
GQA_MOE_TRTLLM_PART = 5
#: Where the TRITON MoE path was read (round 27, h200ttft27): TensorRT-LLM (NVIDIA/TensorRT-LLM) and OpenAI's
#: triton_kernels (triton-lang/triton ``python/triton_kernels/triton_kernels``), at the commits the source index stored.
TRITON_SOURCES = {
    "apply": "tensorrt_llm/_torch/modules/fused_moe/fused_moe_triton.py @00131d71 TritonMXFP4FusedMoEMethod.apply "
    "(W4A16: bf16 activations) and TritonEPRouter.__call__ (ep = 1, sm_first False)",
    "topk": "triton_kernels/topk.py @02ed6565 topk_forward, make_empty",
    "route": "triton_kernels/routing.py @04467ccf SortTokens.forward, empty_aligned, ExptData.token_offs_pad / "
    "block_pid_map",
    "mm": "triton_kernels/matmul_ogs.py @02adf8fd matmul_ogs, apply_allocation, _canonicalize_storage, reduce_grouped",
}
#: Every host call of the MoE part of a gpt-oss-style layer on the TRITON backend, one entry per call: (source key of
#: :data:`TRITON_SOURCES`, the call). Counted by eager26's definition (an ATen op, views, slices and allocations
#: included; a custom op or kernel launch, a Triton launch among them); NOT counted, as no ATen op: tensor metadata
#: (``.shape``, ``.stride()``, ``.numel()``, ``untyped_storage()``), ``torch.autograd.Function.apply`` and
#: ``save_for_backward``, ``torch.cuda.get_device_capability``, the Python of ``make_opt_flags`` and the dataclasses.
#: ASSUMPTIONS (not read): ``Bitmatrix.sum`` makes one allocation and one launch; ``InFlexData.reinterpret`` is a
#: no-op for the default (unscaled) flex data; the routing metadata's per-block-size rows are one index view each
#: (routing.py's ExptData, the layout TensorRT-LLM's ``rdata`` carries; matmul_ogs @02adf8fd reads them through a
#: newer RaggedTensorMetadata); gpt-oss-120b's hidden size 2,880 is padded (a multiple of 64, not of 128), so the
#: output slice runs. The triton_kernels files stored are newer than the rows' release (TensorRT-LLM unpacks three
#: values from ``routing_from_bitmatrix``, the stored one returns four), so this counts the path's structure.
TRITON_MOE_CALLS = (
    ("apply", "torch.nn.functional.pad of the activations (_maybe_pad_activation)"),
    ("topk", "torch.empty y_vals"),
    ("topk", "torch.empty y_indx"),
    ("topk", "torch.empty bitmatrix"),
    ("topk", "torch.transpose of the bitmatrix"),
    ("topk", "bitmatrix [:n_rows_max] slice"),
    ("topk", "_topk_forward launch"),
    ("route", "bitmatrix.sum: its partials allocation (ASSUMED)"),
    ("route", "bitmatrix.sum: its launch (ASSUMED)"),
    ("route", "hist[:n_expts_tot] slice"),
    ("route", "torch.empty expt_offs"),
    ("route", "torch.empty combined_indx"),
    ("route", "torch.empty gate_scal"),
    ("route", "empty_aligned token_offs_combined: torch.empty"),
    ("route", "empty_aligned token_offs_combined: slice"),
    ("route", "empty_aligned block_pid_map: torch.empty"),
    ("route", "empty_aligned block_pid_map: slice"),
    ("route", "combined_indx[:n_gates_pad]"),
    ("route", "combined_indx[n_gates_pad:]"),
    ("route", "token_offs_combined[0]"),
    ("route", "token_offs_combined[1:]"),
    ("route", "_combined_routing_memset launch"),
    ("route", "_combined_routing_compute launch"),
    # gemm1: the gather and the fused SwiGLU, no scatter (no scratchpad)
    ("mm", "gemm1 w_scale.data.view(torch.uint8)"),
    ("mm", "gemm1 torch.empty output (apply_allocation)"),
    ("mm", "gemm1 output[None, :, :]"),
    ("mm", "gemm1 token_offs_pad(block_m) view (ASSUMED one)"),
    ("mm", "gemm1 block_pid_map(block_m) view (ASSUMED one)"),
    ("mm", "gemm1 out_matmul.view"),
    ("mm", "gemm1 as_strided x"),
    ("mm", "gemm1 as_strided w"),
    ("mm", "gemm1 as_strided y"),
    ("mm", "gemm1 gather_indx.src_indx // n_expts_act"),
    ("mm", "gemm1 _matmul_ogs launch"),
    ("mm", "gemm1 memory['output'].squeeze(0)"),
    ("mm", "gemm1 reduce_grouped: x.squeeze(0) (no index)"),
    ("mm", "gemm1 out_final.squeeze(0)"),
    # gemm2: the scatter with the gate scales (a scratchpad and the grouped reduction)
    ("mm", "gemm2 w_scale.data.view(torch.uint8)"),
    ("mm", "gemm2 torch.empty output"),
    ("mm", "gemm2 output[None]"),
    ("mm", "gemm2 torch.empty scratchpad['matmul']"),
    ("mm", "gemm2 token_offs_pad(block_m) view (ASSUMED one)"),
    ("mm", "gemm2 block_pid_map(block_m) view (ASSUMED one)"),
    ("mm", "gemm2 out_matmul.view"),
    ("mm", "gemm2 as_strided x"),
    ("mm", "gemm2 as_strided w"),
    ("mm", "gemm2 as_strided y"),
    ("mm", "gemm2 _matmul_ogs launch"),
    ("mm", "gemm2 torch.arange group_indx"),
    ("mm", "gemm2 group_indx.view"),
    ("mm", "gemm2 memory['output'].squeeze(0)"),
    ("mm", "gemm2 _reduce_grouped launch"),
    ("mm", "gemm2 out_final.squeeze(0)"),
    ("apply", "gemm2_output[:, :hidden_size] (_maybe_remove_padding)"),
)
#: The MoE part of a gpt-oss-style layer on the TRITON backend, W4A16 MXFP4 on Hopper: pad 1, topk 6, routing 16,
#: gemm1 14, gemm2 16, output slice 1 = 54 (:data:`TRITON_MOE_CALLS`).
TRITON_MOE = len(TRITON_MOE_CALLS)
#: MoE backends priced with these counts (specs/moe_backends names; None = the recipe names none): TRTLLM's path was
#: counted; CUTLASS's (fused_moe_cutlass.py: quantize, the fused MoE op, its scale views; the Hopper FP8 default,
#: fit/aic_row_engine.ROW_MOE_BACKENDS) was NOT read and is ASSUMED to make as many calls (the MoE part is 23 of a mixed
#: DeepSeek layer's 93; MLA's 70 dominate). WIDEEP (fused_moe_wide_ep.py: the MLPerf v5.1 DeepSeek-R1 engines,
#: fit/mlperf_engines.py) was NOT read either and is ASSUMED to make as many (round 27, hostiter27; it adds an
#: all-to-all dispatch and combine around the same quantize and grouped GEMMs, so 23 is a lower bound). TRITON's
#: (H200 gpt-oss-120b; round 27, h200ttft27) is counted for GQA layers without shared experts only
#: (:data:`TRITON_MOE`; TritonFusedMoE.can_implement takes gpt-oss-style layers on SM90 only).
COUNTED_MOE_BACKENDS = (None, "trtllm", "cutlass", "wideep", "triton")
#: Where the TP- and EP-dependent calls of a gpt-oss-style layer were read (round 28, triton28's count, wired by ep28):
#: NVIDIA/TensorRT-LLM ``tensorrt_llm/_torch`` and triton-lang/triton ``python/triton_kernels``, at the commits the
#: source index stored (scripts/trt_tp_host_calls.TP_CALLS lists the same calls).
TP_EP_SOURCES = {
    "block": "models/modeling_gpt_oss.py @050b6cb9 TransformerBlock.forward: forward_tp when mapping.has_tp() and "
    "no attention DP, else forward_normal",
    "norm": "modules/rms_norm.py @0419019a RMSNorm.forward: one flashinfer_fused_add_rmsnorm with a residual",
    "allreduce": "distributed/ops.py @0071496d AllReduce.forward: input.contiguous() + "
    "torch.ops.trtllm.tunable_allreduce (RESIDUAL_RMS_NORM fused in; the 2025 versions stored make the "
    "one torch.ops.trtllm.allreduce call)",
    "ep": "modules/fused_moe/fused_moe_triton.py @00131d71 TritonEPRouter.__call__ -> prune_routing_ep when ep > 1",
    "compaction": "triton_kernels/compaction.py @27db8db5 compaction",
    "attn_dp": "models/modeling_gpt_oss.py @050b6cb9 MLPBlock.forward_attn_dp: allgather(t, dim=0) of the MoE input "
    "for a TritonFusedMoE when mapping.tp_size > 1; modules/fused_moe/fused_moe_triton.py @00131d71 "
    "TritonFusedMoE.forward_impl -> MoE.reducescatter_or_allreduce: reducescatter(dim=0) under use_dp",
    "collective": "distributed/ops.py @0071496d _allgather / reducescatter of one tensor along dim 0: "
    "input.contiguous(), .view(-1, numel_base), the torch.ops.trtllm op, the output's .view",
}
#: The calls of one gpt-oss-style layer that depend on the layout, one entry per call: (source key of
#: :data:`TP_EP_SOURCES`, the call, when). ``when``: "tp1" forward_normal (one attention-TP rank, or attention DP),
#: "tp>1" forward_tp, "ep>1 triton" the TRITON path's EP router with MoE EP > 1, "dp>1 triton" the TRITON MoE's
#: attention-DP collectives (TransformerBlock runs forward_normal, but MLPBlock runs forward_attn_dp: the MoE input is
#: all-gathered over the attention-DP ranks and the MoE output reduce-scattered back). The attention's and the MoE's own
#: all-reduces are off in forward_tp (``reduce_output=False``, ``reduce_results=False``): the two fused all-reduce +
#: norm calls replace the two norms one for one. Not ATen calls, not counted: ``AllReduceParams(...)``, the strategy /
#: MNNVL / symmetric-memory checks, tensor metadata. Release: the all-reduce is two calls in the newest source
#: (@0071496d) and one in the 2025 versions stored; a deployment does not carry its release, so every release is
#: priced at the newest count (ASSUMPTION; a 2025 image such as gpt-oss-dev makes 2 calls a layer fewer at TP > 1,
#: 36 layers × 2 × 24 µs = 1.7 ms a gpt-oss-120b step).
TP_EP_CALLS = (
    ("norm", "post_attention_layernorm (fused residual add)", "tp1"),
    ("norm", "next_layer_layernorm (fused residual add)", "tp1"),
    ("allreduce", "post_attention all-reduce: input.contiguous()", "tp>1"),
    ("allreduce", "post_attention all-reduce + RMSNorm: tunable_allreduce", "tp>1"),
    ("allreduce", "next-layer all-reduce: input.contiguous()", "tp>1"),
    ("allreduce", "next-layer all-reduce + RMSNorm: tunable_allreduce", "tp>1"),
    ("ep", "_routing_shift_bitmatrix_range launch", "ep>1 triton"),
    ("ep", "_routing_clear_bitmatrix launch", "ep>1 triton"),
    ("compaction", "torch.empty_like ret_yv", "ep>1 triton"),
    ("compaction", "torch.empty_like ret_yi", "ep>1 triton"),
    ("compaction", "_masked_compaction launch", "ep>1 triton"),
    ("attn_dp", "allgather of the MoE input: input.contiguous()", "dp>1 triton"),
    ("collective", "allgather: .view(-1, numel_base)", "dp>1 triton"),
    ("collective", "allgather: torch.ops.trtllm.allgather", "dp>1 triton"),
    ("collective", "allgather: output .view", "dp>1 triton"),
    ("attn_dp", "reducescatter of the MoE output: input.contiguous()", "dp>1 triton"),
    ("collective", "reducescatter: .view(-1, numel_base)", "dp>1 triton"),
    ("collective", "reducescatter: torch.ops.trtllm.reducescatter", "dp>1 triton"),
    ("collective", "reducescatter: output .view", "dp>1 triton"),
)
#: The layout-dependent part :data:`GQA_MOE` holds (eager26 counted forward_tp: two all-reduce + norm calls of 2 each).
GQA_MOE_TP_PART = 4


def tp_ep_calls(tp: int, dp: int, ep: int, moe_backend: str | None) -> int:
    """The layout-dependent host calls of one gpt-oss-style layer (:data:`TP_EP_CALLS`): attention TP ``tp`` and
    DP ``dp`` (forward_tp needs tp > 1 and no attention DP), MoE EP ``ep`` on ``moe_backend``.

    >>> tp_ep_calls(1, 1, 1, "triton"), tp_ep_calls(8, 1, 1, "triton"), tp_ep_calls(8, 1, 8, "triton")
    (2, 4, 9)
    >>> tp_ep_calls(8, 1, 8, "trtllm"), tp_ep_calls(1, 8, 8, "triton")  # attention DP: 2 norms + 5 EP + 8 collective
    (4, 15)
    """
    triton = moe_backend == "triton"
    on = {
        "tp1": not (tp > 1 and dp == 1),
        "tp>1": tp > 1 and dp == 1,
        "ep>1 triton": ep > 1 and triton,
        "dp>1 triton": dp > 1 and triton,
    }
    return sum(on[when] for _, _, when in TP_EP_CALLS)


def layer_host_calls(
    model: ModelSpec,
    moe_layer: bool,
    mixed: bool,
    moe_backend: str | None = None,
    layout: tuple[int, int, int] | None = None,
    all_to_all: bool = False,
) -> int | None:
    """Host calls of one decoder layer of an eager prompt step; None where the architecture was not counted.
    ``layout``: (attention TP, attention DP, MoE EP); a gpt-oss-style MoE layer (GQA, no shared expert) then takes
    its layout-dependent calls from :func:`tp_ep_calls` in place of :data:`GQA_MOE_TP_PART`; None (or another
    architecture, whose counts were read at TP > 1 only) keeps the TP > 1 count, and so does attention DP (dp > 1) on
    a backend other than TRITON: its MoE then takes the backend's attention-DP path, counted for a DeepSeek-style
    MoE layer on the TRTLLM path (:data:`ADP_MOE_EXTRA` more calls: the routing, casts, post-quant allgather and
    reduce-scatter of TRTLLMGenFusedMoE.forward_impl; :data:`ADP_MOE_A2A_EXTRA` with ``all_to_all``, where the engine
    exchanges the tokens by its NVLink all-to-all, cost/priced.moe_all_to_all) and not read elsewhere, where the TP > 1
    count stands in for it as a lower bound (ASSUMPTION).

    >>> from jalapeno.specs.catalog import load_model
    >>> layer_host_calls(load_model("deepseek-r1"), True, True), layer_host_calls(load_model("deepseek-r1"), False, False)
    (93, 43)
    >>> ds = load_model("deepseek-r1")  # attention DP4, EP4: + 22 on the TRTLLM path; dense layers and CUTLASS as TP
    >>> [layer_host_calls(ds, True, False, b, (1, 4, 4)) for b in (None, "trtllm", "cutlass")], layer_host_calls(ds, False, False, None, (1, 4, 4))
    ([82, 82, 60], 43)
    >>> layer_host_calls(ds, True, False, None, (1, 4, 4), all_to_all=True)  # 37 + 23 + 15 (the all-to-all path)
    75
    >>> gptoss = load_model("gpt-oss-120b")
    >>> layer_host_calls(gptoss, True, True, "triton"), layer_host_calls(gptoss, True, True, "triton", (1, 1, 1))
    (65, 63)
    >>> layer_host_calls(gptoss, True, True, "triton", (8, 1, 8)), layer_host_calls(gptoss, True, True, None, (8, 1, 8))
    (70, 16)
    >>> layer_host_calls(gptoss, True, True, "triton", (1, 4, 4)), layer_host_calls(gptoss, True, True, None, (1, 4, 4))
    (76, 16)
    """
    kind = model.attention.kind
    gqa_moe = kind in ("gqa", "mha") and model.moe is not None and model.moe.num_shared == 0
    if moe_layer and gqa_moe and layout is not None and (layout[1] == 1 or moe_backend == "triton"):
        tp, dp, ep = layout
        base = GQA_MOE - GQA_MOE_TP_PART + tp_ep_calls(tp, dp, ep, moe_backend)
        return base - GQA_MOE_TRTLLM_PART + TRITON_MOE if moe_backend == "triton" else base
    if moe_layer and moe_backend == "triton":
        return GQA_MOE - GQA_MOE_TRTLLM_PART + TRITON_MOE if gqa_moe else None
    if kind == "mla":
        attn = MLA_CONTEXT + (MLA_ABSORPTION if mixed else 0)
        if not moe_layer:
            return attn + MLA_DENSE
        if model.moe is None or model.moe.num_shared == 0:
            return None
        adp = layout is not None and layout[1] > 1 and moe_backend in ADP_COUNTED_MOE_BACKENDS
        return attn + MLA_MOE_SHARED + ((ADP_MOE_A2A_EXTRA if all_to_all else ADP_MOE_EXTRA) if adp else 0)
    if kind in ("gqa", "mha"):
        if not moe_layer:
            return GQA_DENSE
        return GQA_MOE if model.moe is not None and model.moe.num_shared == 0 else None
    return None


def step_host_calls(
    model: ModelSpec,
    mixed: bool,
    mtp_passes: int = 0,
    moe_backend: str | None = None,
    layout: tuple[int, int, int] | None = None,
    all_to_all: bool = False,
) -> int | None:
    """Host calls of one eager prompt step through every decoder layer (the embedding, final norm and LM head, a
    handful, left out); ``mixed``: the step also carries decoding requests; ``mtp_passes``: MTP drafting passes (each
    one MoE layer plus :data:`MTP_EXTRA`); ``layout``: (attention TP, attention DP, MoE EP) and ``all_to_all`` (the
    engine's MoE exchange on that layout), see :func:`layer_host_calls`. None: a layer kind or the MoE backend was not
    counted.

    Hand counts (eager26): DeepSeek-R1 (3 dense + 58 MoE layers) 3·(37 + 6) + 58·(37 + 23) = 3,609 context only,
    3·(70 + 6) + 58·(70 + 23) = 5,622 mixed; Llama-3.3-70B 80·14 = 1,120; gpt-oss-120b 36·16 = 576, on the TRITON
    MoE path (h200ttft27) 36·(16 − 5 + 54) = 2,340; DeepSeek-R1 under attention DP on the TRTLLM MoE path 58·22 more
    (:data:`ADP_MOE_EXTRA`): 4,885 / 6,898; 58·15 more where it runs the all-to-all (:data:`ADP_MOE_A2A_EXTRA`):
    4,479 / 6,492.

    >>> from jalapeno.specs.catalog import load_model
    >>> step_host_calls(load_model("deepseek-r1"), False), step_host_calls(load_model("deepseek-r1"), True)
    (3609, 5622)
    >>> step_host_calls(load_model("llama-3.3-70b"), True), step_host_calls(load_model("gpt-oss-120b"), True)
    (1120, 576)
    >>> step_host_calls(load_model("gpt-oss-120b"), True, moe_backend="triton")
    2340
    >>> step_host_calls(load_model("deepseek-r1"), True, moe_backend="triton") is None
    True
    >>> step_host_calls(load_model("gpt-oss-120b"), True, moe_backend="triton", layout=(4, 1, 4))  # 36·(65 − 4 + 9)
    2520
    >>> step_host_calls(load_model("deepseek-r1"), False, layout=(1, 2, 2))  # 3,609 + 58·22 (attention DP)
    4885
    >>> step_host_calls(load_model("deepseek-r1"), False, layout=(1, 2, 2), all_to_all=True)  # 3,609 + 58·15
    4479
    """
    moe_idx = set(range(model.num_layers)) - set(model.dense_layers) if model.moe is not None else set()
    if moe_idx and moe_backend not in COUNTED_MOE_BACKENDS:
        return None
    dense_n, moe_n = model.num_layers - len(moe_idx), len(moe_idx)
    dense = layer_host_calls(model, False, mixed) if dense_n else 0
    moe = layer_host_calls(model, True, mixed, moe_backend, layout, all_to_all) if moe_n else 0
    if dense is None or moe is None:
        return None
    return int(dense_n * dense + moe_n * moe + (mtp_passes * (moe + MTP_EXTRA) if moe_n else 0))
