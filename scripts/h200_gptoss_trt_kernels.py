"""InferenceX / aiconfigurator H200 gpt-oss-120b on TensorRT-LLM (TRITON MoE, TP1): which expert kernel the rows ran,
what every measured H200 W4A16 MXFP4 kernel table says their decode step costs, and the KV-capacity knee at
concurrency 64 (issue 18, round 37, h200ix37; docs/gap_aic_itl.md). Nothing is fitted or written.

Prints, from a validate CSV (``jalapeno validate --json -o FILE``, all rows):

1. the routed-expert block per layer (ms) at gpt-oss-120b's shape (hidden 2880, expert width 2880, 128 experts, top-4,
   MoE TP1 EP1) in every aiconfigurator-core 0.12.0 H200 / H100 ``moe_perf`` table holding W4A16 MXFP4 rows
   (``w4a16_mxfp4``: TensorRT-LLM 1.3.0rc10 / rc20 ``moe_torch_flow``, the TRITON backend; vLLM 0.19.0
   ``vllm_mxfp4_moe``, vLLM 0.24.0 ``..._oaitritonmxfp4experts...``, OpenAI's triton_kernels; SGLang 0.5.14
   ``sglang_fused_moe_triton``), balanced routing, with the effective read rate of all 128 experts (1.69 GB a layer)
   at 32 tokens, and TensorRT-LLM 1.3.0rc20's power-law rows beside its balanced ones;
2. the model's decode step (ms) at 4-64 sequences (``jalapeno step``'s op table, TP1, stack trtllm) with the routed
   experts priced five ways: the ``mxfp4`` preset's calibrated FP8 form (how rows 43/50 were priced before this
   round), the h200 ``triton`` form (data/moe_backend_kernels.toml: how the recipe ``trtllm-h200-gptoss-fp4`` and the
   aiconfigurator sweep rows price it), and each H200 table above read at the served (uniform) routing
   (cost/moe_backend.MeasuredMoePricer), beside the measured TPOT of the TP1 rows (aiconfigurator ``gpt-oss-dev``
   sweep and InferenceX rows 43/50; the measured TPOT also carries the prompt steps, so the decode step is below it);
3. the KV-capacity knee: for every TP1 row at concurrency 32 and 64, the resident sequences the measured TTFT and
   TPOT imply, N = C · D / (TTFT + D) with D = (mean OSL − 1) · TPOT (Little's law on the decode stage: a request
   spends TTFT waiting or prefilling, D decoding), and those sequences' tokens at the mean ISL + OSL, beside the
   model's KV capacity for such sequences (deploy/kv_capacity.kv_capacity_seqs);
4. a what-if, not shipped: the aiconfigurator ``gpt-oss-dev`` 1k/1k rows' measured TPOT at TP1 / TP2 / TP4 (EP = TP)
   beside the model's decode step (triton form) with the generated tokens routed at lognormal popularity σ = 0
   (uniform, gpt-oss's shipped assumption), 0.5, 0.75 and 1.03 (DeepSeek-R1's measured natural-text σ,
   specs/routing.py), the step's drop from σ = 0 carried onto the validated TPOT.

Usage: python scripts/h200_gptoss_trt_kernels.py VALIDATE_CSV   (about 10 s; needs aiconfigurator-core for part 1-2)
"""

from __future__ import annotations

import argparse
import csv
import glob
import os

import numpy as np

#: gpt-oss-120b's routed-expert shape (hidden, expert intermediate, experts, top-k)
SHAPE = (2880, 2880, 128, 4)
#: MXFP4 bytes per weight: 4 bits + one E8M0 scale per 32 (docs/model.md §2)
MXFP4_B = 0.53125
#: (label, system dir, framework, version, kernel_source prefix) of the W4A16 MXFP4 tables read
TABLES = (
    ("TRT-LLM 1.3.0rc10 triton", "h200_sxm", "trtllm", "1.3.0rc10", "moe_torch_flow"),
    ("TRT-LLM 1.3.0rc20 triton", "h200_sxm", "trtllm", "1.3.0rc20", "moe_torch_flow"),
    ("vLLM 0.19.0 mxfp4", "h200_sxm", "vllm", "0.19.0", "vllm_mxfp4_moe"),
    ("vLLM 0.24.0 OAI triton", "h200_sxm", "vllm", "0.24.0", "vllm_gptossmxfp4moe"),
    ("SGLang 0.5.14 triton", "h200_sxm", "sglang", "0.5.14", "sglang_fused_moe_triton"),
    ("H100 vLLM 0.24.0 OAI triton", "h100_sxm", "vllm", "0.24.0", "vllm_gptossmxfp4moe"),
)
#: mean sequence lengths of InferenceX's uniform [0.8 L, L] draws
MEAN_FRACTION = 0.9


