"""TensorRT-LLM GQA decode attention: a latency floor per (sequence, KV head) block of each call, weighted by the
query tile the generation kernel pads the block's query heads to.

aiconfigurator's TensorRT-LLM 1.3.0rc20 ``generation_attention_perf`` tables (aiconfigurator-core 0.12.0, the release
the NVIDIA sets are calibrated on; ``kernel_source`` torch_flow: the whole attention op, QKV preprocessing, RoPE, KV
append and the kernel) show that a decode call with many sequences and little KV to read each takes far longer than
its KV read at the set's HBM fraction: on B200, gpt-oss-120b's shape (64 query / 8 KV heads, head 64) at 1,024-4,096
sequences and <= 512 cached tokens, or on every 128-token sliding-window call, the model prices 0.22 of the measured
time (~90 us a call missing); at >= 1,024 cached tokens a sequence the same calls are priced within a few percent.
The missing time scales with the kernel's blocks, not with bytes: the generation kernel works per (sequence, KV head)
block, and each block's dependent page-table and KV fetches take a latency the stream of a long context hides but a
short one does not. Priced as a floor under the op's memory time, per layer call:

    memory' = max(memory, weighted_blocks · block_s)
    weighted_blocks = sequences x KV heads x (tile(g) + TAU) / (8 + TAU)    g = query heads per KV head <= 32
                    = sequences x query heads                               g > 32

Round 51 (trtattn51): the round-50 form (sequences x KV heads, one constant) misfit the tables at 1-2 KV heads, where
those rows take 30-120x its floor. Two things the tables show and the kernel's launch heuristics explain:

* the time per block grows with the query heads a block carries, in steps of the query tile: TensorRT-LLM's
  trtllm-gen FMHA runner (NVIDIA/TensorRT-LLM@52cd475a cpp/tensorrt_llm/kernels/trtllmGenKernels/fmha/fmhaKernels.h,
  ``hashFromRunnerParams``) holds a KV head's g query heads in one CTA's tile of 8, 16 or 32 rows (g <= 8, <= 16,
  above; :data:`TILE_Q`); at 2-token contexts B200 FP8 takes ~8.5-9.9 / 12.4-13.0 / 21.8-23.8 ns a block at
  g <= 8 / 12-16 / 24-32. A block's cost is a fixed part plus a part per padded query row, c_b + c_q·tile; free
  per-system fits give c_b / c_q = 5.9-9.1 rows, so the fixed part is taken as one smallest tile, :data:`TAU` = 8
  rows (a named assumption; held-out errors with it and with the free ratio agree within 1.1 points,
  docs/gap_large_batch_decode.md "Round 51 (trtattn51)").
* above 32 query heads a KV head (1-2 KV heads with 64-128 query heads) the time is that of a block per (sequence,
  query head): at 2-token contexts B200 FP8 64/1, 96/1, 128/1 and 128/2 take 8.6-9.5 ns per sequence x query head,
  as MHA's 64/64 does (1,118 vs 1,126 us at 2,048 sequences): the path that serves those groups does not share a KV
  head's blocks among its query heads. Priced with one tile-8 block per query head. Its memory side (each query
  head's block streaming its KV head again; 12-22x the model's op at long contexts) is not priced: no catalog model
  runs more than 16 query heads a KV head (Llama-3.1-405B, Qwen3-235B), so no served op reaches it.

A long-context call (the regime the set's ``hbm_fraction`` was fitted on, fit/attention_kernels.fit_attention:
contexts >= 1,024, reads >= 256 MiB) keeps its price and nothing is counted twice: at contexts >= 1,024 and >= 32
sequences the residual per-sequence slope over the calibrated op is 0 on every system (round 50).

``block_s`` (:data:`BLOCK_S`, per system and KV-cache dtype: the floor of one g <= 8 block) is fitted by
``scripts/trt_decode_blocks51.py`` on the torch_flow rows of the system's table with 32, 128, 512 or 2,048 sequences
(full and 128-token windows, every head shape: 6,416 rows a KV dtype on Blackwell) and reported on the rows with 64,
256 or 1,024 sequences (4,743), soft-L1 on log(max(model, c·weighted_blocks) / measured); per-system values only, no
constant carried from one system to another. Only the TensorRT-LLM stacks (``trtllm``, ``dynamo-trtllm``) get it
(:data:`TRT_ALL_REDUCE_TABLE`): the tables time TensorRT-LLM's op; vLLM and SGLang run other decode kernels
(FlashInfer, FlashAttention 3). MLA (DeepSeek, Kimi) gets none: over ``generation_mla_perf`` the residual
per-sequence slope on Blackwell is 0 and on Hopper grows with heads (a compute-side misfit of the MLA kernel fit).

On (:data:`TRT_DECODE_BLOCKS_ON`) since round 51 (trtattn51: re-formed and re-judged by the round's rule, the
``trtllm`` / ``dynamo-trtllm`` refit moving no constant); shipped off in round 50 (trtattn50).
docs/gap_large_batch_decode.md "Round 50 (trtattn50)" and "Round 51 (trtattn51)".
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from jalapeno.cost.attention_backend import gqa_decode_ops
from jalapeno.cost.moe_backend import _WrapsPricer
from jalapeno.cost.optable import OpTable
from jalapeno.cost.roofline import OpTimes

#: switch: price the per-(sequence, KV head) latency floor of TensorRT-LLM's GQA decode attention. Off: the ops are
#: built (``rows`` 1) and priced exactly as before round 50. On since round 51 (held out, on vs off: InferenceX GB200
#: throughput/chip bias +6.0 -> +3.9%, a goal met; docs/gap_large_batch_decode.md "Round 51 (trtattn51)").
TRT_DECODE_BLOCKS_ON = True

#: the efficiency sets that run TensorRT-LLM's own ops: ``Efficiency.all_reduce_table`` is "trtllm" exactly under the
#: two TensorRT-LLM stack profiles (data/stacks.toml ``trtllm`` and ``dynamo-trtllm``, a behaviour field each sets;
#: ``dynamo-trtllm`` fits no fixed cost, so its sets carry no "+ stack" tag in their source to read instead)
TRT_ALL_REDUCE_TABLE = "trtllm"

#: trtllm-gen's GQA generation query tiles: the g query heads of a KV head padded to 8, 16 or 32 rows in one CTA
#: (NVIDIA/TensorRT-LLM@52cd475a cpp/tensorrt_llm/kernels/trtllmGenKernels/fmha/fmhaKernels.h, ``hashFromRunnerParams``:
#: ``maxNumHeadsQPerKvInCta`` 8 / 16 for numHeadsQPerKv <= 8 / <= 16 (SwapsMmaAbForGeneration), 32 above
#: (KeepsMmaAbForGeneration))
TILE_Q = (8, 16, 32)

#: a block's fixed cost in padded query rows (c_b / c_q of the per-block cost c_b + c_q·tile): one smallest tile.
#: Named assumption, read from the tables: free per-system fits give 5.9-9.1 (FP8 5.9-7.8, BF16 7.7-9.1); the
#: held-out errors with 8 and with the free value agree within 1.1 points (scripts/trt_decode_blocks51.py)
TAU = 8.0

#: system → KV-cache dtype → latency floor of one (sequence, KV head) block with g <= 8 query heads (tile 8) of one
#: GQA decode call, s. Fitted by scripts/trt_decode_blocks51.py on aiconfigurator-core 0.12.0's TensorRT-LLM 1.3.0rc20
#: generation_attention_perf (torch_flow, 32 / 128 / 512 / 2,048 sequences; table dirs b200_sxm, b300_sxm, gb200,
#: gb300); held-out rows (64 / 256 / 1,024 sequences) median / p90 |error| and bias in the script's output and the doc.
#: Round 50's single-constant form gave 13.25 / 17.44 ns on B200 (pulled up by the 1-2 KV head rows it misfit).
#: Hopper has no row: there neither form describes the table (held out with this form, H200 BF16 p90 86 -> 99%, its
#: groups above 32 +106%; FP8 128-token windows' bias -0.2 -> +19.5%; H100 alike), so no Hopper floor is priced and no
#: Blackwell one is carried to Hopper.
BLOCK_S = {
    "b200": {"bf16": 14.11e-9, "fp8": 11.71e-9},
    "b300": {"bf16": 13.31e-9, "fp8": 11.03e-9},
    "gb200-nvl72": {"bf16": 13.44e-9, "fp8": 11.03e-9},
    "gb300-nvl72": {"bf16": 13.13e-9, "fp8": 10.78e-9},
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
    >>> was, m.TRT_DECODE_BLOCKS_ON = m.TRT_DECODE_BLOCKS_ON, True
    >>> m.block_s("b200", "trtllm", "fp8_e4m3"), m.block_s("b200", "none", "fp8_e4m3"), m.block_s("mi300x", "trtllm", "bf16")
    (1.171e-08, None, None)
    >>> m.TRT_DECODE_BLOCKS_ON = was
    """
    if not TRT_DECODE_BLOCKS_ON or all_reduce_table != TRT_ALL_REDUCE_TABLE:
        return None
    key = kv_dtype_key(kv_format)
    return BLOCK_S.get(system, {}).get(key) if key else None


