"""GB200/GB300 aiconfigurator disaggregated TTFT against their B200 twins, and by the predicted TTFT's parts (issue 18,
round 38; diagnosis, nothing fitted or shipped).

Part 1 (instant, from the validate table alone). A *twin* of a GB200/GB300 disaggregated row is the set of B200 rows
of the same engine (the framework's first word), precision, ISL/OSL, prefill worker layout and decode worker layout
(attention TP/DP and MoE TP/EP per worker; the worker counts may differ). The twin's measured and predicted TTFT are
interpolated in log-log against the load per prefill worker, C / (prefill workers), at the GB row's load (only
within the twin's range widened by :data:`REACH`); the script prints, per row, the measured ratio m = TTFT(GB) /
TTFT(B200 twin) and the model's ratio p, and per (system, twin group, ISL) their medians. Where the model is right on
B200 and wrong on GB at the same layout and load, p/m − 1 is the GB-specific part the model misses. For the one TensorRT-LLM twin
group with a low-load row at both ISLs it also splits the measured GB − B200 difference at the lowest load into
a + b·(mean prompt tokens) (:func:`isl_split`: two points, solved exactly).

Part 2 (``--parts``, about 10 s). Every held-out GB200/GB300 disaggregated row priced as validation prices it, its
TTFT split into serve/ttft_parts.PARTS (front end, prefill service, KV hand-off, first decode step, queue and
waits), and the same row priced with its system swapped for B200 (``b200/own``: the model's own GB-vs-B200 ratio).
Medians per (system, engine, ISL, prefill attention sharding): where the error sits.

Part 3 (``--waits``, seconds). Every row of the exact twin groups (GB and B200) priced as shipped and with no idle-start
burst: the unloaded parts (front end + prefill service + hand-off + first step), the wait the run measured beyond
them, and the model's steady wait and burst. ``--recipe-budgets`` prices the same rows with each recipe's prefill
``max_num_tokens`` per rank (:data:`RECIPE_BUDGETS`) in place of the 8,192 the rows carry (a what-if).

Usage: python scripts/gb_ttft_twins38.py VALIDATE.csv [--parts] [--prefill-only] [--rows] [--waits] [--recipe-budgets]
(VALIDATE.csv from `jalapeno validate --json -o FILE`, all rows: the twins are mostly fit-split rows)
"""

from __future__ import annotations

import argparse
import dataclasses
import re

import numpy as np
import pandas as pd

SYSTEMS = ("gb200-nvl72", "gb300-nvl72")
TWIN_SYSTEM = "b200"
#: how far past the twin's measured loads a GB row may sit and still be compared (a factor on the load range)
REACH = 1.3
#: InferenceX's prompt lengths are uniform in [0.8·ISL, ISL] (specs/workload.INFERENCEX_RANGE_RATIO): mean 0.9·ISL
MEAN_PROMPT_FRACTION = 0.9
#: the prefill worker's ``max_num_tokens`` (per attention-DP rank) in the twin runs' srt-slurm recipes, by (system, ISL):
#: recipes/trtllm/b200-fp4/{1k1k,8k1k}/stp/ctx1_gen5_tep8_batch{32,8}_eplb0_mtp0.yaml and
#: recipes/trtllm/gb200-fp4/{1k1k,8k1k}/stp/ctx1_gen4_tep8_batch{32,16}_eplb0_mtp0.yaml (named by InferenceX
#: .github/configs/nvidia-master.yaml @dcc0f53a889d and @26d415b36c62; read in connorcarpenter15/srt-slurm @5a156f6b)
RECIPE_BUDGETS = {
    ("b200", 1024): 10240,
    ("b200", 8192): 16896,
    ("gb200-nvl72", 1024): 16384,
    ("gb200-nvl72", 8192): 16640,
}
#: a burst share that removes the idle-start burst without dividing by zero (as scripts/gb_trt_disagg_residual.py)
NO_BURST = 1e-12
_POOL = re.compile(r"(P|D) (\d+)x\(([^)]*)\)")


