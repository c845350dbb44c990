"""MLPerf v5.1 MI355X Llama-2-70B W4A4 rows: which MXFP4 GEMM kernels did the runs have, and what does pricing them with
aiter's tuned table *of the runs' date* instead of the 2025-11 one do (issue 18; diagnosis, docs/gap_large_batch_decode.md
"Round 40").

Part 1, the builds: the runs' systems JSON name their aiter builds (:data:`RUN_BUILDS`); ROCm/aiter's history dates
the MXFP4 GEMM kernels and the tuned rows at Llama-2-70B's shapes (:data:`KERNEL_HISTORY`). The model's ``gemm.fp4``
(data/calibration/mi355x.toml) is fitted on the table of amd-aiter 0.1.7.post2 (2025-11-14).

Part 2, the same shapes across table versions: aiter's rows for the four Llama-2-70B TP1 GEMMs in the earliest table
that holds all four (ROCm/aiter bee6843de5, 2025-08-24) against the installed table (:data:`LLAMA_ROWS`), and one
request's GPU time on AMD's 8-GPU engine with each (the method of scripts/mi355x_mxfp4_llama2.py Part 2).

Part 3, the fit of ``gemm.fp4`` on the whole table at each version (:data:`VINTAGE_FITS`, recomputed with
``--aiter-repo PATH``: a clone of ROCm/aiter); ``--write-set DIR`` writes mi355x.toml with the 2025-08-24 fit for
``jalapeno validate --mlperf -s mi355x --efficiency DIR`` (a what-if, not shipped).

Part 4, InferenceX rows 24 / 31 (MoRI-SGLang DEP8 decode, C 2,048): sequences in decode by Little's law (output
tok/s x mean TPOT) against the engine's cap (160 a rank x 8, data/engines.toml ``sglang-mori-mi355x-dsr1-fp4-dep``).

Run: python scripts/mi355x_kernel_vintage40.py [--aiter-repo PATH] [--write-set DIR]   (a few seconds)
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
from importlib.resources import files
from pathlib import Path

import numpy as np

#: the runs' software (mlcommons/inference_results_v5.1 @965182b, ``systems/*.json`` ``framework`` /
#: ``other_software_stack``); aiter's commit is the build's ``+g<sha>``, its date ROCm/aiter's commit date
RUN_BUILDS = {
    "AMD 8 x MI355X (open/AMD)": {
        "aiter": "0.1.2.dev46+g13675a7.d20250514",
        "commit": "13675a7c71",
        "commit_date": "2025-05-13",
        "vllm": "0.9.1.dev2+g790cf6584.d20250519",
        "rocm": "6.5.0 (preview)",
    },
    "MangoBoost 32 / 64 x MI355X (open/AMD_MangoBoost)": {
        "aiter": "0.1.4.dev17+gd0384d4f.d20250718",
        "commit": "d0384d4fcb",
        "commit_date": "2025-06-26",
        "vllm": "LLMBoost image (PyTorch 2.8.0a0+git74091a9)",
        "rocm": "not stated",
    },
}
#: ROCm/aiter's MXFP4 dense GEMM history (``git log`` of hsa/gfx950/f4gemm and aiter/configs/a4w4_blockscale_tuned_gemm.csv)
KERNEL_HISTORY = (
    ("2025-05-13", "13675a7c71", "AMD's run's base commit: MXFP4 GEMM only as Triton gemm_afp4wfp4; no ASM FP4 GEMM"),
    ("2025-05-25", "5b6c74e05e", "#439: first ASM FP4 GEMM, one tile (f4gemm_bf16_per1x32Fp4_tn_256x256)"),
    ("2025-06-19", "3a7401bed7", "#547: pre-shuffled-weight 256x256 tile (tn_bpreshuffle_256x256)"),
    ("2025-06-26", "d0384d4fcb", "MangoBoost's base commit: those two 256x256 tiles; no Llama-2-70B row tuned"),
    (
        "2025-07-31",
        "36dc6a5cea",
        "#741: 192x256 / 224x256 tiles; first Llama-2-70B rows (gate-up at M 3,072 / 4,096 / 32,768)",
    ),
    ("2025-08-24", "bee6843de5", "#838: the other three Llama-2-70B shapes, 1 - 32,768 rows"),
    ("2025-09-18", "a8a3f86b21", "#988: retuned; gate-up at 32,768 rows 6,974.5 -> 6,141.7 us, M 2,880 / 3,200 rows"),
    ("2025-11-14", "169acefff8", "v0.1.7.post2: the table data/calibration/mi355x.toml's gemm.fp4 is fitted on"),
)
#: aiter's MI355X (``cu_num`` 256) MXFP4 GEMM times, us, at Llama-2-70B's TP1 shapes (N, K), by table version then M:
#: ROCm/aiter aiter/configs/a4w4_blockscale_tuned_gemm.csv at bee6843de5 (2025-08-24) and 169acefff8 (v0.1.7.post2)
LLAMA_ROWS = {
    "2025-08-24": {
        (10240, 8192): {2048: 91.1052, 4096: 151.2279, 8192: 276.5124, 16384: 546.9175, 32768: 1095.985},
        (8192, 8192): {2048: 60.453, 4096: 114.6354, 8192: 216.7585, 16384: 429.3727, 32768: 854.7832},
        (57344, 8192): {
            2048: 481.0754,
            3072: 735.2449,
            4096: 935.7208,
            8192: 1507.5194,
            16384: 2964.3928,
            32768: 6974.528,
        },
        (8192, 28672): {2048: 172.7778, 4096: 336.8039, 8192: 657.763, 16384: 1330.9626, 32768: 2661.9311},
    },
    "2025-11-14": {
        (10240, 8192): {2048: 93.3564, 4096: 158.7063, 8192: 278.0897, 16384: 550.7997, 32768: 1088.4791},
        (8192, 8192): {2048: 60.7364, 4096: 117.687, 8192: 220.1381, 16384: 434.027, 32768: 858.7152},
        (57344, 8192): {
            2048: 395.6913,
            3072: 735.2449,
            4096: 757.5215,
            8192: 1489.1891,
            16384: 3042.6125,
            32768: 6141.7014,
        },
        (8192, 28672): {2048: 181.0399, 4096: 345.2111, 8192: 668.518, 16384: 1468.8675, 32768: 2662.8512},
    },
}
#: ``gemm.fp4`` fitted (fit/kernels.fit_gemm through fit/amd.gemm_frame, ``cu_num`` 256, rows with us > 0) on the table
#: at each commit: rows, peak fraction, half rows, HBM fraction, held-out median APE (``--aiter-repo`` recomputes them)
VINTAGE_FITS = {
    "bee6843de5": {
        "date": "2025-08-24",
        "rows": 544,
        "peak_fraction": 0.4618006347710743,
        "half_rows": 281.8552794250216,
        "hbm_fraction": 0.46702634380176017,
        "held_out_median_ape": 0.2423,
    },
    "169acefff8": {
        "date": "2025-11-14",
        "rows": 922,
        "peak_fraction": 0.4978236575707878,
        "half_rows": 106.87186311327797,
        "hbm_fraction": 0.5928813948315615,
        "held_out_median_ape": 0.1101,
    },
}
TABLE = "aiter/configs/a4w4_blockscale_tuned_gemm.csv"
#: the model's op names of those shapes (scripts/mi355x_mxfp4_llama2.SHAPES)
SHAPES = {
    "attn.qkv_proj": (10240, 8192),
    "attn.o_proj": (8192, 8192),
    "dense_ffn.gate_up": (57344, 8192),
    "dense_ffn.down": (8192, 28672),
}
#: AMD's 8 x MI355X run (scripts/mi355x_mxfp4_llama2.MI355X_RUN): samples/s, output tok/s, GPUs, mean ISL, decode
#: batch, prefill budget
RUN = {
    "samples_per_s": 333.216,
    "output_tok_s": 93045.8,
    "gpus": 8,
    "isl": 222.0,
    "batch": 3072,
    "prefill_tokens": 40960,
}
#: InferenceX rows (data/validation/inferencex_points.csv): total tok/s per GPU, GPUs, ISL, OSL, mean TPOT (s)
IX_ROWS = {"row 31 (1k/1k)": (3024.4, 12, 1024, 1024, 0.0633), "row 24 (8k/1k)": (4222.8, 24, 8192, 1024, 0.1081)}
#: the DEP8 decode instance's running cap: --max-running-requests 160 a rank x 8 (data/engines.toml)
IX_DECODE_CAP = 160 * 8


def rows_s(vintage: str, n: int, k: int, m: float) -> float:
    """aiter's time (s) for an m x n x k MXFP4 GEMM in the ``vintage`` table: linear between its rows, beyond the
    largest row that row's rate (time proportional to m)."""
    rows = LLAMA_ROWS[vintage][(n, k)]
    ms = sorted(rows)
    if m > ms[-1]:
        return rows[ms[-1]] * 1e-6 * m / ms[-1]
    return float(np.interp(m, ms, [rows[x] for x in ms])) * 1e-6


