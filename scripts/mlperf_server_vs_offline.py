"""MLPerf v5.1 NVIDIA rows: why the model's DeepSeek-R1 Server figure is above its own Offline figure, and where the
Interactive rows' TPOT-bound over-prediction sits (issue 18; diagnosis only, docs/gap_large_batch_decode.md "Round 31").

Part 1, DeepSeek-R1 (NVIDIA B200, Google B200, NVIDIA GB200-NVL72 x72): for each system

- ``steady``: the submitted Offline engine (fit/mlperf.MLPERF_ENGINES) and the submitted Server engine
  (MLPERF_LIMIT_ENGINES) with every slot taken (512 per attention-DP rank), steady state (serve/point.serve_at_concurrency);
- ``drain``: the Offline run's factor (serve/finite_run.finite_run_factor over the run's 26,328 samples per 8 GPUs);
- ``run``: the Server run's factor at the engine's best load within the limits (fit/latency_limits.engine_within_limits:
  counted to the last-issued query's response) and that load;
- ``TPOT @cap``: the Server engine's mean and Poisson p99 TPOT with every slot taken, against the rules' 80 ms;
- the measured Offline and Server throughput per chip and the measured Server p99 TTFT (limit 2 s).

Part 2, every NVIDIA Server / Interactive row whose engine is read: the run's own load per instance (Little's law:
output tok/s x mean TPOT), its mean TPOT, and the model's mean / p99 TPOT and p99 TTFT with the same engine at that
load; then per (system, model) with both a Server and an Interactive row, the straight line through the two
(load, mean TPOT) points, measured and modelled: its intercept (ms per step at no load) and slope (ms per request).

Reading (round 31): the model's Server > Offline is not a solve error. At 512 per rank both engines step at ~72.6 ms
(steady 8,497-8,528 tok/s per chip on NVIDIA B200); the Offline run loses 19% to its drain (the longest of 26,328
outputs, up to 20K tokens, end at a thin batch), the Server run 9% to its last-issued query; and the model's p99
TPOT at the cap is 73 ms < 80 ms, so no limit binds and the Server point is the cap. The runs could not: their
Offline steady step at 509 per rank is 86.6-90.1 ms (round 26, scripts/mlperf_offline_percentiles.py) > 80 ms.
The Server rows therefore follow the decode-step gap; the Interactive rows show the same gap as a per-step
intercept the model lacks (Part 2).

Reading (round 43): priced as validate prices the rows (each row's harness step term, fit/validate.with_harness_step,
which this script had left out; the Interactive rows' round-robin dispatch, serve/open_loop.erlang_arrival_tail), the
DeepSeek-R1 engines step at 87.6-89.7 ms with every slot taken and their p99 TPOT there is 89-92 ms > 80 ms: the TPOT
limit admits 2,975-2,998 of 4,096 (NVIDIA / Google B200; GB200 x72 27,641 of 36,864), and the Server figure (NVIDIA
B200 5,275 tok/s per chip, validate's) still sits above the Offline one (5,222) by the drain (0.754) against the
last query (0.921). The runs stood at 112-162 a rank (round 42).
Run: python scripts/mlperf_server_vs_offline.py   (about twenty seconds)
"""

from __future__ import annotations

import dataclasses


from jalapeno.fit.latency_limits import engine_within_limits
from jalapeno.fit.mlperf import MLPERF_LIMIT_ENGINES, MLPERF_RULES, load_mlperf, submitted_deployment
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import point_stack, point_workload, with_harness_step
from jalapeno.serve.finite_run import finite_run_factor
from jalapeno.serve.open_loop import poisson_ttft_s
from jalapeno.serve.tpot_tail import poisson_tpot_s
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model, load_system

DSR1 = (
    "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1",
    "mlperf51_Google_B200-SXM-180GBx8_TRT_deepseek-r1",
    "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_deepseek-r1",
)


def _one(dep):
    """One instance of an aggregated deployment."""
    return dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))


def _pricer(p):
    """The row's pricer as validate prices it: its stack, with its harness step term (fit/validate.with_harness_step;
    round 43: this script priced without it before, review42's stale-copy note)."""
    return with_harness_step(
        load_any_pricer(p.system, "calibrated", pricer="roofline", stack=point_stack(p)), p.harness_step_s
    )


def dsr1_rows() -> list[dict]:
    """Part 1 (module docstring): one dict per DeepSeek-R1 system; throughput in tok/s per chip, times in s."""
    pts, _ = load_mlperf(server_mapping="engine@limits")
    by = {p.id: p for p in pts}
    model = load_model("deepseek-r1")
    out = []
    for stem in DSR1:
        off, srv = by[stem + "_Offline"], by[stem + "_Server"]
        pr = _pricer(off)
        wl_o, wl_s = point_workload(off), point_workload(srv)
        st_o = serve_at_concurrency(model, pr, off.deployment, wl_o, [off.concurrency])
        drain = finite_run_factor(model, pr, off.deployment, wl_o, off.queries)
        sdep, conc = submitted_deployment(
            MLPERF_LIMIT_ENGINES[srv.id], srv.precision, srv.chips, model, load_system(srv.system)
        )
        one = _one(sdep)
        cap = serve_at_concurrency(model, pr, one, wl_s, [conc / sdep.decode.workers], idle_start=False)
        lim = engine_within_limits(model, pr, sdep, wl_s, conc, srv.tpot_limit_s, srv.ttft_limit_s, srv.server_run)
        out.append(
            {
                "row": stem[9:],
                "offline_steady": float(st_o.throughput_per_chip[0]),
                "drain": drain,
                "offline_model": float(st_o.throughput_per_chip[0]) * drain,
                "server_steady": float(cap.throughput_per_chip[0]),
                "run": lim["run_factor"],
                "server_model": lim["throughput_per_chip"],
                "server_load": lim["concurrency"],
                "tpot_cap_s": float(cap.tpot_s[0]),
                "tpot99_cap_s": float(poisson_tpot_s(model, pr, one, wl_s, cap)[0]),
                "tpot_limit_s": MLPERF_RULES["deepseek-r1"].server_tpot_s,
                "offline_measured": off.measured["throughput_per_chip"],
                "server_measured": srv.measured["throughput_per_chip"],
            }
        )
    return out


