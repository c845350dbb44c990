"""A per-prompt-step host floor on TensorRT-LLM's attention-DP disaggregated prefill workers, sized on the fit split
and judged on held-out rows (issue 18, round 37; diagnosis, nothing shipped).

Every TensorRT-LLM disaggregated prefill worker of the aiconfigurator rows runs its prompt steps eagerly (the recipes
set ``cuda_graph_config: null``; fit/trt_prompt_graphs.py), and the model prices such a step max(host, GPU) with host
= the step's host calls (cost/host_calls.step_host_calls: 3,609 for a context-only DeepSeek-R1 step) × 24 µs
(fit/trt_prompt_graphs.TRTLLM_EAGER_CALL_S, fitted on B200 aggregated rows, round 26). Rounds 30-36 found the
low-load 1k/1k rows of attention-DP prefill pools under-predicted by a flat amount (GB300 DEP2 +0.18-0.23 s, GB200
DEP4 +0.06-0.105 s, B200 DEP4 +0.05-0.07 s) while their 8k/1k rows are not: the shape of a larger floor that an 8k
step's GPU time hides. This script prices that lead on top of the shipped floor, each only on prefill pools with attention DP (the pool's
``layout.dp`` > 1) of an eager TensorRT-LLM deployment, by replacing serve/disagg.prompt_floor_s in the process
(nothing in the package changes):

1. ``tp count``: the floor as before round 37, the attention-DP MoE layer counted as the TP path's (the shipped
   count adds cost/host_calls.ADP_MOE_EXTRA = 22 calls a DeepSeek MoE layer on the TRTLLM path, read in the source,
   or ADP_MOE_A2A_EXTRA = 15 where the engine runs its NVLink all-to-all (every row here since the round 37 review):
   the change this round ships, so ``tp count`` → ``shipped`` is its effect on these rows);
2. ``rate``: the host time per call on those pools is c (the shipped 24 µs elsewhere): H = calls × c;
3. ``experts``: H = shipped + (MoE layers) × (routed experts per EP rank) × k, a cost per local expert and layer (no
   source names one: the test of whether the rows' dp dependence reads as experts per rank).

c and k are fitted (grid argmin of the mean |log(predicted / measured)|, as fit/stack_fit.py's loss) on the fit split's
warm TensorRT-LLM disaggregated rows only (fit/client_warmup.cold_client_ids out); every figure is then reported on
the held-out rows (not in the fit split, unflagged): the TensorRT-LLM disaggregated rows per system, and every
held-out aiconfigurator TTFT row per system with the moved rows replaced (the issue's judgement).

Run: python scripts/adp_prefill_floor37.py VALIDATE.csv [--quick]
(VALIDATE.csv from ``jalapeno validate --json -o FILE``, all rows; about 1 minute a prediction, 14 predictions;
``--quick``: one value of each grid, 4 predictions)
"""

from __future__ import annotations

import argparse

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dynamo_disagg_front_end36 import trt_disagg_points  # noqa: E402

#: the shipped host time per call of an eager TensorRT-LLM prompt step (fit/trt_prompt_graphs.TRTLLM_EAGER_CALL_S)
SHIPPED_CALL_S = 24e-6
#: grids of the two fitted what-ifs: the attention-DP pool's host time per call (s) and the cost per local expert and
#: MoE layer (s)
RATE_GRID_S = (24e-6, 30e-6, 36e-6, 42e-6, 48e-6, 60e-6)
EXPERT_GRID_S = (0.0, 4e-6, 8e-6, 12e-6, 16e-6, 24e-6)
SYSTEMS = ("b200", "gb200-nvl72", "gb300-nvl72", "h100", "h200")


