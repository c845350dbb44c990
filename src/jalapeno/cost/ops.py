"""Ops and collectives of one forward step on one chip, for N batch points at once.

Counts follow the model config, the layout (deploy/layout.py conventions) and the precision:
- GEMM: 2·rows·k·n FLOPs, k·n stored weights (format of the module), rows·(k·b_in + 2·n)
  activation bytes; b_in = 1 when the GEMM runs in FP8/FP4 (quantised activations) else 2.
- Dense FFN (SwiGLU): gate+up [h → 2·I/tp], down [I/tp → h], TP over the attention TP group.
- MoE: router [h → E] (BF16; FP32 on the chip's vector units where the engines run it so,
  ``MoESpec.router_fp32``, and the chip gives ``fp32_vector_tflops``); shared expert like a dense FFN; routed experts: the busiest EP
  rank's assignments (cost/moe.py; its popularity share from deploy/eplb.py: the model's routing
  skew and the layout's placement, EPLB or contiguous) through 3 grouped GEMMs, reading only the
  experts it touches,
  split ``moe_tp`` ways inside each expert, plus ``Efficiency.moe_token_passes`` BF16 passes over
  the hidden vectors its MoE kernels take in (routing, permute, finalize; calibrated per input
  vector): the ones the busiest rank receives when an all-to-all dispatches them (attention DP with
  EP; :func:`dispatch_copies`), else the whole group's tokens.
- Per layer elementwise work (2 RMSNorms, 2 residual adds, activation quantisation): about
  10 bf16 vectors of h per token (an estimate); none at the steps where the engine fuses them into
  the TP all-reduces (``Efficiency.allreduce_rms_fusion``, vLLM's ``fuse_allreduce_rms``: cost/allreduce_rms.py).
- Collectives: attention-TP all-reduce of the o_proj output; dense-FFN all-reduce (with
  ``Efficiency.gemm_allreduce_fusion`` both fused into their GEMM, o_proj and down, and exposed only
  beyond it: :func:`gemm_allreduce_stages`); MoE: with
  attention DP an all-to-all dispatch (FP8 when the experts compute in FP8/FP4, as DeepEP
  does; NVFP4 for FP4 experts under ``all_to_all_nvfp4``) and a BF16 combine over the stage's chips, sized by the busiest rank's share of the
  assignments (the all-to-all waits for the rank that receives most), else one all-reduce over
  TP; LM-head logits all-gather over TP (``Efficiency.logits_bytes_per_elem`` per element, the
  engine's: BF16 in vLLM/SGLang/TensorRT-LLM, which cast to FP32 after the gather); PP
  activation send/recv between stages; with context parallelism the ring KV exchange of
  attention (cost/attention.py). With attention DP and EP = 1 (experts tensor-parallel over the
  whole stage) the MoE layer all-gathers the stage's tokens and reduce-scatters the outputs
  instead of the all-to-all, and so does an engine that runs no all-to-all for the layout's EP
  group on the system (``all_to_all`` False: TensorRT-LLM beyond one NVLink domain, SGLang's
  ``nvfp4_all_gather`` pools; cost/moe_exchange.moe_all_to_all_on): every rank gathers the stage's
  tokens (BF16: the FP8 block-scale MoE quantises inside its kernel; NVFP4 for FP4 experts under a
  gathering exchange, which quantises before the gather), routes and computes its experts' share of
  all of them, and the outputs are reduce-scattered back (BF16).
- Context parallelism (cp > 1, prefill only): every CP rank is a replica of the stage's tp·dp
  chips holding 1/cp of each prompt's tokens, so every linear op (GEMMs, MoE, elementwise) runs
  on the rank's tokens with the full per-rank weights (each CP rank reads the weights) and the
  stage's collectives stay inside the rank's tp·dp group.

The routed-expert op and the all-to-all's message sizes are cost/expert_ops.py's, the waves of a GEMM fused with
its all-reduce cost/gemm_allreduce.py's (split from here in round 53).
"""

from __future__ import annotations

import math

import numpy as np

