"""vLLM's Hopper decode attention (FlashAttention 3) against the kernels the H100/H200 sets are calibrated on.

vLLM picks its attention backend per chip (vllm/platforms/cuda.py ``_get_backend_priorities``: non-MLA
models on compute capability 10.x try FLASHINFER first, every other CUDA chip FLASH_ATTN, FlashAttention 3
on SM90); aiconfigurator-core 0.12.0 times the kernel vLLM selects (its vLLM 0.24.0
``generation_attention_perf`` tables: ``kernel_source`` ``vllm_flash_attn_fa3`` on h100_sxm / h200_sxm,
``vllm_flashinfer_trtllmdecode`` on b200_sxm). The H100/H200 efficiency sets are calibrated on the same
package's TensorRT-LLM 1.3.0rc20 tables (data/calibration/h1x0.toml ``[provenance]``), whose decode
kernel is TensorRT-LLM's own. So a vLLM decode step on Hopper runs a different kernel from the one the set
describes; this script measures how different, per chip and KV-cache format, and writes nothing.

Form (both engines, same rows): decode attention latency per call = t0 + KV bytes / (f · HBM peak), KV
bytes = batch · (step + 1) · KV heads · head 128 · 2 (K, V) · bytes per element, fitted by least squares on
the log latency over every (batch <= 256, context) of the head-128 GQA shapes of Llama-3.3-70B at TP 1-8
(64/8, 32/4, 16/2, 8/1 query/KV heads) and of 40/8 .. 5/1 (window 0). Fit split: the tables (kernel
timings); no end-to-end row enters. The two figures the vLLM ``flash_attn`` entries of
data/attention_backends.toml carry, per (chip, KV format):

    decode_hbm_fraction = set hbm_fraction · f_vllm / f_trtllm   (the KV read at FA3's speed relative to the set's)
    decode_extra_s      = t0_vllm − t0_trtllm                    (FA3's extra fixed latency per call)

Run: python scripts/vllm_decode_attention_fit.py      (seconds; needs aiconfigurator-core)
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

#: HBM peak, bytes/s (catalog systems; specs/catalog)
SYSTEMS = {"h100": ("h100_sxm", 3.35e12), "h200": ("h200_sxm", 4.8e12)}
SHAPES = {(64, 8), (32, 4), (16, 2), (8, 1), (40, 8), (20, 4), (10, 2), (5, 1)}
ENGINES = {"vllm": "vllm/0.24.0", "trtllm": "trtllm/1.3.0rc20"}
KV = {"fp8": ("fp8", 1), "bf16": ("bfloat16", 2)}


def _rows(sys_dir: str, engine: str, kv: str) -> pd.DataFrame:
    import aiconfigurator_core

    base = Path(aiconfigurator_core.__file__).parent / "systems" / "data" / sys_dir / "attention"
    d = pd.read_parquet(base / ENGINES[engine] / "generation_attention_perf.parquet")
    name, width = KV[kv]
    pairs = list(zip(d.num_heads, d.num_key_value_heads))
    keep = (
        (d.head_dim == 128)
        & (d.window_size == 0)
        & (d.kv_cache_dtype == name)
        & (d.batch_size <= 256)
        & np.array([p in SHAPES for p in pairs])
    )
    t = d[keep]
    return pd.DataFrame(
        {"bytes": t.batch_size * (t.step + 1) * t.num_key_value_heads * 128 * 2 * width, "latency_s": t.latency * 1e-3}
    )


def fit(sys_dir: str, peak: float, engine: str, kv: str) -> tuple[float, float, float, int]:
    """(t0 s, f, median |error|, rows) of latency = t0 + bytes / (f · peak)."""
    t = _rows(sys_dir, engine, kv)
    x, y = t.bytes.to_numpy() / peak, t.latency_s.to_numpy()
    r = least_squares(lambda p: np.log((p[0] + x / p[1]) / y), [1e-5, 0.8], bounds=([0.0, 0.05], [1e-3, 1.5]))
    return float(r.x[0]), float(r.x[1]), float(np.median(np.abs(np.expm1(r.fun)))), len(t)


def main() -> None:
    for system, (sys_dir, peak) in SYSTEMS.items():
        cal = tomllib.loads((resources.files("jalapeno") / "data" / "calibration" / f"{system}.toml").read_text())
        set_hbm = cal["parameters"]["hbm_fraction"]
        for kv in KV:
            (t0v, fv, ev, n), (t0t, ft, et, _) = fit(sys_dir, peak, "vllm", kv), fit(sys_dir, peak, "trtllm", kv)
            print(
                f"{system} KV {kv}: vLLM FA3 t0 {t0v * 1e6:.2f} us f {fv:.4f} (median |err| {ev:.3f}); "
                f"TRT-LLM t0 {t0t * 1e6:.2f} us f {ft:.4f} ({et:.3f}); n {n} each"
            )
            print(
                f"    decode_hbm_fraction = {set_hbm:.4f} x {fv:.4f} / {ft:.4f} = {set_hbm * fv / ft:.4f}; "
                f"decode_extra_s = {(t0v - t0t) * 1e6:.2f} us"
            )


if __name__ == "__main__":
    main()