def expert_layer_bytes(hidden: int = SHAPE[0], inter: int = SHAPE[1], experts: int = SHAPE[2]) -> float:
    """MXFP4 bytes of one layer's routed experts (gate/up 2·I x h and down h x I per expert).

    >>> round(expert_layer_bytes() / 1e9, 3)
    1.692
    """
    return experts * 3.0 * hidden * inter * MXFP4_B


def implied_resident(concurrency: float, ttft_s: float, tpot_s: float, osl_mean: float) -> float:
    """Sequences decoding at once in a closed loop of ``concurrency`` users: C · D / (TTFT + D), D = (OSL − 1) · TPOT.

    >>> round(implied_resident(64, 4.287, 0.0313, 0.9 * 1024), 1)  # InferenceX row 43
    55.7
    """
    d = (osl_mean - 1.0) * tpot_s
    return concurrency * d / (ttft_s + d)


def _aic_dir() -> str:
    import aiconfigurator_core

    return os.path.join(os.path.dirname(aiconfigurator_core.__file__), "systems", "data")


def table_curve(sysdir: str, framework: str, version: str, source: str, distribution: str = "balanced"):
    """(tokens, latency ms) of one table's EP1 MoE-TP1 rows at :data:`SHAPE` (fastest of repeats), or None."""
    import pandas as pd

    path = glob.glob(os.path.join(_aic_dir(), sysdir, "moe", framework, version, "moe_perf.parquet"))
    if not path:
        return None
    d = pd.read_parquet(path[0])
    h, inter, e, k = SHAPE
    d = d[
        (d.hidden_size == h)
        & (d.inter_size == inter)
        & (d.num_experts == e)
        & (d.topk == k)
        & (d.moe_tp_size == 1)
        & (d.moe_ep_size == 1)
        & (d.distribution == distribution)
        & d.kernel_source.str.startswith(source)
        & (d.moe_dtype == "w4a16_mxfp4")
    ]
    if d.empty:
        return None
    g = d.groupby("num_tokens").latency.min()
    return np.asarray(g.index, dtype=float), np.asarray(g.values, dtype=float)


def part1() -> dict:
    """Print the tables (part 1); return the H200 curves by label."""
    tokens = (1, 4, 16, 32, 64, 128, 256)
    print("1. routed-expert block per layer, ms (EP1, balanced; 'all 128' = 1.692 GB read at 32 tokens)")
    print(f"   {'table':30s}" + "".join(f"{t:>8d}" for t in tokens) + "   TB/s at 32")
    curves = {}
    for label, sysdir, fw, ver, src in TABLES:
        c = table_curve(sysdir, fw, ver, src)
        if c is None:
            continue
        if sysdir == "h200_sxm":
            curves[label] = c
        at = dict(zip(c[0], c[1]))
        print(
            f"   {label:30s}"
            + "".join(f"{at.get(t, float('nan')):8.3f}" for t in tokens)
            + f"   {expert_layer_bytes() / (at[32] * 1e-3) / 1e12:6.2f}"
        )
    for dist in ("power_law_1.01", "power_law_1.2"):
        c = table_curve("h200_sxm", "trtllm", "1.3.0rc20", "moe_torch_flow", dist)
        if c is not None:
            at = dict(zip(c[0], c[1]))
            print(f"   {'rc20 ' + dist:30s}" + "".join(f"{at.get(t, float('nan')):8.3f}" for t in tokens))
    return curves


