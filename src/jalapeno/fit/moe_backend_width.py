"""The width term of an engine MoE backend's fitted form (fit/moe_backends.fit_backend_kernels).

vLLM's Marlin MoE (W4A16: 4-bit weights dequantised in registers into BF16 tensor-core math) loses
compute rate as its experts are split narrower by expert TP. aiconfigurator-core 0.12.0's vLLM 0.24.0
``moe_perf`` rows on H100 (MXFP4, hidden 3,584, intermediate 3,072, 896 experts, top-16, EP 1) at 16,384
tokens (292.6 rows per expert, every Marlin tile full: vLLM's ``fused_marlin_moe`` takes the first
``block_size_m`` of 8, 16, 32, 48, 64 with M·topk/E/block_size_m < 0.9, i.e. 64 from 57.6 rows per expert)
run 2·16,384·16·3·3,584·3,072 / t = 17.3 TFLOP / 75.4 ms at MoE TP1 (slices 3,072 wide), 8.7 TFLOP /
39.0 ms at TP2, 4.3 / 21.0 ms at TP4, 2.2 / 12.6 ms at TP8 and 1.1 / 8.3 ms at TP16 (192 wide): 0.23,
0.22, 0.21, 0.17 and 0.13 of the 989.4 TFLOP/s BF16 peak. A form with one peak fraction and no width
(the fit before round 39) settles on the compromise, pricing TP1-TP2 prompt-sized loads 20-38% slow and
TP16 ones 30% fast. The width term of the TensorRT-LLM kernels (cost/moe_width.py: compute time x
1 + ((c/w)^p − (c/I)^p)·m/(m + half_rows), w = I/k the per-rank width at expert TP k, I the full width,
m rows per expert) is the same mechanism (a fixed cost per output tile of a K loop w long for the down
projection and 2w wide for gate/up, against MACs that scale with w); here its (c, p) are fitted on the
backend's own rows, jointly with the peak fraction and half rows it moves, because the backend's rows
span every expert TP (1-16 on H100, 1-32 on H200/B200) rather than pairing TP with EP layouts.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from jalapeno.cost.moe_width import width_factor

#: fewest distinct expert-TP sizes among a backend's fitted rows for its width term to be identified
#: (with one the width is constant and c, p are confounded with the peak fraction: H200 Triton's TP1 rows)
WIDTH_MIN_TP_SIZES = 3


def width_model_s(system, r: pd.DataFrame, fmt: str, form: dict, c: float | None, p: float | None) -> np.ndarray:
    """Modelled per-layer time (s) of each ``moe_rows`` row of ``r`` under the backend ``form`` (peak_fraction,
    half_rows, hbm_fraction, floor_s) with the width term (c elements, exponent p) on the compute part, relative
    to each row's full width ``inter_size`` (cost/moe_width.width_factor); c None: no width term."""
    from jalapeno.fit.kernels import moe_times

    t = moe_times(system, r, fmt, form["peak_fraction"], form["half_rows"], form["hbm_fraction"], form["floor_s"])
    compute = t.compute_s[0]
    if c is not None:
        rows = (r.load / np.maximum(r.touched, 1e-30)).to_numpy(float)
        compute = compute * width_factor(
            r.inter.to_numpy(float), r.moe_tp_size.to_numpy(float), rows, form["half_rows"], c, p
        )
    return np.maximum(compute, t.memory_s[0]) + t.overhead_s[0]


def fit_width_form(system, rows: pd.DataFrame, fmt: str, form: dict) -> dict:
    """The backend's peak fraction, half rows and width term (c_elems, exponent) refitted together on the fit split
    of ``rows`` (``moe_rows`` of one compute format; the token counts that are even powers of two, as
    fit/kernels.fit_moe's ``tokens`` split), the HBM fraction and floor of ``form`` (fit_moe's, identified on the
    weight-streaming rows) held; robust least squares on log time (soft L1, scale 0.2, as fit_moe). Returns the
    refitted ``peak_fraction``, ``half_rows``, ``c_elems``, ``exponent`` and the fit / held-out (odd powers of two)
    median and p90 absolute errors of the form with the term, replacing fit_moe's in the written entry.

    Raises:
        ValueError: ``rows`` spans fewer than :data:`WIDTH_MIN_TP_SIZES` expert-TP sizes.
    """
    from scipy.optimize import least_squares

    from jalapeno.fit.kernels import _ape, _sig

    if rows.moe_tp_size.nunique() < WIDTH_MIN_TP_SIZES:
        raise ValueError(f"fit_width_form: {rows.moe_tp_size.nunique()} expert-TP sizes, need {WIDTH_MIN_TP_SIZES}")
    held = np.round(np.log2(rows.num_tokens.to_numpy(float))).astype(int) % 2 == 1
    train, test = rows[~held], rows[held]

    def trial(x) -> dict:
        return {**form, "peak_fraction": _sig(x[0]), "half_rows": math.exp(x[1])}

    def resid(x):
        return np.log(width_model_s(system, train, fmt, trial(x), math.exp(x[2]), math.exp(x[3])) / train.t.to_numpy())

    x0 = [0.0, math.log(form["half_rows"]), math.log(256.0), 0.0]
    x = least_squares(resid, x0, loss="soft_l1", f_scale=0.2, max_nfev=600).x
    got, c, p = trial(x), math.exp(x[2]), math.exp(x[3])
    fit_e = _ape(width_model_s(system, train, fmt, got, c, p), train.t)
    ho_e = _ape(width_model_s(system, test, fmt, got, c, p), test.t)
    return {
        "peak_fraction": got["peak_fraction"],
        "half_rows": got["half_rows"],
        "c_elems": c,
        "exponent": p,
        "fit_median_ape": fit_e["median_ape"],
        "fit_p90_ape": fit_e["p90_ape"],
        "held_out_median_ape": ho_e["median_ape"],
        "held_out_p90_ape": ho_e["p90_ape"],
    }
