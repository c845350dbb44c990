"""MLPerf v5.1 TensorRT-LLM Llama-2-70B Interactive rows (B200 / GB200 x4 +38%, H200 -12%): the submission's engine
build read against TensorRT-LLM's builder, the mixed prompt + decode steps under Poisson arrivals, decode attention
at the dataset's per-sequence contexts, and the peer runs that changed the chunk budget (issue 18, diagnosis only;
docs/gap_large_batch_decode.md "Round 52 (mlperfint52)"). Nothing here changes a prediction.

Four tables:

1. ``build``: what the B200 Llama-2-70B engines ran, from their configs (mlcommons/inference_results_v5.1 @965182b
   closed/NVIDIA/configs/B200-SXM-180GBx8/{Interactive,Server,Offline}/llama2-70b.py) read through TensorRT-LLM's
   ``tensorrt_llm/builder.py`` ``build()`` (:data:`BUILD_FACTS`).
2. ``mixed``: each TensorRT Llama-2-70B row's steps at the run's own load (Little's law): prompts arriving per step
   per instance a = B / (OSL - 1), the share of steps that carry a prompt under Poisson arrivals (1 - e^-a) against the
   model's (a mean prompt load p = B x ISL / (OSL - 1) tokens a step carried as a share p / chunk of steps with one
   whole chunk, serve/analytic._chunk_step_load), how far the step is from a line in its prompt tokens, the mean step
   as the model plans it before round 52 (``plan``), with the chunk capped at the room the decode rows leave in
   ``max_num_tokens`` (``room``) and as a line at the mean load (``linear``, the Poisson grouping's mean on a linear
   step), the model's TPOT as shipped, and the p99 / mean of the per-query TPOT, measured (LoadGen summary) and the
   model's (serve/tpot_tail.poisson_tpot_s, with the harness's round-robin dispatch).
3. ``attention``: the decode attention op of one step at the run's batch priced at the mean context (as the model
   does) and averaged over the dataset's per-sequence contexts (each output token of each sample at ISL + t), with
   TensorRT-LLM's per-(sequence, KV head) floor (cost/decode_blocks.py) applied per sequence: the convexity the mean
   context hides.
4. ``budget``: the B200 Llama-2-70B Interactive peer runs (docs/data/mlperf51_peer_runs.csv) with their configs'
   runtime ``max_num_tokens`` (:data:`PEER_BUDGET`): the one run at 512 tokens against the 768-token runs.

Reading (round 52): the B200 step the model misses (~8 ms at 255 decoding requests) is neither how prompts share the
steps (the model's B200 step is linear in the prompt tokens it carries, 0.042 ms a token at 255 decode rows, so the
Poisson grouping leaves the mean step) nor the per-sequence context (the attention floor binds for 41% of the
sequences and adds 0.25 ms); the Interactive limit is LoadGen's p99 of per-query TPOT, which the model holds and
whose p99 / mean it meets at the run's load (1.119 against 1.115). The B200 engines all run the NVFP4 GEMM plugin
(the builder turns it on for an NVFP4 checkpoint unless ``gemm_plugin: 'disable'``), so ``gemm_plugin: 'fp4'`` marks
no kernel difference between the Interactive and Server engines; the KV dtype stays undetermined. One thing the
table does find: TensorRT-LLM's ``max_num_tokens`` counts the decode rows, so the H200 Interactive engine (256) leaves
149 prompt tokens a step beside its ~107 decoding requests, not the mean prompt's 222 the model carried (``room``:
serve/chunked.step_room, MIXED_STEP_ROOM_ON, shipped on). AMD's Interactive steps are priced slow (0.79 / 0.85 of
the model) where B200's is priced fast (1.31): not the same mechanism.
Run: python scripts/mlperf_interactive52.py   (about twenty seconds)
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling scripts, as the others import them

from mlperf_interactive_tail37 import measured_running  # noqa: E402
from mlperf_peer_runs38 import peer_runs  # noqa: E402

import jalapeno.cost.decode_blocks as decode_blocks  # noqa: E402
from jalapeno.cost.pool_backends import with_pool_backends  # noqa: E402
from jalapeno.cost.step import Batch, pool_step_cost  # noqa: E402
from jalapeno.fit.latency_limits import dealt_instances  # noqa: E402
from jalapeno.fit.mlperf import load_mlperf  # noqa: E402
from jalapeno.fit.mlperf_scenarios import priced_point  # noqa: E402
from jalapeno.serve.analytic import aggregated_by_batch  # noqa: E402
from jalapeno.serve.tpot_tail import poisson_tpot_s  # noqa: E402

_RES = "inference_results_v5.1 @965182b closed/NVIDIA/configs/B200-SXM-180GBx8/{}/llama2-70b.py"
_TRT = "NVIDIA/TensorRT-LLM tensorrt_llm/builder.py build()"

#: (fact, source): the B200 Llama-2-70B engines' build as TensorRT-LLM's builder reads their configs
BUILD_FACTS = (
    (
        "every config sets precision 'fp4' (NVFP4 checkpoint); the builder enables the NVFP4 GEMM plugin for an NVFP4 "
        "checkpoint unless gemm_plugin is explicitly 'disable' ('NVFP4 quantization detected, by default enabling "
        "NVFP4 GEMM plugin'): Interactive ('gemm_plugin': 'fp4') and Server / Offline (no gemm_plugin) run the same "
        "FP4 GEMM plugin",
        f"{_RES.format('{Interactive,Server,Offline}')}; {_TRT}, the NVFP4 branch before the network is built",
    ),
    (
        "use_fp8_context_fmha + use_paged_context_fmha without an FP8 KV cache: the builder turns FP8 context FMHA "
        "off with a warning ('FP8 Paged Context FMHA is disabled because it must be used together with fp8 KV "
        "Cache') and builds; so the Interactive config's FP8 context FMHA does not force an FP8 KV cache",
        f"{_RES.format('Interactive')}; {_TRT}, 'Logics to control paged_context_fmha and fp8_context_fmha'",
    ),
    (
        "the result's calibration_process.adoc runs 'make calibrate ... --scenarios=Interactive' (the Interactive "
        "config: no kv_cache_dtype, llmlib default None), but the checkpoint folder is one per (TP, PP, precision) "
        "and TRTLLMQuantizerOp reuses an existing one without --force_calibration: the KV dtype stays undetermined",
        "inference_results_v5.1 @965182b closed/NVIDIA/measurements/B200-SXM-180GBx8_TRT/llama2-70b-99/Interactive/"
        "calibration_process.adoc; closed/NVIDIA/code/llmlib/builder.py TRTLLMQuantizerOp.run",
    ),
    (
        "vboost_slider 1 on the Llama-2-70B Server and Offline configs of B200 and GB200 (x4, x72) only (no "
        "Interactive, no Llama-3.1-405B config); every Nebius H200 Llama config sets it. On Blackwell it separates the "
        "sign of round 47's fit-group residuals (the two vboost groups, B200 / GB200 x4 Llama-2-70B Server, -13.0 / "
        "-3.2 ms; the four without, +6.6 to +15.4 ms), but no source gives its clock and the sizes disagree: with the "
        "Interactive engine's +8.1 ms as a per-step term the Server steps would need 1.2x (B200) and 1.1x (GB200) "
        "faster compute; and B200 Llama-3.1-405B's Interactive and Server engines (neither with vboost) still differ "
        "by +8.8 ms, so vboost is not the Interactive mechanism",
        "inference_results_v5.1 @965182b closed/NVIDIA/configs/{B200-SXM-180GBx8,GB200-NVL72_GB200-186GB_aarch64x4,"
        "GB200-NVL72_GB200-186GB_aarch64x72}/*/{llama2-70b,llama3_1-405b}.py (harness_fields.vboost_slider)",
    ),
)

#: runtime ``max_num_tokens`` of each B200 Llama-2-70B Interactive peer's config (inference_results_v5.1 @965182b
#: closed/<submitter>/configs/<system>/Interactive/llama2-70b.py, the accuracy-0.99 entry); None: no config in the
#: repository (Supermicro)
PEER_BUDGET = {"NVIDIA": 768, "Dell": 768, "Google": 768, "Nebius": 768, "GigaComputing": 512, "Supermicro": None}

_ROWS = (
    "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_Interactive",
    "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_Server",
    "mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama2-70b-99_Interactive",
    "mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama2-70b-99_Server",
)


def prompt_share(a: float) -> float:
    """Share of steps carrying at least one prompt when ``a`` prompts arrive per step as a Poisson stream: 1 - e^-a.

    >>> round(prompt_share(0.94), 3)  # B200 Interactive: 27.5 queries/s a GPU x 34.2 ms
    0.609
    """
    return float(-np.expm1(-a))


def _row(pts, rid: str):
    """Validation row ``rid`` of ``pts`` (its harness term, fit/mlperf_engines.LLAMA_TRT_HARNESS_STEP_S, kept: priced_point
    adds it to the pricer)."""
    return next(p for p in pts if p.id == rid)


def _step_curve(model, pr, dep, wl, b: float, tokens: np.ndarray) -> np.ndarray:
    """The model's step (s) with ``b`` decoding rows and ``tokens`` (M,) prompt tokens (chunks of the mean ISL)."""
    lay = dep.decode.layout
    tok = np.asarray(tokens, dtype=float)
    bat = Batch.make(
        decode_seqs=np.full(tok.shape, b),
        decode_ctx=wl.decode_ctx,
        prefill_tokens=tok,
        prefill_ctx=0.0,
        prefill_seqs=tok / wl.mean_isl,
    )
    pr2 = with_pool_backends(pr, dep.decode, model, lay, dep.precision.kv_cache.name)
    return pool_step_cost(model, pr2, dep, lay, bat).step_time_s


