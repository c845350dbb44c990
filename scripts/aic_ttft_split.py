"""Split aiconfigurator's TTFT into the model's parts and show which part carries the error (issue 18).

Each aiconfigurator end-to-end row (fit/validate.load_aiconfigurator; ``pip install -e ".[calibrate]"``) is
predicted four times with every fitted constant as shipped except the part switched off, and the
predicted TTFT is split by difference:

- ``lone``: the accelerator's TTFT of one prompt on an idle engine (the row at concurrency 1, no front
  end, no burst): half a decode step, the prefill step(s) of one prompt, the KV hand-off when disaggregated;
- ``load``: what the row's load adds on the accelerator (the steady batch-service queue, decode
  interference, polls, balancing holds: serve/analytic.py, serve/queueing.py effects 1, 2, 4, 5, 9);
- ``front``: the client's front end a + b·ISL (data/stack_fits.toml ``clients``);
- ``burst``: the idle-start wave weighed by the client's burst share w (serve/queueing.idle_start,
  effect 3 and (7): w·mean_k max(0, t_k + extra − steady)).

It prints, per engine / client / model / mode, the median measured TTFT, the median of each part and
the error of the prediction with the burst, without it, and without the front end too; at low load (C ≤ 4)
the measured TTFT against one prompt alone plus the front end, by precision and system; then the share
each row needs, w_need = (measured − steady) / (the first wave's mean excess), against the wave's time
per prompt over the decode step, y = (2·excess/C) / TPOT (2·excess/C: the wave's time per prompt, from
its mean excess, which is about half the wave for C prompts). ``--what-if`` prices the aggregated rows
with a share that falls with y, w = k/(1 + y), k chosen per engine and client on alternate rows (the
even rows of each engine/client group, held-out figures on the odd ones; MiniMax-M2.5 never fitted, as
fit/stack_fit.HELD_OUT_MODELS) — a what-if: nothing is written, no shipped value changes. ``--derived`` prices
every row with the share a finite closed-loop run derives for itself, one wave in W = 10 (the client's 10·C counted
requests after a drained warm-up; the simulator agrees: tests/golden/test_ttft_sim_vs_analytic.py,
``test_a_finite_closed_loop_run_meets_its_first_wave_once``), by group, and prints what the aggregated rows at
C >= 16 keep beyond it per user, (measured - steady - wave/W) / C, against the wave's time per prompt.
Flagged rows (fit/aic_quality.py) are left out. Run: python scripts/aic_ttft_split.py [--what-if] [--derived]
(about a minute)
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np
import pandas as pd

#: the share of the counted requests that meet the burst when a client sets none: one wave in
#: R = 10 (serve/queueing.REQUESTS_PER_USER, InferenceX's 10·C counted requests)
DEFAULT_SHARE = 0.1
#: the ``y`` bins of the needed-share table (wave time per prompt / decode step)
Y_BINS = (0.0, 0.2, 0.5, 1.0, 2.0, 5.0, 1e9)
#: the concurrency up to which a row counts as low load (the front end and one prompt's prefill dominate)
LOW_LOAD = 4
#: a share that removes the burst without dividing by zero where the split needs the excess
_NO_BURST = 1e-12


def parts(full, noburst, bare, lone) -> dict:
    """The four parts of a predicted TTFT (s), by difference of the four predictions (arrays or scalars):
    ``burst`` = full − noburst, ``front`` = noburst − bare, ``load`` = bare − lone, ``lone``; they sum to ``full``.

    >>> {k: round(float(v), 3) for k, v in parts(1.0, 0.7, 0.5, 0.2).items()}
    {'lone': 0.2, 'load': 0.3, 'front': 0.2, 'burst': 0.3}
    """
    full, noburst, bare, lone = (np.asarray(v, dtype=float) for v in (full, noburst, bare, lone))
    return {"lone": lone, "load": bare - lone, "front": noburst - bare, "burst": full - noburst}


def needed_share(measured, noburst, burst, share):
    """The burst share a row needs for the model to meet its measured TTFT: (measured − steady) /
    excess, with excess = burst / share the first wave's mean excess (s). NaN where the wave has no excess.

    Raises:
        ValueError: a share outside (0, 1] (names the field).

    >>> round(float(needed_share(0.9, 0.7, 0.3, 0.15)), 6)  # excess 0.3 / 0.15 = 2 s; (0.9 - 0.7) / 2
    0.1
    """
    share = np.asarray(share, dtype=float)
    if np.any((share <= 0) | (share > 1)):
        raise ValueError(
            "share: a burst share must be in (0, 1]; give the client's agg/prefill_burst_fraction "
            "or 0.1 (one wave in ten) where it sets none"
        )
    excess = np.asarray(burst, dtype=float) / share
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            excess > 0, (np.asarray(measured, dtype=float) - np.asarray(noburst, dtype=float)) / excess, np.nan
        )


def wave_per_prompt_over_step(burst, share, users, tpot_s):
    """y: the wave's time per prompt over the decode step, (2·excess/C)/TPOT, with excess = burst/share.

    >>> float(wave_per_prompt_over_step(0.3, 0.15, 20, 0.01))  # excess 2 s, 0.2 s per prompt, 10 ms steps
    20.0
    """
    excess = np.asarray(burst, dtype=float) / np.asarray(share, dtype=float)
    return 2.0 * excess / np.asarray(users, dtype=float) / np.asarray(tpot_s, dtype=float)


def share_form(y, k):
    """The what-if share w = k/(1 + y), capped at 1 (y as :func:`wave_per_prompt_over_step`).

    >>> [round(float(v), 3) for v in share_form(np.array([0.0, 1.0, 9.0]), 0.6)]
    [0.6, 0.3, 0.06]
    """
    return np.minimum(k / (1.0 + np.asarray(y, dtype=float)), 1.0)


def fit_k(measured, noburst, excess, y, grid=None) -> float:
    """The k of :func:`share_form` with the least median |log(predicted/measured)| over the rows given,
    predicted = noburst + w(y, k)·excess; ``grid`` (default 0.05, 0.10, ... 3.0) the values tried.

    Raises:
        ValueError: no row to fit (names the field).
    """
    m, nb, ex, yy = (np.asarray(v, dtype=float) for v in (measured, noburst, excess, y))
    if m.size == 0:
        raise ValueError("measured: no row to fit k on; give at least one row of the group")
    ks = np.round(np.arange(1, 61) * 0.05, 2) if grid is None else np.asarray(grid, dtype=float)
    err = [np.median(np.abs(np.log((nb + share_form(yy, k) * ex) / m))) for k in ks]
    return float(ks[int(np.argmin(err))])


def _stat(e: pd.Series) -> str:
    e = e.dropna()
    return f"{e.abs().median():.1%} / {e.median():+.1%} n{len(e)}" if len(e) else "-"


def predict_parts(points) -> pd.DataFrame:
    """One row per point: measured TTFT/TPOT, the four predictions (``full``, ``noburst``, ``bare``,
    ``lone``), the burst share the row's client applies (``share``) and the row's keys."""
    from jalapeno.fit.validate import point_stack, predict_points

    memo: dict = {}

    def variant(kind):
        def stack_of(p):
            st = point_stack(p)
            key = (id(st), kind)
            if key not in memo:
                kw = {}
                if kind in ("noburst", "bare"):
                    kw.update(agg_burst_fraction=_NO_BURST, prefill_burst_fraction=_NO_BURST)
                if kind == "bare":
                    kw.update(request_overhead_s=0.0, prompt_overhead_s_per_token=0.0)
                memo[key] = (st, dataclasses.replace(st, **kw) if kw else st)
            return memo[key][1]

        return stack_of

    def ttft(got):
        return got[got.metric == "ttft_s"].set_index("id").predicted

    full = predict_points(points)
    cols = {"full": ttft(full)}
    for kind in ("noburst", "bare"):
        cols[kind] = ttft(predict_points(points, stack_of=variant(kind)))
    cols["lone"] = ttft(
        predict_points([dataclasses.replace(p, concurrency=1.0) for p in points], stack_of=variant("bare"))
    )
    base = full[full.metric.isin(["ttft_s", "tpot_s"])].pivot_table(
        index="id", columns="metric", values=["measured", "predicted"]
    )
    base.columns = [f"{a}_{b}" for a, b in base.columns]

    def share(p):
        st = point_stack(p)
        w = st.prefill_burst_fraction if p.mode == "disagg" else st.agg_burst_fraction
        return DEFAULT_SHARE if w is None else w

    meta = pd.DataFrame(
        [
            {
                "id": p.id,
                "system": p.system,
                "model": p.model,
                "engine": p.framework.split()[0],
                "client": p.client,
                "mode": p.mode,
                "precision": p.precision,
                "isl": p.isl,
                "osl": p.osl,
                "conc": p.concurrency,
                "share": share(p),
            }
            for p in points
        ]
    ).set_index("id")
    return meta.join(base).join(pd.DataFrame(cols))


def derived_frame(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` (columns ``m`` measured, ``noburst``, ``burst``, ``share``, ``conc``; s) with the first wave's mean
    excess ``excess`` = burst/share (0 where there is no burst), the TTFT at the queueing-derived share
    ``derived`` = noburst + :data:`DEFAULT_SHARE`·excess, the remainder per user ``rest_ms`` = 1e3·(m − derived)/conc
    and the wave's time per prompt ``prompt_ms`` = 2e3·excess/conc (ms); with ``lone`` (one prompt alone, s) also
    ``serial``, a what-if: the same share with the wave served one prompt at a time at its lone cost, noburst +
    :data:`DEFAULT_SHARE`·max(excess, (C − 1)/2·lone) (the mean wait of C prompts served one by one).

    >>> d = derived_frame(pd.DataFrame({"m": [0.5], "noburst": [0.2], "burst": [0.3], "share": [0.15], "conc": [100],
    ...                                 "lone": [0.05]}))
    >>> [round(float(d[k].iloc[0]), 3) for k in ("excess", "derived", "rest_ms", "prompt_ms", "serial")]
    [2.0, 0.4, 1.0, 40.0, 0.448]
    """
    excess = np.where(df.burst > 0, df.burst / df.share, 0.0)
    derived = df.noburst + DEFAULT_SHARE * excess
    out = df.assign(
        excess=excess, derived=derived, rest_ms=1e3 * (df.m - derived) / df.conc, prompt_ms=2e3 * excess / df.conc
    )
    if "lone" in df:
        out["serial"] = df.noburst + DEFAULT_SHARE * np.maximum(excess, np.maximum(df.conc - 1, 0) / 2 * df.lone)
    return out


