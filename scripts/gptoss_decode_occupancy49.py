"""gpt-oss-120b InferenceX rows: which TPOT misses are the decode occupancy and which the step (issue 18, round 49).

The held-out gpt-oss-120b InferenceX rows (the "best GPU for gpt-oss-120b" publication: one run per GPU, rows 40-53)
carry TPOT errors of +51% (row 51, MI325X vLLM TP2 1k/1k C 64), +16 / +21% (rows 50 / 43, H200 TensorRT-LLM TP1 C 64)
and +45% (row 41, GB200 Dynamo-TRT 8k/1k C 512, decode DEP2). Two tables, nothing fitted, nothing written:

1. **Occupancy.** A closed loop of C users holds N = C · D / (TTFT + D) of them decoding (Little's law on the decode
   stage: a request spends TTFT waiting or prefilling and D = (m · OSL − 1) · TPOT decoding, m =
   fit/data_quality.MEAN_LENGTH_FRACTION). The measured TTFT and TPOT give the run's own N; the model serves the point
   at its own decode batch B (serve/point.serve_at_concurrency). The model's decode-only step
   (serve/open_loop.decode_pool_step) at B and at the measured N, per decode worker, give the TPOT the model would
   print at the run's occupancy: TPOT_model · step(N) / step(B) (the prompts' stall kept as priced). A row whose
   error shrinks there misses through its TTFT (prefill capacity, KV admission), not through the step's price.
2. **KV format of the Blackwell TensorRT-LLM runs** (``--kv``). The B200 script
   (SemiAnalysisAI/InferenceX benchmarks/gptoss_fp4_b200_trt.sh @d7dbd045b234, the rows' search space:
   ``kv_cache_config: dtype: fp8``) and the GB200 Dynamo-TRT disaggregated runs (InferenceX
   benchmarks/gptoss_fp4_gb200_dynamo-trt_slurm.sh → ai-dynamo/dynamo
   components/backends/trtllm/performance_sweeps/scripts/gen_yaml.py: prefill and decode ``kv_cache_config`` ``dtype:
   "fp8"``) store the KV cache in FP8; the ``mxfp4`` preset prices BF16 KV (no gpt-oss recipe of data/engines.toml
   names a KV dtype for these rows). The H200 script passes ``dtype: auto`` (BF16 for this checkpoint), so rows
   43 / 50 are priced as run. The table re-serves rows 40 / 41 / 47 / 48 with FP8 KV (the precision's ``kv`` option),
   and the last column carries that TPOT to the run's own occupancy N as part 1 does.

Run: python scripts/gptoss_decode_occupancy49.py [--kv] [ROW ...]   (ROW = the number after inferencex_points:)
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

from jalapeno.errors import SpecError
from jalapeno.fit.data_quality import MEAN_LENGTH_FRACTION
from jalapeno.fit.mlperf_scenarios import priced_point
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS
from jalapeno.serve.limits import decode_step_s
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.serve.point import serve_at_concurrency

#: the gpt-oss-120b InferenceX rows (data/validation/inferencex_points.csv lines)
ROWS = (40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53)
#: rows whose run stored an FP8 KV cache (module docstring, part 2)
FP8_KV_ROWS = (40, 41, 47, 48)


def decoding_users(
    concurrency: float, ttft_s: float, tpot_s: float, osl: int, mean_fraction: float = MEAN_LENGTH_FRACTION
) -> float:
    """Users of a closed loop of ``concurrency`` decoding at once, N = C · D / (TTFT + D), D = (m · OSL − 1) · TPOT.

    Args:
        concurrency: the closed loop's users C (> 0).
        ttft_s, tpot_s: the run's mean TTFT and TPOT, s (TTFT >= 0, TPOT > 0).
        osl: the nominal output length (tokens, > 1); the mean is ``mean_fraction`` of it.

    Raises:
        SpecError: a non-positive concurrency, TPOT or decode time, or a negative TTFT.

    >>> round(decoding_users(512, 5.0277, 0.0147, 1024), 1)   # row 41: 13.53 s decoding of 18.56 s
    373.3
    """
    d = (mean_fraction * osl - 1) * tpot_s
    if concurrency <= 0 or tpot_s <= 0 or ttft_s < 0 or d <= 0:
        raise SpecError(
            "decoding_users",
            f"concurrency {concurrency}, TTFT {ttft_s} s, TPOT {tpot_s} s, OSL {osl} give no decode stage",
            "give C > 0, TTFT >= 0, TPOT > 0 and an OSL above 1 / mean fraction",
        )
    return concurrency * d / (ttft_s + d)


def _step(model, pricer, dep, wl, batch: float) -> float:
    """The model's decode-only step (s) of one decode worker at ``batch`` sequences (serve/open_loop)."""
    sc = decode_pool_step(model, pricer, dep, wl.decode_ctx, [batch])
    return float(decode_step_s(sc, pricer.efficiency, dep, np.array([batch]), dep.decode.layout)[0])