def shape_ratios() -> dict:
    """Per shape and M present in both versions: time 2025-08-24 / time 2025-11-14."""
    old, new = LLAMA_ROWS["2025-08-24"], LLAMA_ROWS["2025-11-14"]
    return {nk: {m: old[nk][m] / new[nk][m] for m in sorted(set(old[nk]) & set(new[nk]))} for nk in old}


def per_request(decode_ctx: float = 362.0) -> dict:
    """One request's GPU time (s) on AMD's engine: OSL x decode step / batch + ISL x prefill step / budget, the model's
    steps (MI355X w4a4-mxfp4 TP1, vllm-rocm) with its GEMMs, and with each table version's rows in their place."""
    from jalapeno.cost.batch import Batch
    from jalapeno.cost.step import step_cost
    from jalapeno.deploy.layout import Layout
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision

    layers, b, pre = 80, RUN["batch"], RUN["prefill_tokens"]
    pricer = load_any_pricer("mi355x", "calibrated", pricer="roofline", stack="vllm-rocm")
    batch = Batch.make(
        decode_seqs=[b, 0], decode_ctx=[decode_ctx, 0], prefill_tokens=[0, pre], prefill_seqs=[0, 184], prefill_ctx=0
    )
    sc = step_cost(load_model("llama-2-70b"), pricer, Layout(tp=1), get_precision("w4a4-mxfp4"), batch)
    steps = []
    for i, m in enumerate((b, pre)):
        ops = {r["op"]: r["time_s"] for r in sc.op_rows(i)}
        steps.append(
            {
                "step_s": float(sc.step_time_s[i]),
                "model": sum(ops[o] for o in SHAPES),
                **{v: sum(rows_s(v, *SHAPES[o], m) for o in SHAPES) * layers for v in LLAMA_ROWS},
            }
        )
    osl = RUN["output_tok_s"] / RUN["samples_per_s"]

    def t(src: str) -> float:
        d, p = (s["step_s"] - s["model"] + s[src] for s in steps)
        return osl * d / b + RUN["isl"] * p / pre

    return {
        "measured_s": RUN["gpus"] / RUN["samples_per_s"],
        "steps": steps,
        **{f"{src}_s": t(src) for src in ("model", *LLAMA_ROWS)},
    }


