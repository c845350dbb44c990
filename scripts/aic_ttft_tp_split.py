"""Which part of aiconfigurator's low-load TTFT error scales with the chips and which does not (issue 18).

At low load (C ≤ 4, aggregated, attention TP without DP) a row's TTFT is the front end, one prompt's prefill and
half a decode step, and little queueing. The prefill's compute and weight traffic are split over the TP ranks,
so its error falls as 1/TP; what the engine or the client adds per request (tokenization, scheduling, the first
token's return; the fitted front end a + b·ISL, data/stack_fits.toml ``clients``) and what every rank repeats
(the norms on the unsplit residual stream) does not. Per (model, engine, system, precision, ISL) with three or
more TP sizes the script fits the residual predicted − measured (ms) by least squares as

    residual(TP) = const + per_tp / TP

and prints both terms: ``const`` is the TP-independent error (front end, host time), ``per_tp`` the error of a
TP1 prefill step's compute (its share at TP t is per_tp / t). Read from a ``jalapeno validate --json -o X.csv``
output; flagged rows (its ``quality`` column) are left out; nothing is priced, fitted into the model or
shipped. Run: python scripts/aic_ttft_tp_split.py X.csv [--max-concurrency 4] (seconds)
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

#: concurrency up to which a row counts as low load (the front end and one prompt's prefill dominate)
LOW_LOAD = 4
#: fewest distinct TP sizes a group needs for the two terms to be told apart
MIN_TP_SIZES = 3
KEYS = ["model", "engine", "system", "precision", "isl"]


def tp_split(tp, residual_ms) -> tuple[float, float]:
    """(const, per_tp) of residual = const + per_tp / TP, least squares (ms).

    >>> tp_split([1, 2, 4, 8], [50 + 160 / t for t in (1, 2, 4, 8)])  # exact: 50 ms + 160 ms at TP1
    (50.0, 160.0)

    Raises:
        ValueError: fewer than :data:`MIN_TP_SIZES` TP sizes (names the field).
    """
    t = np.asarray(tp, dtype=float)
    r = np.asarray(residual_ms, dtype=float)
    if len(np.unique(t)) < MIN_TP_SIZES:
        raise ValueError(
            f"tp: the split needs {MIN_TP_SIZES} or more TP sizes, got {sorted(set(t.tolist()))}; "
            "give a group measured at more TP sizes"
        )
    (const, per_tp), *_ = np.linalg.lstsq(np.c_[np.ones_like(t), 1.0 / t], r, rcond=None)
    return round(float(const), 6), round(float(per_tp), 6)


def low_load_rows(df: pd.DataFrame, max_concurrency: float = LOW_LOAD) -> pd.DataFrame:
    """The unflagged aggregated aiconfigurator TTFT rows of a validate CSV at concurrency ≤ ``max_concurrency``
    with attention TP and no attention DP, with ``tp``, ``engine`` and ``residual_ms`` (predicted − measured)."""
    a = df[
        (df.source == "aiconfigurator")
        & (df.metric == "ttft_s")
        & df.quality.isna()
        & (df["mode"] == "agg")
        & (df.concurrency <= max_concurrency)
    ].copy()
    a["tp"] = a.deployment.str.extract(r"attn TP(\d+) DP1 ", expand=False).astype(float)
    a = a[a.tp.notna()]
    return a.assign(engine=a.framework.str.split().str[0], residual_ms=(a.predicted - a.measured) * 1e3)


def split_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per group of :data:`KEYS` with :data:`MIN_TP_SIZES` or more TP sizes: n, TP sizes, ``const_ms``,
    ``per_tp_ms`` (:func:`tp_split`) and the median measured TTFT (ms)."""
    out = []
    for key, g in rows.groupby(KEYS):
        if g.tp.nunique() < MIN_TP_SIZES:
            continue
        const, per_tp = tp_split(g.tp, g.residual_ms)
        out.append((*key, len(g), g.tp.nunique(), const, per_tp, g.measured.median() * 1e3))
    return pd.DataFrame(out, columns=[*KEYS, "n", "tp_sizes", "const_ms", "per_tp_ms", "measured_ms"])


def main(path: str, max_concurrency: float) -> None:
    t = split_table(low_load_rows(pd.read_csv(path), max_concurrency))
    pd.set_option("display.width", 200)
    print(
        f"== aggregated aiconfigurator TTFT at C <= {max_concurrency:g}: predicted - measured = const + per_tp / TP (ms)"
    )
    print(t.round(1).to_string(index=False))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="a `jalapeno validate --json -o X.csv` output")
    ap.add_argument("--max-concurrency", type=float, default=LOW_LOAD)
    args = ap.parse_args()
    main(args.csv, args.max_concurrency)
