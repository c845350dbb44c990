"""Decode-slot occupancy of the identified disaggregated InferenceX rows: measured, modelled, and
what a slot held per request would have to be to explain the difference (docs/gap_gb200_fp4_8k1k.md,
Update 7), and the decode step bracketed by TensorRT-LLM's attention-DP CUDA-graph padding (Update 8).

For every ``matched`` disaggregated row (Dynamo + TRT-LLM on GB200, B200, H100; the deployment is
the row's identified recipe entry) it serves the row's deployment at its concurrency
(serve/point.py) and prints:

- slots: decode workers x ``max_batch_size`` per attention-DP rank x ranks (the model's
  ``max_running`` cap);
- B_meas: the sequences the measurement has decoding on average, output tokens/s x TPOT (Little's
  law over the decode phase; no TTFT assumption), and B_meas / slots;
- B_run: the model's run-average decoding sequences, λ_run x (OSL − 1) x TPOT_model (the benchmark
  run's request rate, idle-start wave included, serve/point.run_throughput);
- λ: the measured request rate (output tokens/s / mean OSL) and the model's;
- ρ_p: the model's prefill-pool utilisation at the *measured* request rate (λ_meas x ISL / the
  pool's prompt tokens/s, serve/disagg.prefill_perf): how close the model's prefill workers would
  be to saturation at the measured load;
- hold: (min(B_run, slots) − B_meas) / λ_meas, s — how long each request would have to hold a
  decode slot without decoding (or be kept from one) to close the gap between the model's
  occupancy and the measured one;
- hand-off: the model's KV hand-off per request, ms, as priced (``kv_transfer_s`` of the
  serving point) and over a single lane (one prefill rank to one decode rank: under attention DP
  a request's KV lives on one attention rank), for comparison with ``hold``;
- TTFT (measured where published, model p50) and the model's TPOT / throughput errors;
- step: the model's decode step priced at B_meas per decode worker (serve/open_loop.decode_pool_step: the
  pool's engine backends, overlap and CUDA-graph padding of equally loaded ranks; serve/limits.decode_step_s) beside the step the measured TPOT implies (TPOT x
  the tokens a sequence emits per verify step at the row's MTP acceptance);
- step@slots: the same step priced with every decode slot of the worker full (``max_batch_size``
  per attention rank). Under attention DP with CUDA-graph padding (the recipes' ``cuda_graph_config:
  enable_padding: true``) TensorRT-LLM pads every rank's generation batch with dummy requests to the
  graph batch size at or above the *largest* batch across the attention-DP ranks
  (``_get_padded_batch``: ``new_batch_size = max(...)`` over ``tp_allgather([can_run_cuda_graph,
  batch_size])``, then ``_round_up_batch_size``), so the step the measurement times runs at the
  fullest rank's batch: between step@B_meas (ranks equally loaded) and step@slots (one rank full).
  ``bracket`` says where the implied step falls: ``in`` (between the two), ``above`` or ``below``
  (docs/gap_gb200_fp4_8k1k.md, Update 8); both are "—" on decode workers without attention DP
  (one batch per worker: the padding only rounds it up to the next captured graph size).

Run: python benchmarks/bench_disagg_occupancy.py [ROW ...]   (default: every matched disagg row)
"""

from __future__ import annotations

import sys
from importlib import resources

import numpy as np

from jalapeno.cost.pool_backends import with_moe_backend
from jalapeno.deploy.deployment import pool_overlap
from jalapeno.fit.entries import with_stack_mtp
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import INFERENCEX_RANGE_RATIO, point_stack
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.serve.disagg import kv_transfer_s, prefill_perf
from jalapeno.serve.limits import decode_step_s
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.workload import Workload


def _fmt(v: float | None, spec: str) -> str:
    return "—" if v is None else format(v, spec)