def mixed_rows(pts=None) -> list[dict]:
    """Table 2: one dict per TensorRT Llama-2-70B Interactive / Server row (:data:`_ROWS`)."""
    pts = pts if pts is not None else load_mlperf()[0]
    peers = {
        (r["submitter"], r["system"].replace("_TRT", ""), r["scenario"]): r
        for sc in ("Interactive", "Server")
        for r in peer_runs(benchmark="llama2-70b-99", scenario=sc)
    }
    out = []
    for rid in _ROWS:
        p = _row(pts, rid)
        model, pr, dep, wl = priced_point(p)
        chips = dep.decode.layout.chips
        m = p.measured
        b = measured_running(m["throughput_per_chip"], wl.mean_isl, wl.mean_osl, m["tpot_s"], chips)
        one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
        sp = aggregated_by_batch(model, pr, one, wl, np.array([b]))
        tau = float(sp.tpot_s[0])
        p99 = float(poisson_tpot_s(model, pr, one, wl, sp, arrival_k=dealt_instances(dep, p.server_run))[0])
        budget = dep.prefill_budget(dep.decode.layout)
        left = max(budget - b, 0.0)  # TensorRT-LLM's max_num_tokens counts the decode rows too
        p_tok = b * wl.mean_isl / (wl.mean_osl - 1)  # Little's law: b / (OSL - 1) prompts a step, ISL tokens each
        a = p_tok / wl.mean_isl
        chunk = min(wl.mean_isl, budget)
        f = min(1.0, p_tok / chunk)
        grid = np.linspace(0.0, max(left, chunk), 9)
        curve = _step_curve(model, pr, dep, wl, b, grid)
        slope, icpt = np.polyfit(grid, curve, 1)
        plan_s = _step_curve(model, pr, dep, wl, b, np.array([0.0, max(p_tok, chunk)]))
        f_room = min(1.0, p_tok / min(chunk, left))  # serve/chunked.step_room: the chunk is what the decode rows leave
        room_s = _step_curve(model, pr, dep, wl, b, np.array([max(p_tok, min(chunk, left))]))
        system, scen = rid[9:].split("_TRT_")[0], rid.rsplit("_", 1)[1]
        sub, system = system.split("_", 1)
        run = peers[(sub, system, scen)]
        out.append(
            {
                "row": rid[9:],
                "running": b,
                "a": a,
                "share_poisson": prompt_share(a),
                "share_model": f,
                "tokens_per_step": p_tok,
                "left": left,
                "per_token_s": float(slope),
                "nonlinear": float(np.max(np.abs(curve - (icpt + slope * grid))) / curve[0]),
                "model_mix_s": (1 - f) * plan_s[0] + f * plan_s[1],
                "room_mix_s": float((1 - f_room) * plan_s[0] + f_room * room_s[0]),
                "poisson_s": float(icpt + slope * p_tok),
                "tau_s": tau,
                "p99_s": p99,
                "measured_s": m["tpot_s"],
                "measured_ratio": run["tpot_p99_ms"] / run["tpot_mean_ms"],
            }
        )
    return out


