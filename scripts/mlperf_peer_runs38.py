"""MLPerf v5.1 DeepSeek-R1 Server: the peer runs of the submitted TensorRT-LLM engine (other submitters, same config
family) price the engine's per-step cost outside the kernels; the harness term fitted on them and the Server rows'
submitted rates (issue 18; docs/gap_large_batch_decode.md "Round 38 (mlperf38)").

Data: docs/data/mlperf51_peer_runs.csv, every Server / Interactive run of NVIDIA B200 / GB200 / GB300 / H200 systems
in mlcommons/inference_results_v5.1 @965182b (each run's mlperf_log_summary.txt). Three blocks:

1. ``rates``: each DeepSeek-R1 Server run's requested ``target_qps`` (its config's ``server_target_qps`` or its
   user.conf) beside the completed rate and its p99 TTFT / TPOT against the rules' 2 s / 80 ms. A Server result is the
   rate the submitter asked for, valid: Google B200 ran the NVIDIA B200 config file unchanged (the two files are
   identical) at 4.0 (its measurements/.../user.conf ``target_qps = 4.0``) where NVIDIA ran 5.0.
2. ``step``: at each run's own steady decode load (Little's law: output tok/s per GPU x median TPOT = sequences a rank
   under attention DP 8; :data:`STEADY`, since round 42: the median, where round 38 took the mean, which a run's ramp-up
   on an idle engine pulls down) the measured median TPOT against the model's mean step of that run's engine (the NVIDIA B200 Server
   engine of fit/mlperf_engines.MLPERF_LIMIT_ENGINES with the run's own ``adp_balancing_timeout_iters`` and
   ``gpu_batch_size``; validation's pricer: the point's stack and the WIDEEP backend's measured curve;
   serve/analytic.aggregated_by_batch; the engine's own harness term left out): ``residual`` = measured − model.
3. ``fit``: the harness term h such that the model WITH h (added to the pricer's ``efficiency.step_overhead_s``, as
   fit/validate.predict_points applies it) has zero mean residual over the FIT runs (:data:`FIT_RUNS`: the peers
   that are not validation rows — Dell XE9685L, the config unchanged; Dell XE9680L and NVIDIA GB300-NVL72 x72,
   timeout 6 / wait 2; GigaComputing G894, chunked context and 768 a rank, the chunking not modelled), reported (the
   residuals with h) on the three Server validation rows (NVIDIA / Google B200, NVIDIA GB200-NVL72 x72). The first
   estimate, the mean residual without h, is short: h reaches the mean TPOT at ~0.89x (at a fixed load a slower step
   admits fewer prompts a step, so the prompt stalls per token shrink), so :func:`fitted_term_s` iterates.
   fit/mlperf_engines.DSR1_HARNESS_STEP_S carries the rounded value.

Run: python scripts/mlperf_peer_runs38.py   (about half a minute)
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
from pathlib import Path

import numpy as np

PEERS = Path(__file__).resolve().parents[1] / "docs" / "data" / "mlperf51_peer_runs.csv"
#: the validation row whose submitted engine prices every run (its config is the family's base)
BASE_ROW = "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server"
#: (submitter, system) -> (catalog system, GPUs, adp_balancing_timeout_iters, gpu_batch_size): each run's config
#: (closed/<submitter>/configs/<system>/Server/deepseek-r1.py @965182b) where it differs from BASE_ROW's
RUNS = {
    ("Dell", "XE9685L_B200_SXM_180GBx8_TRT"): ("b200", 8, 9, 512),
    ("Dell", "XE9680L_B200_SXM_180GBx8_TRT"): ("b200", 8, 6, 512),
    ("GigaComputing", "G894-SD1_B200-SXM-180GBx8_TRT"): ("b200", 8, 9, 768),
    ("NVIDIA", "GB300-NVL72_GB300-288GB_aarch64x72_TRT"): ("gb300-nvl72", 72, 6, 512),
    ("Google", "B200-SXM-180GBx8_TRT"): ("b200", 8, 9, 512),
    ("NVIDIA", "B200-SXM-180GBx8_TRT"): ("b200", 8, 9, 512),
    ("NVIDIA", "GB200-NVL72_GB200-186GB_aarch64x72_TRT"): ("gb200-nvl72", 72, 9, 512),
}
#: the fit split: peers that are not validation rows
FIT_RUNS = tuple(RUNS)[:4]
#: The runs' TPOT statistic the model's steady step is held to (round 42): the median (``p50``), not the mean. A LoadGen
#: Server run starts on an idle engine (the configs' ``warmup_iterations: 0``) and its decode load fills over the first
#: few mean latencies, so its early queries decode beside fewer requests: every DeepSeek-R1 Server run's summary has a
#: long LEFT tail (min 20-47 ms) and its median 0.9-3.4 ms above its mean (GB200 x72's mean is above both, set by a
#: stalled tail, fit/mlperf_quality.py). The model prices the steady state, whose per-query TPOT spread is ~1%
#: (serve/tpot_tail), so its mean is the runs' median; the load is the steady one (tok/s x median TPOT). Round 38 used
#: the mean (17.8 ms).
STEADY = "p50"


def peer_runs(path: Path = PEERS, benchmark: str = "deepseek-r1", scenario: str = "Server") -> list[dict]:
    """The peer runs of one benchmark and scenario, numbers as floats (ms as published).

    Raises:
        ValueError: no run of that benchmark and scenario in ``path`` (name the file and the fix).
    """
    with Path(path).open(newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    out = []
    for r in rows:
        if r["benchmark"] == benchmark and r["scenario"] == scenario:
            out.append(
                {
                    k: (
                        float(v)
                        if k not in ("division", "submitter", "system", "benchmark", "scenario", "result", "source")
                        else v
                    )
                    for k, v in r.items()
                }
            )
    if not out:
        raise ValueError(
            f"{path}: no {benchmark} {scenario} run; add the runs' LoadGen summary figures "
            "(scripts/mlperf_peer_runs38.py docstring)"
        )
    return out


def decode_per_rank(run: dict, gpus: int, stat: str = "mean") -> float:
    """Sequences decoding per GPU (one attention-DP rank each): output tok/s per GPU x TPOT (Little's law). ``stat``:
    ``mean`` (the run's time-averaged load, ramp-up included) or ``p50`` (its steady state: :data:`STEADY`)."""
    return run["tokens_per_s"] / gpus * run[f"tpot_{stat}_ms"] / 1e3


@functools.lru_cache(maxsize=1)
def _base_point():
    """BASE_ROW's measured point (fit/mlperf.load_mlperf, Server rows at ``frontier@limits``)."""
    from jalapeno.fit.mlperf import load_mlperf

    pts, _ = load_mlperf(server_mapping="frontier@limits")
    return next(x for x in pts if x.id == BASE_ROW)


def model_step_s(system: str, gpus: int, timeout: int, batch: int, per_rank: float, harness_s: float = 0.0) -> float:
    """The model's mean TPOT (s) of BASE_ROW's engine with a run's timeout and batch, on ``system``, at
    ``per_rank`` sequences a rank, with ``harness_s`` seconds a step added to the pricer's ``efficiency.step_overhead_s``
    as fit/validate.predict_points adds the engine's harness term (module docstring, block 2: 0, without it)."""
    from jalapeno.cost.pool_backends import with_moe_backend
    from jalapeno.fit.mlperf import MLPERF_LIMIT_ENGINES, submitted_deployment
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import point_stack
    from jalapeno.serve.analytic import aggregated_by_batch
    from jalapeno.specs.catalog import load_model, load_system

    p = _base_point()
    model = load_model(p.model)
    eng = dataclasses.replace(MLPERF_LIMIT_ENGINES[BASE_ROW], adp_timeout_iters=timeout, batch_per_rank=batch)
    dep, _ = submitted_deployment(eng, p.precision, gpus, model, load_system(system))
    one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
    lay = one.decode.layout
    base = load_any_pricer(system, stack=point_stack(p))
    if harness_s:
        base = base.with_efficiency(
            dataclasses.replace(base.efficiency, step_overhead_s=base.efficiency.step_overhead_s + harness_s)
        )
    pr = with_moe_backend(base, one.decode.moe_backend, model, lay)
    sp = aggregated_by_batch(model, pr, one, p.workload, np.array([per_rank * lay.dp]))
    return float(sp.tpot_s[0])


def step_rows(path: Path = PEERS, harness_s: float = 0.0, fit_only: bool = False, stat: str = STEADY) -> list[dict]:
    """Block 2 for every run of :data:`RUNS` (the residual in seconds), the model with ``harness_s`` a step
    (:func:`model_step_s`) at the run's load by ``stat`` (:func:`decode_per_rank`) against its ``stat`` TPOT
    (:data:`STEADY` by default; ``mean``: round 38's); ``fit_only``: the :data:`FIT_RUNS` alone."""
    by = {(r["submitter"], r["system"]): r for r in peer_runs(path)}
    out = []
    for key, (system, gpus, timeout, batch) in RUNS.items():
        if fit_only and key not in FIT_RUNS:
            continue
        r = by[key]
        n = decode_per_rank(r, gpus, stat)
        m = model_step_s(system, gpus, timeout, batch, n, harness_s)
        t = r[f"tpot_{stat}_ms"] / 1e3
        out.append(
            {"run": key, "fit": key in FIT_RUNS, "per_rank": n, "measured_s": t, "model_s": m, "residual_s": t - m}
        )
    return out


def harness_term_s(rows: list[dict]) -> float:
    """The mean residual over the fit runs (s) of ``rows``."""
    return float(np.mean([r["residual_s"] for r in rows if r["fit"]]))


def fitted_term_s(path: Path = PEERS, tol_s: float = 0.05e-3, max_iter: int = 8, stat: str = STEADY) -> float:
    """Block 3: the harness term h (s) whose model leaves zero mean residual over the fit runs: h <- h + the mean
    residual with h (:func:`harness_term_s` of :func:`step_rows` at h), from h = 0 until the step is under ``tol_s``.

    Raises:
        RuntimeError: no convergence in ``max_iter`` steps (the model's TPOT not rising with h).
    """
    h = 0.0
    for _ in range(max_iter):
        d = harness_term_s(step_rows(path, h, fit_only=True, stat=stat))
        h += d
        if abs(d) < tol_s:
            return h
    raise RuntimeError(f"harness term did not converge in {max_iter} steps (last step {d * 1e3:+.2f} ms)")


def main() -> None:
    print("1. DeepSeek-R1 Server runs: requested rate, completed rate, p99 TTFT / 2 s, p99 TPOT / 80 ms")
    for r in sorted(peer_runs(), key=lambda r: (r["system"], r["target_qps"])):
        print(
            f"  {r['submitter']:14s} {r['system']:40s} target {r['target_qps']:5.1f}  done {r['completed_per_s']:5.2f}"
            f"  TTFT p99 {r['ttft_p99_ms'] / 2000:4.2f}  TPOT p99 {r['tpot_p99_ms'] / 80:4.2f}"
        )
    rows = step_rows()
    print("2. the step at each run's load (ms): measured mean TPOT, model, residual")
    for r in rows:
        print(
            f"  {'fit ' if r['fit'] else 'rows'} {r['run'][0]:14s} {r['run'][1]:40s} {r['per_rank']:6.1f} a rank  "
            f"{r['measured_s'] * 1e3:5.1f}  {r['model_s'] * 1e3:5.1f}  {r['residual_s'] * 1e3:+5.1f}"
        )
    x = fitted_term_s()
    after = step_rows(harness_s=x)

    def ms(fit: bool) -> str:
        return ", ".join(f"{r['residual_s'] * 1e3:+.1f}" for r in after if r["fit"] == fit)

    print(
        f"3. harness term (zero mean residual over the {len(FIT_RUNS)} fit runs, the model with it; first estimate, "
        f"the mean residual without it: {harness_term_s(rows) * 1e3:.1f} ms): {x * 1e3:.1f} ms; residuals with it "
        f"(ms): fit {ms(True)}; validation rows {ms(False)}"
    )


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # no arguments: --help only
    main()
