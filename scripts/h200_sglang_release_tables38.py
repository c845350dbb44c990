"""Do SGLang's own H200 kernel tables, release by release, carry the InferenceX DeepSeek-R1 SGLang release ladder?
(docs/gap_aic_itl.md, "round 38, h200ix38"). Nothing here is shipped; nothing is fitted or written.

The InferenceX H200 DeepSeek-R1 FP8 SGLang TP8 EP1 rows ran one launch script at three releases (round 31's ladder,
scripts/h200_release_ladder.py): v0.5.7 (issue #870, fit rows 81-84), 0.5.9-cu130 (aiconfigurator's 2026-03-25
rows) and v0.5.12-cu130 (rows 56-65; held out 58/59/60/64). The model prices all three alike; v0.5.12 runs 6-10%
faster than 0.5.9 at 1k/1k and v0.5.7 3-10% slower. aiconfigurator's repository (ai-dynamo/aiconfigurator
@095f58a51, 2026-08-21, ``aic-core/src/aiconfigurator_core/systems/data/h200_sxm``) now holds SGLang H200 tables for
five releases, more than the installed aiconfigurator-core 0.12.0 that rounds 25-35 read:

- ``moe/sglang/{0.5.6.post2,0.5.9,0.5.10,0.5.14}/moe_perf.parquet`` (the Triton ``fused_moe``, kernel_source
  ``sglang_fused_moe_triton``; 0.5.6.post2 and 0.5.9 are new, 0.5.6.post2 with power-law routing only);
  ``moe/sglang/0.5.12/reuse.yaml`` names 0.5.14's table as 0.5.12's ("legacy newest-first effective donor");
- ``mla/sglang/{0.5.6.post2,0.5.9,0.5.10,0.5.14}/generation_mla_perf.parquet`` (MLA decode, kernel_source
  ``flash_attention``: not the FlashInfer backend the InferenceX script names; context up to 1,024 tokens), 0.5.12
  reusing 0.5.14's;
- ``comm/sglang/{0.5.9,0.5.10,0.5.14}/custom_allreduce_perf.parquet`` (SGLang's custom all-reduce, graph-captured and
  eager; 0.5.6.post2's file holds TensorRT-LLM 1.2.0rc5 rows, so no SGLang all-reduce of that era).

Per decode batch B (one token per sequence, no MTP) the step's three table-timed families at TP8 EP1 are summed:
58 routed-expert layers (DeepSeek-R1: 61 layers, the first 3 dense) x ``moe_perf`` (hidden 7168, expert
intermediate 2048, 256 experts, top-8, ``fp8_block``, MoE TP8 EP1, fastest of repeated rows, ``power_law_1.01``
routing, the one every release has), 61 MLA layers x ``generation_mla_perf`` (16 heads a rank = 128 / TP8, BF16
KV as the script's default, batch B, context read at the table's largest, 1,024 tokens: a floor for the rows'
1.4k/7.9k mean context), and 122 all-reduces (two a layer: attention output and MoE output) x the graph-captured
custom all-reduce of B x 7168 BF16 elements on 8 GPUs (``message_size`` in elements, aiconfigurator's
``query_allreduce(size = tokens x hidden)``). Printed: each family per release (ms a step), the family sum's
change between releases against the measured TPOT change of the same step (validate CSV), and, by release, the
share of the measured change the tables carry. The tables' releases stand in for the rows': 0.5.6.post2 for
v0.5.7 (the nearest earlier table), 0.5.14 for v0.5.12 (aiconfigurator's own donor).

Part 3 (validate CSV only): the H200 TensorRT-LLM DeepSeek-R1 attention-DP8 rows with and without MTP1 (InferenceX row
25 and its aiconfigurator twins of InferenceX's own database, release 1.1.0rc2.post2): the acceptance that would close
each MTP1 row's TPOT at the model's step, and, where one campaign ran the same cell with and without MTP, the TPOT
gain MTP measured against the one the model credits (``mtp_rows``).

Usage: python scripts/h200_sglang_release_tables38.py AIC_H200_DATA_DIR [VALIDATE_CSV] [--routing power_law_1.2]
  AIC_H200_DATA_DIR: ``aic-core/src/aiconfigurator_core/systems/data/h200_sxm`` of an ai-dynamo/aiconfigurator
  checkout at 095f58a51; VALIDATE_CSV: `jalapeno validate --json -o FILE` (default validate.csv; the measured ladder).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from h200_release_ladder import POINTS, point_releases, sglang_ladder  # noqa: E402

#: DeepSeek-R1 routed-expert shape in aiconfigurator's moe_perf (config.json: hidden_size, moe_intermediate_size,
#: n_routed_experts, num_experts_per_tok; FP8 block-scaled checkpoint)
MOE_SHAPE = {"hidden_size": 7168, "inter_size": 2048, "num_experts": 256, "topk": 8, "moe_dtype": "fp8_block"}
MOE_LAYERS = 58  # 61 layers, first_k_dense_replace = 3
MLA_LAYERS = 61
AR_PER_STEP = 2 * 61  # attention output + MoE (dense FFN) output, each layer, under TP8
HIDDEN = 7168
TP = 8
HEADS_PER_RANK = 128 // TP
ROUTING = "power_law_1.01"
#: table release standing in for each measured release (module docstring)
TABLE_OF = {"0.5.7": "0.5.6.post2", "0.5.9": "0.5.9", "0.5.12": "0.5.14"}
TABLE_RELEASES = ("0.5.6.post2", "0.5.9", "0.5.10", "0.5.14")
BATCHES = (4, 8, 16, 32, 64)


def _interp(curve: pd.Series, x: float) -> float:
    """Linear interpolation of a sorted (x -> ms) series at x; NaN outside its range or when empty."""
    if curve.empty or x < curve.index.min() or x > curve.index.max():
        return float("nan")
    return float(np.interp(x, curve.index.to_numpy(dtype=float), curve.to_numpy(dtype=float)))


def moe_curve(df: pd.DataFrame, routing: str = ROUTING) -> pd.Series:
    """num_tokens -> ms per layer, fastest of repeated rows, DeepSeek-R1's shape at MoE TP8 EP1."""
    d = df[(df.distribution == routing) & (df.moe_tp_size == TP) & (df.moe_ep_size == 1)]
    for k, v in MOE_SHAPE.items():
        d = d[d[k] == v]
    return d.groupby("num_tokens").latency.min().sort_index()


