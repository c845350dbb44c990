"""MLPerf v5.1 DeepSeek-R1: is the ~16-27 ms per-iteration residual a per-request host cost? Two checks
(issue 18; diagnosis only, docs/gap_large_batch_decode.md "Round 28").

1. **Shape.** TensorRT-LLM's PyTorch executor runs the overlap scheduler on these engines (llmlib
   ``DEFAULT_EXTRA_CONFIG`` ``disable_overlap_scheduler: False``): while the GPU runs iteration n the host
   updates the requests of n - 1 (``_process_previous_batch``: ``_update_requests``, ``_handle_responses``,
   rank 0's ``tp_gather`` of every rank's responses) and fetches, schedules and prepares n + 1. So host work
   H shows only as step = max(G, H). A host cost per live request, H = h0 + h x n (n per rank; per instance
   for rank 0's response loop, the same up to a factor 8 in h), must give the measured steps of the five runs of
   ``mlperf_diagnosis.step_residuals`` (and the Offline steady steps of ``mlperf_offline_percentiles``) with
   G the model's GPU step. ``host_fits`` fits (h0, h) on a DECLARED split — the two B200 Server rows —
   and reports the Offline / trtllm-bench rows; and tries h0 = 0 (a pure per-request cost).
2. **Streaming.** TensorRT-LLM tech blog 10 ("ADP Balance Strategy", docs/source/blogs/tech_blog/
   blog10_ADP_Balance_Strategy.md) ran the MLPerf GB200 engine's configuration (DP8 EP8 WIDEEP, 512 per rank,
   ``max_num_tokens`` 4,608, concurrency 5,120, ADP balance 50 / 10; closed/NVIDIA/configs/GB200-NVL72_GB200-
   186GB_aarch64x72/Offline/deepseek-r1.py has the same fields) on the MLPerf dataset's shape (16,000 requests,
   mean ISL 803.1 / OSL 3,653.8) with ``streaming_interval`` 1,024 — rank 0 gathers and sends a response per
   request every 1,024 tokens instead of every token (MLPerf: ``stream_interval`` 1) — and measured 34,140
   output tok/s on 8 GB200. ``stream_check`` replays that run's slots with the step law that reproduces the
   MLPerf GB200 Offline run (the model's step + the run's own constant steady residual, round 26) and sets the
   predicted throughput beside the blog's: what the per-token response path costs is the gap.

    python scripts/mlperf_host_shape.py
"""

from __future__ import annotations

import numpy as np

#: TensorRT-LLM tech blog 10 (blog10_ADP_Balance_Strategy.md, ADP balance run to50 bw10, 2025-08-12): requests,
#: mean output tokens, output tok/s, GPUs, streaming interval (tokens per response)
BLOG10_RUN = {"requests": 16000, "mean_osl": 3653.8, "tps": 34140.0, "gpus": 8, "stream_interval": 1024}
GB200_OFFLINE = "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_deepseek-r1_Offline"
#: the declared fit split of ``host_fits``: the B200 Server rows (labels of mlperf_diagnosis.step_residuals)
FIT_ROWS = ("Google B200 Server", "NVIDIA B200 Server")


def fit_line(n: np.ndarray, step: np.ndarray) -> tuple[float, float]:
    """Least-squares (h0 s, h s per request) of step = h0 + h x n through the given points (two points: exact)."""
    a = np.vstack([np.ones_like(n), n]).T
    h0, h = np.linalg.lstsq(a, step, rcond=None)[0]
    return float(h0), float(h)


def overlap_step(gpu_s: float, n: float, h0: float, h: float) -> float:
    """The overlap scheduler's step (s): max(GPU step, host loop h0 + h x n)."""
    return max(gpu_s, h0 + h * n)


def host_fits(rows: list[dict]) -> dict:
    """``rows``: label, running (per rank), measured_s, model_s. Returns the (h0, h) fitted on :data:`FIT_ROWS`,
    the pure per-request h (h0 = 0) from each fit row, and per row the measured step against max(G, H) of
    both."""
    fit = [r for r in rows if r["label"] in FIT_ROWS]
    h0, h = fit_line(np.array([r["running"] for r in fit]), np.array([r["measured_s"] for r in fit]))
    pure = {r["label"]: r["measured_s"] / r["running"] for r in fit}
    out = []
    for r in rows:
        out.append(
            {
                **r,
                "with_base": overlap_step(r["model_s"], r["running"], h0, h),
                "pure": {k: overlap_step(r["model_s"], r["running"], 0.0, v) for k, v in pure.items()},
            }
        )
    return {"h0": h0, "h": h, "pure_h": pure, "rows": out}


