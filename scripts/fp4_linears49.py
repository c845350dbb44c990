"""Where is the FP4-only saving of a TensorRT-LLM TP8 DeepSeek-R1 decode step? The checkpoints' non-expert linears by
aiconfigurator's measured tables, and the BF16 fused-A GEMM's custom kernel as a what-if (issue 18, round 49, gb300tpot49).

Round 48 (docs/gap_fp4_fp8_decode.md §5) left the aiconfigurator GB300 TPOT bias (+5.0%) as an FP4-only saving of
~0.5 ms a TP8 step that the model lacks once the NVFP4 checkpoint's own formats are priced (attention BF16, shared
experts and dense FFN NVFP4: specs/fp4_checkpoint). Two parts, nothing fitted or written, no shipped prediction moves:

``tables``: per-layer time of the decode step's non-expert linears at m tokens a rank (TP8 shapes of DeepSeek-R1:
fused q_a + kv_a 2112 x 7168, measured at the tables' nearest n = 2048; q_b 3072 x 1536; o_proj 7168 x 2048; shared
expert gate_up 512 x 7168 and down 7168 x 256), read from aiconfigurator's TensorRT-LLM ``gemm_perf`` tables
(latency in ms, standalone kernel timings) for each release stored, priced two ways: the FP8 checkpoint (every
linear FP8 128x128 block-scale, the tables' ``fp8_block`` DeepGEMM rows) and the NVFP4 ``-v2`` checkpoint (attention
input linears BF16, o_proj and shared expert NVFP4). The tables come from a checkout of github.com/ai-dynamo/aiconfigurator
(fit/kernel_tables.load_repo_table: the package ships 1.3.0rc20 / rc23 only; commit 095f58a51 has 1.2.0rc5 for B200).

``what-if``: the aiconfigurator DeepSeek-R1 TensorRT-LLM TPOT rows (scripts/trt_fp4_fp8_split47.served_trt_rows),
median signed error (%) per (system, mode, decode layout, release, format) under :data:`SETTINGS`: ``shipped``;
``ckpt`` (specs/fp4_checkpoint.FP4_CHECKPOINT_FORMATS_ON: the FP4 rows at the checkpoint's formats, the -v2 NVFP4
o_proj included); ``ckpt_far`` (and cost/ops.FUSED_A_PREFETCH_ON: TensorRT-LLM's BF16 fused-A kernel,
``dsv3_fused_a_gemm_op`` at 1-16 tokens a rank, prefetches its weights under the MoE all-reduce before it, tech blog 1
"Fuse_A_GEMM"); ``ckpt_fa`` (the fused-A GEMM at its launch only there: an upper bound of ``ckpt_far``). No stack is
refitted. ``jalapeno SETTING ARGS...`` runs a jalapeno command (e.g. ``validate --held-out --json -o X.csv``) under a
setting.

Run: python scripts/fp4_linears49.py tables AIC_CHECKOUT          (seconds)
     python scripts/fp4_linears49.py what-if [--systems b200,gb200-nvl72,gb300-nvl72]   (about 1.5 minutes)
     python scripts/fp4_linears49.py jalapeno ckpt_far validate --held-out --json -o X.csv   (about a minute)
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

import numpy as np
import pandas as pd

#: (name, n, k) of the TP8 decode step's non-expert linears on one rank (DeepSeek-R1: hidden 7168, q_lora 1536,
#: kv_lora 512 + rope 64, 128 heads / 8 of 192 (q) and 128 (v) dims, shared expert 2048 / 8); the fused q_a + kv_a
#: (n = 2112) is read at the tables' nearest n, 2048
LINEARS = (
    ("fused_a", 2048, 7168),
    ("q_b", 3072, 1536),
    ("o_proj", 7168, 2048),
    ("shared.gate_up", 512, 7168),
    ("shared.down", 7168, 256),
)
#: per linear, its table dtype in each checkpoint (FP8: DeepSeek's block-scale checkpoint; FP4: nvidia's NVFP4 -v2 one,
#: attention input projections BF16, o_proj and shared expert NVFP4, specs/fp4_checkpoint.CHECKPOINT_MODULES)
CHECKPOINTS = {
    "fp8": {n: "fp8_block" for n, _, _ in LINEARS},
    "fp4": {
        "fused_a": "bfloat16",
        "q_b": "bfloat16",
        "o_proj": "nvfp4",
        "shared.gate_up": "nvfp4",
        "shared.down": "nvfp4",
    },
}
#: (system folder, TensorRT-LLM release) of the tables read; 1.2.0rc5 is the release nearest the rows' 1.2.0rc6
TABLES = (
    ("b200_sxm", "1.2.0rc5"),
    ("b200_sxm", "1.3.0rc10"),
    ("b200_sxm", "1.3.0rc20"),
    ("gb200", "1.3.0rc10"),
    ("gb200", "1.3.0rc20"),
    ("gb300", "1.3.0rc10"),
    ("gb300", "1.3.0rc20"),
)


def linear_table(repo: str, tokens=(1, 8, 16)) -> pd.DataFrame:
    """Per (table, m): each linear's latency (µs) by checkpoint and the per-layer sums, FP8 - FP4 (µs a layer)."""
    from jalapeno.fit.kernel_tables import load_repo_table

    out = []
    for sysdir, ver in TABLES:
        d = load_repo_table(repo, sysdir, "gemm", "gemm_perf", "trtllm", ver)
        for m in tokens:
            row = {"table": f"{sysdir} {ver}", "m": m}
            for ck, dtypes in CHECKPOINTS.items():
                tot = 0.0
                for name, n, k in LINEARS:
                    lat = d[(d.m == m) & (d.n == n) & (d.k == k) & (d.gemm_dtype == dtypes[name])].latency.min() * 1e3
                    row[f"{ck}:{name}"] = lat
                    tot += lat
                row[f"{ck} layer"] = tot
            row["fp8 - fp4"] = row["fp8 layer"] - row["fp4 layer"]
            out.append(row)
    return pd.DataFrame(out)


