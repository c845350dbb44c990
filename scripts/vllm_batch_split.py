"""vLLM decode priced too fast at large batches: the measured split by concurrency band, and vLLM's own dense
FP8 GEMM rows against TensorRT-LLM's (issue 18, round 24; diagnosis only, nothing fitted or written).

Part 1 (``--csv FILE``, a per-point CSV of ``jalapeno validate -o FILE``): for the aiconfigurator TPOT rows of
vLLM and TensorRT-LLM (``mapping`` matched), per (engine, system, ISL/OSL, concurrency band) the mean error
(predicted / measured − 1; negative = the model too fast) and the mean deficit, measured − predicted TPOT, ms.

Part 2 (always): one decode step's FP8 GEMMs of Llama-3.3-70B (80 layers; per TP rank: qkv 10240/TP x 8192,
o 8192 x 8192/TP, gate_up 57344/TP x 8192, down 8192 x 28672/TP) summed from aiconfigurator-core 0.12.0's
``gemm_perf`` tables (per-tensor ``fp8`` rows; vLLM 0.24.0: ``CutlassFP8ScaledMMLinearKernel``; TensorRT-LLM
1.3.0rc20: ``torch_flow``), at M decode rows (M = the decode batch a CUDA graph pads to). A shape off the
tables' (n, k) grid is interpolated linearly in (log n, log k, log latency) among that M's rows (nearest row
outside their hull). ``excess`` = (vLLM(M) − vLLM(16)) − (TRT-LLM(M) − TRT-LLM(16)): how much more vLLM's
GEMMs add from 16 rows to M than TensorRT-LLM's, ms per step. The tables time standalone launches; the
difference of two rows of one table cancels most of the launch floor.

Run: python scripts/vllm_batch_split.py [--csv FILE]     (seconds; part 2 needs aiconfigurator-core)
Used by docs/gap_aic_itl.md ("vLLM decode too fast at large batches").
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

#: (aiconfigurator system folder, backend, version) of the tables part 2 reads
TABLES = {"vllm": "0.24.0", "trtllm": "1.3.0rc20"}
SYSTEMS = ("h100_sxm", "h200_sxm", "b200_sxm")
#: Llama-3.3-70B's per-layer GEMMs (n, k) at TP 1 and how each divides by TP (n or k)
LLAMA_GEMMS = (((10240, 8192), "n"), ((8192, 8192), "k"), ((57344, 8192), "n"), ((8192, 28672), "k"))
LAYERS = 80
ROWS = (8, 16, 32, 48, 64, 128)
BANDS = ((8, "C<=8"), (16, "C16"), (32, "C32"), (64, "C64"), (128, "C65-128"), (256, "C129-256"), (1 << 30, "C>256"))


def band_table(csv: str, models: list[str]) -> pd.DataFrame:
    """Mean error and deficit per (model, engine, system, ISL/OSL, band) of the aiconfigurator TPOT rows of
    ``models``."""
    d = pd.read_csv(csv)
    a = d[
        d.source.str.startswith("aic") & (d.metric == "tpot_s") & (d["mapping"] == "matched") & d.model.isin(models)
    ].copy()
    a["engine"] = a.framework.str.split().str[0]
    a = a[a.engine.isin(["vllm", "trtllm"])]
    a["shape"] = a.isl.astype(int).astype(str) + "/" + a.osl.astype(int).astype(str)
    a["band"] = a.concurrency.map(lambda c: next(name for top, name in BANDS if c <= top))
    a["err"] = a.predicted / a.measured - 1
    a["deficit_ms"] = (a.measured - a.predicted) * 1e3
    t = (
        a.groupby(["model", "engine", "system", "shape", "band"])
        .agg(n=("err", "size"), err=("err", "mean"), deficit_ms=("deficit_ms", "mean"))
        .reset_index()
    )
    t["cell"] = [f"{e * 100:+.0f}% ({m:+.1f})" for e, m in zip(t.err, t.deficit_ms)]
    order = [name for _, name in BANDS]
    out = t.pivot_table(index=["model", "engine", "system", "shape"], columns="band", values="cell", aggfunc="first")
    return out.reindex(columns=[b for b in order if b in out.columns]).fillna("")


def slope_table(csv: str, model: str = "minimax-m2.5", engine: str = "vllm") -> pd.DataFrame:
    """Per run (system, release, precision, ISL/OSL, layout) of ``model``'s aiconfigurator TPOT rows: the TPOT each
    added user costs between consecutive concurrencies from 64 up, measured and predicted, µs per user, and
    the deficit (measured − predicted TPOT) at the higher one, ms."""
    d = pd.read_csv(csv)
    a = d[
        d.source.str.startswith("aic")
        & (d.metric == "tpot_s")
        & (d["mapping"] == "matched")
        & (d.model == model)
        & d.framework.str.startswith(engine)
    ].copy()
    a["layout"] = a.deployment.str.extract(r"(attn TP\d+ DP\d+ · MoE TP\d+ EP\d+)")[0]
    rows = []
    for key, g in a.groupby(["system", "framework", "precision", "isl", "osl", "layout"]):
        g = g[g.concurrency >= 64].groupby("concurrency", as_index=False)[["measured", "predicted"]].mean()
        for (_, lo), (_, hi) in zip(g.iterrows(), g.iloc[1:].iterrows()):
            dc = hi.concurrency - lo.concurrency
            rows.append(
                (
                    *key,
                    f"{lo.concurrency:g}-{hi.concurrency:g}",
                    (hi.measured - lo.measured) / dc * 1e6,
                    (hi.predicted - lo.predicted) / dc * 1e6,
                    (hi.measured - hi.predicted) * 1e3,
                )
            )
    return pd.DataFrame(
        rows,
        columns=[
            "system",
            "release",
            "precision",
            "isl",
            "osl",
            "layout",
            "C",
            "meas_us_per_user",
            "pred_us_per_user",
            "deficit_ms",
        ],
    ).round(1)


def _lookup(rows: pd.DataFrame):
    """log-latency at (log n, log k) for one M's rows: linear inside their hull, nearest outside."""
    from scipy.interpolate import LinearNDInterpolator, NearestNDInterpolator

    x = np.c_[np.log(rows.n), np.log(rows.k)]
    y = np.log(rows.latency.to_numpy())
    lin, near = LinearNDInterpolator(x, y), NearestNDInterpolator(x, y)

    def at(n: float, k: float) -> float:
        q = np.array([[np.log(n), np.log(k)]])
        v = lin(q)[0]
        return float(np.exp(near(q)[0] if np.isnan(v) else v))

    return at


