"""A TP all-reduce fused into the GEMM before it: the waves of output tiles that pipeline the overlap.

With ``Efficiency.gemm_allreduce_fusion`` (TensorRT-LLM's ``gemm_allreduce_plugin``) the all-reduce of a
row-parallel GEMM's output runs tile by tile while the next tiles compute, so only the last wave's all-reduce is
left exposed (cost/overlap.exposed_coll_s). :func:`gemm_allreduce_stages` counts the waves from the kernels' tile
shapes (:data:`GEMM_AR_TILES`) and the chip's SMs; :func:`_fused` gives cost/ops.build_step_ops the collective's
``hidden_under`` / ``hidden_stages`` arguments. Arrays are (N,), one per batch point.
"""

from __future__ import annotations

import numpy as np

from jalapeno.specs.hardware import Chip


#: Output tile (rows, output features) and SMs per tile of TensorRT-LLM's fused GEMM + all-reduce
#: kernels, keyed by the chip's smallest tensor-core M (``Chip.mma_tile_m``: its MMA generation).
#: Source: cpp/tensorrt_llm/kernels/cutlass_kernels/allreduce_gemm/allreduce_gemm_runner.cu
#: (GemmAllReduceImplRunner): SM100 registers one config, TileShape_128x256x128 with a 2-SM MMA
#: (a 256 x 256 tile per SM pair); SM90 registers TileShape_128x{16,32,64,128}x128 with A and B
#: swapped (128 along the output features), of which the 128 x 128 one is taken (assumption: the
#: autotuner's pick at the prefill row counts where the overlap matters). Other SM versions throw
#: "SM architecture not supported for GEMM+AR fusion": no entry, no overlap credited.
GEMM_AR_TILES = {128: (256.0, 256.0, 2.0), 64: (128.0, 128.0, 1.0)}


def gemm_allreduce_stages(rows, n_out: float, chip: Chip) -> np.ndarray:
    """Waves W of output tiles of a row-parallel GEMM [rows, k] x [k, n_out] fused with the TP
    all-reduce of its output (arrays (N,)): the pipeline stages of the overlap (cost/overlap.exposed_coll_s).

    TensorRT-LLM's ``gemm_allreduce_plugin`` (CUTLASS kernels whose epilogue stores each finished
    output tile into an NVLink-SHARP multicast buffer and all-reduces it there, two-shot, while the
    next tiles compute: allreduce_gemm_impl_sm90.h / _sm100.h) reduces tile by tile, so the
    all-reduce of one wave of tiles overlaps the next wave's MMA and only the last wave's is left.
    W = ⌈⌈rows/tm⌉·⌈n_out/tn⌉ / (U/s)⌉, (tm, tn, s) from :data:`GEMM_AR_TILES`, U the chip's SMs; a
    chip without a kernel or an SM count gets W = 1 (the all-reduce waits for the whole GEMM).
    Assumptions (docs/model.md §6.3; NVIDIA publishes no exposed share): the waves take equal time
    and the fused all-reduce moves data at the priced all-reduce's speed.

    >>> from jalapeno.specs.catalog import load_system
    >>> int(gemm_allreduce_stages(2048.0, 16384.0, load_system("b200").chip)[()])  # 8·64 tiles on 74 SM pairs
    7
    """
    rows = np.asarray(rows, dtype=float)
    tile = GEMM_AR_TILES.get(chip.mma_tile_m)
    if tile is None or not chip.compute_units:
        return np.ones_like(rows)
    tm, tn, sms = tile
    tiles = np.ceil(rows / tm) * np.ceil(n_out / tn)
    return np.maximum(np.ceil(tiles / (chip.compute_units / sms)), 1.0)


def _fused(gemm: str, rows, n_out: float, chip: Chip) -> dict:
    """``OpBuilder.collective`` arguments of an all-reduce fused into the GEMM named ``gemm``."""
    return {"hidden_under": gemm, "hidden_stages": gemm_allreduce_stages(rows, n_out, chip)}
