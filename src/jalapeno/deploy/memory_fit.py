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

The KV capacity and the batch caps that follow from the fit (``kv_capacity_seqs``, ``decode_batch_cap``,
``kv_pool_bytes``, ``admission_batch_cap``) are deploy/kv_capacity.py's (round 53); they stay importable from here.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from jalapeno.deploy.mtp import MTP, resident_draft_modules
from jalapeno.deploy.engine_layout import expert_bytes, expert_layout
from jalapeno.deploy.engine_memory import EngineMemory, get_engine_memory
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.sharding import sharding
from jalapeno.errors import SpecError
from jalapeno.moved import moved_names
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import Precision
from jalapeno.specs.fp4_checkpoint import O_PROJ_MODULE, checkpoint_precision
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
            repl += (
                a.q_lora_rank * a.index_heads * a.index_head_dim
                + h * a.index_head_dim
                + 2 * a.index_head_dim
                + h * a.index_heads
            )
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
        layer_chip = (
            attn
            + out["routed_experts"] / (n_moe * per_stage)
            + out["shared_experts"] / (n_moe * per_stage)
            + model.router_params()
        )
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


def weight_bytes_per_chip(
    model: ModelSpec,
    layout: Layout,
    precision: Precision,
    draft_modules: int = 0,
    system: System | None = None,
    engine: EngineMemory | None = None,
) -> float:
    """Resident weight bytes per chip (heaviest stage), with each module's storage format.

    Routed experts in a format with 1-D group scales along K (mxfp4, nvfp4, int4: block <= 128)
    are counted per expert by :func:`~jalapeno.deploy.engine_layout.expert_bytes`: values, scales
    and biases (BF16 in the checkpoint, fp32 where the engine converts them), padded as the
    engine's kernel lays them out on ``system``'s chip (None: the checkpoint layout); ``engine``
    (an engine memory profile) may name the layout its version uses on that chip instead.
    """
    precision = checkpoint_precision(model.name, precision)  # the FP4 checkpoint's own formats, when on
    elems = weight_elems_per_chip(model, layout, draft_modules)
    total = 0.0
    for mod, n in elems.items():
        total += n * (ROUTER_BYTES if mod == "router" else precision.weight_bytes(mod))
    if (
        O_PROJ_MODULE in precision.modules and model.attention.kind == "mla"
    ):  # o_proj stored apart (specs/fp4_checkpoint)
        a = model.attention
        o_proj = (
            a.num_heads
            * a.v_head_dim
            * model.hidden_size
            / layout.tp
            * model.num_layers
            * sharding(model, layout).layer_share
        )
        total += o_proj * (precision.weight_bytes(O_PROJ_MODULE) - precision.weight_bytes("attention"))
    fmt = precision.modules["routed_experts"].weight
    if model.moe and model.num_moe_layers and 0 < fmt.block_elems <= 128:
        sh = sharding(model, layout)
        main = sh.experts_per_rank * model.expert_params() / sh.moe_tp * model.num_moe_layers * sh.layer_share
        stored = (
            sh.experts_per_rank
            * model.num_moe_layers
            * sh.layer_share
            * expert_bytes(model, fmt, expert_layout(system, fmt, _engine_layout(engine, system)), sh.moe_tp)
        )
        total += stored - main * fmt.bytes_per_elem
    return total


def _engine_layout(engine: EngineMemory | None, system: System | None) -> str | None:
    return engine.moe_layout_for(system.chip) if engine is not None and system is not None else None


def kv_token_layer_bytes(model: ModelSpec, layout: Layout, precision: Precision) -> float:
    """KV-cache bytes one token takes in one attention layer on one chip, in bytes (float).

    MLA: the latent (``kv_lora_rank``) plus the rope key (``qk_rope_dim``), replicated on every
    rank; GQA/MHA: K and V of the KV heads this rank holds (``head_dim`` each). The element widths,
    scales and any wider parts come from ``precision.kv_cache`` (specs/kv_cache.py, docs/model.md
    §1.1). Shared by ``kv_bytes_per_seq_per_chip`` and deploy/engine_pool.py. Raises nothing itself.
    """
    a, kv = model.attention, precision.kv_cache
    if a.kind == "mla":
        return kv.mla_token_bytes(a.kv_lora_rank, a.qk_rope_dim)
    return kv.gqa_token_bytes(sharding(model, layout).kv_heads_per_rank, a.head_dim)