from jalapeno.cost.adp_rank import busiest_rank_decode, busiest_rank_prefill
from jalapeno.cost.allreduce_rms import fused_steps
from jalapeno.cost.attention import RankBatch, add_gqa_ops, add_mla_ops, mla_decode_padding
from jalapeno.cost.expert_ops import (  # noqa: F401 (re-exported: split from here, round 53)
    add_routed_experts,
    dispatch_bytes_per_elem,
    dispatch_copies,
)
from jalapeno.cost.gemm_allreduce import GEMM_AR_TILES, _fused, gemm_allreduce_stages  # noqa: F401 (re-exported)
from jalapeno.cost.layout_columns import LayoutColumns
from jalapeno.cost.moe import busiest_rank_assignments, experts_touched_on_rank, mixed_touched_fraction
from jalapeno.cost.optable import MOE_WEIGHT_KEYS, CollectiveTable, OpBuilder, OpTable
from jalapeno.cost.shared_fusion import fuses_shared_expert, stack_base
from jalapeno.deploy.eplb import busiest_rank_share
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.sharding import has_ep_all_to_all, sharding
from jalapeno.deploy.memory_fit import ROUTER_BYTES
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.efficiency_params import NVFP4_GATHER_EXCHANGES
from jalapeno.specs.formats import FORMATS, NumberFormat, Precision, resolve_compute_format
from jalapeno.specs.fp4_checkpoint import O_PROJ_MODULE, checkpoint_precision
from jalapeno.specs.hardware import Chip
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.w4a16_moe import w4a16_key

#: Bytes per hidden element of an FP32 gate's input (``MoESpec.router_fp32``): the FP32 copy of the hidden state
#: written (4) and read by the GEMM (4). Assumption: the cast (``hidden_states.to(torch.float32)``) fuses into
#: the kernel of the RMSNorm before it (vLLM compiles the model with torch.compile/Inductor), so it adds no
#: launch and no second read of the BF16 input. Its weights are FP32 (4 bytes).
ROUTER_FP32_INPUT_BYTES = 8.0

#: bf16 vectors of h touched per token per layer by norms, residuals and quantisation (estimate).
ELEMENTWISE_VECTORS_PER_LAYER = 10.0
#: Kernels launched before each linear-layer GEMM on weights of these stored formats, run at FP4, to
#: quantise its BF16 activations: NVFP4 activations carry an FP8 scale per 16 elements computed from
#: the tensor itself (TensorRT-LLM's NVFP4 linear calls ``fp4_quantize``, vLLM's ModelOpt NVFP4 linear
#: ``scaled_fp4_quant``, each before the FP4 GEMM). Their bytes are in ``layer.elementwise``; the kernel
#: adds a launch (``kernel_launch_s``) per GEMM. The aiconfigurator ``nvfp4`` GEMM tables time the GEMM
#: alone, so the kernel fits (fit/kernels.py) do not count it. Routed experts quantise inside their MoE
#: kernels (not counted here); MXFP4 (AMD's W4A4) is left as it was: no e2e evidence either way.
ACT_QUANT_KERNELS = {"nvfp4": 1.0}
#: Kernels launched before each linear-layer GEMM on 128x128 block-scaled FP8 weights run in FP8 (``gemm[fp8_block]``)
#: to quantise its BF16 activations per token and 128-column group. Source: TensorRT-LLM
#: ``_torch/modules/linear.py`` ``FP8BlockScalesLinearMethod.apply``: on SM100 ``fp8_swap_ab_gemm`` runs
#: ``fp8_utils.per_token_quant_and_transform`` and then ``deep_gemm.fp8_gemm_nt``; on SM90
#: ``fp8_quantize_1x128`` then ``fp8_block_scaling_gemm`` (two kernels a linear either way), while a BF16 linear
#: is one GEMM. Routed experts quantise inside their MoE block (not counted here).
FP8_BLOCK_ACT_QUANT_KERNELS = 1.0
#: Shipped OFF (round 47, fp4layers47; docs/gap_aic_itl.md "FP8 block-scale activation quantiser"): charging
#: the quantiser moves every FP8 DeepSeek / Qwen row of every engine, and without a refit of the stacks' per-kernel
#: fixed cost it worsens the shared figures; see scripts/fp8_act_quant47.py for the what-if.
FP8_BLOCK_ACT_QUANT_ON = False
#: TensorRT-LLM's min-latency fused-A GEMM hides the MoE all-reduce before it (:func:`fused_a_cover`; round 49,
#: gb300tpot49). Shipped OFF: alone it moves only BF16-attention MLA rows (the NVFP4 DeepSeek-R1 checkpoint under
#: specs/fp4_checkpoint.FP4_CHECKPOINT_FORMATS_ON, Kimi K2.5); the pair's held-out figures are in
#: docs/gap_fp4_fp8_decode.md §6; with the stacks refitted on the pair (round 50, fp4pair50) it still fails: §7.
FUSED_A_PREFETCH_ON = False
#: tokens a rank up to which TensorRT-LLM runs its fused-A kernel (``DeepseekV3Linear.apply_linear``: 1 <= num_tokens <= 16)
FUSED_A_MAX_TOKENS = 16