def token_contexts(wl, n: int = 200_000, seed: int = 0) -> np.ndarray:
    """Contexts (tokens) of ``n`` decode rows drawn from the workload's (ISL, OSL) pairs as a running batch holds
    them: a sample in proportion to its outputs, at ISL + t with t uniform over its output."""
    s = wl.spread
    rng = np.random.default_rng(seed)
    idx = rng.choice(s.isl_tokens.size, n, p=s.osl_tokens / s.osl_tokens.sum())
    return s.isl_tokens[idx] + rng.uniform(0.0, s.osl_tokens[idx])


def attention_rows(pts=None) -> list[dict]:
    """Table 3: per TensorRT Llama-2-70B Interactive row, the decode attention op (s a step, all layers) at the run's
    batch priced at the mean context and averaged over :func:`token_contexts` (per sequence: a uniform batch at each
    context, whose op is B x the per-sequence time with the floor per (sequence, KV head) block)."""
    pts = pts if pts is not None else load_mlperf()[0]
    out = []
    for rid in _ROWS[::2]:
        p = _row(pts, rid)
        model, pr, dep, wl = priced_point(p)
        m = p.measured
        b = measured_running(m["throughput_per_chip"], wl.mean_isl, wl.mean_osl, m["tpot_s"], dep.decode.layout.chips)
        ctx = token_contexts(wl)
        grid = np.linspace(1.0, float(np.quantile(ctx, 0.9999)), 400)
        lay = dep.decode.layout
        pr2 = with_pool_backends(pr, dep.decode, model, lay, dep.precision.kv_cache.name)
        bat = Batch.make(
            decode_seqs=np.full(grid.shape, b),
            decode_ctx=grid,
            prefill_tokens=np.zeros(grid.shape),
            prefill_ctx=0.0,
            prefill_seqs=np.zeros(grid.shape),
        )
        sc = pool_step_cost(model, pr2, dep, lay, bat)
        j = list(sc.ops.name).index("attn.decode_full")
        t = np.maximum(sc.times.compute_s[j], sc.times.memory_s[j])
        floor = float(t.min()) if decode_blocks.TRT_DECODE_BLOCKS_ON else 0.0
        out.append(
            {
                "row": rid[9:],
                "running": b,
                "mean_ctx": float(ctx.mean()),
                "below_floor": float(np.mean(np.interp(ctx, grid, t) <= floor * (1 + 1e-9))) if floor else 0.0,
                "at_mean_s": float(np.interp(ctx.mean(), grid, t)),
                "per_seq_s": float(np.interp(ctx, grid, t).mean()),
            }
        )
    return out


