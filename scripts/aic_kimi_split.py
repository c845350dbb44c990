"""Print the facts docs/gap_aic_itl.md reads on Kimi K2.5's aiconfigurator TPOT on Blackwell (issue 18).

1. Kimi K2.5 TPOT error per system, checkpoint (the release's INT4 experts or NVIDIA's NVFP4 requantisation),
   engine release and layout: median signed error and n (fit/validate.predict_points, as validate runs it).
2. Per vLLM row, the TPOT split into the routed-expert block, the MLA attention module and the rest,
   measured and modelled: the model's times per step (the ``moe`` ops and the ``attn.*`` ops of
   cost/step.step_cost at the row's decode batch and decode context, with the point's stack and pricer) against
   the engine's own measured kernels at the row's layout, batch and context, each interpolated log-log and
   multiplied by the model's layers: the MoE kernel (aiconfigurator-core's ``moe_perf`` rows,
   :data:`MOE_KERNELS`, balanced routing) and, on B200, vLLM's MLA generation module
   (``mla_generation_module_perf``, vLLM 0.24.0, FLASHINFER_MLA, :data:`MLA_GEMM`, :data:`MLA_DIRS`); "rest" =
   TPOT minus both (the router, shared expert, norms and residuals, all-reduces, LM head, the engine's per-step
   costs and, in a TPOT, the prompts' prefill work the decoding users wait out). Medians per (system,
   checkpoint, engine release), then per layout and batch on B200. The H200 INT4 rows are left out of table 2:
   the vLLM Marlin W4A16 MoE rows aiconfigurator measured (vLLM 0.19.0) take longer than those rows' whole
   TPOT, so they are not the kernel the vLLM 0.16.0 runs used.

Reads aiconfigurator-core's ``systems/silicon_sample.csv`` and ``moe_perf`` tables (pip install -e ".[calibrate]").
Nothing is fitted or written. Run: python scripts/aic_kimi_split.py (about a minute)
"""

from __future__ import annotations

from importlib.resources import files

import numpy as np
import pandas as pd

from jalapeno.cost.pool_backends import with_pool_backends
from jalapeno.cost.step import Batch, pool_step_cost
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload, predict_points, with_stack_mtp
from jalapeno.specs.catalog import load_model

#: (system, precision) → (aiconfigurator system folder, framework folder, version, kernel_source, moe_dtype):
#: the MoE kernel each checkpoint's runs used, as measured by aiconfigurator's collector.
#: NVFP4 on B200: vLLM 0.19.0's rows (the release nearest the rows' 0.17.0), FlashInfer's TRT-LLM-gen NVFP4
#: MoE; B300 / GB200 have vLLM 0.24.0's only (the same kernels behind vLLM's modular MoE interface).
#: INT4 on B200: InferenceX's kimik2.5_int4_b200.sh (@79ea3651a, 2026-03-24) exports VLLM_USE_FLASHINFER_MOE_INT4=1,
#: FlashInfer's TRT-LLM-gen W4A16 MoE; aiconfigurator measures it in SGLang's build only (sglang 0.5.14).
#: INT4 on H200: kimik2.5_int4_h200.sh (@d689db817) sets no MoE switch, vLLM's Marlin W4A16 MoE (vLLM 0.19.0 rows).
MOE_KERNELS: dict[tuple[str, str], tuple[str, str, str, str, str]] = {
    ("b200", "fp4"): ("b200_sxm", "vllm", "0.19.0", "vllm_flashinfer_trtllm_moe_fp4", "nvfp4"),
    ("b300", "fp4"): (
        "b300_sxm",
        "vllm",
        "0.24.0",
        "vllm_compressedtensorsw4a4nvfp4moe_flashinfer_trtllm_trtllmnvfp4expertsmonolithic",
        "nvfp4",
    ),
    ("gb200-nvl72", "fp4"): (
        "gb200",
        "vllm",
        "0.24.0",
        "vllm_compressedtensorsw4a4nvfp4moe_flashinfer_trtllm_trtllmnvfp4expertsmonolithic",
        "nvfp4",
    ),
    ("b200", "int4"): ("b200_sxm", "sglang", "0.5.14", "sglang_flashinfer_trtllm_moe", "int4_wo"),
}
#: the attention projections' format of each checkpoint, as aiconfigurator's MLA module table names it: BF16 in
#: both. The INT4 release quantises the experts only (config.json quantization_config targets); NVIDIA's NVFP4
#: checkpoint leaves every ``self_attn*`` module unquantised (its config.json, aiconfigurator-core 0.12.0
#: ``model_configs/nvidia--Kimi-K2.5-NVFP4_config.json``: quantization_config ``ignore``); the catalog's fp4
#: preset prices them as FP8 (DeepSeek-R1-FP4's split), which makes the model faster, not slower, on these rows.
MLA_GEMM = {"fp4": "bfloat16", "int4": "bfloat16"}
#: systems folder of aiconfigurator's vLLM MLA generation-module table used: B200 only. The B300 and GB200
#: tables of the same release put the module at about 2.2x B200's latency at the same point (16 heads, batch 16,
#: step 2,048, BF16 GEMMs, FP8 KV: 0.110 / 0.115 ms against 0.050), more than those rows' TPOT leaves after the
#: MoE kernel, so they are not read here.
MLA_DIRS = {"b200": "b200_sxm"}


