"""Count the DeepGEMM kernels a cold TensorRT-LLM DeepSeek-R1 FP8 run on Hopper compiles in its first wave.

Diagnosis only (docs/gap_aic_ttft.md, "The cold DeepSeek-R1 rows and DeepGEMM's JIT"); nothing in the package
reads it. TensorRT-LLM's FP8 block-scale GEMM on SM90 (cpp/tensorrt_llm/kernels/cutlass_kernels/
fp8_blockscale_gemm, M >= 32) builds one JIT kernel per configuration (N, K, block_m, block_n, stages, TMA
multicast); the configuration follows M by the rule of cpp/include/tensorrt_llm/deep_gemm/jit_utils.cuh
(get_best_gemm_config), restated here in our own words:

* block_m = 64 when M <= 64, else 128;
* block_n in 16, 24, ..., 128: fewest waves ceil(ceil(M/block_m)·ceil(N/block_n) / SMs), then the fullest last
  wave, then the smaller block_n;
* stages: the first of (8, 7, 6, 5, 4) (or (6, 5, 4) when 128 is not a multiple of block_n) whose shared memory
  fits 232,448 bytes;
* TMA multicast 2 when M >= 1024 and N is a multiple of 2·block_n, else 1.

The NVRTC kernels are kept in memory (examples/models/core/deepseek_v3/README.md), so every server start builds
them again. Before serving, the 1.1-era engine runs one context batch of ``max_num_tokens`` tokens (the autotuner
warm-up) and the generation-only CUDA-graph batches (1, 2, 4, 8, 16, ..., 128); a configuration met by a served
context step and by neither of those is compiled during the run.

The first wave (InferenceX scripts of 2025-10..2026-01: ``--random-range-ratio 0.8``, ``max_num_tokens =
(C + ISL + 64 + 63) // 64 · 64``, one whole prompt a step) carries steps of M = L_j + j rows (prompt j of
length L_j uniform in [0.8·ISL, ISL], j decoders running). Shapes: DeepSeek-R1's per-rank dense FP8 GEMMs at
attention TP8 (N, K) — fused q_a + kv_a (replicated), q_b, kv_b, o_proj, dense-layer gate_up and down (layers
0-2), shared-expert gate_up and down. The routed experts' grouped GEMMs are not counted.

Usage: ``python scripts/deepgemm_sm90_jit_count.py`` (prints the median and range over 50 draws per point).
"""

import random
import statistics

SMS = 132  # H200 streaming multiprocessors
SMEM_BYTES = 232448  # the rule's SM90 shared-memory capacity
BLOCK_K = 128
# (N, K) per rank, DeepSeek-R1 at attention TP8 (config.json: hidden 7168, q_lora 1536, kv_lora 512, 128 heads,
# qk_nope 128, qk_rope 64, v_head 128, dense intermediate 18432, MoE intermediate 2048, one shared expert).
DENSE_SHAPES = (
    (1536 + 576, 7168),  # fused q_a + kv_a, replicated
    (128 * 192 // 8, 1536),  # q_b
    (128 * 256 // 8, 512),  # kv_b
    (7168, 128 * 128 // 8),  # o_proj
    (2 * 18432 // 8, 7168),  # dense gate_up
    (7168, 18432 // 8),  # dense down
    (2 * 2048 // 8, 7168),  # shared-expert gate_up
    (7168, 2048 // 8),  # shared-expert down
)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _smem(stages: int, k: int, block_m: int, block_n: int) -> int:
    """Shared memory of one configuration, bytes."""
    scales_b = _cdiv(_cdiv(k, BLOCK_K) * 4 * (1 if BLOCK_K % block_n == 0 else 2), 8) * 8
    per_stage = block_m * BLOCK_K + block_m * 4 + block_n * BLOCK_K
    return block_m * block_n * 2 + stages * per_stage + scales_b + stages * 16


def kernel_key(m: int, n: int, k: int) -> tuple[int, int, int, int, int, int]:
    """(N, K, block_m, block_n, stages, multicast) the SM90 rule selects for an M x N x K GEMM (M >= 32)."""
    block_m = 64 if m <= 64 else 128
    best = None
    for block_n in range(16, 129, 8):
        tiles = _cdiv(m, block_m) * _cdiv(n, block_n)
        rank = (_cdiv(tiles, SMS), -(tiles % SMS or SMS), block_n)
        if best is None or rank < best:
            best = rank
    block_n = best[2]
    choices = (8, 7, 6, 5, 4) if 128 % block_n == 0 else (6, 5, 4)
    stages = next(s for s in choices if _smem(s, k, block_m, block_n) <= SMEM_BYTES)
    multicast = 2 if (m >= 1024 and n % (2 * block_n) == 0) else 1
    return (n, k, block_m, block_n, stages, multicast)


def cuda_graph_sizes(max_batch: int = 128) -> list[int]:
    """The generation batch sizes captured at start-up (padding on): 1, 2, 4 and the multiples of 8."""
    return sorted({1, 2, 4} | set(range(8, max_batch + 1, 8)))


def first_wave_new_kernels(isl: int, conc: int, seed: int, ratio: float = 0.8) -> int:
    """Kernels the first wave's context steps need that the start-up warm-up did not build."""
    rnd = random.Random(seed)
    max_num_tokens = (conc + isl + 64 + 63) // 64 * 64
    warm_m = [max_num_tokens] + [b for b in cuda_graph_sizes() if b >= 32]
    warm = {kernel_key(m, n, k) for n, k in DENSE_SHAPES for m in warm_m}
    lengths = [rnd.randint(int(isl * ratio), isl) for _ in range(conc)]
    met = {kernel_key(length + j, n, k) for n, k in DENSE_SHAPES for j, length in enumerate(lengths)}
    return len(met - warm)


def main() -> None:
    for isl in (1024, 8192):
        for conc in (4, 8, 16, 32, 64):
            counts = [first_wave_new_kernels(isl, conc, seed) for seed in range(50)]
            print(
                f"ISL {isl:5d} C {conc:3d}: {statistics.median(counts):4.0f} new kernels "
                f"(range {min(counts)}-{max(counts)})"
            )


if __name__ == "__main__":
    main()
