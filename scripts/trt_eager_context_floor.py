"""TensorRT-LLM's eager context step: the low-load TTFT floor B200 DeepSeek-R1 pays and gpt-oss-120b / Llama-3.3-70B do not (issue 18, round 26; diagnosis, nothing shipped).

aiconfigurator's B200 TensorRT-LLM aggregated rows (fit/validate.load_aiconfigurator, InferenceX exports) are split
into the model's parts by scripts/aic_ttft_split.predict_parts: ``lone`` (one prompt on an idle engine: its prefill
step and half a decode step), ``load`` (what the row's load adds on the accelerator), ``front`` (the client's fitted
front end, data/stack_fits.toml ``clients.inferencex-db``: 0.075 s + 0.625 µs per prompt token) and ``burst`` (the
idle-start wave). The residual ``resid`` = measured − lone − load − burst is what the front end has to carry.

TensorRT-LLM's PyTorch executor replays CUDA graphs for generation-only batches; a step that carries a prompt runs
eagerly unless the launch script turns on piecewise CUDA graphs (``torch_compile_config.enable_piecewise_cuda_graph``;
TensorRT-LLM docs/source/features/torch_compile_and_piecewise_cuda_graph.md: piecewise graphs "primarily benefit
host-bound iterations in the context phase"; serve/limits.py cites ``can_run_cuda_graph``). The InferenceX DeepSeek-R1
scripts of 2026-01/02 turn it on for some (ISL, OSL, CONC, layout) cells only (:data:`PIECEWISE_RULES`, read at the
commits named there; fit/trt_prompt_graphs.py since eagerfit26), so rows of one deployment at one load differ in that flag alone: the natural experiment this
script prints. It prints, for the rows at C <= 8: the residual by model, release, ISL and MTP; the prompt-step time
each DeepSeek-R1 row implies once a small front end is taken off (:func:`implied_step_s`), beside the model's lone
prompt; the pairs with piecewise graphs on and off; and a what-if (nothing written): the front end refitted on the
gpt-oss-120b and Llama-3.3-70B rows and DeepSeek-R1's eager prompt step priced max(H, lone), H fitted, both on the
even rows of a declared split (rows sorted by id), reported on the odd rows.
Run: python scripts/trt_eager_context_floor.py   (about two minutes)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

#: the launch-script rule of piecewise CUDA graphs, the rows and the declared split of the eager call-rate fit live in
#: the package (fit/trt_prompt_graphs.py: where rows are built, and validate's ``split`` column reads the split)
from jalapeno.fit.trt_prompt_graphs import (  # noqa: E402,F401
    EAGER_FIT_MAX_CONCURRENCY,
    PIECEWISE_RULES,
    eager_call_split,
    eager_fit_rows,
    piecewise_on,
)

#: the concurrency up to which a row counts as low load (the burst and the steady queue are a few ms)
LOW_LOAD = EAGER_FIT_MAX_CONCURRENCY


def implied_step_s(measured, load, burst, front_s):
    """The prompt step (plus its half decode step) a row implies: measured − load − burst − front end (s, arrays).

    >>> float(implied_step_s(0.16, 0.001, 0.003, 0.026))
    0.13
    """
    return np.asarray(measured, float) - np.asarray(load, float) - np.asarray(burst, float) - np.asarray(front_s, float)


def floored(lone, host_s, eager):
    """The lone prompt's accelerator time with an eager prompt step's host floor: max(host_s, lone) where ``eager``,
    else lone (s, arrays).

    >>> floored(np.array([0.03, 0.15, 0.03]), 0.13, np.array([True, True, False])).round(3).tolist()
    [0.13, 0.15, 0.03]
    """
    lone = np.asarray(lone, float)
    return np.where(eager, np.maximum(lone, host_s), lone)


def _stat(e: pd.Series) -> str:
    e = e.dropna()
    return f"{e.abs().median():.1%} / {e.median():+.1%} n{len(e)}" if len(e) else "-"


def frame() -> pd.DataFrame:
    """The B200 TensorRT-LLM aggregated rows of the three models (fit/trt_prompt_graphs.eager_fit_rows) with their
    parts and keys; ``split``: the eager call-rate fit's declared split (fit/trt_prompt_graphs.eager_call_split:
    ``fit`` / ``held_out`` / ``none`` for the rows at C <= :data:`LOW_LOAD`, NaN above)."""
    from aic_ttft_split import parts, predict_parts

    from jalapeno.fit.client_warmup import aic_row_dates
    from jalapeno.fit.validate import load_aiconfigurator

    points, _ = load_aiconfigurator()
    sel = eager_fit_rows(points)
    df = predict_parts(sel)
    df = df[df.full.notna() & df.measured_ttft_s.notna()].copy()
    df = df.assign(**parts(df.full, df.noburst, df.bare, df.lone), m=df.measured_ttft_s)
    by_id = {p.id: p for p in sel}
    dates = aic_row_dates()
    lay = [by_id[i].deployment.decode.layout for i in df.index]
    df["release"] = [(by_id[i].framework.split() + ["unstated"])[1] for i in df.index]
    df["mtp"] = [by_id[i].deployment.mtp is not None for i in df.index]
    df["tp"], df["dp"], df["ep"] = [x.tp for x in lay], [x.dp for x in lay], [x.ep for x in lay]
    df["warm"] = [dates.get(i, "") >= "2026-01-21" for i in df.index]
    df["piecewise"] = [
        piecewise_on(r.precision, r.release, r.mtp, r.isl, r.osl, r.conc, r.tp * r.dp, r.ep, r.dp > 1)
        for r in df.itertuples()
    ]
    df["resid"] = df.m - df.lone - df.load - df.burst
    df["split"] = pd.Series(eager_call_split(points), dtype=object)
    return df.sort_index()


def fit_front(low: pd.DataFrame) -> tuple[float, float]:
    """a, b of a front end a + b·ISL with the least median |log(predicted/measured)| over ``low`` (rows without the
    eager floor), grid a 0..0.1 s by 2.5 ms, b 0..8 µs by 0.25 µs."""
    best = (np.inf, 0.0, 0.0)
    for a in np.arange(0, 0.1001, 0.0025):
        for b in np.arange(0, 8.01e-6, 0.25e-6):
            pred = low.full - low.front + a + b * low.isl
            err = float(np.median(np.abs(np.log(pred / low.m))))
            if err < best[0]:
                best = (err, float(a), float(b))
    return best[1], best[2]


def main() -> None:
    pd.set_option("display.width", 250)
    pd.set_option("display.max_rows", 300)
    df = frame()
    low = df[df.conc <= LOW_LOAD].copy()
    print(f"== C <= {LOW_LOAD}: median residual (measured - lone - load - burst), s, and the model's lone prompt")
    print(
        low.groupby(["model", "release", "precision", "mtp", "isl"])
        .agg(
            n=("m", "size"),
            measured=("m", "median"),
            lone=("lone", "median"),
            resid=("resid", "median"),
            error=("full", lambda s: np.median(s / low.loc[s.index, "m"] - 1)),
        )
        .round(3)
        .to_string()
    )
    dsr = low[(low.model == "deepseek-r1") & low.warm & ~low.piecewise]
    print(
        "\n== warm DeepSeek-R1 rows without piecewise graphs: the prompt step implied with a 20 ms + 2.5 µs/token "
        "front end (gpt-oss-120b's residual), s"
    )
    imp = dsr.assign(implied=implied_step_s(dsr.m, dsr.load, dsr.burst, 0.02 + 2.5e-6 * dsr.isl))
    print(
        imp.groupby(["precision", "mtp", "isl", "tp"])
        .agg(n=("m", "size"), lone=("lone", "median"), implied=("implied", "median"))
        .round(3)
        .to_string()
    )
    print("\n== the same deployment and load with piecewise CUDA graphs on and off (the script's flag), s")
    keys = ["precision", "release", "mtp", "tp", "dp", "ep", "isl", "conc"]
    d = df[df.model == "deepseek-r1"]
    for k, g in d.groupby(keys):
        if g.piecewise.nunique() == 2:
            on, off = g[g.piecewise], g[~g.piecewise]
            print(
                dict(zip(keys, k)),
                f"on (OSL {on.osl.tolist()}): measured {on.m.median():.3f} model "
                f"{on.full.median():.3f} resid {on.resid.median():.3f} | off (OSL {off.osl.tolist()}): measured "
                f"{off.m.median():.3f} model {off.full.median():.3f} resid {off.resid.median():.3f}",
            )
    # what-if on the low-load rows: the declared split (fit/trt_prompt_graphs.eager_call_split: rows sorted by id, even
    # rows fit — warm DeepSeek-R1 for H, the other models for the front end —, odd rows held out)
    fit = low[low.split == "fit"]
    a, b = fit_front(fit[fit.model != "deepseek-r1"])
    eager = (low.model == "deepseek-r1") & ~low.piecewise
    base = low.full - low.front + a + b * low.isl - low.lone

    def err(h):
        return (base + floored(low.lone, h, eager)) / low.m - 1

    grid = np.arange(0.0, 0.3001, 0.005)
    fd = (low.split == "fit") & (low.model == "deepseek-r1")
    h = float(grid[int(np.argmin([np.median(np.abs(np.log1p(err(x)[fd]))) for x in grid]))])
    new = err(h)
    print(
        f"\n== what-if (C <= {LOW_LOAD}; fit on even rows: front end {a * 1e3:.1f} ms + {b * 1e6:.2f} µs/token on "
        f"gpt-oss-120b and Llama-3.3-70B, H = {h * 1e3:.0f} ms on warm DeepSeek-R1): shipped -> what-if, held out"
    )
    for key, g in low.groupby(["model", "warm"]):
        ho = g[g.split == "held_out"]
        print(
            key,
            f"all {_stat(g.full / g.m - 1)} -> {_stat(new[g.index])}; held out {_stat(ho.full / ho.m - 1)} -> "
            f"{_stat(new[ho.index])}",
        )


if __name__ == "__main__":
    main()
