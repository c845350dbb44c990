"""Where the held-out GB200/GB300 aiconfigurator TTFT error mass sits by engine x mode x ISL x concurrency band, the
predicted TTFT of the largest group split by term against the measured one, and the GB300/GB200 TTFT ratio at
matched rows, measured against the model's (issue 18, round 45, aicttft45; diagnosis, nothing fitted or shipped).

Part 1 (instant; ``HELD_OUT.csv`` from `jalapeno validate --held-out --json -o X.csv`): the issue's held-out rows
(scripts/gb_ttft_median_need.held_out_ttft) grouped by engine (the framework's first word), mode, ISL and concurrency
band (scripts/aic_gb_ttft_axes43.c_band); per group n, median |error| and signed error, within / over / under the
20% goal, ``mass`` (the group's share of the system's rows outside the goal) and ``med_if_fixed`` (axes43). Then the
rows at each system's median rank: which rows set the median and its sign.

Part 2 (``--twins ALL.csv``, a `jalapeno validate --json -o` table with every split; instant): GB300/GB200 *twins*, a
GB300 row and a GB200 row of one engine, model, precision, ISL/OSL, concurrency and deployment text (worker counts
and layouts; a ``DP dispatch`` note ignored), both unflagged; per pair the measured ratio TTFT(GB300) / TTFT(GB200)
and the model's, and whether the two runs share an engine release family (:func:`release_family`).

Part 3 (``--parts``, needs ``--twins``; about a minute): every held-out row of the group with the most rows outside
the goal on each system, priced as validation prices it (scripts/gb_ttft_twins38._price), its TTFT split into
serve/ttft_parts.PARTS, with the wait split into the steady queue (priced with no idle-start burst) and the burst
(shipped − steady), and the same row priced on the other rack (``sib``: the model's own GB300/GB200 ratio of the row,
and of its prefill service, where GB300's fitted prefill attention enters).

Run: python scripts/aic_gb_ttft_mass45.py HELD_OUT.csv [--twins ALL.csv [--parts]]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aic_gb_ttft_axes43 import c_band, median_if_fixed  # noqa: E402  (sibling scripts)
from gb_ttft_median_need import GOAL, SYSTEMS, held_out_ttft  # noqa: E402

#: the axes of part 1's groups
GROUP = ("engine", "mode", "isl", "c_band")
#: the other rack of each GB system (part 3's ``sib``)
SIBLING = {"gb200-nvl72": "gb300-nvl72", "gb300-nvl72": "gb200-nvl72"}
_DISPATCH = re.compile(r" · DP dispatch[^)]*")
#: the concurrency bands in load order (aic_gb_ttft_axes43.c_band's labels)
BANDS = tuple(c_band(c) for c in (1, 9, 65, 513))


def banded(c) -> pd.Categorical:
    """Concurrencies (N,) as ordered :data:`BANDS` labels, so groups print in load order."""
    return pd.Categorical([c_band(x) for x in c], categories=BANDS, ordered=True)


def release_family(framework: str) -> str:
    """The engine release without its post-release suffix (``sglang 0.5.8.post1`` -> ``sglang 0.5.8``): two runs of
    one family differ at most by a post release.

    >>> release_family("sglang 0.5.8.post1"), release_family("sglang 0.5.8"), release_family("trtllm 0.8.1.post2")
    ('sglang 0.5.8', 'sglang 0.5.8', 'trtllm 0.8.1')
    """
    return re.sub(r"\.post\d+$", "", str(framework).strip())


def groups(d: pd.DataFrame, goal: float = GOAL) -> pd.DataFrame:
    """Per :data:`GROUP` of one system's rows ``d`` (columns error, framework, mode, isl, concurrency): n, median
    |error| and signed error (%), within / over / under ``goal``, ``mass`` (% of the system's rows outside the goal
    that the group holds) and ``med_if_fixed`` (%)."""
    d = d.assign(engine=d.framework.str.split().str[0], c_band=banded(d.concurrency))
    out_total = max(int((d.error.abs() > goal).sum()), 1)
    rows = []
    for key, g in d.groupby(list(GROUP), sort=True, observed=True):
        e = g.error
        out = int((e.abs() > goal).sum())
        fixed = np.all([d[a] == k for a, k in zip(GROUP, key)], axis=0)
        rows.append(
            {
                **dict(zip(GROUP, key)),
                "n": len(g),
                "med_abs": 100 * float(e.abs().median()),
                "med": 100 * float(e.median()),
                "within": len(g) - out,
                "over": int((e > goal).sum()),
                "under": int((e < -goal).sum()),
                "mass": 100 * out / out_total,
                "med_if_fixed": 100 * median_if_fixed(d.error, fixed),
            }
        )
    return pd.DataFrame(rows).set_index(list(GROUP))


def median_rows(d: pd.DataFrame, k: int = 3) -> pd.DataFrame:
    """The ``2k`` rows of ``d`` nearest the median rank of |error| (sorted by |error|): the rows that set the median."""
    s = d.assign(abs_err=d.error.abs()).sort_values("abs_err")
    mid = len(s) // 2
    return s.iloc[max(mid - k, 0) : mid + k]


def twins(path: str) -> pd.DataFrame:
    """GB300/GB200 twin pairs (module docstring, part 2) of a validate table's aiconfigurator TTFT and TPOT rows:
    per pair and metric the measured and modelled ratio GB300 / GB200, both errors and splits, and ``same_release``.

    Raises:
        SystemExit: the table lacks a column the pairing reads, named with the fix.
    """
    d = pd.read_csv(path)
    need = {
        "source",
        "system",
        "metric",
        "framework",
        "model",
        "precision",
        "isl",
        "osl",
        "concurrency",
        "deployment",
        "measured",
        "predicted",
        "error",
        "split",
        "quality",
        "id",
    }
    if missing := need - set(d.columns):
        raise SystemExit(
            f"{path}: missing column(s) {sorted(missing)}; fix: pass a `jalapeno validate --json -o "
            "X.csv` table (every split)"
        )
    d = d[
        (d.source == "aiconfigurator")
        & d.metric.isin(("ttft_s", "tpot_s"))
        & d.system.isin(SYSTEMS)
        & d.quality.isna()
        & d.predicted.notna()
    ].copy()
    d["engine"] = d.framework.str.split().str[0]
    d["dep"] = d.deployment.str.replace(_DISPATCH, "", regex=True)
    key = ["engine", "model", "precision", "isl", "osl", "concurrency", "dep", "metric"]
    a, b = d[d.system == "gb200-nvl72"], d[d.system == "gb300-nvl72"]
    m = a.merge(b, on=key, suffixes=("_gb200", "_gb300"))
    m["meas_ratio"] = m.measured_gb300 / m.measured_gb200
    m["model_ratio"] = m.predicted_gb300 / m.predicted_gb200
    m["same_release"] = m.framework_gb200.map(release_family) == m.framework_gb300.map(release_family)
    return m


def twin_summary(m: pd.DataFrame) -> pd.DataFrame:
    """Median measured and modelled GB300/GB200 ratio per metric, release match and concurrency band."""
    m = m.assign(c_band=banded(m.concurrency))
    return m.groupby(["metric", "same_release", "c_band"], observed=True).agg(
        n=("meas_ratio", "size"), meas=("meas_ratio", "median"), model=("model_ratio", "median")
    )


def largest_group(g: pd.DataFrame) -> tuple:
    """The :data:`GROUP` key of the group with the most rows outside the goal (ties: the larger n)."""
    return g.assign(out=g.over + g.under).sort_values(["out", "n"], ascending=False).index[0]


def shipped_share(w) -> float:
    """The idle-start burst share a stack ships: its fitted ``prefill_burst_fraction``, or 1/R (serve/queueing's
    finite run of R requests a user) where it sets none."""
    from jalapeno.serve.queueing import REQUESTS_PER_USER

    return 1.0 / REQUESTS_PER_USER if w is None else float(w)


def share_needed(measured, model_ttft, burst, share):
    """The burst share at which the model's TTFT would equal ``measured`` (TTFT is linear in the share,
    serve/queueing.idle_start: steady + share·late, late = burst / share); NaN where the row has no burst.

    >>> float(share_needed(1.0, 2.0, 1.5, 0.5))  # steady 0.5 s, late 3 s: (1.0 - 0.5) / 3
    0.16666666666666666
    """
    burst = np.asarray(burst, float)
    late = np.where(burst > 0, burst / np.asarray(share, float), np.nan)
    return (np.asarray(measured, float) - (np.asarray(model_ttft, float) - burst)) / late


def parts(ids) -> pd.DataFrame:
    """Per point id: the model's TTFT split into serve/ttft_parts.PARTS with the wait split into ``steady_wait_s``
    and ``burst_s``, and the row priced on the sibling rack (``sib_ttft_s``, ``sib_prefill_s``); seconds."""
    import dataclasses

    from gb_ttft_twins38 import NO_BURST, _points, _price

    from jalapeno.fit.validate import point_stack

    out = []
    for p in _points(ids):
        st = point_stack(p)
        ttft, pa = _price(p, p.system, st)
        steady = _price(p, p.system, dataclasses.replace(st, prefill_burst_fraction=NO_BURST))[0]
        sib, spa = _price(p, SIBLING[p.system], st)
        wait = pa.pop("queue_and_waits_s")
        out.append(
            {
                "id": p.id,
                "model_ttft_s": ttft,
                **pa,
                "steady_wait_s": wait - (ttft - steady),
                "burst_s": ttft - steady,
                "share": shipped_share(st.prefill_burst_fraction),
                "sib_ttft_s": sib,
                "sib_prefill_s": spa["prefill_s"],
            }
        )
    return pd.DataFrame(out).set_index("id")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("held_out", help="a `jalapeno validate --held-out --json -o X.csv` table")
    ap.add_argument("--twins", metavar="ALL.csv", help="a `jalapeno validate --json -o X.csv` table (every split)")
    ap.add_argument("--parts", action="store_true", help="price the largest group's rows by term (needs --twins)")
    args = ap.parse_args()
    if args.parts and not args.twins:
        ap.error("--parts needs --twins ALL.csv (it prices held-out rows with their twins' table)")
    pd.set_option("display.width", 250, "display.max_rows", 500, "display.max_colwidth", 60)
    d = held_out_ttft(args.held_out, {"framework", "mode", "isl", "osl", "concurrency", "deployment"})
    big = {}
    for system, x in d.groupby("system"):
        g = groups(x)
        big[system] = largest_group(g)
        print(
            f"\n{system}: n {len(x)}, median |error| {100 * x.error.abs().median():.1f}%, "
            f"median {100 * x.error.median():+.1f}%; by engine x mode x ISL x C band:"
        )
        print(g.round(1).to_string())
        print("rows at the median rank:")
        print(median_rows(x)[["id", "measured", "predicted", "error"]].round(3).to_string(index=False))
        print("largest group (most rows outside the goal):", " ".join(str(k) for k in big[system]))
    if not args.twins:
        return
    m = twins(args.twins)
    cols = [
        "metric",
        "engine",
        "precision",
        "isl",
        "concurrency",
        "framework_gb200",
        "framework_gb300",
        "split_gb200",
        "split_gb300",
        "measured_gb200",
        "measured_gb300",
        "meas_ratio",
        "model_ratio",
        "error_gb200",
        "error_gb300",
    ]
    print("\nGB300/GB200 twins (same engine, model, precision, ISL/OSL, C and deployment):")
    print(m.sort_values(["metric", "engine", "isl", "concurrency"])[cols].round(3).to_string(index=False))
    print("\nmedians by metric, release match and C band:")
    print(twin_summary(m).round(3).to_string())
    if args.parts:
        x = d.assign(engine=d.framework.str.split().str[0], c_band=banded(d.concurrency)).set_index("id")
        p = x[["system", *GROUP, "concurrency", "measured", "error"]].join(parts(x.index), how="inner")
        p["meas_wait_s"] = p.measured - p[["frontend_s", "prefill_s", "kv_transfer_s", "first_step_s"]].sum(axis=1)
        p["share_needed"] = share_needed(p.measured, p.model_ttft_s, p.burst_s, p.share)
        p["sib_ratio"] = p.model_ttft_s / p.sib_ttft_s
        p["sib_prefill_ratio"] = p.prefill_s / p.sib_prefill_s
        terms = [
            "measured",
            "model_ttft_s",
            "frontend_s",
            "prefill_s",
            "kv_transfer_s",
            "first_step_s",
            "meas_wait_s",
            "steady_wait_s",
            "burst_s",
            "share",
            "share_needed",
            "sib_ratio",
            "sib_prefill_ratio",
        ]
        print(
            "\nevery held-out row priced by term, medians per group (s; share_needed: the burst share that would "
            "meet the measured TTFT):"
        )
        print(
            p.groupby(["system", *GROUP], observed=True)
            .agg(n=("error", "size"), err=("error", "median"), **{t: (t, "median") for t in terms})
            .round(3)
            .to_string()
        )
        for system, key in big.items():
            g = p[(p.system == system) & np.all([p[a] == k for a, k in zip(GROUP, key)], axis=0)]
            g = g.drop(columns=["system", *GROUP]).sort_values("concurrency")
            g.index = [re.sub(r"^aic:.*?_(?:disagg|agg)_", "", i) for i in g.index]
            print(f"\n{system} {key}: the model's TTFT by term against the measured (s):")
            print(g.round(3).to_string())


if __name__ == "__main__":
    main()