def load_rows() -> list[dict]:
    """Part 2 (module docstring): one dict per NVIDIA Server / Interactive row with a read engine."""
    pts, _ = load_mlperf(server_mapping="engine@limits")
    out = []
    for p in pts:
        if p.mapping != "matched@limits":
            continue
        model, pr, wl = load_model(p.model), _pricer(p), point_workload(p)
        one = _one(p.deployment)
        out_rate = p.measured["throughput_per_chip"] * wl.mean_osl / (wl.mean_isl + wl.mean_osl)
        load = out_rate * p.measured["tpot_s"] * one.decode.layout.chips  # requests decoding per instance
        sp = serve_at_concurrency(model, pr, one, wl, [load], idle_start=False)
        k = p.deployment.decode.workers if p.server_run is not None and p.server_run.round_robin else 1  # round 43
        out.append(
            {
                "row": p.id[9:],
                "system": p.system,
                "model": p.model,
                "scenario": p.id.rsplit("_", 1)[1],
                "load": load,
                "tpot_measured_s": p.measured["tpot_s"],
                "tpot_model_s": float(sp.tpot_s[0]),
                "tpot99_model_s": float(poisson_tpot_s(model, pr, one, wl, sp, arrival_k=k)[0]),
                "ttft99_model_s": float(poisson_ttft_s(model, pr, one, wl, sp, arrival_k=k)[0]),
            }
        )
    return out


def step_lines(rows: list[dict]) -> list[dict]:
    """Per (system, model) with a Server and an Interactive row: the line through the two (load, mean TPOT) points,
    measured and modelled (``measured_line``, ``model_line``): (intercept s, slope s per request)."""
    out = []
    for key in sorted({(r["system"], r["model"]) for r in rows}):
        two = {r["scenario"]: r for r in rows if (r["system"], r["model"]) == key}
        if set(two) != {"Server", "Interactive"}:
            continue
        a, b = two["Interactive"], two["Server"]
        line = {"system": key[0], "model": key[1]}
        for who, k in (("measured_line", "tpot_measured_s"), ("model_line", "tpot_model_s")):
            slope = (b[k] - a[k]) / (b["load"] - a["load"])
            line[who] = (a[k] - slope * a["load"], slope)
        out.append(line)
    return out


def main() -> None:
    print("Part 1: DeepSeek-R1, tok/s per chip (the model's Server over its Offline)")
    print(
        f"{'row':48s} {'off steady':>10s} {'drain':>6s} {'off model':>9s} {'off meas':>8s} | {'srv steady':>10s} "
        f"{'run':>5s} {'load':>5s} {'srv model':>9s} {'srv meas':>8s} | {'TPOT@cap ms':>11s} {'p99':>5s} {'limit':>5s}"
    )
    for r in dsr1_rows():
        print(
            f"{r['row']:48s} {r['offline_steady']:10.0f} {r['drain']:6.3f} {r['offline_model']:9.0f} "
            f"{r['offline_measured']:8.0f} | {r['server_steady']:10.0f} {r['run']:5.3f} {r['server_load']:5.0f} "
            f"{r['server_model']:9.0f} {r['server_measured']:8.0f} | {r['tpot_cap_s'] * 1e3:11.1f} "
            f"{r['tpot99_cap_s'] * 1e3:5.1f} {r['tpot_limit_s'] * 1e3:5.0f}"
        )
    rows = load_rows()
    print("\nPart 2: each row's engine at the run's own load (requests per instance)")
    print(
        f"{'row':72s} {'load':>6s} {'TPOT meas':>9s} {'model':>6s} {'p99':>6s} {'meas/model':>10s} {'TTFT99 model s':>14s}"
    )
    for r in rows:
        print(
            f"{r['row']:72s} {r['load']:6.0f} {r['tpot_measured_s'] * 1e3:9.1f} {r['tpot_model_s'] * 1e3:6.1f} "
            f"{r['tpot99_model_s'] * 1e3:6.1f} {r['tpot_measured_s'] / r['tpot_model_s']:10.2f} {r['ttft99_model_s']:14.2f}"
        )
    print("\nPer-step line through the Interactive and Server loads: intercept ms, slope ms per request")
    for ln in step_lines(rows):
        (a_m, s_m), (a_p, s_p) = ln["measured_line"], ln["model_line"]
        print(
            f"{ln['system']:12s} {ln['model']:15s} measured {a_m * 1e3:6.1f} + {s_m * 1e3:.4f}/req   "
            f"model {a_p * 1e3:6.1f} + {s_p * 1e3:.4f}/req   intercept gap {(a_m - a_p) * 1e3:+6.1f} ms"
        )


if __name__ == "__main__":
    main()
