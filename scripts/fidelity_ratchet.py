"""Print the fidelity guard's figures beside its thresholds; with --write, ratchet them down.

Run: python scripts/fidelity_ratchet.py [--write | --check]   (about 2 s; exit 1 on a breach; ``--check`` also exits 1
when --write would lower a threshold: a step of scripts/recalibrate.py)

The thresholds file (src/jalapeno/data/validation/fidelity_thresholds.toml) states the rule:
a threshold is min(old, figure + margin), rounded up to 0.5 percentage points, so --write only
ever lowers one (and adds a threshold for a new group of at least MIN_GROUP points); a figure that
meets issue 18's goal (fit/fidelity.GOALS) caps its threshold at that goal.

The figures ratcheted are all-rows figures of the guarded InferenceX points: the fit half of the
stack fits' declared split and the front-end calibration points count (fit/fidelity.py's docstring);
the held-out figures are `jalapeno validate --held-out`'s (docs/validation.md 'Results against the goals').
"""

from __future__ import annotations

import argparse
import sys

from jalapeno.fit.fidelity import MIN_GROUP, THRESHOLDS, check, guard_figures, guard_rows, load_thresholds, ratchet


def render(header: str, th: dict) -> str:
    lines = [header.rstrip("\n"), "", "[rule]"]
    lines += [f"{k} = {v}" for k, v in th["rule"].items()]
    for m, t in th["overall"].items():
        lines += ["", f"[overall.{m}]", f"median_ape = {t['median_ape']:.3f}", f"min_n = {t['min_n']}"]
    for s in sorted(th["system"]):
        lines += ["", f"[system.{s}]"]
        lines += [f"{m} = {{ median_ape = {t['median_ape']:.3f} }}" for m, t in th["system"][s].items()]
    return "\n".join(lines) + "\n"


def main(write: bool, check_only: bool = False) -> int:
    old = load_thresholds()
    fig = guard_figures(guard_rows())
    print(f"{'group':<34} {'n':>4} {'median':>8} {'threshold':>10}")
    for m, f in fig["overall"].items():
        t = old["overall"].get(m, {}).get("median_ape", float("nan"))
        print(f"{'overall ' + m:<34} {f['n']:>4} {f['median_ape']:>8.1%} {t:>10.1%}")
    for s, mets in sorted(fig["system"].items()):
        for m, f in mets.items():
            t = old.get("system", {}).get(s, {}).get(m, {}).get("median_ape", float("nan"))
            print(f"{s + ' ' + m:<34} {f['n']:>4} {f['median_ape']:>8.1%} {t:>10.1%}")
    bad = check(fig, old)
    for b in bad:
        print("BREACH:", b)
    text = THRESHOLDS.read_text()
    header = "".join(ln for ln in text.splitlines(keepends=True) if ln.startswith("#"))
    new = render(header, ratchet(fig, old))
    if check_only and new != text:
        print(f"{THRESHOLDS.name}: a threshold can be lowered; run python scripts/fidelity_ratchet.py --write")
        return 1
    if write:
        THRESHOLDS.write_text(new)
        print(f"wrote {THRESHOLDS} (groups need >= {MIN_GROUP} points)")
    return 1 if bad else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="ratchet the thresholds file down to the figures + margin")
    ap.add_argument("--check", action="store_true", help="exit 1 also when --write would lower a threshold")
    a = ap.parse_args()
    if a.write and a.check:
        ap.error("--check writes nothing; give --write or --check")
    sys.exit(main(a.write, a.check))