def mla_curve(df: pd.DataFrame, kv: str = "bfloat16") -> pd.Series:
    """batch -> ms per layer of MLA decode at 16 heads a rank (DeepSeek-R1's 128 at TP8), ``kv`` KV, the table's
    largest context. The kernel sees the rank's heads only, so rows of 16 heads at any ``tp_size`` are read (0.5.14
    holds 16 heads at TP4 only, a 64-head model's slice); the fastest is kept."""
    d = df[(df.num_heads == HEADS_PER_RANK) & (df.kv_cache_dtype == kv)]
    if d.empty:
        return pd.Series(dtype=float)
    d = d[d.isl == d.isl.max()]
    return d.groupby("batch_size").latency.min().sort_index()


def ar_curve(df: pd.DataFrame) -> pd.Series:
    """message elements -> ms of SGLang's graph-captured custom all-reduce on 8 GPUs (empty: no SGLang rows)."""
    if "backend" not in df.columns:
        return pd.Series(dtype=float)
    d = df[(df.backend == "sglang_graph") & (df.num_gpus == TP)]
    return d.groupby("message_size").latency.min().sort_index()


def step_families(moe: pd.Series, mla: pd.Series, ar: pd.Series, batch: int) -> dict[str, float]:
    """ms a decode step of B = ``batch`` sequences: routed experts, MLA decode, all-reduces, their sum."""
    out = {
        "experts": MOE_LAYERS * _interp(moe, batch),
        "mla": MLA_LAYERS * _interp(mla, batch),
        "allreduce": AR_PER_STEP * _interp(ar, batch * HIDDEN),
    }
    out["sum"] = out["experts"] + out["mla"] + out["allreduce"]
    return out


