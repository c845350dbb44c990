"""GB200/GB300 disaggregated DeepSeek-R1 aiconfigurator rows by decode layout: TPOT error as shipped and under
three what-ifs (docs/gap_aic_itl.md, "GB200/GB300 DEP32 decode"). Nothing here is shipped.

- ``balanced``: every decode pool's attention-DP dispatch round robin (undoes the random dispatch the SGLang
  0.5.5.post2 sweeps state, fit/aic_sweep_layouts.with_sweep_dp_dispatch);
- ``generated``: generated tokens routed with DeepSeek's measured popularity σ (specs/routing.with_routing
  "generated": fewer distinct experts touched and a heavier busiest EP rank), no refit;
- ``eplb32``: the DEP32 SGLang decode pools with the 32 redundant expert slots their scripts pass
  (``--ep-num-redundant-experts 32``: one more expert's weights per rank under uniform routing).

Also the measured per-rank decode slope of each DEP32 configuration (Little's law on the measured TTFT and
TPOT, fit/aic_bounds._decoding_batch) beside the model's.

Usage: python scripts/dep32_decode_whatif.py   (about 10 s)
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import numpy as np


def slope_ms_per_seq(batches, tpots_s) -> float:
    """Least-squares slope of TPOT (ms) against decoding sequences per rank, ms per sequence; NaN below two
    distinct batches.

    >>> round(slope_ms_per_seq([30.0, 60.0, 120.0], [0.018, 0.021, 0.027]), 4)
    0.1
    """
    b = np.asarray(batches, dtype=float)
    t = np.asarray(tpots_s, dtype=float) * 1e3
    if np.unique(b).size < 2:
        return float("nan")
    return float(np.polyfit(b, t, 1)[0])


def layout_key(layout) -> str:
    """``D tp/dp/ep`` of a decode layout.

    >>> from types import SimpleNamespace as N
    >>> layout_key(N(tp=1, dp=32, ep=32))
    'D 1/32/32'
    """
    return f"D {layout.tp}/{layout.dp}/{layout.ep}"


def main() -> None:
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload, with_stack_mtp
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.routing import with_routing

    pts, _ = load_aiconfigurator()
    base, gen = load_model("deepseek-r1"), with_routing(load_model("deepseek-r1"), "generated")
    errs = defaultdict(lambda: defaultdict(list))
    slopes = defaultdict(lambda: defaultdict(list))
    for p in pts:
        if p.system not in ("gb200-nvl72", "gb300-nvl72") or p.mode != "disagg" or p.model != "deepseek-r1":
            continue
        st = point_stack(p)
        pr = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
        dep, wl = with_stack_mtp(p.deployment, st, p.model), point_workload(p)
        lay = dep.decode.layout
        even = replace(dep, decode=replace(dep.decode, layout=replace(lay, dp_dispatch="balanced")))
        eplb = (
            replace(dep, decode=replace(dep.decode, layout=replace(lay, eplb=32)))
            if lay.dp == 32 and st.name.startswith("sglang")
            else dep
        )
        key = (p.system, st.name.split("@")[0], layout_key(lay))
        tpot = p.measured["tpot_s"]
        for name, model, d in (
            ("shipped", base, dep),
            ("balanced", base, even),
            ("generated", gen, dep),
            ("eplb32", base, eplb),
        ):
            r = serve_at_concurrency(model, pr, d, wl, [p.concurrency])
            errs[key][name].append(r.tpot_s[0] / tpot - 1 if r.feasible[0] else np.nan)
            if name == "shipped" and lay.dp == 32 and p.measured.get("ttft_s"):
                steps = (wl.mean_osl - 1) * tpot
                meas_b = p.concurrency * steps / (p.measured["ttft_s"] + steps) / lay.dp
                cfg = (p.system, p.framework, p.precision, p.isl, p.id.rsplit("_", 1)[-1])
                slopes[cfg]["meas"].append((meas_b, tpot))
                slopes[cfg]["model"].append((r.decode_batch[0] / lay.dp, r.tpot_s[0]))
    print("TPOT median error (predicted / measured - 1) by decode layout; NaN: rows not predicted")
    for k in sorted(errs):
        e = {n: np.nanmedian(v) if np.isfinite(v).any() else np.nan for n, v in errs[k].items()}
        print(
            f"{k[0]:12s} {k[1]:7s} {k[2]:10s} n {len(errs[k]['shipped']):3d}  shipped {e['shipped']:+.3f}  "
            f"balanced {e['balanced']:+.3f}  generated {e['generated']:+.3f}  eplb32 {e['eplb32']:+.3f}"
        )
    print("\nDEP32 decode slope, ms per sequence per rank (measured by Little's law / model)")
    for cfg in sorted(slopes):
        m = slopes[cfg]["meas"]
        if len(m) < 2:
            continue
        sm = slope_ms_per_seq(*zip(*m))
        sp = slope_ms_per_seq(*zip(*slopes[cfg]["model"]))
        print(
            f"{' '.join(map(str, cfg)):52s} per rank {min(b for b, _ in m):5.1f}-{max(b for b, _ in m):5.1f}  "
            f"measured {sm:.3f}  model {sp:.3f}"
        )


if __name__ == "__main__":
    main()
