"""Dense Llama-70B NVFP4 decode at large batch on B200 / GB200 (TensorRT-LLM): is the step 1.2-1.3x too fast
because the NVFP4 GEMMs at m = 128-512 rows are priced too fast? (issue 18; diagnosis only,
docs/gap_large_batch_decode.md "Round 37 (dense37)").

mlperf37 found the model's step at the MLPerf B200 Llama-2-70B Interactive run's own load (TP1, ~255 decoding
requests per GPU, ~360-token contexts) 1.31x faster than the run's (26.0 vs 34.2 ms). This prints

- ``shapes``: the four TP1 Llama-70B projections (qkv n 10,240 / o n 8,192 at k 8,192; gate_up n 57,344 at k 8,192
  and down k 28,672 at n 8,192 lie between table shapes, so their two neighbours are shown) in aiconfigurator-core
  0.12.0's TensorRT-LLM 1.3.0rc20 ``gemm_perf`` ``nvfp4`` table: the measured time as serving sees it
  (fit/table_lookup.serving_time: the standalone floor replaced by the launch cost) over the served calibrated
  roofline's (cost/pricer.RooflinePricer, calibration/<system>.toml), at m = 128, 256 and 512;
- ``steps``: the decode-only step (no prompt tokens) of the MLPerf model at the Interactive and Server runs'
  decode batches (255 and ~1,528 a GPU, Little's law), and of Llama-3.3-70B at aiconfigurator's TP1 1k/1k point at
  concurrency 128 (~1,536-token contexts), priced by the roofline (what
  validate serves) and by the table-lookup pricer (fit/table_lookup.load_table_pricer: each GEMM at its measured
  table time).

Reading (round 37): the table is 1.3x (qkv), 1.5x (o) and 1.6-1.8x (down) slower than the served form at m 128 and
256 alike, ~0.9-1.0x on gate_up, and within 0.87-1.04x at m 512 except qkv (1.35x); on the decode step the table
pricer is 1.26x the roofline at the Interactive run's 255 x 360 -- the size of the 1.31x gap -- but also 1.18x at
aiconfigurator's TP1 1k/1k c128 point, where the roofline meets the measured TPOT (+1%), and 1.02x at the Server
run's ~1,528 (so the Server / Offline rows cannot tell the two apart). ``jalapeno validate
--pricer table`` says the same end to end: the MLPerf B200 / GB200 x4 Llama-2-70B Interactive rows +37.5 / +38.2% ->
+15.0 / +12.4% (Server / Offline move 1-2 points), while aiconfigurator's B200 Llama-3.3-70B NVFP4 TensorRT-LLM
TPOT rows go from median |error| 3.0% to bias +22.9% (+8..+38% at every TP1-TP8 x c4-c128 1k/1k point; vLLM
+32%). The table's few-hundred-row NVFP4 tactic is not what a CUDA-graph serving engine runs at those shapes
(rounds 15-16 found the same at few rows), so the GEMM pricing is kept; the MLPerf gap is the Interactive
engine's own step (TensorRT engine path, ``use_graphs: False``), not the kernels. Cross-check: H200's Llama-2-70B
Interactive run (per-tensor FP8, TP1, the same engine path) is 1.19x the model's step at its load, where the FP8
table is within 0.93-1.09x of the served form at these shapes (one 1.59x) and the table step 1.09x the roofline's.
Run: python scripts/dense_nvfp4_gemm37.py   (under a minute: builds the table pricer of three systems)
"""

from __future__ import annotations

import numpy as np

#: TP1 Llama-70B projections (Llama-2-70B and Llama-3.3-70B: hidden 8,192, FFN 28,672, 64 / 8 heads of 128):
#: name -> (n, k) shapes of the table nearest to the layer's (qkv 10,240 x 8,192, o 8,192 x 8,192, gate_up
#: 57,344 x 8,192, down 8,192 x 28,672)
SHAPES = {
    "qkv": [(10240, 8192)],
    "o": [(8192, 8192)],
    "gate_up": [(51200, 8192), (65536, 8192)],
    "down": [(8192, 16384), (8192, 51200)],
}
#: the MLPerf H200 Llama-2-70B Interactive run's decode batch per GPU (Little's law; scripts/mlperf_interactive_tail37.py)
H200_RUN = 107
#: rows (tokens) of the GEMMs shown
ROWS = (128, 256, 512)
#: (label, model, decode batch, mean context tokens) of the decode-only steps priced
STEPS = (
    ("MLPerf B200 Llama-2-70B Interactive load", "llama-2-70b", 255, 360),
    ("aiconfigurator TP1 1k/1k c128", "llama-3.3-70b", 128, 1536),
    ("MLPerf B200 Llama-2-70B Server load", "llama-2-70b", 1528, 360),
)


