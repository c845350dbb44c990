"""SGLang's H200 FP8 DeepSeek-R1 MoE by release, from aiconfigurator's own tables: figures behind
docs/gap_aic_itl.md "InferenceX H200 / MI325X DeepSeek-R1 SGLang interactivity", round 25 (sglrel25).

aiconfigurator-core 0.12.0 ships SGLang H200 MoE tables for three releases
(``systems/data/h200_sxm/moe/sglang/{0.5.6.post2,0.5.10,0.5.14}``); only 0.5.10 and 0.5.14 hold ``moe_perf``
(the Triton ``fused_moe`` path, kernel_source ``sglang_fused_moe_triton``, the path a TP8 EP1 SGLang server runs);
0.5.6.post2 holds only DeepEP wide-EP tables (``wideep_*_moe_perf``). Printed, at DeepSeek-R1's routed-expert shape
(hidden 7168, expert intermediate 2048, 256 experts, top-8, ``fp8_block``):

1. the tables' raw per-layer latency (ms, fastest of repeated rows) at MoE TP8 EP1 and TP1 EP8, per routing
   (``balanced``, ``power_law_1.01``), and the HBM rate a row implies if every expert of the rank is read
   (from 32 tokens, where balanced routing reaches every expert of the rank: 32·8 assignments on 256 experts;
   the catalog's H200 peak is 4.8 TB/s, so a row above it cannot have read every expert);
2. the 0.5.14 / 0.5.10 ratio over every ``fp8_block`` shape both tables measure (median per token count; DeepSeek-R1 at
   EP1, DeepSeek-R1 at EP >= 2, every other shape at EP1, at EP >= 2) and each group's highest all-read HBM rate
   (balanced rows from the load that reaches every expert, up to 256 tokens), to tell a release effect (every shape)
   from a defect of one table slice;
3. the model's MoE price (calibrated set, ``moe.experts`` per layer, uniform top-k routing) against each table
   read through cost/moe_backend.MoeCurve as the measured-curve seam reads a curve (balanced rows: touched-expert
   reading; power-law rows: read at the load alone, as a curve of their own routing);
4. first-order effect on the InferenceX H200 TPOT rows (baseline CSV of ``jalapeno validate``): predicted TPOT
   plus 58 MoE layers x (table price − calibrated price) at a decode batch of C tokens (no MTP on these rows),
   per pricing rule, before any stack refit.

Run: PYTHONPATH=src python scripts/sglang_release_moe.py [BASE_CSV]     (about 30 s; needs the [calibrate] extra)
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from jalapeno.cost.moe_backend import MeasuredMoePricer, MoeCurve
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.fit.kernel_tables import _root
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

SHAPE = {"hidden_size": 7168, "inter_size": 2048, "num_experts": 256, "topk": 8, "moe_dtype": "fp8_block"}
MOE_LAYERS = 58  # DeepSeek-R1: 61 layers, the first 3 dense
HBM_TB_S = 4.8  # catalog h200 hbm_bandwidth_tb_per_s (NVIDIA datasheet)
RELEASES = ("0.5.10", "0.5.14")
DISTS = ("balanced", "power_law_1.01")
#: InferenceX H200 DeepSeek-R1 SGLang rows (data/validation/inferencex_points.csv line = id) → image release
ROW_RELEASE = {**{n: "0.5.12" for n in range(56, 66)}, **{n: "0.5.7" for n in range(81, 85)}}


def curve(release: str, dist: str, tp: int, ep: int) -> pd.Series:
    """num_tokens → ms, fastest of repeated rows, of one release table at DeepSeek-R1's shape."""
    df = pd.read_parquet(_root() / "data" / "h200_sxm" / "moe" / "sglang" / release / "moe_perf.parquet")
    d = df[(df.distribution == dist) & (df.moe_tp_size == tp) & (df.moe_ep_size == ep)]
    for k, v in SHAPE.items():
        d = d[d[k] == v]
    return d.groupby("num_tokens").latency.min()


