"""MLPerf v5.1 dense Interactive rows (Llama-2-70B, Llama-3.1-405B) at their submitted engines: is it the p99 TPOT
limit over the dataset's length spread, or the mean step, that sets the error? (issue 18; diagnosis only,
docs/gap_large_batch_decode.md "Round 37 (mlperf37)").

An Interactive result is valid only with p99 TTFT and p99 TPOT within the rules' limits (Llama-2-70B 450 ms / 40 ms,
Llama-3.1-405B 4.5 s / 80 ms; loadgen/mlperf.conf, fit/mlperf.MLPERF_RULES). The model holds both p99s
(fit/latency_limits.engine_within_limits: serve/tpot_tail.poisson_tpot_s and poisson_ttft_s), not the means. For each
row whose engine is read (fit/mlperf.MLPERF_LIMIT_ENGINES) this prints

- ``measured``: requests decoding per instance by Little's law (output tok/s per instance x mean TPOT), the mean
  TPOT, the run's tail (p99 / mean TPOT) and its p99 TTFT (LoadGen's summary figures, mlperf_points.csv);
- ``model @ load``: the submitted engine at that decode batch (serve/analytic.aggregated_by_batch): mean TPOT, its
  Poisson p99 / mean (the model's tail) and Poisson p99 TTFT at the point's own request rate (``TTFT99``: faster steps
  complete the same batch's requests faster, so this rate is the model's) and at the run's measured rate (``@rate``:
  the prefill queue at the load the run carried);
- ``model's pick``: the engine's best load within the limits as validate prices it (the row's prediction; its
  concurrency per instance served open-loop, serve/point.serve_at_concurrency): decode batch per instance, mean / p99
  TPOT, p99 TTFT, and which limit binds (within 3% of it);
- ``mean rule``: the same search judging the TPOT limit on the mean TPOT (the p99 TTFT still held), over the
  prediction: how much judging the p99 rather than the mean costs the model.

Reading (round 37): judging the TPOT limit on the mean instead would move every pick by -1..+2% (``mean rule``
0.99-1.02): the p99 is judged and it is not the lever. The model's TPOT tail (1.17-1.50) is at or above the runs'
(1.07-1.25) on four rows (H200 Llama-3.1-405B: 1.50 vs 1.68). Only B200 Llama-2-70B (+37.5%) is TPOT-bound in the
model; the other four picks are bound by the Poisson p99 TTFT. Two errors remain: (1) the mean step at the run's own
decode batch is 1.19-1.33x faster in the model than the run's on four rows, so the same batch completes requests
faster (a higher rate: B200 Llama-2 +31% at the run's 255 requests, the TPOT limit then admitting 356) and its
prompts queue behind shorter steps; (2) at the run's measured request rate the model's p99 TTFT matches the run's on
the two H200 rows (TP8 / TP1, 2,560 / 256-token budgets: 4.22 vs 4.32 s, 0.43 vs 0.43 s) but is 1.7x the run's on
B200 Llama-3.1-405B (TP4, 1,536: 4.26 vs 2.51 s) and 5.9x on GB200 x72 Llama-3.1-405B (TP4, 1,024, no fused
all-reduce: 20.3 vs 3.41 s), where the step itself matches (0.96x) and (2) alone sets the -51% (round 31's
full-budget mixed step). On B200 405B (1) and (2) cancel to +7%.

Reading (round 43, docs/gap_large_batch_decode.md "Round 43 (mlperf405_43)"): (2) is the harness, not the queue's
service. NVIDIA's llmlib harness deals Interactive queries round-robin over the instances (closed/NVIDIA/code/llmlib/
config.py), so each of k instances takes every k-th arrival (``k``; serve/open_loop.erlang_arrival_tail, priced since
round 43); ``Pois`` keeps the Poisson split. At the run's rate the p99 TTFT is now 2.91 vs 2.51 s on B200 405B (k 2)
and 5.00 vs 3.41 s on GB200 x72 (k 18), from 4.26 and 20.26 s; GB200's pick moves to the run's own load (36 a
instance, TPOT-bound: -50.8% -> -5.4%). With the TTFT tail no longer holding them back, (1) alone sets the other
rows: B200 405B +7.4 -> +42.1%, Nebius H200 Llama-2-70B (k 8) +14.2 -> +31.7%, B200 Llama-2-70B +37.3 -> +38.2%.
Run: python scripts/mlperf_interactive_tail37.py   (about ten seconds)
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jalapeno.fit.latency_limits import engine_within_limits
from jalapeno.fit.mlperf import MLPERF_LIMIT_ENGINES, load_mlperf
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import point_stack, point_workload
from jalapeno.serve.analytic import aggregated_by_batch
from jalapeno.serve.open_loop import poisson_ttft_s
from jalapeno.serve.tpot_tail import poisson_tpot_s
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model

#: How close (fraction) a p99 must sit to its limit to be called binding
BINDS = 0.03


def measured_running(
    throughput_per_chip: float, isl: float, osl: float, tpot_s: float, chips_per_instance: int
) -> float:
    """Requests decoding per instance by Little's law: output tok/s per instance x mean TPOT (s). The row's
    throughput per chip counts input and output tokens (fit/mlperf.py), so output tok/s = it x OSL / (ISL + OSL).

    >>> round(measured_running(13527.15, 222.33, 272.0, 0.03421, 1), 1)  # NVIDIA B200 Llama-2-70B Interactive
    254.6
    """
    return throughput_per_chip * osl / (isl + osl) * chips_per_instance * tpot_s


def _mean_rule(model, pr, one, wl, limit_tpot: float, limit_ttft: float, slots: float, k: int = 1) -> float:
    """Highest steady throughput per chip of the instance over 400 decode batches up to ``slots`` whose mean TPOT
    <= ``limit_tpot`` and Poisson p99 TTFT <= ``limit_ttft`` (steady state, no Server-run factor; ``k``: the
    harness's round-robin over k instances, serve/open_loop.erlang_arrival_tail)."""
    sp = aggregated_by_batch(model, pr, one, wl, np.geomspace(1.0, slots, 400))
    ok = sp.feasible & (sp.tpot_s <= limit_tpot) & (poisson_ttft_s(model, pr, one, wl, sp, arrival_k=k) <= limit_ttft)
    return float(sp.throughput_per_chip[ok].max()) if ok.any() else 0.0


def interactive_rows() -> list[dict]:
    """One dict per dense Interactive row with a read engine: the measured point, the model at its load, the
    model's pick within the limits and the mean-rule alternative (module docstring). Seconds, tok/s per chip."""
    rows = []
    for p in load_mlperf()[0]:
        if p.id not in MLPERF_LIMIT_ENGINES or not p.id.endswith("_Interactive") or p.model == "deepseek-r1":
            continue
        model, wl, dep = load_model(p.model), point_workload(p), p.deployment
        pr = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=point_stack(p))
        one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
        k = dep.decode.workers if p.server_run is not None and p.server_run.round_robin else 1  # round 43
        n = dep.decode.layout.chips
        m = p.measured
        run = measured_running(m["throughput_per_chip"], wl.mean_isl, wl.mean_osl, m["tpot_s"], n)
        pick = engine_within_limits(model, pr, dep, wl, p.concurrency, p.tpot_limit_s, p.ttft_limit_s, p.server_run)
        slots = p.concurrency / dep.decode.workers
        sp = aggregated_by_batch(model, pr, one, wl, np.array([run]))
        # the run's own request rate per instance (requests/s): throughput per chip counts ISL + OSL per request
        at_rate = dataclasses.replace(
            sp, request_rate_per_s=np.array([m["throughput_per_chip"] * n / (wl.mean_isl + wl.mean_osl)])
        )
        at_pick = serve_at_concurrency(model, pr, one, wl, [pick["concurrency"] / dep.decode.workers], idle_start=False)
        meas = _latencies(p.id)
        t99 = poisson_tpot_s(model, pr, one, wl, at_pick, arrival_k=k)[0]
        f99 = poisson_ttft_s(model, pr, one, wl, at_pick, arrival_k=k)[0]
        binds = [
            k for k, v, lim in (("TPOT", t99, p.tpot_limit_s), ("TTFT", f99, p.ttft_limit_s)) if v >= (1 - BINDS) * lim
        ]
        rows.append(
            {
                "id": p.id,
                "error": pick["throughput_per_chip"] / m["throughput_per_chip"] - 1,
                "running": run,
                "tpot_s": m["tpot_s"],
                "tail": meas["TPOT_p99"] / meas["TPOT_mean"],
                "ttft_p99_s": meas["TTFT_p99"],
                "model_tpot_s": float(sp.tpot_s[0]),
                "model_tail": float(poisson_tpot_s(model, pr, one, wl, sp, arrival_k=k)[0] / sp.tpot_s[0]),
                "model_ttft_p99_s": float(poisson_ttft_s(model, pr, one, wl, sp, arrival_k=k)[0]),
                "model_ttft_p99_at_rate_s": float(poisson_ttft_s(model, pr, one, wl, at_rate, arrival_k=k)[0]),
                "poisson_ttft_p99_at_rate_s": float(poisson_ttft_s(model, pr, one, wl, at_rate)[0]),
                "k": k,
                "pick_running": float(at_pick.decode_batch[0]),
                "pick_tpot_s": float(at_pick.tpot_s[0]),
                "pick_tpot_p99_s": float(t99),
                "pick_ttft_p99_s": float(f99),
                "binds": "+".join(binds) or "-",
                "mean_rule_over_pick": _mean_rule(model, pr, one, wl, p.tpot_limit_s, p.ttft_limit_s, slots, k)
                / (pick["throughput_per_chip"] / pick["run_factor"]),
            }
        )
    return rows


