"""MLPerf v5.1 DeepSeek-R1 Offline runs: the steady decode step read from LoadGen's latency percentiles,
and the model's whole completion-time curve against them (issue 18; diagnosis only, docs/gap_large_batch_decode.md
"Round 26").

An Offline run issues all its samples at t = 0 (LoadGen ``samples_per_query``); a sample's latency is the time its
response completes, so ``mlperf_log_summary.txt``'s latency percentiles (min, p50, p90, p99, max; inference_results_v5.1
@965182b, closed/<submitter>/results/<system>/deepseek-r1/Offline/performance/run_1) are the run's completion-time
curve. A slot-level replay counts the same curve in decode steps, independent of any step price: each of an
instance's S slots (batch per rank x attention DP, fit/mlperf_engines.MLPERF_ENGINES; the KV cache's cap where it
binds, serve/point's decode batch) takes the next sample when its current one ends, samples in LoadGen's order (six
permutations of the 4,388, ``sample_concatenate_permutation``), output lengths the dataset's (fit/mlperf.benchmark_spread)
scaled to the run's mean. Between min and p50 every slot is busy, so the measured step there is
(t_p50 - t_min) / (steps_p50 - steps_min), whatever the drain costs. The model's curve is the same replay priced step
by step at the model's closed-loop step time for the slots then busy (serve/point.serve_at_concurrency, the
submission's engine; prefill share included) — the fluid drain of serve/finite_run.py is not used, so this checks it.

    python scripts/mlperf_offline_percentiles.py
"""

from __future__ import annotations

import heapq

import numpy as np

#: (result id, samples, instances, LoadGen latency figures in seconds: min, p50, p90, p99, max) from each run's
#: mlperf_log_summary.txt (inference_results_v5.1 @965182b)
RUNS = (
    (
        "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Offline",
        26328,
        1,
        (27.393, 1027.975, 1970.262, 2546.592, 2946.841),
    ),
    (
        "mlperf51_Google_B200-SXM-180GBx8_TRT_deepseek-r1_Offline",
        26328,
        1,
        (24.145, 1045.836, 2000.583, 2612.494, 3088.434),
    ),
    (
        "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_deepseek-r1_Offline",
        26328 * 8,
        9,
        (29.460, 884.666, 1704.832, 2269.050, 2700.479),
    ),
)
Q = (0.5, 0.9, 0.99, 1.0)
#: the runs' mean latency (s), same logs
LAT_MEAN = {RUNS[0][0]: 1073.282, RUNS[1][0]: 1092.041, RUNS[2][0]: 929.487}