def load_tables(root: str | Path, routing: str = ROUTING) -> dict[str, dict[str, pd.Series]]:
    """release -> {"moe", "mla", "ar"} curves read from aiconfigurator's ``h200_sxm`` data folder."""
    root = Path(root)
    if not (root / "moe" / "sglang").is_dir():
        raise SystemExit(
            f"AIC_H200_DATA_DIR: {root} has no moe/sglang folder; pass aic-core/src/aiconfigurator_core/"
            "systems/data/h200_sxm of an ai-dynamo/aiconfigurator checkout at 095f58a51"
        )
    out = {}
    for rel in TABLE_RELEASES:

        def read(sub: str) -> pd.DataFrame:
            p = root / sub.format(rel=rel)
            return pd.read_parquet(p) if p.exists() else pd.DataFrame()

        moe, mla, ar = (
            read("moe/sglang/{rel}/moe_perf.parquet"),
            read("mla/sglang/{rel}/generation_mla_perf.parquet"),
            read("comm/sglang/{rel}/custom_allreduce_perf.parquet"),
        )
        out[rel] = {
            "moe": moe_curve(moe, routing) if len(moe) else pd.Series(dtype=float),
            "mla": mla_curve(mla) if len(mla) else pd.Series(dtype=float),
            "ar": ar_curve(ar) if len(ar) else pd.Series(dtype=float),
        }
    return out


def family_table(tables: dict[str, dict[str, pd.Series]], batches=BATCHES) -> pd.DataFrame:
    """One row per (batch, release): ms a step per family and their sum."""
    rows = []
    for b in batches:
        for rel, t in tables.items():
            rows.append({"B": b, "release": rel, **step_families(t["moe"], t["mla"], t["ar"], b)})
    return pd.DataFrame(rows)


def ladder_against_tables(fam: pd.DataFrame, ladder: pd.DataFrame) -> pd.DataFrame:
    """Per (ISL, OSL, C) of the measured ladder: the measured TPOT change between releases (ms) beside the change the
    tables give their stand-ins, per family and summed (positive = the later release faster)."""
    piv = fam.set_index(["B", "release"])
    rows = []
    for _, r in ladder.iterrows():
        b = int(r.C)
        if b not in piv.index.get_level_values(0):
            continue
        out = {"isl": int(r.isl), "osl": int(r.osl), "C": b}
        for old, new in (("0.5.7", "0.5.12"), ("0.5.9", "0.5.12"), ("0.5.7", "0.5.9")):
            meas = r[f"tpot {old}"] - r[f"tpot {new}"]
            to, tn = TABLE_OF[old], TABLE_OF[new]
            out[f"meas {old}->{new}"] = meas
            for fam_name in ("experts", "mla", "allreduce"):
                out[f"{fam_name} {old}->{new}"] = piv.loc[(b, to), fam_name] - piv.loc[(b, tn), fam_name]
            out[f"tables {old}->{new}"] = sum(
                v
                for f in ("experts", "mla", "allreduce")
                if np.isfinite(v := piv.loc[(b, to), f] - piv.loc[(b, tn), f])
            )
        rows.append(out)
    return pd.DataFrame(rows)


#: MTP acceptance the validate run prices the TensorRT-LLM DeepSeek-R1 rows at: the ``trtllm`` profile's fitted one
#: (data/stack_fits.toml; fit/entries.with_stack_mtp), whatever acceptance the row's deployment label shows
PRICED_ACCEPTANCE = 0.675
DEP8 = "attn TP1 DP8 · MoE TP1 EP8"