def kv_bytes_per_seq_per_chip(model: ModelSpec, layout: Layout, precision: Precision, context_tokens) -> np.ndarray:
    """KV-cache bytes one sequence of ``context_tokens`` occupies on each chip that holds it.

    Sliding-window layers hold at most ``window`` tokens; layers are split over ``pp``. Bytes per
    token per layer follow the precision's KV-cache format (specs/kv_cache.py): MLA latent + rope
    key, or K and V of the KV heads this rank holds, scales and wider parts included.

    >>> # Qwen3-235B-A22B on TP4, BF16 KV: 94 layers x 1 KV head x 128 x 2 (K, V) x 2 B
    >>> # = 48,128 B per token per GPU (tests/unit/test_kv_formats.py)
    """
    ctx = np.asarray(context_tokens, dtype=float)
    a = model.attention
    per_layer_tok = kv_token_layer_bytes(model, layout, precision)
    total = np.zeros_like(ctx)
    for w, cnt in model.window_counts:  # ascending windows (np.unique's order) and their layer counts
        held = np.minimum(ctx, w) if w else ctx
        total = total + cnt * held * per_layer_tok
    if a.has_indexer:
        total = total + model.num_layers * ctx * (a.index_head_dim + 4)
    return total * sharding(model, layout).layer_share


def activation_bytes_per_chip(model: ModelSpec, layout: Layout, tokens_per_step, sampled_rows=None) -> np.ndarray:
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


#: the engine memory profile whose default ``gpu_memory_utilization`` (a share of the driver-reported memory, 0.9:
#: data/engine_memory.toml, vllm-project/vllm v0.11.0) :func:`driver_share_as_usable` scales from
VLLM_PROFILE = "vllm-0.11"


def driver_share_as_usable(utilization: float, eff: Efficiency) -> float:
    """A vLLM ``--gpu-memory-utilization`` u (a share of the driver-reported memory) as a share of the catalog's
    usable HBM (``Deployment.memory_fraction``'s unit), for a deployment without an engine memory profile:
    (1 − ``memory_reserve_fraction``)·u / u₀, at most 1, u₀ the default of the :data:`VLLM_PROFILE` profile. The default
    reserve is grounded on that equivalence (:func:`usable_fraction`: 0.96 of the usable HBM ≈ vLLM's 0.9 of the
    driver-reported memory on H100 and B200, within 0.3%), so vLLM's default maps to the set's default and other
    values scale from it. Passing 0.9 as a share of usable HBM instead shrank a B200's pool by 0.06 × 180 GB.

    >>> e = Efficiency()
    >>> round(driver_share_as_usable(0.9, e), 4), round(driver_share_as_usable(0.8, e), 4), driver_share_as_usable(0.95, e)
    (0.96, 0.8533, 1.0)
    """
    default = get_engine_memory(VLLM_PROFILE).gpu_memory_utilization
    return min(1.0, (1 - eff.memory_reserve_fraction) * utilization / default)


def engine_reserve_terms(
    model: ModelSpec, system: System, layout: Layout, engine: EngineMemory, memory_fraction: float | None = None
) -> dict[str, float]:
    """An engine's start-up memory terms per chip (bytes; deploy/engine_memory.py, docs/model.md §7.1).

    Returns:
        dict: ``device_total`` (driver-reported; ``device_total_sourced`` 1.0/0.0), ``utilization``
        u (``memory_fraction`` or the profile's default), ``budget`` = total·u, ``reserve`` =
        total·(1 − u) (CUDA graphs, CUDA context: outside the budget), ``sampler`` (R·V·b_s,
        full vocabulary on every rank: vLLM gathers the logits before sampling), ``forward``
        (the activation estimate at ``max_num_batched_tokens`` tokens, no logits), ``torch_peak``
        = max(sampler, forward), ``non_torch``. An SGLang profile: ``budget`` = F·m with F
        ``free_before_load`` (``free_before_load_sourced``), ``reserve`` = total − F·m (context,
        activations, CUDA graphs) and the profiling terms 0.
    """
    measured = _is_logged_chip(system)
    total, sourced = engine.device_total(system.chip, measured)
    u = engine.gpu_memory_utilization if memory_fraction is None else memory_fraction
    if engine.rule == "sglang":  # pool = F·m − weights: the profile's only terms (engine_memory.py)
        free, free_sourced = engine.free_before_load(system.chip, measured)
        return {
            "device_total": total,
            "device_total_sourced": float(sourced),
            "utilization": u,
            "free_before_load": free,
            "free_before_load_sourced": float(free_sourced),
            "budget": free * u,
            "reserve": total - free * u,
            "sampler": 0.0,
            "forward": 0.0,
            "torch_peak": 0.0,
            "non_torch": 0.0,
        }
    sampler = engine.sampler_peak_bytes(model.vocab_size)
    forward = float(activation_bytes_per_chip(model, layout, engine.max_num_batched_tokens * layout.dp, 0.0))
    return {
        "device_total": total,
        "device_total_sourced": float(sourced),
        "utilization": u,
        "budget": total * u,
        "reserve": total * (1 - u),
        "sampler": sampler,
        "forward": forward,
        "torch_peak": max(sampler, forward),
        "non_torch": engine.non_torch_bytes,
    }


