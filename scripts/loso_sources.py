"""What each withheld source of a left-out system's own measurements moves in its leave-one-system-out error.

fit/loso.py withholds two kinds of a left-out system's measurements: its kernel tables (and its twin's) from the
donor's calibration (fit/calibrate.calibrate_system ``withheld``), and, under the borrowed set, the per-system
measurements the pricer reads by the system's name (cost/pricer.measured_here): the routed experts' width term
(data/moe_width.toml), the engines' measured all-reduce (data/collectives/engine_allreduce.toml, with the fused
all-reduce + RMSNorm priced from it), MoE backend kernels (data/moe_backends.toml, moe_backend_kernels.toml) and
attention backend speeds (data/attention_backends.toml); and the software stacks' fixed costs are refitted without
the system's end-to-end rows (fit/stack_fit.fit_all ``withheld_systems``). This prints each system's pooled LOSO error
(fit/loso.pooled_error: median / p90 absolute error and bias over TPOT and throughput per chip) with the donor
refit alone (every per-system measurement read, as before round 28), with that plus one source withheld, and
with every per-system measurement withheld, then with the stacks refitted too (the shipped rule).

Run: python scripts/loso_sources.py [--systems h100,b200]   (about 30 minutes; needs the [calibrate] extra)
"""

from __future__ import annotations

import argparse
import tempfile
from contextlib import ExitStack
from pathlib import Path
from unittest import mock

from jalapeno.fit.loso import LOSO_DONOR, run_loso


def _none(*_a, **_k):
    return None


def _same(base, *_a, **_k):
    return base


#: source -> the lookups that read it, each answered "not measured here" when withheld
SOURCES = {
    "moe_width": (("jalapeno.cost.moe_width.width_terms", lambda *_a: {}),),
    "engine_allreduce": (
        ("jalapeno.cost.pricer.measured_all_reduce", _same),
        ("jalapeno.cost.allreduce_rms.measured_all_reduce", _same),
    ),
    "moe_backends": (
        ("jalapeno.specs.moe_backends.moe_backend_curves", lambda *_a, **_k: []),
        ("jalapeno.specs.moe_backends.moe_backend_kernel", _none),
    ),
    "attention_backends": (("jalapeno.specs.attention_backends.attention_backend_entry", _none),),
}


def run(names: tuple[str, ...], withheld: tuple[str, ...] | None, refit_stacks: bool = False) -> dict[str, dict]:
    """Per system its pooled LOSO error, reading every per-system measurement but those of ``withheld``
    sources (None: all withheld), with the shipped stack fits or (``refit_stacks``) stacks refitted without
    the system's end-to-end rows (the shipped rule: None and True)."""
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="jalapeno-loso-") as d:
        if withheld is not None:
            for where in ("jalapeno.cost.pricer", "jalapeno.cost.pool_backends"):  # the pool wrappers import it
                stack.enter_context(mock.patch(f"{where}.measured_here", lambda _e: True))
            for src in withheld:
                for target, fn in SOURCES[src]:
                    stack.enter_context(mock.patch(target, fn))
        return {n: r["loso"] for n, r in run_loso(Path(d), names, refit_stacks=refit_stacks).items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", default=",".join(LOSO_DONOR))
    names = tuple(s for s in ap.parse_args().systems.split(",") if s)
    cases = {
        "donor refit only": ((), False),
        **{f"+ {s} withheld": ((s,), False) for s in SOURCES},
        "all withheld, shipped stack fits": (None, False),
        "+ stacks refitted (shipped rule)": (None, True),
    }
    print("| case | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for label, (withheld, refit) in cases.items():
        res = run(names, withheld, refit)
        cells = [f"{r['median_ape']:.1%} / {r['p90_ape']:.0%} / {r['bias']:+.1%}" for r in res.values()]
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