def derived_table(df: pd.DataFrame) -> None:
    """Print the figures of ``--derived`` (:func:`derived_frame`): every row priced with the queueing-derived share
    against the shipped fitted shares, overall and by system, model and mode (groups of 20 rows or more); and the
    aggregated rows' remainder per user at C >= 16 beside the wave's time per prompt (ms)."""
    d = derived_frame(df)
    print(
        f"\n== derived share 1/W = {DEFAULT_SHARE} for every row: shipped {_stat(d.full / d.m - 1)} -> "
        f"derived {_stat(d.derived / d.m - 1)}"
    )
    print(
        f"what-if, the wave served one prompt at a time at its lone cost: {_stat(d.serial / d.m - 1)}; aggregated "
        f"{_stat(d[d['mode'] == 'agg'].full / d[d['mode'] == 'agg'].m - 1)} -> "
        f"{_stat(d[d['mode'] == 'agg'].serial / d[d['mode'] == 'agg'].m - 1)}"
    )
    g = d.groupby(["system", "model", "mode"]).filter(lambda x: len(x) >= 20).groupby(["system", "model", "mode"])
    print("shipped -> derived 1/W | one prompt at a time")
    print(
        g.apply(
            lambda x: f"{_stat(x.full / x.m - 1)} -> {_stat(x.derived / x.m - 1)} | {_stat(x.serial / x.m - 1)}",
            include_groups=False,
        ).to_string()
    )
    a = d[(d["mode"] == "agg") & (d.conc >= 16)]
    a = a.assign(cb=pd.cut(a.conc, [8, 32, 128, 4096]))
    keys = ["engine", "client", "model", "isl"]
    print("\n== aggregated, C >= 16: (measured - steady - wave/W) / C, ms per user (median), by concurrency")
    print(
        a.pivot_table(index=keys, columns="cb", values="rest_ms", aggfunc="median", observed=True).round(2).to_string()
    )
    print("== the same rows' wave time per prompt, 2·excess/C, ms (median)")
    print(
        a.pivot_table(index=keys, columns="cb", values="prompt_ms", aggfunc="median", observed=True)
        .round(1)
        .to_string()
    )


