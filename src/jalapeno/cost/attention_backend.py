"""GQA decode attention priced at the KV-read speed of the engine's named attention backend.

A serving engine runs its attention through the backend its launch names (vLLM
``--attention-backend``). The calibrated efficiency set reads a GQA decode kernel's KV cache at
the set's generic HBM fraction (Efficiency.kernel_hbm("", fmt) = ``hbm_fraction``). Where the
backend's decode kernel has a published KV-read speed on the system (data/attention_backends.toml,
specs/attention_backends.py), :class:`AttentionBackendPricer` prices the GQA decode attention ops
(cost/attention.add_gqa_ops, ``attn.decode_*``: kind ``attention``, no kernel family of their own)
at it:

    memory'   = memory · hbm_fraction(set, fmt) / decode_hbm_fraction(backend)
    overhead' = overhead + kernels · decode_extra_s(backend)
    time'     = max(compute, memory', network) + overhead'

so only the KV read and, where the backend's entry measures one (vLLM's FlashAttention 3 on Hopper:
scripts/vllm_decode_attention_fit.py), its extra fixed latency per call move: the compute time (attention peak fraction), the launch overhead and
every other op (MLA kernels, prefill attention, GEMMs, MoE) and every collective are the wrapped
pricer's. A variant's chip keeps the ratio (its own HBM bandwidth, at the backend's fraction of it).
Worked number (MI300X, gpt-oss-120b, TP1, 64 sequences at the 8k/1k workload's mean decode context,
0.9 · 8,192 + 0.45 · 1,024 = 7,834 tokens): its GQA decode reads 18.8 GB of KV per step, 4.1 ms at
the set's 0.865 of 5.3 TB/s, 6.4 ms at rocm_aiter_unified_attn's 0.555; the step goes 36.3 →
38.6 ms (docs/model.md §8.6).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from jalapeno.cost.moe_backend import _WrapsPricer
from jalapeno.cost.optable import OpTable
from jalapeno.cost.roofline import OpTimes

#: name prefix of the GQA decode attention ops (cost/attention.add_gqa_ops)
GQA_DECODE_PREFIX = "attn.decode_"


def gqa_decode_ops(ops: OpTable) -> list[int]:
    """Indices of the GQA decode attention ops of ``ops``: kind ``attention``, no kernel family (MLA's ops carry
    ``mla_decode``), name starting :data:`GQA_DECODE_PREFIX`. What the attention backends
    (:class:`AttentionBackendPricer`) and TensorRT-LLM's per-block floor (cost/decode_blocks.py) reprice."""
    fam = ops.kernel or ("",) * len(ops.name)
    return [
        i
        for i, (n, k, f) in enumerate(zip(ops.name, ops.kind, fam))
        if k == "attention" and not f and n.startswith(GQA_DECODE_PREFIX)
    ]


@dataclass(frozen=True, slots=True)
class AttentionBackendPricer(_WrapsPricer):
    """A pricer whose GQA decode attention reads its KV cache at an attention backend's speed.

    Attributes:
        inner: the wrapped pricer (every other op, every collective, the efficiency set).
        decode_hbm_fraction: the backend's achieved fraction of the HBM peak reading the KV cache
            in decode, in (0, 1] (data/attention_backends.toml).
        decode_extra_s: the backend's extra fixed latency per decode attention call over the set's
            kernel, s (>= 0; 0 where not measured).
        backend: the backend's name (``rocm_aiter_unified_attn``), for records.
        label: where the fraction comes from (its source), for records.
        pool_key: what cost/pool_backends.with_pool_backends applied when this is the outermost wrapper it returned
            (cost/pool_backends.pool_backends_key), so a second call with the same pool returns it unchanged; None:
            not tagged.
    """

    inner: object
    decode_hbm_fraction: float
    backend: str
    label: str = ""
    decode_extra_s: float = 0.0
    pool_key: tuple | None = None

    def op_times(self, ops: OpTable) -> OpTimes:
        """The inner pricer's op times (seconds, (n_ops, N)) with the GQA decode attention ops priced by the measured backend kernel."""
        base = self.inner.op_times(ops)
        hit = gqa_decode_ops(ops)
        if not hit:
            return base
        memory, overhead = base.memory_s.copy(), base.overhead_s
        eff = self.inner.efficiency
        if self.decode_extra_s:
            overhead = overhead.copy()
        for i in hit:
            memory[i] = base.memory_s[i] * eff.kernel_hbm("", ops.fmt[i]) / self.decode_hbm_fraction
            if self.decode_extra_s:  # an op with no work at a point launches nothing (cost/roofline.py)
                overhead[i] = np.where(
                    base.overhead_s[i] > 0, base.overhead_s[i] + ops.kernels[i] * self.decode_extra_s, 0.0
                )
        return OpTimes.combine(base.compute_s, memory, overhead, base.network_s)

    def with_efficiency(self, efficiency):
        """This pricer over the inner one with another efficiency set."""
        return replace(self, inner=self.inner.with_efficiency(efficiency))