def _points(rows):
    want = {f"inferencex_points:{r}" for r in rows}
    pts, _ = load_inferencex(DEFAULT_POINTS)
    for p in pts:
        if p.id in want and p.deployment is not None and p.measured.get("tpot_s") and p.measured.get("ttft_s"):
            model, pricer, dep, wl = priced_point(p)
            yield p, pricer, wl, model, dep


def occupancy(rows) -> None:
    """Print part 1 (module docstring)."""
    print(
        "| row | system | ISL | C | TTFT meas / model s (mean, or median where the row is) | decoding users: measured N / model B | "
        "TPOT meas ms | model ms (err) | model at N ms (err) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for p, pricer, wl, model, dep in _points(rows):
        c = int(p.concurrency)
        run = serve_at_concurrency(model, pricer, dep, wl, [c])
        tpot_m, ttft_m = p.measured["tpot_s"], p.measured["ttft_s"]
        n = decoding_users(c, ttft_m, tpot_m, p.osl)
        b, tpot = float(run.decode_batch[0]), float(run.tpot_s[0])
        ttft = run.ttft_p50_s if p.ttft_median else run.ttft_s  # the statistic the row publishes, as validate reads it
        w = dep.decode.workers if dep.prefill is not None else 1
        at_n = tpot * _step(model, pricer, dep, wl, n / w) / _step(model, pricer, dep, wl, b / w)
        print(
            f"| {p.id.split(':')[1]} | {p.system} | {p.isl} | {c} | {ttft_m:.2f} / {float(ttft[0]):.2f} | "
            f"{n:.0f} / {b:.0f} | {tpot_m * 1e3:.1f} | {tpot * 1e3:.1f} ({(tpot / tpot_m - 1) * 100:+.1f}%) | "
            f"{at_n * 1e3:.1f} ({(at_n / tpot_m - 1) * 100:+.1f}%) |"
        )


def kv_format(rows) -> None:
    """Print part 2 (module docstring): the rows re-served with an FP8 KV cache."""
    print(
        "| row | system | ISL | C | TPOT meas ms | model BF16 KV ms (err) | FP8 KV ms (err) | "
        "throughput/chip err BF16 → FP8 | FP8 KV at the measured N ms (err) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for p, pricer, wl, model, dep in _points(rows):
        c = int(p.concurrency)
        fp8 = dataclasses.replace(dep, precision=dep.precision.with_options(kv="fp8_e4m3"))
        a = serve_at_concurrency(model, pricer, dep, wl, [c])
        f = serve_at_concurrency(model, pricer, fp8, wl, [c])
        tpot_m = p.measured["tpot_s"]
        thr_m = p.measured.get("throughput_per_chip")
        thr = ""
        if thr_m:
            ea, ef = (float(x.throughput_per_chip[0]) / thr_m - 1 for x in (a, f))
            thr = f"{ea * 100:+.1f} → {ef * 100:+.1f}%"
        ta, tf = float(a.tpot_s[0]), float(f.tpot_s[0])
        n = decoding_users(c, p.measured["ttft_s"], tpot_m, p.osl)
        w = dep.decode.workers if dep.prefill is not None else 1
        fb = float(f.decode_batch[0])
        tn = tf * _step(model, pricer, fp8, wl, n / w) / _step(model, pricer, fp8, wl, fb / w)
        print(
            f"| {p.id.split(':')[1]} | {p.system} | {p.isl} | {c} | {tpot_m * 1e3:.1f} | "
            f"{ta * 1e3:.1f} ({(ta / tpot_m - 1) * 100:+.1f}%) | {tf * 1e3:.1f} ({(tf / tpot_m - 1) * 100:+.1f}%) | "
            f"{thr} | {tn * 1e3:.1f} ({(tn / tpot_m - 1) * 100:+.1f}%) |"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rows", nargs="*", type=int, help="InferenceX row numbers (default: the gpt-oss rows)")
    ap.add_argument("--kv", action="store_true", help="part 2: the Blackwell TensorRT-LLM rows with FP8 KV")
    args = ap.parse_args()
    if args.kv:
        kv_format(args.rows or FP8_KV_ROWS)
    else:
        occupancy(args.rows or ROWS)