def refit(repo: Path) -> dict:
    """``gemm.fp4`` fitted on the table at each commit of :data:`VINTAGE_FITS` in a local ROCm/aiter clone."""
    import pandas as pd

    from jalapeno.fit.amd import AITER_CU, gemm_frame
    from jalapeno.fit.kernels import fit_gemm
    from jalapeno.specs.catalog import load_system

    out = {}
    for c in VINTAGE_FITS:
        txt = subprocess.run(
            ["git", "-C", str(repo), "show", f"{c}:{TABLE}"], capture_output=True, text=True, check=True
        ).stdout
        t = pd.read_csv(io.StringIO(txt))
        g = gemm_frame({"a4w4_blockscale_tuned_gemm": t[t.us.astype(float) > 0]}, AITER_CU["mi355x"])
        p, r = fit_gemm(g, load_system("mi355x"))
        out[c] = {"rows": len(g), **p["gemm"]["fp4"], "held_out_median_ape": r["formats"]["fp4"]["held_out_median_ape"]}
    return out


def vintage_set_text(commit: str = "bee6843de5") -> str:
    """The shipped data/calibration/mi355x.toml with ``[parameters.gemm.fp4]`` replaced by the fit at ``commit``.

    Raises:
        ValueError: the shipped file has no ``[parameters.gemm.fp4]`` block of three fields.
    """
    text = files("jalapeno.data").joinpath("calibration/mi355x.toml").read_text()
    f = VINTAGE_FITS[commit]
    block = "[parameters.gemm.fp4]\n" + "".join(
        f"{k} = {f[k]!r}\n" for k in ("peak_fraction", "half_rows", "hbm_fraction")
    )
    new, n = re.subn(r"\[parameters\.gemm\.fp4\]\n(?:[a-z_]+ = [^\n]*\n){3}", block, text)
    if n != 1:
        raise ValueError("data/calibration/mi355x.toml: no [parameters.gemm.fp4] block of three fields to replace")
    return new