def main(rows: tuple[int, ...] = ()) -> None:
    pts, _ = load_inferencex(resources.files("jalapeno") / "data" / "validation" / "inferencex_points.csv")
    want = {f"inferencex_points:{r}" for r in rows}
    print(
        "row  system       C      slots  B_meas  occ   B_run  occ_m  λ_meas λ_model  ρ_p   hold_s  "
        "handoff_ms(priced/1 lane)  TTFT meas/model_s  TPOT_err  thr_err  step@B_meas/implied_ms  step@slots  bracket"
    )
    for p in pts:
        dep0 = p.deployment
        if (want and p.id not in want) or p.mapping != "matched" or dep0 is None or dep0.prefill is None:
            continue
        st = point_stack(p)
        dep = with_stack_mtp(dep0, st, p.model)
        model = load_model(p.model)
        pr = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
        wl = Workload(f"{p.isl}/{p.osl}", p.isl, p.osl, 1.0 if p.fixed_lengths else INFERENCEX_RANGE_RATIO)
        r = serve_at_concurrency(model, pr, dep, wl, [p.concurrency])
        pre = prefill_perf(
            model,
            with_moe_backend(pr, dep.prefill.moe_backend, model, dep.prefill.layout),
            dep.prefill.layout,
            dep.precision,
            wl,
            dep.prefill_budget(dep.prefill.layout),
            pool_overlap(dep.overlap, model, dep.prefill.layout),
        )
        m = p.measured
        thr, tpot = m.get("throughput_per_chip"), m.get("tpot_s")
        if thr is None or tpot is None:
            continue
        chips = float(r.chips[0])
        out_tok_s = thr * chips * wl.mean_osl / (wl.mean_isl + wl.mean_osl)
        lam = out_tok_s / wl.mean_osl
        b_meas = out_tok_s * tpot
        b_run = float(r.request_rate_per_s[0] * r.tpot_s[0] * (wl.mean_osl - 1))
        slots = dep.decode.workers * dep.running_limit(dep.decode.layout) if dep.max_running else None
        rho = lam * wl.mean_isl / (dep.prefill.workers * pre.tokens_per_s)
        hold = (min(b_run, slots) - b_meas) / lam if slots else None
        one_lane = kv_transfer_s(model, pr, dep.precision, wl.mean_isl, 1, 1, int(chips))
        ttft = m.get("ttft_s")
        step, implied = _step_at(model, pr, dep, wl, b_meas / dep.decode.workers), tpot * _tokens_per_step(dep.mtp)
        adp = dep.decode.layout.dp > 1  # the max-over-ranks padding needs attention DP
        full = _step_at(model, pr, dep, wl, slots / dep.decode.workers) if slots and adp else None
        print(
            f"{p.id.split(':')[1]:>4} {p.system[:11]:11s} {p.concurrency:6g} {_fmt(slots, '6g')} {b_meas:7.0f} "
            f"{_fmt(b_meas / slots if slots else None, '5.2f')} {b_run:6.0f} "
            f"{_fmt(min(b_run, slots) / slots if slots else None, '5.2f')} {lam:7.1f} "
            f"{r.request_rate_per_s[0]:7.1f} {rho:5.2f} {_fmt(hold, '7.2f')}  "
            f"{r.kv_transfer_s[0] * 1e3:8.2f} / {one_lane * 1e3:6.2f}          "
            f"{_fmt(ttft, '6.2f')} / {r.ttft_p50_s[0]:6.2f}   {(r.tpot_s[0] / tpot - 1) * 100:+6.1f}%  "
            f"{(r.throughput_per_chip[0] / thr - 1) * 100:+6.1f}%  {step * 1e3:6.1f} / {implied * 1e3:6.1f}  "
            f"{_fmt(None if full is None else full * 1e3, '6.1f')}  {_bracket(step, full, implied)}"
        )


def _bracket(low: float, high: float | None, implied: float) -> str:
    """Where the implied step falls against [step at B_meas, step with every slot full] ("—": no attention DP)."""
    if high is None:
        return "—"
    lo, hi = min(low, high), max(low, high)
    return "in" if lo <= implied <= hi else ("above" if implied > hi else "below")


def _tokens_per_step(mtp) -> float:
    """Tokens a sequence emits per verify step: 1 + a + ... + a^k (k drafts at per-token acceptance a)."""
    return 1.0 if mtp is None else float(sum(mtp.acceptance**i for i in range(mtp.draft_tokens + 1)))


def _step_at(model, pricer, dep, wl: Workload, batch: float) -> float:
    """The decode pool's step, s, at ``batch`` sequences per decode worker (context ISL + OSL/2)."""
    b = np.array([batch])
    sc = decode_pool_step(model, pricer, dep, wl.decode_ctx, b)  # as served: pool backends, overlap, graph padding
    return float(decode_step_s(sc, pricer.efficiency, dep, b, dep.decode.layout)[0])


if __name__ == "__main__":
    main(tuple(int(x) for x in sys.argv[1:]))