def pools(label: str) -> dict:
    """``{"P": (workers, layout), "D": (workers, layout)}`` of a disaggregated deployment label
    (``disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 4x(...) [fp4]``); the layout drops ``DP dispatch`` notes.

    Raises:
        ValueError: the label names no prefill and decode pool (an aggregated row), with the label in the message.
    """
    got = {k: (int(n), lay.split(" · DP dispatch")[0]) for k, n, lay in _POOL.findall(label)}
    if set(got) != {"P", "D"}:
        raise ValueError(f"deployment {label!r}: no 'P Nx(...)' and 'D Nx(...)' pools; pass disaggregated rows only")
    return got


def twin_key(row) -> tuple:
    """(engine, model, precision, ISL, OSL, prefill worker layout, decode worker layout): rows with one key are
    twins."""
    p = pools(row.deployment)
    return (row.framework.split()[0], row.model, row.precision, int(row.isl), int(row.osl), p["P"][1], p["D"][1])


def loglog_at(x: float, xs, ys, reach: float = REACH) -> float:
    """ys(x) interpolated linearly in (log x, log y) over the points (xs, ys); flat past the ends; NaN when x lies
    outside [min(xs)/reach, max(xs)·reach] or there are no points."""
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    if not len(xs) or not (xs.min() / reach <= x <= xs.max() * reach):
        return float("nan")
    o = np.argsort(xs)
    return float(np.exp(np.interp(np.log(x), np.log(xs[o]), np.log(ys[o]))))


def isl_split(n1: float, d1: float, n2: float, d2: float) -> tuple[float, float]:
    """(a s, b s per token) with a + b·n1 = d1 and a + b·n2 = d2: a difference split into a fixed and a per-prompt-token
    part from two prompt lengths n1 != n2 (tokens)."""
    b = (d2 - d1) / (n2 - n1)
    return d1 - b * n1, b


def ttft_table(path: str) -> pd.DataFrame:
    """The aiconfigurator disaggregated TTFT rows of GB200, GB300 and B200 in a validate table, with the load per
    prefill worker (``load``) and the twin key (``key``); flagged rows (``quality``) dropped."""
    d = pd.read_csv(path)
    need = {
        "source",
        "system",
        "metric",
        "mode",
        "model",
        "framework",
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
            "X.csv` table (it carries split and quality)"
        )
    d = d[
        (d.source == "aiconfigurator")
        & (d.metric == "ttft_s")
        & (d["mode"] == "disagg")
        & d.system.isin((*SYSTEMS, TWIN_SYSTEM))
        & d.quality.isna()
        & d.predicted.notna()
    ].copy()
    d["load"] = d.concurrency / d.deployment.map(lambda s: pools(s)["P"][0])
    d["key"] = [twin_key(r) for r in d.itertuples()]
    return d


def twins(d: pd.DataFrame, prefill_only: bool = False) -> pd.DataFrame:
    """Per GB row with a B200 twin in reach: the twin's measured and predicted TTFT at the row's load, the measured
    ratio ``m`` and the model's ``p`` (GB over B200), and the B200 twin's own error at that load (``twin_err``).
    ``prefill_only``: twins need not share the decode worker layout (each decode layout of the twins is compared
    on its own, one output row each)."""
    b = d[d.system == TWIN_SYSTEM]
    bkey = b.key.map(lambda k: k[:6]) if prefill_only else b.key
    out = []
    for r in d[d.system.isin(SYSTEMS)].itertuples():
        for _, t in b[bkey == (r.key[:6] if prefill_only else r.key)].groupby(b.key.map(lambda k: k[6])):
            _twin_row(out, r, t)
    return pd.DataFrame(out)


