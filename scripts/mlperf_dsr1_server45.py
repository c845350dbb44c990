"""MLPerf v5.1 DeepSeek-R1 Server rows predicted ~2x measured: what bounds the real runs, checked candidate by
candidate against the submissions' sources (issue 18; diagnosis only, docs/gap_large_batch_decode.md
"Round 45 (dsr1srv45)"). Nothing is fitted and no prediction changes.

Sources: the runs' configs ``closed/<submitter>/configs/<system>/Server/deepseek-r1.py``, their LoadGen settings
``closed/<submitter>/measurements/<system>_TRT/deepseek-r1/Server/user.conf`` and summaries
``closed/<submitter>/results/<system>_TRT/deepseek-r1/Server/performance/run_1/mlperf_log_summary.txt``
(mlcommons/inference_results_v5.1 @965182b; figures in docs/data/mlperf51_peer_runs.csv); the rules' limits in the
same runs' ``mlperf.conf`` (``deepseek-r1.Server.ttft_latency = 2000``, ``tpot_latency = 80``, ms).

Three blocks:

1. ``caps``: each validation row's engine caps read from its config (:data:`ENGINE_CAPS`) against the load the run
   stood at (Little's law: output tok/s x mean TPOT, a rank) and the model's KV capacity a rank at the dataset's
   length-biased resident context (specs/workload.LengthSpread.decode_ctx, the output-weighted mean: the brief's
   E[L^2]/(2E[L]) form) and at the naive ISL + OSL/2: candidates (a) a configured cap and (b) KV capacity.
2. ``margins``: every DeepSeek-R1 Server run's p99 TTFT and p99 TPOT as a share of the rules' limits, and its
   ``target_qps`` (user.conf) against the config's ``server_target_qps``: candidate (d), whether the runs sit where a
   limit binds.
3. ``curve``: the NVIDIA B200 engine's modelled mean and Poisson p99 TPOT and p99 TTFT (serve/open_loop) over loads a
   rank, with the three runs of that engine's config unchanged (Dell XE9685L, Google, NVIDIA) at their loads:
   candidate (c), where the TPOT limit binds; and each validation row's counted throughput at its own
   ``target_qps`` (serve/point.serve_at_rate, fit/latency_limits.server_run_factors): what the model gives when it is
   told the rate the submitter chose; and the Offline run of the same engine family at every slot filled (512 a
   rank): the model's steady mean TPOT there and the one the measured throughput implies under the model's drain
   (serve/finite_run.finite_run_factor), the step's anchor above the Server runs' loads.

Run: python scripts/mlperf_dsr1_server45.py   (about a minute)
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

PEERS = Path(__file__).resolve().parents[1] / "docs" / "data" / "mlperf51_peer_runs.csv"
#: The rules' Server limits for DeepSeek-R1 (the runs' mlperf.conf, @965182b): p99 TTFT s, p99 TPOT s
TTFT_LIMIT_S, TPOT_LIMIT_S = 2.0, 0.080
#: Engine caps of each validation row's config (inference_results_v5.1 @965182b closed/<submitter>/configs/<system>/
#: Server/deepseek-r1.py): ``gpu_batch_size`` a rank, runtime ``max_num_tokens`` a rank, ``max_concurrency`` (the
#: harness's in-flight cap an instance), the largest ``cuda_graph_batch_sizes``, ``kvcache_free_gpu_mem_frac``,
#: ``server_target_qps`` as the config file declares it (the run's own rate is its user.conf ``target_qps``)
ENGINE_CAPS = {
    "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server": dict(
        batch=512, tokens=3456, max_concurrency=5120, graph_max=512, kv_frac=0.9, config_qps=5.0
    ),
    "mlperf51_Google_B200-SXM-180GBx8_TRT_deepseek-r1_Server": dict(
        batch=512, tokens=3456, max_concurrency=5120, graph_max=512, kv_frac=0.9, config_qps=5.0
    ),
    "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_deepseek-r1_Server": dict(
        batch=512, tokens=3456, max_concurrency=5120, graph_max=512, kv_frac=0.9, config_qps=45.0
    ),
}
#: (submitter, system) of the B200 DeepSeek-R1 Server runs whose config file is NVIDIA's unchanged (the NVIDIA B200
#: engine; fit/mlperf_engines.DSR1_HARNESS_STEP_S names Dell XE9685L's; Google's differs from NVIDIA's in no engine
#: field: ``server_target_qps`` 5 in both, the run's user.conf 4.0)
SAME_ENGINE = (
    ("Dell", "XE9685L_B200_SXM_180GBx8_TRT"),
    ("Google", "B200-SXM-180GBx8_TRT"),
    ("NVIDIA", "B200-SXM-180GBx8_TRT"),
)
NVIDIA_B200 = "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server"
#: Loads a rank of block 3's modelled curve (requests decoding); the CUDA-graph sizes 128 / 256 / 384 among them
CURVE_LOADS = (104.6, 112.1, 128.0, 154.5, 200.0, 256.0, 320.0, 384.0, 448.0, 512.0)
RANKS = 8  # attention-DP ranks an instance (every DeepSeek-R1 Server config: tensor_parallelism 8, enable_attention_dp)


def dsr1_runs(path: Path = PEERS) -> list[dict]:
    """The DeepSeek-R1 Server runs of ``path`` (docs/data/mlperf51_peer_runs.csv format), numbers as floats, each with
    ``instances`` (8-GPU instances: the system's GPUs over 8) and ``load`` (:func:`load_per_rank`).

    Raises:
        ValueError: a file without the needed columns (names the file and the fix).
    """
    with Path(path).open(newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    need = {
        "submitter",
        "system",
        "benchmark",
        "scenario",
        "target_qps",
        "tokens_per_s",
        "tpot_mean_ms",
        "tpot_p50_ms",
        "tpot_p99_ms",
        "ttft_p99_ms",
    }
    if not rows or need - set(rows[0]):
        raise ValueError(f"{path}: needs columns {sorted(need)}; regenerate it from the runs' mlperf_log_summary.txt")
    out = []
    for r in rows:
        if r["benchmark"] != "deepseek-r1" or r["scenario"] != "Server":
            continue
        d = dict(r) | {k: float(r[k]) for k in need - {"submitter", "system", "benchmark", "scenario"}}
        d["instances"] = 9 if "NVL72" in r["system"] else 1
        d["load"] = load_per_rank(d["tokens_per_s"], d["tpot_mean_ms"], d["instances"])
        out.append(d)
    return out


def load_per_rank(tokens_per_s: float, tpot_mean_ms: float, instances: int) -> float:
    """Requests decoding a rank by Little's law: output tok/s a rank x mean TPOT (s).

    >>> round(load_per_rank(18592.24, 66.46, 1), 1)  # NVIDIA B200: 18,592 tok/s over 8 ranks at 66.46 ms
    154.5
    """
    return tokens_per_s / (instances * RANKS) * tpot_mean_ms / 1e3


def margins(runs: list[dict]) -> list[dict]:
    """Block 2: each run's p99 TTFT and p99 TPOT over the rules' limits (1.0 = at the limit)."""
    return [
        {
            "run": f"{r['submitter']} {r['system']}",
            "qps": r["target_qps"],
            "load": r["load"],
            "ttft": r["ttft_p99_ms"] / 1e3 / TTFT_LIMIT_S,
            "tpot": r["tpot_p99_ms"] / 1e3 / TPOT_LIMIT_S,
        }
        for r in runs
    ]


def line_to_limit(loads, tpot_p99_ms) -> tuple[float, float, float]:
    """(intercept ms, slope ms a request, load a rank where the line reaches the TPOT limit) of the least-squares
    line through the runs' (load, p99 TPOT) points.

    >>> line_to_limit([100.0, 200.0], [60.0, 70.0])
    (50.0, 0.1, 300.0)
    """
    b, a = np.polyfit(np.asarray(loads, dtype=float), np.asarray(tpot_p99_ms, dtype=float), 1)
    return round(float(a), 6), round(float(b), 6), round(float((TPOT_LIMIT_S * 1e3 - a) / b), 6)


def _rows():
    from jalapeno.fit.mlperf import load_mlperf

    return {p.id: p for p in load_mlperf()[0] if p.id in ENGINE_CAPS}


def caps_rows(pts, runs) -> list[dict]:
    """Block 1, one dict per validation row: its config caps, the run's load, the model's KV cap a rank."""
    from jalapeno.deploy.kv_capacity import decode_batch_cap
    from jalapeno.serve.agg_batch_cap import aggregated_batch_cap
    from mlperf_server_rate40 import _priced

    by = {(r["submitter"], r["system"]): r for r in runs}
    out = []
    for key, p in pts.items():
        model, pr, one, wl, w = _priced(p)
        lay = one.decode.layout
        kv = {}
        for name, ctx in (("biased", wl.spread.decode_ctx), ("naive", wl.mean_isl + wl.mean_osl / 2)):
            kv[name] = (
                decode_batch_cap(
                    model,
                    pr.system,
                    lay,
                    one.precision,
                    ctx,
                    pr.efficiency,
                    one.mtp,
                    float(one.prefill_budget(lay)),
                    0.0,
                    memory_fraction=one.memory_fraction,
                    engine=one.memory_profile,
                )
                / RANKS
            )
        cap, what = aggregated_batch_cap(model, pr, one, wl)
        sub, system = key.split("_")[1], key.split("_", 2)[2].rsplit("_deepseek", 1)[0]
        out.append(
            {
                "id": key,
                "load": by[(sub, system)]["load"],
                "ctx": (wl.spread.decode_ctx, wl.mean_isl + wl.mean_osl / 2),
                "kv": (kv["biased"], kv["naive"]),
                "cap": (cap / RANKS, what),
                **ENGINE_CAPS[key],
            }
        )
    return out


def curve_rows(p) -> list[dict]:
    """Block 3a: the row's engine (one instance) at :data:`CURVE_LOADS` a rank: mean / Poisson p99 TPOT, p99 TTFT."""
    from jalapeno.serve.open_loop import poisson_ttft_s
    from jalapeno.serve.tpot_tail import poisson_tpot_s
    from jalapeno.serve.point import serve_at_concurrency
    from mlperf_server_rate40 import _priced

    model, pr, one, wl, _ = _priced(p)
    pts = serve_at_concurrency(model, pr, one, wl, np.asarray(CURVE_LOADS) * RANKS, idle_start=False)
    t99, f99 = poisson_tpot_s(model, pr, one, wl, pts), poisson_ttft_s(model, pr, one, wl, pts)
    return [
        {
            "load": float(pts.decode_batch[i]) / RANKS,
            "tpot": float(pts.tpot_s[i]) * 1e3,
            "tpot99": float(t99[i]) * 1e3,
            "ttft99": float(f99[i]),
            "rate": float(pts.request_rate_per_s[i]),
        }
        for i in range(len(pts))
    ]


def at_rate_rows(pts, runs) -> list[dict]:
    """Block 3b: each validation row's counted throughput a chip at its run's own ``target_qps`` (LoadGen's Poisson
    rate, a test setting read from user.conf) against the measured and the shipped prediction."""
    from jalapeno.fit.latency_limits import server_run_factors
    from jalapeno.serve.point import serve_at_rate
    from mlperf_server_rate40 import _priced

    by = {(r["submitter"], r["system"]): r for r in runs}
    out = []
    for key, p in pts.items():
        model, pr, one, wl, w = _priced(p)
        sub, system = key.split("_")[1], key.split("_", 2)[2].rsplit("_deepseek", 1)[0]
        run = by[(sub, system)]
        at = serve_at_rate(model, pr, one, wl, [run["target_qps"] / w])
        f = server_run_factors(model, pr, one, wl, at, p.server_run, round(float(at.chips[0]) * w))
        y = float(at.throughput_per_chip[0] * f[0])
        out.append(
            {
                "id": key,
                "qps": run["target_qps"],
                "steady": float(at.throughput_per_chip[0]),
                "factor": float(f[0]),
                "counted": y,
                "measured": p.measured["throughput_per_chip"],
                "error": y / p.measured["throughput_per_chip"] - 1,
            }
        )
    return out


def offline_anchor(server_id: str = NVIDIA_B200) -> dict:
    """Block 3c: the Offline row of the Server row ``server_id``'s submitter and system (512 a rank, every slot): the
    model's steady mean TPOT (ms), its drain and reported throughput a chip, the measured one, and the steady mean TPOT
    the measured throughput implies (the model's TPOT scaled by reported / measured: the same drain and prompt share)."""
    from jalapeno.fit.mlperf import load_mlperf
    from jalapeno.fit.mlperf_scenarios import priced_point
    from jalapeno.serve.finite_run import finite_run_factor
    from jalapeno.serve.point import serve_at_concurrency

    p = next(q for q in load_mlperf()[0] if q.id == server_id.replace("_Server", "_Offline"))
    model, pricer, dep, wl = priced_point(p)
    at = serve_at_concurrency(model, pricer, dep, wl, [p.concurrency])
    drain = finite_run_factor(model, pricer, dep, wl, p.queries)
    reported = float(at.throughput_per_chip[0]) * drain * p.delivered_share
    tpot = float(at.tpot_s[0]) * 1e3
    return {
        "load": p.concurrency / (RANKS * dep.decode.workers),
        "tpot": tpot,
        "drain": drain,
        "reported": reported,
        "measured": p.measured["throughput_per_chip"],
        "implied": tpot * reported / p.measured["throughput_per_chip"],
    }


def interpolated_limit_load(
    load_lo: float, p50_lo_ms: float, tail_ms: float, load_hi: float, mean_hi_ms: float
) -> float:
    """Load a rank where the straight line from a Server run's (load, p50 TPOT) to the Offline run's (load, implied
    steady mean TPOT), plus the Server run's own p99 − p50 ``tail_ms``, reaches the rules' TPOT limit.

    >>> interpolated_limit_load(100.0, 60.0, 2.0, 500.0, 100.0)  # 0.1 ms a request: 78 ms at 280
    280.0
    """
    slope = (mean_hi_ms - p50_lo_ms) / (load_hi - load_lo)
    return round(load_lo + (TPOT_LIMIT_S * 1e3 - tail_ms - p50_lo_ms) / slope, 6)


def counted_at_load(p, load: float) -> float:
    """The validation row ``p``'s counted throughput a chip (tok/s) with ``load`` requests decoding a rank (steady
    state x LoadGen's Server-run factor, fit/latency_limits.server_run_factors)."""
    from jalapeno.fit.latency_limits import server_run_factors
    from jalapeno.serve.point import serve_at_concurrency
    from mlperf_server_rate40 import _priced

    model, pr, one, wl, w = _priced(p)
    at = serve_at_concurrency(model, pr, one, wl, [load * RANKS], idle_start=False)
    f = server_run_factors(model, pr, one, wl, at, p.server_run, round(float(at.chips[0]) * w))
    return float(at.throughput_per_chip[0] * f[0])


def main() -> None:
    """Print the three blocks (module docstring)."""
    runs, pts = dsr1_runs(), _rows()
    print("1. caps a rank (config) vs the run's load; model KV cap a rank at the length-biased / naive context")
    for r in caps_rows(pts, runs):
        print(
            f"  {r['id'][9:-21]:<48} load {r['load']:6.1f} | batch {r['batch']} graphs <= {r['graph_max']} "
            f"tokens {r['tokens']} in-flight {r['max_concurrency'] / RANKS:.0f} | ctx {r['ctx'][0]:,.0f} / "
            f"{r['ctx'][1]:,.0f} -> KV cap {r['kv'][0]:,.0f} / {r['kv'][1]:,.0f} | binding {r['cap'][1]} "
            f"{r['cap'][0]:.0f}"
        )
    print("\n2. runs' p99 over the limits (TTFT 2 s, TPOT 80 ms); target_qps from user.conf")
    for m in margins(runs):
        print(f"  {m['run']:<48} qps {m['qps']:5.1f} load {m['load']:6.1f} TTFT {m['ttft']:.2f} TPOT {m['tpot']:.2f}")
    same = [r for r in runs if (r["submitter"], r["system"]) in SAME_ENGINE]
    a, b, lim = line_to_limit([r["load"] for r in same], [r["tpot_p99_ms"] for r in same])
    print(
        f"\n3a. NVIDIA B200 engine; measured p99 TPOT line over its {len(same)} same-config runs: {a:.1f} ms + "
        f"{b:.4f} ms a request -> 80 ms at {lim:.0f} a rank (runs at "
        + ", ".join(f"{r['load']:.1f}: p50 {r['tpot_p50_ms']:.1f} / p99 {r['tpot_p99_ms']:.1f}" for r in same)
        + ")"
    )
    for c in curve_rows(pts[NVIDIA_B200]):
        print(
            f"  model load {c['load']:6.1f} rate {c['rate']:5.2f}/s TPOT {c['tpot']:5.1f} p99 {c['tpot99']:5.1f} ms"
            f"  p99 TTFT {c['ttft99']:.2f} s"
        )
    print("\n3b. counted throughput a chip at the run's own target_qps (tok/s, ISL + OSL)")
    for r in at_rate_rows(pts, runs):
        print(
            f"  {r['id'][9:-21]:<48} qps {r['qps']:5.1f} steady {r['steady']:7.0f} x {r['factor']:.3f} = "
            f"{r['counted']:7.0f} measured {r['measured']:7.0f} error {r['error']:+.1%}"
        )
    print(
        "\n3c. each row's Offline twin at every slot (the step's anchor), and the straight line from the row's Server run"
    )
    for key, p in pts.items():
        o = offline_anchor(key)
        sub, system = key.split("_")[1], key.split("_", 2)[2].rsplit("_deepseek", 1)[0]
        r = next(x for x in runs if (x["submitter"], x["system"]) == (sub, system))
        tail = r["tpot_p99_ms"] - r["tpot_p50_ms"]
        lim2 = interpolated_limit_load(r["load"], r["tpot_p50_ms"], tail, o["load"], o["implied"])
        y = counted_at_load(p, lim2)
        meas = p.measured["throughput_per_chip"]
        print(
            f"  {key[9:-21]:<48} Offline {o['load']:.0f} a rank: model TPOT {o['tpot']:.1f} ms, drain {o['drain']:.3f}, "
            f"reported {o['reported']:.0f} / measured {o['measured']:.0f} -> implied {o['implied']:.1f} ms; Server "
            f"{r['load']:.1f} a rank p50 {r['tpot_p50_ms']:.1f} + p99 - p50 {tail:.2f} ms -> 80 ms p99 at {lim2:.0f} a "
            f"rank; model counted there {y:.0f} tok/s a chip, {y / meas - 1:+.1%} on the measured {meas:.0f}"
        )


if __name__ == "__main__":
    main()