def _is_logged_chip(system: System) -> bool:
    """Whether an engine profile's logged figures (keyed by chip name) may stand for ``system``'s
    chip: a catalog system's, or a variant's whose chip keeps its root's name and HBM. A what-if
    with another capacity (``--set chip.hbm_capacity_gb=96`` on h200) or another name kept the
    root's driver-reported memory (a 140 GiB device on a 96 GB chip), silently; it now takes the
    profile's fallback (the catalog's usable HBM, less the assumed context for SGLang)."""
    o = system.origin
    if o is None or not o.root or (o.root == system.name and not o.overrides):  # the catalog system itself
        return True
    from jalapeno.specs.catalog import load_system

    root = load_system(o.root).chip
    chip = system.chip
    return (root.name, root.hbm_capacity_bytes, root.hbm_usable_bytes) == (
        chip.name,
        chip.hbm_capacity_bytes,
        chip.hbm_usable_bytes,
    )


@dataclass(frozen=True, slots=True)
class MemoryFit:
    """Per-chip memory of a deployment at given batches (arrays of shape (N,)).

    Attributes:
        weights_bytes: resident weights per chip (scalar).
        kv_bytes: KV cache of the resident sequences per chip.
        activation_bytes: activation workspace per chip.
        reserve_bytes: held back ((1 − memory fraction) of usable; :func:`usable_fraction`).
        usable_bytes: the chip's usable HBM (with an engine profile: its driver-reported memory).
        fits: need <= usable.
        reason: '' where it fits, else which part overflows and the fix.
        engine_terms: with an engine memory profile, :func:`engine_reserve_terms` (its
            ``torch_peak`` + ``non_torch`` are then the activation bytes); else None.
    """

    weights_bytes: float
    kv_bytes: np.ndarray
    activation_bytes: np.ndarray
    reserve_bytes: float
    usable_bytes: float
    fits: np.ndarray
    reason: np.ndarray
    engine_terms: dict | None = None

    @property
    def free_for_kv_bytes(self) -> np.ndarray:
        """Bytes per chip left for the KV cache: usable - reserve - weights - activations (negative: does not fit)."""
        return self.usable_bytes - self.reserve_bytes - self.weights_bytes - self.activation_bytes


#: the last :data:`_WEIGHTS_KEEP` :func:`weight_bytes_per_chip` (a pure function of its inputs) by (ids, layout,
#: drafts), oldest first: a fixed-concurrency solve fits each deployment on every one of its nine passes, every
#: deployment of the sweep in each pass; a hit needs the very same model, precision, system and engine
_WEIGHTS: OrderedDict = OrderedDict()  # the oldest leaves in O(1)
_WEIGHTS_KEEP = 256


def _weights(model, layout, precision, drafts, system, engine) -> float:
    key = (id(model), id(precision), id(system), id(engine), drafts, layout)
    hit = _WEIGHTS.get(key)  # the entry holds its objects: live ids
    if hit is not None and hit[0] is model and hit[1] is precision and hit[2] is system and hit[3] is engine:
        return hit[4]
    w = weight_bytes_per_chip(model, layout, precision, drafts, system, engine)
    _WEIGHTS.pop(key, None)
    _WEIGHTS[key] = (model, precision, system, engine, w)
    if len(_WEIGHTS) > _WEIGHTS_KEEP:
        _WEIGHTS.popitem(last=False)
    return w


