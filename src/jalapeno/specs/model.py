"""Model specs read from a Hugging Face ``config.json`` (offline), with parameter accounting.

Supported: dense and MoE decoders with GQA/MHA attention (Llama, Mistral, Qwen2/3, Mixtral,
Qwen3-MoE, gpt-oss with sinks and sliding-window layers, MiniMax-M2 with its per-layer q/k norm and
partial rotary) and MLA attention (DeepSeek-V2/V3/R1,
Kimi K2/K2.5, DeepSeek-V3.2 with its DSA indexer). Anything else is refused, never guessed.

Parameter conventions (checked by tests against published figures):
- ``total_params``: every weight of the main model (embeddings, head, norms), MTP layers excluded
  (DeepSeek-V3 README_WEIGHTS: "671B main model weights, 14B MTP module").
- ``active_params``: weights one decoded token touches: attention, dense FFN, router, top-k routed
  and shared experts, final norm and LM head; the input-embedding lookup and MTP layers excluded
  (the convention behind DeepSeek's 37B and OpenAI's 5.1B).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jalapeno.errors import SpecError

#: model_type values jalapeno models, by family.
_MLA_TYPES = {"deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2"}
_GQA_DENSE_TYPES = {"llama", "mistral", "qwen2", "qwen3"}
_GQA_MOE_TYPES = {"mixtral", "qwen3_moe", "gpt_oss", "minimax_m2"}
SUPPORTED_MODEL_TYPES = frozenset(_MLA_TYPES | _GQA_DENSE_TYPES | _GQA_MOE_TYPES)
#: ModelSpec.window_counts by (attention windows, layers): a sweep asks it per step (the memory fit)
_WINDOW_COUNTS: dict[tuple, tuple] = {}


@dataclass(frozen=True, slots=True)
class AttentionSpec:
    """Attention shapes of one layer.

    Attributes:
        kind: ``mla``, ``gqa`` or ``mha``.
        num_heads: query heads.
        num_kv_heads: KV heads (MLA: equals num_heads; its cache is one shared latent).
        head_dim: q/k/v head dim (GQA/MHA).
        q_lora_rank, kv_lora_rank, qk_nope_dim, qk_rope_dim, v_head_dim: MLA shapes (0 if unused).
        bias: q/k/v/o projections carry biases (gpt-oss).
        sinks: one learned sink logit per head (gpt-oss).
        qk_norm: RMSNorm on q and k (Qwen3: per head; MiniMax-M2: ``qk_norm_tp``).
        qk_norm_tp: the q/k norm runs over all heads of the layer (MiniMax-M2 ``qk_norm_type``
            ``per_layer``: one weight of num_heads·head_dim for q, num_kv_heads·head_dim for k),
            so a tensor-parallel rank all-reduces its partial sums of squares every layer
            (vLLM ``MiniMaxText01RMSNormTP.forward_qk``: one fp32 all-reduce of (tokens, 2)).
        rotary_dim: dimensions of each q/k head that RoPE rotates (0 = all of ``head_dim``;
            MiniMax-M2: 64 of 128). RoPE is elementwise: its traffic is inside the per-layer
            elementwise passes (cost/ops.ELEMENTWISE_VECTORS_PER_LAYER) whatever the fraction.
        windows: per layer, the sliding window in tokens (0 = full attention).
        index_heads, index_head_dim, index_topk: DSA indexer of DeepSeek-V3.2 (0 if absent).
    """

    kind: str
    num_heads: int
    num_kv_heads: int
    head_dim: int = 0
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_dim: int = 0
    qk_rope_dim: int = 0
    v_head_dim: int = 0
    bias: bool = False
    sinks: bool = False
    qk_norm: bool = False
    qk_norm_tp: bool = False
    rotary_dim: int = 0
    windows: tuple[int, ...] = ()
    index_heads: int = 0
    index_head_dim: int = 0
    index_topk: int = 0

    @property
    def qk_head_dim(self) -> int:
        """Dimension of one head's q·k product (MLA: nope + rope; else head_dim)."""
        return self.qk_nope_dim + self.qk_rope_dim if self.kind == "mla" else self.head_dim

    @property
    def v_dim(self) -> int:
        """Dimension of one head's value vector."""
        return self.v_head_dim if self.kind == "mla" else self.head_dim

    @property
    def kv_elems_per_token_layer(self) -> int:
        """KV-cache elements per token per layer (MLA: latent + rope key; GQA: 2·kv_heads·d)."""
        if self.kind == "mla":
            return self.kv_lora_rank + self.qk_rope_dim
        return 2 * self.num_kv_heads * self.head_dim

    @property
    def has_indexer(self) -> bool:
        """Whether the attention selects keys with a DSA indexer (index_topk > 0)."""
        return self.index_topk > 0