def replay(osl: np.ndarray, queries: int, slots: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(done step per sample, busy slots per step) of one instance: ``queries`` samples drawn as whole permutations
    of ``osl`` (tokens, one per dataset sample), each slot taking the next sample when its own ends."""
    rng = np.random.default_rng(seed)
    reps = -(-queries // len(osl))
    o = np.concatenate([osl[rng.permutation(len(osl))] for _ in range(reps)])[:queries].astype(np.int64)
    free = [0] * slots
    heapq.heapify(free)
    done = np.empty(queries, dtype=np.int64)
    for k, length in enumerate(o):
        t0 = heapq.heappop(free)
        done[k] = t0 + length
        heapq.heappush(free, int(done[k]))
    start = done - o
    busy = np.cumsum(np.bincount(start, minlength=done.max() + 1) - np.bincount(done, minlength=done.max() + 1))
    return done, busy[:-1]


def offline_curves() -> list[dict]:
    """Per run of :data:`RUNS`: id, slots per instance and per rank, the measured and modelled steady step (s),
    the measured latency figures and the model's completion times at the same quantiles (min, p50, p90, p99,
    max; s), and the what-ifs carrying the steady residual through the drain as a constant per step
    (``constant``) or in proportion (``scaled``), each (p50, p90, p99, max, mean) s."""
    from jalapeno.fit.mlperf import MLPERF_TRTLLM_RELEASE, benchmark_spread, load_mlperf
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import point_workload
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.stacks import get_stack

    pts = {p.id: p for p in load_mlperf(server_mapping="frontier@limits")[0]}
    model, out = load_model("deepseek-r1"), []
    for rid, queries, inst, lat in RUNS:
        p = pts[rid]
        pricer = load_any_pricer(
            p.system, "calibrated", pricer="roofline", stack=get_stack(f"trtllm@{MLPERF_TRTLLM_RELEASE}")
        )
        spr = benchmark_spread("deepseek-r1").with_mean_osl(p.workload.mean_osl)
        osl = np.maximum(np.rint(spr.osl_tokens), 1)
        dp = p.deployment.decode.layout.dp
        full = p.concurrency / inst
        grid = np.unique(np.rint(np.geomspace(dp, full, 28)))
        res = serve_at_concurrency(model, pricer, p.deployment, point_workload(p), list(grid * inst))
        slots = int(min(full, float(res.decode_batch[-1])))  # per instance; the KV cache's cap where it binds
        done, busy = replay(osl, queries // inst, slots)
        tau = np.interp(np.maximum(busy, grid[0]), grid, res.tpot_s)  # model step at the busy slots
        s_min, s50 = done.min(), np.quantile(done, 0.5)
        step_meas = (lat[1] - lat[0]) / (s50 - s_min)
        step_model = float(np.interp(slots, grid, res.tpot_s))

        def curve(t):
            c = np.concatenate([[0.0], np.cumsum(t)])[done]
            return [float(np.quantile(c, q)) for q in Q] + [float(c.mean())]

        model_c = np.concatenate([[0.0], np.cumsum(tau)])[done]
        out.append(
            {
                "id": rid,
                "slots": slots,
                "per_rank": slots // dp,
                "steps": int(done.max()),
                "busy_to": int(np.argmax(busy < slots)),
                "step_measured_s": step_meas,
                "step_model_s": step_model,
                "measured": lat,
                "mean_measured": LAT_MEAN[rid],
                "model": (float(model_c.min()), *(float(np.quantile(model_c, q)) for q in Q)),
                "constant": curve(tau + (step_meas - step_model)),
                "scaled": curve(tau * step_meas / step_model),
                "run_over_steady": (
                    lat[-1] / (step_meas * queries / inst * osl.mean() / slots),
                    float(model_c.max()) / (step_model * queries / inst * osl.mean() / slots),
                ),
            }
        )
    return out


def main() -> None:
    for r in offline_curves():
        print(
            f"{r['id'].replace('mlperf51_', '')}: {r['slots']} slots per instance ({r['per_rank']} per rank), "
            f"{r['steps']:,} steps, every slot busy to step {r['busy_to']:,}"
        )
        sm, so = r["step_measured_s"], r["step_model_s"]
        print(
            f"  steady step min->p50: measured {sm * 1e3:.1f} ms, model {so * 1e3:.1f} ms "
            f"(x{sm / so:.2f}, residual {(sm - so) * 1e3:+.1f} ms)"
        )
        print(
            "  completion s (measured / model): "
            + ", ".join(
                f"{k} {a:,.0f} / {b:,.0f}"
                for k, a, b in zip(("min", "p50", "p90", "p99", "max"), r["measured"], r["model"])
            )
        )
        for label, key in (
            ("a constant per-step residual", "constant"),
            ("a residual growing with the batch", "scaled"),
        ):
            c = r[key]
            print(
                f"  model + {label} (what-if, the steady residual carried through the drain): p50 {c[0]:,.0f}, "
                f"p90 {c[1]:,.0f}, p99 {c[2]:,.0f}, max {c[3]:,.0f}; mean {c[4]:,.0f} (measured {r['mean_measured']:,.0f})"
            )
        print(f"  run / steady-rate run: measured {r['run_over_steady'][0]:.3f}, model {r['run_over_steady'][1]:.3f}")


if __name__ == "__main__":
    main()
