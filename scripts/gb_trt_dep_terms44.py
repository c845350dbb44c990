"""Which decode-step term makes aiconfigurator GB300 TensorRT-LLM wide-EP decode rows slower against measured
than GB200's? (docs/gap_disagg_overprediction.md, round 44 "GB300 TRT-LLM DEP decode terms"). Diagnosis only:
nothing is fitted, written or shipped.

Rows: every aiconfigurator GB200 / GB300 NVL72 TensorRT-LLM disaggregated row whose decode pool runs MoE EP >= 8,
from a validate CSV (TPOT measured / predicted). Part 2 (``--steps``) prices each such point as validation does
(serve/point.serve_at_concurrency with its stack and deployment) on its own rack AND on the other rack (system
swapped, same stack, deployment and modelled decode batch of its own rack), and splits the decode-only step at that
batch (as served: serve/open_loop.decode_pool_step, the pool's backends and CUDA-graph padding) into routed experts (``moe``), attention, other GEMMs, element-wise/memory ops, the MoE all-to-all
(``a2a``: dispatch + combine collectives), other collectives and the fixed per-step cost (cost/step.step_overhead),
ms. The per-term ratio GB300 / GB200 at the matched layout and batch is the model's view of what GB300 buys; the
measured twin ratio (scripts/gb300_twin_check.py part 1) is the runs' view.

Usage: python scripts/gb_trt_dep_terms44.py VALIDATE_CSV [--steps]   (VALIDATE_CSV: ``jalapeno validate -o X.csv``;
--steps about a minute)
"""

from __future__ import annotations

import re
import sys
from dataclasses import replace

import pandas as pd

_POOL = re.compile(r"D (\d+)x\(attn TP(\d+) DP(\d+) · MoE TP(\d+) EP(\d+)")
SYSTEMS = ("gb300-nvl72", "gb200-nvl72")
TERMS = ("moe", "attention", "gemm", "memory", "a2a", "other_coll", "fixed")


def decode_ep(deployment: str) -> int:
    """The decode pool's MoE EP width of a disaggregated deployment label, 0 for an aggregated one.

    >>> decode_ep("disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp4]")
    32
    """
    m = _POOL.search(str(deployment))
    return 0 if not m else int(m.group(5))


def pool_label(deployment: str) -> str:
    """``Wx TPa DPb EPc`` of the decode pool, ``""`` for an aggregated deployment.

    >>> pool_label("disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 2x(attn TP1 DP16 · MoE TP1 EP16) [fp4]")
    '2x TP1 DP16 EP16'
    """
    m = _POOL.search(str(deployment))
    return "" if not m else "{}x TP{} DP{} EP{}".format(*m.group(1, 2, 3, 5))


def dep_rows(csv: str, min_ep: int = 8) -> pd.DataFrame:
    """The two racks' unflagged aiconfigurator TensorRT-LLM TPOT rows whose decode pool has EP >= ``min_ep``."""
    d = pd.read_csv(csv)
    d = d[
        (d.source == "aiconfigurator")
        & d.system.isin(SYSTEMS)
        & (d.metric == "tpot_s")
        & d.quality.isna()
        & d.framework.str.startswith("trtllm")
    ]
    d = d.assign(ep=d.deployment.map(decode_ep), pool=d.deployment.map(pool_label))
    return d[d.ep >= min_ep]


def bias_table(d: pd.DataFrame) -> pd.DataFrame:
    """Per (system, precision, decode EP): n and median / mean TPOT error (predicted / measured − 1), %."""
    g = d.groupby(["system", "precision", "ep"])
    return pd.DataFrame(
        {"n": g.size(), "median_pct": (100 * g.error.median()).round(1), "mean_pct": (100 * g.error.mean()).round(1)}
    )


def term_split(sc, overhead_s: float) -> dict:
    """The decode step ``sc`` (cost/step.StepCost, point 0) in :data:`TERMS`, s: op kinds ``moe``/``attention``/
    ``gemm`` as they are, every other op kind in ``memory``; collectives whose kind names an all-to-all (dispatch /
    combine) in ``a2a``, the rest in ``other_coll``; ``fixed`` = ``overhead_s``."""
    parts = dict.fromkeys(TERMS, 0.0)
    for o in sc.op_rows(0):
        parts[o["kind"] if o["kind"] in ("moe", "attention", "gemm") else "memory"] += o["time_s"]
    for c in sc.collective_rows(0):
        a2a = any(
            k in (c["kind"] + c["collective"]).lower() for k in ("all_to_all", "alltoall", "a2a", "dispatch", "combine")
        )
        parts["a2a" if a2a else "other_coll"] += c["time_s"]
    parts["fixed"] = overhead_s
    return parts