def _is_checkpoint(model, precision) -> bool:
    """Whether ``precision`` on ``model`` is priced at the NVFP4 DeepSeek-R1 checkpoint's formats (the ``fp4`` preset
    under specs/fp4_checkpoint's switch, or its copy): attention BF16 there."""
    from jalapeno.specs.fp4_checkpoint import checkpoint_precision

    ck = checkpoint_precision(model.name, precision)
    return precision.name.split(",")[0] == "fp4" and ck.modules["attention"].weight.name == "bf16"


def _fused_a_hidden(orig):
    """``build_step_ops`` with the fused q_a + kv_a GEMM at zero FLOP and weight bytes (its launch only) where it runs
    the custom BF16 kernel: weights BF16, at most cost/ops.FUSED_A_MAX_TOKENS rows, attention TP > 1 without DP, on a
    TensorRT-LLM profile (``Efficiency.fused_a_prefetch``). An upper bound of cost/ops.fused_a_cover, which hides the
    MoE all-reduce under that GEMM instead (saving min(all-reduce, GEMM))."""
    from jalapeno.cost.ops import FUSED_A_MAX_TOKENS

    def build(model, chip, layout, precision, batch, eff, *a, **k):
        ops, colls = orig(model, chip, layout, precision, batch, eff, *a, **k)
        joint = len(a) > 2 and a[2] is not None  # columns of attention-DP layouts (cost/priced._build_joint)
        if "attn.qkv_a_proj" not in ops.name or layout.tp < 2 or layout.dp > 1 or joint or not eff.fused_a_prefetch:
            return ops, colls
        if not _is_checkpoint(model, precision):
            return ops, colls
        i = ops.name.index("attn.qkv_a_proj")
        small = (ops.rows[i] >= 1) & (ops.rows[i] <= FUSED_A_MAX_TOKENS)
        flop, wb = ops.flop.copy(), ops.weight_bytes.copy()
        flop[i], wb[i] = np.where(small, 0.0, flop[i]), np.where(small, 0.0, wb[i])
        return replace(ops, flop=flop, weight_bytes=wb), colls

    return build