def littles_law() -> dict:
    """InferenceX rows 24 / 31: sequences in decode = output tok/s x mean TPOT, against :data:`IX_DECODE_CAP`."""
    out = {}
    for name, (tput, gpus, isl, osl, tpot) in IX_ROWS.items():
        out_tok_s = tput * gpus * osl / (isl + osl)
        out[name] = {"output_tok_s": out_tok_s, "running": out_tok_s * tpot, "cap": IX_DECODE_CAP}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aiter-repo", type=Path, help="a ROCm/aiter clone: refit gemm.fp4 at each table version")
    ap.add_argument("--write-set", type=Path, help="write DIR/mi355x.toml with the 2025-08-24 gemm.fp4 fit")
    a = ap.parse_args()
    print("Part 1: the runs' builds and aiter's MXFP4 GEMM history")
    for k, v in RUN_BUILDS.items():
        print(f"  {k}: aiter {v['aiter']} (commit {v['commit']}, {v['commit_date']}), vLLM {v['vllm']}")
    for d, c, what in KERNEL_HISTORY:
        print(f"  {d} {c}  {what}")
    print("\nPart 2: the same shapes, table 2025-08-24 / 2025-11-14 (time ratio by M)")
    for nk, r in shape_ratios().items():
        print(f"  N x K {nk[0]:>6} x {nk[1]:<6}" + "  ".join(f"{m}: {x:.3f}" for m, x in r.items()))
    pr = per_request()
    for name, s in zip(("decode 3,072", "prefill 40,960"), pr["steps"]):
        print(
            f"  {name}: step {s['step_s'] * 1e3:.1f} ms; GEMMs model {s['model'] * 1e3:.1f}, 2025-08-24 rows "
            f"{s['2025-08-24'] * 1e3:.1f}, 2025-11-14 rows {s['2025-11-14'] * 1e3:.1f} ms"
        )
    m = pr["measured_s"]
    for src in ("model", *LLAMA_ROWS):
        print(
            f"  one request, GEMMs {src:>10}: {pr[f'{src}_s'] * 1e3:.2f} ms against measured {m * 1e3:.2f} ms "
            f"(throughput {m / pr[f'{src}_s'] - 1:+.1%})"
        )
    print("\nPart 3: gemm.fp4 fitted on the whole table at each version")
    fits = refit(a.aiter_repo) if a.aiter_repo else VINTAGE_FITS
    for c, f in fits.items():
        print(
            f"  {c}: rows {f['rows']}, peak fraction {f['peak_fraction']:.4f}, half rows {f['half_rows']:.1f}, "
            f"HBM fraction {f['hbm_fraction']:.4f}, held-out median {f['held_out_median_ape']:.1%}"
        )
    if a.write_set:
        a.write_set.mkdir(parents=True, exist_ok=True)
        (a.write_set / "mi355x.toml").write_text(vintage_set_text())
        print(f"  wrote {a.write_set / 'mi355x.toml'}: jalapeno validate --mlperf -s mi355x --efficiency {a.write_set}")
    print("\nPart 4: InferenceX MoRI-SGLang DEP8 decode, sequences in decode (Little's law)")
    for k, v in littles_law().items():
        print(f"  {k}: {v['output_tok_s']:,.0f} output tok/s x TPOT = {v['running']:,.0f} running, cap {v['cap']:,}")


if __name__ == "__main__":
    main()
