"""What an engine's start-up memory split leaves for its KV cache, and the longest request vLLM admits with it.

Split from :mod:`jalapeno.deploy.memory_fit` (round 39, module budget): the memory fit prices a deployment's need
per chip against usable HBM; this module reads an engine start-up profile (:mod:`jalapeno.deploy.engine_memory`)
as the engine logs it: every term of the split (:func:`engine_memory_breakdown`: budget, torch peak, non-torch,
weights, KV pool; SGLang's pool in tokens) and vLLM's "estimated maximum model length" (:func:`vllm_max_model_len`,
from :func:`vllm_kv_need_bytes`). ``predict`` and ``step`` print it (``--engine-memory``).
"""

from __future__ import annotations

import math

from jalapeno.deploy.engine_memory import EngineMemory
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.memory_fit import (
    kv_token_layer_bytes,
    engine_reserve_terms,
    kv_bytes_per_seq_per_chip,
    weight_bytes_per_chip,
)
from jalapeno.deploy.mtp import MTP, resident_draft_modules
from jalapeno.deploy.sharding import sharding
from jalapeno.specs.formats import Precision
from jalapeno.specs.hardware import System
from jalapeno.specs.model import ModelSpec

#: vLLM's default KV block size on CUDA (vllm/config/cache.py: block_size 16).
VLLM_BLOCK_TOKENS = 16


def vllm_kv_need_bytes(
    model: ModelSpec,
    layout: Layout,
    precision: Precision,
    max_model_len: int,
    max_num_batched_tokens: int,
    block: int = VLLM_BLOCK_TOKENS,
) -> float:
    """KV bytes per chip vLLM requires to admit one request of ``max_model_len`` tokens.

    vLLM v1/kv_cache_interface.py ``max_memory_usage_bytes``, summed over layers: a full-attention
    layer needs ⌈L/block⌉ pages; a sliding-window layer of window w needs ⌈min(w − 1 + T, L)/block⌉
    + 1 pages (T = ``max_num_batched_tokens``: the window plus one chunk, + 1 for a window that does
    not start on a block boundary). The hybrid allocator gives every layer group the same page size
    and shares one block pool (kv_cache_utils.py), so bytes add over layers.
    """
    per_tok = kv_token_layer_bytes(model, layout, precision)
    need = 0
    for w in model.layer_windows:
        pages = (
            math.ceil(min(w - 1 + max_num_batched_tokens, max_model_len) / block) + 1
            if w
            else math.ceil(max_model_len / block)
        )
        need += pages * block
    return need * per_tok * sharding(model, layout).layer_share


def vllm_max_model_len(
    model: ModelSpec, layout: Layout, precision: Precision, pool_bytes: float, max_num_batched_tokens: int
) -> int:
    """The longest request vLLM admits with a KV pool of ``pool_bytes`` per chip (its start-up
    "estimated maximum model length": a binary search of :func:`vllm_kv_need_bytes`, capped by the
    model's context); 0 when not even one token fits.

    >>> # gpt-oss-120b TP1, BF16 KV, T = 1024, pool 1.71 GiB (vLLM issue #27508):
    >>> # (1.71·2^30 − 18·73·16·2048 B) / (18·2048 B per token) → about 48.6K tokens
    """
    lo, hi = 0, int(model.max_context) or 1 << 24
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if vllm_kv_need_bytes(model, layout, precision, mid, max_num_batched_tokens) <= pool_bytes:
            lo = mid
        else:
            hi = mid - 1
    return lo


def engine_memory_breakdown(
    model: ModelSpec,
    system: System,
    layout: Layout,
    precision: Precision,
    engine: EngineMemory,
    memory_fraction: float | None = None,
    mtp: MTP | None = None,
) -> dict:
    """Every term of an engine's start-up memory split per chip, and what it leaves for the KV cache.

    Returns:
        dict: the :func:`engine_reserve_terms` (bytes), ``weights`` (bytes, the version's MoE
        layout), ``kv_pool`` (bytes; negative: the engine does not start), ``max_model_len`` (the
        longest request vLLM admits, tokens; 0 when the pool is negative), ``sampler_rows``,
        ``max_num_batched_tokens``, ``profile`` (name); an SGLang profile gives
        ``max_total_tokens`` (the pool in tokens, as SGLang logs it) instead of the vLLM terms.
    """
    t = engine_reserve_terms(model, system, layout, engine, memory_fraction)
    w = weight_bytes_per_chip(model, layout, precision, resident_draft_modules(model, mtp), system, engine)
    pool = t["budget"] - w - t["torch_peak"] - t["non_torch"]
    if engine.rule == "sglang":  # SGLang logs max_total_num_tokens = pool // cell size
        cell = float(kv_bytes_per_seq_per_chip(model, layout, precision, 1.0))
        return {
            **t,
            "weights": w,
            "kv_pool": pool,
            "profile": engine.name,
            "max_total_tokens": int(max(pool, 0.0) // cell),
        }
    return {
        **t,
        "weights": w,
        "kv_pool": pool,
        "profile": engine.name,
        "sampler_rows": engine.sampler_rows(),
        "max_num_batched_tokens": engine.max_num_batched_tokens,
        "max_model_len": vllm_max_model_len(model, layout, precision, pool, engine.max_num_batched_tokens)
        if pool > 0
        else 0,
    }