def interp_loglog(x, xs, ys) -> float:
    """y at ``x`` on the curve (xs, ys), linear in log x and log y (ends held).

    >>> round(interp_loglog(8, [4, 16], [1.0, 4.0]), 6)  # halfway in log x: sqrt(1 * 4)
    2.0
    """
    return float(np.exp(np.interp(np.log(x), np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float)))))


def mla_module_s(system: str, gemm: str, kv: str, heads: int, batch: float, context: float) -> float | None:
    """vLLM's measured MLA generation module latency per layer (s) at ``heads`` per rank, interpolated
    log-log in batch and in context (``step``); None where the table lacks the system or head count."""
    if system not in MLA_DIRS:
        return None
    path = files("aiconfigurator_core") / "systems" / "data" / MLA_DIRS[system] / "mla" / "vllm" / "0.24.0"
    df = pd.read_parquet(str(path / "mla_generation_module_perf.parquet"))
    d = df[(df.gemm_type == gemm) & (df.kv_cache_dtype == kv) & (df.num_heads == heads)]
    if d.empty:
        return None
    return interp_table(d, "batch_size", batch, "step", context) * 1e-3


def interp_table(d: pd.DataFrame, outer: str, x_outer: float, inner: str, x_inner: float) -> float:
    """``latency`` of table ``d`` at (x_outer, x_inner): per value of column ``outer`` the fastest row per
    ``inner`` value interpolated log-log at ``x_inner``, then those interpolated log-log at ``x_outer``.

    >>> t = pd.DataFrame({"b": [1, 1, 4, 4], "s": [1, 100, 1, 100], "latency": [1.0, 10.0, 4.0, 40.0]})
    >>> round(interp_table(t, "b", 2, "s", 10), 6)  # sqrt(10) at b = 1, 4 sqrt(10) at b = 4, then halfway
    6.324555
    """
    by_outer = []
    for o, g in d.groupby(outer):
        g = g.groupby(inner).latency.min().sort_index()
        by_outer.append((float(o), interp_loglog(x_inner, g.index, g.to_numpy(float))))
    xs, lat = zip(*sorted(by_outer))
    return interp_loglog(x_outer, xs, lat)


def errors_by_group(pts) -> pd.DataFrame:
    """Table 1: median signed TPOT error and n per system, checkpoint, engine release and layout."""
    got = predict_points(pts)
    t = got[got.metric == "tpot_s"]
    print("== Kimi K2.5 aiconfigurator TPOT error (predicted / measured - 1) by checkpoint and layout")
    print(
        t.groupby(["system", "precision", "framework", "deployment"])["error"]
        .agg(n="count", median="median")
        .round(3)
        .to_string()
    )
    print("\nper system and checkpoint:")
    print(t.groupby(["system", "precision"])["error"].agg(n="count", median="median", mean="mean").round(3).to_string())
    return got


def _moe_curve(system: str, precision: str, hidden: int, inter: int, experts: int, moe_tp: int, ep: int):
    """(tokens, latency s) of the measured MoE kernel at one layout, or None."""
    key = MOE_KERNELS.get((system, precision))
    if key is None:
        return None
    sdir, fw, ver, src, dtype = key
    path = files("aiconfigurator_core") / "systems" / "data" / sdir / "moe" / fw / ver / "moe_perf.parquet"
    df = pd.read_parquet(str(path))
    d = df[
        (df.kernel_source == src)
        & (df.moe_dtype == dtype)
        & (df.distribution == "balanced")
        & (df.hidden_size == hidden)
        & (df.inter_size == inter)
        & (df.num_experts == experts)
        & (df.moe_tp_size == moe_tp)
        & (df.moe_ep_size == ep)
    ]
    if d.empty:
        return None
    g = d.groupby("num_tokens").latency.min().sort_index()
    return g.index.to_numpy(float), g.to_numpy(float) * 1e-3