def part2(curves: dict, rows: list[dict]) -> None:
    """Print the decode-step split by pricing (part 2)."""
    from jalapeno.cli.common import resolve_precision
    from jalapeno.cost.moe_backend import MeasuredMoePricer, MoeCurve
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.cost.pool_backends import with_moe_backend
    from jalapeno.cost.step import Batch, step_cost
    from jalapeno.deploy.layout import Layout, for_model
    from jalapeno.specs.catalog import load_model

    m = load_model("gpt-oss-120b")
    prec = resolve_precision(m, "mxfp4", None, None, False)
    lay = for_model(Layout(tp=1, dp=1, ep=1), m)
    base = load_pricer("h200", stack="trtllm")
    pricers = {"calibrated FP8 form (preset)": base, "triton form (recipe)": with_moe_backend(base, "triton", m, lay)}
    h, inter, e, k = SHAPE
    for label, (tok, ms) in curves.items():
        pricers[label] = MeasuredMoePricer(
            base, MoeCurve(float(h), float(inter), "bf16", tok * k, ms * 1e-3, label, "mxfp4", float(e)), "triton"
        )
    batches = np.array([4.0, 8.0, 16.0, 32.0, 64.0])
    print("\n2. decode step at B sequences, ms: routed experts / whole step (TP1, stack trtllm, no prompt step)")
    for isl, osl in ((1024, 1024), (8192, 1024)):
        ctx = MEAN_FRACTION * (isl + osl / 2.0)
        meas = {}
        for r in rows:
            if (
                r["metric"] == "tpot_s"
                and r["system"] == "h200"
                and r["model"] == "gpt-oss-120b"
                and "attn TP1 DP1" in r["deployment"]
                and "trt" in r["framework"]
                and (int(r["isl"]), int(r["osl"])) == (isl, osl)
            ):
                meas.setdefault(float(r["concurrency"]), []).append(float(r["measured"]) * 1e3)
        print(f"   {isl}/{osl} (mean context {ctx:.0f})  B:" + "".join(f"{b:>14.0f}" for b in batches))
        print(
            f"   {'measured TPOT (TP1 rows)':32s}"
            + "".join(f"{'/'.join(f'{x:.1f}' for x in sorted(meas.get(b, []))) or '-':>14s}" for b in batches)
        )
        for name, p in pricers.items():
            sc = step_cost(m, p, lay, prec, Batch.make(decode_seqs=batches, decode_ctx=np.full(len(batches), ctx)))
            i = list(sc.ops.name).index("moe.experts")
            print(
                f"   {name:32s}"
                + "".join(f"{x * 1e3:6.2f} / {y * 1e3:5.2f}" for x, y in zip(sc.times.time_s[i], sc.step_time_s))
            )


def part3(rows: list[dict]) -> None:
    """Print the implied resident sequences at TP1 (part 3)."""
    from jalapeno.cli.common import resolve_precision
    from jalapeno.deploy.layout import Layout, for_model
    from jalapeno.deploy.kv_capacity import kv_capacity_seqs
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.catalog import load_model

    pts: dict[str, dict] = {}
    for r in rows:
        if (
            r["system"] == "h200"
            and r["model"] == "gpt-oss-120b"
            and "attn TP1 DP1" in r["deployment"]
            and "trt" in r["framework"]
            and float(r["concurrency"]) in (32.0, 64.0)
        ):
            pts.setdefault(r["id"], dict(r))[r["metric"]] = float(r["measured"])
    print("\n3. TP1 rows at concurrency 32 / 64: resident sequences the measured TTFT and TPOT imply")
    print(f"   {'row':46s} {'ISL/OSL':>10s} {'C':>4s} {'TTFT s':>7s} {'TPOT ms':>8s} {'resident':>9s} {'k tokens':>9s}")
    for pid, p in sorted(pts.items(), key=lambda kv: (kv[1]["isl"], kv[1]["osl"], float(kv[1]["concurrency"]))):
        if "ttft_s" not in p or "tpot_s" not in p:
            continue
        isl, osl, c = int(p["isl"]), int(p["osl"]), float(p["concurrency"])
        n = implied_resident(c, p["ttft_s"], p["tpot_s"], MEAN_FRACTION * osl)
        print(
            f"   {pid[-46:]:46s} {isl:>5d}/{osl:<4d} {c:4.0f} {p['ttft_s']:7.3f} {p['tpot_s'] * 1e3:8.2f} {n:9.1f} "
            f"{n * MEAN_FRACTION * (isl + osl) / 1e3:9.0f}"
        )
    m = load_model("gpt-oss-120b")
    prec = resolve_precision(m, "mxfp4", None, None, False)
    pr = load_pricer("h200", stack="trtllm")
    tokens = MEAN_FRACTION * 9216
    for frac in (None, 0.85):
        cap = kv_capacity_seqs(
            m,
            pr.system,
            for_model(Layout(tp=1, dp=1, ep=1), m),
            prec,
            np.array([tokens]),
            np.array([64.0]),
            pr.efficiency,
            memory_fraction=frac,
        )[0]
        print(
            f"   model KV capacity at {tokens:.0f}-token sequences (memory fraction {frac or 'default'}): "
            f"{cap:.0f} sequences, {cap * tokens / 1e3:.0f} k tokens"
        )