@dataclass(frozen=True, slots=True)
class MoESpec:
    """Mixture-of-experts FFN.

    Attributes:
        num_experts: routed experts E.
        top_k: experts per token k.
        num_shared: shared experts (always active).
        expert_intermediate: intermediate size of one expert.
        shared_intermediate: intermediate size of the shared expert block (total).
        expert_bias: experts carry biases (gpt-oss).
        router_bias: router has a bias / correction vector.
        routing_sigma: lognormal σ of expert popularity (specs/routing.py); 0 = uniform top-k
            routing, the default (InferenceX-style prompts are random tokens; the measured skew
            is for natural-text traffic: ``with_routing(model, "measured")``, ``--routing measured``).
        decode_routing_sigma: σ of the tokens the model generates (decode rows, MTP drafts), routed
            apart from the prompt's: 0 (default) = uniform; ``with_routing(model, "generated")``
            gives generated tokens the family's measured σ while prompt tokens keep ``routing_sigma``.
        aux_loss_free: the router was trained without an auxiliary balance loss (DeepSeek-V3
            ``topk_method = noaux_tc``: bias-corrected top-k), the family with measured skew.
        router_fp32: the engines run the gate GEMM in FP32 (MiniMax-M2: vLLM's and SGLang's
            ``MiniMaxM2MoE`` hold the gate in float32 and call it on ``hidden_states.to(torch.float32)``),
            priced on the chip's FP32 vector units where it gives their peak (cost/ops.py).
    """

    num_experts: int
    top_k: int
    num_shared: int
    expert_intermediate: int
    shared_intermediate: int
    expert_bias: bool = False
    router_bias: bool = False
    routing_sigma: float = 0.0
    aux_loss_free: bool = False
    decode_routing_sigma: float = 0.0
    router_fp32: bool = False


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A decoder-only transformer, as read from its config.json.

    Attributes:
        name: catalog name or file stem.
        model_type: the config's ``model_type``.
        hidden_size: h.
        num_layers: main decoder layers (MTP excluded).
        vocab_size: V.
        attention: :class:`AttentionSpec`.
        dense_intermediate: FFN intermediate size of dense layers (0 if none).
        dense_layers: indices of layers with a dense FFN (the rest are MoE).
        moe: :class:`MoESpec` or None for a dense model.
        mtp_layers: multi-token-prediction modules (DeepSeek ``num_nextn_predict_layers``).
        tie_embeddings: input embedding shared with the LM head.
        default_precision: preset matching the released checkpoint.
        precision_from: where ``default_precision`` was read (quantization_config, torch_dtype or
            assumed), shown by ``models show``.
        max_context: context length, tokens: ``max_position_embeddings``, or as its ``rope_scaling``
            extends it (specs/rope_context.py, vLLM's rule).
        context_from: where ``max_context`` was read, for messages and ``models show``.
        source: file the spec came from.
    """

    name: str
    model_type: str
    hidden_size: int
    num_layers: int
    vocab_size: int
    attention: AttentionSpec
    dense_intermediate: int
    dense_layers: tuple[int, ...]
    moe: MoESpec | None
    mtp_layers: int
    tie_embeddings: bool
    default_precision: str
    max_context: int
    source: str = field(default="", compare=False)
    precision_from: str = field(default="", compare=False)
    context_from: str = field(default="max_position_embeddings", compare=False)

    def check_context(self, tokens: float, field: str, what: str | None = None, fix: str | None = None) -> None:
        """Every path that runs a sequence (predict, step, simulate, traces) makes this one check.

        Args:
            tokens: the sequence's total length (input + output, or the context), tokens.
            field: the option or file field that set it, for the message.
            what: how to show the length (default: the number).
            fix: the remedy to name (default: shorter requests or a longer-context model).

        Raises:
            SpecError: longer than ``max_context`` (``max_position_embeddings``); when that is 0
                (unknown), longer than any model's context (model_plausibility.MAX_CONTEXT_TOKENS).
        """
        from jalapeno.specs.model_plausibility import MAX_CONTEXT_TOKENS

        unknown = not self.max_context and tokens > MAX_CONTEXT_TOKENS
        if not unknown and not (self.max_context and tokens > self.max_context):
            return
        # 1e23 typed as digits printed as 99999999999999991611392 (a float's .0f): past 1e15, 3 digits
        what = what or (f"{tokens:.0f} tokens" if tokens < 1e15 else f"{tokens:.3g} tokens")
        if unknown:
            raise SpecError(
                field,
                f"{what} is beyond any model's context (at most "
                f"{MAX_CONTEXT_TOKENS:,} accepted; {self.name}'s config gives no max_position_embeddings)",
                fix or "use shorter requests, or add max_position_embeddings to the config",
            )
        raise SpecError(
            field,
            f"{what} exceed {self.name}'s context of {self.max_context} tokens ({self.context_from})",
            fix or "use shorter requests or a model with a longer context",
        )

    # ---- per-module parameter counts (elements) ------------------------------------------
    @property
    def num_dense_layers(self) -> int:
        """Layers with a dense FFN."""
        return len(self.dense_layers)

    @property
    def num_moe_layers(self) -> int:
        """Layers with an MoE FFN (0 for a dense model)."""
        return self.num_layers - self.num_dense_layers if self.moe else 0

    def attention_params(self) -> int:
        """Weights of one attention block (projections, q/kv norms, sinks, DSA indexer)."""
        a, h = self.attention, self.hidden_size
        if a.kind == "mla":
            n = a.num_heads
            q = (
                h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * n * a.qk_head_dim
                if a.q_lora_rank
                else h * n * a.qk_head_dim
            )
            kv_a = h * (a.kv_lora_rank + a.qk_rope_dim) + a.kv_lora_rank
            kv_b = a.kv_lora_rank * n * (a.qk_nope_dim + a.v_head_dim)
            o = n * a.v_head_dim * h
            p = q + kv_a + kv_b + o
            if a.has_indexer:
                # DSA lightning indexer: wq_b (q_lora -> heads*d), wk (h -> d), k norm,
                # weights_proj (h -> heads). DeepSeek-V3.2-Exp inference/model.py shapes.
                p += (
                    a.q_lora_rank * a.index_heads * a.index_head_dim
                    + h * a.index_head_dim
                    + 2 * a.index_head_dim
                    + h * a.index_heads
                )
            return p
        d = a.head_dim
        p = h * (a.num_heads + 2 * a.num_kv_heads) * d + a.num_heads * d * h
        if a.bias:
            p += (a.num_heads + 2 * a.num_kv_heads) * d + h
        if a.sinks:
            p += a.num_heads
        if a.qk_norm_tp:  # one weight over the whole q and the whole k (MiniMax-M2 per_layer)
            p += (a.num_heads + a.num_kv_heads) * d
        elif a.qk_norm:
            p += 2 * d
        return p

    def dense_ffn_params(self) -> int:
        """Weights of one dense SwiGLU FFN (gate, up, down)."""
        return 3 * self.hidden_size * self.dense_intermediate

    def expert_params(self) -> int:
        """Weights of one routed expert (gate, up, down; biases where present)."""
        m = self.moe
        if m is None:
            return 0
        p = 3 * self.hidden_size * m.expert_intermediate
        if m.expert_bias:
            p += 2 * m.expert_intermediate + self.hidden_size
        return p

    def shared_expert_params(self) -> int:
        """Weights of the shared-expert block of one MoE layer."""
        m = self.moe
        return 3 * self.hidden_size * m.shared_intermediate if m else 0

    def router_params(self) -> int:
        """Router (gate) weights of one MoE layer, bias included."""
        m = self.moe
        if m is None:
            return 0
        return self.hidden_size * m.num_experts + (m.num_experts if m.router_bias else 0)

    def embedding_params(self) -> int:
        """Weights of the token embedding: vocab_size x hidden_size."""
        return self.vocab_size * self.hidden_size

    def lm_head_params(self) -> int:
        """Weights of the LM head: vocab_size x hidden_size (0 when tied to the embedding)."""
        return 0 if self.tie_embeddings else self.vocab_size * self.hidden_size

    def _layer_norms(self) -> int:
        return 2 * self.hidden_size

    def moe_layer_params(self) -> int:
        """All weights of one MoE layer (attention + router + every expert + shared)."""
        m = self.moe
        assert m is not None
        return (
            self.attention_params()
            + self.router_params()
            + m.num_experts * self.expert_params()
            + self.shared_expert_params()
            + self._layer_norms()
        )

    def dense_layer_params(self) -> int:
        """Weights of one dense layer: attention + dense FFN + its two norms."""
        return self.attention_params() + self.dense_ffn_params() + self._layer_norms()

    @property
    def total_params(self) -> int:
        """Main-model weights (embeddings and head included, MTP excluded)."""
        layers = self.num_dense_layers * self.dense_layer_params()
        if self.moe:
            layers += self.num_moe_layers * self.moe_layer_params()
        return layers + self.embedding_params() + self.lm_head_params() + self.hidden_size

    @property
    def active_params(self) -> int:
        """Weights one decoded token touches (head included; input embedding and MTP excluded)."""
        act = self.num_dense_layers * self.dense_layer_params()
        m = self.moe
        if m:
            per = (
                self.attention_params()
                + self.router_params()
                + m.top_k * self.expert_params()
                + self.shared_expert_params()
                + self._layer_norms()
            )
            act += self.num_moe_layers * per
        head = self.lm_head_params() or self.embedding_params()
        return act + head + self.hidden_size

    @property
    def mtp_params(self) -> int:
        """Unique weights of the MTP modules: two norms, the 2h->h projection and one decoder
        layer each (embedding and head are shared with the main model; DeepSeek-V3 §2.2)."""
        if not self.mtp_layers:
            return 0
        layer = self.moe_layer_params() if self.moe else self.dense_layer_params()
        per = 2 * self.hidden_size + 2 * self.hidden_size * self.hidden_size + layer + self.hidden_size
        return self.mtp_layers * per

    def kv_bytes_per_token(self, kv, context_tokens: int | None = None) -> float:
        """KV-cache bytes one token adds, over all layers (all KV heads: one replica of the cache).

        Args:
            kv: a :class:`~jalapeno.specs.kv_cache.KVCacheFormat` (its real layout: block scales,
                a rope part kept in BF16), or a plain number of bytes per element.
            context_tokens: with it, sliding-window layers count only while the token is inside
                their window, so the result is the average bytes per token of a sequence of that
                length.

        The DSA indexer key cache (fp8 128 dims + fp32 scale per token per layer, vLLM layout)
        is added for DeepSeek-V3.2.

        >>> # DeepSeek-R1, FP8 KV: 61 x (512 + 64) x 1 B = 35,136 (tests/unit/test_kv_formats.py)
        """
        a = self.attention
        if isinstance(kv, (int, float)):
            per_layer = a.kv_elems_per_token_layer * float(kv)
        elif a.kind == "mla":
            per_layer = kv.mla_token_bytes(a.kv_lora_rank, a.qk_rope_dim)
        else:
            per_layer = kv.gqa_token_bytes(a.num_kv_heads, a.head_dim)
        total = 0.0
        for w, count in self.window_counts:
            frac = min(w, context_tokens) / context_tokens if (w and context_tokens) else 1.0
            total += count * frac * per_layer
        if a.has_indexer:
            total += self.num_layers * (a.index_head_dim + 4)
        return total

    @property
    def window_counts(self) -> tuple[tuple[int, int], ...]:
        """(window, number of layers) pairs; window 0 = full attention."""
        key = (
            tuple(self.attention.windows),
            self.num_layers,
        )  # what layer_windows reads (memo: :data:`_WINDOW_COUNTS`)
        hit = _WINDOW_COUNTS.get(key)
        if hit is not None:
            return hit
        counts: dict[int, int] = {}
        for w in self.layer_windows:
            counts[w] = counts.get(w, 0) + 1
        out = _WINDOW_COUNTS[key] = tuple(sorted(counts.items()))
        if len(_WINDOW_COUNTS) > 64:
            del _WINDOW_COUNTS[next(iter(_WINDOW_COUNTS))]
        return out

    @property
    def layer_windows(self) -> tuple[int, ...]:
        """Per-layer sliding window (0 = full), length num_layers."""
        return self.attention.windows or (0,) * self.num_layers

    @property
    def attention_label(self) -> str:
        """The attention as tables show it, e.g. ``MLA + DSA top-2048``."""
        a = self.attention
        parts = [a.kind.upper()]
        if a.has_indexer:
            parts.append(f"DSA top-{a.index_topk}")
        if a.sinks:
            parts.append("sinks")
        if any(self.layer_windows):
            n = sum(1 for w in self.layer_windows if w)
            parts.append(f"{n} sliding-window layers ({max(self.layer_windows)} tokens)")
        return " + ".join(parts)

    def summary(self) -> dict[str, Any]:
        """JSON-ready summary (what ``jalapeno models show --json`` prints)."""
        from jalapeno.specs.formats import get_precision

        prec = get_precision(self.default_precision)
        kv = prec.kv_cache
        return {
            "name": self.name,
            "model_type": self.model_type,
            "total_params": self.total_params,
            "active_params": self.active_params,
            "mtp_params": self.mtp_params,
            "embedding_params": self.embedding_params(),
            "num_layers": self.num_layers,
            "num_dense_layers": self.num_dense_layers,
            "num_moe_layers": self.num_moe_layers,
            "hidden_size": self.hidden_size,
            "vocab_size": self.vocab_size,
            "attention": self.attention.kind,
            "attention_detail": self.attention_label,
            "num_heads": self.attention.num_heads,
            "num_kv_heads": self.attention.num_kv_heads,
            "moe": None
            if not self.moe
            else {
                "num_experts": self.moe.num_experts,
                "top_k": self.moe.top_k,
                "num_shared": self.moe.num_shared,
                "expert_intermediate": self.moe.expert_intermediate,
                "expert_params": self.expert_params(),
            },
            "mtp_layers": self.mtp_layers,
            "default_precision": self.default_precision,
            "default_precision_from": self.precision_from,
            "kv_dtype": kv.name,
            "kv_bytes_per_token": self.kv_bytes_per_token(kv),
            "kv_bytes_per_token_at_8k": self.kv_bytes_per_token(kv, 8192),
            "max_context": self.max_context,
            **(
                {
                    "max_context_from": "none: the config gives no max_position_embeddings, so no context check is made "
                    "(up to the plausibility bound, specs/model_plausibility.MAX_CONTEXT_TOKENS)"
                }
                if not self.max_context
                else {}
                if self.context_from == "max_position_embeddings"
                else {"max_context_from": self.context_from}
            ),
            "source": self.source,
        }
