"""Blackwell disaggregated decode: why attention-TP pools are priced too slow, term by term (issue 18, round 32, gbtp32).

Question: aiconfigurator's disaggregated rows on B200, GB200 and GB300 are priced too slow (interactivity) where the
DECODE pool runs attention TP (TP > 1, DP 1) and too fast where it runs attention DP, in every engine (TensorRT-LLM,
SGLang, vLLM). The brief named the candidates: the per-layer all-reduce at decode message sizes (NVL72 MNNVL / NVLS /
one-shot), the MLA kernel at the per-rank head split, the per-TP-rank host cost, MTP. This script serves every such
row as validation serves it (serve/point.serve_at_concurrency: the decode batch B per decode instance is the model's
Little's-law batch), prices the decode-only step at B and at B = 1 with open_loop.decode_pool_step, and prints per row, in
ms per output token (decode-only rows without MTP: one step per token):

- ``gap``: measured TPOT - modelled TPOT (negative: the model too slow);
- ``ar``: every all-reduce of the step (the whole collective time: the most any all-reduce repricing can remove);
- ``host``: the per-TP-rank host cost, cost/step.step_overhead less its constant ``step_overhead_s`` (:func:`host_s`):
  (r - 1)·``tp_rank_step_s``, r the attention-TP ranks, or TP x DP where the profile pays it per attention-DP rank
  too (``tp_rank_step_dp``: TensorRT-LLM);
- ``attn``: every ``attn.*`` op (projections, MLA kernel at the rank's heads, norms);
- ``experts``: the routed experts (``moe.experts``);
- ``dstep``, ``dexp``, ``dattn``, ``dar``: the step's, the experts', the attention's and the all-reduce's growth from B = 1 to B (the per-sequence part of the step);
- ``err%``: interactivity error (measured TPOT / modelled - 1; positive: the model too fast), and the same with the
  all-reduce removed (``err_noar%``) and the host cost removed (``err_nohost%``): upper bounds of those two terms;
  ``err_sigma%``: the row re-served with generated tokens routed at the measured expert popularity
  (specs/routing.MEASURED_ROUTING_SIGMA, TensorRT-LLM tech blog 4) — a what-if, not shipped.

Then per (system, engine, decode layout): medians, and the least-squares TPOT-against-B line of the measured rows and
of the model (intercept ms, slope ms per sequence), for the fit and held-out rows alike (the split and quality flags
come from a validate CSV). Nothing is fitted or written.

Usage: jalapeno validate --json -o base_all.csv; python scripts/bw_atp_decode_terms.py base_all.csv   (about 1 min)
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pandas as pd

from jalapeno.cost.step import step_overhead
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload, with_stack_mtp
from jalapeno.serve.limits import decode_step_s
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.routing import MEASURED_ROUTING_SIGMA

SYSTEMS = ("b200", "b300", "gb200-nvl72", "gb300-nvl72")


def decode_step(model, pricer, dep, b: float, ctx: float):
    """Decode-only step (s, StepCost) at ``b`` sequences of one decode instance and mean context ``ctx`` (tokens),
    as served (serve/open_loop.decode_pool_step: the pool's backends, graph-padded; the CUDA-graph ceiling applied)."""
    sc = decode_pool_step(model, pricer, dep, ctx, [b])
    return float(decode_step_s(sc, pricer.efficiency, dep, np.array([b]), dep.decode.layout)[0]), sc


def host_s(eff, lay) -> float:
    """The per-TP-rank host cost of a step, s: the model's own step_overhead less its constant part (a copy of its
    (tp - 1)·tp_rank_step_s read 0 on TensorRT-LLM attention-DP pools, which the model charges per DP rank)."""
    return step_overhead(eff, lay) - eff.step_overhead_s


def terms(sc) -> dict:
    """Seconds per step of the candidate terms in one priced step."""
    ops = {o["op"]: o["time_s"] for o in sc.op_rows(0)}
    ar = sum(c["time_s"] for c in sc.collective_rows(0) if "all_reduce" in c["collective"])
    return {
        "ar": ar,
        "attn": sum(v for k, v in ops.items() if k.startswith("attn.")),
        "experts": ops.get("moe.experts", 0.0),
    }


def rows(csv: str, pricer_name: str = "roofline") -> pd.DataFrame:
    """One record per disaggregated aiconfigurator row of a Blackwell system without MTP (both decode layouts),
    priced by ``pricer_name`` (fit/table_lookup.PRICERS: ``roofline``, as validate does by default, or ``table``)."""
    flags = pd.read_csv(csv)
    flags = flags[(flags.source == "aiconfigurator") & (flags.metric == "interactivity")]
    meta = {i: (s, q) for i, s, q in zip(flags.id, flags.split, flags.quality.fillna(""))}
    models: dict = {}
    out = []
    for p in load_aiconfigurator()[0]:
        if p.system not in SYSTEMS or p.mode != "disagg" or not p.measured.get("tpot_s"):
            continue
        st = point_stack(p)
        wl, dep = point_workload(p), with_stack_mtp(p.deployment, st, p.model)
        if dep is None or dep.mtp is not None or dep.decode is None:
            continue
        lay = dep.decode.layout
        key = p.id if p.id in meta else p.id.removeprefix("aic:")
        split, quality = meta.get(key, meta.get("aic:" + key, ("?", "")))
        model = models.setdefault(p.model, load_model(p.model))
        skew = dataclasses.replace(
            model, moe=dataclasses.replace(model.moe, decode_routing_sigma=MEASURED_ROUTING_SIGMA)
        )
        pricer = load_any_pricer(p.system, "calibrated", pricer=pricer_name, stack=st)
        run = serve_at_concurrency(model, pricer, dep, wl, [p.concurrency])
        b, ctx, tpot = float(run.decode_batch[0]), float(wl.decode_ctx), float(run.tpot_s[0])
        tpot_s = float(serve_at_concurrency(skew, pricer, dep, wl, [p.concurrency]).tpot_s[0])
        step, sc = decode_step(model, pricer, dep, b, ctx)
        step1, sc1 = decode_step(model, pricer, dep, 1.0 * lay.dp, ctx)
        share = min(1.0, tpot / step)
        t, t1 = terms(sc), terms(sc1)
        host = host_s(pricer.efficiency, lay)
        meas = p.measured["tpot_s"]
        rec = {
            "row": p.id,
            "split": split,
            "q": quality,
            "system": p.system.removesuffix("-nvl72"),
            "engine": p.framework,
            "ckpt": p.model[:8],
            "fmt": dep.precision.modules["routed_experts"].compute,
            "pool": (f"TP{lay.tp}" if lay.dp == 1 else f"DP{lay.dp}") + f"·EP{lay.ep}",
            "lay": "ATP" if lay.dp == 1 else "ADP",
            "isl": int(wl.mean_isl),
            "C": p.concurrency,
            "B": b,
            "b_rank": b / lay.dp,
            "measured": meas * 1e3,
            "model": tpot * 1e3,
            "gap": (meas - tpot) * 1e3,
            "ar": t["ar"] * share * 1e3,
            "host": host * share * 1e3,
            "attn": t["attn"] * share * 1e3,
            "experts": t["experts"] * share * 1e3,
            "dstep": (step - step1) * 1e3,
            "dexp": (t["experts"] - t1["experts"]) * 1e3,
            "dattn": (t["attn"] - t1["attn"]) * 1e3,
            "dar": (t["ar"] - t1["ar"]) * 1e3,
            "err%": (meas / tpot - 1) * 100,
            "err_noar%": (meas / (tpot - t["ar"] * share) - 1) * 100,
            "err_nohost%": (meas / (tpot - host * share) - 1) * 100,
            "err_sigma%": (meas / tpot_s - 1) * 100,
        }
        out.append(rec)
    return pd.DataFrame(out)


def line(x: pd.Series, y: pd.Series) -> tuple[float, float]:
    """Least-squares intercept and slope of y against x (nan where x has one value)."""
    if x.nunique() < 2:
        return float("nan"), float("nan")
    s, a = np.polyfit(x.to_numpy(float), y.to_numpy(float), 1)
    return float(a), float(s)


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit(
            "usage: python scripts/bw_atp_decode_terms.py VALIDATE_CSV "
            "(write one with: jalapeno validate --json -o base_all.csv)"
        )
    csv = sys.argv[1]
    pd.set_option("display.width", 250)
    pd.set_option("display.max_rows", 500)
    s = rows(csv)
    if s.empty:
        raise SystemExit("no disaggregated Blackwell aiconfigurator rows found")
    s = s[s.q == ""]
    keys = ["system", "engine", "lay"]
    print("== per row (ms per output token; err% = measured TPOT / modelled - 1, positive: the model too fast)")
    print(s.sort_values(keys + ["pool", "isl", "C"]).round(2).drop(columns=["q"]).to_string(index=False))
    out = []
    for k, g in s.groupby(keys):
        am, sm = line(g.B, g.measured)
        ap, sp = line(g.B, g.model)
        med = g[
            ["b_rank", "gap", "ar", "host", "attn", "experts", "err%", "err_noar%", "err_nohost%", "err_sigma%"]
        ].median()
        ho = g[g.split != "fit"]["err%"]
        out.append(
            {
                **dict(zip(keys, k)),
                "n": len(g),
                "n_ho": len(ho),
                **med.round(2).to_dict(),
                "err_ho%": round(float(ho.median()), 1) if len(ho) else np.nan,
                "dexp/dstep": round(float(g.dexp.sum() / g.dstep.sum()), 2) if g.dstep.sum() > 0 else np.nan,
                "dattn/dstep": round(float(g.dattn.sum() / g.dstep.sum()), 2) if g.dstep.sum() > 0 else np.nan,
                "dar/dstep": round(float(g.dar.sum() / g.dstep.sum()), 2) if g.dstep.sum() > 0 else np.nan,
                "a_meas": round(am, 2),
                "a_model": round(ap, 2),
                "s_meas": round(sm, 3),
                "s_model": round(sp, 3),
                "s_ratio": round(sm / sp, 2) if sp else np.nan,
            }
        )
    print(
        "\n== medians per (system, engine, decode layout); a = intercept ms, s = slope ms per sequence of B, "
        "s_ratio = s_meas / s_model"
    )
    print(pd.DataFrame(out).to_string(index=False))
    atp = s[s.lay == "ATP"]
    print(
        f"\n== all attention-TP rows: n {len(atp)}, err% median {atp['err%'].median():.1f}, "
        f"without any all-reduce {atp['err_noar%'].median():.1f}, without the host cost "
        f"{atp['err_nohost%'].median():.1f}; share of the model's B=1 -> B step growth in the experts "
        f"{atp.dexp.sum() / atp.dstep.sum():.2f}, attention {atp.dattn.sum() / atp.dstep.sum():.2f}, all-reduce "
        f"{atp.dar.sum() / atp.dstep.sum():.2f}; at routing sigma {MEASURED_ROUTING_SIGMA} {atp['err_sigma%'].median():.1f}"
    )
    print("\n== attention-TP rows by sequences per decode instance B (interactivity error medians, %)")
    band = pd.cut(atp.B, [0, 2, 8, 1e9], labels=["B <= 2", "2 < B <= 8", "B > 8"])
    for split, part in (("all", atp), ("held-out", atp[atp.split != "fit"]), ("fit", atp[atp.split == "fit"])):
        g = part.groupby(band.loc[part.index], observed=True)
        t = g[["err%", "err_noar%", "err_nohost%", "err_sigma%"]].median().round(1)
        t.insert(0, "n", g.size())
        print(f"-- {split}\n{t.to_string()}")
    adp = s[s.lay == "ADP"]
    print(
        f"\n== attention-DP rows: n {len(adp)}, err% median {adp['err%'].median():.1f}, "
        f"at routing sigma {MEASURED_ROUTING_SIGMA} {adp['err_sigma%'].median():.1f}"
    )


if __name__ == "__main__":
    main()
