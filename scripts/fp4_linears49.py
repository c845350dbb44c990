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

Round 50 (trt12x50; docs/gap_fp4_fp8_decode.md §8), the FP8 side of the pair: ``release AIC_CHECKOUT`` sizes a
TensorRT-LLM 1.2.x FP8 block-scale GEMM release term (B200 1.2.0rc5 over 1.3.0rc20, :data:`REL12_RATIO`) per decode
step; ``what-if --release`` serves the rows under :data:`REL_SETTINGS` (the term as an op-time patch on the roofline
pricer, every served row here runs a release before 1.3). Nothing fitted; the term is not in the package.

Run: python scripts/fp4_linears49.py tables AIC_CHECKOUT          (seconds)
     python scripts/fp4_linears49.py release AIC_CHECKOUT         (seconds)
     python scripts/fp4_linears49.py what-if [--systems b200,gb200-nvl72,gb300-nvl72] [--release]   (about 1.5 minutes)
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
#: round 50 (trt12x50) what-if settings: ``rel12`` = shipped with every FP8 block-scale GEMM at the 1.2.x / 1.3.0rc20
#: ratio of :data:`REL12_RATIO` (every served row here runs a release before 1.3: 1.2.0rc6, or 1.1.0rc2 on one GB200
#: group); ``ckpt_far_rel12`` = that on top of ``ckpt_far`` (the FP4 pair)
REL_SETTINGS = ("shipped", "rel12", "ckpt_far", "ckpt_far_rel12")
#: (m, ratio): B200 TensorRT-LLM 1.2.0rc5 over 1.3.0rc20 ``fp8_block`` time of one TP8 layer's five non-expert
#: linears (:data:`LINEARS`, the sum of each table's fastest row) at m tokens a rank; aiconfigurator @095f58a51
#: aic-core/src/aiconfigurator_core/systems/data/b200_sxm/gemm/trtllm/{1.2.0rc5,1.3.0rc20}/gemm_perf.parquet
#: (``python scripts/fp4_linears49.py release AIC_CHECKOUT`` prints them: 68.5 / 41.1 µs at m = 1). The what-if
#: scales an FP8 block-scale GEMM of m rows by the ratio interpolated in log2 m, 1 above m = 128 (decode only:
#: the prefill shapes were not sized)
REL12_RATIO = ((1, 1.67), (2, 1.68), (4, 1.64), (8, 1.59), (16, 1.50), (32, 1.15), (64, 1.04), (128, 1.10))
#: DeepSeek-R1 layers that run the attention linears (all 61) and the shared expert (the 58 MoE layers)
ATTN_LAYERS, SHARED_LAYERS = 61, 58


def rel12_ratio(rows: np.ndarray) -> np.ndarray:
    """The :data:`REL12_RATIO` time ratio of an FP8 block-scale GEMM with ``rows`` rows (any shape): interpolated in
    log2 m between the table's points, the m = 1 ratio below 1 row, 1.0 above m = 128.

    >>> rel12_ratio(np.array([1.0, 8.0, 12.0, 512.0])).round(3).tolist()
    [1.67, 1.59, 1.537, 1.0]
    """
    m = np.maximum(np.asarray(rows, dtype=float), 1.0)
    xs = np.log2([x for x, _ in REL12_RATIO])
    r = np.interp(np.log2(m), xs, [y for _, y in REL12_RATIO])
    return np.where(m > REL12_RATIO[-1][0], 1.0, r)


def _rel12_op_times(orig):
    """``op_times`` with every ``gemm`` op priced by the ``fp8_block`` entry scaled by :func:`rel12_ratio` of its rows
    (compute, memory and launch alike), recombined by the roofline rule."""
    from jalapeno.cost.roofline import OpTimes

    def timed(table, *a, **k):
        t = orig(table, *a, **k)
        idx = [i for i, (kind, key) in enumerate(zip(table.kind, table.keys)) if kind == "gemm" and key == "fp8_block"]
        if not idx:
            return t
        f = np.ones_like(t.compute_s)
        f[idx] = rel12_ratio(np.broadcast_to(table.rows[idx], f[idx].shape))
        return OpTimes.combine(t.compute_s * f, t.memory_s * f, t.overhead_s * f, t.network_s)

    return timed