def _twin_row(out: list, r, t: pd.DataFrame) -> None:
    """Append GB row ``r`` against the B200 twin rows ``t`` (one decode layout) when its load is in reach."""
    tm, tp = loglog_at(r.load, t.load, t.measured), loglog_at(r.load, t.load, t.predicted)
    if np.isfinite(tm):
        out.append(
            {
                "system": r.system,
                "id": r.id,
                "split": r.split,
                "engine": r.key[0],
                "model": r.model,
                "precision": r.precision,
                "isl": int(r.isl),
                "osl": int(r.osl),
                "C": r.concurrency,
                "load": r.load,
                "prefill": r.key[5],
                "decode": r.key[6],
                "twin_decode": t.key.iloc[0][6],
                "twin": ",".join(sorted(set(t.id.str.extract(r"(cfg\d+)")[0].fillna("")))),
                "meas": r.measured,
                "twin_meas": tm,
                "m": r.measured / tm,
                "p": r.predicted / tp,
                "err": r.error,
                "twin_err": tp / tm - 1,
            }
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="a `jalapeno validate --json -o X.csv` table (all rows)")
    ap.add_argument("--parts", action="store_true", help="price the held-out GB rows and split their TTFT by part")
    ap.add_argument("--rows", action="store_true", help="print every twin row")
    ap.add_argument("--prefill-only", action="store_true", help="twins need share only the prefill worker layout")
    ap.add_argument("--waits", action="store_true", help="price the exact twin rows: measured wait against the model's")
    ap.add_argument("--recipe-budgets", action="store_true", help="the exact twin rows with the recipes' budgets")
    args = ap.parse_args()
    d = ttft_table(args.csv)
    t = twins(d, args.prefill_only)
    pd.set_option("display.width", 250, "display.max_rows", 500, "display.max_colwidth", 40)
    if args.rows:
        print(t.drop(columns=["id"]).round(3).to_string(index=False), "\n")
    print(
        "GB rows with a B200 twin (same engine, precision, ISL/OSL, prefill"
        + ("" if args.prefill_only else " and decode")
        + " worker layouts), medians:"
    )
    g = t.groupby(
        ["system", "engine", "model", "precision", "prefill", "decode", "isl", "osl", "twin"]
        + (["twin_decode"] if args.prefill_only else [])
    )
    print(
        g.agg(
            n=("m", "size"),
            held_out=("split", lambda s: int((s != "fit").sum())),
            m=("m", "median"),
            p=("p", "median"),
            err=("err", "median"),
            twin_err=("twin_err", "median"),
        )
        .round(3)
        .to_string(),
        "\n",
    )
    # the TensorRT-LLM DEP4 -> TEP8 twins at both ISLs: the lowest-load GB - B200 difference, split by prompt length
    trt = t[(t.engine == "trtllm") & (t.system == "gb200-nvl72")]
    lows = trt.loc[trt.groupby(["prefill", "decode", "isl", "osl"]).load.idxmin()]
    for (pre, dec), x in lows.groupby(["prefill", "decode"]):
        x = x[x.osl == 1024]
        if set(x.isl) >= {1024, 8192}:
            one, eight = x[x.isl == 1024].iloc[0], x[x.isl == 8192].iloc[0]
            a, b = isl_split(
                MEAN_PROMPT_FRACTION * 1024,
                one.meas - one.twin_meas,
                MEAN_PROMPT_FRACTION * 8192,
                eight.meas - eight.twin_meas,
            )
            print(
                f"gb200 {pre} -> {dec}: measured GB200 - B200 at the lowest load = {a * 1e3:+.0f} ms "
                f"{b * 1e6:+.1f} us x mean prompt tokens (1k C={one.C:g}: {one.meas - one.twin_meas:+.3f} s; "
                f"8k C={eight.C:g}: {eight.meas - eight.twin_meas:+.3f} s)"
            )
    if args.waits:
        _twin_waits(d, twins(d))
    if args.recipe_budgets:
        _recipe_budgets(d, twins(d))
    if args.parts:
        _parts(d)


def _price(p, system: str, stack) -> tuple[float, dict]:
    """(mean TTFT s, its serve/ttft_parts.PARTS) of measured point ``p`` priced as validation prices a matched point,
    on ``system`` with ``stack``."""
    from jalapeno.fit.entries import with_stack_mtp
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS
    from jalapeno.fit.table_lookup import load_any_pricer, resolve_pricer
    from jalapeno.fit.validate import point_workload
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.serve.ttft_parts import ttft_parts
    from jalapeno.specs.catalog import load_model

    model, wl, dep = load_model(p.model), point_workload(p), with_stack_mtp(p.deployment, stack, p.model)
    pr = load_any_pricer(
        system,
        "calibrated",
        stack=stack,
        pricer=resolve_pricer(system, "roofline") if system in AIC_SYSTEM_DIRS else "roofline",
    )
    pts = serve_at_concurrency(model, pr, dep, wl, [p.concurrency])
    return float(pts.ttft_s[0]), {k: float(v[0]) for k, v in ttft_parts(model, pr, dep, wl, pts).items()}


def _points(ids) -> list:
    """The aiconfigurator matched points whose ids are in ``ids``."""
    from jalapeno.fit.validate import load_aiconfigurator

    return [p for p in load_aiconfigurator()[0] if p.id in set(ids) and p.mapping == "matched"]