def raw_tables() -> None:
    for tp, ep in ((8, 1), (1, 8)):
        cols = {f"{r} {d}": curve(r, d, tp, ep) for r in RELEASES for d in DISTS}
        t = pd.DataFrame(cols)
        t = t[t.index <= 1024]
        gb = 3 * SHAPE["hidden_size"] * SHAPE["inter_size"] / tp * SHAPE["num_experts"] / ep / 1e9  # FP8: 1 B/elem
        t["0.5.14/0.5.10 bal"] = t[f"0.5.14 {DISTS[0]}"] / t[f"0.5.10 {DISTS[0]}"]
        t["0.5.14/0.5.10 pl"] = t[f"0.5.14 {DISTS[1]}"] / t[f"0.5.10 {DISTS[1]}"]
        every = t.index * SHAPE["topk"] / ep >= SHAPE["num_experts"] / ep  # balanced rows reach every expert
        t["TB/s if all read (0.5.14 bal)"] = (gb / t[f"0.5.14 {DISTS[0]}"]).where(every)
        print(
            f"\nMoE TP{tp} EP{ep}: per-layer ms; all experts of a rank = {gb:.3f} GB, "
            f"{gb / HBM_TB_S:.3f} ms at {HBM_TB_S} TB/s"
        )
        print(t.round(3).to_string())


def cross_shape() -> pd.Series:
    """Prints the ratio groups; returns the other shapes' MoE TP8 EP1 balanced median ratio per token count."""
    keys = [
        "distribution",
        "hidden_size",
        "inter_size",
        "num_experts",
        "topk",
        "moe_tp_size",
        "moe_ep_size",
        "num_tokens",
    ]
    tabs = {}
    for r in RELEASES:
        df = pd.read_parquet(_root() / "data" / "h200_sxm" / "moe" / "sglang" / r / "moe_perf.parquet")
        tabs[r] = df[df.moe_dtype == "fp8_block"].groupby(keys).latency.min()
    j = pd.concat(tabs, axis=1).dropna().reset_index()
    j["ratio"] = j[RELEASES[1]] / j[RELEASES[0]]
    gb = 3 * j.hidden_size * j.inter_size / j.moe_tp_size * j.num_experts / j.moe_ep_size / 1e9
    every = (j.distribution == "balanced") & (j.num_tokens * j.topk >= j.num_experts) & (j.num_tokens <= 256)
    ds = (j.hidden_size == 7168) & (j.inter_size == 2048) & (j.num_experts == 256) & (j.topk == 8)
    groups = {
        "DeepSeek-R1 EP1": ds & (j.moe_ep_size == 1),
        "DeepSeek-R1 EP>=2": ds & (j.moe_ep_size > 1),
        "other shapes EP1": ~ds & (j.moe_ep_size == 1),
        "other shapes EP>=2": ~ds & (j.moe_ep_size > 1),
    }
    print("\n0.5.14 / 0.5.10 over every fp8_block shape of both tables (median per token count):")
    for name, sel in groups.items():
        p = j[sel].pivot_table(index="num_tokens", columns="distribution", values="ratio", aggfunc="median")
        peak = {r: (gb / j[r])[sel & every].max() for r in RELEASES}
        print(
            f"{name}: {int(sel.sum())} pairs; highest all-read rate "
            + ", ".join(f"{r} {v:.2f} TB/s" for r, v in peak.items())
        )
        print(p[p.index <= 512].round(3).T.to_string())
    tp8 = j[groups["other shapes EP1"] & (j.moe_tp_size == 8) & (j.distribution == "balanced")]
    return tp8.groupby("num_tokens").ratio.median()