def mtp_rows(d: pd.DataFrame, priced: float = PRICED_ACCEPTANCE) -> pd.DataFrame:
    """H200 DeepSeek-R1 TensorRT-LLM aggregated attention-DP8 rows (TPOT, ms), with and without MTP1: per MTP1 row the
    acceptance that would close its TPOT were the model's step right, (1 + a_priced) x model / measured − 1; per
    (source, ISL, OSL, C, release) with both a plain row its notes tie to a plain InferenceX sweep (``InferenceX sweep
    KEY``, KEY not ending ``-mtp``) and an MTP1 row, the measured TPOT gain plain / MTP1 beside the
    model's, and the acceptance the measured gain implies at the model's step ratio, g x (1 + a_priced) x
    model_MTP1 / model_plain − 1 (the verify and draft work priced right, only the acceptance left free)."""
    d = d[
        (d.system == "h200")
        & (d.model == "deepseek-r1")
        & d.framework.str.contains("trt")
        & (d["mode"] == "agg")
        & (d.metric == "tpot_s")
        & d.deployment.str.contains(DEP8, regex=False)
    ].copy()
    d["mtp"] = d.deployment.str.contains("MTP1", regex=False)
    d["meas ms"], d["model ms"] = d.measured * 1e3, d.predicted * 1e3
    d["a closing TPOT"] = np.where(d.mtp, (1 + priced) * d.predicted / d.measured - 1, np.nan)
    d["sweep"] = d.notes.fillna("").str.extract(r"InferenceX (?:MTP )?sweep (dsr1-[\w-]+?)(?:'s|:| \()")[0]
    rows = []
    for key, g in d.groupby(["source", "isl", "osl", "concurrency", "framework"]):
        # a plain row pairs only when its notes tie it to a plain launch script: a row no sweep claims may have run MTP
        p, m = g[~g.mtp & g.sweep.notna() & ~g.sweep.fillna("").str.endswith("-mtp")], g[g.mtp]
        if len(p) and len(m):
            gm = p["meas ms"].mean() / m["meas ms"].mean()
            gp = p["model ms"].mean() / m["model ms"].mean()
            rows.append(
                {
                    "source": key[0],
                    "isl": key[1],
                    "osl": key[2],
                    "C": int(key[3]),
                    "release": key[4],
                    "gain measured": gm,
                    "gain model": gp,
                    "a from gain": gm * (1 + priced) / gp - 1,
                }
            )
    cols = [
        "source",
        "isl",
        "osl",
        "concurrency",
        "framework",
        "sweep",
        "mtp",
        "meas ms",
        "model ms",
        "error",
        "a closing TPOT",
        "split",
    ]
    return d[cols].sort_values(["isl", "osl", "concurrency", "source"]), pd.DataFrame(rows)


def main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if argv else 2)
    routing = ROUTING
    if "--routing" in argv:
        i = argv.index("--routing")
        routing = argv[i + 1]
        argv = argv[:i] + argv[i + 2 :]
    tables = load_tables(argv[0], routing)
    fam = family_table(tables)
    pd.set_option("display.width", 220)
    print(f"## 1. Table-timed decode-step families per release (ms a step; TP8 EP1, MoE routing {routing})\n")
    wide = fam.pivot(index="B", columns="release")
    for f in ("experts", "mla", "allreduce", "sum"):
        print(f"### {f}\n")
        print(wide[f][list(TABLE_RELEASES)].round(2).to_string())
        print()
    csv = argv[1] if len(argv) > 1 else "validate.csv"
    if not Path(csv).exists():
        print(f"(no validate CSV at {csv}: the measured ladder is skipped)")
        return
    ladder = sglang_ladder(pd.read_csv(csv), point_releases(POINTS))
    comp = ladder_against_tables(fam, ladder)
    print("## 2. Measured TPOT change between releases against the tables' change (ms; + = later release faster)\n")
    cols = ["isl", "osl", "C"] + [c for c in comp.columns if "->" in c]
    print(comp[cols].round(2).to_string(index=False))
    per_row, pairs = mtp_rows(pd.read_csv(csv))
    print(
        "\n## 3. H200 TensorRT-LLM DeepSeek-R1 attention-DP8 rows: the MTP1 credit (TPOT ms; acceptance priced "
        f"{PRICED_ACCEPTANCE})\n"
    )
    print(per_row.round(3).to_string(index=False))
    print()
    print(pairs.round(3).to_string(index=False))


if __name__ == "__main__":
    main(sys.argv[1:])
