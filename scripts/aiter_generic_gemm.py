"""What DeepSeek-R1's attention GEMMs cost on the SGLang v0.5.9 ROCm image (docs/model.md §12; a
diagnostic: nothing here is used by the model).

Both SGLang 0.5.9 and 0.5.19 run every block-FP8 linear on gfx942 (MI300X/MI325X) as aiter's
*Triton* ``gemm_a8w8_blockscale`` (PyPI wheels, ``sglang/srt/layers/quantization/fp8_utils.py``:
0.5.9 imports only the Triton kernel; 0.5.19 sets ``use_triton = True`` off gfx95). aiter picks the
kernel's tiles from ``aiter/ops/triton/configs/gemm/gfx942-GEMM-A8W8_BLOCKSCALE[-N=..-K=..].json``.
At v0.1.10.post3 (2026-02-11, the v0.5.9 image's aiter: InferenceX PR #816) gfx942 had only the
generic file — BLOCK 128 x 128 x 128, ``NUM_KSPLIT`` 1 — so a decode GEMM (m <= 128 rows) ran
ceil(n / 128) workgroups, each streaming its weight columns alone; ROCm/aiter #2024 (2026-02-12,
in a6bb499 of the v0.5.12 image and after) added tuned split-K files for DeepSeek's TP8 attention
shapes (n, k) = (2112, 7168) fused q_a + kv_a, (3072, 1536) q_b, (7168, 2048) o_proj.

Part 1 prints the per-workgroup streaming rate implied by each block-FP8 GEMM timing of the one
profile of this image found (:data:`PROFILE_V059`), read as the generic config runs it. Part 2 prices
the MI300X/MI325X SGLang rows with the three attention GEMMs floored at weight bytes /
(workgroups x rate) — the v0.5.9 image's kernels — beside the shipped prices, to show what the
image difference is worth and where it lands (the shipped model does not apply it; §12 says why).
Run: python scripts/aiter_generic_gemm.py [RATE_GB_S]   (default: the median of part 1)
"""

from __future__ import annotations

import argparse
import math
from contextlib import contextmanager

import numpy as np
import pandas as pd

import jalapeno.cost.pricer as pricer_mod
import jalapeno.cost.roofline as roofline_mod
from jalapeno.cost.roofline import OpTimes
from jalapeno.fit.data_quality import DEFAULT_POINTS
from jalapeno.fit.validate import predict_points
from jalapeno.fit.ix_points import load_inferencex

#: the generic gfx942 config's tile (BLOCK_SIZE_M x BLOCK_SIZE_N) and split-K at aiter v0.1.10.post3
GENERIC_TILE_M, GENERIC_TILE_N, GENERIC_SPLIT_K = 128, 128, 1
#: InferenceX issue #863 (turn 10, Klaud-Cold, 2026-03): a bot's table of a dsr1-fp8-mi325x-sglang
#: decode-step trace on lmsysorg/sglang:v0.5.9-rocm700-mi30x, TP8, average kernel time per call (µs).
#: The (n, k) are DeepSeek-R1's TP8 shapes of the named op (the table's own shape column is garbled:
#: "o_proj 64 x 896 x 512"); the bot's row label, then (n, k, µs).
PROFILE_V059 = {
    "q_a_proj (fused q_a + kv_a)": (2112, 7168, 123.0),
    "o_proj": (7168, 2048, 34.0),
    "dense FFN gate_up (layers 0-2)": (4608, 7168, 122.0),
    "dense FFN down (layers 0-2)": (7168, 2304, 39.0),
}
#: the MI300X/MI325X SGLang DeepSeek-R1 rows: v0.5.9 image (26, 28, 34, 35; 2026-02-27) and v0.5.19 (76-80)
ROWS = (26, 28, 34, 35, 76, 77, 78, 79, 80)


def workgroups(m: float, n: float) -> float:
    """Workgroups the generic config launches for an m x n output: ceil(m/128)·ceil(n/128)·split-K."""
    return math.ceil(max(m, 1) / GENERIC_TILE_M) * math.ceil(n / GENERIC_TILE_N) * GENERIC_SPLIT_K


def profile_rates(m: float = 64.0) -> pd.DataFrame:
    """Per-workgroup weight streaming rate (bytes/s) each :data:`PROFILE_V059` timing implies (FP8 weights, 1 B)."""
    rows = [
        {
            "kernel": name,
            "n": n,
            "k": k,
            "us": us,
            "workgroups": workgroups(m, n),
            "rate_gb_s": n * k / (us * 1e-6) / workgroups(m, n) / 1e9,
        }
        for name, (n, k, us) in PROFILE_V059.items()
    ]
    return pd.DataFrame(rows)


@contextmanager
def generic_attention_gemms(rate_bytes_per_s: float):
    """Price DeepSeek's attention projections as the generic-config Triton GEMM (module docstring):
    fused q_a + kv_a, q_b and o_proj each take at least weight bytes / (workgroups x rate)."""
    original = roofline_mod.op_times

    def floored(table, chip, eff) -> OpTimes:
        t = original(table, chip, eff)
        if "attn.qkv_a_proj" not in table.name or not table.kn:
            return t
        i = {n: j for j, n in enumerate(table.name)}
        m = np.maximum(np.asarray(table.rows, dtype=float), 1.0)
        time = t.time_s.copy()

        def wg(j):
            n = np.asarray(table.kn[j][1], dtype=float)
            return np.ceil(m[j] / GENERIC_TILE_M) * np.ceil(n / GENERIC_TILE_N) * GENERIC_SPLIT_K

        for name in ("attn.qkv_a_proj", "attn.q_b_proj", "attn.o_proj"):  # q_a + kv_a: one fused GEMM
            j = i[name]
            time[j] = np.maximum(time[j], table.weight_bytes[j] / (wg(j) * rate_bytes_per_s))
        return OpTimes(t.compute_s, t.memory_s, t.overhead_s, time, t.network_s)

    roofline_mod.op_times, pricer_mod.op_times = floored, floored
    try:
        yield
    finally:
        roofline_mod.op_times, pricer_mod.op_times = original, original


def main(rate_gb_s: float | None) -> None:
    rates = profile_rates()
    print(rates.round(1).to_string(index=False))
    rate = float(np.median(rates.rate_gb_s)) if rate_gb_s is None else rate_gb_s
    print(f"\nper-workgroup rate used: {rate:.2f} GB/s\n")
    pts, _ = load_inferencex(DEFAULT_POINTS)
    pts = [p for p in pts if int(p.id.split(":")[1]) in ROWS]
    shipped = predict_points(pts)
    with generic_attention_gemms(rate * 1e9):
        generic = predict_points(pts)
    keep = shipped.metric.isin(["throughput_per_chip", "tpot_s"])
    out = shipped[keep][["id", "system", "concurrency", "isl", "metric", "measured"]].copy()
    out["shipped %"] = 100 * shipped[keep].error
    out["generic-config %"] = 100 * generic[keep].error.to_numpy()
    print(
        out.to_string(
            index=False,
            formatters={
                "measured": "{:.4g}".format,
                "shipped %": "{:+.1f}".format,
                "generic-config %": "{:+.1f}".format,
            },
        )
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rate", nargs="?", type=float, default=None, help="per-workgroup GB/s (default: part 1's median)")
    main(ap.parse_args().rate)