def model_prices(tokens) -> pd.DataFrame:
    m, cal = load_model("deepseek-r1"), load_any_pricer("h200", "calibrated")
    lay = Layout(tp=8)  # MoE TP8 EP1, the InferenceX H200 rows' layout

    def ms(p):
        sc = step_cost(
            m, p, lay, get_precision("fp8"), Batch.make(decode_seqs=np.asarray(tokens, dtype=float), decode_ctx=1536.0)
        )
        return sc.times.time_s[sc.ops.name.index("moe.experts")] / MOE_LAYERS * 1e3

    out = {"calibrated": ms(cal)}
    for r in RELEASES:
        for d in DISTS:
            g = curve(r, d, 8, 1)
            n = 256.0 if d == "balanced" else 0.0  # touched-expert reading for the balanced rows only
            c = MoeCurve(
                7168.0, 256.0, "fp8", np.asarray(g.index, dtype=float) * 8, g.values / 1e3, f"sglang {r} {d}", "", n, 1
            )
            out[f"{r} {d}"] = ms(MeasuredMoePricer(cal, c, "sglang", cal))
    return pd.DataFrame(out, index=tokens)


def row_effect(base_csv: str, prices: pd.DataFrame, other: pd.Series) -> None:
    b = pd.read_csv(base_csv)
    x = b[(b.source == "inferencex") & (b.system == "h200") & (b.metric == "tpot_s")].copy()
    x["rel"] = x.id.str.split(":").str[1].astype(int).map(ROW_RELEASE)
    cal = prices["calibrated"]
    rules = {
        "baseline (calibrated, no release)": lambda c, rel: 0.0,
        "v0.5.12 <- 0.5.10 balanced (nearest earlier)": lambda c, rel: (
            prices.loc[c, "0.5.10 balanced"] - cal[c] if rel == "0.5.12" else 0.0
        ),
        "v0.5.12 <- 0.5.14 balanced": lambda c, rel: (
            prices.loc[c, "0.5.14 balanced"] - cal[c] if rel == "0.5.12" else 0.0
        ),
        "v0.5.12 <- 0.5.14 power-law": lambda c, rel: (
            prices.loc[c, "0.5.14 power_law_1.01"] - cal[c] if rel == "0.5.12" else 0.0
        ),
        "v0.5.12: calibrated x (0.5.14/0.5.10 power-law)": lambda c, rel: (
            cal[c] * (prices.loc[c, "0.5.14 power_law_1.01"] / prices.loc[c, "0.5.10 power_law_1.01"] - 1)
            if rel == "0.5.12"
            else 0.0
        ),
        "v0.5.12: calibrated x (other shapes' TP8 EP1 ratio)": lambda c, rel: (
            cal[c] * (other[c] - 1) if rel == "0.5.12" else 0.0
        ),
    }
    print("\nInferenceX H200 TPOT error (predicted/measured - 1), before any stack refit:")
    for name, delta in rules.items():
        e = [
            (r.rel, (r.predicted + MOE_LAYERS * delta(int(r.concurrency), r.rel) / 1e3) / r.measured - 1)
            for r in x.itertuples()
        ]
        e = pd.DataFrame(e, columns=["rel", "err"])
        per = " ".join(f"{v:+.1%}" for v in e[e.rel == "0.5.12"].err)
        print(
            f"  {name:50s} median all {e.err.median():+.1%}  v0.5.7 {e[e.rel == '0.5.7'].err.median():+.1%}  "
            f"v0.5.12 {e[e.rel == '0.5.12'].err.median():+.1%}  [v0.5.12 rows: {per}]"
        )


if __name__ == "__main__":
    raw_tables()
    other = cross_shape()
    p = model_prices([1, 2, 4, 8, 16, 32, 64, 128, 256, 512])
    print("\nModel moe.experts per layer (ms), DeepSeek-R1 FP8 H200 MoE TP8 EP1, uniform top-8 routing:")
    print(p.round(4).to_string())
    if len(sys.argv) > 1:
        row_effect(sys.argv[1], p, other)
