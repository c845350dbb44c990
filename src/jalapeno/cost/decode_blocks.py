"""TensorRT-LLM GQA decode attention: a latency floor per (sequence, KV head) block of each call.

aiconfigurator's TensorRT-LLM 1.3.0rc20 ``generation_attention_perf`` tables (aiconfigurator-core 0.12.0, the release
the NVIDIA sets are calibrated on; ``kernel_source`` torch_flow: the whole attention op, QKV preprocessing, RoPE, KV
append and the kernel) show that a decode call with many sequences and little KV to read each takes far longer than
its KV read at the set's HBM fraction: on B200, gpt-oss-120b's shape (64 query / 8 KV heads, head 64) at 1,024-4,096
sequences and <= 512 cached tokens, or on every 128-token sliding-window call, the model prices 0.22 of the measured
time (~90 us a call missing); at >= 1,024 cached tokens a sequence the same calls are priced within a few percent.
The missing time scales with sequences x KV heads (per-shape fits: 8 KV heads ~8x one KV head), not with bytes:
the generation kernel works per (sequence, KV head) block, and each block's dependent page-table and KV fetches
take a latency the stream of a long context hides but a short one does not. Priced as a floor under the op's memory
time, per layer call:

    memory' = max(memory, blocks · block_s),   blocks = sequences x KV heads per chip

so a long-context call (the regime the set's ``hbm_fraction`` was fitted on, fit/attention_kernels.fit_attention:
contexts >= 1,024, reads >= 256 MiB) keeps its price and nothing is counted twice: at contexts >= 1,024 and >= 32
sequences the residual per-sequence slope over the calibrated op is 0 on every system (a free fit, t = model + t0 +
a·B, gives a = 0.0 ns), i.e. the fitted fraction carries no per-sequence intercept there.

``block_s`` (:data:`BLOCK_S`, per system and KV-cache dtype) is fitted by ``scripts/trt_decode_blocks50.py`` on every
torch_flow row of the system's table with >= 32 sequences (full and 128-token windows, all shapes: 11,159 rows a KV
dtype on Blackwell, 12,307-12,595 on Hopper), soft-L1 on log(max(model, c·blocks) / measured); per-system values
only, no slope carried from one system to another. Only the TensorRT-LLM stacks (``trtllm``, ``dynamo-trtllm``) get
it (:data:`TRT_ALL_REDUCE_TABLE`): the tables time TensorRT-LLM's op; vLLM and SGLang run other decode kernels
(FlashInfer, FlashAttention 3).
MLA (DeepSeek, Kimi) gets none: over ``generation_mla_perf`` the residual per-sequence slope on Blackwell is 0 and on
Hopper grows with heads (a compute-side misfit of the MLA kernel fit, not a per-sequence cost).

Shipped off (:data:`TRT_DECODE_BLOCKS_ON`, round 50 trtattn50; docs/gap_large_batch_decode.md "Round 50 (trtattn50)").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from jalapeno.cost.attention_backend import gqa_decode_ops
from jalapeno.cost.moe_backend import _WrapsPricer
from jalapeno.cost.optable import OpTable
from jalapeno.cost.roofline import OpTimes

#: switch: price the per-(sequence, KV head) latency floor of TensorRT-LLM's GQA decode attention. Off: the ops are
#: built (``rows`` 1) and priced exactly as before round 50.
TRT_DECODE_BLOCKS_ON = False

#: the efficiency sets that run TensorRT-LLM's own ops: ``Efficiency.all_reduce_table`` is "trtllm" exactly under the
#: two TensorRT-LLM stack profiles (data/stacks.toml ``trtllm`` and ``dynamo-trtllm``, a behaviour field each sets;
#: ``dynamo-trtllm`` fits no fixed cost, so its sets carry no "+ stack" tag in their source to read instead)
TRT_ALL_REDUCE_TABLE = "trtllm"

#: system → KV-cache dtype → latency floor per (sequence, KV head) block of one GQA decode call, s. Fitted by
#: scripts/trt_decode_blocks50.py on aiconfigurator-core 0.12.0's TensorRT-LLM 1.3.0rc20 generation_attention_perf
#: (torch_flow, >= 32 sequences; table dirs h100_sxm, h200_sxm, b200_sxm, b300_sxm, gb200, gb300). Median / p90 |error|
#: of those rows before -> after, and bias: in the script's output and the doc section above.
#: Hopper has no row: there the form does not describe the table itself (H200 BF16 at >= 256 sequences p90 |error|
#: 92 -> 164% with its fitted 40.8 ns; the FP8 128-token windows' median signed error 0.0 -> +10.2%, H100 alike), so
#: no Hopper floor is priced and no Blackwell one is carried to Hopper.
BLOCK_S = {
    "b200": {"bf16": 17.44e-9, "fp8": 13.25e-9},
    "b300": {"bf16": 15.67e-9, "fp8": 11.88e-9},
    "gb200-nvl72": {"bf16": 16.16e-9, "fp8": 12.37e-9},
    "gb300-nvl72": {"bf16": 15.64e-9, "fp8": 11.83e-9},
}


def kv_dtype_key(kv_format: str | None) -> str | None:
    """The :data:`BLOCK_S` column of a KV-cache format name (specs/formats): ``fp8`` for FP8 caches, ``bf16`` for
    BF16/FP16 ones and for None (no KV format passed: read as BF16), None for any other (no table row: no
    floor).

    >>> kv_dtype_key("fp8_e4m3"), kv_dtype_key("bf16"), kv_dtype_key("nvfp4")
    ('fp8', 'bf16', None)
    """
    if kv_format is None:
        return "bf16"
    k = kv_format.lower()
    if k.startswith("fp8"):
        return "fp8"
    return "bf16" if k in ("bf16", "fp16", "bfloat16", "float16") else None


def block_s(system: str, all_reduce_table: str, kv_format: str | None) -> float | None:
    """The floor per block (s) on ``system`` with ``kv_format`` KV under an efficiency set whose
    ``all_reduce_table`` is given (:data:`TRT_ALL_REDUCE_TABLE`: a TensorRT-LLM stack), None where none applies
    (the switch off, another stack, a system or KV format without a :data:`BLOCK_S` row).

    >>> import jalapeno.cost.decode_blocks as m
    >>> m.TRT_DECODE_BLOCKS_ON = True
    >>> m.block_s("b200", "trtllm", "fp8_e4m3"), m.block_s("b200", "none", "fp8_e4m3"), m.block_s("mi300x", "trtllm", "bf16")
    (1.325e-08, None, None)
    >>> m.TRT_DECODE_BLOCKS_ON = False
    """
    if not TRT_DECODE_BLOCKS_ON or all_reduce_table != TRT_ALL_REDUCE_TABLE:
        return None
    key = kv_dtype_key(kv_format)
    return BLOCK_S.get(system, {}).get(key) if key else None


def decode_blocks(seqs, kv_heads_per_chip) -> np.ndarray | float:
    """The op's ``rows`` when the switch is on: (sequence, KV head) blocks of one call, ``seqs`` x KV heads; 1.0
    (the ops' default) when off, so the op table is as before.

    >>> import jalapeno.cost.decode_blocks as m
    >>> m.decode_blocks(np.array([100.0]), 8)
    1.0
    """
    if not TRT_DECODE_BLOCKS_ON:
        return 1.0
    return np.asarray(seqs, dtype=float) * kv_heads_per_chip


@dataclass(frozen=True, slots=True)
class DecodeBlockPricer(_WrapsPricer):
    """A pricer whose GQA decode attention ops (cost/attention_backend.gqa_decode_ops: ``attn.decode_*``) take at
    least ``block_s`` per (sequence, KV head) block of each call in memory time.

    Attributes:
        inner: the wrapped pricer.
        block_s: the floor per block, s (:data:`BLOCK_S`).
        pool_key: as cost/attention_backend.AttentionBackendPricer (cost/pricer.with_pool_backends).
    """

    inner: object
    block_s: float
    pool_key: tuple | None = None

    def op_times(self, ops: OpTable) -> OpTimes:
        """The inner pricer's op times (s, (n_ops, N)) with the floor under each GQA decode op's memory time: the
        op's ``rows`` (its blocks, :func:`decode_blocks`) x ``kernels`` (its layer calls) x ``block_s``."""
        base = self.inner.op_times(ops)
        hit = gqa_decode_ops(ops)
        if not hit:
            return base
        memory = base.memory_s.copy()
        for i in hit:
            floor = ops.rows[i] * ops.kernels[i] * self.block_s
            memory[i] = np.where(base.time_s[i] > 0, np.maximum(base.memory_s[i], floor), base.memory_s[i])
        return OpTimes.combine(base.compute_s, memory, base.overhead_s, base.network_s)

    def with_efficiency(self, efficiency):
        """This pricer over the inner one with another efficiency set."""
        return replace(self, inner=self.inner.with_efficiency(efficiency))