def stream_check() -> dict:
    """The blog-10 run replayed at the MLPerf GB200 engine: slots and step law from
    ``mlperf_offline_percentiles`` (the model's closed-loop step at the busy slots + the MLPerf GB200 run's
    constant steady residual), 16,000 requests of the dataset's lengths scaled to the blog's mean output.
    Returns the predicted output tok/s per GPU (as MLPerf streams: every token), the blog's measured one, the
    same replay of the MLPerf run itself (its own output tok/s, measured and replayed), and the steady step."""
    from mlperf_offline_percentiles import RUNS, replay

    from jalapeno.fit.mlperf import MLPERF_TRTLLM_RELEASE, benchmark_spread, load_mlperf
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import point_workload
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.stacks import get_stack

    p = {q.id: q for q in load_mlperf(server_mapping="frontier@limits")[0]}[GB200_OFFLINE]
    _rid, queries, inst, lat = next(r for r in RUNS if r[0] == GB200_OFFLINE)
    pricer = load_any_pricer(
        p.system, "calibrated", pricer="roofline", stack=get_stack(f"trtllm@{MLPERF_TRTLLM_RELEASE}")
    )
    dp, full = p.deployment.decode.layout.dp, p.concurrency / inst
    grid = np.unique(np.rint(np.geomspace(dp, full, 28)))
    res = serve_at_concurrency(load_model("deepseek-r1"), pricer, p.deployment, point_workload(p), list(grid * inst))
    slots = int(min(full, float(res.decode_batch[-1])))

    def run(mean_osl: float, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        osl = np.maximum(np.rint(benchmark_spread("deepseek-r1").with_mean_osl(mean_osl).osl_tokens), 1)
        done, busy = replay(osl, n, slots)
        return osl, done, np.interp(np.maximum(busy, grid[0]), grid, res.tpot_s)

    osl_m, done_m, tau_m = run(p.workload.mean_osl, queries // inst)
    s_min, s50 = done_m.min(), np.quantile(done_m, 0.5)
    step_meas = (lat[1] - lat[0]) / (s50 - s_min)
    resid = step_meas - float(np.interp(slots, grid, res.tpot_s))
    t_mlperf = float(np.sum(tau_m[: done_m.max()] + resid))
    tok_mlperf = (queries // inst) * osl_m.mean()
    osl_b, done_b, tau_b = run(BLOG10_RUN["mean_osl"], BLOG10_RUN["requests"])
    t_blog = float(np.sum(tau_b[: done_b.max()] + resid))
    per_gpu = dp  # one instance = dp GPUs
    return {
        "slots": slots,
        "step_measured_s": step_meas,
        "residual_s": resid,
        "mlperf_replayed_gpu": tok_mlperf / t_mlperf / per_gpu,
        "mlperf_measured_gpu": tok_mlperf / lat[-1] / per_gpu,
        "blog_predicted_gpu": BLOG10_RUN["requests"] * osl_b.mean() / t_blog / per_gpu,
        "blog_measured_gpu": BLOG10_RUN["tps"] / BLOG10_RUN["gpus"],
        "blog_duration_s": t_blog,
        "mlperf_duration_s": t_mlperf,
    }


def main() -> None:
    from mlperf_diagnosis import step_residuals
    from mlperf_offline_percentiles import offline_curves

    rows = step_residuals()
    for c in offline_curves():
        rows.append(
            {
                "label": c["id"].replace("mlperf51_", "") + " (percentile steady step)",
                "running": float(c["per_rank"]),
                "measured_s": c["step_measured_s"],
                "model_s": c["step_model_s"],
            }
        )
    f = host_fits(rows)
    print(
        f"host loop fitted on {', '.join(FIT_ROWS)}: H = {f['h0'] * 1e3:.1f} ms + {f['h'] * 1e6:.0f} us x requests "
        "per rank (x8 less per request if rank 0 loops over the instance)"
    )
    print(
        "pure per-request cost (h0 = 0) from each fit row: "
        + ", ".join(f"{k} {v * 1e6:.0f} us" for k, v in f["pure_h"].items())
    )
    for r in f["rows"]:
        pure = ", ".join(f"{v * 1e3:.1f}" for v in r["pure"].values())
        print(
            f"  {r['label']}: {r['running']:.0f} per rank, measured {r['measured_s'] * 1e3:.1f} ms, GPU (model) "
            f"{r['model_s'] * 1e3:.1f}, max(G, H) {r['with_base'] * 1e3:.1f} ({r['with_base'] / r['measured_s'] - 1:+.0%}); "
            f"pure per-request {pure} ms"
        )
    s = stream_check()
    print(
        f"blog 10 run (stream interval {BLOG10_RUN['stream_interval']}) replayed at the MLPerf GB200 engine "
        f"({s['slots']} slots, step = model + {s['residual_s'] * 1e3:.1f} ms, measured steady {s['step_measured_s'] * 1e3:.1f} ms):"
    )
    print(
        f"  MLPerf run itself: replayed {s['mlperf_replayed_gpu']:,.0f} vs measured {s['mlperf_measured_gpu']:,.0f} "
        f"output tok/s/GPU ({s['mlperf_duration_s']:,.0f} s)"
    )
    raw = s["blog_measured_gpu"] / s["blog_predicted_gpu"]
    norm = raw * s["mlperf_replayed_gpu"] / s["mlperf_measured_gpu"]
    print(
        f"  blog run: predicted with per-token streaming {s['blog_predicted_gpu']:,.0f} vs measured "
        f"{s['blog_measured_gpu']:,.0f} output tok/s/GPU ({raw - 1:+.1%}; {s['blog_duration_s']:,.0f} s); with the "
        f"replay's own miss on the MLPerf run taken out {norm - 1:+.1%}"
    )
    print(
        f"  -> the blog's steady step {s['step_measured_s'] / norm * 1e3:.1f}-{s['step_measured_s'] / raw * 1e3:.1f} ms "
        f"against MLPerf's {s['step_measured_s'] * 1e3:.1f}: {s['step_measured_s'] * (1 - 1 / raw) * 1e3:.1f}-"
        f"{s['step_measured_s'] * (1 - 1 / norm) * 1e3:.1f} ms per step less"
    )


if __name__ == "__main__":
    main()
