"""Does a held-out row of the stack fits' declared split reach the fit half? Through the data-quality flags.

fit/stack_fit.fit_all draws its split (alternate points of a group fit / held out) and then leaves out of the
fits the TTFT of the aiconfigurator rows that break rule A or B and the TPOT of those that break rule D, E, G or H
(fit/aic_quality.py, fit/aic_consistency.py). Those rules compare a row with other rows (A: the same deployment at
a higher load; B: a repeat; D: a sibling chip's row; G, H: the deployment's sweep), and are applied to every point,
so a held-out row's measured TTFT or TPOT can decide whether a fit row is fitted on. This prints, per profile,
the fit-half rows whose flag differs when the rules see the fit half alone (the held-out rows' reach), out of the
fit rows and the flagged ones.

Run: python scripts/stack_split_flags.py   (about a minute; needs the [calibrate] extra)
"""

from __future__ import annotations

from collections import Counter

from jalapeno.fit.aic_quality import aic_decode_flags, aic_ttft_flags
from jalapeno.fit.stack_fit import load_points, split
from jalapeno.specs.stacks import stack_for_framework


def main() -> None:
    pts = load_points()
    sp = split(pts)
    fit = [p for p in pts if sp[p.id] == "fit"]
    profile = {p.id: stack_for_framework(p.framework, p.system).name for p in pts}
    print("| flag (metric) | fit rows | flagged (all rows seen) | flagged (fit half seen) | differ: held-out reach |")
    print("|---|---|---|---|---|")
    for label, rule in (("A, B (TTFT)", aic_ttft_flags), ("D, E, G, H (TPOT)", aic_decode_flags)):
        every, alone = set(rule(pts)), set(rule(fit))
        ids = {p.id for p in fit}
        differ = (every ^ alone) & ids
        by = Counter(profile[i] for i in differ)
        print(
            f"| {label} | {len(ids)} | {len(every & ids)} | {len(alone & ids)} | {len(differ)}"
            + (f" ({', '.join(f'{k} {v}' for k, v in sorted(by.items()))})" if by else "")
            + " |"
        )


if __name__ == "__main__":
    main()