def release_sizes(repo: str, systems=("b200", "gb200-nvl72", "gb300-nvl72"), tokens=(1, 8, 16)) -> pd.DataFrame:
    """Per (system, m): the five FP8 block-scale linears of one TP8 layer as the model prices them (µs, the shipped
    calibrated roofline with the ``trtllm`` profile), the B200 1.2.0rc5 and 1.3.0rc20 tables' sums, their ratio, and
    the decode step's extra time (ms) two ways: the ratio rule (the model's time x (ratio - 1)) and the tables'
    difference, each over :data:`ATTN_LAYERS` attention and :data:`SHARED_LAYERS` shared-expert layers."""
    from jalapeno.fit.kernel_tables import load_repo_table
    from jalapeno.fit.kernels import gemm_table
    from jalapeno.fit.table_lookup import load_any_pricer

    old = load_repo_table(repo, "b200_sxm", "gemm", "gemm_perf", "trtllm", "1.2.0rc5")
    new = load_repo_table(repo, "b200_sxm", "gemm", "gemm_perf", "trtllm", "1.3.0rc20")

    def lat(d, m, n, k):
        return d[(d.m == m) & (d.n == n) & (d.k == k) & (d.gemm_dtype == "fp8_block")].latency.min() * 1e3

    out = []
    for sysname in systems:
        pricer = load_any_pricer(sysname, stack="trtllm")
        for m in tokens:
            row = {"system": sysname, "m": m, "model": 0.0, "1.2.0rc5": 0.0, "1.3.0rc20": 0.0, "rule ms": 0.0}
            diff = 0.0
            for name, n, k in LINEARS:
                tab = gemm_table(np.array([m]), np.array([n]), np.array([k]), "fp8", 1.0, 1.0, key="fp8_block")
                s, a, b = float(pricer.op_times(tab).time_s[0][0]) * 1e6, lat(old, m, n, k), lat(new, m, n, k)
                layers = SHARED_LAYERS if name.startswith("shared") else ATTN_LAYERS
                row["model"] += s
                row["1.2.0rc5"] += a
                row["1.3.0rc20"] += b
                diff += (a - b) * layers / 1e3
            row["ratio"] = row["1.2.0rc5"] / row["1.3.0rc20"]
            row["rule ms"] = (row["ratio"] - 1) * row["model"] * ATTN_LAYERS / 1e3  # per-layer ratio, 61 layers
            row["table diff ms"] = diff
            out.append(row)
    return pd.DataFrame(out)


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


def what_if(systems: str, settings: tuple[str, ...] = SETTINGS) -> None:
    """Print the median signed TPOT error per group and setting, and fp4 - fp8 where a group holds both."""
    from trt_fp4_fp8_split47 import settings_medians

    g, keys = settings_medians([__file__, "what-if", "--systems", systems], settings)
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.float_format", "{:+.1f}".format):
        print("Median signed TPOT error (%) by group and setting (no refit)\n")
        print(g.to_string(index=False))
        pair = g.pivot_table(index=keys[:-1], columns="precision", values=list(settings)).dropna()
        if not pair.empty:
            gap = pd.DataFrame({c: pair[(c, "fp4")] - pair[(c, "fp8")] for c in settings})
            print("\nGroups with both formats: fp4 - fp8 (points)\n")
            print(gap.reset_index().to_string(index=False))


def patch(setting: str) -> None:
    """Apply ``setting`` (:data:`SETTINGS`) to this process: the checkpoint switch, cost/ops.FUSED_A_PREFETCH_ON
    (``ckpt_far``) or the upper-bound op-table patch (``ckpt_fa``)."""
    from jalapeno.cost import mtp_draft, ops, priced
    from jalapeno.specs import fp4_checkpoint

    fp4_checkpoint.FP4_CHECKPOINT_FORMATS_ON = setting not in ("shipped", "rel12")
    ops.FUSED_A_PREFETCH_ON = setting.startswith("ckpt_far")
    if setting.endswith("rel12"):
        from jalapeno.cost import pricer  # the roofline pricer the served rows take (served_trt_rows)

        pricer.op_times = _rel12_op_times(pricer.op_times)
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
    w.add_argument("--release", action="store_true", help="the round 50 settings (REL_SETTINGS: rel12, ckpt_far_rel12)")
    w.add_argument("--setting", choices=SETTINGS + REL_SETTINGS, help=argparse.SUPPRESS)  # one setting, CSV to stdout
    r = sub.add_parser("release", help="the FP8 block-scale linears' 1.2.0rc5 / 1.3.0rc20 step difference (round 50)")
    r.add_argument("repo", help="a checkout of github.com/ai-dynamo/aiconfigurator (e.g. commit 095f58a51)")
    v = sub.add_parser(
        "jalapeno", help="run a jalapeno command (e.g. validate --held-out --json -o X.csv) under a setting"
    )
    v.add_argument("setting", choices=SETTINGS + REL_SETTINGS)
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
    elif a.cmd == "release":
        with pd.option_context("display.width", 200, "display.float_format", "{:.2f}".format):
            print(
                "FP8 block-scale non-expert linears of a TP8 decode layer (µs) and the step's extra time at 1.2.x (ms)\n"
            )
            print(release_sizes(a.repo).to_string(index=False))
    elif a.setting:
        serve_rows(tuple(a.systems.split(",")), a.setting).to_csv(sys.stdout, index=False)
    else:
        what_if(a.systems, REL_SETTINGS if a.release else SETTINGS)


if __name__ == "__main__":
    main()
