"""MLPerf v5.1 TensorRT-LLM Server / Interactive rows: the step at the runs' own loads as a line in the decode batch,
and where the declared GEMM + all-reduce fusion's credit sits (issue 18; diagnosis only, docs/gap_large_batch_decode.md
"Round 44 (mlperfstep44)"). Nothing here changes a prediction.

It prints two tables:

- ``line``: for every TensorRT-LLM Llama row at its declared engine (``matched@limits``), the run's decode batch per
  instance (Little's law: output tok/s x mean TPOT, scripts/mlperf_interactive_tail37.measured_running), its mean TPOT
  and the model's at that batch (serve/analytic.aggregated_by_batch), with the fused GEMM + all-reduce as the row's
  config declares it (fit/mlperf_engines.MLPERF_GEMM_ALLREDUCE) and without (``load_mlperf(declared_fusion=False)``).
  For each (submitter, system, model) with an Interactive and a Server row, the straight line through the two points,
  measured and model: its intercept (ms a step at no load) and slope (ms per running request). The Server and
  Interactive engines of one system differ in their token budget and build flags, so the line is a reading, not a fit.
- ``credit``: for every row whose config declares ``gemm_allreduce_plugin``, the model's step at the run's decode batch
  with no prompt tokens and with a full prompt chunk (the step kinds serve/analytic.agg_plan prices), fused and not
  (cost/step.step_times), the waves W of the fused o_proj / down output tiles at each (cost/gemm_allreduce.gemm_allreduce_stages),
  the share f of steps that carry a chunk and the mean step's credit (1 - f) * decode-only credit + f * chunk credit.

Reading (round 44): (1) the fused credit is priced per layer as min(t_AR, t_GEMM) * (1 - 1/W), W the waves of the
fused kernel's 256 x 256 output tiles (TensorRT-LLM allreduce_gemm_impl_sm100.h); at a decode-only step (M <= 256)
W = 1 and the credit is zero, so the whole credit sits on the chunk steps (B200 405B Interactive: 24 ms of a 158 ms chunk step).
(2) The runs' steps lie on a line with a longer intercept than the model's (13.8-39.2 ms against 4.2-19.3 ms; every
pair but GB200 x72 405B, whose declared line is 37.4 + 0.858·B against the run's 21.1 + 1.237·B and whose unfused one
matches it, 20.4 + 1.325·B) and a slope the same or shallower (H200 Llama-2-70B 0.217 both; B200 Llama-2-70B 0.070 against 0.086): the Interactive
rows are fast because a per-step time the runs pay at every load is missing, not because of the fusion credit.
Run: python scripts/mlperf_step_line44.py   (about fifteen seconds)
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

from jalapeno.cost.batch import Batch
from jalapeno.cost.gemm_allreduce import gemm_allreduce_stages
from jalapeno.cost.step import step_times
from jalapeno.fit.mlperf import load_mlperf
from jalapeno.fit.mlperf_engines import MLPERF_GEMM_ALLREDUCE
from jalapeno.fit.mlperf_scenarios import priced_point
from jalapeno.serve.analytic import aggregated_by_batch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling scripts, as the others import them


def _rows(pts) -> list:
    """The TensorRT-LLM Llama Server / Interactive rows at their declared engine."""
    return [
        p
        for p in pts
        if p.mapping == "matched@limits" and "_TRT_llama" in p.id and p.id.endswith(("_Server", "_Interactive"))
    ]


def running(p) -> float:
    """The run's decode batch per instance (Little's law) of row ``p``."""
    m, wl = p.measured, p.workload
    from mlperf_interactive_tail37 import measured_running  # noqa: PLC0415  (a sibling script, loaded once)

    return measured_running(
        m["throughput_per_chip"], wl.mean_isl, wl.mean_osl, m["tpot_s"], p.deployment.decode.layout.chips
    )


def model_tpot_s(p, batch: float) -> float:
    """The model's mean TPOT (s) of row ``p`` at ``batch`` decoding requests on one instance."""
    model, pr, dep, wl = priced_point(p)
    one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
    return float(aggregated_by_batch(model, pr, one, wl, np.array([batch])).tpot_s[0])


def line_rows() -> list[dict]:
    """One dict per row: run batch, measured TPOT, the model's with the fusion as declared and without (s)."""
    fused = {p.id: p for p in _rows(load_mlperf()[0])}
    plain = {p.id: p for p in _rows(load_mlperf(declared_fusion=False)[0])}
    out = []
    for key, p in fused.items():
        run = running(p)
        out.append(
            {
                "row": key[9:],
                "group": key[9:].rsplit("_", 1)[0],
                "scenario": key.rsplit("_", 1)[1],
                "declared": p.gemm_allreduce_fusion,
                "running": run,
                "tpot_s": p.measured["tpot_s"],
                "model_s": model_tpot_s(p, run),
                "unfused_s": model_tpot_s(plain[key], run),
            }
        )
    return out