def budget_rows() -> list[dict]:
    """Table 4: the B200 Llama-2-70B Interactive peer runs with their configs' runtime budget, the load (running a GPU
    by Little's law on the mean TPOT), TPOT mean / p99 (ms) and p99 / mean, TTFT mean / p99 (ms)."""
    out = []
    for r in peer_runs(benchmark="llama2-70b-99", scenario="Interactive"):
        if "B200" not in r["system"] or "GB200" in r["system"]:
            continue
        out.append(
            {
                "who": f"{r['submitter']} {r['system']}",
                "budget": PEER_BUDGET.get(r["submitter"]),
                "qps": r["scheduled_per_s"],
                "running": r["tokens_per_s"] / 8 * r["tpot_mean_ms"] / 1e3,
                "tpot_mean_ms": r["tpot_mean_ms"],
                "tpot_p99_ms": r["tpot_p99_ms"],
                "ratio": r["tpot_p99_ms"] / r["tpot_mean_ms"],
                "ttft_mean_ms": r["ttft_mean_ms"],
                "ttft_p99_ms": r["ttft_p99_ms"],
            }
        )
    return sorted(out, key=lambda r: -r["qps"])


def amd_rows(pts=None) -> list[dict]:
    """Table 5: AMD's Llama-2-70B Interactive runs (scripts/mlperf_llama2_rows43.amd_rows: running a GPU by Little's
    law, TPOT / TTFT mean and p99, s) beside the model's mean TPOT at that load on the engine each config declares
    (fit/mlperf_engines.MLPERF_AMD_LIMIT_ENGINES, round 48: one TP1 vLLM engine a GPU, its ``max_num_seqs`` / token
    budget; MI300X's V0 engine with 8 scheduler steps and its prompts in steps of their own), closed loop: the sign
    of the step error against B200's."""
    from mlperf_llama2_rows43 import amd_rows as measured  # noqa: PLC0415  (a sibling script)

    from jalapeno.fit.mlperf_engines import MLPERF_AMD_LIMIT_ENGINES  # noqa: PLC0415
    from jalapeno.fit.submitted_engine import submitted_deployment  # noqa: PLC0415

    pts = pts if pts is not None else load_mlperf()[0]
    by_id = {p.id: p for p in pts}
    out = []
    for r in measured(pts):
        p = by_id["mlperf51_" + r["row"]]
        dep, conc = submitted_deployment(MLPERF_AMD_LIMIT_ENGINES[p.id], p.precision, p.chips)
        model, pr, dep, wl = priced_point(
            dataclasses.replace(p, deployment=dep, concurrency=conc, mapping="matched@limits")
        )
        one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
        sp = aggregated_by_batch(model, pr, one, wl, np.array([r["running"]]))
        out.append({**r, "model_tpot_s": float(sp.tpot_s[0])})
    return out


