"""GB200 aiconfigurator interactivity: which one variable does the sign of the error follow, and what would a shared
expert popularity do to every GB200 group, Kimi K2.5 included? (docs/gap_aic_itl.md, "round 29, gbint29").
Nothing here is shipped; nothing is fitted or written.

Part 1 (from a validate CSV, seconds). The GB200 aiconfigurator interactivity rows (error = predicted / measured
− 1, positive = the model too fast), each described by the variables that vary inside the brief's groups: engine
and release, checkpoint precision, model, ISL, MTP, the decode pool's attention sharding (``ADP``: attention data
parallel, one sequence set per GPU; ``ATP``: attention tensor parallel, the sequence set shared by the worker's
GPUs), its MoE sharding (EP or TP), its width, and the decoding sequences per attention rank (b: the concurrency
over the decode attention ranks, capped at the recipe's ``max_batch`` where the notes give one; a nominal count,
not Little's law). For each variable a one-split sign rule (each level predicts its majority sign) is scored by
the share of rows whose sign it gets right; the best single variable is the one the sign follows.

Part 2 (from the same CSV). Within each (group, decode pool) the error against log2(b): slope in points of
error per doubling of b, least squares, and the error at the smallest b (the intercept the earlier rounds name).

Part 3 (``--sigma``, about 1 min). The generated tokens routed with lognormal popularity σ (specs/routing.py;
``scripts/gb_sglang_routing_skew.predict_at``, the prompt uniform; σ = 1.03 NVIDIA's measured natural-text
figure for DeepSeek-R1, TensorRT-LLM tech blog 4) on every GB200 aiconfigurator row, Kimi K2.5 included (round
27 ran the grid on DeepSeek-R1 rows only); interactivity median |error| / median signed error per group and pool.

Part 4 (``--bandwidth``, seconds). Every GB200 attention-TP decode row without MTP, every engine (round 27's
``kimi_trt_decode_split.py`` did the TensorRT-LLM rows): the share of the 8 TB/s datasheet HBM bandwidth at which
the busiest rank's routed-expert weights (the model's bytes under uniform routing) must stream for the measured
TPOT to hold them beside everything else the model prices in the step (``implied_hbm_fraction``), against the
calibrated set's priced share (the model's own expert bytes / expert time).

Part 5 (``--table``, seconds; needs aiconfigurator-core). SGLang 0.5.14's GB200 MoE table
(``moe/sglang/0.5.14/moe_perf``, ``sglang_flashinfer_trtllm_moe``, NVFP4, ``balanced``) at DeepSeek-R1's shape
(E 256) and Kimi's (E 384), MoE TP4 and EP4: µs per layer and the streaming share of 8 TB/s, reading the experts
(a) a uniform draw touches and (b) the collector's routing touches. The collector (ai-dynamo/aiconfigurator
@095f58a51 ``collector/helper.py`` ``balanced_logits``, ``collector/sglang/collect_moe.py``; DeepSeek cases
``collector/cases/models/DeepseekV3ForCausalLM_cases.yaml``: 8 expert groups, top-4 groups, a zero correction
bias) feeds one-hot "balanced" logits through DeepSeek's grouped top-k: every token's picks fall one per group, all
eight groups tie, so every token takes the same four groups and the same filler experts
(:func:`balanced_grouped_distinct`, a replica with ties broken by the lowest index).

Usage: python scripts/gb200_int_sign_split.py [VALIDATE_CSV] [--sigma] [--bandwidth] [--table]   (default CSV: /tmp/s29/base.csv)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

#: σ grid of Part 3 (0 = the shipped uniform routing; 1.03 = specs/routing.MEASURED_ROUTING_SIGMA)
SIGMAS = (0.0, 0.5, 0.75, 1.03)
_POOL = re.compile(r"(\d+)x\(attn TP(\d+) DP(\d+) · MoE TP(\d+) EP(\d+)")
_CAP = re.compile(r"decode max_batch(?:_size)? (\d+)")


def describe(row) -> dict:
    """The variables of one validate row (a pandas row of the CSV): decode pool kind, width, b per attention rank.

    >>> r = pd.Series({"deployment": "disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 4x(attn TP8 DP1 · MoE TP1 EP8) [fp4]",
    ...                "concurrency": 64.0, "notes": "decode max_batch_size 8 per rank"})
    >>> d = describe(r); d["attn"], d["moe"], d["width"], d["b"]
    ('ATP', 'EP', 8, 8.0)
    """
    dep = str(row["deployment"])
    pools = _POOL.findall(dep)
    workers, tp, dp, mtp, mep = (int(x) for x in pools[-1]) if pools else (1, 1, 1, 1, 1)
    if not pools:  # aggregated: "agg attn TP8 DP1 · MoE TP1 EP8"
        m = re.search(r"attn TP(\d+) DP(\d+) · MoE TP(\d+) EP(\d+)", dep)
        tp, dp, mtp, mep = (int(x) for x in m.groups()) if m else (1, 1, 1, 1)
    b = float(row["concurrency"]) / (workers * dp)
    cap = _CAP.search(str(row.get("notes", "")))
    if cap:
        b = min(b, float(cap.group(1)))
    return {
        "attn": "ADP" if dp > 1 else "ATP",
        "moe": "EP" if mep > 1 else "TP",
        "width": tp * dp,
        "b": b,
        "mtp": "MTP" if "MTP" in dep else "no MTP",
    }


def gb200_rows(csv: str) -> pd.DataFrame:
    d = pd.read_csv(csv)
    d = d[(d.system == "gb200-nvl72") & (d.source == "aiconfigurator") & (d.metric == "interactivity")]
    d = d[d.quality.isna()].dropna(subset=["error"]).copy()
    d = pd.concat([d.reset_index(drop=True), pd.DataFrame([describe(r) for _, r in d.iterrows()])], axis=1)
    d["engine"] = d["stack"].str.replace("dynamo-", "")
    d["group"] = d.engine + " " + d.model + " " + d.precision
    d["pool"] = d.attn + "/" + d.moe + d.width.astype(str)
    d["b_band"] = pd.cut(d.b, [0, 2, 8, 32, 1e9], labels=["b<=2", "2<b<=8", "8<b<=32", "b>32"]).astype(str)
    d["isl_s"] = d.isl.astype(str)
    return d


def sign_rule_score(d: pd.DataFrame, var: str) -> tuple[float, str]:
    """Share of rows whose sign the one-split rule on ``var`` gets right, and its levels' majority signs.

    >>> x = pd.DataFrame({"error": [0.1, 0.2, -0.1, -0.3], "v": ["a", "a", "b", "b"]})
    >>> sign_rule_score(x, "v")
    (1.0, 'a +2/2, b -2/2')
    """
    right, parts = 0, []
    for lev, g in d.groupby(var, sort=True):
        pos = int((g.error > 0).sum())
        maj = max(pos, len(g) - pos)
        right += maj
        parts.append(f"{lev} {'+' if pos * 2 >= len(g) else '-'}{maj}/{len(g)}")
    return right / len(d), ", ".join(parts)


def part1(d: pd.DataFrame) -> None:
    print(
        f"Part 1: one-split sign rules on the GB200 aiconfigurator interactivity rows (n {len(d)}, "
        f"{int((d.error > 0).sum())} too fast, {int((d.error < 0).sum())} too slow)"
    )
    for var in ("attn", "pool", "moe", "engine", "model", "precision", "isl_s", "mtp", "b_band", "split"):
        s, parts = sign_rule_score(d, var)
        print(f"  {var:10s} {100 * s:5.1f}%  {parts}")
    print("  by decode attention sharding and group (n, median error %):")
    t = d.groupby(["group", "attn"]).error.agg(n="size", med="median").unstack("attn")
    for g, r in t.iterrows():
        cells = "  ".join(
            f"{a} n {int(r['n'][a]) if r['n'][a] == r['n'][a] else 0:2d} {100 * r['med'][a]:+6.1f}"
            for a in ("ADP", "ATP")
        )
        print(f"    {g:45s} {cells}")


def part2(d: pd.DataFrame) -> None:
    print("\nPart 2: error against log2(b) within each group and decode pool (points per doubling; error at min b)")
    for (g, p, isl), x in d.groupby(["group", "pool", "isl"]):
        if len(x) < 2 or x.b.nunique() < 2:
            continue
        s = np.polyfit(np.log2(x.b), 100 * x.error, 1)[0]
        lo = x.loc[x.b.idxmin()]
        print(
            f"  {g:45s} {p:8s} ISL {isl:5d} n {len(x):2d}  b {x.b.min():6.1f}-{x.b.max():6.1f}  "
            f"slope {s:+6.2f}  at min b {100 * lo.error:+6.1f}%"
        )


def part3() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from gb_sglang_routing_skew import predict_at

    from jalapeno.fit.validate import load_aiconfigurator

    pts = [p for p in load_aiconfigurator()[0] if p.system == "gb200-nvl72"]
    cols = {}
    for s in SIGMAS:
        df = predict_at(pts, s).dropna(subset=["error"]).copy()
        df = pd.concat([df.reset_index(drop=True), pd.DataFrame([describe(r) for _, r in df.iterrows()])], axis=1)
        df["g"] = (
            df["stack"].str.replace("dynamo-", "") + " " + df.model + " " + df.precision + " " + df.attn + "/" + df.moe
        )
        both = df.assign(g="every GB200 aiconfigurator row")
        cols[s] = pd.concat([df, both]).groupby("g").error.agg(n="size", med=lambda e: e.abs().median(), bias="median")
    print("\nPart 3: interactivity median |error| / median error (%) by group and decode pool, generated tokens at σ")
    print(f"  {'group':58s} {'n':>3s} " + " ".join(f"{'s=' + str(s):>13s}" for s in SIGMAS))
    for g in cols[0.0].index:
        cells = " ".join(
            f"{100 * cols[s].med.get(g, np.nan):5.1f}/{100 * cols[s].bias.get(g, np.nan):+6.1f}" for s in SIGMAS
        )
        print(f"  {g:58s} {int(cols[0.0].n[g]):3d} {cells}")


def part4() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from kimi_trt_decode_split import implied_hbm_fraction, per_layer_parts

    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload, with_stack_mtp
    from jalapeno.serve.limits import decode_step_s
    from jalapeno.serve.open_loop import decode_pool_step
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model

    out = []
    for p in load_aiconfigurator()[0]:
        if p.system != "gb200-nvl72" or p.mode != "disagg" or not p.measured.get("tpot_s"):
            continue
        model, st = load_model(p.model), point_stack(p)
        wl, dep = point_workload(p), with_stack_mtp(p.deployment, st, p.model)
        lay = dep.decode.layout
        if lay.dp != 1 or dep.mtp is not None:
            continue
        pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
        run = serve_at_concurrency(model, pricer, dep, wl, [p.concurrency])
        b = float(run.decode_batch[0])
        sc = decode_pool_step(model, pricer, dep, wl.decode_ctx, [b])  # as served: pool backends, graph padding
        step = float(decode_step_s(sc, pricer.efficiency, dep, np.array([b]), lay)[0])
        moe_layers = model.num_layers - len(model.dense_layers)
        ops = sc.op_rows(0)
        parts = per_layer_parts(ops, model.num_layers, moe_layers)
        exp_bytes = sum(o["weight_bytes"] for o in ops if o["op"] == "moe.experts")
        exp_s = parts["experts"] * moe_layers
        bw = pricer.system.chip.hbm_bandwidth_bytes_per_s
        out.append(
            {
                "group": f"{p.framework.split()[-1][:14]:14s} {p.model} {dep.precision.modules['routed_experts'].compute}",
                "pool": f"TP{lay.tp}/{'EP' if lay.ep > 1 else 'TP'}{max(lay.ep, lay.tp)}",
                "isl": wl.isl,
                "b": b,
                "error": float(run.tpot_s[0]) / p.measured["tpot_s"] - 1,
                "exp_ms": exp_s * 1e3,
                "priced": exp_bytes / exp_s / bw if exp_s > 0 else np.nan,
                "implied": implied_hbm_fraction(exp_bytes, p.measured["tpot_s"], step - exp_s, bw),
            }
        )
    d = pd.DataFrame(out).sort_values(["group", "pool", "isl", "b"])
    print("\nPart 4: GB200 attention-TP decode rows without MTP: TPOT error; routed-expert HBM share priced / implied")
    print("  (implied: the share of 8 TB/s the busiest rank's uniform-routing expert bytes need in the measured step)")
    for _, r in d.iterrows():
        print(
            f"  {r.group} {r.pool:8s} ISL {r.isl:5d} b {r.b:6.1f}  TPOT {100 * r.error:+6.1f}%  experts "
            f"{r.exp_ms:6.2f} ms  priced {r.priced:5.2f}  implied {r.implied:5.2f}"
        )
    print("  median implied by group and pool, rows with b >= 8 (n):")
    big = d[d.b >= 8]
    for (g, pool), x in big.groupby(["group", "pool"]):
        print(f"    {g} {pool:8s} n {len(x):2d}  priced {x.priced.median():5.2f}  implied {x.implied.median():5.2f}")


def balanced_grouped_distinct(
    tokens: int, num_experts: int = 256, top_k: int = 8, groups: int = 8, top_groups: int = 4
) -> int:
    """Distinct experts the collector's ``balanced_logits`` touch through DeepSeek's grouped top-k (sigmoid scores,
    zero bias, group score = its top-2 sum, ``top_groups`` of ``groups``; ties to the lowest index); ``groups`` 1 is
    plain top-k. Token t's one-hot picks are (t·s/T + j·s) mod E (T < s) or (t + j·s) mod E, s = ceil(E / k).

    >>> balanced_grouped_distinct(16), balanced_grouped_distinct(16, groups=1, top_groups=1)  # 4·16 + 2 fillers; 128
    (66, 128)
    >>> balanced_grouped_distinct(64)  # only the first four groups are ever taken
    128
    """
    stride = -(-num_experts // top_k)
    t, j = np.arange(tokens)[:, None], np.arange(top_k)[None, :]
    picks = ((t + j * stride) if tokens >= stride else np.floor(t * stride / tokens + j * stride)) % num_experts
    onehot = np.zeros((tokens, num_experts))
    np.add.at(onehot, (np.repeat(np.arange(tokens), top_k), picks.astype(int).ravel()), 1.0)
    e = np.exp(onehot)
    score = 1.0 / (1.0 + np.exp(-e / e.sum(1, keepdims=True)))
    per = num_experts // groups
    gscore = np.sort(score.reshape(tokens, groups, per), axis=2)[:, :, -2:].sum(2) if per > 1 else score
    keep = np.argsort(-gscore, axis=1, kind="stable")[:, :top_groups]
    mask = np.zeros((tokens, groups), bool)
    np.put_along_axis(mask, keep, True, 1)
    masked = np.where(np.repeat(mask, per, axis=1), score, -np.inf)
    return len(np.unique(np.argsort(-masked, axis=1, kind="stable")[:, :top_k]))


def part5() -> None:
    from jalapeno.cost.moe import expected_distinct_experts
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_table

    moe, version = load_table(AIC_SYSTEM_DIRS["gb200-nvl72"], "moe", "moe_perf", backend="sglang")
    moe = moe[
        (moe.moe_dtype == "nvfp4")
        & (moe.distribution == "balanced")
        & (moe.hidden_size == 7168)
        & (moe.inter_size == 2048)
        & (moe.topk == 8)
    ]
    print(
        f"\nPart 5: SGLang {version} GB200 NVFP4 MoE table, balanced: us per layer / share of 8 TB/s at uniform | "
        "collector distinct experts"
    )
    for (e, tp, ep), g in moe.groupby(["num_experts", "moe_tp_size", "moe_ep_size"]):
        if (tp, ep) not in ((4, 1), (1, 4)):
            continue
        curve = g.groupby("num_tokens").latency.min()
        cells = []
        for t in (4, 16, 32, 64, 128):
            if t not in curve.index:
                continue
            per_expert = 7168 * 2048 * 3 * 0.5625 / tp  # NVFP4 bytes of one expert's slice on a rank
            uni = float(expected_distinct_experts(t, e, 8)) / ep
            us = curve[t] * 1e3
            col = "   -"  # EP rows: the collector times one rank, whose share of the collector's experts is not 1/ep
            if ep == 1:
                n = balanced_grouped_distinct(t, e, 8, 8 if e == 256 else 1, 4 if e == 256 else 1)
                col = f"{n * per_expert / us / 8e6:4.2f}"
            cells.append(f"{t}: {us:4.0f} / {uni * per_expert / us / 8e6:4.2f} | {col}")
        print(f"  E {e} TP{tp} EP{ep}  " + "   ".join(cells))


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    d = gb200_rows(args[0] if args else "/tmp/s29/base.csv")
    part1(d)
    part2(d)
    if "--sigma" in sys.argv[1:]:
        part3()
    if "--bandwidth" in sys.argv[1:]:
        part4()
    if "--table" in sys.argv[1:]:
        part5()


if __name__ == "__main__":
    main()
