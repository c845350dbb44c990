"""The prefill stall inside aggregated TPOT on aiconfigurator's measured rows, and what-ifs (docs/model.md §12).

For aiconfigurator's DeepSeek-R1 aggregated rows of one system and framework prefix (default B200,
SGLang; TP attention, no MTP), each row's deployment is served as validated (serve/point
``serve_at_concurrency``) and with one scheduling rule changed at a time:

- ``sep``: prefill-first steps (``Deployment.prefill_steps = "separate"``);
- ``bud-C``: the chunk shrunk by the decode rows beside it (token budget 8192 − C: SGLang's
  ``PrefillAdder`` subtracts the running batch from ``rem_chunk_tokens`` under mixed chunks);
- ``16k``: a 16,384-token chunk budget;
- ``mha``: every step that carries a prompt chunk also runs the B decode rows through the
  non-absorbed MLA path (SGLang's DeepSeek dispatch of a MIXED batch to ``MHA_CHUNKED_KV``):
  TPOT + f·(step(B one-token prefill rows at context L) − step(B decode rows at L)), f the
  fraction of steps carrying a chunk (:func:`chunk_step_fraction`);
- ``kmoe``: every step's routed-expert block priced by the row's engine's measured kernel at the
  row's exact shape and layout (MoE TP, EP) instead of the calibrated form (a
  cost/moe_backend.MeasuredMoePricer over a curve read from aiconfigurator's ``moe_perf`` table of
  the row's framework, :data:`KERNEL_SOURCES`; :func:`measured_curve`); ``kdec`` is the decode-only
  step under it, and ``pre8k`` the step of one whole prompt alone (ISL tokens) under the
  calibrated form and under the measured kernel (the prefill-by-precision lead, docs/model.md §12).

Columns also give the modelled decode-only step and the implied prefill stall per prompt
(:func:`implied_stall_s`) against the model's. Nothing is fitted or written.
Run: python scripts/agg_prefill_stall.py [--system b200] [--framework sglang] [--isl 8192]
(the ``kmoe`` columns need the aiconfigurator-core package: pip install -e ".[calibrate]")
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

from jalapeno.cost.moe_backend import MeasuredMoePricer, MoeCurve
from jalapeno.cost.step import Batch, pool_step_cost
from jalapeno.serve.limits import decode_step_s


def implied_stall_s(tpot_s: float, decode_step: float, osl: float, users: float) -> float:
    """Prefill stall per prompt a TPOT implies, s: (TPOT − decode-only step)·(OSL − 1)/(C − 1).

    Each of a request's OSL − 1 decode steps waits out the prompts of the other C − 1 users once
    per cycle, so their prefill work spread over its steps is (C − 1)·stall/(OSL − 1).

    Raises:
        ValueError: ``users`` ≤ 1 (no other user's prompt to wait out) or ``osl`` ≤ 1, naming the field.
    """
    if users <= 1:
        raise ValueError(f"users: {users} leaves no other prompt to wait out; pass a concurrency above 1")
    if osl <= 1:
        raise ValueError(f"osl: {osl} has no decode step; pass an output length above 1")
    return (tpot_s - decode_step) * (osl - 1) / (users - 1)


def chunk_step_fraction(batch: float, isl: float, osl: float, chunk: float) -> float:
    """Fraction f of decode steps that carry a prompt chunk: min(1, B·ISL/((OSL − 1)·chunk)).

    B users each bring ISL prompt tokens per OSL − 1 decode steps (Little's law, serve/analytic.py),
    arriving as whole chunks of ``chunk`` tokens.

    Raises:
        ValueError: ``chunk`` ≤ 0 or ``osl`` ≤ 1, naming the field.
    """
    if chunk <= 0:
        raise ValueError(f"chunk: {chunk} tokens; pass a positive chunk budget")
    if osl <= 1:
        raise ValueError(f"osl: {osl} has no decode step; pass an output length above 1")
    return min(1.0, batch * isl / ((osl - 1) * chunk))


#: (aiconfigurator framework folder, table dtype) -> the kernel_source the what-if reads: TensorRT-LLM's
#: FP8 block-scale MoE is the table's only fp8_block path (DeepGEMM); its NVFP4 path is CUTLASS, the
#: default ``moe_config.backend`` (a launch that names TRTLLM runs ``moe_torch_flow_min_latency``, whose
#: EP1 rows the collector ran through a BF16xFP4 kernel: fit/moe_backends.MIN_EP); SGLang's table holds
#: one path per dtype at DeepSeek's shape, FlashInfer's TRT-LLM-gen MoE.
KERNEL_SOURCES = {
    ("trtllm", "fp8_block"): "deepgemm",
    ("trtllm", "nvfp4"): "moe_torch_flow_cutlass",
    ("sglang", "fp8_block"): "sglang_flashinfer_trtllm_moe",
    ("sglang", "nvfp4"): "sglang_flashinfer_trtllm_moe",
}
#: the precision's routed-expert compute format -> the table's dtype of it
TABLE_DTYPES = {"fp8": "fp8_block", "fp4": "nvfp4"}


def measured_curve(
    df, source: str, dtype: str, hidden: int, inter: int, experts: int, top_k: int, moe_tp: int, ep: int, fmt: str
) -> MoeCurve:
    """The measured routed-expert curve of one kernel at one shape and layout (balanced routing).

    ``df``: an aiconfigurator ``moe_perf`` table (latency in ms). Each row's load is its busiest
    rank's token-expert assignments, num_tokens · top_k / ep (the collector's routing is exactly
    balanced), its time the fastest of repeated rows, in s; ``inter`` is the full expert
    intermediate size (the curve's is inter / moe_tp, the op's ``kn``).

    Raises:
        ValueError: fewer than two rows of that kernel, dtype, shape and layout (names them).
    """
    d = df[
        (df.kernel_source == source)
        & (df.moe_dtype == dtype)
        & (df.distribution == "balanced")
        & (df.hidden_size == hidden)
        & (df.inter_size == inter)
        & (df.num_experts == experts)
        & (df.topk == top_k)
        & (df.moe_tp_size == moe_tp)
        & (df.moe_ep_size == ep)
    ]
    g = d.groupby("num_tokens", as_index=False).latency.min().sort_values("num_tokens")
    if len(g) < 2:
        raise ValueError(
            f"kernel_source: no {source} {dtype} curve at hidden {hidden}, inter {inter}, {experts} experts, "
            f"top-{top_k}, moe_tp {moe_tp}, ep {ep}; pick a layout the table measured"
        )
    return MoeCurve(
        float(hidden),
        float(inter / moe_tp),
        fmt,
        g.num_tokens.to_numpy(float) * top_k / ep,
        g.latency.to_numpy(float) * 1e-3,
        label=f"{source} {dtype}",
    )


def mha_rows_batch(batch: float, ctx: float) -> Batch:
    """Two step batches (shape (2,)): B decode rows at context ``ctx``, and the same B rows as
    one-token prefill sequences with a cached prefix of ``ctx`` (the non-absorbed MLA form)."""
    return Batch.make(
        decode_seqs=np.array([batch, 0.0]),
        decode_ctx=ctx,
        prefill_tokens=np.array([0.0, batch]),
        prefill_ctx=ctx,
        prefill_seqs=np.array([0.0, batch]),
    )


def _rows(system: str, framework: str, isl: int):
    from jalapeno.fit.validate import load_aiconfigurator

    pts, _ = load_aiconfigurator()
    keep = [
        p
        for p in pts
        if p.model == "deepseek-r1"
        and p.mode == "agg"
        and p.system == system
        and p.isl == isl
        and p.framework.startswith(framework)
        and p.deployment is not None
        and p.deployment.mtp is None
        and " DP1 " in p.deployment.label
    ]
    return sorted(keep, key=lambda p: (p.framework, p.deployment.label, p.concurrency))


def main(system: str, framework: str, isl: int) -> None:
    from jalapeno.fit.mlperf_scenarios import priced_point
    from jalapeno.serve.open_loop import decode_pool_step
    from jalapeno.serve.point import serve_at_concurrency

    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_table

    tables = {}
    print(
        "| framework | deployment | C | TPOT meas ms | model ms | decode-only ms | stall/prompt meas s | model s | "
        "sep ms | bud-C ms | 16k ms | mha ms | kmoe ms | kdec ms | pre8k form / kmoe ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in _rows(system, framework, isl):
        model, pricer, dep, wl = priced_point(p)
        lay, c = dep.decode.layout, int(p.concurrency)
        if c <= 1:
            continue
        run = serve_at_concurrency(model, pricer, dep, wl, [c])
        b, tpot = float(run.decode_batch[0]), float(run.tpot_s[0])
        sc = pool_step_cost(
            model,
            pricer,
            dep,
            lay,
            mha_rows_batch(b / lay.pp, wl.decode_ctx),
        )
        dec = decode_pool_step(model, pricer, dep, wl.decode_ctx, [b])  # as served: pool backends, graph padding
        t_dec = float(decode_step_s(dec, pricer.efficiency, dep, np.array([b]), lay)[0])
        f = chunk_step_fraction(b / lay.pp, wl.mean_isl, wl.mean_osl, min(wl.mean_isl, dep.prefill_budget(lay)))
        what_if = [
            float(serve_at_concurrency(model, pricer, d, wl, [c]).tpot_s[0])
            for d in (
                dataclasses.replace(dep, prefill_steps="separate"),
                dataclasses.replace(dep, token_budget=max(8192 - c, 1)),
                dataclasses.replace(dep, token_budget=16384),
            )
        ]
        mha = tpot + f * float(sc.step_time_s[1] - sc.step_time_s[0])
        fw = p.framework.split()[0]
        if fw not in tables:
            tables[fw] = load_table(AIC_SYSTEM_DIRS[p.system], "moe", "moe_perf", fw)[0]
        kpr = MeasuredMoePricer(
            pricer,
            measured_curve(
                tables[fw],
                KERNEL_SOURCES[(fw, TABLE_DTYPES[p.precision])],
                TABLE_DTYPES[p.precision],
                model.hidden_size,
                model.moe.expert_intermediate,
                model.moe.num_experts,
                model.moe.top_k,
                lay.moe_tp,
                lay.ep,
                p.precision,
            ),
            fw,
        )
        ktpot = float(serve_at_concurrency(model, kpr, dep, wl, [c]).tpot_s[0])
        # kdec by hand: the table's experts in place of the pool's (decode_pool_step would wrap the pool's MoE backend
        # over kpr's curve)
        kdec = float(
            decode_step_s(
                pool_step_cost(
                    model, kpr, dep, lay, Batch.make(decode_seqs=np.array([b / lay.pp]), decode_ctx=wl.decode_ctx)
                ),
                kpr.efficiency,
                dep,
                np.array([b]),
                lay,
            )[0]
        )
        pre = Batch.make(
            decode_seqs=np.array([0.0]),
            decode_ctx=0.0,
            prefill_tokens=np.array([wl.mean_isl]),
            prefill_ctx=0.0,
            prefill_seqs=np.array([1.0]),
        )
        pre_s = [float(pool_step_cost(model, q, dep, lay, pre).step_time_s[0]) for q in (pricer, kpr)]
        meas = p.measured["tpot_s"]
        print(
            f"| {p.framework} | {dep.label} | {c} | {meas * 1e3:.1f} | {tpot * 1e3:.1f} | {t_dec * 1e3:.1f} | "
            f"{implied_stall_s(meas, t_dec, wl.mean_osl, c):.2f} | {(tpot - t_dec) * (wl.mean_osl - 1) / b:.2f} | "
            + " | ".join(f"{x * 1e3:.1f}" for x in (*what_if, mha, ktpot, kdec))
            + f" | {pre_s[0] * 1e3:.0f} / {pre_s[1] * 1e3:.0f} |"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--system", default="b200")
    ap.add_argument("--framework", default="sglang", help="framework prefix, e.g. 'sglang 0.5.9' or 'trtllm'")
    ap.add_argument("--isl", type=int, default=8192)
    ap.add_argument(
        "--trtllm-fp4",
        choices=("cutlass", "trtllm"),
        default="cutlass",
        help="TensorRT-LLM NVFP4 MoE backend the kmoe columns read (trtllm: TRT-LLM-gen)",
    )
    a = ap.parse_args()
    if a.trtllm_fp4 == "trtllm":
        KERNEL_SOURCES[("trtllm", "nvfp4")] = "moe_torch_flow_min_latency"
    try:
        main(a.system, a.framework, a.isl)
    except ValueError as e:  # a layout the kernel table did not measure: one line naming the field, not a traceback
        raise SystemExit(f"error: {e}") from None