def main() -> None:
    print("build: the B200 Llama-2-70B engines as TensorRT-LLM's builder reads their configs")
    for fact, src in BUILD_FACTS:
        print(f"- {fact}\n  ({src})")
    pts = load_mlperf()[0]
    print("\nmixed: the steps at the run's load (B by Little's law; a = B / (OSL - 1) prompts a step; ms)")
    print(
        f"{'row':50s} {'B':>5s} {'a':>5s} {'P(k>0)':>6s} {'model f':>7s} {'p tok':>5s} {'left':>5s} "
        f"{'ms/tok':>6s} {'nonlin':>6s} {'plan':>6s} {'room':>6s} {'linear':>6s} {'TPOT':>6s} {'meas':>6s} {'p99/mean':>8s} "
        f"{'meas':>5s}"
    )
    for r in mixed_rows(pts):
        print(
            f"{r['row'][:50]:50s} {r['running']:5.0f} {r['a']:5.2f} {r['share_poisson']:6.2f} "
            f"{r['share_model']:7.2f} {r['tokens_per_step']:5.0f} {r['left']:5.0f} {1e3 * r['per_token_s']:6.3f} "
            f"{100 * r['nonlinear']:5.1f}% {1e3 * r['model_mix_s']:6.2f} {1e3 * r['room_mix_s']:6.2f} {1e3 * r['poisson_s']:6.2f} "
            f"{1e3 * r['tau_s']:6.2f} {1e3 * r['measured_s']:6.2f} {r['p99_s'] / r['tau_s']:8.3f} "
            f"{r['measured_ratio']:5.3f}"
        )
    print("\nattention: decode attention a step (ms, all layers) at the mean context vs over the per-sequence contexts")
    print(f"{'row':50s} {'run':>5s} {'ctx':>5s} {'floored':>7s} {'at mean':>7s} {'per seq':>7s} {'delta':>6s}")
    for r in attention_rows(pts):
        print(
            f"{r['row'][:50]:50s} {r['running']:5.0f} {r['mean_ctx']:5.0f} {r['below_floor']:7.2f} "
            f"{1e3 * r['at_mean_s']:7.3f} {1e3 * r['per_seq_s']:7.3f} {1e3 * (r['per_seq_s'] - r['at_mean_s']):+6.3f}"
        )
    print("\nbudget: B200 Llama-2-70B Interactive peer runs (LoadGen summaries; budget = runtime max_num_tokens)")
    print(
        f"{'run':48s} {'budget':>6s} {'qps':>6s} {'run/GPU':>7s} {'TPOT':>6s} {'p99':>6s} {'ratio':>5s} "
        f"{'TTFT':>6s} {'p99':>6s}"
    )
    for r in budget_rows():
        print(
            f"{r['who'][:48]:48s} {r['budget'] or '-':>6} {r['qps']:6.1f} {r['running']:7.1f} "
            f"{r['tpot_mean_ms']:6.2f} {r['tpot_p99_ms']:6.2f} {r['ratio']:5.3f} {r['ttft_mean_ms']:6.1f} "
            f"{r['ttft_p99_ms']:6.1f}"
        )
    print(
        "\namd: AMD's Interactive runs (running a GPU; ms) and the model's mean TPOT there at each declared TP1 engine"
    )
    print(f"{'row':58s} {'run':>4s} {'TPOT':>5s} {'p99':>5s} {'TTFT':>5s} {'p99':>5s} {'model':>6s} {'ratio':>5s}")
    for r in amd_rows(pts):
        print(
            f"{r['row'][:58]:58s} {r['running']:4.0f} {1e3 * r['TPOT_mean']:5.1f} {1e3 * r['TPOT_p99']:5.1f} "
            f"{1e3 * r['TTFT_mean']:5.0f} {1e3 * r['TTFT_p99']:5.0f} {1e3 * r['model_tpot_s']:6.1f} "
            f"{r['TPOT_mean'] / r['model_tpot_s']:5.2f}"
        )


if __name__ == "__main__":
    main()
