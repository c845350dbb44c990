"""The measured W4A16 (INT4 weight-only) grouped-MoE forms of the SM100-family chips (kimiw4a16_41, round 41).

aiconfigurator-core 0.12.0 measures Kimi K2.5's INT4 routed experts (``moe_perf``, ``moe_dtype = int4_wo``; hidden
7168, intermediate 2048, 384 experts, top-8, EP1 at expert TP 1-32, 1-16,384 tokens) on B200, B300, GB200 and GB300
with two engines' kernels:

- ``mxint4``: SGLang 0.5.14's FlashInfer trtllm-gen MXINT4 x BF16 MoE (``sglang_flashinfer_trtllm_moe``:
  ``--moe-runner-backend flashinfer_trtllm``, sgl-project/sglang PR #16892; SGLang's default on Blackwell since PR
  #18136), tcgen05 BF16 math on INT4 weights;
- ``marlin``: vLLM 0.24.0's Marlin MoE (``vllm_compressedtensorswna16marlinmoe_marlin_marlinexperts``: vLLM's
  default on the SM100 family, ``VLLM_USE_FLASHINFER_MOE_INT4`` off, vllm/envs.py), SM80 ``mma.sync`` BF16 math.

:func:`fit_w4a16_forms` fits each (chip, kernel) through the roofline's MoE form (fit/kernels.fit_moe, the same
call as fit/moe_backends.fit_backend_kernels: balanced rows, alternate token counts held out; every expert TP in one
form, no width term, as a set's ``moe`` entry prices every layout) and reports, for each chip, the error of B200's
form on that chip's rows (:func:`transfer_errors`: fitted on B200, reported on the other three).
Stored bytes per weight: 0.5625 (4 bits + a 16-bit scale per 32 weights, Kimi K2.5's ``int4``; a named assumption
for the collector's checkpoint, as for fit/moe_backends.KERNEL_BACKENDS' Marlin rows).
"""

from __future__ import annotations

import numpy as np

#: table dtype → (compute format, weight B/elem, activation B/elem)
W4A16_DTYPES = {"int4_wo": ("bf16", 0.5625, 2.0)}
#: kernel → (aiconfigurator framework folder, kernel_source)
W4A16_KERNELS = {
    "mxint4": ("sglang", "sglang_flashinfer_trtllm_moe"),
    "marlin": ("vllm", "vllm_compressedtensorswna16marlinmoe_marlin_marlinexperts"),
}
#: catalog chip → aiconfigurator system folder (the SM100 family with W4A16 MoE tables)
W4A16_SYSTEMS = {"b200": "b200_sxm", "b300": "b300_sxm", "gb200-nvl72": "gb200", "gb300-nvl72": "gb300"}
#: the chip whose form :func:`transfer_errors` carries to the others
TRANSFER_FROM = "b200"


def _rows(system: str, kernel: str):
    """(EP1 rows of ``kernel``'s W4A16 table on ``system``, the table's label)."""
    from jalapeno.fit.kernel_tables import load_table

    framework, source = W4A16_KERNELS[kernel]
    df, version = load_table(W4A16_SYSTEMS[system], "moe", "moe_perf", backend=framework)
    d = df[(df.kernel_source == source) & df.moe_dtype.isin(list(W4A16_DTYPES)) & (df.moe_ep_size == 1)]
    return d, f"aiconfigurator {W4A16_SYSTEMS[system]} {framework} {version} moe_perf"


def fit_w4a16_forms() -> list[dict]:
    """One fitted form per (chip, kernel) of :data:`W4A16_SYSTEMS` x :data:`W4A16_KERNELS`: system, kernel,
    peak_fraction (of the chip's BF16 peak), half_rows (rows per expert), hbm_fraction, floor_s (s per layer), the
    table, rows, the fit's and held-out (odd powers of two of tokens) median / p90 absolute errors, and the median
    signed / absolute error of :data:`TRANSFER_FROM`'s form on the chip's rows (:func:`transfer_errors`).

    Raises:
        SpecError: the package lacks a table (``pip install -e ".[calibrate]"``).
    """
    from jalapeno.fit.kernels import fit_moe
    from jalapeno.specs.catalog import load_system

    out = []
    for kernel in W4A16_KERNELS:
        for system in W4A16_SYSTEMS:
            d, table = _rows(system, kernel)
            params, rep = fit_moe(d, load_system(system), split="tokens", touched_rule="balanced", dtypes=W4A16_DTYPES)
            p, r = params["moe"]["bf16"], rep["formats"]["bf16"]
            out.append(
                {
                    "system": system,
                    "kernel": kernel,
                    "peak_fraction": p["peak_fraction"],
                    "half_rows": p["half_rows"],
                    "hbm_fraction": p["hbm_fraction"],
                    "floor_s": rep["kernel_floor_s"],
                    "table": table,
                    "rows": int(r["fit"]["n"] + r["held_out_tokens"]["n"]),
                    "fit_median_ape": r["fit"]["median_ape"],
                    "fit_p90_ape": r["fit"]["p90_ape"],
                    "held_out_median_ape": r["held_out_tokens"]["median_ape"],
                    "held_out_p90_ape": r["held_out_tokens"]["p90_ape"],
                }
            )
    src = {f["kernel"]: f for f in out if f["system"] == TRANSFER_FROM}
    for f in out:
        f["transfer_from"] = TRANSFER_FROM
        f["transfer_median_signed"], f["transfer_median_ape"] = transfer_errors(
            f["system"], f["kernel"], src[f["kernel"]]
        )
    return out


def transfer_errors(system: str, kernel: str, form: dict) -> tuple[float, float]:
    """(median signed, median absolute) relative error of ``form`` (peak_fraction, half_rows, hbm_fraction, floor_s)
    priced on ``system``'s own chip against its measured ``kernel`` rows (latency in ms)."""
    from jalapeno.fit.kernels import moe_model_s, moe_rows
    from jalapeno.specs.catalog import load_system

    d, _ = _rows(system, kernel)
    r = moe_rows(d, "balanced", W4A16_DTYPES)
    pred = moe_model_s(
        load_system(system), r, "bf16", form["peak_fraction"], form["half_rows"], form["hbm_fraction"], form["floor_s"]
    )
    e = pred / (r.latency.to_numpy(float) * 1e-3) - 1.0
    return float(np.median(e)), float(np.median(np.abs(e)))
