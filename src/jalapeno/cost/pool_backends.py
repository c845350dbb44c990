"""A pricer as a pool's engine runs it: the engine backends a pool names, each a wrapper around the pricer.

:func:`with_pool_backends` wraps a pricer once per pool (idempotent, :func:`pool_backends_key`,
:func:`applied_pool_key`): the routed experts by the pool's MoE backend (:func:`with_moe_backend`;
cost/moe_backend.py), the GQA decode attention by its attention backend (:func:`with_attention_backend`;
cost/attention_backend.py) and TensorRT-LLM's decode-attention block floor (:func:`with_decode_blocks`;
cost/decode_blocks.py), and the MoE token exchange the pool names. Each reads the system's own measurements
only where :func:`~jalapeno.cost.pricer.measured_here` allows. Split from cost/pricer.py (round 50, module
budget), which still exports every name here (``MOVED_TO_POOL_BACKENDS``, a module ``__getattr__``).
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace

import numpy as np

from jalapeno.cost.pricer import Pricer, _root, measured_here
from jalapeno.errors import SpecError


def with_moe_backend(pricer: Pricer, backend: str | None, model, layout) -> Pricer:
    """``pricer`` with the routed-expert ops of ``model`` on ``layout`` priced by the measured
    kernels of the engine MoE backend ``backend`` (cost/moe_backend.MeasuredMoePricer; data from
    specs/moe_backends.py), or, where the system measured the backend only at other shapes or layouts,
    by its fitted form (cost/moe_backend.KernelMoePricer, data/moe_backend_kernels.toml: vLLM's Marlin
    MoE on H100; TensorRT-LLM's Triton MoE on H200, with its per-layer floor); under a set with no measurement
    of the chip (:func:`measured_here` false) only the backend's per-layer floor, pooled over the measured
    systems but the chip and its twin (fit/floor_transfer.py; TensorRT-LLM's Triton MoE); ``pricer`` itself when
    ``backend`` is None, or the system (its root, for a variant) has neither for that backend at the
    model's shape on this layout (expert parallelism, expert TP; layouts with redundant EPLB experts
    are not measured). Expert TP t with no row of its own in a kernel format is read from that format's
    EP-(t·ep) row (cost/moe_backend.py, "Expert TP read as expert parallelism"): vLLM's ``flashinfer_trtllm``
    measures MiniMax-M2.5's shape at MoE TP8 in NVFP4 only, so its FP8 experts at TP8 read the FP8 EP8 row. On a variant
    whose chip differs from its root's, the measurement is carried over by the ratio of the two
    chips' rooflines (cost/moe_backend.py), not used as if it had been taken on the variant.

    Raises:
        SpecError: an unknown backend name.
    """
    from jalapeno.cost.moe import busiest_rank_assignments
    from jalapeno.cost.moe_backend import KernelMoePricer, MeasuredMoePricer, MoeCurve
    from jalapeno.specs.moe_backends import moe_backend_curves, moe_backend_kernel

    if backend is None or model.moe is None or (layout.eplb or 0) > 0:
        return pricer
    if not measured_here(pricer.efficiency):  # no tables of its own: the backend's floor pooled over the others'
        from jalapeno.specs.calibration import withheld_systems
        from jalapeno.specs.moe_backends import pooled_backend_floor

        floor = pooled_backend_floor(backend, withheld_systems(_root(pricer.system)))
        return pricer if floor is None else pricer.with_efficiency(replace(pricer.efficiency, moe_floor_s=floor))
    m = model.moe
    shape = (model.hidden_size, m.expert_intermediate, m.num_experts, m.top_k)
    own = moe_backend_curves(_root(pricer.system), backend, *shape, layout.moe_tp, layout.ep)
    got = [(c, 1) for c in own]
    if layout.moe_tp > 1:  # expert TP t read as expert parallelism t·ep (cost/moe_backend.py), format by format:
        have = {c[:2] for c in own}  # a format measured at this expert TP reads its own row, any other the EP row
        got += [
            (c, layout.moe_tp)
            for c in moe_backend_curves(_root(pricer.system), backend, *shape, 1, layout.moe_tp * layout.ep)
            if c[:2] not in have
        ]
    if not got:  # measured at another shape or layout only: the backend's fitted form, if any
        k = moe_backend_kernel(_root(pricer.system), backend)
        return (
            pricer
            if k is None
            else KernelMoePricer(
                pricer,
                k["fmt"],
                k["peak_fraction"],
                k["half_rows"],
                k["hbm_fraction"],
                backend,
                f"{k['system']} {backend} {k['table']}",
                k["floor_s"] if k.get("floor_applied") else None,
                (k["c_elems"], k["exponent"]) if "c_elems" in k else None,
            )
        )
    reference, out = _root_chip_pricer(pricer), pricer
    for (fmt, weights, tokens, latency_s, label), split in got:  # one wrapper per kernel format, each its own ops
        load = busiest_rank_assignments(np.asarray(tokens, dtype=float), m.top_k, layout.ep * split, 0.0)
        curve = MoeCurve(
            float(model.hidden_size),
            float(m.expert_intermediate / layout.moe_tp),
            fmt,
            load,
            np.asarray(latency_s, dtype=float),
            label,
            weights,
            m.num_experts / (layout.ep * split),
            split,
        )
        out = MeasuredMoePricer(out, curve, backend, reference)
    return out


def with_attention_backend(pricer: Pricer, backend: str | None, kv_format: str | None = None) -> Pricer:
    """``pricer`` with its GQA decode attention reading the KV cache at the published speed of the
    engine attention backend ``backend`` on the system with a KV cache in ``kv_format`` (a
    specs/formats name; cost/attention_backend.AttentionBackendPricer; data from
    specs/attention_backends.py, looked up on the system's root for a variant); ``pricer`` itself when
    ``backend`` is None or has no entry on that system and KV format.

    Raises:
        SpecError: an unknown backend name.
    """
    from jalapeno.cost.attention_backend import AttentionBackendPricer
    from jalapeno.specs.attention_backends import attention_backend_entry

    if backend is None or not measured_here(pricer.efficiency):
        return pricer
    e = attention_backend_entry(_root(pricer.system), backend, kv_format)
    return (
        pricer
        if e is None
        else AttentionBackendPricer(pricer, e["decode_hbm_fraction"], backend, e["source"], e["decode_extra_s"])
    )


def with_decode_blocks(pricer: Pricer, kv_format: str | None = None) -> Pricer:
    """``pricer`` with TensorRT-LLM's per-(sequence, KV head) latency floor under its GQA decode attention
    (cost/decode_blocks.py) where it applies: the switch on, the pricer's set a TensorRT-LLM stack's
    (``all_reduce_table`` "trtllm"), the system's own
    measurements used (:func:`measured_here`) and its root system and KV format in ``decode_blocks.BLOCK_S``;
    ``pricer`` itself otherwise."""
    from jalapeno.cost import decode_blocks as db

    if not db.TRT_DECODE_BLOCKS_ON or not measured_here(pricer.efficiency):
        return pricer
    c = db.block_s(_root(pricer.system), pricer.efficiency.all_reduce_table, kv_format)
    return pricer if c is None else db.DecodeBlockPricer(pricer, c)


def with_pool_backends(pricer: Pricer, pool, model, layout, kv_format: str | None = None) -> Pricer:
    """``pricer`` as a pool's engine runs it: the routed experts of ``model`` on ``layout`` by the
    pool's MoE backend (:func:`with_moe_backend`), the GQA decode attention by its attention
    backend with the KV cache in ``kv_format`` (:func:`with_attention_backend`), and the MoE token exchange
    by the pool's ``moe_exchange`` where it names one (``Efficiency.moe_exchange`` replaced; a pricer without
    ``with_efficiency`` keeps its own). ``pool``: anything with ``moe_backend`` and ``attention_backend``
    (deploy/deployment.Pool; ``moe_exchange`` optional).

    Idempotent: the outermost wrapper it returns carries what it applied (:func:`pool_backends_key`, kept through
    ``with_efficiency``), and a pricer already carrying the same key is returned unchanged (applied twice, the
    attention backend's and a fitted MoE kernel's rescalings would compound: tests/unit/test_pool_backends_twice.py).
    A call that applies no wrapper returns a pricer that a second call leaves as it is anyway (the exchange and a
    derived set's pooled MoE floor are replaced, not compounded).

    Raises:
        SpecError: an unknown backend name; ``pricer`` already carries another pool's backends (a different
            backend, exchange, KV format, MoE shape or expert layout): pass the bare pricer.
    """
    key = pool_backends_key(pool, model, layout, kv_format)
    held = applied_pool_key(pricer)
    if held == key:
        return pricer
    if held is not None:
        raise SpecError(
            "with_pool_backends: pricer",
            f"it already carries the engine backends {held}, not this pool's {key}; applied again they would compound",
            "pass the bare pricer (load_pricer(...)) and let each pool wrap it once",
        )
    exchange = getattr(pool, "moe_exchange", None)
    if exchange and exchange != pricer.efficiency.moe_exchange and hasattr(pricer, "with_efficiency"):
        pricer = pricer.with_efficiency(replace(pricer.efficiency, moe_exchange=exchange))
    out = with_attention_backend(
        with_moe_backend(pricer, pool.moe_backend, model, layout), pool.attention_backend, kv_format
    )
    out = with_decode_blocks(out, kv_format)
    return replace(out, pool_key=key) if out is not pricer and hasattr(out, "pool_key") else out


def pool_backends_key(pool, model, layout, kv_format: str | None = None) -> tuple:
    """What :func:`with_pool_backends` reads to wrap a pricer for ``pool`` (its MoE backend, attention backend and MoE
    exchange), ``model`` (name, hidden size and routed-expert shape: hidden, expert width, experts, top-k; None for a
    dense model), ``layout`` (expert TP, expert parallelism, redundant EPLB experts) and ``kv_format``: a tuple,
    equal for two calls that apply the same wrappers to the same pricer."""
    m = model.moe
    shape = None if m is None else (m.expert_intermediate, m.num_experts, m.top_k)
    return (
        pool.moe_backend,
        pool.attention_backend,
        getattr(pool, "moe_exchange", None),
        kv_format,
        model.name,
        model.hidden_size,
        shape,
        layout.moe_tp,
        layout.ep,
        layout.eplb or 0,
    )


def applied_pool_key(pricer) -> tuple | None:
    """The :func:`pool_backends_key` of the :func:`with_pool_backends` call that built ``pricer`` or a pricer it wraps
    (the first tagged wrapper down its ``inner`` chain); None for a pricer no such call wrapped."""
    p = pricer
    while p is not None:
        key = getattr(p, "pool_key", None)
        if key is not None:
            return key
        p = getattr(p, "inner", None)
    return None


def _root_chip_pricer(pricer: Pricer):
    """``pricer`` on its root system's chip when a variant changed the chip, else None (a catalog
    system as shipped, or a pricer not built as a ``system`` + efficiency dataclass)."""
    from jalapeno.specs.catalog import load_system

    s = pricer.system
    if (
        not (is_dataclass(pricer) and "system" in {f.name for f in fields(pricer)})
        or s.origin is None
        or not s.origin.root
        or (s.origin.root == s.name and not s.origin.overrides)
    ):
        return None
    root = load_system(s.origin.root)
    return None if root.chip == s.chip else replace(pricer, system=replace(s, chip=root.chip))
