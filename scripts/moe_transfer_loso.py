"""Which routed-expert HBM fraction a chip without MoE kernel tables should take: three rules, leave-one-system-out.

A left-out system (fit/loso.py) prices its routed experts by the roofline under a borrowed set. Its weight-streaming
term is ``moe[fmt].hbm_fraction`` (specs/efficiency.py). Three rules for it, each from the donor pool alone
(fit/moe_transfer.MOE_POOL less the left-out system and its same-silicon twin, each refitted with their tables
withheld, as fit/loso.loso_set does):

- ``borrowed``: the donor's own value per format (the rule before round 29);
- ``per format``: per format, the median over the pool of that format's value (a format the donor lacks stays
  the donor's, i.e. inherits BF16's);
- ``pooled``: one value, the median over the pool and every format each fits (fit/moe_transfer.py, the shipped
  rule).

Prints each system's pooled LOSO error (fit/loso.pooled_error: median / p90 absolute error and bias over TPOT
and throughput per chip) under each rule and the median over systems (the derived sets' band), with the shipped
stack fits (``--refit-stacks``: the stacks refitted without the system's end-to-end rows, the shipped rule;
minutes per pair instead of seconds).

Run: python scripts/moe_transfer_loso.py [--systems h100,b200] [--refit-stacks]   (about 2 min per rule; [calibrate] extra)
"""

from __future__ import annotations

import argparse
import copy
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np

import jalapeno.fit.moe_transfer as mt
from jalapeno.fit.loso import LOSO_DONOR, run_loso


def _borrowed(params: dict, _sets) -> dict:
    return copy.deepcopy(params)


def _per_format(params: dict, sets) -> dict:
    out = copy.deepcopy(params)
    for fmt, entry in out.get("moe", {}).items():
        vals = [p["moe"][fmt]["hbm_fraction"] for p in sets.values() if fmt in p.get("moe", {})]
        entry["hbm_fraction"] = float(np.median(vals))
    return out


RULES = {"borrowed": _borrowed, "per format": _per_format, "pooled": mt.with_pooled_moe}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", default=",".join(LOSO_DONOR))
    ap.add_argument("--refit-stacks", action="store_true")
    args = ap.parse_args()
    names = tuple(s for s in args.systems.split(",") if s)
    print("| rule | " + " | ".join(names) + " | median |")
    print("|---|" + "---|" * (len(names) + 1))
    for label, rule in RULES.items():
        with mock.patch.object(mt, "with_pooled_moe", rule), tempfile.TemporaryDirectory(prefix="jalapeno-loso-") as d:
            res = {n: r["loso"] for n, r in run_loso(Path(d), names, refit_stacks=args.refit_stacks).items()}
        cells = [f"{r['median_ape']:.1%} / {r['p90_ape']:.0%} / {r['bias']:+.1%}" for r in res.values()]
        band = float(np.median([r["median_ape"] for r in res.values()]))
        print(f"| {label} | " + " | ".join(cells) + f" | {band:.1%} |", flush=True)


if __name__ == "__main__":
    main()