def tile_q(group) -> np.ndarray:
    """The query tile (rows) trtllm-gen pads ``group`` query heads a KV head to (:data:`TILE_Q`); groups above 32
    get 8 (one tile-8 block per query head, :func:`weighted_blocks`).

    >>> tile_q(np.array([1, 8, 12, 16, 32, 64])).tolist()
    [8.0, 8.0, 16.0, 16.0, 32.0, 8.0]
    """
    g = np.asarray(group, dtype=float)
    return np.where(g <= 8, 8.0, np.where(g <= 16, 16.0, np.where(g <= 32, 32.0, 8.0)))


def weighted_blocks(seqs, kv_heads, q_heads) -> np.ndarray:
    """The call's blocks in tile-8 block units: sequences x KV heads x (tile + :data:`TAU`) / (8 + :data:`TAU`) for
    g = ``q_heads`` / ``kv_heads`` <= 32, sequences x query heads above (one block per query head). Per chip.

    >>> weighted_blocks(np.array([100.0, 100.0, 100.0, 100.0]), 1, np.array([8, 16, 32, 64])).tolist()
    [100.0, 150.0, 250.0, 6400.0]
    """
    b, kv, q = (np.asarray(x, dtype=float) for x in (seqs, kv_heads, q_heads))
    g = q / kv
    return np.where(g > 32, b * q, b * kv * (tile_q(g) + TAU) / (8.0 + TAU))


