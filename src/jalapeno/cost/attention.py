"""Attention ops of one step: MLA (DeepSeek/Kimi, with DSA for V3.2) and GQA/MHA (sliding, sinks).

Symbols (per chip): Td decode query rows (sequences x query length), b decode sequences,
L their context, Pr prefill tokens, Sr prefill sequences, C cached prefix per prefill sequence,
n = heads/TP, h hidden size, all per attention-DP rank.

MLA, decode (weight-absorbed; DeepSeek-V2 paper §2.1.2 and DESIGN.md §7): q_nope is projected
into the kv_lora latent (W_UK absorbed), scores and values are taken against the latent, then
W_UV maps back. Per layer: FLOPs 2·Td·n·(r + d_rope + r)·L with r = kv_lora_rank, while the
latent (r + d_rope values per token) is read once per sequence for all heads.
MLA, prefill (non-absorbed): K/V are up-projected from the latent for the new tokens and their
prefix (2·rows·r·n·(d_nope + d_v)), then causal attention: 2·n·(d_qk + d_v)·(C·Pr + Pr²/(2·Sr)).
DSA (DeepSeek-V3.2): an FP8 indexer scores all L cached keys (2·Td·H_idx·d_idx·L FLOPs, reads
L·(d_idx + 4) bytes per sequence), then attention reads only top-k = index_topk latents.
GQA: per layer KV read 2·kv_r·d·min(L, window) per sequence, FLOPs 2·Td·n·2d·min(L, window);
sinks add one logit per head (negligible FLOPs, counted in parameters).

Context parallelism (prefill, cp ranks; Liu et al. 2023 "Ring Attention", arXiv 2310.01889;
Megatron-LM context parallelism; SGLang prefill CP): each rank holds Pr = P/cp of the chunk's
tokens under load-balanced (zig-zag) sharding — the chunk is cut into 2·cp blocks and rank i
takes blocks i and 2·cp − 1 − i — so every rank's queries see on average C + P_seq/2 keys and a
rank does 1/cp of the causal pairs: pairs = Pr·(C + P_seq/2), P_seq = Pr·cp/Sr. Every rank's
queries attend to every block, so each rank reads the whole prefix and the other ranks' chunk
KV ((C·Sr + Pr·(cp − 1)) tokens) and, for MLA's non-absorbed prefill, up-projects them
(up rows Pr·cp + Sr·C). The KV exchange is a ring of cp − 1 send/recv steps per layer, each
carrying one rank's block ((Sr·C)/cp + Pr tokens of KV: MLA latent r + d_rope (+ indexer keys
d_idx + 4 bytes with DSA); GQA 2·kv_r·d, the prefix capped at the window on sliding layers), over
the link level the CP group spans; a step is hidden under the attention compute of the block it
overlaps (``hidden_under``), so only max(0, ring − attention) is exposed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from jalapeno.cost.decode_blocks import decode_blocks
from jalapeno.cost.optable import OpBuilder
from jalapeno.deploy.sharding import kv_heads_per_rank
from jalapeno.specs.model import ModelSpec


@dataclass(frozen=True, slots=True)
class RankBatch:
    """Per-chip batch quantities of one step (arrays (N,)), per attention-DP rank."""

    decode_rows: np.ndarray  # Td
    decode_seqs: np.ndarray  # b
    decode_ctx: np.ndarray  # L
    prefill_tokens: np.ndarray  # Pr
    prefill_seqs: np.ndarray  # Sr
    prefill_ctx: np.ndarray  # C
    cp: int = 1  # context-parallel ranks sharing each prefill sequence (zig-zag)

    @property
    def tokens(self) -> np.ndarray:
        """Rows this rank runs per step, decode rows plus prompt tokens, (N,)."""
        return self.decode_rows + self.prefill_tokens

    def prefill_pairs(self, cap=None) -> np.ndarray:
        """Σ over this rank's prefill tokens of the keys each attends to, window-capped.

        C·Pr + Pr·P_seq/2 with P_seq = Pr·cp/Sr the chunk tokens per sequence (zig-zag CP gives
        every rank the mean key count; cp = 1: C·Pr + Pr²/(2·Sr)).
        """
        s = np.maximum(self.prefill_seqs, 1e-9)
        per_tok = self.prefill_ctx + self.prefill_tokens * self.cp / (2.0 * s)
        if cap:
            per_tok = np.minimum(per_tok, cap)
        return np.where(self.prefill_tokens > 0, self.prefill_tokens * per_tok, 0.0)

    def prefill_keys(self, cap=None) -> np.ndarray:
        """Keys this rank's prefill attention reads beyond its own chunk tokens: Sr·C (window-capped
        per sequence) + the other CP ranks' chunk tokens Pr·(cp − 1); 0 at a point with no prefill
        tokens (a sequence with nothing to prefill this step reads no prefix)."""
        c = self.prefill_ctx if not cap else np.minimum(self.prefill_ctx, cap)
        return np.where(self.prefill_tokens > 0, self.prefill_seqs * c + self.prefill_tokens * (self.cp - 1), 0.0)

    def ring_block_tokens(self, cap=None) -> np.ndarray:
        """Tokens of KV one CP rank passes per ring step: its share of the prefix and its chunk."""
        c = self.prefill_ctx if not cap else np.minimum(self.prefill_ctx, cap)
        return np.where(self.prefill_tokens > 0, self.prefill_seqs * c / self.cp + self.prefill_tokens, 0.0)


def add_cp_ring(
    ob: OpBuilder,
    name: str,
    rb: RankBatch,
    bytes_per_token: float,
    group: int,
    layers: float,
    hidden_under: str,
    cap=None,
) -> None:
    """The ring KV exchange of context-parallel prefill: cp − 1 send/recv steps per layer.

    Args:
        bytes_per_token: KV bytes of one token of one layer on one chip (latent or K+V heads).
        group: chips the CP group spans (tp·dp·cp; selects the link level, cost/collectives.py).
        layers: layers of this kind on the stage.
        hidden_under: the attention op whose compute overlaps the exchange (Ring Attention §3).
    """
    if rb.cp <= 1 or not np.any(rb.prefill_tokens > 0):
        return
    ob.collective(
        name,
        "send_recv",
        group,
        rb.ring_block_tokens(cap) * bytes_per_token,
        count=layers * (rb.cp - 1),
        hidden_under=hidden_under,
    )


def mla_decode_padding(heads: float, query_rows: float, tile_rows: float | None) -> float:
    """MFMA work the MLA generation kernel issues per unit of useful work when its tile computes ``tile_rows``
    query rows per sequence and the valid ones are ``heads`` (per rank) x ``query_rows`` (1, or 1 + drafts):
    ceil(valid / tile) x tile / valid; 1 where ``tile_rows`` is None or the valid rows fill whole tiles.

    Source of the gfx942 tile (64 = 16 heads x 4 query rows): ROCm/aiter ``csrc/py_itfs_cu/asm_mla.cu`` (the
    ``gqa_ratio == 16`` branch: BF16 queries over FP8 KV look up ``qSeqLen = 4`` for any ``max_seqlen_q <= 4``)
    and ``hsa/gfx942/mla/mla_asm.csv`` (its only such kernel, ``mla_a16w8_qh16_m16x4_n16x1_coex0_mask1_ps``);
    docs/gap_large_batch_decode.md, round 38 (mla38).

    >>> mla_decode_padding(16, 1, 64), mla_decode_padding(16, 2, 64), mla_decode_padding(128, 1, 64)
    (4.0, 2.0, 1.0)
    >>> mla_decode_padding(16, 1, None)
    1.0
    """
    if tile_rows is None:
        return 1.0
    valid = float(heads) * float(query_rows)
    return math.ceil(valid / tile_rows) * tile_rows / valid if valid > 0 else 1.0


def add_mla_decode_kernel(
    ob: OpBuilder, a, rb: RankBatch, n: float, attn_fmt: str, kv_token_bytes: float, layers: float, padding: float = 1.0
) -> None:
    """The weight-absorbed MLA generation kernel (``attn.mla_decode``; kernel family ``mla_decode``).

    Per layer: FLOPs padding·2·Td·n·(2r + d_rope)·L' (scores against the latent and rope key, values from
    the latent; ``padding``: :func:`mla_decode_padding`, the kernel tile's padded query rows), KV bytes
    b·L'·kv_token_bytes (the latent read once per sequence for all heads, padded or not), activations
    Td·n·(2r + d_rope)·2 (absorbed queries in, latent outputs out), two kernels; L' = min(L, index_topk)
    with a DSA indexer. ``a``: the model's AttentionSpec; ``n``: heads per chip. Also what calibration
    prices for every measured ``generation_mla_perf`` row (fit/mla_kernels.py; padding 1).
    """
    r, dr = a.kv_lora_rank, a.qk_rope_dim
    td, b, ctx = rb.decode_rows, rb.decode_seqs, rb.decode_ctx
    attended = np.minimum(ctx, a.index_topk) if a.has_indexer else ctx
    ob.op(
        "attn.mla_decode",
        "attention",
        attn_fmt,
        flop=padding * 2.0 * td * n * (2 * r + dr) * attended,
        kv=b * attended * kv_token_bytes,
        act=td * n * (2 * r + dr) * 2,
        kernels=2,
        count=layers,
        kernel="mla_decode",
    )


def add_mla_prefill_kernel(
    ob: OpBuilder, a, rb: RankBatch, n: float, attn_fmt: str, kv_token_bytes: float, layers: float, keys=None
) -> None:
    """The non-absorbed MLA context kernel (``attn.mla_prefill``; kernel family ``mla_prefill``).

    Per layer: FLOPs 2·n·(d_nope + d_rope + d_v)·pairs (causal pairs, :meth:`RankBatch.prefill_pairs`,
    top-k capped with DSA), KV bytes of the cached prefix and other CP ranks' keys
    (:meth:`RankBatch.prefill_keys` x kv_token_bytes), activations of the up-projected Q/K/V
    (rows·n·(d_nope + d_rope + d_v)·2). Also what calibration prices for every measured
    ``context_mla_perf`` row (fit/mla_kernels.py). ``keys``: ``rb.prefill_keys()`` where the caller has it.
    """
    dr, dn, dv = a.qk_rope_dim, a.qk_nope_dim, a.v_head_dim
    keys = rb.prefill_keys() if keys is None else keys
    up_rows = rb.prefill_tokens + keys
    pairs = rb.prefill_pairs(a.index_topk if a.has_indexer else None)
    ob.op(
        "attn.mla_prefill",
        "attention",
        attn_fmt,
        flop=2.0 * n * (dn + dr + dv) * pairs,
        kv=keys * kv_token_bytes,
        act=up_rows * n * (dn + dr + dv) * 2,
        count=layers,
        kernel="mla_prefill",
    )


def add_mla_ops(
    ob: OpBuilder,
    model: ModelSpec,
    rb: RankBatch,
    tp: int,
    layers: float,
    w_bytes: float,
    w_fmt: str,
    attn_fmt: str,
    kv_token_bytes: float,
    act_in: float,
    index_fmt: str = "fp8",
    cp_group: int = 1,
    w_key: str = "",
    w_kernels: float = 1.0,
    decode_padding: float = 1.0,
    o_proj: tuple | None = None,
) -> None:
    """Add the MLA attention block of ``layers`` layers (per chip) to ``ob``.

    ``kv_token_bytes``: bytes one token's latent + rope key take in the KV cache of one layer
    (:meth:`KVCacheFormat.mla_token_bytes`, e.g. 576 for FP8, 656 for FlashMLA's fp8_ds_mla).
    ``attn_fmt``: compute format of the attention math (FP8 MLA where the precision asks for it).
    ``index_fmt`` is the compute format of the DSA indexer (FP8 where the chip has it);
    ``cp_group`` the chips the context-parallel group spans (ring exchange, module docstring);
    ``w_key`` the projections' GEMM efficiency key when finer than ``w_fmt`` (``fp8_block``);
    ``w_kernels`` the kernels each projection launches (2 with an activation quantiser, cost/ops.ACT_QUANT_KERNELS);
    ``decode_padding`` the generation kernel's padded MFMA work (:func:`mla_decode_padding`);
    ``o_proj`` the output projection's (weight bytes per element, compute format, activation bytes per element,
    GEMM key, kernels) where its weights are stored apart from the other projections' (specs/fp4_checkpoint's
    ``attention_out``); None: as the other projections.
    """
    a, h = model.attention, model.hidden_size
    n = a.num_heads / tp
    r, dr, dn, dv = a.kv_lora_rank, a.qk_rope_dim, a.qk_nope_dim, a.v_head_dim
    t = rb.tokens
    if a.q_lora_rank:
        # q_a_proj and kv_a_proj_with_mqa read the same input: engines run them as one GEMM of
        # width q_lora_rank + r + d_rope (TensorRT-LLM _torch/modules/attention.py MLA
        # kv_a_proj_with_mqa; SGLang deepseek_v2.py fused_qkv_a_proj_with_mqa; vLLM fused_qkv_a_proj)
        ob.gemm(
            "attn.qkv_a_proj",
            w_fmt,
            t,
            h,
            a.q_lora_rank + r + dr,
            w_bytes,
            act_in,
            count=layers,
            key=w_key,
            kernels=w_kernels,
        )
        ob.gemm(
            "attn.q_b_proj",
            w_fmt,
            t,
            a.q_lora_rank,
            n * (dn + dr),
            w_bytes,
            act_in,
            count=layers,
            key=w_key,
            kernels=w_kernels,
        )
    else:
        ob.gemm("attn.q_proj", w_fmt, t, h, n * (dn + dr), w_bytes, act_in, count=layers, key=w_key, kernels=w_kernels)
        ob.gemm("attn.kv_a_proj", w_fmt, t, h, r + dr, w_bytes, act_in, count=layers, key=w_key, kernels=w_kernels)
    if a.has_indexer:  # DSA indexer projections (replicated): wq_b, wk, weights_proj
        ob.gemm(
            "attn.dsa_index_wq_b",
            w_fmt,
            t,
            a.q_lora_rank,
            a.index_heads * a.index_head_dim,
            w_bytes,
            act_in,
            count=layers,
            key=w_key,
            kernels=w_kernels,
        )
        ob.gemm(
            "attn.dsa_index_wk_weights",
            w_fmt,
            t,
            h,
            a.index_head_dim + a.index_heads,
            w_bytes,
            act_in,
            count=layers,
            key=w_key,
            kernels=w_kernels,
        )
    ob.op(
        "attn.norm_rope_kv_write",
        "memory",
        attn_fmt,
        act=t * (4 * a.q_lora_rank + 4 * (r + dr)),
        kv=t * kv_token_bytes,
        kernels=3,
        count=layers,
    )
    td, b, ctx = rb.decode_rows, rb.decode_seqs, rb.decode_ctx
    if np.any(td > 0):
        # per-head batched GEMMs: [Td, d_nope] x [d_nope, r] for each of the n heads
        ob.op(
            "attn.absorb_uk",
            "gemm",
            w_fmt,
            flop=2.0 * td * n * dn * r,
            weight=np.where(td > 0, n * dn * r * w_bytes, 0.0),
            act=td * n * (dn * act_in + 2.0 * r),
            rows=td,
            count=layers,
            key=w_key,
        )
        add_mla_decode_kernel(ob, a, rb, n, attn_fmt, kv_token_bytes, layers, decode_padding)
        if a.has_indexer:
            ob.op(
                "attn.dsa_indexer",
                "attention",
                index_fmt,
                flop=2.0 * td * a.index_heads * a.index_head_dim * ctx,
                kv=b * ctx * (a.index_head_dim + 4),
                kernels=2,
                count=layers,
            )
        ob.op(
            "attn.absorb_uv",
            "gemm",
            w_fmt,
            flop=2.0 * td * n * r * dv,
            weight=np.where(td > 0, n * r * dv * w_bytes, 0.0),
            act=td * n * (r * act_in + 2.0 * dv),
            rows=td,
            count=layers,
            key=w_key,
        )
    if np.any(rb.prefill_tokens > 0):
        keys = rb.prefill_keys()
        up_rows = rb.prefill_tokens + keys
        ob.gemm(
            "attn.kv_b_proj",
            w_fmt,
            up_rows,
            r,
            n * (dn + dv),
            w_bytes,
            act_in,
            count=layers,
            key=w_key,
            kernels=w_kernels,
        )
        add_mla_prefill_kernel(ob, a, rb, n, attn_fmt, kv_token_bytes, layers, keys)
        if a.has_indexer:
            ob.op(
                "attn.dsa_indexer_prefill",
                "attention",
                index_fmt,
                flop=2.0 * a.index_heads * a.index_head_dim * rb.prefill_pairs(),
                count=layers,
            )
        index_b = (a.index_head_dim + 4) if a.has_indexer else 0.0
        add_cp_ring(ob, "attn.cp_ring_kv", rb, kv_token_bytes + index_b, cp_group, layers, "attn.mla_prefill")
    ob_, of_, oa_, ok_, on_ = o_proj if o_proj is not None else (w_bytes, w_fmt, act_in, w_key, w_kernels)
    ob.gemm("attn.o_proj", of_, t, n * dv, h, ob_, oa_, count=layers, key=ok_, kernels=on_)


def add_gqa_decode_kernel(
    ob: OpBuilder, rb: RankBatch, n, kvr, d, attn_fmt: str, kv_vec_bytes, layers: float, window: int = 0
) -> None:
    """The GQA/MHA generation-attention kernel of ``layers`` layers (``attn.decode_full`` or
    ``attn.decode_sliding<window>``).

    Per layer: FLOPs 2·Td·n·2d·L' (scores and values), KV bytes b·L'·2·kv_r·kv_vec_bytes (each
    sequence's K and V heads read once), activations Td·n·d·4; L' = min(L, window) on a sliding
    layer. ``n``, ``kvr``: query and KV heads per chip; ``d``: head dim; ``kv_vec_bytes``: bytes of
    one head's K (or V) vector (scales included). Scalars or arrays (N,): also what
    scripts/decode_attention_bins.py prices for every measured ``generation_attention_perf`` row.
    ``rows``: the call's (sequence, KV head) blocks b·kv_r weighted by the query tile of n / kv_r heads
    (cost/decode_blocks.weighted_blocks) while cost/decode_blocks.TRT_DECODE_BLOCKS_ON (the TensorRT-LLM per-block
    floor reads them), else 1 as before.
    """
    td, b, ctx = rb.decode_rows, rb.decode_seqs, rb.decode_ctx
    eff_ctx = np.minimum(ctx, window) if window else ctx
    ob.op(
        f"attn.decode_{f'sliding{window}' if window else 'full'}",
        "attention",
        attn_fmt,
        flop=2.0 * td * n * 2 * d * eff_ctx,
        kv=b * eff_ctx * 2 * kvr * kv_vec_bytes,
        act=td * n * d * 4,
        rows=decode_blocks(b, kvr, n),
        count=layers,
    )


def add_gqa_ops(
    ob: OpBuilder,
    model: ModelSpec,
    rb: RankBatch,
    tp: int,
    layer_share: float,
    w_bytes: float,
    w_fmt: str,
    attn_fmt: str,
    kv_vec_bytes: float,
    act_in: float,
    cp_group: int = 1,
    w_key: str = "",
    w_kernels: float = 1.0,
) -> None:
    """Add GQA/MHA attention for the layers of one stage (``layer_share`` = stage layers / all).

    ``kv_vec_bytes``: bytes of one head's K (or V) vector in the KV cache, scales included
    (:meth:`KVCacheFormat.vector_bytes` of head_dim). ``attn_fmt``: compute format of the math.
    ``cp_group``: chips the context-parallel group spans (ring exchange, module docstring);
    ``w_key``: the projections' GEMM efficiency key when finer than ``w_fmt`` (``fp8_block``);
    ``w_kernels``: the kernels each projection launches (2 with an activation quantiser, cost/ops.ACT_QUANT_KERNELS).
    """
    a, h, d = model.attention, model.hidden_size, model.attention.head_dim
    n = a.num_heads / tp
    kvr = kv_heads_per_rank(model, tp)
    t = rb.tokens
    layers = model.num_layers * layer_share
    ob.gemm(
        "attn.qkv_proj", w_fmt, t, h, (n + 2 * kvr) * d, w_bytes, act_in, count=layers, key=w_key, kernels=w_kernels
    )
    ob.op(
        "attn.norm_rope_kv_write",
        "memory",
        attn_fmt,
        act=t * (n + 2 * kvr) * d * 4,
        kv=t * 2 * kvr * kv_vec_bytes,
        kernels=2,
        count=layers,
    )
    windows: dict[int, int] = {}
    for w in model.layer_windows:
        windows[w] = windows.get(w, 0) + 1
    td = rb.decode_rows
    for w, cnt in sorted(windows.items()):
        tag = f"sliding{w}" if w else "full"
        c = cnt * layer_share
        if np.any(td > 0):
            add_gqa_decode_kernel(ob, rb, n, kvr, d, attn_fmt, kv_vec_bytes, c, w)
        if np.any(rb.prefill_tokens > 0):
            pairs = rb.prefill_pairs(w or None)
            ob.op(
                f"attn.prefill_{tag}",
                "attention",
                attn_fmt,
                flop=2.0 * n * 2 * d * pairs,
                kv=rb.prefill_keys(w or None) * 2 * kvr * kv_vec_bytes,
                act=rb.prefill_tokens * (n + 2 * kvr) * d * 2,
                count=c,
            )
            add_cp_ring(
                ob, f"attn.cp_ring_kv_{tag}", rb, 2 * kvr * kv_vec_bytes, cp_group, c, f"attn.prefill_{tag}", w or None
            )
    ob.gemm("attn.o_proj", w_fmt, t, n * d, h, w_bytes, act_in, count=layers, key=w_key, kernels=w_kernels)
