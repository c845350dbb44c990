"""What-if: the overlap loop's admission lag built into the model (serve/overlap_loop.py) and switched on for chosen stacks; validate against a baseline (issue 18, round 38, sgllag38).

The mechanism ships on the CUDA ``sglang`` profile only (round 40, frontend40; ``Efficiency.admission_lag_steps`` 0 elsewhere). This script sets
``admission_lag_steps`` on the named software-stack profiles (default ``sglang`` and ``sglang-rocm``: SGLang's
``Scheduler.event_loop_overlap``, one step; ``--trtllm``: TensorRT-LLM's ``PyExecutor._executor_loop_overlap``, the
same read-launch-then-wait structure, kept with MTP: ``admission_lag_with_mtp`` set too; round 38 trtlag38), runs ``jalapeno validate --json`` in this process with them,
and prints per source x system x metric the median |error|, p90 |error| and bias before (``BASE``, a ``jalapeno validate
--json -o BASE.csv`` output of the same tree with the mechanism off) and after, on every row and on the held-out
judgement's rows (not in the fit split, no data-quality flag), with the goals each group meets before and after
(TTFT median <= 20%; interactivity / throughput per chip / TPOT median <= 8%; p90 <= 25%; bias within +-5%).

The stack fits (data/stack_fits.toml) are left as shipped: ``scripts/fit_stacks.py`` rerun with the SGLang lag on
returns the same front end (0.0875 s + 17.5 us per prompt token; only the ``inferencex-db`` client entry moves,
0.1375 s + 1.25 us/token -> 0.125 s + 2.5 us/token, on rows no held-out group contains), so the refit changes nothing
the figures below judge (docs/gap_aic_ttft.md, round 38 sgllag38).

``--rocm-front A,B`` also gives ``sglang-rocm`` its own InferenceX front end, A s + B s per prompt token, in place of
the one it borrows from ``sglang`` (fit/stack_fit.SAME_SERVER; round 39 ixttft39; ``--steps 0`` prices it alone).

Run: python scripts/sgl_admission_lag38b.py BASE.csv [--trtllm | --stacks a,b] [--rocm-front A,B] [-o AFTER.csv]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import tempfile
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd

import jalapeno.specs.stacks as stacks_mod

SGLANG = ("sglang", "sglang-rocm")
TRTLLM = ("trtllm", "dynamo-trtllm")
#: issue 18's goals per metric: (median |error| limit, p90 limit, |bias| limit), fractions
GOALS = {
    "ttft_s": (0.20, None, None),
    "interactivity": (0.08, 0.25, 0.05),
    "throughput_per_chip": (0.08, 0.25, 0.05),
    "tpot_s": (0.08, 0.25, 0.05),
}


def with_lag(names: tuple[str, ...], steps: float = 1.0, with_mtp: bool = False, rocm_front=None) -> None:
    """Make every later profile lookup return the profiles ``names`` with ``admission_lag_steps`` = ``steps`` (and
    ``admission_lag_with_mtp`` = ``with_mtp``: True for TensorRT-LLM, whose one-model MTP keeps the overlap loop);
    ``rocm_front`` (s, s per prompt token), if given: ``sglang-rocm``'s InferenceX front end (its ``inferencex`` client
    entry) instead of the one it borrows from ``sglang`` (round 39 what-if, docs/gap_aic_ttft.md ixttft39)."""
    build = stacks_mod.build_stacks

    def patched(fits):
        out = dict(build(fits))
        for n in names:
            out[n] = dataclasses.replace(
                out[n], admission_lag_steps=float(steps), admission_lag_with_mtp=with_mtp or None
            )
        if rocm_front is not None:
            rocm = out["sglang-rocm"]
            entry = {
                **rocm.clients.get("inferencex", {}),
                "request_overhead_s": float(rocm_front[0]),
                "prompt_overhead_s_per_token": float(rocm_front[1]),
            }
            out["sglang-rocm"] = dataclasses.replace(
                rocm, clients=MappingProxyType({**rocm.clients, "inferencex": entry})
            )
        return type(build(fits))(out)

    stacks_mod.build_stacks = patched
    stacks_mod.load_stacks.cache_clear()


def judged(df: pd.DataFrame) -> pd.DataFrame:
    """The held-out judgement's rows: not in the fit split and no data-quality flag."""
    q = df["quality"].fillna("").astype(str)
    return df[(df["split"] != "fit") & (q == "")]