def line(x: tuple[float, float], y: tuple[float, float]) -> tuple[float, float]:
    """(intercept, slope) of the straight line through (x0, y0) and (x1, y1).

    >>> line((1.0, 3.0), (2.0, 6.0))  # through (1, 2) and (3, 6): slope 4 / 2 = 2, intercept 2 - 2 x 1 = 0
    (0.0, 2.0)
    """
    slope = (y[1] - y[0]) / (x[1] - x[0])
    return y[0] - slope * x[0], slope


def credit_rows() -> list[dict]:
    """One dict per fused row: decode-only and chunk steps fused / unfused (s), W of o_proj's output tiles at each,
    the share f of steps carrying a chunk and the mean step's credit (s)."""
    out = []
    for p in _rows(load_mlperf()[0]):
        if p.id not in MLPERF_GEMM_ALLREDUCE:
            continue
        model, pr, dep, wl = priced_point(p)
        lay = dep.decode.layout
        off = dataclasses.replace(pr, efficiency=dataclasses.replace(pr.efficiency, gemm_allreduce_fusion=False))
        run = running(p)
        ctx = wl.decode_ctx
        budget = float(dep.prefill_budget(lay))
        chunk = min(wl.mean_isl, budget)
        p_step = run * wl.mean_isl / (wl.mean_osl - 1)
        b = Batch.make(
            decode_seqs=np.array([run, run]),
            decode_ctx=ctx,
            prefill_tokens=np.array([0.0, max(p_step, chunk)]),
            prefill_ctx=(wl.mean_isl - chunk) / 2,
        )
        on = step_times(model, pr, lay, dep.precision, b)[0]
        no = step_times(model, off, lay, dep.precision, b)[0]
        f = min(p_step / chunk, 1.0)
        rows = np.array([run, run + max(p_step, chunk)])
        w = gemm_allreduce_stages(rows, model.hidden_size, pr.system.chip)
        out.append(
            {
                "row": p.id[9:],
                "running": run,
                "chunk": max(p_step, chunk),
                "f": f,
                "dec": (no[0], on[0]),
                "chk": (no[1], on[1]),
                "w": (float(w[0]), float(w[1])),
                "credit_s": (1 - f) * (no[0] - on[0]) + f * (no[1] - on[1]),
            }
        )
    return out


def main() -> None:
    rows = line_rows()
    print("line: run batch, mean TPOT (ms) measured / model (fusion as declared) / model unfused")
    for r in rows:
        print(
            f"  {r['row'][:62]:62s} {'fused' if r['declared'] else '     '} run {r['running']:6.1f}  "
            f"{1e3 * r['tpot_s']:6.1f} / {1e3 * r['model_s']:6.1f} / {1e3 * r['unfused_s']:6.1f}  "
            f"ratio {r['tpot_s'] / r['model_s']:.2f}"
        )
    print("  line through Interactive and Server: intercept (ms), slope (ms per request) measured | model | unfused")
    groups = {}
    for r in rows:
        groups.setdefault(r["group"], {})[r["scenario"]] = r
    for g, d in groups.items():
        if set(d) != {"Interactive", "Server"}:
            continue
        x = (d["Interactive"]["running"], d["Server"]["running"])
        cells = []
        for k in ("tpot_s", "model_s", "unfused_s"):
            a, s = line(x, (1e3 * d["Interactive"][k], 1e3 * d["Server"][k]))
            cells.append(f"{a:5.1f} + {s:6.3f}·B")
        print(f"  {g[:50]:50s} {' | '.join(cells)}")
    print("\ncredit: steps (ms) unfused -> fused; W of o_proj's tiles; f of steps with a chunk; mean-step credit")
    for r in credit_rows():
        print(
            f"  {r['row'][:58]:58s} B {r['running']:5.1f} decode-only {1e3 * r['dec'][0]:6.1f} -> "
            f"{1e3 * r['dec'][1]:6.1f} (W {r['w'][0]:.0f}); chunk {r['chunk']:5.0f} {1e3 * r['chk'][0]:6.1f} -> "
            f"{1e3 * r['chk'][1]:6.1f} (W {r['w'][1]:.0f}); f {r['f']:.2f}; credit {1e3 * r['credit_s']:5.1f} ms"
        )


if __name__ == "__main__":
    main()