def _twin_waits(d: pd.DataFrame, t: pd.DataFrame) -> None:
    """Every row of the exact twin groups (GB and B200) split into the unloaded parts (front end, prefill service,
    KV hand-off, first step) and the wait the run measured beyond them, against the model's steady wait (its
    prediction with no idle-start burst) and its burst."""
    from jalapeno.fit.validate import point_stack

    keys = set(d[d.id.isin(t.id)].key)
    rows = d[d.key.isin(keys)].set_index("id")
    out = []
    for p in _points(rows.index):
        st = point_stack(p)
        full, parts = _price(p, p.system, st)
        steady = _price(p, p.system, dataclasses.replace(st, prefill_burst_fraction=NO_BURST))[0]
        unloaded = full - parts["queue_and_waits_s"]
        out.append(
            {
                "system": p.system,
                "isl": p.isl,
                "C": p.concurrency,
                "split": rows.split[p.id],
                "meas": p.measured["ttft_s"],
                "pred": full,
                "unloaded": unloaded,
                "meas_wait": p.measured["ttft_s"] - unloaded,
                "model_steady": steady - unloaded,
                "model_burst": full - steady,
            }
        )
    print("\nexact twin rows: the wait measured beyond the unloaded parts against the model's (s):")
    print(pd.DataFrame(out).sort_values(["isl", "system", "C"]).round(3).to_string(index=False))


def _recipe_budgets(d: pd.DataFrame, t: pd.DataFrame) -> None:
    """The exact twin rows priced with their recipe's prefill budget per rank (:data:`RECIPE_BUDGETS`) against as
    shipped (8,192 a rank): a what-if; rows of a (system, ISL) without a recipe entry are skipped."""
    from jalapeno.fit.validate import point_stack

    rows = d[d.key.isin(set(d[d.id.isin(t.id)].key))]
    out = []
    for p in _points(rows.id):
        budget = RECIPE_BUDGETS.get((p.system, p.isl))
        if budget is None:
            continue
        st = point_stack(p)
        alt = dataclasses.replace(p, deployment=dataclasses.replace(p.deployment, token_budget=budget))
        m = p.measured["ttft_s"]
        out.append(
            {
                "system": p.system,
                "isl": p.isl,
                "C": p.concurrency,
                "budget": budget,
                "meas": m,
                "err": _price(p, p.system, st)[0] / m - 1,
                "err_recipe": _price(alt, p.system, st)[0] / m - 1,
            }
        )
    print("\nexact twin rows with the recipes' prefill budgets per rank (what-if):")
    print(pd.DataFrame(out).sort_values(["isl", "system", "C"]).round(3).to_string(index=False))


def _parts(d: pd.DataFrame) -> None:
    """Price the held-out GB rows (and each on B200) and print the medians of their TTFT parts."""
    from jalapeno.fit.validate import point_stack
    from jalapeno.serve.ttft_parts import PARTS

    keep = d[d.system.isin(SYSTEMS) & (d.split != "fit")].set_index("id")  # key: twin_key's tuple
    rows = []
    for p in _points(keep.index):
        st = point_stack(p)
        got = {name: _price(p, name, st) for name in (p.system, TWIN_SYSTEM)}
        r = keep.loc[p.id]
        rows.append(
            {
                "system": p.system,
                "engine": r.key[0],
                "isl": int(r.isl),
                "sharding": "ADP" if " DP1 " not in r.key[5] else "ATP",
                "err": r.error,
                "left_s": r.measured - got[p.system][0],
                **got[p.system][1],
                "b200/own": got[TWIN_SYSTEM][0] / got[p.system][0],
            }
        )
    x = pd.DataFrame(rows)
    print("\nheld-out GB rows by part (medians; left_s = measured - predicted):")
    agg = {
        "n": ("err", "size"),
        "within20": ("err", lambda e: int((e.abs() <= 0.2).sum())),
        "err": ("err", "median"),
        "left_s": ("left_s", "median"),
        **{k: (k, "median") for k in PARTS},
        "b200/own": ("b200/own", "median"),
    }
    print(x.groupby(["system", "engine", "isl", "sharding"]).agg(**agg).round(3).to_string())


if __name__ == "__main__":
    main()
