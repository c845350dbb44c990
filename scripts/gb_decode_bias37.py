"""GB300 aiconfigurator TPOT and InferenceX GB200 throughput held-out biases: what their medians are made of, and
TensorRT-LLM's per-attention-DP-rank cost carried to the Dynamo-TRT profile as a what-if. Issue 18, round 37 (gbdec37;
docs/gap_gb200_fp4_8k1k.md "Update 12"). Nothing here is shipped; nothing is written.

Part 1 (VALIDATE_CSV, seconds; ``jalapeno validate --json -o VALIDATE_CSV``, every row with ``split`` and
``quality``). The held-out judgement of goals (rows not in the fit split, no quality flag): for the aiconfigurator
GB300 TPOT rows and the InferenceX GB200 throughput rows, the median signed error, the two middle values that make
it and the rows they are, the rows split by the decode pool's attention sharding (``ATP``: attention tensor
parallel, ``ADP``: attention data parallel; scripts/gb300_twin_check.sharding), and the GB300 / GB200 twins of
scripts/gb300_twin_check.py (same model, precision, release line, lengths, decode pool and concurrency).

Part 2 (``--rank-cost``, about a minute and a half: two InferenceX validations per acceptance). The ``dynamo-trtllm`` profile
(InferenceX's Dynamo + TensorRT-LLM rows) declares ``tp_rank_step_dp = true`` (TensorRT-LLM's executor all-gathers
over the attention-DP group every step: data/stacks.toml, its source) but fits no ``tp_rank_step_s``, so its
per-rank cost is 0, while the ``trtllm`` profile, fitted on aiconfigurator's runs of the same release
(1.2.0rc6.post2, in Dynamo runtime images), carries 75 µs a rank beyond the first (data/stack_fits.toml). The what-if
gives ``dynamo-trtllm`` that fitted value and re-prices the InferenceX rows over a grid of MTP acceptances
(fit/validation_run.run_validation with ``stack_fits``); the acceptance the profile's refit would take is emulated as
fit/stack_fit._mtp_fit takes it: the grid argmin of the mean |log(predicted / measured)| TPOT of the profile's
DeepSeek-R1 MTP rows in the fit split (checked first on the shipped step costs, where its argmin is the shipped
acceptance). It prints, per acceptance, that loss, the GB200 rows' throughput and TPOT
errors and the goal groups (median |error| / p90 / bias) of InferenceX, all rows and held out. ``--full`` gives the
profile every fitted step cost of ``trtllm`` instead (its 2.6 µs per kernel and 0.325 ms per step too, in place of the
efficiency sets' 4 µs and 0.5 ms).

Usage: python scripts/gb_decode_bias37.py VALIDATE_CSV [--rank-cost | --full]
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gb300_twin_check as twin  # noqa: E402

#: Acceptance grid of the what-if (fit/stack_fit.ACCEPTANCE_GRID's step, around the shipped 0.8).
GRID = (0.7, 0.725, 0.75, 0.775, 0.8, 0.825, 0.85)
#: The trtllm profile's fitted per-rank step cost, s (data/stack_fits.toml [fits."trtllm"], read at run time).
RANK_PROFILE = "trtllm"
PROFILE = "dynamo-trtllm"


def judged(df: pd.DataFrame) -> pd.DataFrame:
    """The rows the held-out goals judge: not in the fit split, no quality flag, an error."""
    q = df["quality"].fillna("").astype(str).str.len() == 0
    return df[(df["split"] != "fit") & q & df["error"].notna()]


def median_parts(errors: pd.Series) -> dict:
    """The median of ``errors`` and the value(s) that make it: ``lo`` / ``hi`` the two middle values (one value
    twice for an odd count), ``lo_id`` / ``hi_id`` their index labels.

    >>> median_parts(pd.Series([0.3, -0.1, 0.05, 0.2], index=list("abcd")))["median"]
    0.125
    """
    s = errors.sort_values()
    n = len(s)
    lo, hi = (n - 1) // 2, n // 2
    return {
        "n": n,
        "median": float((s.iloc[lo] + s.iloc[hi]) / 2),
        "lo": float(s.iloc[lo]),
        "hi": float(s.iloc[hi]),
        "lo_id": s.index[lo],
        "hi_id": s.index[hi],
    }


def goal(e: pd.Series) -> str:
    """``median |e| / p90 |e| / median e`` in % (the goal table's three figures)."""
    a = e.abs() * 100
    return f"{a.median():.1f} / {np.percentile(a, 90):.1f} / {e.median() * 100:+.1f}" if len(e) else "—"


def by_sharding(rows: pd.DataFrame, engine: bool = False) -> pd.DataFrame:
    """Median signed error % and count of ``rows`` per decode-pool attention sharding (``none``: a row priced
    without a deployment, e.g. a frontier peak); with ``engine`` per engine too (the framework's first word)."""
    s = rows.deployment.map(lambda d: twin.sharding(d) if isinstance(d, str) and d else "none").rename("attn")
    keys = [s, rows.framework.astype(str).str.split().str[0].rename("engine")] if engine else [s]
    return rows.groupby(keys).error.agg(n="size", bias_pct=lambda e: round(float(e.median()) * 100, 1))


def scaled_adp(rows: pd.DataFrame, ratio: float) -> pd.Series:
    """The errors of ``rows`` with every attention-DP row's prediction times ``ratio``: (1 + e)·ratio − 1 there, e
    elsewhere (arithmetic for what a GB300-only attention-DP speed-up would do, not a term).

    >>> dep = "disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp8]"
    >>> tep = "disagg P 1x(attn TP4 DP1 · MoE TP4 EP1) + D 1x(attn TP4 DP1 · MoE TP4 EP1) [fp8]"
    >>> scaled_adp(pd.DataFrame({"deployment": [dep, tep], "error": [0.1, 0.1]}), 0.5).round(3).tolist()
    [-0.45, 0.1]
    """
    adp = rows.deployment.map(lambda d: isinstance(d, str) and twin.sharding(d) == "ADP")
    return rows.error.where(~adp, (1 + rows.error) * ratio - 1)


#: the columns of ``jalapeno validate --json -o FILE`` this script reads
NEED = ("source", "id", "system", "metric", "error", "split", "quality", "deployment", "framework")


def read_validate(csv: str) -> pd.DataFrame:
    """``csv`` as written by ``jalapeno validate --json -o FILE``; one clear error naming the file and the fix when it
    is missing or lacks a column this script reads (:data:`NEED`)."""
    fix = "write it with `jalapeno validate --json -o FILE`, every row"
    try:
        df = pd.read_csv(csv)
    except (FileNotFoundError, pd.errors.EmptyDataError) as err:
        raise SystemExit(f"{csv}: cannot read it ({err.__class__.__name__}) (fix: {fix})") from None
    missing = sorted(set(NEED) - set(df.columns))
    if missing:
        raise SystemExit(f"{csv}: missing column(s) {missing} (fix: {fix})")
    return df


def part1(csv: str) -> None:
    df = read_validate(csv)
    groups = (
        ("aiconfigurator", "gb300-nvl72", "tpot_s"),
        ("inferencex", "gb200-nvl72", "throughput_per_chip"),
        ("aiconfigurator", "gb200-nvl72", "tpot_s"),
    )
    for src, system, metric in groups:
        rows = judged(df[(df.source == src) & (df.system == system) & (df.metric == metric)]).set_index("id")
        p = median_parts(rows.error)
        print(
            f"== {src} {system} {metric}, held out: n {p['n']}, bias {p['median'] * 100:+.2f}% = mean of "
            f"{p['lo'] * 100:+.2f}% ({p['lo_id']}) and {p['hi'] * 100:+.2f}% ({p['hi_id']})"
        )
        print(by_sharding(rows.reset_index()).to_string())
        print(by_sharding(rows.reset_index(), engine=True).to_string(), "\n")
    print("== GB300 / GB200 twins (scripts/gb300_twin_check.py, every split)")
    summary = twin.twin_summary(twin.twins(csv))
    print(summary.to_string(), "\n")
    ratio = summary.loc["ADP", "measured_ratio"] / summary.loc["ADP", "model_ratio"]
    rows = judged(df[(df.source == "aiconfigurator") & (df.system == "gb300-nvl72") & (df.metric == "tpot_s")])
    e = scaled_adp(rows, ratio)
    print(
        f"== arithmetic: GB300's attention-DP predictions x {ratio:.3f} (twins' measured / modelled ratio), held-out "
        f"TPOT bias {rows.error.median() * 100:+.1f} -> {e.median() * 100:+.1f}%, median |error| "
        f"{rows.error.abs().median() * 100:.1f} -> {e.abs().median() * 100:.1f}%\n"
    )


def fits_with_rank_cost(acceptance: float, full: bool = False, rank: bool = True) -> dict:
    """The shipped data/stack_fits.toml with ``dynamo-trtllm`` given the ``trtllm`` profile's fitted
    ``tp_rank_step_s`` (``full``: every fitted step cost of that profile, its per-kernel and per-step costs too;
    ``rank`` False: none, the shipped step costs) and ``acceptance`` for every draft length (DeepSeek-R1)."""
    with resources.files("jalapeno.data").joinpath("stack_fits.toml").open("rb") as f:
        fits = tomllib.load(f)["fits"]
    theirs = fits[RANK_PROFILE]["values"]
    mine = dict(fits[PROFILE])
    carried = theirs if full else ({"tp_rank_step_s": theirs["tp_rank_step_s"]} if rank else {})
    mine["values"] = {**mine.get("values", {}), **carried}
    mine["mtp_acceptance"] = {"deepseek-r1": {"single": acceptance, "chain": acceptance}}
    return {**fits, PROFILE: mine}


def acceptance_loss(rows: pd.DataFrame) -> float:
    """fit/stack_fit._mtp_fit's loss on a validation frame: mean |log(predicted / measured)| of the TPOT of the
    Dynamo-TRT DeepSeek-R1 rows with MTP in the fit split."""
    t = rows[
        (rows.framework == "dynamo-trt")
        & (rows.model == "deepseek-r1")
        & (rows.metric == "tpot_s")
        & (rows.split == "fit")
        & rows.deployment.astype(str).str.contains("MTP")
        & rows.predicted.notna()
    ]
    return float(np.mean(np.abs(np.log(t.predicted / t.measured)))) if len(t) else float("nan")


def part2(full: bool = False) -> None:
    from jalapeno.fit.validation_run import run_validation

    runs = {"shipped": run_validation(use_aiconfigurator=False)["rows"]}
    tag = "full" if full else "rank"
    for a in GRID:
        runs[f"{tag}@{a}"] = run_validation(use_aiconfigurator=False, stack_fits=fits_with_rank_cost(a, full))["rows"]
    check = {
        a: acceptance_loss(
            run_validation(use_aiconfigurator=False, stack_fits=fits_with_rank_cost(a, rank=False))["rows"]
        )
        for a in GRID
    }
    print(
        "== the emulated acceptance fit on the shipped step costs (its argmin should be the shipped acceptance): "
        + ", ".join(f"{a} {v:.4f}" for a, v in check.items())
    )
    print(
        "== acceptance-fit loss (fit split, Dynamo-TRT DeepSeek-R1 MTP TPOT): "
        + ", ".join(f"{k} {acceptance_loss(r):.4f}" for k, r in runs.items())
    )
    gb = {
        k: r[
            (r.system == "gb200-nvl72")
            & (r.framework == "dynamo-trt")
            & r.metric.isin(["throughput_per_chip", "tpot_s"])
        ].set_index(["id", "metric"])
        for k, r in runs.items()
    }
    table = pd.DataFrame({k: g.error for k, g in gb.items()})
    table.insert(0, "split", gb["shipped"].split)
    print("\n== InferenceX GB200 Dynamo-TRT rows, error % by variant")
    print((table.set_index("split", append=True) * 100).round(1).sort_index(level=[1, 0]).to_string())
    print("\n== InferenceX goal groups, median |e| / p90 / bias %")
    for metric in ("throughput_per_chip", "tpot_s", "interactivity"):
        for system in ("ALL", "gb200-nvl72", "b200"):
            for scope, pick in (("all", lambda r: r[r.error.notna()]), ("held out", judged)):
                parts = []
                for k, r in runs.items():
                    g = pick(r[(r.source == "inferencex") & (r.metric == metric)])
                    g = g if system == "ALL" else g[g.system == system]
                    parts.append(f"{k} {goal(g.error)} (n {len(g)})")
                print(f"{metric:20s} {system:12s} {scope:8s} " + " | ".join(parts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="jalapeno validate --json -o FILE (every row)")
    ap.add_argument("--rank-cost", action="store_true", help="Part 2: the per-rank host cost what-if")
    ap.add_argument("--full", action="store_true", help="Part 2 with every fitted step cost of the trtllm profile")
    args = ap.parse_args()
    part1(args.csv)
    if args.rank_cost or args.full:
        part2(args.full)


if __name__ == "__main__":
    main()
