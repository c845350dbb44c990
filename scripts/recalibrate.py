"""Refit every shipped fitted file in dependency order, or check that each is what its fit gives today.

The order (fit/fitted_files.CHAIN, each step after the files it reads): the table-only fits (engine_allreduce,
moe_kernels, moe_floors, w4a16_forms) -> calibrate -> moe_width -> stacks -> loso ->
derived (calibrate again: the derived sets' bands read LOSO's band_error) -> sglang_rocm -> first_wave_stall ->
bands -> golden -> chip_doc -> collectives_doc -> validation_doc -> ratchet. README's trust figures are then copied by hand from docs/validation.md.
Run: python scripts/recalibrate.py [--list] [--from STEP] [--to STEP]   (about 25-40 minutes in all: LOSO is most)
     python scripts/recalibrate.py --check [--quick]   (every step's check; ~5 minutes, --quick ~1 minute without
                                                        the calibration and stack fits and docs/validation.md;
                                                        exit 1 when one is stale)
     python scripts/recalibrate.py --check-calibration (the shipped calibration sets against a fresh fit, ~1 minute)
Needs the [calibrate] extra. LOSO has no check (a full stack refit per system): rerun it after any step before it moved.
The imported jalapeno must be this checkout's src/jalapeno (pip install -e . or PYTHONPATH=src): `jalapeno calibrate`
writes the imported package's data, the scripts this checkout's. sglang_rocm and first_wave_stall print a value copied
into data/stacks.toml by hand: a run stops after each until its check passes.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import jalapeno
from jalapeno.fit.fitted_files import CHAIN, calibration_diffs

ROOT = Path(__file__).resolve().parent.parent
#: checks left out by --quick (minutes each; validation_doc runs validate twice)
SLOW_CHECKS = ("calibrate", "derived", "stacks", "validation_doc")
#: steps that print a value to copy into a file by hand: a run stops after one until its check passes
BY_HAND = ("sglang_rocm", "first_wave_stall")


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


def check_package_root(package_dir: Path | None = None) -> None:
    """Refuse to run or check the chain when the imported ``jalapeno`` is not this checkout's ``src/jalapeno``:
    ``jalapeno calibrate`` writes (and the fits read) the imported package's data folder while the scripts write
    this checkout's, so the chain would read one tree and write two."""
    here = (ROOT / "src" / "jalapeno").resolve()
    got = (package_dir or Path(jalapeno.__file__).parent).resolve()
    if got != here:
        raise SystemExit(
            f"the jalapeno package imported is {got}, not this checkout's {here}: `jalapeno calibrate` "
            f"would write the other tree's data; run with PYTHONPATH={ROOT / 'src'} (or pip install -e "
            f"{ROOT})"
        )


def run(steps) -> int:
    """Run each step's command in order; stop at the first that fails, or after a step copied by hand
    (:data:`BY_HAND`) whose value is not yet in its file, saying how to resume."""
    names = [s.name for s in CHAIN]
    for s in steps:
        t0 = time.perf_counter()
        print(f"== {s.name}: {' '.join(s.argv)}  (writes {s.writes})", flush=True)
        rc = subprocess.run(_argv(s.argv), cwd=ROOT).returncode
        print(f"== {s.name}: rc {rc} in {time.perf_counter() - t0:.0f} s", flush=True)
        if rc:
            print(f"step {s.name} failed; fix it and resume: python scripts/recalibrate.py --from {s.name}")
            return rc
        if s.name in BY_HAND and subprocess.run(_argv(s.check), cwd=ROOT).returncode:
            i = names.index(s.name) + 1
            then = f"resume: python scripts/recalibrate.py --from {names[i]}" if i < len(names) else "the chain is done"
            print(f"step {s.name} gives a value to copy by hand ({s.writes}): copy it, then {then}")
            return 1
    return 0


def check(steps, quick: bool) -> int:
    """Run each step's check; print current / stale / not checked per step; 1 when any is stale or could not run."""
    stale, failed, seen = [], [], set()
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
        # the checks exit 1 when stale; 2 is a check that could not run (a JalapenoError: a package missing; a
        # usage error), which says nothing about the file
        state = {0: "current", 1: "STALE"}.get(r.returncode, f"NOT CHECKED (rc {r.returncode})")
        print(f"-- {s.name}: {state} ({time.perf_counter() - t0:.0f} s; {' '.join(s.check)})", flush=True)
        if r.returncode:
            (stale if r.returncode == 1 else failed).append(s.name)
            print("   " + "\n   ".join((r.stdout + r.stderr).strip().splitlines()[-12:]))
    if failed:
        print(f"could not check: {', '.join(failed)} (the output above says why); fix it and rerun --check")
    if stale:
        print(f"stale: {', '.join(stale)}; refit from the first: python scripts/recalibrate.py --from {stale[0]}")
    return 1 if stale or failed else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="print the chain (step, command, what it writes and reads)")
    ap.add_argument("--check", action="store_true", help="run each step's check instead of the step; write nothing")
    ap.add_argument("--quick", action="store_true", help="with --check: leave out the calibration and stack fits")
    ap.add_argument(
        "--check-calibration",
        action="store_true",
        help="only: the shipped calibration sets against a fresh jalapeno calibrate",
    )
    ap.add_argument("--from", dest="start", default=None, help="first step (default: the first)")
    ap.add_argument("--to", dest="stop", default=None, help="last step (default: the last)")
    a = ap.parse_args(argv)
    if a.quick and not a.check:
        ap.error("--quick goes with --check")
    if a.list and a.check:
        ap.error("--list prints the chain and runs nothing; give --list or --check")
    if a.check_calibration and (a.list or a.check or a.start or a.stop):
        ap.error(
            "--check-calibration runs alone (the calibration sets only); leave out --list, --check, --from "
            "and --to, or use --check [--from calibrate --to calibrate]"
        )
    if not a.list:
        check_package_root()
    if a.check_calibration:
        diffs = calibration_diffs()
        print("\n".join(diffs) if diffs else "calibration sets: current")
        return 1 if diffs else 0
    steps = _span(a.start, a.stop)
    if a.list:
        for i, s in enumerate(steps, 1):
            print(
                f"{i:2d}. {s.name:16s} {' '.join(s.argv)}\n      writes {s.writes}\n      after  {s.reads}\n"
                f"      check  {' '.join(s.check) or '(none)'}"
            )
        return 0
    return check(steps, a.quick) if a.check else run(steps)


if __name__ == "__main__":
    sys.exit(main())
