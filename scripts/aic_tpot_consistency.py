"""aiconfigurator rules G and H (fit/aic_consistency.py): the repeat spread their tolerance comes from, and the rows
they flag.

Table 1: the TPOT repeats of aiconfigurator-core 0.12.0's mapped rows (one deployment key,
fit/aic_quality.deployment_key, at one concurrency; copies of one run already merged by fit/aic_duplicates.py):
the quartiles of |ln(TPOT_1 / TPOT_2)| over every pair and Tukey's fences exp(Q3 + 1.5·IQR) and exp(Q3 + 3·IQR)
(the far-out fence is REPEAT_TPOT_FACTOR, rounded up). Table 2: every conflict (rule, rows, TPOTs) and whether
each row is flagged. Table 3: flagged rows per system and rule. The model is never consulted.
Run: PYTHONPATH=src python scripts/aic_tpot_consistency.py   (seconds; needs aiconfigurator-core: the calibrate extra)
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

from jalapeno.fit.aic_consistency import REPEAT_TPOT_FACTOR, aic_consistency_flags, tpot_conflicts
from jalapeno.fit.aic_quality import deployment_key
from jalapeno.fit.aic_sweeps import release_stated


def repeat_spread(points) -> dict:
    """``pairs`` (|ln TPOT ratio| of every repeat pair), ``groups``, ``q1``, ``q2``, ``q3``, ``fence`` (Q3 + 1.5·IQR)
    and ``far_out`` (Q3 + 3·IQR), as factors (exp) for the fences."""
    groups: dict[tuple, list] = {}
    for p in points:
        if p.source == "aiconfigurator" and p.measured.get("tpot_s") and p.concurrency and release_stated(p.framework):
            groups.setdefault((deployment_key(p), p.concurrency), []).append(p.measured["tpot_s"])
    reps = [v for v in groups.values() if len(v) > 1]
    lr = sorted(abs(math.log(a / b)) for v in reps for a, b in itertools.combinations(v, 2))

    def q(f):  # linear interpolation between order statistics (numpy's default percentile)
        x = f * (len(lr) - 1)
        lo = int(x)
        return lr[lo] + (lr[min(lo + 1, len(lr) - 1)] - lr[lo]) * (x - lo)

    q1, q2, q3 = q(0.25), q(0.5), q(0.75)
    return {
        "pairs": lr,
        "groups": len(reps),
        "q1": q1,
        "q2": q2,
        "q3": q3,
        "fence": math.exp(q3 + 1.5 * (q3 - q1)),
        "far_out": math.exp(q3 + 3 * (q3 - q1)),
    }


def main() -> None:
    from jalapeno.fit.validate import load_aiconfigurator

    pts, _ = load_aiconfigurator()
    s = repeat_spread(pts)
    print("Table 1: TPOT repeat spread\n")
    print(
        f"{s['groups']} groups of repeats, {len(s['pairs'])} pairs; |ln ratio| quartiles {s['q1']:.2%}, {s['q2']:.2%}, "
        f"{s['q3']:.2%}; Tukey fence x{s['fence']:.3f}, far-out fence x{s['far_out']:.3f}; "
        f"REPEAT_TPOT_FACTOR {REPEAT_TPOT_FACTOR}; pairs above it: {sum(math.exp(x) > REPEAT_TPOT_FACTOR for x in s['pairs'])}"
    )
    flags = aic_consistency_flags(pts)
    print(
        "\nTable 2: conflicts (* flagged)\n\n| rule | system | model | framework | ISL/OSL | C (TPOT ms) | C (TPOT ms) |"
    )
    print("|---|---|---|---|---|---|---|")
    for a, b, rule in tpot_conflicts(pts):
        cell = lambda p: f"{'*' if p.id in flags else ''}{p.concurrency:g} ({p.measured['tpot_s'] * 1e3:.2f})"  # noqa: E731
        print(f"| {rule} | {a.system} | {a.model} | {a.framework} | {a.isl}/{a.osl} | {cell(a)} | {cell(b)} |")
    by = {p.id: p for p in pts}
    count = Counter((by[i].system, r) for i, w in flags.items() for r in ("G", "H") if f"rule {r}," in w)
    print(f"\nTable 3: flagged rows per system and rule ({len(flags)} rows)\n\n| system | rule | rows |\n|---|---|---|")
    for (system, rule), n in sorted(count.items()):
        print(f"| {system} | {rule} | {n} |")


if __name__ == "__main__":
    main()
