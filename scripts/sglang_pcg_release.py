"""What-if: SGLang's prompt steps priced by release (docs/gap_aic_itl.md, "round 32, sglrel32"); not shipped.

SGLang graphs prompt steps (piecewise CUDA graphs) by default from 0.5.10; before, a prompt step runs eagerly
(fit/sglang_prompt_graphs.py: the rule, read from the 0.5.9 / 0.5.10 / 0.5.12 wheels). Under an MLA backend the graphs
cover prompt steps of <= 2048 tokens, so an 8k prompt is eager in every release. The what-if prices an eager prompt
step as max(host calls x 24 us, GPU), TensorRT-LLM's counted calls and fitted rate (serve/limits.prompt_floor_s, the
context-only calls: ``Deployment.eager_prompt_alone``), on every row the rule reaches: DeepSeek-R1, aggregated, no MTP,
TP without attention DP or EP, NVIDIA, a stated or recipe release (InferenceX rows and aiconfigurator's). The stack
fits are not rerun here (round 32 reran scripts/fit_stacks.py with the rule wired in: the ``sglang`` profile's
fitted values did not move, only the ``inferencex-db`` client's prompt_overhead_s_per_token, 0.625 -> 3.125 us).

Part 1: per (source, system, release, ISL/OSL), the rows' median |error| and median error (%) of interactivity,
TPOT and TTFT, as shipped and with the rule. Part 2: the H200 DeepSeek-R1 FP8 SGLang TP8 EP1 ladder of one launch
script (InferenceX v0.5.7 rows 81-84 and v0.5.12 rows 56-65, aiconfigurator's 0.5.9-cu130 rows; round 31's
scripts/h200_release_ladder.py) with the rule: measured TPOT / TTFT per release (ms), the measured release step
(older release minus v0.5.12) beside the modelled one (the predictions differ by release only through the floor;
the aiconfigurator rows' TTFT also by their client's front end, so the TTFT step is the InferenceX v0.5.7 rows'
only), and each row's interactivity error (%). Part 3: the floor of one eager prompt step of the H200 recipe.

Usage: python scripts/sglang_pcg_release.py [--points POINTS_CSV]   (needs aiconfigurator-core; about a minute)
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from jalapeno.fit.sglang_prompt_graphs import MODELS, prompt_steps_eager, with_sglang_prompt_graphs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from h200_release_ladder import POINTS, point_releases  # noqa: E402

RELEASES = ("0.5.7", "0.5.9", "0.5.12")
NEWEST = "0.5.12"


def h200_rows(d: pd.DataFrame, rel_of_id: dict[str, str]) -> pd.DataFrame:
    """The H200 DeepSeek-R1 SGLang TP8 EP1 aggregated rows of a validate frame with a ``rel`` column (the release:
    an aiconfigurator row's framework, an InferenceX row's note through ``rel_of_id``), releases of :data:`RELEASES`."""
    d = d[
        (d.system == "h200")
        & (d.model == "deepseek-r1")
        & d.framework.str.contains("sglang")
        & (d["mode"] == "agg")
        & d.deployment.str.contains("attn TP8 DP1 · MoE TP8 EP1", regex=False)
        & d.quality.isna()
    ].copy()
    fw = d.framework.str.extract(r"sglang (\d+\.\d+\.\d+)")[0]
    d["rel"] = np.where(d.source == "aiconfigurator", fw, d.id.map(rel_of_id))
    return d[d.rel.isin(RELEASES)]


def release_steps(d: pd.DataFrame) -> pd.DataFrame:
    """Per (ISL, OSL, C): measured and modelled TPOT / TTFT (ms) per release, the steps older − :data:`NEWEST`
    (measured and modelled), the interactivity error (%) and split per release. ``d``: :func:`h200_rows`."""
    rows = []
    for (isl, osl, c), g in d.groupby(["isl", "osl", "concurrency"]):
        r = {"isl": int(isl), "osl": int(osl), "C": int(c)}
        for rel in RELEASES:
            gr = g[g.rel == rel]
            for m, key in (("tpot_s", "tpot"), ("ttft_s", "ttft")):
                x = gr[gr.metric == m]
                r[f"{key} {rel}"] = x.measured.mean() * 1e3 if len(x) else np.nan
                r[f"{key} model {rel}"] = x.predicted.mean() * 1e3 if len(x) else np.nan
            i = gr[gr.metric == "interactivity"]
            r[f"int err {rel}"] = i.error.mean() * 100 if len(i) else np.nan
            r[f"split {rel}"] = ",".join(sorted(set(i.split.astype(str)))) if len(i) and "split" in i else ""
        for old in RELEASES[:-1]:
            r[f"tpot step {old} meas"] = r[f"tpot {old}"] - r[f"tpot {NEWEST}"]
            r[f"tpot step {old} model"] = r[f"tpot model {old}"] - r[f"tpot model {NEWEST}"]
        r["ttft step 0.5.7 meas"] = r["ttft 0.5.7"] - r[f"ttft {NEWEST}"]
        r["ttft step 0.5.7 model"] = r["ttft model 0.5.7"] - r[f"ttft model {NEWEST}"]
        rows.append(r)
    return pd.DataFrame(rows)


def row_release(p) -> str:
    """The SGLang release a row ran: an aiconfigurator row's framework label when it names one ("sglang 0.5.9"), else
    fit/validate.point_release (an InferenceX row's note, else its launch recipe's; that function reads an
    aiconfigurator row's recipe, not its label)."""
    from jalapeno.fit.aic_sweeps import release_stated
    from jalapeno.fit.validate import point_release

    if p.source == "aiconfigurator" and release_stated(p.framework):
        return p.framework.split()[-1]
    return point_release(p)


def _reached(points) -> list:
    """(point, floored point) for every point of ``points`` the rule reaches with a release, the floored one as
    fit/sglang_prompt_graphs.with_sglang_prompt_graphs prices it (unchanged where its prompt steps are graphed)."""
    out = []
    for p in points:
        if (
            p.framework.split()[:1] != ["sglang"]
            or p.model not in MODELS
            or p.deployment is None
            or p.deployment.prefill is not None
            or p.system.startswith("mi")
            or prompt_steps_eager(row_release(p), p.isl) is None
        ):
            continue
        dep, why = with_sglang_prompt_graphs(p.deployment, p.model, row_release(p), p.isl)
        out.append((p, replace(p, deployment=dep, notes=p.notes + [why]) if why else p))
    return out


def with_release(frame: pd.DataFrame, rel_of_id: dict[str, str]) -> pd.DataFrame:
    """``frame`` with a ``rel`` column: an aiconfigurator row's release from its framework, an InferenceX row's from
    ``rel_of_id`` (its note), else the framework's second word."""
    fw = frame.framework.str.extract(r"sglang (\d+\.\d+\.\d+\S*)")[0]
    ix = frame.id.map(rel_of_id)
    return frame.assign(rel=np.where(frame.source == "aiconfigurator", fw, ix.fillna(fw)))


def group_table(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Per (source, system, release, ISL/OSL, metric): n, median |error| and median error (%), shipped and with the
    rule. ``before`` / ``after``: validate-format frames of the same rows with a ``rel`` column."""
    keys = ["source", "id", "metric"]
    m = before.merge(after[keys + ["error"]], on=keys, suffixes=("_b", "_a"))
    m = m[m.metric.isin(["interactivity", "tpot_s", "ttft_s"]) & m.error_b.notna() & m.error_a.notna()]
    m = m.assign(lengths=m.isl.astype(int).astype(str) + "/" + m.osl.astype(int).astype(str))
    rows = []
    for k, g in m.groupby(["source", "system", "rel", "lengths", "metric"]):
        rows.append(
            dict(
                zip(["source", "system", "release", "ISL/OSL", "metric"], k),
                n=len(g),
                **{
                    "med |e| before": 100 * g.error_b.abs().median(),
                    "med |e| rule": 100 * g.error_a.abs().median(),
                    "med e before": 100 * g.error_b.median(),
                    "med e rule": 100 * g.error_a.median(),
                },
            )
        )
    return pd.DataFrame(rows)


def floors_ms(points: Path, row: str = "inferencex_points:84") -> tuple[float, float]:
    """(context-only, mixed) host floor of one eager prompt step, ms, of the deployment validate reads for ``row``
    (default: the v0.5.7 1k/1k C = 64 row, the H200 recipe's TP8 layout and MoE backend)."""
    from jalapeno.fit.sglang_prompt_graphs import EAGER_CALL_S
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.serve.limits import prompt_floor_s
    from jalapeno.specs.catalog import load_model

    dep = next(p.deployment for p in load_inferencex(points)[0] if p.id == row)
    ctx, mixed = prompt_floor_s(load_model("deepseek-r1"), replace(dep, eager_prompt_call_s=EAGER_CALL_S))
    return ctx * 1e3, mixed * 1e3


def main(argv: list[str]) -> None:
    from jalapeno.fit.validate import load_aiconfigurator, predict_points
    from jalapeno.fit.ix_points import load_inferencex

    points = Path(argv[argv.index("--points") + 1]) if "--points" in argv else POINTS
    pairs = _reached(load_inferencex(points)[0] + load_aiconfigurator()[0])
    rel_of_id = point_releases(points)
    before = with_release(predict_points([p for p, _ in pairs]), rel_of_id)
    after = with_release(predict_points([q for _, q in pairs]), rel_of_id)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_rows", 500)
    print(f"Part 1: {len(pairs)} rows the rule reaches ({sum(p is not q for p, q in pairs)} priced eager), % error")
    print(group_table(before, after).round(1).to_string(index=False))
    d = h200_rows(after.assign(quality=None), rel_of_id)
    steps = release_steps(d)
    cols = (
        ["isl", "osl", "C"]
        + [f"tpot {r}" for r in RELEASES]
        + [
            "tpot step 0.5.7 meas",
            "tpot step 0.5.7 model",
            "tpot step 0.5.9 meas",
            "tpot step 0.5.9 model",
            "ttft 0.5.7",
            f"ttft {NEWEST}",
            "ttft step 0.5.7 meas",
            "ttft step 0.5.7 model",
        ]
    )
    print("\nPart 2: H200 ladder with the rule: measured and modelled release steps, ms (older release - v0.5.12)")
    print(steps[cols].round(2).to_string(index=False))
    err = steps[["isl", "osl", "C"]].copy()
    for rel in RELEASES:
        err[rel] = steps[f"int err {rel}"].round(1)
    print("\ninteractivity error % per release, with the rule")
    print(err.to_string(index=False))
    ctx, mixed = floors_ms(points)
    print(
        f"\nPart 3: eager prompt-step host floor of the H200 recipe: context-only {ctx:.1f} ms (SGLang runs a prompt"
        f" step alone), mixed {mixed:.1f} ms (a step carrying the decodes too)"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
