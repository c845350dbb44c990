"""Rule D's pairs (fit/aic_quality.sibling_pairs): every aiconfigurator row held against a same-release row
of the same decode layout on a chip of the same compute and no more HBM bandwidth, with its figures.

Prints one line per compared row (its worst pair): the decode time the row allows (TPOT less its most
prefill stall), the sibling's bound (its TPOT scaled by the batch ratio when the row decodes more), the
ratio and whether rule D or its campaign flags the row; then the ratios per campaign. A ratio above 1 is
a faster chip decoding slower than physics allows; :data:`jalapeno.fit.aic_quality.SIBLING_TPOT_FACTOR`
flags it. The model is never consulted (issue 18: the H200 Qwen3-235B vLLM 0.12.0 rows).
Run: python scripts/aic_sibling_check.py [--all]   (needs the aiconfigurator-core package: the calibrate extra)
"""

from __future__ import annotations

import argparse

from jalapeno.fit.aic_quality import SIBLING_TPOT_FACTOR, aic_sibling_flags, sibling_pairs


def worst_pairs(points) -> list[dict]:
    """The pair of highest ratio per compared row, highest first (fit/aic_quality.sibling_pairs' dicts)."""
    worst: dict[str, dict] = {}
    for q in sibling_pairs(points):
        i = q["x"].id
        if i not in worst or q["ratio"] > worst[i]["ratio"]:
            worst[i] = q
    return sorted(worst.values(), key=lambda q: -q["ratio"])


def pair_line(q: dict, flag: str = "") -> str:
    """One row's worst pair as a table line (ms, per-instance batches, ratio, flag)."""
    x, y = q["x"], q["y"]
    return (
        f"| {x.system} vs {y.system} | {x.model} | {x.framework} | {x.isl}/{x.osl} | {x.mode}/{y.mode} | "
        f"{q['batch_x']:.1f} / {q['batch_y']:.1f} | {x.measured['tpot_s'] * 1e3:.1f} - {q['stall_x_s'] * 1e3:.1f} "
        f"| {q['bound_y_s'] * 1e3:.1f} | {q['ratio']:.2f} | {flag} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--all", action="store_true", help="every compared row (default: ratio above 0.9)")
    a = ap.parse_args()
    from jalapeno.fit.validate import load_aiconfigurator

    pts, _ = load_aiconfigurator()
    flags = aic_sibling_flags(pts)
    pairs = worst_pairs(pts)
    print(
        f"{len(sibling_pairs(pts))} pairs, {len(pairs)} rows compared, rule D factor {SIBLING_TPOT_FACTOR:g}; "
        f"{len(flags)} rows flagged"
    )
    print(
        "| rows | model | release | ISL/OSL | modes | batch X / Y | TPOT X - stall (ms) | sibling bound (ms) | "
        "ratio | flag |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for q in pairs:
        if a.all or q["ratio"] > 0.9:
            f = flags.get(q["x"].id, "")
            print(pair_line(q, "campaign" if f.startswith("campaign") else "rule D" if f else ""))
    camps: dict[tuple, list[float]] = {}
    for q in pairs:
        x = q["x"]
        camps.setdefault((x.system, x.model, x.framework, x.precision, x.mode), []).append(q["ratio"])
    print("\n| campaign | rows compared | ratio min / max |\n|---|---|---|")
    for c, r in sorted(camps.items(), key=lambda kv: -max(kv[1])):
        print(f"| {' '.join(map(str, c))} | {len(r)} | {min(r):.2f} / {max(r):.2f} |")


if __name__ == "__main__":
    main()
