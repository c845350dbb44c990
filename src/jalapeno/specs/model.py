"""Model specs read from a Hugging Face ``config.json`` (offline), with parameter accounting.

Supported: dense and MoE decoders with GQA/MHA attention (Llama, Mistral, Qwen2/3, Mixtral,
Qwen3-MoE, gpt-oss with sinks and sliding-window layers) and MLA attention (DeepSeek-V2/V3/R1,
Kimi K2/K2.5, DeepSeek-V3.2 with its DSA indexer). Anything else is refused, never guessed.

Parameter conventions (checked by tests against published figures):
- ``total_params``: every weight of the main model (embeddings, head, norms), MTP layers excluded
  (DeepSeek-V3 README_WEIGHTS: "671B main model weights, 14B MTP module").
- ``active_params``: weights one decoded token touches: attention, dense FFN, router, top-k routed
  and shared experts, final norm and LM head; the input-embedding lookup and MTP layers excluded
  (the convention behind DeepSeek's 37B and OpenAI's 5.1B).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jalapeno.errors import SpecError, UnsupportedModelError

#: model_type values jalapeno models, by family.
_MLA_TYPES = {"deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2"}
_GQA_DENSE_TYPES = {"llama", "mistral", "qwen2", "qwen3"}
_GQA_MOE_TYPES = {"mixtral", "qwen3_moe", "gpt_oss"}
SUPPORTED_MODEL_TYPES = frozenset(_MLA_TYPES | _GQA_DENSE_TYPES | _GQA_MOE_TYPES)


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
        qk_norm: per-head RMSNorm on q and k (Qwen3).
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
    """

    num_experts: int
    top_k: int
    num_shared: int
    expert_intermediate: int
    shared_intermediate: int
    expert_bias: bool = False
    router_bias: bool = False


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
        max_context: ``max_position_embeddings``.
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

    # ---- per-module parameter counts (elements) ------------------------------------------
    @property
    def num_dense_layers(self) -> int:
        return len(self.dense_layers)

    @property
    def num_moe_layers(self) -> int:
        return self.num_layers - self.num_dense_layers if self.moe else 0

    def attention_params(self) -> int:
        """Weights of one attention block (projections, q/kv norms, sinks, DSA indexer)."""
        a, h = self.attention, self.hidden_size
        if a.kind == "mla":
            n = a.num_heads
            q = (h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * n * a.qk_head_dim
                 if a.q_lora_rank else h * n * a.qk_head_dim)
            kv_a = h * (a.kv_lora_rank + a.qk_rope_dim) + a.kv_lora_rank
            kv_b = a.kv_lora_rank * n * (a.qk_nope_dim + a.v_head_dim)
            o = n * a.v_head_dim * h
            p = q + kv_a + kv_b + o
            if a.has_indexer:
                # DSA lightning indexer: wq_b (q_lora -> heads*d), wk (h -> d), k norm,
                # weights_proj (h -> heads). DeepSeek-V3.2-Exp inference/model.py shapes.
                p += (a.q_lora_rank * a.index_heads * a.index_head_dim
                      + h * a.index_head_dim + 2 * a.index_head_dim + h * a.index_heads)
            return p
        d = a.head_dim
        p = h * (a.num_heads + 2 * a.num_kv_heads) * d + a.num_heads * d * h
        if a.bias:
            p += (a.num_heads + 2 * a.num_kv_heads) * d + h
        if a.sinks:
            p += a.num_heads
        if a.qk_norm:
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
        return self.vocab_size * self.hidden_size

    def lm_head_params(self) -> int:
        return 0 if self.tie_embeddings else self.vocab_size * self.hidden_size

    def _layer_norms(self) -> int:
        return 2 * self.hidden_size

    def moe_layer_params(self) -> int:
        """All weights of one MoE layer (attention + router + every expert + shared)."""
        m = self.moe
        assert m is not None
        return (self.attention_params() + self.router_params() + m.num_experts * self.expert_params()
                + self.shared_expert_params() + self._layer_norms())

    def dense_layer_params(self) -> int:
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
            per = (self.attention_params() + self.router_params() + m.top_k * self.expert_params()
                   + self.shared_expert_params() + self._layer_norms())
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

    def kv_bytes_per_token(self, kv_bytes_per_elem: float, context_tokens: int | None = None) -> float:
        """KV-cache bytes one token adds, over all layers, at a given KV element size.

        With ``context_tokens`` given, sliding-window layers count only while the token is inside
        their window, so the result is the average bytes per token of a sequence of that length.
        The DSA indexer key cache (fp8 128 dims + fp32 scale per token per layer, vLLM layout)
        is added for DeepSeek-V3.2.

        >>> # DeepSeek-R1, FP8 KV: 61 x (512 + 64) x 1 B
        >>> # (see tests/golden for the figure)
        """
        a = self.attention
        total = 0.0
        for w in self.layer_windows:
            frac = 1.0
            if w and context_tokens:
                frac = min(w, context_tokens) / context_tokens
            total += frac * a.kv_elems_per_token_layer * kv_bytes_per_elem
            if a.has_indexer:
                total += a.index_head_dim + 4
        return total

    @property
    def layer_windows(self) -> tuple[int, ...]:
        """Per-layer sliding window (0 = full), length num_layers."""
        return self.attention.windows or (0,) * self.num_layers

    @property
    def attention_label(self) -> str:
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
            "moe": None if not self.moe else {
                "num_experts": self.moe.num_experts,
                "top_k": self.moe.top_k,
                "num_shared": self.moe.num_shared,
                "expert_intermediate": self.moe.expert_intermediate,
                "expert_params": self.expert_params(),
            },
            "mtp_layers": self.mtp_layers,
            "default_precision": self.default_precision,
            "kv_dtype": kv.name,
            "kv_bytes_per_token": self.kv_bytes_per_token(kv.bytes_per_elem),
            "kv_bytes_per_token_at_8k": self.kv_bytes_per_token(kv.bytes_per_elem, 8192),
            "max_context": self.max_context,
            "source": self.source,
        }


