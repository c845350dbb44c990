"""MI355X MoRI-SGLang disaggregated rows 24/31: what the release fix moved and what is left (issue 18, round 32).

Rows ``inferencex_points:24`` and ``:31`` (MI355X, DeepSeek-R1 MXFP4, SGLang + MoRI, 1x/4x DEP4 prefill + 1x DEP8
decode, C = 2048) ran InferenceX's image ``rocm/sgl-dev:sglang-0.5.9-rocm720-mi35x-mori-0227-3`` (amd-master.yaml
@5e2c705d3cbd): SGLang 0.5.9, which the ``sglang-rocm`` profile prices with its v < 0.5.12 step overhead (data/stacks.toml,
docs/model.md §8.7 (11)). Until round 32 validation priced them at the profile's newest behaviour (the recipe's
``version`` "0.5.9 (MoRI)" was not a release number, and the rows' framework cell ``mori-sglang`` found no recipe).

For each row this prints the model at the newest behaviour (release pinned at 0.5.12, the first without the rule) and
at the row's release (``point_stack``, 0.5.9): throughput per GPU, TPOT, TTFT and their errors; then the closed-loop
identity of the measured row on the deployment's G GPUs (docs/gap_disagg_overprediction.md §Method):
λ = throughput·G / (mean ISL + mean OSL), decoding sequences = λ·(mean OSL − 1)·TPOT (Little's law on the decode
stage), per attention-DP rank, against the recipe's 160 per rank; and the per-step gap left (one decode step per token
without MTP). With a validate CSV (``jalapeno validate -o FILE``) it also prints the sign of every SGLang-family
disaggregated group (stacks sglang*, dynamo-sglang*): median signed throughput-per-GPU and interactivity error per
source, system, decode attention layout (attention DP or TP) and split. Nothing is fitted or written.

Run: python scripts/mori_disagg_release.py [VALIDATE_CSV]
"""

from __future__ import annotations

import dataclasses
import sys
from importlib.resources import files

import pandas as pd

from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import point_stack, point_workload, with_stack_mtp
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model

ROWS = ("24", "31")
#: the first SGLang-ROCm release the profile prices without the v < 0.5.12 step overhead (data/stacks.toml)
NEWEST = "0.5.12"
#: the recipe's decode cap per attention-DP rank (InferenceX amd_utils/models.yaml cuda_graph_bs_range 1-160, server.sh)
CAP_PER_RANK = 160


def row_figures(row: str) -> dict:
    """Model (newest behaviour and the row's release) and closed-loop identity of one row (units: tok/s/GPU, s)."""
    points, _ = load_inferencex(files("jalapeno") / "data/validation/inferencex_points.csv")
    p = next(q for q in points if q.id == f"inferencex_points:{row}")
    model, wl, m = load_model(p.model), point_workload(p), p.measured
    out = {"row": row, "measured": m}
    for tag, pt in (("newest", dataclasses.replace(p, engine_version=NEWEST)), ("release", p)):
        stack = point_stack(pt)
        pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=stack)
        dep = with_stack_mtp(p.deployment, stack, p.model)
        r = serve_at_concurrency(model, pricer, dep, wl, [p.concurrency])
        out[tag] = {
            "thr": float(r.throughput_per_chip[0]),
            "tpot_s": float(r.tpot_s[0]),
            "ttft_s": float(r.ttft_p50_s[0]),
            "step_overhead_s": stack.step_overhead_s,
        }
        out["chips"], out["dp"] = dep.chips, dep.decode.layout.dp
    lam = m["throughput_per_chip"] * out["chips"] / (wl.mean_isl + wl.mean_osl)
    decoding = lam * (wl.mean_osl - 1) * m["tpot_s"]
    out.update(
        lam=lam, decoding=decoding, per_rank=decoding / out["dp"], step_gap_s=m["tpot_s"] - out["release"]["tpot_s"]
    )
    return out


def sign_table(csv: str) -> pd.DataFrame:
    """Median signed error (%) of SGLang-family disaggregated groups: throughput per GPU and interactivity."""
    d = pd.read_csv(csv)
    d = d[
        (d["mode"] == "disagg")
        & d["stack"].astype(str).str.match(r"(dynamo-)?sglang")
        & d["metric"].isin(["throughput_per_chip", "interactivity"])
        & d["error"].notna()
    ]
    dp = d["deployment"].astype(str).str.extract(r"D \d+x\(attn TP(\d+) DP(\d+)")
    d = d.assign(decode=["DP" if int(b) > 1 else "TP" for b in dp[1].fillna(1)], split=d["split"].fillna("-"))
    g = d.groupby(["source", "system", "decode", "split", "metric"])["error"]
    return (g.median() * 100).round(1).to_frame("median_%").join(g.size().rename("n")).reset_index()


def main(argv: list[str]) -> None:
    for row in ROWS:
        f = row_figures(row)
        m = f["measured"]
        print(
            f"== inferencex_points:{row}: {f['chips']} GPUs, measured thr {m['throughput_per_chip']:.1f} "
            f"TPOT {m['tpot_s'] * 1e3:.1f} ms TTFT {m['ttft_s']:.1f} s"
        )
        for tag in ("newest", "release"):
            x = f[tag]
            print(
                f"  {tag:8s} (step overhead {x['step_overhead_s'] or 0:.4f} s): thr {x['thr']:.1f} "
                f"({x['thr'] / m['throughput_per_chip'] - 1:+.1%}) TPOT {x['tpot_s'] * 1e3:.2f} ms "
                f"({x['tpot_s'] / m['tpot_s'] - 1:+.1%}) TTFT {x['ttft_s']:.2f} s ({x['ttft_s'] / m['ttft_s'] - 1:+.1%})"
            )
        print(
            f"  identity: lambda {f['lam']:.2f} req/s, decoding {f['decoding']:.0f} "
            f"({f['per_rank']:.0f} per rank of {f['dp']}, cap {CAP_PER_RANK}); step gap left "
            f"{f['step_gap_s'] * 1e3:.1f} ms ({f['step_gap_s'] / m['tpot_s']:.0%} of the measured step)"
        )
    if argv:
        print(sign_table(argv[0]).to_string(index=False))


if __name__ == "__main__":
    main(sys.argv[1:])