def step_gemm_ms(system: str) -> dict:
    """{(backend, tp, M): ms} of Llama-3.3-70B's FP8 GEMMs in one decode step on ``system``."""
    import aiconfigurator_core

    root = Path(aiconfigurator_core.__file__).parent / "systems" / "data" / system / "gemm"
    out = {}
    for backend, version in TABLES.items():
        t = pd.read_parquet(root / backend / version / "gemm_perf.parquet")
        t = t[t.gemm_dtype == "fp8"].groupby(["m", "n", "k"], as_index=False).latency.min()
        for m in ROWS:
            at = _lookup(t[t.m == m])
            for tp in (1, 2, 4, 8):
                out[backend, tp, m] = LAYERS * sum(
                    at(n / tp if by == "n" else n, k / tp if by == "k" else k) for (n, k), by in LLAMA_GEMMS
                )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", help="a per-point CSV of `jalapeno validate -o FILE` (part 1)")
    ap.add_argument(
        "--models", default="llama-3.3-70b,minimax-m2.5,gpt-oss-120b", help="part 1's models, comma-separated"
    )
    args = ap.parse_args()
    pd.set_option("display.width", 250)
    if args.csv:
        print(band_table(args.csv, args.models.split(",")).to_string(), "\n")
        print(slope_table(args.csv).to_string(index=False), "\n")
    for system in SYSTEMS:
        g = step_gemm_ms(system)
        print(
            f"{system}: Llama-3.3-70B FP8 GEMMs per decode step, ms (vLLM {TABLES['vllm']} / "
            f"TensorRT-LLM {TABLES['trtllm']}); excess over M 16"
        )
        for tp in (1, 2, 4, 8):
            cells = "  ".join(f"M{m} {g['vllm', tp, m]:5.2f}/{g['trtllm', tp, m]:5.2f}" for m in ROWS)
            ex = {
                m: (g["vllm", tp, m] - g["vllm", tp, 16]) - (g["trtllm", tp, m] - g["trtllm", tp, 16])
                for m in (32, 64, 128)
            }
            print(f"  TP{tp}  {cells}  | excess M32 {ex[32]:+.2f} M64 {ex[64]:+.2f} M128 {ex[128]:+.2f}")


if __name__ == "__main__":
    main()
