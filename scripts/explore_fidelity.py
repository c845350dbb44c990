"""How well does ``explore``'s coarse ranking figure rank designs against ``compare``'s figure?

For a design space (default: both shipped examples), samples designs uniformly at random (seeded; ranges on their
step or log scale, choices uniformly), drops those a constraint prunes, and prices each feasible design three
times: the coarse sweep (analysis/explore.Evaluator.evaluate with ``serving = "agg"`` and ``precisions = "case"``,
the schema's defaults, whatever the file sets), the same coarse sweep with ``[sweep] serving = "both"`` and
``precisions = "native"`` (agg and disagg at every precision the chip computes natively: the shipped examples'
setting since ux46), and the full sweep ``compare`` reads its tiers from
(analysis/explore_full.full_case_metrics: every native precision, agg + disagg, the full batch grid, TBO, EPLB).
Prints per design the three scores (ratio to the base, each on its own sweep), the Spearman rank correlation of the
first two with the full one (overall and per case), how many of their top 5 are the full top 5, and the wall time
per trial of each.

The first section prints the chain from the coarse figure to compare's on the base system, one sweep setting
at a time (precision, batch grid, serving, TBO, EPLB, stage size), case by case.

Usage: python scripts/explore_fidelity.py [SPACE.toml ...] [--designs 20] [--seed 45]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SPACES = ("examples/explore_700w.toml", "examples/explore_700w_gpu_stack.toml")


def sample(space, rng: np.random.Generator) -> dict:
    """One design: each parameter drawn uniformly (on its step grid, its log scale, or its choices)."""
    out = {}
    for key, p in space.params.items():
        if p.choices is not None:
            out[key] = p.choices[int(rng.integers(len(p.choices)))]
        elif p.log:
            v = math.exp(rng.uniform(math.log(p.low), math.log(p.high)))
            out[key] = round(v) if p.integer else v
        elif p.step:
            n = int(math.floor((p.high - p.low) / p.step + 1e-9))
            v = p.low + p.step * int(rng.integers(n + 1))
            out[key] = int(v) if p.integer else v
        else:
            v = rng.uniform(p.low, p.high)
            out[key] = round(v) if p.integer else v
    return out


def ranks(a: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties given their mean rank."""
    order = np.argsort(a, kind="stable")
    r = np.empty(len(a))
    r[order] = np.arange(1, len(a) + 1)
    for v in np.unique(a):
        m = a == v
        r[m] = r[m].mean()
    return r


def spearman(a, b) -> float:
    """Spearman's rank correlation of two equal-length sequences (Pearson's of their ranks)."""
    ra, rb = ranks(np.asarray(a, float)), ranks(np.asarray(b, float))
    return float(np.corrcoef(ra, rb)[0, 1])


def chain(ev) -> None:
    """The base system's figure from the coarse sweep to compare's, one setting at a time, per case."""
    from jalapeno.analysis.explore import sweep_options, throughput_at_floor
    from jalapeno.analysis.explore_full import compare_precisions
    from jalapeno.analysis.power_cost import power_w_per_chip
    from jalapeno.analysis.sweep import SweepOptions, concat_points, sweep
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.formats import get_precision

    sp = ev.space
    p = load_pricer(sp.base)
    pr = ev.pricer(p.system, p.efficiency)
    kw = power_w_per_chip(p.system, sp.objective.power)[0] / 1e3
    full = SweepOptions()
    for case, m, wl, prec in ev.cases():
        precs = compare_precisions(m, p.system, case.precision)
        o = sweep_options(sp)
        steps = [(f"coarse ({prec.name})", o, (prec.name,)), (f"+ precisions {','.join(precs)}", o, precs)]
        for name, field in (
            ("+ full batch grid", "batches"),
            ("+ stages to 4 domains", "max_stage_factor"),
            ("+ TBO auto", "overlap"),
            ("+ EPLB", "eplb"),
            ("+ agg and disagg", "serving"),
        ):
            o = dataclasses.replace(o, **{field: getattr(full, field)})
            steps.append((name, o, precs))
        print(
            f"\n{sp.base} on {m.name} {wl.name} at {sp.objective.min_interactivity:g} tok/s/user "
            f"(power {sp.objective.power}, {kw:.3f} kW):"
        )
        prev = None
        for name, opts, names in steps:
            pts = concat_points([sweep(m, pr, wl, get_precision(n), opts).points for n in names])
            ok = pts.feasible & (pts.throughput_per_chip > 0) & np.isfinite(pts.interactivity)
            v = throughput_at_floor(pts.interactivity[ok], pts.throughput_per_chip[ok], sp.objective.min_interactivity)
            step = f"  {v / prev - 1:+6.1%}" if prev else ""
            print(f"  {name:34s} {v:9,.1f} tok/s/chip {v / kw:9,.1f} tok/s/kW{step}")
            prev = v


def _score(vals: list[float], base: list[float], w: np.ndarray) -> float:
    """Weighted geometric mean of value / base over cases (analysis/explore.Evaluator.scores' rule)."""
    return float(np.exp(np.sum(w * np.log(np.array(vals) / np.array(base))) / w.sum()))