def split_rows(pts, got: pd.DataFrame) -> pd.DataFrame:
    """Table 2: each aggregated vLLM row's TPOT split into routed experts and the rest, measured and modelled."""
    model = load_model("kimi-k2.5")
    m = model.moe
    pred = got[got.metric == "tpot_s"].set_index("id")
    curves, mla_tables, out = {}, {}, []
    for p in pts:
        if not p.framework.startswith("vllm") or p.deployment is None or p.id not in pred.index:
            continue
        dep = with_stack_mtp(p.deployment, point_stack(p), p.model)
        lay, pool = dep.decode.layout, dep.decode
        batch = p.concurrency / pool.workers if dep.prefill is not None else p.concurrency
        ck = (p.system, p.precision, lay.moe_tp, lay.ep)
        if ck not in curves:
            curves[ck] = _moe_curve(
                p.system, p.precision, model.hidden_size, m.expert_intermediate, m.num_experts, lay.moe_tp, lay.ep
            )
        curve = curves[ck]
        if curve is None:
            continue
        pricer = with_pool_backends(
            load_any_pricer(p.system, "calibrated", pricer="roofline", stack=point_stack(p)), pool, model, lay
        )
        wl = point_workload(p)
        sc = pool_step_cost(
            model, pricer, dep, lay, Batch.make(decode_seqs=np.array([batch / lay.pp]), decode_ctx=wl.decode_ctx)
        )
        rows = sc.op_rows()
        moe_model = sum(r["time_s"] for r in rows if r["kind"] == "moe")
        attn_model = sum(r["time_s"] for r in rows if r["op"].startswith("attn."))
        tok, lat = curve
        moe_meas = interp_loglog(batch, tok, lat) * model.num_moe_layers
        kv = "fp8" if dep.precision.kv_cache.name.startswith("fp8") else "bfloat16"
        mk = (p.system, p.precision, kv, model.attention.num_heads // lay.tp)
        if mk not in mla_tables:
            mla_tables[mk] = {}
        key = (batch, round(wl.decode_ctx))
        if key not in mla_tables[mk]:
            mla_tables[mk][key] = mla_module_s(p.system, MLA_GEMM[p.precision], kv, mk[3], batch, wl.decode_ctx)
        one = mla_tables[mk][key]
        attn_meas = float("nan") if one is None else one * model.num_layers
        meas, mod = float(p.measured["tpot_s"]), float(pred.loc[p.id, "predicted"])
        out.append(
            {
                "system": p.system,
                "precision": p.precision,
                "framework": p.framework,
                "layout": f"TP{lay.tp} MoE-TP{lay.moe_tp} EP{lay.ep}",
                "isl": p.isl,
                "osl": p.osl,
                "batch": batch,
                "tpot_meas_ms": meas * 1e3,
                "tpot_model_ms": mod * 1e3,
                "moe_meas_ms": moe_meas * 1e3,
                "moe_model_ms": moe_model * 1e3,
                "attn_meas_ms": attn_meas * 1e3,
                "attn_model_ms": attn_model * 1e3,
                "rest_meas_ms": (meas - moe_meas - attn_meas) * 1e3,
                "rest_model_ms": (mod - moe_model - attn_model) * 1e3,
            }
        )
    df = pd.DataFrame(out)
    for part in ("moe", "attn", "rest"):
        df[f"{part}_ratio"] = df[f"{part}_model_ms"] / df[f"{part}_meas_ms"]
    print(
        "\n== vLLM rows: TPOT = routed experts + MLA attention module + rest, measured and model (ms; medians),"
        " model / measured"
    )
    cols = [
        "tpot_meas_ms",
        "tpot_model_ms",
        "moe_meas_ms",
        "moe_model_ms",
        "attn_meas_ms",
        "attn_model_ms",
        "rest_meas_ms",
        "rest_model_ms",
    ]
    agg = {
        "n": ("batch", "size"),
        **{c: (c, "median") for c in cols},
        **{f"{p}_ratio": (f"{p}_ratio", "median") for p in ("moe", "attn", "rest")},
    }
    print(df.groupby(["system", "precision", "framework"]).agg(**agg).round(2).to_string())
    print("\nby layout and batch (B200):")
    b = df[df.system == "b200"]
    print(b.groupby(["precision", "layout", "batch"]).agg(**agg).round(2).to_string())
    return df


def main() -> None:
    pd.set_option("display.width", 250)
    pts = [p for p in load_aiconfigurator()[0] if p.model == "kimi-k2.5"]
    got = errors_by_group(pts)
    split_rows(pts, got)


if __name__ == "__main__":
    main()
