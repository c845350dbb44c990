"""Bootstrap the stack fits' client front ends and burst shares: each fitted constant's spread and the held-out TTFT's.

fit/stack_stability.py prices every client row of a profile once per burst share at three front ends, then refits
the client entry (fit/stack_fit.py steps 2 and 4, step costs held) on N resamples of the fit rows: by row, and by
(system, model, ISL, OSL, mode) family (a sweep's rows are not independent). Prints, per client: the refit on the
unweighted fit half (it must reproduce data/stack_fits.toml), the surface's linearity in the front end (priced
against the surface at the shipped values), and per constant the median, 5-95% range and the share of replicates
on the modal value; with the held-out TTFT median |error| the same way.
Run: python scripts/stack_fit_bootstrap.py [--stacks trtllm vllm sglang] [-n 50] [--json OUT]   (~3 min a profile)
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

import numpy as np

from jalapeno.fit import stack_fit as sf
from jalapeno.fit import stack_stability as ss
from jalapeno.fit.aic_quality import aic_ttft_flags
from jalapeno.specs.stacks import load_stacks

FIELDS = ("a", "b", "prefill_burst_fraction", "agg_burst_fraction", "held_out_ttft")


def summary(reps: list[dict]) -> dict:
    """Per field: median, p5, p95 and the modal value's share (None: not fitted)."""
    out = {}
    for f in FIELDS:
        v = [r[f] for r in reps]
        x = np.array([np.nan if e is None else e for e in v], float)
        mode, count = Counter(v).most_common(1)[0]
        out[f] = {
            "median": float(np.nanmedian(x)) if np.isfinite(x).any() else None,
            "p5": float(np.nanpercentile(x, 5)) if np.isfinite(x).any() else None,
            "p95": float(np.nanpercentile(x, 95)) if np.isfinite(x).any() else None,
            "mode": mode,
            "mode_share": count / len(v),
        }
    return out


def linearity(s: ss.Surface, pts, fitted, shipped: dict) -> float:
    """Largest |surface / priced - 1| of the client's TTFT at its shipped entry (one pricing)."""
    from dataclasses import replace
    from types import MappingProxyType

    rows = [p for p in pts if p.id in set(s.ids)]
    t = sf._predict(rows, replace(fitted, clients=MappingProxyType({s.src: MappingProxyType(shipped)})))
    priced = t[t.metric == "ttft_s"].set_index("id").predicted.reindex(list(s.ids)).to_numpy(float)
    a, b = shipped.get(ss.A, s.profile_front[0]), shipped.get(ss.B, s.profile_front[1])
    k = {f: (ss.SHARES.index(shipped[f]) if f in shipped else 0) for f in sf.BURST_MODES}
    row = np.where(s.mode == "agg", k["agg_burst_fraction"], k["prefill_burst_fraction"])
    i = np.arange(len(s.ids))
    surf = s.t0[row, i] + a * s.sa[row, i] + b * s.sb[row, i]
    ok = np.isfinite(priced) & np.isfinite(surf)
    return float(np.max(np.abs(surf[ok] / priced[ok] - 1))) if ok.any() else float("nan")


def main(stacks, n: int, out: str | None) -> None:
    pts = sf.load_points()
    sp = sf.split(pts)
    flagged = frozenset(aic_ttft_flags(pts))
    fitted = load_stacks(True)
    res = {}
    for name in stacks:
        for s in ss.surfaces(name, pts, sp, fitted[name], flagged):
            shipped = dict(fitted[name].clients.get(s.src, {}))
            base = ss.refit(s)
            lin = linearity(s, pts, fitted[name], shipped)
            print(f"{name} {s.src}: {len(s.ids)} rows ({int(s.fit.sum())} fit, {int(s.front.sum())} front-end)")
            print(f"  shipped {shipped}\n  refit   {base}\n  linearity: max |surface/priced - 1| {lin:.2%}")
            res[f"{name}/{s.src}"] = {"shipped": shipped, "refit": base, "linearity": lin}
            for unit in ("row", "family"):
                summ = summary(ss.bootstrap(s, n, seed=0, unit=unit))
                res[f"{name}/{s.src}"][unit] = summ
                print(f"  bootstrap by {unit} (n {n}):")
                for f, d in summ.items():
                    if d["median"] is None:
                        print(f"    {f}: not fitted in {d['mode_share']:.0%}")
                        continue
                    print(
                        f"    {f}: median {d['median']:.4g}, 5-95% [{d['p5']:.4g}, {d['p95']:.4g}], "
                        f"modal {d['mode']} in {d['mode_share']:.0%}"
                    )
    if out:
        with open(out, "w") as fh:
            json.dump(res, fh, indent=1, default=str)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stacks", nargs="+", default=["trtllm", "vllm", "sglang"])
    ap.add_argument("-n", type=int, default=50, help="replicates per resampling unit")
    ap.add_argument("--json", help="write the summaries here")
    args = ap.parse_args()
    main(args.stacks, args.n, args.json)
