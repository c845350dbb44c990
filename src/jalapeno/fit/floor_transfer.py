"""An engine MoE backend's per-layer floor on a chip without kernel tables: pooled over the measured chips.

Some engine MoE backends have a fixed cost per layer that no load removes — their routing, swizzle/quantise
and gather-scatter kernels around the grouped GEMMs. Where a measured system prices such a backend by its
fitted form (fit/moe_backends.FLOOR_APPLIED: TensorRT-LLM's Triton MoE on H200, 59 µs per layer), a chip
without kernel tables (Jalapeño, Vera Rubin, each system left out by fit/loso.py) used to price it by the
borrowed set's roofline with three kernel launches (a few µs): H200's gpt-oss-120b TensorRT-LLM rows, which
run ``moe_config.backend: TRITON``, came out 24-28% too fast under leave-one-system-out (round 29).

Measured (scripts/floor_transfer_check.py): the floor is the engine's kernels', the same within a GPU
generation and not a function of the chip's SM count (``compute_units``; the catalog states no clock).
TensorRT-LLM 1.3.0rc20's Triton MoE (``moe_torch_flow`` ``w4a16_mxfp4``, gpt-oss-120b's shape, the EP1 rows,
fitted as fit/moe_backends.fit_backend_kernels fits H200's), µs: H100 57.5, H200 59.1 (132 SMs); B200 42.1,
GB200 41.6 (148 SMs), B300 39.2, GB300 41.0 (160 SMs). Within Blackwell the floors differ by 7% with no
order in SM count; Hopper's is 1.4x Blackwell's with 0.8-0.9x the SMs: a generation property of the Triton
kernels (triton_kernels' Hopper and Blackwell code paths), which no chip-quantity rule would carry. The
kernel floors the NVIDIA calibrations report but do not price (µs: GEMM BF16 2.4-3.4, the TRT-LLM MoE block
27.5-29.3, MLA decode FP8 6.1-8.3 over both generations; GQA decode Hopper 27-33, Blackwell 16) are printed by
the same script; no NVIDIA set prices them, so a borrowed set loses none.

The rule, stated before it was measured end to end: a chip priced without its own measurements
(cost/pricer.measured_here false) whose pool names a backend of :data:`TRANSFERRED` takes as its MoE floor
(specs/efficiency ``moe_floor_s``, replacing the three launches) the median of that backend's fitted floor
over the measured systems of :data:`FLOOR_SOURCES`, less the chip itself and its same-silicon twin
(specs/calibration.SAME_SILICON: nothing a left-out system measured reaches its prediction). The routed experts' form
(HBM fraction, peak fraction) stays the borrowed set's (fit/moe_transfer.py). No parameter is fitted here: a
median of per-system fits, written to data/moe_backend_floors.toml by scripts/fit_moe_backend_floors.py.
"""

from __future__ import annotations

from jalapeno.errors import SpecError
from jalapeno.specs.moe_backends import FLOOR_TRANSFERRED as TRANSFERRED  # noqa: F401 (the rule's backends)

#: the measured systems whose tables hold TensorRT-LLM's Triton MoE at gpt-oss-120b's shape
#: (aiconfigurator-core 0.12.0, 1.3.0rc20 ``moe_perf``: every NVIDIA system with MoE tables)
TRITON_SYSTEMS = ("h100", "h200", "b200", "gb200-nvl72", "b300", "gb300-nvl72")
#: backend → system → (aiconfigurator framework folder, kernel_source, table dtype → (compute format, weight
#: B/elem, activation B/elem), EP size of the rows fitted): the rows each system's floor is fitted on.
#: ``triton``: as fit/moe_backends.KERNEL_BACKENDS's (h200, triton) entry (W4A16 MXFP4: 4 bits + an E8M0 scale
#: per 32 = 0.53125 B/elem, BF16 activations; EP1, the rank holding every expert as at expert TP).
FLOOR_SOURCES: dict[str, dict[str, tuple]] = {
    "triton": {n: ("trtllm", "moe_torch_flow", {"w4a16_mxfp4": ("bf16", 0.53125, 2.0)}, 1) for n in TRITON_SYSTEMS},
}


def fit_backend_floors(backends=tuple(FLOOR_SOURCES)) -> list[dict]:
    """One entry per (backend, system) of :data:`FLOOR_SOURCES`: system, backend, ``floor_s`` (the fitted
    per-layer floor, s; fit/kernels.fit_moe on the backend's balanced-routing rows, alternate token counts held
    out), the table, kernel source, EP size, rows and the fit's median error.

    Raises:
        SpecError: an unknown backend, or the package lacks a table (``pip install -e ".[calibrate]"``).
    """
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_table
    from jalapeno.fit.kernels import fit_moe
    from jalapeno.specs.catalog import load_system

    out = []
    for backend in backends:
        if backend not in FLOOR_SOURCES:
            raise SpecError("backend", f"no floor source for {backend!r}", f"use one of {', '.join(FLOOR_SOURCES)}")
        for name, (framework, source, dtypes, ep) in FLOOR_SOURCES[backend].items():
            sdir = AIC_SYSTEM_DIRS[name]
            df, version = load_table(sdir, "moe", "moe_perf", backend=framework)
            d = df[(df.kernel_source == source) & df.moe_dtype.isin(list(dtypes)) & (df.moe_ep_size == ep)]
            _, rep = fit_moe(d, load_system(name), split="tokens", touched_rule="balanced", dtypes=dtypes)
            fit = next(iter(rep["formats"].values()))["fit"]
            out.append(
                {
                    "backend": backend,
                    "system": name,
                    "floor_s": rep["kernel_floor_s"],
                    "table": f"aiconfigurator {sdir} {framework} {version} moe_perf",
                    "kernel_source": source,
                    "dtype": ",".join(dtypes),
                    "ep": ep,
                    "rows": int(len(d)),
                    "fit_median_ape": fit["median_ape"],
                }
            )
    return out