def shape_ratios(system: str, dtype: str = "nvfp4") -> dict:
    """(n, k, m) -> measured serving time / served roofline time of the ``dtype`` GEMM rows (``nvfp4``; ``fp8``:
    per-tensor FP8) of ``system``'s TensorRT-LLM table at :data:`SHAPES` and :data:`ROWS` (dimensionless)."""
    from jalapeno.cost.pricer import RooflinePricer
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, GEMM_DTYPES, gemm_key, load_table
    from jalapeno.fit.kernels import gemm_table
    from jalapeno.fit.table_lookup import serving_time, standalone_floors
    from jalapeno.specs.catalog import load_efficiency, load_system

    g, _ = load_table(AIC_SYSTEM_DIRS[system], "gemm", "gemm_perf")
    want = {s for v in SHAPES.values() for s in v}
    d = g[(g.gemm_dtype == dtype) & g.m.isin(ROWS)]
    d = d[[(n, k) in want for n, k in zip(d.n, d.k)]].groupby(["m", "n", "k"], as_index=False).latency.min()
    fmt, wb, ab = GEMM_DTYPES[dtype]
    m, n, k = (d[c].to_numpy(float) for c in ("m", "n", "k"))
    pr = RooflinePricer(load_system(system), load_efficiency(system, "calibrated"))
    key = gemm_key(dtype)
    times = pr.op_times(gemm_table(m, n, k, fmt, wb, ab, key))
    t = serving_time(d.latency.to_numpy() * 1e-3, standalone_floors(system).get(("gemm", key), 0.0), times)
    r = t / times.time_s[0]
    return {(int(a), int(b), int(c)): float(x) for a, b, c, x in zip(n, k, m, r)}


def decode_step_s(system: str, model: str, batch: int, ctx: int, pricer: str, precision: str = "nvfp4") -> float:
    """Decode-only step (s) of ``model`` at ``precision`` at TP1 on ``system`` (TensorRT-LLM profile), ``batch``
    sequences at mean context ``ctx`` tokens, priced by ``pricer`` (``roofline`` or ``table``)."""
    from jalapeno.cli.common import resolve_precision
    from jalapeno.cost.step import Batch, step_cost
    from jalapeno.deploy.layout import Layout, for_model
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.specs.catalog import load_model

    m = load_model(model)
    pr = load_any_pricer(system, "calibrated", (), pricer, "trtllm@1.2.0rc2")
    sc = step_cost(
        m,
        pr,
        for_model(Layout(tp=1, dp=1, ep=1), m),
        resolve_precision(m, precision),
        Batch.make(decode_seqs=batch, decode_ctx=ctx),
    )
    return float(np.asarray(sc.step_time_s)[0])


def main() -> None:
    for system in ("b200", "gb200-nvl72"):
        r = shape_ratios(system)
        print(f"{system}: nvfp4 GEMM, measured serving time / served roofline (m = {', '.join(map(str, ROWS))})")
        for name, shapes in SHAPES.items():
            for n, k in shapes:
                print(
                    f"  {name:8s} n {n:6d} k {k:6d}: "
                    + "  ".join(f"{r.get((n, k, mm), float('nan')):.2f}" for mm in ROWS)
                )
        for label, model, b, c in STEPS:
            ro, ta = (decode_step_s(system, model, b, c, p) for p in ("roofline", "table"))
            print(
                f"  decode step, {label} ({b} x {c}): roofline {ro * 1e3:5.2f} ms, table {ta * 1e3:5.2f} ms "
                f"({ta / ro:.2f}x)"
            )
    # the cross-check: H200's Llama-2-70B Interactive run (same engine path, per-tensor FP8) is 1.19x the model's step
    r = shape_ratios("h200", "fp8")
    print(f"h200: per-tensor fp8 GEMM, measured serving time / served roofline (m = {', '.join(map(str, ROWS))})")
    for name, shapes in SHAPES.items():
        for n, k in shapes:
            print(
                f"  {name:8s} n {n:6d} k {k:6d}: " + "  ".join(f"{r.get((n, k, mm), float('nan')):.2f}" for mm in ROWS)
            )
    ro, ta = (decode_step_s("h200", "llama-2-70b", H200_RUN, 360, p, "fp8-tensor") for p in ("roofline", "table"))
    print(
        f"  decode step, MLPerf H200 Llama-2-70B Interactive load ({H200_RUN} x 360): roofline {ro * 1e3:5.2f} ms, "
        f"table {ta * 1e3:5.2f} ms ({ta / ro:.2f}x)"
    )


if __name__ == "__main__":
    main()