def adp_floor(kind: str, value: float):
    """A replacement for serve/disagg.prompt_floor_s: the shipped floor, with the what-if ``kind`` (``rate``,
    ``experts``, ``tp count`` or ``shipped``) at ``value`` on a prefill pool with attention DP (dp > 1).

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.catalog import load_model
    >>> from jalapeno.specs.formats import get_precision
    >>> m = load_model("deepseek-r1")
    >>> pool = Pool(Layout(tp=1, dp=2, ep=2))
    >>> dep = Deployment(get_precision("fp4"), Pool(Layout(tp=8, ep=8)), prefill=pool, eager_prompt_call_s=24e-6)
    >>> round(adp_floor("shipped", 0.0)(m, dep, pool)[0], 4)  # (3,609 + 58 × 22) × 24 µs
    0.1172
    >>> round(adp_floor("tp count", 0.0)(m, dep, pool)[0], 4)  # 3,609 × 24 µs
    0.0866
    >>> round(adp_floor("rate", 48e-6)(m, dep, pool)[0], 4)  # 4,885 calls × 48 µs
    0.2345
    >>> round(adp_floor("experts", 10e-6)(m, dep, pool)[0], 4)  # 4,885 × 24 µs + 58 layers × 128 experts × 10 µs
    0.1915
    >>> round(adp_floor("rate", 48e-6)(m, dep, dep.decode)[0], 4)  # no attention DP: as shipped
    0.0866
    """
    from jalapeno.cost.host_calls import ADP_COUNTED_MOE_BACKENDS, ADP_MOE_A2A_EXTRA, ADP_MOE_EXTRA
    from jalapeno.cost.priced import moe_all_to_all
    from jalapeno.serve.limits import prompt_floor_s

    def floor(model, dep, pool=None, pricer=None):
        got = prompt_floor_s(model, dep, pool, pricer)
        p = pool or dep.decode
        lay = p.layout
        if got is None or kind == "shipped" or lay.dp <= 1 or model.moe is None:
            return got
        moe_layers = model.num_layers - len(model.dense_layers)
        if kind == "rate":
            return tuple(x * value / dep.eager_prompt_call_s for x in got)
        if kind == "experts":
            extra = moe_layers * model.moe.num_experts / lay.ep * value
        elif kind == "tp count":
            counted = model.attention.kind == "mla" and p.moe_backend in ADP_COUNTED_MOE_BACKENDS
            a2a = pricer is not None and moe_all_to_all(pricer, lay, model)  # the count the shipped floor took
            n = ADP_MOE_A2A_EXTRA if a2a else ADP_MOE_EXTRA
            extra = -moe_layers * n * dep.eager_prompt_call_s if counted else 0.0
        else:
            raise SystemExit(f"unknown what-if {kind!r} (fix: rate, experts, tp count or shipped)")
        return tuple(x + extra for x in got)

    return floor


def rows(validate_csv: str):
    """(points, table): the unflagged TensorRT-LLM disaggregated aiconfigurator points of ``validate_csv`` and one
    row each with the system, ISL, concurrency, prefill layout (dp, ep, experts per rank), split, whether its client
    ran cold, and the measured TTFT."""
    from jalapeno.fit.client_warmup import cold_client_ids

    pts, split = trt_disagg_points(validate_csv)  # scripts/dynamo_disagg_front_end36.py: the same rows, read checked
    cold = cold_client_ids(pts)
    tab = pd.DataFrame(
        [
            {
                "id": p.id,
                "system": p.system,
                "isl": p.isl,
                "osl": p.osl,
                "C": p.concurrency,
                "dp": p.deployment.prefill.layout.dp,
                "ep": p.deployment.prefill.layout.ep,
                "split": split[p.id],
                "cold": p.id in cold,
                "meas": p.measured["ttft_s"],
            }
            for p in pts
        ]
    )
    return pts, tab.set_index("id")


def predict(pts, kind: str, value: float) -> pd.Series:
    """The TTFT (s) of ``pts`` with serve/disagg.prompt_floor_s replaced by :func:`adp_floor` (kind, value)."""
    import jalapeno.serve.disagg as disagg
    from jalapeno.fit.validate import predict_points

    keep = disagg.prompt_floor_s
    disagg.prompt_floor_s = adp_floor(kind, value)
    try:
        got = predict_points(pts)
    finally:
        disagg.prompt_floor_s = keep
    return got[got.metric == "ttft_s"].set_index("id").predicted