def part4(rows: list[dict]) -> None:
    """Print the routing-skew what-if (part 4)."""
    import dataclasses

    from jalapeno.cli.common import resolve_precision
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.cost.pool_backends import with_moe_backend
    from jalapeno.cost.step import Batch, step_cost
    from jalapeno.deploy.layout import Layout, for_model
    from jalapeno.specs.catalog import load_model

    m0 = load_model("gpt-oss-120b")
    prec = resolve_precision(m0, "mxfp4", None, None, False)
    base = load_pricer("h200", stack="trtllm")
    batches = np.array([4.0, 8.0, 16.0, 32.0, 64.0])
    got: dict[tuple, tuple] = {}
    for r in rows:
        if (
            r["metric"] == "tpot_s"
            and r["system"] == "h200"
            and r["model"] == "gpt-oss-120b"
            and "gpt-oss-dev" in r["framework"]
            and (r["isl"], r["osl"]) == ("1024", "1024")
            and not r["quality"]
        ):
            tp = int(r["deployment"].split("attn TP")[1].split()[0])
            got[tp, float(r["concurrency"])] = (float(r["measured"]), float(r["predicted"]))
    print(
        "\n4. what-if: generated tokens routed at popularity sigma (aiconfigurator gpt-oss-dev 1k/1k rows; TPOT error %)"
    )
    for tp in (1, 2, 4):
        lay = for_model(Layout(tp=tp, dp=1, ep=tp), m0)
        steps = {}
        for sigma in (0.0, 0.5, 0.75, 1.03):
            m = dataclasses.replace(m0, moe=dataclasses.replace(m0.moe, routing_sigma=0.0, decode_routing_sigma=sigma))
            sc = step_cost(
                m,
                with_moe_backend(base, "triton", m, lay),
                lay,
                prec,
                Batch.make(decode_seqs=batches, decode_ctx=np.full(len(batches), MEAN_FRACTION * 1536.0)),
            )
            steps[sigma] = sc.step_time_s
        print(f"   TP{tp} EP{tp}  C:" + "".join(f"{b:>8.0f}" for b in batches))
        for sigma, st in steps.items():
            cells = []
            for j, b in enumerate(batches):
                if (tp, b) in got:
                    meas, pred = got[tp, b]
                    cells.append(f"{((pred - (steps[0.0][j] - st[j])) / meas - 1) * 100:+8.1f}")
                else:
                    cells.append(f"{'-':>8s}")
            print(f"   sigma {sigma:4.2f}   " + "".join(cells))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="jalapeno validate --json -o FILE (all rows)")
    args = ap.parse_args(argv)
    with open(args.csv) as f:
        rows = list(csv.DictReader(f))
    try:
        curves = part1()
    except ImportError:
        print("1. aiconfigurator-core is not installed: parts 1-2 skipped")
        curves = None
    if curves is not None:
        part2(curves, rows)
    part3(rows)
    part4(rows)


if __name__ == "__main__":
    main()
