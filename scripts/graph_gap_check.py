"""Is vLLM's fitted per-kernel cost a CUDA-graph double count? A graph gap in its place, refitted, judged by group.

docs/gap_aic_itl.md (Kimi section, round 13) found the Kimi K2.5 NVFP4 vLLM 0.17 rows' measured TPOT equal to
the sum of vLLM's own measured kernels, leaving no room for the vLLM profile's per-kernel cost (3.4 µs, fitted:
data/stack_fits.toml) on top of the roofline times. vLLM replays every step it has captured as a CUDA graph
(``cudagraph_mode`` FULL_AND_PIECEWISE, vLLM's default since 0.11: full graphs for uniform decode batches,
piecewise graphs around the attention for mixed ones; docs.vllm.ai design/cuda_graphs, vllm/config/compilation.py
CUDAGraphMode), so inside a captured step the host launches once and the GPU runs the kernels back to back: the
per-kernel cost left is the GPU-side gap between them, not a launch. This script prices that reading and lets
the data judge it.

1. For each gap g in :data:`GAPS_S` the vLLM profile's per-kernel cost is set to g in every step (a decode step
   above the capture sizes keeps serve/limits.eager_step_s's host launches; a mixed step of more tokens than
   the largest captured size runs eagerly in vLLM too, where the GPU still sees g per kernel while the host
   keeps ahead of a prefill chunk's long kernels: assumption, its host launches not priced), and its per-step
   costs (``step_overhead_s``, ``tp_rank_step_s``) are refitted
   on the declared fit half of the vLLM points exactly as scripts/fit_stacks.py fits them
   (fit/stack_fit._linear_fit: same split, same loss, same flagged rows left out).
2. TPOT per (model, system, precision, mode) group, median |error| and median signed error, on every matched
   vLLM row: the fitted models' rows and the MiniMax-M2.5 rows (a model held out of every stack fit,
   fit/stack_fit.HELD_OUT_MODELS), for the shipped profile and each gap.
3. The shape of the Kimi K2.5 NVFP4 excess under the shipped profile: per (system, deployment, ISL) the line
   excess = a + b·B through (decode sequences per instance B, predicted − measured TPOT). A per-kernel or
   per-step cost counted twice is an intercept a with no slope; an excess that grows with B is not a fixed cost.

Nothing is written. Reads aiconfigurator-core's systems/silicon_sample.csv (pip install -e ".[calibrate]").
Run: python scripts/graph_gap_check.py (about two minutes)
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

#: GPU-side gaps between back-to-back kernels of a replayed CUDA graph tried, seconds: the 0.5-2 µs range
#: (NVIDIA developer blog, A. Gray, "Getting Started with CUDA Graphs", 2019: a graph of short kernels cuts the
#: per-kernel overhead to well under the ~2-4 µs of a stream launch; the brief's ~1-2 µs)
GAPS_S = (0.5e-6, 1.0e-6, 2.0e-6)
#: the per-step cost fields scripts/fit_stacks.py fits for the vLLM profile beside its per-kernel cost
STEP_FIELDS = ("step_overhead_s", "tp_rank_step_s")


def excess_line(batch, excess_s) -> tuple[float, float]:
    """Least-squares line excess = a + b·batch: (a in s, b in s per sequence).

    >>> a, b = excess_line([4, 8, 16], [1e-3, 1.4e-3, 2.2e-3])
    >>> round(a * 1e3, 6), round(b * 1e6, 6)
    (0.6, 100.0)

    Raises:
        ValueError: fewer than two distinct batch sizes (no line through one abscissa).
    """
    x = np.asarray(batch, dtype=float)
    y = np.asarray(excess_s, dtype=float)
    if len(np.unique(x)) < 2:
        raise ValueError("excess_line: batch needs at least two distinct values; give rows at two or more loads")
    b, a = np.polyfit(x, y, 1)
    return float(a), float(b)


def tpot_groups(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (model, system, precision, mode): n, median |error| and median signed error of the TPOT rows."""
    t = rows[rows.metric == "tpot_s"].dropna(subset=["error"])
    return t.groupby(["model", "system", "precision", "mode"]).error.agg(
        n="count", median_ape=lambda e: float(np.median(np.abs(e))), bias="median"
    )


