"""MLPerf v5.1 DeepSeek-R1 Server: where the p99 TTFT tail comes from (issue 18; docs/gap_large_batch_decode.md
"Round 39 (mlperftail39)"). Diagnosis; nothing is fitted and no prediction changes.

Data: docs/data/mlperf51_dsr1_ttft_percentiles.csv, the first-token latency percentiles (50 / 90 / 95 / 97 / 99 /
99.9, mean, max) of each DeepSeek-R1 Server run's LoadGen summary (mlcommons/inference_results_v5.1 @965182b), and
the runs' loads of docs/data/mlperf51_peer_runs.csv (scripts/mlperf_peer_runs38.py: Little's law on the decode).

For every run of mlperf_peer_runs38.RUNS the engine of the run (the NVIDIA B200 Server engine with the run's
``adp_balancing_timeout_iters`` T and batch, one instance of 8 GPUs, validation's pricer with the DeepSeek-R1 harness
term fit/mlperf_engines.DSR1_HARNESS_STEP_S) is served at the run's own decode load (serve/analytic.aggregated_by_batch)
and its TTFT is split as serve/open_loop.poisson_ttft_s splits it:

- the prefill queue: M/G/1 under Poisson arrivals at the run's rate per instance, each prompt's work its ISL over the
  pooled prefill rate; ``rho`` its load. The quantile of TTFT = W + c_i uses the Cramér-Lundberg tail
  (open_loop.ttft_quantile_s);
- c_i: the rest per prompt (its own prefill, front end, half a step, and the attention-DP balancing gate).

Three model columns: ``shipped`` (open_loop.poisson_ttft_s as validate prices the limit: the balancing gate enters
as a constant, serve/adp_balance.adp_balance_wait_s's mean over the release clock's rounds, about T·τ/2 here since
round 39, T·τ before), ``clock`` (the gate's spread too: ``_balance_adp_requests`` in TensorRT-LLM's py_executor.py
releases the held prompts on a counter of iterations reset only by a release (serve/adp_balance.adp_release_prompts),
so below dp arrivals per T steps a prompt waits the residual of a T-step clock, uniform on [0, T·τ): mixed into the
quantile as :data:`CLOCK_POINTS` equally likely offsets), and the measured percentiles. What the clock leaves between the
model's and the measured p99 is not a prefill queue: at the runs' rho <= 0.05 the M/G/1 wait's p99 is a few ms
under any service time the dataset's prompts give (the longest, 3,140 tokens, is ~26 ms of pooled prefill).

Run: python scripts/mlperf_ttft_tail39.py   (about half a minute)
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

DATA = Path(__file__).resolve().parents[1] / "docs" / "data" / "mlperf51_dsr1_ttft_percentiles.csv"
#: quantiles reported (the published percentiles' subset the model is compared on)
QUANTILES = (0.5, 0.9, 0.99)


def measured(path: Path = DATA) -> dict[tuple[str, str], dict]:
    """(submitter, system) -> the run's first-token latency figures, s (``mean``, ``p50`` ... ``p999``, ``max``).

    Raises:
        ValueError: a file without the percentile columns (name the file and the fix).
    """
    with Path(path).open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    need = {"submitter", "system", "ttft_mean_ms", "ttft_p50_ms", "ttft_p90_ms", "ttft_p99_ms", "ttft_p999_ms"}
    if not rows or need - set(rows[0]):
        raise ValueError(f"{path}: needs columns {sorted(need)}; regenerate it from the runs' mlperf_log_summary.txt")
    return {
        (r["submitter"], r["system"]): {k[5:-3]: float(r[k]) / 1e3 for k in r if k.startswith("ttft_")} for r in rows
    }


def _parts(system: str, gpus: int, timeout: int, batch: int, per_rank: float) -> dict:
    """The model's TTFT of a run's engine at ``per_rank`` sequences a rank: rate (1/s, per instance), step τ (s),
    prefill queue load rho and mean wait (s), the closed loop's gate G (s, shipped: capped at T·τ) and the clock's
    G_c (s, serve/adp_balance.adp_clock_round_wait_s), and the quantiles (s, keyed by q) of ``r38`` (G a constant),
    ``shipped`` (open_loop.poisson_ttft_s: G − G_c plus the clock's uniform spread on [0, 2·G_c)) and ``clock``
    (the gate the clock alone gives, G_c and its spread: adp_balance.ADP_CLOCK_MEAN on), with the clock's mean."""
    import mlperf_peer_runs38 as peers

    from jalapeno.cost.pool_backends import with_moe_backend
    from jalapeno.fit.mlperf import DSR1_HARNESS_STEP_S, MLPERF_LIMIT_ENGINES, submitted_deployment
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import point_stack
    from jalapeno.serve.analytic import adp_gate_s, aggregated_by_batch
    from jalapeno.serve.open_loop import gated_ttft_quantile_s, mg1_wait, poisson_ttft_parts, ttft_quantile_s
    from jalapeno.specs.catalog import load_model, load_system

    p = peers._base_point()
    model = load_model(p.model)
    eng = dataclasses.replace(MLPERF_LIMIT_ENGINES[peers.BASE_ROW], adp_timeout_iters=timeout, batch_per_rank=batch)
    dep, _ = submitted_deployment(eng, p.precision, gpus, model, load_system(system))
    one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
    lay = one.decode.layout
    base = load_any_pricer(system, stack=point_stack(p))
    base = base.with_efficiency(
        dataclasses.replace(base.efficiency, step_overhead_s=base.efficiency.step_overhead_s + DSR1_HARNESS_STEP_S)
    )
    pr = with_moe_backend(base, one.decode.moe_backend, model, lay)
    sp = aggregated_by_batch(model, pr, one, p.workload, np.array([per_rank * lay.dp]))
    work, other, g_c = poisson_ttft_parts(model, pr, one, p.workload, sp)
    g = adp_gate_s(one, lay, sp.decode_batch, sp.request_rate_per_s, sp.step_time_s, None)
    rest = other - (g - g_c)[:, None]  # no gate at all
    lam = sp.request_rate_per_s
    rho, mean_wait = mg1_wait(lam, work)
    return {
        "rate": float(lam[0]),
        "tau": float(sp.step_time_s[0]),
        "rho": float(rho[0]),
        "gate": float(g[0]),
        "clock_gate": float(g_c[0]),
        "r38": {q: float(ttft_quantile_s(q, lam, work, rest + g[:, None])[0]) for q in QUANTILES},
        "shipped": {q: float(gated_ttft_quantile_s(q, lam, work, other, g_c)[0]) for q in QUANTILES},
        "clock_q": {q: float(gated_ttft_quantile_s(q, lam, work, rest, g_c)[0]) for q in QUANTILES},
        "clock_mean": float(rest.mean() + g_c[0] + mean_wait[0]),
    }


def tail_rows(path: Path = DATA) -> list[dict]:
    """One dict per run of mlperf_peer_runs38.RUNS: its key, timeout T, sequences a rank, :func:`_parts` and the
    measured figures (s)."""
    import mlperf_peer_runs38 as peers

    meas = measured(path)
    by = {(r["submitter"], r["system"]): r for r in peers.peer_runs()}
    out = []
    for key, (system, gpus, timeout, batch) in peers.RUNS.items():
        n = peers.decode_per_rank(by[key], gpus)
        out.append(
            {
                "run": key,
                "timeout": timeout,
                "per_rank": n,
                **_parts(system, gpus, timeout, batch, n),
                "measured": meas[key],
            }
        )
    return out


def main() -> None:
    rows = tail_rows()
    print(
        "TTFT (s) at each run's own load: measured mean / p50 / p90 / p99 / p99.9; model round 38 p50 / p99 (gate G a "
        "constant); shipped p50 / p99 (G with the clock's spread); clock mean / p50 / p90 / p99 (gate G_c, spread)"
    )
    for r in rows:
        m, o, s, c = r["measured"], r["r38"], r["shipped"], r["clock_q"]
        print(
            f"  {r['run'][0]:13s} {r['run'][1][:30]:30s} T={r['timeout']} {r['per_rank']:5.1f}/rank {r['rate']:4.2f}/s "
            f"tau {r['tau'] * 1e3:4.1f} ms rho {r['rho']:.3f} G {r['gate']:.2f} G_c {r['clock_gate']:.2f} | meas "
            f"{m['mean']:.2f} {m['p50']:.2f} {m['p90']:.2f} {m['p99']:.2f} {m['p999']:.2f} | r38 {o[0.5]:.2f} "
            f"{o[0.99]:.2f} | shipped {s[0.5]:.2f} {s[0.99]:.2f} | clock {r['clock_mean']:.2f} {c[0.5]:.2f} "
            f"{c[0.9]:.2f} {c[0.99]:.2f} | p99 short by {m['p99'] - s[0.99]:+.2f} / {m['p99'] - c[0.99]:+.2f}"
        )


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # no arguments: --help only
    main()
