"""Refit every shipped fitted file in dependency order, or check that each is what its fit gives today.

The order (fit/fitted_files.CHAIN, each step after the files it reads): the table-only fits (engine_allreduce,
moe_kernels, moe_floors) -> calibrate -> moe_width -> stacks -> loso ->
derived (calibrate again: the derived sets' bands read LOSO's band_error) -> sglang_rocm -> bands -> golden ->
chip_doc -> validation_doc -> ratchet. README's trust figures are then copied by hand from docs/validation.md.
Run: python scripts/recalibrate.py [--list] [--from STEP] [--to STEP]   (about 25-40 minutes in all: LOSO is most)
     python scripts/recalibrate.py --check [--quick]   (every step's check; ~5 minutes, --quick ~1 minute without
                                                        the calibration and stack fits; exit 1 when one is stale)
     python scripts/recalibrate.py --check-calibration (the shipped calibration sets against a fresh fit, ~1 minute)
Needs the [calibrate] extra. LOSO has no check (a full stack refit per system): rerun it after any step before it moved.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from jalapeno.fit.fitted_files import CHAIN, calibration_diffs

ROOT = Path(__file__).resolve().parent.parent
#: checks left out by --quick (minutes each)
SLOW_CHECKS = ("calibrate", "derived", "stacks")


def _argv(cmd: tuple[str, ...]) -> list[str]:
    head = {"python": [sys.executable], "jalapeno": [sys.executable, "-m", "jalapeno"]}.get(cmd[0], [cmd[0]])
    return head + list(cmd[1:])


def _span(a: str | None, b: str | None) -> list:
    names = [s.name for s in CHAIN]
    for flag, v in (("--from", a), ("--to", b)):
        if v is not None and v not in names:
            raise SystemExit(f"{flag}: unknown step {v!r}; use one of {', '.join(names)}")
    i = names.index(a) if a else 0
    j = names.index(b) + 1 if b else len(names)
    if i >= j:
        raise SystemExit(f"--from {a} comes after --to {b} in the chain ({' -> '.join(names)}); swap them")
    return list(CHAIN[i:j])


def run(steps) -> int:
    """Run each step's command in order; stop at the first that fails, saying how to resume."""
    for s in steps:
        t0 = time.perf_counter()
        print(f"== {s.name}: {' '.join(s.argv)}  (writes {s.writes})", flush=True)
        rc = subprocess.run(_argv(s.argv), cwd=ROOT).returncode
        print(f"== {s.name}: rc {rc} in {time.perf_counter() - t0:.0f} s", flush=True)
        if rc:
            print(f"step {s.name} failed; fix it and resume: python scripts/recalibrate.py --from {s.name}")
            return rc
    return 0


def check(steps, quick: bool) -> int:
    """Run each step's check; print current / stale / not checked per step; 1 when any is stale."""
    stale, seen = [], set()
    for s in steps:
        if not s.check:
            print(f"-- {s.name}: no check (rerun it when a step before it moved)")
            continue
        if quick and s.name in SLOW_CHECKS:
            print(f"-- {s.name}: skipped (--quick)")
            continue
        if s.check in seen:  # calibrate and derived share the calibration check
            print(f"-- {s.name}: checked with the same command above")
            continue
        seen.add(s.check)
        t0 = time.perf_counter()
        r = subprocess.run(_argv(s.check), cwd=ROOT, capture_output=True, text=True)
        state = "current" if r.returncode == 0 else "STALE"
        print(f"-- {s.name}: {state} ({time.perf_counter() - t0:.0f} s; {' '.join(s.check)})", flush=True)
        if r.returncode:
            stale.append(s.name)
            print("   " + "\n   ".join((r.stdout + r.stderr).strip().splitlines()[-12:]))
    if stale:
        print(f"stale: {', '.join(stale)}; refit from the first: python scripts/recalibrate.py --from {stale[0]}")
        return 1
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="print the chain (step, command, what it writes and reads)")
    ap.add_argument("--check", action="store_true", help="run each step's check instead of the step; write nothing")
    ap.add_argument("--quick", action="store_true", help="with --check: leave out the calibration and stack fits")
    ap.add_argument("--check-calibration", action="store_true",
                    help="only: the shipped calibration sets against a fresh jalapeno calibrate")
    ap.add_argument("--from", dest="start", default=None, help="first step (default: the first)")
    ap.add_argument("--to", dest="stop", default=None, help="last step (default: the last)")
    a = ap.parse_args(argv)
    if a.quick and not a.check:
        ap.error("--quick goes with --check")
    if a.check_calibration:
        diffs = calibration_diffs()
        print("\n".join(diffs) if diffs else "calibration sets: current")
        return 1 if diffs else 0
    steps = _span(a.start, a.stop)
    if a.list:
        for i, s in enumerate(steps, 1):
            print(f"{i:2d}. {s.name:15s} {' '.join(s.argv)}\n      writes {s.writes}\n      after  {s.reads}\n"
                  f"      check  {' '.join(s.check) or '(none)'}")
        return 0
    return check(steps, a.quick) if a.check else run(steps)


if __name__ == "__main__":
    sys.exit(main())
