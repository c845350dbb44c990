"""SGLang's prebuilt iterations on attention-DP decode ranks, priced on and off (issue 18, round 47, mori47).

Question: the MI355X MoRI-SGLang disaggregated DeepSeek-R1 rows (InferenceX 31 / 24, decode 1x DEP8 at 160 a
rank) miss ~16 ms of context-independent decode step time (round 45). SGLang's disaggregated decode loop before
PR #19568 returns a prebuilt batch *instead of* the running batch in an iteration that admits transferred
requests, and under attention DP that rank runs an idle forward while the others decode (serve/prebuilt_skip.py
has the sources): the rank's sequences lose that step. This script prices that engine property
(``serve/prebuilt_skip.PREBUILT_SKIP_ON``, shipped off) on every stack whose ``disagg_prebuilt`` rule says
``skip`` (``sglang`` and ``sglang-rocm`` before 0.5.10rc0) and prints:

1. the factor 1 / (1 − P) at the MoRI rows' 160 sequences a rank over 1,023 decode steps;
2. ``jalapeno validate --held-out`` off and on: the (id, metric) rows that move, with measured / off / on;
3. every source x system x metric group that moves (n, median, p90, bias of the absolute percentage error),
   held out, and the same for all rows (``validate`` without ``--held-out``).

Nothing is fitted or written (``python scripts/prebuilt_skip47.py DIR`` leaves the four validate CSVs in DIR, for
the lead's goals script). Run: python scripts/prebuilt_skip47.py   (about 2.5 minutes: four validate runs)
"""

from __future__ import annotations

import csv
import io
import statistics
import sys
import tempfile
from contextlib import redirect_stdout
from pathlib import Path

from jalapeno.serve import prebuilt_skip

#: the MoRI DEP8 decode instance of rows 31 / 24: its running cap a rank (recipe sglang-mori-mi355x-dsr1-fp4-dep,
#: InferenceX server.sh: DECODE_CUDA_GRAPH_BS_DP_END 160) and decode steps a request at OSL 1,024
MORI_SEQS_PER_RANK = 160
MORI_DECODE_STEPS = 1023


def validate_rows(on: bool, held_out: bool, keep: str = "") -> dict[tuple[str, str], dict]:
    """``jalapeno validate [--held-out] -o`` in this process with the switch ``on``: (id, metric) -> row.
    ``keep``: a folder to leave the CSV in (``{held_out|all}_{on|off}.csv``; "" = none)."""
    from jalapeno.cli.app import main

    prebuilt_skip.PREBUILT_SKIP_ON = on
    with tempfile.TemporaryDirectory() as tmp:
        name = f"{'held_out' if held_out else 'all'}_{'on' if on else 'off'}.csv"
        out = Path(keep or tmp) / name
        argv = ["jalapeno", "validate", "-o", str(out), *(["--held-out"] if held_out else [])]
        old, sys.argv = sys.argv, argv
        try:
            with redirect_stdout(io.StringIO()):
                try:
                    main()
                except SystemExit as e:  # the CLI exits 0 after writing
                    if e.code not in (0, None):
                        raise
        finally:
            sys.argv = old
            prebuilt_skip.PREBUILT_SKIP_ON = False
        with out.open() as f:
            return {(r["id"], r["metric"]): r for r in csv.DictReader(f)}


def group_stats(rows: dict) -> dict[tuple[str, str, str], tuple[int, float, float, float]]:
    """(source, system, metric) -> (n, median, p90, bias) of the percentage errors, and (source, ALL, metric)."""
    groups: dict[tuple[str, str, str], list[float]] = {}
    for r in rows.values():
        if not r["error"]:
            continue
        e = 100 * float(r["error"])
        for key in ((r["source"], r["system"], r["metric"]), (r["source"], "ALL", r["metric"])):
            groups.setdefault(key, []).append(e)
    out = {}
    for key, errs in groups.items():
        a = sorted(abs(x) for x in errs)
        p90 = a[min(len(a) - 1, int(round(0.9 * (len(a) - 1))))]
        out[key] = (len(a), statistics.median(a), p90, statistics.fmean(errs))
    return out


def report(label: str, off: dict, on: dict) -> None:
    """Print the moved rows and the groups whose figures change."""
    moved = sorted(k for k in off if k in on and off[k]["predicted"] != on[k]["predicted"])
    print(f"\n== {label}: {len(moved)} (id, metric) rows move")
    for k in moved[:60]:
        a, b = off[k], on[k]
        ea = 100 * float(a["error"]) if a["error"] else float("nan")
        eb = 100 * float(b["error"]) if b["error"] else float("nan")
        print(
            f"  {a['source']:14s} {a['system']:12s} {k[0]:28s} {k[1]:20s} meas {float(a['measured']):10.4g} "
            f"off {ea:+6.1f}%  on {eb:+6.1f}%"
        )
    if len(moved) > 60:
        print(f"  ... {len(moved) - 60} more")
    ga, gb = group_stats(off), group_stats(on)
    print(f"-- {label}: groups that change (n, median / p90 / bias %, off -> on)")
    for key in sorted(ga):
        if key in gb and ga[key] != gb[key]:
            n, m0, p0, b0 = ga[key]
            _, m1, p1, b1 = gb[key]
            print(
                f"  {key[0]:14s} {key[1]:12s} {key[2]:20s} n {n:4d}  {m0:5.1f} / {p0:5.1f} / {b0:+5.1f}  ->  "
                f"{m1:5.1f} / {p1:5.1f} / {b1:+5.1f}"
            )


def main(keep: str = "") -> None:
    """Print the factor, then the held-out and all-rows comparisons (``keep``: a folder for the four CSVs)."""
    p = float(prebuilt_skip.skip_fraction(MORI_SEQS_PER_RANK, MORI_DECODE_STEPS))
    print(
        f"MoRI DEP8 decode, {MORI_SEQS_PER_RANK} a rank over {MORI_DECODE_STEPS} decode steps: "
        f"P = {p:.4f}, TPOT factor 1/(1-P) = {1 / (1 - p):.4f}"
    )
    for label, held in (("held out", True), ("all rows", False)):
        report(label, validate_rows(False, held, keep), validate_rows(True, held, keep))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