#: what-if settings: the shipped pricing; the FP4 rows at specs/fp4_checkpoint's formats (``ckpt``: its switch on,
#: the -v2 checkpoint's NVFP4 o_proj included); that with the MoE all-reduce hidden under the fused-A GEMM
#: (``ckpt_far``: cost/ops.FUSED_A_PREFETCH_ON) or with the fused-A GEMM at its launch only (``ckpt_fa``, an upper bound)
SETTINGS = ("shipped", "ckpt", "ckpt_far", "ckpt_fa")


def serve_rows(systems: tuple[str, ...], setting: str) -> pd.DataFrame:
    """One row per served aiconfigurator DeepSeek-R1 TensorRT-LLM TPOT row: group keys, meas_ms and the signed TPOT
    error (%) under ``setting``. One setting a process (the serving path keeps per-process state)."""
    from trt_fp4_fp8_split47 import served_trt_rows, tpot_error_row

    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model

    patch(setting)
    model, out = load_model("deepseek-r1"), []
    for p, st, pricer, wl, dep in served_trt_rows(systems):
        tpot = float(serve_at_concurrency(model, pricer, dep, wl, [p.concurrency]).tpot_s[0])
        out.append(tpot_error_row(p, st, tpot, setting))
    return pd.DataFrame(out)


def what_if(systems: str) -> None:
    """Print the median signed TPOT error per group and setting, and fp4 - fp8 where a group holds both."""
    from trt_fp4_fp8_split47 import settings_medians

    g, keys = settings_medians([__file__, "what-if", "--systems", systems], SETTINGS)
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.float_format", "{:+.1f}".format):
        print("Median signed TPOT error (%) by group and setting (no refit)\n")
        print(g.to_string(index=False))
        pair = g.pivot_table(index=keys[:-1], columns="precision", values=list(SETTINGS)).dropna()
        if not pair.empty:
            gap = pd.DataFrame({c: pair[(c, "fp4")] - pair[(c, "fp8")] for c in SETTINGS})
            print("\nGroups with both formats: fp4 - fp8 (points)\n")
            print(gap.reset_index().to_string(index=False))


def patch(setting: str) -> None:
    """Apply ``setting`` (:data:`SETTINGS`) to this process: the checkpoint switch, cost/ops.FUSED_A_PREFETCH_ON
    (``ckpt_far``) or the upper-bound op-table patch (``ckpt_fa``)."""
    from jalapeno.cost import mtp_draft, ops, priced
    from jalapeno.specs import fp4_checkpoint

    fp4_checkpoint.FP4_CHECKPOINT_FORMATS_ON = setting != "shipped"
    ops.FUSED_A_PREFETCH_ON = setting == "ckpt_far"
    if setting == "ckpt_fa":
        for mod in (priced, mtp_draft):
            mod.build_step_ops = _fused_a_hidden(mod.build_step_ops)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tables", help="per-layer linears by checkpoint from aiconfigurator's gemm tables")
    t.add_argument("repo", help="a checkout of github.com/ai-dynamo/aiconfigurator (e.g. commit 095f58a51)")
    w = sub.add_parser("what-if", help="the served TensorRT-LLM rows under shipped / ckpt / ckpt_fa")
    w.add_argument("--systems", default="b200,gb200-nvl72,gb300-nvl72")
    w.add_argument("--setting", choices=SETTINGS, help=argparse.SUPPRESS)  # one setting, CSV to stdout
    v = sub.add_parser(
        "jalapeno", help="run a jalapeno command (e.g. validate --held-out --json -o X.csv) under a setting"
    )
    v.add_argument("setting", choices=SETTINGS)
    v.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.cmd == "jalapeno":
        import runpy

        patch(a.setting)
        sys.argv = ["jalapeno", *a.args]
        runpy.run_module("jalapeno", run_name="__main__")
        return
    if a.cmd == "tables":
        with pd.option_context(
            "display.width", 250, "display.max_columns", 30, "display.float_format", "{:.1f}".format
        ):
            print(
                "Non-expert linears of one TP8 decode layer, µs (aiconfigurator TensorRT-LLM gemm_perf, min over rows)\n"
            )
            print(linear_table(a.repo).to_string(index=False))
    elif a.setting:
        serve_rows(tuple(a.systems.split(",")), a.setting).to_csv(sys.stdout, index=False)
    else:
        what_if(a.systems)


if __name__ == "__main__":
    main()