def act_quant_kernels(weight: NumberFormat, fmt: str) -> float:
    """Activation-quantiser kernels launched before one linear-layer GEMM on ``weight`` run in ``fmt``: NVFP4
    weights in FP4 (:data:`ACT_QUANT_KERNELS`), and, with :data:`FP8_BLOCK_ACT_QUANT_ON`, 128x128 block-scaled
    FP8 weights in FP8 (:data:`FP8_BLOCK_ACT_QUANT_KERNELS`); 0 for every other pair (BF16, per-tensor FP8).

    >>> from jalapeno.specs.formats import FORMATS
    >>> act_quant_kernels(FORMATS["nvfp4"], "fp4"), act_quant_kernels(FORMATS["fp8"], "fp8")
    (1.0, 0.0)
    """
    q = ACT_QUANT_KERNELS.get(weight.name, 0.0) if fmt == "fp4" else 0.0
    if FP8_BLOCK_ACT_QUANT_ON and weight.gemm_key(fmt) == "fp8_block":
        q += FP8_BLOCK_ACT_QUANT_KERNELS
    return q


def build_step_ops(
    model: ModelSpec,
    chip: Chip,
    layout: Layout,
    precision: Precision,
    batch,
    eff: Efficiency,
    query_len: int = 1,
    all_to_all: bool = True,
    cols: LayoutColumns | None = None,
) -> tuple[OpTable, CollectiveTable]:
    """Op and collective tables of one step for one chip of the heaviest stage.

    Args:
        batch: a :class:`jalapeno.cost.batch.Batch` (arrays of shape (N,) for the whole instance).
        eff: the efficiency set; the op table reads only what the implementation does (MoE
            load skew and token passes), never a time.
        query_len: rows per decoding sequence (1, or 1 + drafts for an MTP verify step).
        all_to_all: the engine runs an MoE all-to-all where the layout has one (attention DP with
            EP); False: all-gather + reduce-scatter instead (module docstring).
        cols: the batch's columns under several layouts of the same rows as ``layout``
            (cost/layout_columns.py: attention DP, EP, EPLB and the stage's chips per column; a collective
            over the stage then has an (N,) int group); None: every column under ``layout``.

    Returns:
        (OpTable, CollectiveTable) with arrays (rows, N).
    """
    precision = checkpoint_precision(model.name, precision)  # the FP4 checkpoint's own formats, when on
    dp, tp, cp = layout.dp, layout.tp, layout.cp
    # per column where the layouts vary by column (the branches below read ``layout``: the same for every column)
    dpc, epc = (dp, layout.ep) if cols is None else (cols.dp, cols.ep)
    stage = layout.stage_chips if cols is None else cols.stage_chips
    # the busiest attention-DP rank's whole prompts and its decoding sequences (cost/adp_rank.py)
    busy_tokens, busy_seqs = busiest_rank_prefill(batch.prefill_tokens, batch.prefill_seqs, dpc, layout.dp_dispatch)
    busy_decode = busiest_rank_decode(batch.decode_seqs, dpc, layout.dp_dispatch)
    rb = RankBatch(
        decode_rows=batch.decode_seqs * query_len / dpc if layout.dp_dispatch != "random" else busy_decode * query_len,
        decode_seqs=busy_decode,
        decode_ctx=batch.decode_ctx,
        prefill_tokens=busy_tokens / cp,
        prefill_seqs=busy_seqs,
        prefill_ctx=batch.prefill_ctx,
        cp=cp,
    )
    t = rb.tokens  # the busiest rank's: its rank-local work (attention, dense FFN, shared experts, norms)
    h = model.hidden_size
    ob = OpBuilder(t.shape[0])
    sh = sharding(model, layout)
    share = sh.layer_share
    n_dense = model.num_dense_layers * share
    n_moe = model.num_moe_layers * share
    n_layers = model.num_layers * share

    def mod(m: str) -> tuple[float, str, float]:
        mp = precision.modules[m]
        fmt = precision.compute_for(mp.compute, chip.formats, f"the {m}")
        return mp.weight.bytes_per_elem, fmt, 1.0 if fmt in ("fp8", "fp4") else 2.0

    def key(m: str, fmt: str) -> str:  # the GEMM kernel its weights run (fp8_block: block-scaled FP8)
        return precision.modules[m].weight.gemm_key(fmt)

    def kernels(m: str, fmt: str) -> float:  # the GEMM and its activation quantiser (act_quant_kernels)
        return 1.0 + act_quant_kernels(precision.modules[m].weight, fmt)

    attn_fmt = precision.compute_for(precision.attention_compute, chip.formats, "the attention math")
    kv = precision.kv_cache
    wb, wf, ain = mod("attention")
    o_proj = None  # the output projection's own format where the precision stores it apart (specs/fp4_checkpoint)
    if O_PROJ_MODULE in precision.modules:
        ob_, of_, oa_ = mod(O_PROJ_MODULE)
        o_proj = (ob_, of_, oa_, key(O_PROJ_MODULE, of_), kernels(O_PROJ_MODULE, of_))
    if model.attention.kind == "mla":
        a = model.attention
        # a BF16 query over an 8-bit latent cache runs the set's padded generation kernel (gfx942: aiter's qh16 x 4)
        tile = eff.mla_decode_tile_rows if attn_fmt == "bf16" and kv.element_bits == 8 else None
        add_mla_ops(
            ob,
            model,
            rb,
            tp,
            n_layers,
            wb,
            wf,
            attn_fmt,
            kv.mla_token_bytes(a.kv_lora_rank, a.qk_rope_dim),
            ain,
            index_fmt=resolve_compute_format("fp8", chip.formats),
            cp_group=layout.cp_span,
            w_key=key("attention", wf),
            w_kernels=kernels("attention", wf),
            decode_padding=mla_decode_padding(a.num_heads / tp, query_len, tile),
            o_proj=o_proj,
        )
    else:
        add_gqa_ops(
            ob,
            model,
            rb,
            tp,
            share,
            wb,
            wf,
            attn_fmt,
            kv.vector_bytes(model.attention.head_dim),
            ain,
            cp_group=layout.cp_span,
            w_key=key("attention", wf),
            w_kernels=kernels("attention", wf),
        )
    if model.attention.qk_norm_tp:
        _add_layer_qk_norm(ob, model, t, tp, n_layers)
    # TensorRT-LLM's gemm_allreduce_plugin: the row-parallel GEMM and its all-reduce run fused
    fuse = eff.gemm_allreduce_fusion and tp > 1
    ob.collective(
        "attn.all_reduce",
        "all_reduce",
        tp,
        t * h * 2,
        count=n_layers,
        **(_fused("attn.o_proj", t, h, chip) if fuse else {}),
    )
    # vLLM's fuse_allreduce_rms: both add + RMSNorm kernels run inside the all-reduces (cost/allreduce_rms.py)
    elementwise = t * h * 2 * ELEMENTWISE_VECTORS_PER_LAYER
    if eff.allreduce_rms_fusion and tp > 1 and dp == 1:
        fused = fused_steps(t, chip, tp, h, eff.allreduce_rms_rule, model.model_type)
        elementwise = np.where(fused, 0.0, elementwise)
    ob.op("layer.elementwise", "memory", "bf16", act=elementwise, kernels=2, count=n_layers)

    if n_dense:
        wb, wf, ain = mod("dense_ffn")
        inter = model.dense_intermediate / tp
        _ffn(ob, "dense_ffn", wf, t, h, inter, wb, ain, n_dense, key("dense_ffn", wf), kernels("dense_ffn", wf))
        ob.collective(
            "dense_ffn.all_reduce",
            "all_reduce",
            tp,
            t * h * 2,
            count=n_dense,
            **(_fused("dense_ffn.down", t, h, chip) if fuse else {}),
        )

    if model.moe and n_moe:
        m = model.moe
        if m.router_fp32 and chip.fp32_vector_flop_per_s:  # FP32 gate on the vector units, its input cast first
            ob.gemm("moe.router", "fp32", t, h, m.num_experts, 4.0, ROUTER_FP32_INPUT_BYTES, count=n_moe, kernels=2)
        else:
            ob.gemm("moe.router", "bf16", t, h, m.num_experts, ROUTER_BYTES, 2.0, count=n_moe, kernels=2)
        # SGLang runs DeepSeek-V3/R1's shared expert as a 257th routed expert (cost/shared_fusion.py; off by default)
        fused = bool(m.shared_intermediate) and fuses_shared_expert(
            stack_base(eff.source),
            chip.formats,
            m.num_experts,
            m.shared_intermediate / m.expert_intermediate,
            layout.ep,
            has_ep_all_to_all(model, layout) and all_to_all,
        )
        if m.shared_intermediate and not fused:
            wb, wf, ain = mod("shared_experts")
            _ffn(
                ob,
                "moe.shared_expert",
                wf,
                t,
                h,
                m.shared_intermediate / tp,
                wb,
                ain,
                n_moe,
                key("shared_experts", wf),
                kernels("shared_experts", wf),
            )
        wb, wf, ain = mod("routed_experts")
        # unique tokens over the stage (replicated inside a TP group), every rank's
        tokens_in_group = batch.decode_seqs * query_len + batch.prefill_tokens / cp
        # CUDA-graph padding dummies (Batch.pad_routing; docs/model.md, graph padding): masked ones route
        # nowhere and are not dispatched; one_token ones all pick one top-k set; routed ones are tokens
        mode = batch.pad_routing if (batch.pad_routing != "masked" or layout.ep > 1) else "routed"
        pad_rows = np.asarray(batch.pad_seqs) * query_len if mode != "routed" else np.zeros_like(tokens_in_group)
        routed = tokens_in_group - pad_rows  # tokens routed independently
        # prompt tokens route with routing_sigma, generated ones (decode rows, drafts) with
        # decode_routing_sigma (specs/routing.py): mixed by the step's generated share φ of its tokens
        mixed = m.decode_routing_sigma != m.routing_sigma
        share = (
            busiest_rank_share(m.num_experts, m.routing_sigma, layout.ep, layout.eplb) if cols is None else cols.share
        )
        if mixed:
            phi = np.where(routed > 0, (batch.decode_seqs * query_len - pad_rows) / np.maximum(routed, 1e-12), 0.0)
            share = (
                phi
                * (
                    busiest_rank_share(m.num_experts, m.decode_routing_sigma, layout.ep, layout.eplb)
                    if cols is None
                    else cols.share_decode
                )
                + (1.0 - phi) * share
            )
        tail = None if cols is None else cols.tail
        experts_here = sh.experts_per_rank if cols is None else cols.experts_per_rank
        # the identical dummies' picks count as one more token for the experts touched
        load = busiest_rank_assignments(routed, m.top_k, layout.ep, eff.moe_load_skew, share, tail)
        cover = (
            load
            if mode != "one_token"
            else busiest_rank_assignments(
                routed + np.where(pad_rows > 0, 1.0, 0.0), m.top_k, layout.ep, eff.moe_load_skew, share, tail
            )
        )
        if mode == "one_token":  # the ranks holding the dummies' k experts: a mean rank plus every dummy's row
            per_dummy = math.ceil(m.top_k / layout.ep) if cols is None else cols.ceil_k_ep
            load = np.maximum(load, routed * m.top_k / epc + pad_rows * per_dummy)
        if mixed:  # the rank's assignments as tokens' worth of traffic, as experts_touched_on_rank reads them
            teq = cover * epc / m.top_k
            touched = experts_here * mixed_touched_fraction(
                phi * teq, (1.0 - phi) * teq, m.num_experts, m.top_k, m.decode_routing_sigma, m.routing_sigma
            )
        else:
            touched = experts_touched_on_rank(cover, experts_here, m.num_experts, m.top_k, epc, m.routing_sigma)
        inter = m.expert_intermediate / sh.moe_tp
        w_expert = model.expert_params() / sh.moe_tp
        # routing/permute/finalize passes over the token vectors the rank's MoE kernels take in (the
        # fitted moe[f].token_passes are per input vector: the kernel tables feed every rank the whole
        # group's tokens): with attention DP and an all-to-all, the vectors the busiest rank receives
        # (dispatch_copies: a decode token once per selected expert, a prefill token once per rank);
        # otherwise every token of the group, which each rank holds (TP) or gathers
        a2a = has_ep_all_to_all(model, layout) and all_to_all
        if a2a:
            # the busiest receiver sets the all-to-all time: its load over the mean rank's
            # (masked dummies are not sent: only the routed rows and the one_token dummies travel)
            sent_rows = tokens_in_group - (pad_rows if mode == "masked" else 0.0)
            hot = np.where(sent_rows > 0, load * epc / np.maximum(sent_rows * m.top_k, 1e-9), 1.0)
            dec_rows = rb.decode_rows - (pad_rows / dpc if mode == "masked" else 0.0)
            ranks = None if cols is None else cols.ranks
            copies = dispatch_copies(dec_rows, batch.prefill_tokens / (dpc * cp), m.top_k, layout.ep, ranks)
            per_chip_vectors = copies / tp * hot  # received by the busiest EP rank
            # the exchange also waits for the rank that sends most: the busiest attention rank's tokens
            sent = dispatch_copies(dec_rows, rb.prefill_tokens, m.top_k, layout.ep, ranks) / tp
            link_vectors = np.maximum(per_chip_vectors, sent)
        scanned = per_chip_vectors if a2a else tokens_in_group
        stored = precision.modules["routed_experts"].weight.name
        # the passes of the entry the op is priced by (moe[fp8_block] for block-scaled FP8 experts where set)
        # W4A16 experts keyed to their own moe entry where the set has one (specs/w4a16_moe.py, shipped on, round 41)
        weights = stored if stored in MOE_WEIGHT_KEYS else w4a16_key(stored, eff)
        scan = scanned * h * 2.0 * eff.moe_passes(eff.moe_entry(wf, weights or wf))
        if fused:  # every routed token also picks the shared expert, held by the rank (EP 1): one more expert touched
            load, touched = load + routed, touched + np.where(routed > 0, 1.0, 0.0)
        add_routed_experts(
            ob,
            "moe.experts",
            wf,
            load,
            touched,
            h,
            inter,
            w_expert,
            wb,
            ain,
            scan,
            n_moe,
            weights=weights,
            split=sh.moe_tp,
        )
        if a2a:
            disp_b = (
                FORMATS["nvfp4"].bytes_per_elem
                if eff.moe_exchange == "all_to_all_nvfp4" and wf == "fp4"
                else dispatch_bytes_per_elem(wf)
            )  # SGLANG_MOE_NVFP4_DISPATCH (specs/efficiency_params)
            ob.collective("moe.dispatch", "all_to_all", stage, link_vectors * h * disp_b, count=n_moe)
            ob.collective("moe.combine", "all_to_all", stage, link_vectors * h * 2, count=n_moe)
            ob.collective("moe.shared_all_reduce", "all_reduce", tp, t * h * 2, count=n_moe)
        elif dp > 1:  # gather every token of the stage, scatter the outputs back
            # TensorRT-LLM gathers NVFP4 activations already quantised (4 bits + an FP8 scale per
            # 16: fused_moe_cutlass.py quantize_input before allgather), and so does SGLang's
            # nvfp4_all_gather path (moe/utils.py should_use_flashinfer_cutlass_moe_fp4_allgather); BF16 otherwise
            ag_b = (
                FORMATS["nvfp4"].bytes_per_elem if eff.moe_exchange in NVFP4_GATHER_EXCHANGES and wf == "fp4" else 2.0
            )
            ob.collective("moe.all_gather", "all_gather", stage, tokens_in_group * h * ag_b, count=n_moe)
            ob.collective("moe.reduce_scatter", "reduce_scatter", stage, tokens_in_group * h * 2, count=n_moe)
        else:
            ob.collective(
                "moe.all_reduce",
                "all_reduce",
                tp,
                t * h * 2,
                count=n_moe,
                **fused_a_cover(eff, model, precision, tp, dp, t),
            )

    # Edge ops (once per step): embedding lookup on the first stage, LM head on the last.
    ob.op("embedding", "memory", "bf16", act=t * h * (precision.weight_bytes("embedding") + 2), per_stage=False)
    sampled = rb.decode_rows + np.where(rb.prefill_tokens > 0, rb.prefill_seqs, 0.0)
    wb, wf, ain = mod("lm_head")
    ob.gemm(
        "lm_head", wf, sampled, h, model.vocab_size / tp, wb, ain, per_stage=False, kernels=2, key=key("lm_head", wf)
    )
    ob.collective(
        "lm_head.all_gather", "all_gather", tp, sampled * model.vocab_size * eff.logits_bytes_per_elem, per_stage=False
    )
    if layout.pp > 1:
        ob.collective("pp.send_recv", "send_recv", 2 * layout.cp_span, t * h * 2, count=1, per_stage=False)
    return ob.build()


