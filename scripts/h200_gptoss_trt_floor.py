"""H200 gpt-oss-120b on TensorRT-LLM (TRITON MoE backend): is the aggregated TTFT gap an eager host floor, and how many host calls per layer does the TRITON path need to carry it? (issue 18, round 27, h200ttft27; the count ships in cost/host_calls.py).

The eager prompt floor (round 26, eagerfit26: cost/host_calls.py, max(host calls × 24 µs, GPU) on every
TensorRT-LLM step that carries a prompt) counted the MoE layer on the TRTLLM and CUTLASS paths only; the H200
gpt-oss-120b launch script (InferenceX ``gptoss_fp4_h200_trt.sh`` @e28c038f8) runs ``moe_config.backend: TRITON``, so
those rows had no floor until round 27 counted that path (cost/host_calls.TRITON_MOE). This script splits every H200
and B200 gpt-oss-120b TensorRT-LLM aggregated row with the floor switched off (``eager_prompt_call_s`` = 0, so
``lone`` is the GPU-only prompt step) by scripts/aic_ttft_split.predict_parts (``lone`` = one prompt on an idle
engine, ``load``, ``burst``, ``front`` = the client front end) and prints, by chip, ISL, TP and warm / cold (the
client warm-up of 2026-01-21, fit/client_warmup.py):

1. the implied prompt step, measured − front − load − burst (s), against the model's GPU-only ``lone`` step;
2. the max-or-sum check (scripts/trt_eager_host_calls.sum_or_max): the 8k step predicted from the 1k rows by a host
   floor that runs ahead, max(H, G_8k), and by one that adds, H + G_8k − G_1k;
3. the host calls per decoder layer a floor H = implied 1k step needs at the shipped rate
   (``fit.trt_prompt_graphs.TRTLLM_EAGER_CALL_S``), and the excess over the counted TRTLLM-path layer
   (cost/host_calls.GQA_MOE = 16), beside the shipped TRITON layer count (cost/host_calls.layer_host_calls with
   ``moe_backend="triton"``: 65, every call with its source in cost/host_calls.TRITON_MOE_CALLS).

Run: python scripts/h200_gptoss_trt_floor.py   (about 5 s)
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trt_eager_context_floor import _stat  # noqa: E402  (median |error| / bias / n, as that script prints)

#: The low-load cut of round 26's floor checks (scripts/trt_eager_context_floor.LOW_LOAD).
LOW_LOAD = 8


def needed_calls_per_layer(implied_s: float, call_s: float, layers: int) -> float:
    """Host calls per decoder layer a floor of ``implied_s`` seconds needs at ``call_s`` seconds a call.

    >>> round(needed_calls_per_layer(0.0576, 24e-6, 36), 1)
    66.7
    """
    return implied_s / call_s / layers


def frame() -> pd.DataFrame:
    """The gpt-oss-120b TensorRT-LLM aggregated rows of H200 and B200 with their parts, TP and warm flag."""
    from aic_ttft_split import parts, predict_parts

    from jalapeno.fit.aic_quality import aic_source_flags, aic_ttft_flags
    from jalapeno.fit.client_warmup import aic_row_dates
    from jalapeno.fit.validate import load_aiconfigurator

    points, _ = load_aiconfigurator()
    flagged = set(aic_ttft_flags(points)) | set(aic_source_flags(points))
    sel = [
        dataclasses.replace(p, deployment=dataclasses.replace(p.deployment, eager_prompt_call_s=0.0))
        for p in points
        if p.system in ("h200", "b200")
        and p.mode == "agg"
        and p.model == "gpt-oss-120b"
        and p.framework.split()[0] == "trtllm"
        and p.id not in flagged
    ]
    df = predict_parts(sel)
    df = df[df.full.notna() & df.measured_ttft_s.notna()].copy()
    df = df.assign(**parts(df.full, df.noburst, df.bare, df.lone), m=df.measured_ttft_s)
    by_id = {p.id: p for p in sel}
    dates = aic_row_dates()
    df["tp"] = [by_id[i].deployment.decode.layout.tp for i in df.index]
    df["release"] = [(by_id[i].framework.split() + ["unstated"])[1] for i in df.index]
    df["warm"] = [dates.get(i, "") >= "2026-01-21" for i in df.index]
    df["implied"] = df.m - df.front - df.load - df.burst
    return df.sort_index()


def main() -> None:
    from trt_eager_host_calls import sum_or_max

    from jalapeno.cost.host_calls import GQA_MOE, layer_host_calls
    from jalapeno.fit.trt_prompt_graphs import TRTLLM_EAGER_CALL_S as C
    from jalapeno.specs.catalog import load_model

    layers = load_model("gpt-oss-120b").num_layers
    df = frame()
    print("== by chip, ISL, TP, warm (C <= %d): TTFT error | lone (model GPU) | implied step | front, s" % LOW_LOAD)
    low = df[df.conc <= LOW_LOAD]
    for key, g in low.groupby(["system", "isl", "tp", "warm"]):
        print(
            f"  {key}: {_stat(g.full / g.m - 1)} | lone {g.lone.median():.4f} | implied {g.implied.median():.4f} |"
            f" front {g.front.median():.4f}"
        )
    print("\n== every load: TTFT error by chip, ISL, C")
    for key, g in df.groupby(["system", "isl", "conc"]):
        print(f"  {key}: {_stat(g.full / g.m - 1)}; implied - lone {(g.implied - g.lone).median():+.4f} s")

    print(
        f"\n== max or sum (C <= {LOW_LOAD}), and the calls per layer the 1k implied step needs at "
        f"{C * 1e6:.0f} µs a call ({layers} layers; TRTLLM path counted {GQA_MOE})"
    )
    g = low.groupby(["system", "isl", "tp"]).agg(lone=("lone", "median"), implied=("implied", "median"))
    for (system, tp), _ in g.groupby(level=["system", "tp"]):
        try:
            a, b = g.loc[(system, 1024, tp)], g.loc[(system, 8192, tp)]
        except KeyError:
            continue
        mx, sm = sum_or_max(a.lone, a.implied, b.lone, b.implied)
        need = needed_calls_per_layer(a.implied, C, layers)
        print(
            f"  {system} TP{tp}: 1k implied {a.implied:.4f} (lone {a.lone:.4f}); 8k implied {b.implied:.4f} "
            f"(lone {b.lone:.4f}): max(H, G) {mx:.4f}, H + G {sm:.4f}; needs {need:.0f} calls/layer "
            f"({need - GQA_MOE:+.0f} over the TRTLLM count)"
        )
    tri = layer_host_calls(load_model("gpt-oss-120b"), True, True, "triton")
    print(
        f"\n== shipped TRITON layer count (cost/host_calls.TRITON_MOE): {tri} calls a layer, {tri * layers} a step"
        f" = {tri * layers * C * 1e3:.1f} ms at {C * 1e6:.0f} µs"
    )
    print("\n== H200 rows at C <= 8 by release and warm:")
    h = low[low.system == "h200"]
    print(
        h.groupby(["release", "warm", "isl"])
        .agg(n=("m", "size"), implied=("implied", "median"), lone=("lone", "median"))
        .to_string()
    )


if __name__ == "__main__":
    main()