def memory_fit(
    model: ModelSpec,
    system: System,
    layout: Layout,
    precision: Precision,
    resident_seqs,
    context_tokens,
    tokens_per_step,
    eff: Efficiency,
    sampled_rows=None,
    mtp: MTP | None = None,
    memory_fraction: float | None = None,
    engine: EngineMemory | None = None,
) -> MemoryFit:
    """Check weights + KV + activations per chip against usable HBM.

    Args:
        resident_seqs: (N,) sequences resident in the whole instance (spread over ``dp``).
        context_tokens: (N,) their mean context length in tokens (what the KV cache holds).
        tokens_per_step: (N,) tokens processed per step by the instance.
        eff: the efficiency set (its ``memory_reserve_fraction``).
        sampled_rows: (N,) rows whose logits are computed (default: all tokens).
        mtp: MTP setting; its draft module is resident (see :func:`weight_elems_per_chip`).
        memory_fraction: the engine's share of usable HBM (see :func:`usable_fraction`); with
            ``engine``, its share of the driver-reported memory (vLLM ``gpu_memory_utilization``).
        engine: an engine memory profile (deploy/engine_memory.py): the reserve is the profile's
            start-up terms (:func:`engine_reserve_terms`) instead of the step's own activations.

    Sequences are a steady-state average, so fractional counts are kept (no rounding up).
    """
    seqs = np.asarray(resident_seqs, dtype=float) / layout.dp
    kv = seqs * kv_bytes_per_seq_per_chip(model, layout, precision, context_tokens) / layout.cp
    w = _weights(model, layout, precision, resident_draft_modules(model, mtp), system, engine)
    terms = None
    if engine is None:
        usable = system.chip.hbm_usable_bytes
        reserve = usable * (eff.memory_reserve_fraction if memory_fraction is None else 1 - memory_fraction)
        act = activation_bytes_per_chip(model, layout, tokens_per_step, sampled_rows)
    else:
        terms = engine_reserve_terms(model, system, layout, engine, memory_fraction)
        usable, reserve = terms["device_total"], terms["reserve"]
        act = np.full(np.shape(kv), terms["torch_peak"] + terms["non_torch"])
    need = w + kv + act + reserve
    fits = need <= usable
    reason = np.full(fits.shape, "", dtype=object)
    if not fits.all():
        gib = 2.0**30
        if terms is not None and w + reserve + act.max() > usable:
            reason[~fits] = (
                f"weights {w / gib:.1f} GiB + the engine's profiled peak {act.max() / gib:.1f} GiB "
                f"exceed its {(usable - reserve) / gib:.1f} GiB budget ({engine.name}); raise the "
                "memory fraction, lower max_running / max_tokens_per_step, or shard wider"
            )
        elif w + reserve > usable:
            msg = (
                f"weights need {w / gib:.1f} GiB per chip, more than the {(usable - reserve) / gib:.1f} GiB "
                f"the engine may fill ({usable / gib:.1f} GiB usable less a {reserve / gib:.1f} GiB reserve); "
                f"shard wider (more TP/EP/PP), use a smaller precision or raise the memory fraction"
            )
            reason[~fits] = msg
        else:
            peak = (
                ""
                if terms is None
                else (
                    f" (activations: the engine's profiled peak {act.max() / gib:.1f} GiB, "
                    "set by its max_running / max_tokens_per_step)"
                )
            )
            reason[~fits] = (
                f"KV cache + activations exceed the {(usable - reserve - w) / gib:.1f} GiB "
                f"left after weights{peak}; lower the concurrency"
                f"{'' if terms is None else ', max_running / max_tokens_per_step'} or shard wider"
            )
    return MemoryFit(w, kv, act, reserve, usable, fits, reason, terms)


def free_fraction_as_memory_fraction(
    free_fraction: float,
    model: ModelSpec,
    system: System,
    layout: Layout,
    precision: Precision,
    tokens_per_rank: float,
    rows_per_rank: float,
) -> float:
    """An engine's KV share f of the memory free after load as a deployment ``memory_fraction`` m.

    TensorRT-LLM gives its KV pool f of the GPU memory free once the weights are loaded and its
    profiling step (``max_num_tokens``) has run (NVIDIA/TensorRT-LLM docs, "How to Change KV Cache
    Behavior": "The default for free_gpu_memory_fraction is 0.9, which means TensorRT LLM will try to
    allocate 90% of free GPU memory for KV cache"): KV = f·(M − W − A). :func:`memory_fit` leaves
    KV = m·M − W − A, so m = f + (1 − f)·(W + A)/M (capped at 1): M the chip's usable HBM, W the
    weights per chip (:func:`weight_bytes_per_chip`), A the activations of a step of
    ``tokens_per_rank`` tokens and ``rows_per_rank`` logit rows per attention rank
    (:func:`activation_bytes_per_chip`).

    Raises:
        SpecError: ``free_fraction`` outside (0, 1].
    """
    if isinstance(free_fraction, bool) or not isinstance(free_fraction, (int, float)) or not 0 < free_fraction <= 1:
        raise SpecError(
            "kv_free_fraction",
            f"must be in (0, 1], got {free_fraction!r}",
            "give the engine's free_gpu_memory_fraction, e.g. 0.9 (TensorRT-LLM's default)",
        )
    used = weight_bytes_per_chip(model, layout, precision, 0, system) + float(
        activation_bytes_per_chip(model, layout, tokens_per_rank * layout.dp, rows_per_rank * layout.dp)
    )
    return min(free_fraction + (1 - free_fraction) * used / system.chip.hbm_usable_bytes, 1.0)


#: the names split to deploy/kv_capacity.py (round 53), importable from here on first use (jalapeno/moved.py)
__getattr__ = moved_names(
    __name__,
    {"jalapeno.deploy.kv_capacity": ("kv_capacity_seqs", "decode_batch_cap", "kv_pool_bytes", "admission_batch_cap")},
)