def priced(ids: set[str]) -> pd.DataFrame:
    """Each aiconfigurator point in ``ids`` priced on its own rack and on the other at its own modelled decode
    batch: one record per (id, on) with the TPOT of its own rack, the batch and the :data:`TERMS`, s."""
    from jalapeno.cost.step import step_overhead
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload, with_stack_mtp
    from jalapeno.serve.open_loop import decode_pool_step
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model

    out = []
    for p in load_aiconfigurator()[0]:
        if p.id not in ids or p.deployment is None:
            continue
        model = load_model(p.model)
        b = None
        for system in (p.system, SYSTEMS[1] if p.system == SYSTEMS[0] else SYSTEMS[0]):
            q = replace(p, system=system)
            st = point_stack(p)
            dep = with_stack_mtp(q.deployment, st, q.model)
            lay = dep.decode.layout
            pricer = load_any_pricer(system, "calibrated", pricer="roofline", stack=st)
            wl = point_workload(q)
            if b is None:
                run = serve_at_concurrency(model, pricer, dep, wl, [q.concurrency])
                b, tpot = float(run.decode_batch[0]), float(run.tpot_s[0])
            sc = decode_pool_step(model, pricer, dep, wl.decode_ctx, [b])
            out.append(
                {
                    "id": p.id,
                    "system": p.system,
                    "on": system,
                    "tpot": tpot,
                    "batch": b,
                    **term_split(sc, step_overhead(pricer.efficiency, lay)),
                }
            )
    return pd.DataFrame(out)


def ratio_table(s: pd.DataFrame) -> pd.DataFrame:
    """Per (own rack, decode EP): median of each term on GB300 / the same term on GB200 (same point, layout and
    batch), and each term's median share of the GB300-priced step."""
    a = s[s.on == SYSTEMS[0]].set_index("id")
    b = s[s.on == SYSTEMS[1]].set_index("id")
    cols = [*TERMS, "step"]
    a, b = a.assign(step=a[list(TERMS)].sum(axis=1)), b.assign(step=b[list(TERMS)].sum(axis=1))
    r = (a[cols] / b[cols].where(b[cols] > 0)).assign(system=a.system, ep=a.ep)
    share = (a[list(TERMS)].div(a.step, axis=0)).assign(system=a.system, ep=a.ep)
    g, h = r.groupby(["system", "ep"]), share.groupby(["system", "ep"])
    t = g[cols].median().round(3).add_prefix("x_")
    return pd.concat([g.size().rename("n"), t, (100 * h[list(TERMS)].median()).round(1).add_prefix("pct_")], axis=1)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        sys.exit(
            "usage: python scripts/gb_trt_dep_terms44.py VALIDATE_CSV [--steps] (a `jalapeno validate -o X.csv` file)"
        )
    csv = args[0]
    pd.set_option("display.width", 250)
    pd.set_option("display.max_rows", 400)
    pd.set_option("display.max_columns", 40)
    d = dep_rows(csv)
    print("== 1. TRT-LLM disaggregated decode pools EP >= 8: TPOT error by rack, precision and EP")
    print(bias_table(d).to_string())
    print()
    show = d.assign(
        meas_ms=(1e3 * d.measured).round(2), pred_ms=(1e3 * d.predicted).round(2), err_pct=(100 * d.error).round(1)
    )
    print(
        show.sort_values(["ep", "precision", "isl", "osl", "concurrency", "system"])[
            ["system", "precision", "isl", "osl", "concurrency", "pool", "split", "meas_ms", "pred_ms", "err_pct", "id"]
        ].to_string(index=False)
    )
    if "--steps" not in sys.argv:
        return
    s = priced(set(d.id))
    s = s.merge(d[["id", "ep", "precision", "measured", "error"]], on="id")
    print("\n== 2. Decode step terms at each row's own modelled batch, priced on GB300 and GB200, ms")
    w = s.assign(**{c: (1e3 * s[c]).round(3) for c in (*TERMS, "tpot", "measured")})
    print(
        w.sort_values(["ep", "id", "on"])[["id", "on", "ep", "batch", "measured", "tpot", *TERMS]].to_string(
            index=False
        )
    )
    print(
        "\n== 3. GB300 / GB200 per term at the same point and batch (x_), and the term's share of the GB300 step (pct_)"
    )
    print(ratio_table(s).to_string())


if __name__ == "__main__":
    main()
