"""Rule E's floors (fit/aic_bounds.decode_floor): every aiconfigurator row's TPOT against the bytes its decode
step must read over its chips' datasheet HBM bandwidth, at its decoding requests per instance (Little's law).

Prints the rows of lowest TPOT / floor first (default: the 20 lowest; ``--all`` every row): batch, chips,
weight and KV bytes, floor, TPOT, ratio and whether rule E flags it (ratio below
:data:`jalapeno.fit.aic_bounds.FLOOR_FACTOR`). The cost model is never consulted.
Run: python scripts/aic_floor_check.py [--all]   (needs the aiconfigurator-core package: the calibrate extra)
"""

from __future__ import annotations

import argparse

from jalapeno.fit.aic_bounds import FLOOR_FACTOR, decode_floor


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--all", action="store_true", help="every bounded row (default: the 20 lowest ratios)")
    a = ap.parse_args()
    from jalapeno.fit.validate import load_aiconfigurator

    pts, _ = load_aiconfigurator()
    rows = sorted(((p, f) for p in pts if (f := decode_floor(p)) is not None), key=lambda pf: pf[1]["ratio"])
    print(
        f"{len(rows)} rows bounded; rule E factor {FLOOR_FACTOR:g}; "
        f"{sum(f['ratio'] < FLOOR_FACTOR for _, f in rows)} flagged"
    )
    print(
        "| row | model | release | ISL/OSL | C | batch / instance | chips | weights GB | KV GB | floor ms | "
        "TPOT ms | ratio | flag |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p, f in rows if a.all else rows[:20]:
        print(
            f"| {p.id} | {p.model} | {p.framework} | {p.isl}/{p.osl} | {p.concurrency:g} | {f['batch']:.1f} | "
            f"{f['chips']} | {f['weight_bytes'] / 1e9:.1f} | {f['kv_bytes'] / 1e9:.2f} | {f['floor_s'] * 1e3:.2f} | "
            f"{p.measured['tpot_s'] * 1e3:.2f} | {f['ratio']:.2f} | {'rule E' if f['ratio'] < FLOOR_FACTOR else ''} |"
        )


if __name__ == "__main__":
    main()