def loss(pred: pd.Series, tab: pd.DataFrame) -> float:
    """Mean |log(predicted / measured)| over the fit split's warm rows of ``tab``."""
    f = tab[(tab.split == "fit") & ~tab.cold]
    return float(np.mean(np.abs(np.log(pred[f.index] / f.meas))))


def _med(pred, meas) -> str:
    e = np.asarray(pred, dtype=float) / np.asarray(meas, dtype=float) - 1
    return f"{np.median(np.abs(e)) * 100:5.1f} / {np.median(e) * 100:+6.1f}" if len(e) else "      -"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("validate_csv", help="`jalapeno validate --json -o FILE` (all rows)")
    ap.add_argument("--quick", action="store_true", help="skip the grids: rate 30 µs, experts 4 µs")
    args = ap.parse_args()
    pts, tab = rows(args.validate_csv)
    cases = {"tp count": predict(pts, "tp count", 0.0), "shipped": predict(pts, "shipped", 0.0)}
    print(f"fit-split loss: tp count {loss(cases['tp count'], tab):.4f}, shipped {loss(cases['shipped'], tab):.4f}")
    for kind, grid in (("rate", RATE_GRID_S), ("experts", EXPERT_GRID_S)):
        grid = (grid[1],) if args.quick else grid
        fits = {v: predict(pts, kind, v) for v in grid}
        best = min(fits, key=lambda v: loss(fits[v], tab))
        print(
            f"{kind}: fit-split loss by value (µs): "
            + ", ".join(f"{v * 1e6:g} {loss(s, tab):.4f}" for v, s in fits.items())
            + f"; argmin {best * 1e6:g} µs"
        )
        cases[f"{kind} {best * 1e6:g}µs"] = fits[best]

    adp = tab[(tab.dp > 1) & (tab.C <= 96) & (tab.osl == 1024)].sort_values(["system", "dp", "isl", "C"])
    with pd.option_context("display.width", 220, "display.max_rows", 200, "display.float_format", "{:.3f}".format):
        out = adp[["system", "isl", "C", "dp", "ep", "split", "meas"]].copy()
        for name, s in cases.items():
            out[name] = s[out.index]
        print("\nattention-DP prefill rows, x/1024 at C <= 96: measured and predicted TTFT (s)")
        print(out.to_string(index=False))

    names = list(cases)
    print("\nTensorRT-LLM disaggregated TTFT, median |error| / median error % (" + " | ".join(names) + ")")
    for sp in ("fit", "held_out"):
        for sysname in ("ALL", *SYSTEMS):
            g = tab[tab.split == sp] if sysname == "ALL" else tab[(tab.split == sp) & (tab.system == sysname)]
            if len(g):
                print(
                    f"  {sp:8} {sysname:12} n {len(g):3}  " + " | ".join(_med(cases[c][g.index], g.meas) for c in names)
                )
    csv = pd.read_csv(args.validate_csv)
    csv = csv[(csv.source == "aiconfigurator") & (csv.metric == "ttft_s") & csv.quality.isna() & csv.error.notna()]
    for label, sub in (("held-out", csv[csv.split != "fit"]), ("all", csv)):
        print(f"\nevery {label} aiconfigurator TTFT row, the moved rows replaced (" + " | ".join(names) + ")")
        for sysname in ("ALL", *SYSTEMS):
            g = sub if sysname == "ALL" else sub[sub.system == sysname]
            res = []
            for c in names:
                pred = g.set_index("id").predicted.copy()
                idx = pred.index.intersection(cases[c].index)
                pred.loc[idx] = cases[c][idx]
                res.append(_med(pred.to_numpy(), g.measured.to_numpy()))
            print(f"  {sysname:12} n {len(g):4}  " + " | ".join(res))


if __name__ == "__main__":
    main()
