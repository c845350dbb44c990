"""Memory fit of a deployment: weights + KV cache + activations per chip against usable HBM.

Per chip, for the heaviest pipeline stage:
- weights: each module's elements per chip (see :func:`weight_elems_per_chip`) x its stored
  bytes per element (block scales included);
- KV cache: MLA's latent has no head dimension, so every TP rank of an attention group keeps
  the full latent of that group's sequences (attention DP shards sequences instead); GQA KV
  splits over TP down to one KV head per rank and replicates beyond (DESIGN.md §7); context
  parallelism splits every sequence's tokens, hence its KV, over the ``cp`` ranks (1/cp each);
- activations: tokens in flight per step x (8·h + 4·I_local) bf16 values (hidden-state
  buffers, residual, norms, FFN intermediate) + fp32 logits for sampled rows; an estimate;
- MXFP4 routed experts at the layout the engine's MoE kernel gives them on the chip (padding,
  bias dtype; see :mod:`jalapeno.deploy.engine_layout`), biases in their checkpoint BF16;
- a reserve of (1 − memory_fraction) of usable HBM (workspaces, CUDA graphs, fragmentation):
  ``memory_fraction`` is the engine's share (vLLM ``gpu_memory_utilization``, SGLang
  ``mem_fraction_static``); None takes the efficiency set's 1 − ``memory_reserve_fraction``.
A deployment whose need exceeds usable HBM is infeasible, and the reason names the biggest part.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jalapeno.deploy.deployment import MTP, query_len, resident_draft_modules
from jalapeno.deploy.engine_layout import expert_bytes, expert_layout
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.sharding import sharding
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import Precision
from jalapeno.specs.hardware import System
from jalapeno.specs.model import ModelSpec


def weight_elems_per_chip(model: ModelSpec, layout: Layout, draft_modules: int = 0) -> dict[str, float]:
    """Resident weight elements per chip by module, for the heaviest pipeline stage.

    Args:
        draft_modules: MTP modules kept resident for speculative decoding (0 = off). Each is
            sharded like one MoE layer of the model (its ``mtp_params`` times the per-chip share of
            a MoE layer's weights) and counted in its modules.

    Returns:
        dict module → elements: attention, dense_ffn, routed_experts, shared_experts, router,
        embedding, lm_head. Layers are split evenly over ``pp`` (ceil), the embedding sits on the
        first stage and the head on the last (both on one chip when pp = 1).
    """
    a, h, tp = model.attention, model.hidden_size, layout.tp
    sh = sharding(model, layout)
    per_stage = sh.layer_share
    if a.kind == "mla":
        repl = h * a.q_lora_rank + a.q_lora_rank + h * (a.kv_lora_rank + a.qk_rope_dim) + a.kv_lora_rank
        if a.has_indexer:
            repl += (a.q_lora_rank * a.index_heads * a.index_head_dim + h * a.index_head_dim
                     + 2 * a.index_head_dim + h * a.index_heads)
        attn = repl + (model.attention_params() - repl) / tp
    else:
        d = a.head_dim
        kvr = sh.kv_heads_per_rank
        attn = 2 * a.num_heads * d * h / tp + 2 * h * kvr * d
        attn += (model.attention_params() - 2 * a.num_heads * d * h - 2 * h * a.num_kv_heads * d) / tp
    n_dense, n_moe = model.num_dense_layers, model.num_moe_layers
    out = {
        "attention": attn * model.num_layers * per_stage,
        "dense_ffn": model.dense_ffn_params() * n_dense * per_stage / tp,
        "routed_experts": 0.0,
        "shared_experts": 0.0,
        "router": 0.0,
    }
    if model.moe:
        out["routed_experts"] = sh.experts_per_rank * model.expert_params() / sh.moe_tp * n_moe * per_stage
        out["shared_experts"] = model.shared_expert_params() * n_moe * per_stage / tp
        out["router"] = model.router_params() * n_moe * per_stage
    if draft_modules and model.mtp_layers and model.moe and n_moe:
        layer_chip = (attn + out["routed_experts"] / (n_moe * per_stage) + out["shared_experts"]
                      / (n_moe * per_stage) + model.router_params())
        share = layer_chip / model.moe_layer_params()
        out["routed_experts"] += draft_modules * model.mtp_params * share
    emb = model.embedding_params() / tp
    head = model.lm_head_params() / tp
    if layout.pp == 1:
        out["embedding"], out["lm_head"] = emb, head
    elif emb >= head:
        out["embedding"], out["lm_head"] = emb, 0.0
    else:
        out["embedding"], out["lm_head"] = 0.0, head
    return out


#: Router (gate) weights stay in BF16 in every released checkpoint (gpt-oss
#: modules_to_not_convert lists mlp.router; DeepSeek-V3 keeps the gate unquantised).
ROUTER_BYTES = 2.0


def weight_bytes_per_chip(model: ModelSpec, layout: Layout, precision: Precision,
                          draft_modules: int = 0, system: System | None = None) -> float:
    """Resident weight bytes per chip (heaviest stage), with each module's storage format.

    Routed experts in a format with 1-D group scales along K (mxfp4, nvfp4, int4: block <= 128)
    are counted per expert by :func:`~jalapeno.deploy.engine_layout.expert_bytes`: values, scales
    and biases (BF16 in the checkpoint, fp32 where the engine converts them), padded as the
    engine's kernel lays them out on ``system``'s chip (None: the checkpoint layout).
    """
    elems = weight_elems_per_chip(model, layout, draft_modules)
    total = 0.0
    for mod, n in elems.items():
        total += n * (ROUTER_BYTES if mod == "router" else precision.weight_bytes(mod))
    fmt = precision.modules["routed_experts"].weight
    if model.moe and model.num_moe_layers and 0 < fmt.block_elems <= 128:
        sh = sharding(model, layout)
        main = sh.experts_per_rank * model.expert_params() / sh.moe_tp * model.num_moe_layers * sh.layer_share
        stored = (sh.experts_per_rank * model.num_moe_layers * sh.layer_share
                  * expert_bytes(model, fmt, expert_layout(system, fmt), sh.moe_tp))
        total += stored - main * fmt.bytes_per_elem
    return total


def kv_bytes_per_seq_per_chip(model: ModelSpec, layout: Layout, precision: Precision,
                              context_tokens) -> np.ndarray:
    """KV-cache bytes one sequence of ``context_tokens`` occupies on each chip that holds it.

    Sliding-window layers hold at most ``window`` tokens; layers are split over ``pp``. Bytes per
    token per layer follow the precision's KV-cache format (specs/kv_cache.py): MLA latent + rope
    key, or K and V of the KV heads this rank holds, scales and wider parts included.

    >>> # Qwen3-235B-A22B on TP4, BF16 KV: 94 layers x 1 KV head x 128 x 2 (K, V) x 2 B
    >>> # = 48,128 B per token per GPU (tests/unit/test_kv_formats.py)
    """
    ctx = np.asarray(context_tokens, dtype=float)
    a = model.attention
    kv = precision.kv_cache
    if a.kind == "mla":
        per_layer_tok = kv.mla_token_bytes(a.kv_lora_rank, a.qk_rope_dim)
    else:
        per_layer_tok = kv.gqa_token_bytes(sharding(model, layout).kv_heads_per_rank, a.head_dim)
    total = np.zeros_like(ctx)
    windows, counts = np.unique(np.asarray(model.layer_windows), return_counts=True)
    for w, cnt in zip(windows.tolist(), counts.tolist()):
        held = np.minimum(ctx, w) if w else ctx
        total = total + cnt * held * per_layer_tok
    if a.has_indexer:
        total = total + model.num_layers * ctx * (a.index_head_dim + 4)
    return total * sharding(model, layout).layer_share


def activation_bytes_per_chip(model: ModelSpec, layout: Layout, tokens_per_step,
                              sampled_rows=None) -> np.ndarray:
    """Activation workspace per chip for a step of ``tokens_per_step`` tokens (whole instance).

    ``sampled_rows``: rows whose logits are computed (decode rows + one per finishing prefill);
    default: every token (a conservative bound).
    """
    t = np.asarray(tokens_per_step, dtype=float) / (layout.dp * layout.cp)
    inter = model.dense_intermediate / layout.tp
    if model.moe:
        inter = max(inter, model.moe.top_k * model.moe.expert_intermediate / sharding(model, layout).moe_tp)
    rows = t if sampled_rows is None else np.asarray(sampled_rows, dtype=float) / layout.dp
    return t * (8 * model.hidden_size + 4 * inter) * 2 + rows * model.vocab_size / layout.tp * 4


def usable_fraction(eff: Efficiency, memory_fraction: float | None = None) -> float:
    """Share of usable HBM the engine fills with weights + KV + activations.

    ``memory_fraction`` (a deployment setting) when given, else 1 − the efficiency set's
    ``memory_reserve_fraction`` (1 − 0.04 = 0.96 by default). Grounding of the default: vLLM's default
    ``gpu_memory_utilization`` 0.9 applies to the memory the driver reports — 81,559 MiB on an
    H100 80GB (nvidia-smi, vLLM issue #27508) and 183,359 MiB on a B200 (nvidia-smi,
    TensorRT-LLM issue #10278): 0.9 × 85.52 GB = 76.97 GB ≈ 0.96 × 80 GB = 76.80 GB and
    0.9 × 192.27 GB = 173.0 GB ≈ 0.96 × 180 GB = 172.8 GB (jalapeno's usable HBM is the nominal
    or MLPerf figure in GB).
    """
    return 1 - eff.memory_reserve_fraction if memory_fraction is None else memory_fraction


@dataclass(frozen=True, slots=True)
class MemoryFit:
    """Per-chip memory of a deployment at given batches (arrays of shape (N,)).

    Attributes:
        weights_bytes: resident weights per chip (scalar).
        kv_bytes: KV cache of the resident sequences per chip.
        activation_bytes: activation workspace per chip.
        reserve_bytes: held back ((1 − memory fraction) of usable; :func:`usable_fraction`).
        usable_bytes: the chip's usable HBM.
        fits: need <= usable.
        reason: '' where it fits, else which part overflows and the fix.
    """

    weights_bytes: float
    kv_bytes: np.ndarray
    activation_bytes: np.ndarray
    reserve_bytes: float
    usable_bytes: float
    fits: np.ndarray
    reason: np.ndarray

    @property
    def free_for_kv_bytes(self) -> np.ndarray:
        return self.usable_bytes - self.reserve_bytes - self.weights_bytes - self.activation_bytes


def memory_fit(model: ModelSpec, system: System, layout: Layout, precision: Precision,
               resident_seqs, context_tokens, tokens_per_step, eff: Efficiency,
               sampled_rows=None, mtp: MTP | None = None, memory_fraction: float | None = None) -> MemoryFit:
    """Check weights + KV + activations per chip against usable HBM.

    Args:
        resident_seqs: (N,) sequences resident in the whole instance (spread over ``dp``).
        context_tokens: (N,) their mean context length in tokens (what the KV cache holds).
        tokens_per_step: (N,) tokens processed per step by the instance.
        eff: the efficiency set (its ``memory_reserve_fraction``).
        sampled_rows: (N,) rows whose logits are computed (default: all tokens).
        mtp: MTP setting; its draft module is resident (see :func:`weight_elems_per_chip`).
        memory_fraction: the engine's share of usable HBM (see :func:`usable_fraction`).

    Sequences are a steady-state average, so fractional counts are kept (no rounding up).
    """
    usable = system.chip.hbm_usable_bytes
    reserve = usable * (eff.memory_reserve_fraction if memory_fraction is None else 1 - memory_fraction)
    w = weight_bytes_per_chip(model, layout, precision, resident_draft_modules(model, mtp), system)
    seqs = np.asarray(resident_seqs, dtype=float) / layout.dp
    kv = seqs * kv_bytes_per_seq_per_chip(model, layout, precision, context_tokens) / layout.cp
    act = activation_bytes_per_chip(model, layout, tokens_per_step, sampled_rows)
    need = w + kv + act + reserve
    fits = need <= usable
    reason = np.full(fits.shape, "", dtype=object)
    if not fits.all():
        gib = 2.0**30
        if w + reserve > usable:
            msg = (f"weights need {w / gib:.1f} GiB per chip, more than the {(usable - reserve) / gib:.1f} GiB "
                   f"the engine may fill ({usable / gib:.1f} GiB usable less a {reserve / gib:.1f} GiB reserve); "
                   f"shard wider (more TP/EP/PP), use a smaller precision or raise the memory fraction")
            reason[~fits] = msg
        else:
            reason[~fits] = (f"KV cache + activations exceed the {(usable - reserve - w) / gib:.1f} GiB "
                             f"left after weights; lower the concurrency or shard wider")
    return MemoryFit(w, kv, act, reserve, usable, fits, reason)


def kv_capacity_seqs(model: ModelSpec, system: System, layout: Layout, precision: Precision,
                     context_tokens, tokens_per_step, eff: Efficiency, sampled_rows=None,
                     mtp: MTP | None = None, clip: bool = True,
                     memory_fraction: float | None = None) -> np.ndarray:
    """Most sequences of ``context_tokens`` the instance's KV cache holds (0 if weights don't fit).

    Returns an array (N,) of sequences per instance (dp groups x per-group capacity), fractional
    (a steady-state average, consistent with :func:`memory_fit`).
    """
    usable = system.chip.hbm_usable_bytes
    free = (usable * usable_fraction(eff, memory_fraction)
            - weight_bytes_per_chip(model, layout, precision, resident_draft_modules(model, mtp), system)
            - activation_bytes_per_chip(model, layout, tokens_per_step, sampled_rows))
    per_seq = kv_bytes_per_seq_per_chip(model, layout, precision, np.maximum(context_tokens, 1))
    seqs = free / per_seq * layout.dp * layout.cp
    return np.maximum(seqs, 0) if clip else seqs


def decode_batch_cap(model: ModelSpec, system: System, layout: Layout, precision: Precision,
                     context_tokens: float, eff: Efficiency, mtp: MTP | None = None,
                     prefill_tokens: float = 0.0, prefill_seqs_per_decode: float = 0.0,
                     memory_fraction: float | None = None) -> float:
    """Largest decode batch B (whole instance) whose step fits in memory.

    The step holds B decoding sequences plus B·g + 1 prefilling ones (g = prefill sequences per
    decode sequence, the +1 for a chunk in flight when ``prefill_tokens`` > 0), all at
    ``context_tokens``, with activations for B·q + prefill tokens (logits for the B·q decode rows;
    q = 1, or 1 + k drafts with MTP, whose module is also resident). Capacity falls linearly with B through the activations, so
    seqs(B) = S0 − S1·B and B·(1 + g) + 1 = seqs(B) solves in closed form.
    """
    ctx = np.array([float(context_tokens)])
    extra = 1.0 if prefill_tokens > 0 else 0.0
    q = query_len(mtp)

    def seqs(b: float) -> float:
        tokens = np.array([b * q + prefill_tokens])
        rows = np.array([b * q + extra])
        free = kv_capacity_seqs(model, system, layout, precision, ctx, tokens, eff, rows, mtp, clip=False,
                                memory_fraction=memory_fraction)
        return float(free[0])

    s0 = seqs(0.0)
    s1 = (s0 - seqs(1024.0)) / 1024.0
    b = (s0 - extra) / (1.0 + prefill_seqs_per_decode + s1)
    return max(b, 0.0) * (1 - 1e-9)