# ---- parsing -----------------------------------------------------------------------------

def _req(cfg: dict, key: str, src: str, kind: type = int) -> Any:
    if key not in cfg or cfg[key] is None:
        raise SpecError(f"{src}: {key}", "missing required field",
                        f"add \"{key}\" to the config.json (see the model's Hugging Face config)")
    v = cfg[key]
    if kind is int:
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise SpecError(f"{src}: {key}", f"must be a positive integer, got {v!r}",
                            f"set \"{key}\" to a positive integer")
    return v


def _opt_int(cfg: dict, key: str, src: str, default: int = 0) -> int:
    v = cfg.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise SpecError(f"{src}: {key}", f"must be a non-negative integer, got {v!r}",
                        f"set \"{key}\" to a non-negative integer or remove it")
    return v


def _default_precision(cfg: dict) -> str:
    q = cfg.get("quantization_config") or {}
    method = str(q.get("quant_method", "")).lower()
    if method == "mxfp4":
        return "mxfp4"
    if method == "fp8":
        return "fp8"
    if method == "compressed-tensors":
        return "int4"
    return "bf16"


def model_from_config(cfg: dict, name: str, source: str = "") -> ModelSpec:
    """Build a :class:`ModelSpec` from a parsed config.json dict.

    Raises:
        UnsupportedModelError: the ``model_type`` is not a decoder jalapeno models.
        SpecError: a required field is missing or not a positive integer.
    """
    src = source or name
    if not isinstance(cfg, dict):
        raise SpecError(src, "config.json must hold a JSON object", "pass a Hugging Face config.json")
    mt = cfg.get("model_type")
    if "text_config" in cfg and mt not in SUPPORTED_MODEL_TYPES:
        raise UnsupportedModelError(
            f"{src}: model_type", f"{mt!r} is a multimodal wrapper",
            "pass the text backbone's config (the text_config object) as its own config.json")
    if mt not in SUPPORTED_MODEL_TYPES:
        raise UnsupportedModelError(
            f"{src}: model_type",
            f"architecture {mt!r} is not supported (only dense/MoE decoders with GQA, MHA or MLA)",
            f"use a config with model_type one of {', '.join(sorted(SUPPORTED_MODEL_TYPES))}")
    h = _req(cfg, "hidden_size", src)
    layers = _req(cfg, "num_hidden_layers", src)
    vocab = _req(cfg, "vocab_size", src)
    heads = _req(cfg, "num_attention_heads", src)
    kv_heads = _opt_int(cfg, "num_key_value_heads", src, heads) or heads
    if heads % kv_heads:
        raise SpecError(f"{src}: num_key_value_heads",
                        f"{kv_heads} does not divide num_attention_heads={heads}",
                        "use a KV head count that divides the query head count")

    # ---- attention ----
    if mt in _MLA_TYPES:
        attn = AttentionSpec(
            kind="mla", num_heads=heads, num_kv_heads=heads,
            q_lora_rank=_opt_int(cfg, "q_lora_rank", src),
            kv_lora_rank=_req(cfg, "kv_lora_rank", src),
            qk_nope_dim=_req(cfg, "qk_nope_head_dim", src),
            qk_rope_dim=_req(cfg, "qk_rope_head_dim", src),
            v_head_dim=_req(cfg, "v_head_dim", src),
            index_heads=_opt_int(cfg, "index_n_heads", src),
            index_head_dim=_opt_int(cfg, "index_head_dim", src),
            index_topk=_opt_int(cfg, "index_topk", src),
        )
        if mt == "deepseek_v32" and not attn.index_topk:
            raise SpecError(f"{src}: index_topk", "DeepSeek-V3.2 needs its DSA indexer fields",
                            "add index_n_heads, index_head_dim and index_topk")
    else:
        head_dim = _opt_int(cfg, "head_dim", src) or h // heads
        windows: tuple[int, ...] = ()
        lt = cfg.get("layer_types")
        sw = cfg.get("sliding_window")
        if lt is not None:
            if not isinstance(lt, list) or len(lt) != layers:
                raise SpecError(f"{src}: layer_types", f"must list one type per layer ({layers})",
                                "give num_hidden_layers entries of full_attention/sliding_attention")
            bad = [t for t in lt if t not in ("full_attention", "sliding_attention")]
            if bad:
                raise SpecError(f"{src}: layer_types", f"unknown layer type {bad[0]!r}",
                                "use full_attention or sliding_attention")
            if "sliding_attention" in lt and not sw:
                raise SpecError(f"{src}: sliding_window", "sliding layers need a window",
                                "set sliding_window to the window length in tokens")
            windows = tuple(int(sw) if t == "sliding_attention" else 0 for t in lt)
        elif sw and cfg.get("use_sliding_window", mt == "mistral"):
            windows = (int(sw),) * layers
        attn = AttentionSpec(
            kind="gqa" if kv_heads < heads else "mha", num_heads=heads, num_kv_heads=kv_heads,
            head_dim=head_dim, bias=bool(cfg.get("attention_bias", mt == "qwen2")),
            sinks=mt == "gpt_oss", qk_norm=mt in ("qwen3", "qwen3_moe"), windows=windows,
        )

    # ---- FFN / MoE ----
    moe: MoESpec | None = None
    dense_inter = _opt_int(cfg, "intermediate_size", src)
    dense_layers: tuple[int, ...] = tuple(range(layers))
    n_exp = cfg.get("n_routed_experts") or cfg.get("num_local_experts") or cfg.get("num_experts")
    if n_exp:
        src_key = ("n_routed_experts" if "n_routed_experts" in cfg else
                   "num_local_experts" if "num_local_experts" in cfg else "num_experts")
        n_exp = _req(cfg, src_key, src)
        top_k = _req(cfg, "num_experts_per_tok" if "num_experts_per_tok" in cfg
                     else "experts_per_token", src)
        if top_k > n_exp:
            raise SpecError(f"{src}: num_experts_per_tok", f"top-k {top_k} exceeds {n_exp} experts",
                            "set num_experts_per_tok <= the number of experts")
        if mt == "gpt_oss":
            expert_inter = _req(cfg, "intermediate_size", src)
            dense_inter = 0
        elif mt == "mixtral":
            expert_inter = _req(cfg, "intermediate_size", src)
            dense_inter = 0
        else:
            expert_inter = _req(cfg, "moe_intermediate_size", src)
        n_shared = _opt_int(cfg, "n_shared_experts", src)
        shared_inter = n_shared * expert_inter
        if mt in _MLA_TYPES:
            first_dense = _opt_int(cfg, "first_k_dense_replace", src)
            freq = _opt_int(cfg, "moe_layer_freq", src, 1) or 1
            dense_layers = tuple(i for i in range(layers)
                                 if i < first_dense or (i - first_dense) % freq)
            if dense_layers:
                dense_inter = _req(cfg, "intermediate_size", src)
        elif mt == "qwen3_moe":
            only = cfg.get("mlp_only_layers") or []
            step = _opt_int(cfg, "decoder_sparse_step", src, 1) or 1
            dense_layers = tuple(i for i in range(layers) if i in only or (i + 1) % step)
        else:
            dense_layers = ()
        moe = MoESpec(num_experts=n_exp, top_k=top_k, num_shared=n_shared,
                      expert_intermediate=expert_inter, shared_intermediate=shared_inter,
                      expert_bias=mt == "gpt_oss",
                      router_bias=mt == "gpt_oss" or cfg.get("topk_method") == "noaux_tc")
    elif mt in _GQA_MOE_TYPES:
        raise SpecError(f"{src}: num_experts", f"model_type {mt} is MoE but no expert count found",
                        "add num_experts / num_local_experts to the config")
    else:
        dense_inter = _req(cfg, "intermediate_size", src)
    return ModelSpec(
        name=name, model_type=mt, hidden_size=h, num_layers=layers, vocab_size=vocab,
        attention=attn, dense_intermediate=dense_inter, dense_layers=dense_layers, moe=moe,
        mtp_layers=_opt_int(cfg, "num_nextn_predict_layers", src),
        tie_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        default_precision=_default_precision(cfg),
        max_context=_opt_int(cfg, "max_position_embeddings", src, 0),
        source=source,
    )


def load_model_file(path: Path, name: str | None = None) -> ModelSpec:
    """Read a config.json file into a :class:`ModelSpec`.

    Raises:
        SpecError: the file is missing, not JSON, or a field is wrong (the message names it).
        UnsupportedModelError: the architecture is not supported.
    """
    path = Path(path)
    if not path.is_file():
        raise SpecError(str(path), "file not found", "pass a model name from `jalapeno models list` "
                        "or the path of a config.json")
    try:
        cfg = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise SpecError(str(path), f"malformed JSON at line {e.lineno} column {e.colno}: {e.msg}",
                        "fix the JSON syntax of the config file") from None
    except UnicodeDecodeError:
        raise SpecError(str(path), "not a text file", "pass a JSON config.json") from None
    stem = path.stem if path.stem != "config" else path.parent.name
    return model_from_config(cfg, name or stem, str(path))
