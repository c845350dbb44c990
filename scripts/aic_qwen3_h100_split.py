"""H100 Qwen3-235B-A22B-FP8 TensorRT-LLM 1.0.0rc3 rows: TPOT by layout and concurrency, the routed experts priced
by the calibrated form and by the CUTLASS kernel TensorRT-LLM runs (docs/gap_aic_itl.md, round 25).

Table 1: the median signed TPOT error (predicted / measured - 1) of the 126 aggregated rows (plus the one
1.2.0rc6.post1 row) per layout and concurrency, as validated (the rows' pools take TensorRT-LLM's default MoE
backend, CUTLASS: fit/aic_row_engine.ROW_MOE_BACKENDS, priced by the H100 ``moe_perf`` curve, cost/moe_backend.py)
and with the backend removed (the calibrated ``moe[fp8]`` form, as before round 25).
Table 2 (model-free on the measured side): per workload and concurrency the measured TPOT of the attention-TP4
(MoE EP4) and TP8 (EP8) runs, their difference, and the difference of the routed-expert time of one decode
step at batch C priced by the CUTLASS curve (cost/step.step_cost, ``moe.experts``): what the two layouts'
expert weight reads alone would separate them by. Nothing is fitted or written.
Run: python scripts/aic_qwen3_h100_split.py   (about 20 s; needs the aiconfigurator-core package)
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from jalapeno.cost.pool_backends import with_pool_backends
from jalapeno.cost.step import Batch, step_cost
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload, predict_points
from jalapeno.specs.catalog import load_model


def rows():
    """The H100 Qwen3-235B-A22B TensorRT-LLM aggregated rows (fit/aic_rows.py points)."""
    return [
        p
        for p in load_aiconfigurator()[0]
        if p.system == "h100" and p.model == "qwen3-235b-a22b" and p.framework.startswith("trtllm") and p.mode == "agg"
    ]


def without_backend(p):
    """``p`` with its pools' MoE backend removed: the routed experts priced by the calibrated form."""
    d = p.deployment
    return replace(p, deployment=replace(d, decode=replace(d.decode, moe_backend=None)))


def layout(dep) -> str:
    lay = dep.decode.layout
    return f"TP{lay.tp} · MoE TP{lay.moe_tp} EP{lay.ep}"


def error_table(pts) -> pd.DataFrame:
    """Table 1: median signed TPOT error per layout and concurrency, CUTLASS (as validated) and calibrated."""
    out = []
    for name, ps in (("cutlass", pts), ("calibrated", [without_backend(p) for p in pts])):
        got = predict_points(ps)
        t = got[got.metric == "tpot_s"].set_index("id")["error"]
        out += [
            {"pricing": name, "layout": layout(p.deployment), "C": p.concurrency, "error": float(t[p.id])}
            for p in ps
            if p.id in t.index
        ]
    df = pd.DataFrame(out)
    tab = df.pivot_table(index=["layout", "C"], columns="pricing", values="error", aggfunc="median")
    n = df[df.pricing == "cutlass"].groupby(["layout", "C"]).size().rename("n")
    tab = tab.join(n)
    per = df.assign(ape=df.error.abs()).groupby(["pricing", "layout"]).ape.median().unstack(0)
    print("== Table 1: TPOT error (median, signed) by layout and concurrency")
    print((100 * tab[["calibrated", "cutlass"]]).round(1).join(tab.n).to_string())
    print("\nmedian |TPOT error| by layout:")
    print((100 * per).round(1).to_string())
    print("all rows:", (100 * df.assign(ape=df.error.abs()).groupby("pricing").ape.median()).round(1).to_dict())
    return df


def moe_step_ms(p, batch: float) -> float:
    """Routed-expert time (ms) of one decode step of ``batch`` sequences, priced as the row's pools price it."""
    model = load_model(p.model)
    st = point_stack(p)
    pool, lay = p.deployment.decode, p.deployment.decode.layout
    pricer = with_pool_backends(load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st), pool, model, lay)
    sc = step_cost(
        model,
        pricer,
        lay,
        p.deployment.precision,
        Batch.make(decode_seqs=np.array([batch]), decode_ctx=point_workload(p).decode_ctx),
    )
    return sum(r["time_s"] for r in sc.op_rows() if r["op"] == "moe.experts") * 1e3


def layout_table(pts) -> pd.DataFrame:
    """Table 2: measured TP4 - TP8 TPOT against the CUTLASS-priced routed-expert difference at batch C."""
    by = {}
    for p in pts:
        lay = p.deployment.decode.layout
        if lay.moe_tp == 1 and lay.tp in (4, 8) and p.framework.endswith("1.0.0rc3"):
            by[(p.isl, p.osl, p.concurrency, lay.tp)] = p
    out = []
    for (isl, osl, c, tp), p4 in sorted(by.items()):
        p8 = by.get((isl, osl, c, 8))
        if tp != 4 or p8 is None:
            continue
        t4, t8 = p4.measured["tpot_s"] * 1e3, p8.measured["tpot_s"] * 1e3
        m4, m8 = moe_step_ms(p4, c), moe_step_ms(p8, c)
        out.append(
            {
                "isl": isl,
                "osl": osl,
                "C": c,
                "tpot_tp4": t4,
                "tpot_tp8": t8,
                "measured_diff": t4 - t8,
                "moe_tp4": m4,
                "moe_tp8": m8,
                "moe_diff": m4 - m8,
            }
        )
    df = pd.DataFrame(out)
    print("\n== Table 2: TP4 (EP4) - TP8 (EP8), ms: measured TPOT and the CUTLASS-priced routed experts at batch C")
    print(df.round(2).to_string(index=False))
    print("\nmedians by concurrency:")
    print(df.groupby("C")[["measured_diff", "moe_diff"]].median().round(2).to_string())
    return df


def main() -> None:
    pd.set_option("display.width", 200)
    pts = rows()
    error_table(pts)
    layout_table(pts)


if __name__ == "__main__":
    main()