def _points():
    from jalapeno.fit.aic_quality import aic_decode_flags, aic_source_flags
    from jalapeno.fit.stack_fit import load_points
    from jalapeno.fit.validate import load_aiconfigurator
    from jalapeno.specs.stacks import stack_for_framework

    fitted = load_points()
    every = load_aiconfigurator()[0]
    corrected = aic_source_flags(every)
    held = [
        p
        for p in every
        if p.model == "minimax-m2.5" and p.mapping == "matched" and p.deployment is not None and p.id not in corrected
    ]
    pts = [p for p in fitted + held if stack_for_framework(p.framework, p.system).name == "vllm"]
    return fitted, pts, frozenset(aic_decode_flags(pts))


def main() -> None:
    from jalapeno.fit import stack_fit as sf
    from jalapeno.fit.validate import predict_points
    from jalapeno.specs.stacks import load_stacks, stack_for_framework

    fitted, pts, flagged = _points()
    ids = {p.id for p in pts}
    sp = sf.split([p for p in fitted if p.id in ids])  # the declared split; MiniMax is in neither half
    fit_pts = [p for p in pts if sp.get(p.id) == "fit" and p.id not in flagged]
    shipped = stack_for_framework("vllm", "b200")
    stated = load_stacks(False)["vllm"]
    profiles = {"shipped": shipped}
    for g in GAPS_S:
        start = replace(stated, kernel_launch_s=g)
        got = sf._linear_fit(
            fit_pts, start, STEP_FIELDS, ("tpot_s", "throughput_per_chip"), lambda m: m == "throughput_per_chip"
        )
        if not isinstance(got, dict):
            print(f"gap {g * 1e6:.1f} us: per-step costs not fitted ({got})")
            continue
        profiles[f"gap {g * 1e6:.1f} us"] = replace(start, **got)
        print(f"gap {g * 1e6:.1f} us: refitted " + ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in got.items()))
    print(
        f"shipped: kernel_launch_s {shipped.kernel_launch_s * 1e6:.1f} us, "
        + ", ".join(f"{k} {getattr(shipped, k) * 1e3:.3f} ms" for k in STEP_FIELDS)
    )
    table = {}
    for name, st in profiles.items():
        rows = predict_points(pts, stack_of=lambda p, st=st: st.for_client(p.timed_by))
        rows = rows[~((rows.metric == "tpot_s") & rows.id.isin(flagged))]
        if name == "shipped":
            base = rows
        g = tpot_groups(rows)
        table[(name, "median")] = g.median_ape
        table[(name, "bias")] = g.bias
        table[("n", "")] = g.n
        t = rows[(rows.metric == "tpot_s")].dropna(subset=["error"])
        fit_models = t[t.model != "minimax-m2.5"]
        print(
            f"{name:12s} TPOT fitted models median {np.median(np.abs(fit_models.error)):.1%} "
            f"bias {np.median(fit_models.error):+.1%} (n {len(fit_models)}); MiniMax held out "
            f"{np.median(np.abs(t[t.model == 'minimax-m2.5'].error)):.1%} "
            f"bias {np.median(t[t.model == 'minimax-m2.5'].error):+.1%}"
        )
    out = pd.DataFrame(table)
    with pd.option_context("display.width", 250, "display.max_columns", 20, "display.float_format", "{:+.3f}".format):
        print("\nTPOT by group (fractions):")
        print(out.to_string())
    print("\nKimi K2.5 NVFP4 excess (shipped profile) against decode sequences per instance:")
    byid = {p.id: p for p in pts}
    k = base[(base.metric == "tpot_s") & (base.model == "kimi-k2.5") & (base.precision == "fp4")].dropna(
        subset=["error"]
    )
    k = k.assign(
        batch=[(byid[i].concurrency or 0.0) / byid[i].deployment.decode.workers for i in k.id],
        excess=k.predicted - k.measured,
    )
    for (system, dep, isl), g in k.groupby(["system", "deployment", "isl"]):
        if g.batch.nunique() < 3:
            continue
        a, b = excess_line(g.batch, g.excess)
        print(
            f"  {system:12s} ISL {isl:5d} {dep[:60]:60s} n {len(g):2d} B {g.batch.min():g}-{g.batch.max():g}: "
            f"a {a * 1e3:+.2f} ms, b {b * 1e6:+.1f} us per sequence"
        )


if __name__ == "__main__":
    main()
