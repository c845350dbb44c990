"""How many sequences an instance's KV cache holds, and the batch caps that follow from the memory fit.

deploy/memory_fit.py prices a deployment's memory per chip (weights, KV cache, activations, the engine's
reserve); this module inverts it: :func:`kv_capacity_seqs` (sequences of a context that fit once weights,
activations and the reserve are taken), :func:`decode_batch_cap` (the largest decode batch whose step fits,
in closed form), :func:`kv_pool_bytes` (the KV pool an engine memory profile sizes at start-up) and
:func:`admission_batch_cap` (the running requests an engine's token-reserving admission rule keeps: SGLang).
Per instance, fractional (steady-state averages, consistent with deploy/memory_fit.memory_fit).
"""

from __future__ import annotations

import math

import numpy as np

from jalapeno.deploy.engine_memory import EngineMemory
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.memory_fit import (
    activation_bytes_per_chip,
    engine_reserve_terms,
    kv_bytes_per_seq_per_chip,
    usable_fraction,
    weight_bytes_per_chip,
)
from jalapeno.deploy.mtp import MTP, query_len, resident_draft_modules
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import Precision
from jalapeno.specs.hardware import System
from jalapeno.specs.model import ModelSpec


def kv_capacity_seqs(
    model: ModelSpec,
    system: System,
    layout: Layout,
    precision: Precision,
    context_tokens,
    tokens_per_step,
    eff: Efficiency,
    sampled_rows=None,
    mtp: MTP | None = None,
    clip: bool = True,
    memory_fraction: float | None = None,
    engine: EngineMemory | None = None,
) -> np.ndarray:
    """Most sequences of ``context_tokens`` the instance's KV cache holds (0 if weights don't fit).

    Returns an array (N,) of sequences per instance (dp groups x per-group capacity), fractional
    (a steady-state average, consistent with :func:`memory_fit`). With ``engine``, the pool is
    the profile's (:func:`kv_pool_bytes`), the same at every step.
    """
    if engine is not None:
        free = kv_pool_bytes(model, system, layout, precision, engine, memory_fraction, mtp) + 0.0 * np.asarray(
            tokens_per_step, dtype=float
        )
    else:
        usable = system.chip.hbm_usable_bytes
        free = (
            usable * usable_fraction(eff, memory_fraction)
            - weight_bytes_per_chip(model, layout, precision, resident_draft_modules(model, mtp), system)
            - activation_bytes_per_chip(model, layout, tokens_per_step, sampled_rows)
        )
    per_seq = kv_bytes_per_seq_per_chip(model, layout, precision, np.maximum(context_tokens, 1))
    seqs = free / per_seq * layout.dp * layout.cp
    return np.maximum(seqs, 0) if clip else seqs


def decode_batch_cap(
    model: ModelSpec,
    system: System,
    layout: Layout,
    precision: Precision,
    context_tokens: float,
    eff: Efficiency,
    mtp: MTP | None = None,
    prefill_tokens: float = 0.0,
    prefill_seqs_per_decode: float = 0.0,
    memory_fraction: float | None = None,
    engine: EngineMemory | None = None,
) -> float:
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
        free = kv_capacity_seqs(
            model,
            system,
            layout,
            precision,
            ctx,
            tokens,
            eff,
            rows,
            mtp,
            clip=False,
            memory_fraction=memory_fraction,
            engine=engine,
        )
        return float(free[0])

    s0 = seqs(0.0)
    s1 = (s0 - seqs(1024.0)) / 1024.0
    b = (s0 - extra) / (1.0 + prefill_seqs_per_decode + s1)
    return max(b, 0.0) * (1 - 1e-9)


def kv_pool_bytes(
    model: ModelSpec,
    system: System,
    layout: Layout,
    precision: Precision,
    engine: EngineMemory,
    memory_fraction: float | None = None,
    mtp: MTP | None = None,
) -> float:
    """The KV pool per chip an engine sizes at start-up: budget − weights − torch peak − non-torch.

    Negative when the weights and profiled terms exceed the budget (the engine refuses to start).
    """
    t = engine_reserve_terms(model, system, layout, engine, memory_fraction)
    w = weight_bytes_per_chip(model, layout, precision, resident_draft_modules(model, mtp), system, engine)
    return t["budget"] - w - t["torch_peak"] - t["non_torch"]


def admission_batch_cap(
    model: ModelSpec,
    system: System,
    layout: Layout,
    precision: Precision,
    engine: EngineMemory,
    isl: float,
    osl: float,
    memory_fraction: float | None = None,
    mtp: MTP | None = None,
) -> float:
    """Most running requests (whole instance) an engine with a token-reserving admission rule
    keeps, at mean prompt ``isl`` and output ``osl`` tokens (inf for a profile without one).

    With (per running request, for the one admitted) tokens (a, h) of
    deploy/engine_memory.EngineMemory.admission_tokens, per attention group

        n = (pool − kv(h)) / kv(a)

    a mean-value count (the spread of random lengths is not modelled). Worked number (H200,
    DeepSeek-R1 FP8 TP8, SGLang at --mem-fraction-static 0.82, BF16 MLA latent 70,272 B per token):
    pool 137.90 x 0.82 − 79.29 GiB = 33.79 GiB = 516,256 tokens; 8k1k under ``ignore_eos``
    admission (a = ISL + OSL = 7,373 + 921.6): n = 516,256 / 8,294.6 = 62.2.
    """
    per, head = engine.admission_tokens(isl, osl)
    if per <= 0:
        return math.inf
    pool = kv_pool_bytes(model, system, layout, precision, engine, memory_fraction, mtp)
    need = float(kv_bytes_per_seq_per_chip(model, layout, precision, head)) if head > 0 else 0.0
    if pool <= need:
        return 0.0
    per_seq = float(kv_bytes_per_seq_per_chip(model, layout, precision, per))
    return (pool - need) / per_seq * layout.dp * layout.cp
