"""MLPerf v5.1 Server / Interactive rows at the rate each run was given, and the dense TensorRT-LLM engines' step
against their peer runs: where the over-predicted latency-bounded rows' error sits (issue 18; diagnosis only,
docs/gap_large_batch_decode.md "Round 40 (mlperfsrv40)").

A Server / Interactive result is the Poisson rate its submitter asked LoadGen for (``target_qps``), valid when the
run's p99 TTFT and p99 TPOT are within the rules' limits (loadgen/mlperf.conf; fit/mlperf.MLPERF_RULES); LoadGen checks
the p99 of the per-query TPOT (loadgen/results.cc ``PerfConstraintsMet``: ``target_tpot_percentile`` over
``time_per_output_token_arr``, one value per sample). The row's mapping (``matched@limits``,
fit/latency_limits.engine_within_limits) predicts the highest load the submitted engine keeps within both p99 limits.
Two blocks:

1. ``rows``: every Server / Interactive row whose engine is read, served open-loop at the run's own scheduled rate
   (``scheduled_per_s`` of fit/mlperf_server.DEFAULT_SERVER_RUNS: LoadGen's Poisson arrival rate, a test setting, not
   a result; serve/point.serve_at_rate per instance): the model's mean and Poisson p99 TPOT and TTFT
   (serve/open_loop) against the run's, and the model's pick (the row's prediction): its load, mean / p99 TPOT and
   p99 TTFT. ``over`` marks a rate beyond the engine's modelled capacity.
2. ``dense``: the B200 runs of the Llama-2-70B and Llama-3.1-405B TensorRT-LLM engines whose config file is NVIDIA's
   unchanged (:data:`SAME_CONFIG`: byte-identical ``configs/<system>/<scenario>/<benchmark>.py`` at
   inference_results_v5.1 @965182b), from docs/data/mlperf51_peer_runs.csv: each run's decode load per instance by
   Little's law (output tok/s per instance x mean TPOT), the measured mean TPOT against the model's at that load
   (NVIDIA's validation row's engine and pricer, serve/analytic.aggregated_by_batch), and per benchmark the
   straight line through the Server and Interactive runs' (load, TPOT) points, measured and modelled
   (:func:`line`): its intercept (ms a step at no load) and slope (ms per request). These engines run TensorRT's
   C++ runtime with no CUDA graphs (closed/NVIDIA/code/llmlib/config.py: ``use_cuda_graphs`` False, and
   ``NotImplementedError("CUDA Graphs are not supported in TRT/C++ backend yet.")``; every Llama config sets
   ``harness_fields.use_graphs: False``).

Run: python scripts/mlperf_server_rate40.py   (about half a minute)
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
from pathlib import Path

import numpy as np

PEERS = Path(__file__).resolve().parents[1] / "docs" / "data" / "mlperf51_peer_runs.csv"
POINTS = Path(__file__).resolve().parents[1] / "src" / "jalapeno" / "data" / "validation" / "mlperf_points.csv"
#: NVIDIA's B200 validation row that prices each (benchmark, scenario)'s peer runs (its engine is the family's config)
BASE_ROWS = {
    ("llama2-70b-99", "Server"): "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_Server",
    ("llama2-70b-99", "Interactive"): "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_Interactive",
    ("llama3.1-405b", "Server"): "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama3p1-405b_Server",
    ("llama3.1-405b", "Interactive"): "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama3p1-405b_Interactive",
}
_L2, _405 = ("llama2-70b-99",), ("llama3.1-405b",)
#: (submitter, system) of the B200 runs whose config for (benchmark, scenario) is byte-identical to NVIDIA's
#: (inference_results_v5.1 @965182b, closed/<submitter>/configs/<system>/<scenario>/<file>.py; checked by md5)
SAME_CONFIG = {
    ("llama2-70b-99", "Server"): {
        ("Google", "B200-SXM-180GBx8_TRT"),
        ("Lambda", "B200-SXM-180GBx8_TRT"),
        ("NVIDIA", "B200-SXM-180GBx8_TRT"),
        ("Lenovo", "SR680a_V3_B200SXMx8_TRT"),
        ("Dell", "XE9685L_B200_SXM_180GBx8_TRT"),
        ("GigaComputing", "G894-SD1_B200-SXM-180GBx8_TRT"),
        ("Supermicro", "AS-4126GS-NBR-LCC_B200-SXM-180GBx8_TRT"),
        ("Supermicro", "SYS-422GS-NBRT-LCC_B200-SXM-180GBx8_TRT"),
    },
    ("llama2-70b-99", "Interactive"): {
        ("Google", "B200-SXM-180GBx8_TRT"),
        ("NVIDIA", "B200-SXM-180GBx8_TRT"),
        ("Dell", "XE9680L_B200_SXM_180GBx8_TRT"),
        ("Supermicro", "SYS-422GS-NBRT-LCC_B200-SXM-180GBx8_TRT"),
    },
    ("llama3.1-405b", "Server"): {
        ("Google", "B200-SXM-180GBx8_TRT"),
        ("Lambda", "B200-SXM-180GBx8_TRT"),
        ("NVIDIA", "B200-SXM-180GBx8_TRT"),
        ("Oracle", "B200-SXM-180GBx8_TRT"),
        ("Lenovo", "SR780a_V3_B200SXMx8_TRT"),
        ("Dell", "XE9680L_B200_SXM_180GBx8_TRT"),
        ("Dell", "XE9685L_B200_SXM_180GBx8_TRT"),
        ("GigaComputing", "G894-SD1_B200-SXM-180GBx8_TRT"),
        ("Supermicro", "SYS-A21GE-NBRT_B200-SXM-180GBx8_TRT"),
        ("Supermicro", "SYS-422GA-NBRT-LCC_B200-SXM-180GBx8_TRT"),
        ("Supermicro", "SYS-422GS-NBRT-LCC_B200-SXM-180GBx8_TRT"),
        ("Broadcom_Supermicro", "vSYS-422GA-NBRT-B200-SXM-180GBx8_TRT"),
    },
    ("llama3.1-405b", "Interactive"): {
        ("Google", "B200-SXM-180GBx8_TRT"),
        ("NVIDIA", "B200-SXM-180GBx8_TRT"),
        ("Lenovo", "SR780a_V3_B200SXMx8_TRT"),
        ("Dell", "XE9680L_B200_SXM_180GBx8_TRT"),
        ("Dell", "XE9685L_B200_SXM_180GBx8_TRT"),
        ("Supermicro", "SYS-A21GE-NBRT_B200-SXM-180GBx8_TRT"),
        ("Supermicro", "SYS-422GA-NBRT-LCC_B200-SXM-180GBx8_TRT"),
        ("Supermicro", "SYS-422GS-NBRT-LCC_B200-SXM-180GBx8_TRT"),
    },
}


def measured_figures(path: Path = POINTS) -> dict[str, dict[str, float]]:
    """LoadGen's summary figures per result id (``TTFT_mean``, ``TTFT_p99``, ``TPOT_mean``, ``TPOT_p99`` in ms, ...)
    from an ``mlperf_points.csv``-format file: each metric row's id is the result's id, ``_``, a suffix."""
    out: dict[str, dict[str, float]] = {}
    with Path(path).open(newline="", encoding="utf-8-sig") as f:
        for r in csv.DictReader(f):
            key = r["id"][: -len("_tput")] if r["id"].endswith("_tput") else r["id"][: -len(r["metric"]) - 1]
            out.setdefault(key, {})[r["metric"]] = float(r["value"])
    return out


def dense_runs(path: Path = PEERS) -> list[dict]:
    """The peer runs of :data:`SAME_CONFIG` (NVIDIA's config unchanged), numbers as floats (ms as published)."""
    with Path(path).open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    out = []
    for r in rows:
        same = SAME_CONFIG.get((r["benchmark"], r["scenario"]), set())
        if (r["submitter"], r["system"]) in same:
            out.append(
                r
                | {
                    k: float(r[k])
                    for k in (
                        "target_qps",
                        "scheduled_per_s",
                        "completed_per_s",
                        "tokens_per_s",
                        "tpot_mean_ms",
                        "tpot_p99_ms",
                    )
                }
            )
    return out


def decode_per_instance(run: dict, instances: int) -> float:
    """Requests decoding per instance by Little's law: output tok/s per instance x mean TPOT (s)."""
    return run["tokens_per_s"] / instances * run["tpot_mean_ms"] / 1e3


def line(x, y) -> tuple[float, float]:
    """(intercept, slope) of the least-squares straight line y = a + b·x through the points (x, y), (N,) each, N >= 2.

    >>> [round(v, 9) for v in line([0.0, 2.0], [1.0, 5.0])]  # 1 + 2x through (0, 1), (2, 5); polyfit's last bits
    [1.0, 2.0]
    """
    b, a = np.polyfit(np.asarray(x, dtype=float), np.asarray(y, dtype=float), 1)
    return float(a), float(b)


def _priced(p):
    """(model, pricer, one instance of the row's deployment, workload, instances) of a validation row as
    fit/validate.predict_points prices it (its stack, its harness term)."""
    from jalapeno.fit.entries import with_stack_mtp
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import point_stack, point_workload
    from jalapeno.specs.catalog import load_model

    st = point_stack(p)
    pr = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
    if p.harness_step_s:
        pr = pr.with_efficiency(
            dataclasses.replace(pr.efficiency, step_overhead_s=pr.efficiency.step_overhead_s + p.harness_step_s)
        )
    dep = with_stack_mtp(p.deployment, st, p.model)
    w = dep.decode.workers if dep.prefill is None else 1
    one = (
        dep if dep.prefill is not None else dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
    )
    return load_model(p.model), pr, one, point_workload(p), w


def rate_rows() -> list[dict]:
    """Block 1 (module docstring), one dict per Server / Interactive row with a read engine (``matched@limits``)."""
    from jalapeno.fit.latency_limits import engine_within_limits
    from jalapeno.fit.mlperf import load_mlperf
    from jalapeno.fit.mlperf_server import server_runs
    from jalapeno.serve.open_loop import poisson_ttft_s
    from jalapeno.serve.tpot_tail import poisson_tpot_s
    from jalapeno.serve.point import serve_at_concurrency, serve_at_rate

    runs, meas, out = server_runs(), measured_figures(), []
    for p in load_mlperf()[0]:
        if p.mapping != "matched@limits":
            continue
        model, pr, one, wl, w = _priced(p)
        rate = float(runs[p.id]["scheduled_per_s"]) / w
        at = serve_at_rate(model, pr, one, wl, [rate])
        best = engine_within_limits(
            model,
            pr,
            dataclasses.replace(one, decode=dataclasses.replace(one.decode, workers=w)) if one.prefill is None else one,
            wl,
            p.concurrency,
            p.tpot_limit_s,
            p.ttft_limit_s,
            p.server_run,
        )
        pick = serve_at_concurrency(model, pr, one, wl, [best["concurrency"] / w], idle_start=False)
        m = meas[p.id]
        out.append(
            {
                "id": p.id,
                "rate": rate,
                "over": not bool(at.feasible[0]),
                "meas": (m["TPOT_mean"], m["TPOT_p99"], m["TTFT_mean"], m["TTFT_p99"]),
                "model": (
                    at.tpot_s[0] * 1e3,
                    poisson_tpot_s(model, pr, one, wl, at)[0] * 1e3,
                    at.ttft_s[0] * 1e3,
                    poisson_ttft_s(model, pr, one, wl, at)[0] * 1e3,
                ),
                "pick": (
                    pick.decode_batch[0],
                    pick.tpot_s[0] * 1e3,
                    poisson_tpot_s(model, pr, one, wl, pick)[0] * 1e3,
                    best["ttft_p99_s"] * 1e3,
                ),
                "batch_at_rate": float(at.decode_batch[0]),
                "error": best["throughput_per_chip"] / p.measured["throughput_per_chip"] - 1,
            }
        )
    return out


def dense_rows(path: Path = PEERS) -> list[dict]:
    """Block 2 (module docstring): per run its load, measured and modelled mean TPOT (ms)."""
    from jalapeno.fit.mlperf import load_mlperf
    from jalapeno.serve.analytic import aggregated_by_batch

    pts = {p.id: p for p in load_mlperf()[0]}
    cache, out = {}, []
    for r in dense_runs(path):
        rid = BASE_ROWS[(r["benchmark"], r["scenario"])]
        if rid not in cache:
            cache[rid] = _priced(pts[rid])
        model, pr, one, wl, w = cache[rid]
        n = decode_per_instance(r, w)
        sp = aggregated_by_batch(model, pr, one, wl, np.array([n]))
        out.append(
            {
                "run": (r["submitter"], r["system"]),
                "benchmark": r["benchmark"],
                "scenario": r["scenario"],
                "per_instance": n,
                "measured_ms": r["tpot_mean_ms"],
                "model_ms": float(sp.tpot_s[0]) * 1e3,
            }
        )
    return out


def main() -> None:
    print(
        "1. Server / Interactive rows at the run's scheduled rate (per instance): TPOT mean / p99, TTFT mean / p99 "
        "(ms), measured | model; the model's pick: batch, TPOT mean / p99, TTFT p99; the row's error"
    )
    for r in rate_rows():
        mm, mo, pk = r["meas"], r["model"], r["pick"]
        print(
            f"  {r['id'].removeprefix('mlperf51_')[:66]:66s} {r['rate']:7.2f}/s{' over' if r['over'] else '     '} "
            f"{mm[0]:5.1f} {mm[1]:5.1f} {mm[2]:6.0f} {mm[3]:6.0f} | {mo[0]:5.1f} {mo[1]:5.1f} {mo[2]:6.0f} {mo[3]:6.0f}"
            f" | B {r['batch_at_rate']:6.0f} -> {pk[0]:6.0f} {pk[1]:5.1f} {pk[2]:5.1f} {pk[3]:6.0f}  {r['error']:+.0%}"
        )
    rows = dense_rows()
    print("2. B200 dense runs with NVIDIA's config unchanged: load per instance, mean TPOT measured / model (ms)")
    for r in rows:
        print(
            f"  {r['run'][0][:16]:16s} {r['run'][1][:40]:40s} {r['benchmark']:13s} {r['scenario']:11s} "
            f"{r['per_instance']:7.1f}  {r['measured_ms']:6.1f} {r['model_ms']:6.1f}  {r['measured_ms'] - r['model_ms']:+5.1f}"
        )
    for bench in ("llama2-70b-99", "llama3.1-405b"):
        sel = [r for r in rows if r["benchmark"] == bench]
        x = [r["per_instance"] for r in sel]
        (a, b), (am, bm) = line(x, [r["measured_ms"] for r in sel]), line(x, [r["model_ms"] for r in sel])
        print(
            f"  {bench}: measured {a:5.1f} ms + {b:.4f} ms/request; model {am:5.1f} + {bm:.4f}; "
            f"intercept {a - am:+.1f} ms, slope x{b / bm:.2f} ({len(sel)} runs)"
        )


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # no arguments: --help only
    main()