def main(what_if: bool, derived: bool = False) -> None:
    from jalapeno.fit.aic_quality import aic_source_flags, aic_ttft_flags
    from jalapeno.fit.stack_fit import HELD_OUT_MODELS
    from jalapeno.fit.validate import load_aiconfigurator

    points, _ = load_aiconfigurator()
    flagged = set(aic_ttft_flags(points)) | set(aic_source_flags(points))
    df = predict_parts([p for p in points if p.id not in flagged])
    df = df[df.full.notna() & df.measured_ttft_s.notna()].copy()
    df = df.assign(**parts(df.full, df.noburst, df.bare, df.lone), m=df.measured_ttft_s)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 30)
    pd.set_option("display.max_rows", 200)
    pd.set_option("display.max_colwidth", 200)
    keys = ["engine", "client", "model", "mode"]
    print("== TTFT parts (medians, s) and the error with the burst, without it, without the front end too")
    print(
        df.groupby(keys)
        .apply(
            lambda g: pd.Series(
                {
                    "n": len(g),
                    "measured": g.m.median(),
                    "predicted": g.full.median(),
                    "lone": g.lone.median(),
                    "load": g.load.median(),
                    "front": g.front.median(),
                    "burst": g.burst.median(),
                    "error": _stat(g.full / g.m - 1),
                    "no burst": _stat(g.noburst / g.m - 1),
                    "no front": _stat(g.bare / g.m - 1),
                }
            ),
            include_groups=False,
        )
        .round(3)
        .to_string()
    )
    low = df[df.conc <= LOW_LOAD]
    print(f"\n== C <= {LOW_LOAD}: measured against one prompt alone plus the front end (medians, s)")
    print(
        low.groupby([*keys, "precision", "system", "isl"])
        .apply(
            lambda g: pd.Series(
                {
                    "n": len(g),
                    "measured": g.m.median(),
                    "lone + front": (g.lone + g.front).median(),
                    "predicted": g.full.median(),
                    "measured - lone - front": (g.m - g.lone - g.front).median(),
                }
            ),
            include_groups=False,
        )
        .round(3)
        .to_string()
    )
    agg = df[(df["mode"] == "agg") & (df.burst > 1e-4)].copy()
    agg["excess"] = agg.burst / agg.share
    agg["w_need"] = needed_share(agg.m, agg.noburst, agg.burst, agg.share)
    agg["y"] = wave_per_prompt_over_step(agg.burst, agg.share, agg.conc, agg.predicted_tpot_s)
    agg["y_bin"] = pd.cut(agg.y, list(Y_BINS))
    if derived:
        derived_table(df)
    big = agg[agg.conc >= 16]
    print("\n== aggregated, C >= 16: the share each row needs (median) by y = wave time per prompt / decode step")
    print(
        big.pivot_table(index="y_bin", columns="model", values="w_need", aggfunc="median", observed=True)
        .round(2)
        .to_string()
    )
    print(big.pivot_table(index="y_bin", columns="model", values="w_need", aggfunc="count", observed=True).to_string())
    if not what_if:
        return
    print("\n== what-if: aggregated rows with w = k/(1 + y), k per engine and client on the even rows")
    out = []
    for key, g in agg.groupby(["engine", "client"]):
        order = np.arange(len(g)) % 2
        fit = g[(order == 0) & ~g.model.isin(HELD_OUT_MODELS)]
        if len(fit) < 4:
            continue
        k = fit_k(fit.m, fit.noburst, fit.excess, fit.y)
        g = g.assign(new=g.noburst + share_form(g.y, k) * g.excess, held=order == 1)
        print(
            key,
            f"k = {k:.2f}: shipped {_stat(g.full / g.m - 1)} -> {_stat(g.new / g.m - 1)}; held out "
            f"{_stat(g[g.held].full / g[g.held].m - 1)} -> {_stat(g[g.held].new / g[g.held].m - 1)}",
        )
        out.append(g)
    r = pd.concat(out)
    print("aggregated rows:", _stat(r.full / r.m - 1), "->", _stat(r.new / r.m - 1))
    print(
        r.groupby(["system", "model"])
        .apply(lambda g: f"{_stat(g.full / g.m - 1)} -> {_stat(g.new / g.m - 1)}", include_groups=False)
        .to_string()
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--what-if", action="store_true", help="also price the aggregated rows with w = k/(1 + y)")
    ap.add_argument(
        "--derived",
        action="store_true",
        help="also price every row with the queueing-derived share, one wave in W = 10",
    )
    args = ap.parse_args()
    main(args.what_if, args.derived)
