"""Can SGLang-ROCm fit a front end of its own on gfx942 (issue 18, round 43, rocmfe43; diagnosis, nothing fitted).

``sglang-rocm`` borrows CUDA SGLang's front end (fit/stack_fit.SAME_SERVER). A front end of its own, per request +
per prompt token and per release, needs by fit/stack_fit's rules at least :data:`~jalapeno.fit.stack_fit.MIN_POINTS`
InferenceX TTFT fit points at C <= :data:`~jalapeno.fit.stack_fit.FRONTEND_MAX_CONCURRENCY` and, to separate the
per-token from the per-request term, at least two prompt lengths. This script reads a validate table and prints, per
(system, release): the TTFT rows, their concurrencies and ISLs, how many are low-load fit candidates, and whether the
rule allows a fit. Then per row the excess the model leaves (measured − model, s) and two readings of it, since rows
76-80 (v0.5.19) are run **means** over ``C × 10`` prompts (InferenceX ``dsr1_fp8_mi325x.sh``: ``--num-prompts
$(( CONC * 10 ))``, R = serve/queueing.REQUESTS_PER_USER):

- ``per_run_s`` = excess × C × R: the total a one-off cost on a single request (e.g. a first-call kernel build) would
  add to the run; a one-off cost reads as a constant here across C.
- ``stall_s`` = excess × R: the length of a server-wide stall that holds all C users once (every in-flight request
  waits it, C of the C × R requests): a one-off stall reads as a constant here.
- A per-request front end reads as a constant excess itself.

Usage: python scripts/rocm_front_end_fit43.py VALIDATE_ALL.csv
(VALIDATE_ALL.csv from ``jalapeno validate --json -o FILE`` without ``--held-out``; reads the table only, < 1 s)
"""

from __future__ import annotations

import argparse

import pandas as pd

from jalapeno.fit.stack_fit import FRONTEND_MAX_CONCURRENCY, MIN_POINTS
from jalapeno.serve.queueing import REQUESTS_PER_USER

#: the gfx942 systems (MI300X, MI325X) whose SGLang-ROCm rows share the profile's kernels (specs/systems)
GFX942 = ("mi300x", "mi325x")


def ttft_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The gfx942 ``sglang-rocm`` InferenceX TTFT rows of a validate table, with release, excess and its readings.

    ``table``: a validate CSV (columns source, id, system, stack, metric, isl, concurrency, measured, predicted,
    split). Returns one row per TTFT row (seconds); raises KeyError naming a missing column.
    """
    need = {"source", "id", "system", "stack", "metric", "isl", "concurrency", "measured", "predicted", "split"}
    missing = need - set(table.columns)
    if missing:
        raise KeyError(f"validate table lacks column(s) {sorted(missing)}: write it with jalapeno validate --json -o")
    keep = (
        (table.source == "inferencex")
        & table.system.isin(GFX942)
        & table["stack"].str.startswith("sglang-rocm@")
        & (table.metric == "ttft_s")
    )
    rows = table[keep].copy()
    rows["release"] = rows["stack"].str.split("@").str[1]
    rows["excess_s"] = rows.measured - rows.predicted
    rows["per_run_s"] = rows.excess_s * rows.concurrency * REQUESTS_PER_USER
    rows["stall_s"] = rows.excess_s * REQUESTS_PER_USER
    return rows.sort_values(["system", "release", "isl", "concurrency"])


def fit_verdict(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (system, release): rows, low-load fit candidates (C <= FRONTEND_MAX_CONCURRENCY, split ``fit``), ISLs, and
    whether fit/stack_fit's rule (>= MIN_POINTS candidates over >= 2 ISLs) allows a front end of that release's own."""
    out = []
    for (system, release), g in rows.groupby(["system", "release"]):
        low = g[(g.concurrency <= FRONTEND_MAX_CONCURRENCY) & (g.split == "fit")]
        isls = sorted(int(i) for i in low.isl.unique())
        ok = len(low) >= MIN_POINTS and len(isls) >= 2
        out.append(
            {
                "system": system,
                "release": release,
                "rows": len(g),
                "C": ",".join(str(int(c)) for c in sorted(g.concurrency.unique())),
                "low_fit": len(low),
                "low_isls": ",".join(map(str, isls)) or "-",
                "fit_allowed": ok,
            }
        )
    return pd.DataFrame(out)


def main() -> None:
    """Print the verdict table and the per-row excess readings."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", help="validate CSV (jalapeno validate --json -o FILE, every row)")
    rows = ttft_rows(pd.read_csv(ap.parse_args().table))
    pd.set_option("display.width", 160)
    print(fit_verdict(rows).to_string(index=False))
    print()
    cols = [
        "id",
        "system",
        "release",
        "isl",
        "concurrency",
        "split",
        "measured",
        "predicted",
        "excess_s",
        "per_run_s",
        "stall_s",
    ]
    print(rows[cols].round(3).to_string(index=False))


if __name__ == "__main__":
    main()