def _agreement(label: str, a: list[float], full: list[float]) -> str:
    """Spearman rho, top-5 overlap and the full rank of ``a``'s best, as one line."""
    k = min(5, len(a))
    top_a, top_f = set(np.argsort(a)[::-1][:k]), set(np.argsort(full)[::-1][:k])
    best = int(np.argmax(a))
    return (
        f"  {label:28s} Spearman rho {spearman(a, full):6.3f}; top-{k} overlap {len(top_a & top_f)}/{k}; "
        f"its best is the full's #{int(ranks(-np.array(full))[best])}"
    )


def study(path: str, designs: int, seed: int) -> None:
    """Sample designs; price each on the space's coarse sweep, on it with ``serving = "both"`` and ``precisions =
    "native"`` (the opt-in setting, analysis/explore.Evaluator), and full (compare's); print the rank agreement of
    the first two with the third, overall and per case, and the time per trial of each."""
    from jalapeno.analysis.explore import make_evaluator
    from jalapeno.analysis.explore_full import full_case_metrics
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.design_space import load_design_space

    sp = load_design_space(ROOT / path if not Path(path).is_absolute() else path)
    # the coarse sweep whatever the file sets (the shipped examples sweep native precisions, agg and disagg, since
    # ux46): agg at each case's own or the model's default precision, the rest of the file's [sweep] kept
    sp = sp.model_copy(update={"sweep": sp.sweep.model_copy(update={"serving": "agg", "precisions": "case"})})
    ev = make_evaluator(sp)
    chain(ev)
    metric = sp.objective.metrics[0]
    cases = list(ev.cases())
    w = np.array([c.weight for c in sp.cases], float)
    kinds = ("coarse", "serving both, native precisions", "full (compare)")
    opt_in = make_evaluator(
        sp.model_copy(update={"sweep": sp.sweep.model_copy(update={"serving": "both", "precisions": "native"})})
    )

    def price(params, pr, kind: str) -> list:
        if kind == kinds[1]:
            return list(opt_in.evaluate(params).cases)
        return [full_case_metrics(sp, pr, m, wl, c.precision) for c, m, wl, _ in cases]

    b = load_pricer(sp.base)  # the base itself, as make_evaluator prices it: each figure's reference
    bp = ev.pricer(b.system, b.efficiency)
    base = {kinds[0]: [x[metric] for x in ev.base_metrics], kinds[1]: [x[metric] for x in opt_in.base_metrics]}
    base[kinds[2]] = [r.metrics[metric] for r in price(None, bp, kinds[2])]
    rng = np.random.default_rng(seed)
    rows, secs, tries = [], {k: [] for k in kinds}, 0
    while len(rows) < designs and tries < designs * 20:
        tries += 1
        params = sample(sp, rng)
        t0 = time.perf_counter()
        r = ev.evaluate(params)
        dt = time.perf_counter() - t0
        if not r.feasible:
            continue
        got = {kinds[0]: [c.metrics[metric] for c in r.cases]}
        pr = ev.pricer(*ev.design(params))
        secs[kinds[0]].append(dt)
        for k in kinds[1:]:
            t0 = time.perf_counter()
            res = price(params, pr, k)
            secs[k].append(time.perf_counter() - t0)
            got[k] = [x.metrics.get(metric, float("nan")) for x in res]
        if not all(np.isfinite(v).all() for v in got.values()):
            continue
        rows.append((params, got))
    print(
        f"\n{path}: {len(rows)} feasible designs of {tries} sampled (seed {seed}); {metric} per case: "
        f"{' / '.join(kinds)}; score x base on each one's own sweep"
    )
    keys = list(sp.params)
    sc = {k: [_score(g[k], base[k], w) for _, g in rows] for k in kinds}
    for i in np.argsort(sc[kinds[2]])[::-1]:
        params, got = rows[i]
        vals = " ".join(f"{params[k]:.4g}" if isinstance(params[k], float) else str(params[k]) for k in keys)
        per = "  ".join("/".join(f"{got[k][j]:,.0f}" for k in kinds) for j in range(len(cases)))
        print(f"  [{vals}]  " + " ".join(f"{sc[k][i]:6.3f}" for k in kinds) + f"   {per}")
    print("rank agreement with the full (compare) score:")
    for k in kinds[:2]:
        print(_agreement(k, sc[k], sc[kinds[2]]))
        for j, (_, m, wl, _) in enumerate(cases):
            print(
                _agreement(f"  {m.name} {wl.name} only", [g[k][j] for _, g in rows], [g[kinds[2]][j] for _, g in rows])
            )
    print(
        "per trial (s, mean / median, "
        + f"{len(cases)} cases): "
        + "; ".join(f"{k} {np.mean(secs[k]):.2f} / {np.median(secs[k]):.2f}" for k in kinds)
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spaces", nargs="*", default=list(SPACES))
    ap.add_argument("--designs", type=int, default=20, help="feasible designs to price (default 20)")
    ap.add_argument("--seed", type=int, default=45)
    a = ap.parse_args(argv)
    for s in a.spaces:
        study(s, a.designs, a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