def _latencies(row_id: str) -> dict:
    """The run's TTFT / TPOT mean and p99 (s): scripts/mlperf_server_tpot_tail35.measured_latencies."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().with_name("mlperf_server_tpot_tail35.py")
    spec = importlib.util.spec_from_file_location("mlperf_server_tpot_tail35", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.measured_latencies(row_id)


def main() -> None:
    print(
        f"{'row':52s} {'err':>6s} | {'run':>5s} {'TPOT':>5s} {'tail':>4s} {'TTFT99':>6s} | {'TPOT':>5s} {'tail':>4s} "
        f"{'TTFT99':>6s} {'@rate':>5s} {'Pois':>5s} {'step':>5s} | {'run':>5s} {'TPOT':>5s} {'p99':>5s} {'TTFT99':>6s} {'binds':>9s} | "
        f"{'mean rule':>9s} {'k':>3s}"
    )
    print(f"{'':52s} {'':6s} | {'measured (ms, s)':^24s} | {'model @ the run load':^29s} | {'model pick':^35s} |")
    for r in interactive_rows():
        print(
            f"{r['id'][9:61]:52s} {r['error']:+6.1%} | {r['running']:5.0f} {r['tpot_s'] * 1e3:5.1f} {r['tail']:4.2f} "
            f"{r['ttft_p99_s']:6.2f} | {r['model_tpot_s'] * 1e3:5.1f} {r['model_tail']:4.2f} {r['model_ttft_p99_s']:6.2f} {r['model_ttft_p99_at_rate_s']:5.2f} "
            f"{r['poisson_ttft_p99_at_rate_s']:5.2f} {r['tpot_s'] / r['model_tpot_s']:5.2f} | {r['pick_running']:5.0f} {r['pick_tpot_s'] * 1e3:5.1f} "
            f"{r['pick_tpot_p99_s'] * 1e3:5.1f} {r['pick_ttft_p99_s']:6.2f} {r['binds']:>9s} | "
            f"{r['mean_rule_over_pick']:9.2f} {r['k']:3d}"
        )


if __name__ == "__main__":
    main()