def stats(err: pd.Series) -> tuple[int, float, float, float]:
    """n, median |error|, p90 |error|, median error (fractions)."""
    e = err.dropna().to_numpy(dtype=float)
    if not len(e):
        return 0, np.nan, np.nan, np.nan
    return len(e), float(np.median(np.abs(e))), float(np.percentile(np.abs(e), 90)), float(np.median(e))


def misses(metric: str, s: tuple) -> str:
    """The goals a group's (n, median, p90, bias) misses: ``med``, ``p90``, ``bias``."""
    med, p90, bias = GOALS.get(metric, (None, None, None))
    out = [
        name
        for name, lim, v in (("med", med, s[1]), ("p90", p90, s[2]), ("bias", bias, abs(s[3])))
        if lim is not None and v > lim
    ]
    return ",".join(out)


def compare(base: pd.DataFrame, after: pd.DataFrame) -> list[str]:
    """Per source x system x metric, groups whose figures move: before -> after, every row and held out."""
    key = ["source", "id", "metric"]
    m = base.merge(after[key + ["predicted", "error"]], on=key, suffixes=("", "_after"))
    moved_groups = set(
        map(
            tuple,
            m.loc[(m["predicted_after"] / m["predicted"] - 1).abs() > 1e-9, ["source", "system"]]
            .drop_duplicates()
            .to_numpy(),
        )
    )
    lines = []
    for label, rows in (("every row", m), ("held out", judged(m))):
        lines.append(f"## {label} (median / p90 / bias, %; goals missed)")
        for (src, sy, metric), g in rows.groupby(["source", "system", "metric"]):
            if (src, sy) not in moved_groups and sy != "ALL":
                continue
            b, a = stats(g["error"]), stats(g["error_after"])
            if np.allclose(b[1:], a[1:], equal_nan=True, atol=5e-4):
                continue
            lines.append(
                f"{src:15s} {sy:12s} {metric:20s} n {b[0]:4d}  {b[1] * 100:5.1f} / {b[2] * 100:5.1f} / "
                f"{b[3] * 100:+5.1f} [{misses(metric, b)}]  ->  {a[1] * 100:5.1f} / {a[2] * 100:5.1f} / "
                f"{a[3] * 100:+5.1f} [{misses(metric, a)}]"
            )
        for (src, metric), g in rows.groupby(["source", "metric"]):
            b, a = stats(g["error"]), stats(g["error_after"])
            lines.append(
                f"{src:15s} {'ALL':12s} {metric:20s} n {b[0]:4d}  {b[1] * 100:5.1f} / {b[2] * 100:5.1f} / "
                f"{b[3] * 100:+5.1f}  ->  {a[1] * 100:5.1f} / {a[2] * 100:5.1f} / {a[3] * 100:+5.1f}"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("base", help="`jalapeno validate --json -o BASE.csv` with the mechanism off")
    ap.add_argument("--stacks", default=",".join(SGLANG), help="profiles to give the lag (comma separated)")
    ap.add_argument(
        "--trtllm", action="store_true", help="the TensorRT-LLM profiles instead (kept with MTP; what-if only)"
    )
    ap.add_argument("--steps", type=float, default=1.0, help="steps of lag (1: an overlap loop's)")
    ap.add_argument(
        "--rocm-front", help="A,B: sglang-rocm's InferenceX front end, A s + B s per prompt token (what-if)"
    )
    ap.add_argument("-o", "--out", help="write the what-if validate CSV here")
    a = ap.parse_args(argv)
    names = TRTLLM if a.trtllm else tuple(s for s in a.stacks.split(",") if s)
    front = tuple(float(x) for x in a.rocm_front.split(",")) if a.rocm_front else None
    with_lag(names, a.steps, with_mtp=a.trtllm, rocm_front=front)
    out = a.out or str(Path(tempfile.mkdtemp()) / "after.csv")
    from jalapeno.cli.app import main as cli

    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the JSON summary: the CSV holds the rows
            cli(["validate", "--json", "-o", out])
    except SystemExit as e:  # the CLI exits after writing
        if e.code not in (0, None):
            return int(e.code)
    print(f"admission lag {a.steps:g} step(s) on {', '.join(names)}; after: {out}\n")
    print("\n".join(compare(pd.read_csv(a.base), pd.read_csv(out))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