def _add_layer_qk_norm(ob: OpBuilder, model: ModelSpec, t, tp: int, n_layers: float) -> None:
    """MiniMax-M2's per-layer q/k RMSNorm (``qk_norm_type`` per_layer), as vLLM runs it
    (``MiniMaxText01RMSNormTP.forward_qk``): each rank's q and k slices are cast to fp32 and their
    mean squares taken, the (tokens, 2) fp32 partial variances are all-reduced over the TP group, then
    q and k are scaled. Priced as one memory pass that reads and writes the rank's q and k in BF16
    twice (before and after the all-reduce; two kernels) and one all-reduce of 8 bytes per token.
    A per-head norm (Qwen3) needs no exchange and stays inside the layer's elementwise passes."""
    a = model.attention
    qk = (a.num_heads + a.num_kv_heads) * a.head_dim / tp
    ob.op("attn.qk_norm", "memory", "bf16", act=t * qk * 2 * 2 * 2, kernels=2, count=n_layers)
    ob.collective("attn.qk_norm_all_reduce", "all_reduce", tp, t * 2 * 4, count=n_layers)


def fused_a_cover(eff: Efficiency, model: ModelSpec, precision: Precision, tp: int, dp: int, rows) -> dict:
    """``OpBuilder.collective`` arguments that hide the MoE all-reduce under the next layer's fused q_a + kv_a GEMM
    where the engine runs it in its prefetching kernel: :data:`FUSED_A_PREFETCH_ON`, ``eff.fused_a_prefetch`` (the
    TensorRT-LLM profiles; sources in data/stacks.toml), an MLA model with a q LoRA (the fused-A projection), BF16
    attention weights (``precision`` as the step reads it: specs/fp4_checkpoint's copy where that is on), attention TP
    > 1 without attention DP (the all-reduce it overlaps), and 1 <= ``rows`` <= :data:`FUSED_A_MAX_TOKENS` tokens a rank
    (per column; ``hidden_stages`` 1 elsewhere: cost/overlap.exposed_coll_s then exposes the whole all-reduce).
    The step pays max(all-reduce, fused-A GEMM) for the pair; {} where any condition fails.

    ``rows``: (N,) tokens a rank.
    """
    a = model.attention
    if not (FUSED_A_PREFETCH_ON and eff.fused_a_prefetch) or a.kind != "mla" or not a.q_lora_rank or tp < 2 or dp > 1:
        return {}
    if precision.modules["attention"].weight.name != "bf16":
        return {}
    rows = np.asarray(rows, dtype=float)
    return {
        "hidden_under": "attn.qkv_a_proj",
        "hidden_stages": np.where((rows >= 1) & (rows <= FUSED_A_MAX_TOKENS), np.inf, 1.0),
    }


def _ffn(
    ob: OpBuilder,
    name: str,
    fmt: str,
    t,
    h: int,
    inter: float,
    wb: float,
    ain: float,
    count: float,
    key: str = "",
    kernels: float = 1.0,
) -> None:
    ob.gemm(f"{name}.gate_up", fmt, t, h, 2 * inter, wb, ain, count=count, key=key, kernels=kernels)
    ob.op(f"{name}.act", "memory", "bf16", act=t * inter * 2 * 3, count=count)
    ob.gemm(f"{name}.down", fmt, t, inter, h, wb, ain, count=count, key=key, kernels=kernels)