def decode_blocks(seqs, kv_heads_per_chip, q_heads_per_chip=None) -> np.ndarray | float:
    """The op's ``rows`` when the switch is on: the call's :func:`weighted_blocks` (``q_heads_per_chip`` None: read
    as g <= 8, sequences x KV heads); 1.0 (the ops' default) when off, so the op table is as before.

    >>> import jalapeno.cost.decode_blocks as m
    >>> was, m.TRT_DECODE_BLOCKS_ON = m.TRT_DECODE_BLOCKS_ON, False
    >>> m.decode_blocks(np.array([100.0]), 8, 64)
    1.0
    >>> m.TRT_DECODE_BLOCKS_ON = True
    >>> m.decode_blocks(np.array([100.0]), 8, 64).tolist()
    [800.0]
    >>> m.TRT_DECODE_BLOCKS_ON = was
    """
    if not TRT_DECODE_BLOCKS_ON:
        return 1.0
    if q_heads_per_chip is None:
        return np.asarray(seqs, dtype=float) * kv_heads_per_chip
    return weighted_blocks(seqs, kv_heads_per_chip, q_heads_per_chip)


@dataclass(frozen=True, slots=True)
class DecodeBlockPricer(_WrapsPricer):
    """A pricer whose GQA decode attention ops (cost/attention_backend.gqa_decode_ops: ``attn.decode_*``) take at
    least ``block_s`` per weighted (sequence, KV head) block of each call in memory time (:func:`weighted_blocks`).

    Attributes:
        inner: the wrapped pricer.
        block_s: the floor per block, s (:data:`BLOCK_S`).
        pool_key: as cost/attention_backend.AttentionBackendPricer (cost/pool_backends.with_pool_backends).
    """

    inner: object
    block_s: float
    pool_key: tuple | None = None

    def op_times(self, ops: OpTable) -> OpTimes:
        """The inner pricer's op times (s, (n_ops, N)) with the floor under each GQA decode op's memory time: the
        op's ``rows`` (its weighted blocks, :func:`decode_blocks`) x ``kernels`` (its layer calls) x ``block_s``."""
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
