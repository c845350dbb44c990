"""MLPerf v5.1 DeepSeek-R1 Server: one attention-DP decode step at 112-162 sequences a rank, priced term by term.

Question (issue 18, round 36, adp36): the three DeepSeek-R1 Server runs (NVIDIA B200, Google B200, NVIDIA
GB200-NVL72 x72; TensorRT-LLM, attention DP 8 + WIDEEP EP 8, no MTP, fit/mlperf_engines.py) step 61-70 ms at
112-162 sequences a rank and ~4.8k tokens of resident context (their mean TPOT; p99/mean ~1, round 35), where
the model's step at the same load was 1.76-2.08x faster. Which term is short? For each row this prints, in ms
per step (docs/gap_large_batch_decode.md, "Round 36"):

- ``measured``: the run's mean TPOT (one decode step per token: no MTP) and its sequences a rank by Little's law
  (scripts/mlperf_server_operating_point.measured_per_rank);
- the model's decode-only step at that load (CUDA-graph padded: [128, 256, 384, 512], serve/limits) split into
  ``attn`` (every ``attn.*`` op: projections, RoPE/KV write, absorbed MLA kernel, output projection; 61
  layers), ``mla`` (the absorbed MLA kernel alone), ``experts`` (routed experts, 58 layers), ``exch`` (the MoE
  token exchange, every collective) and ``rest`` (router, shared and dense FFN, norms, LM head, the fixed
  per-step cost);
- ``attn_tab`` / ``exp_tab``: the same two blocks from TensorRT-LLM 1.3.0rc20's own measured tables
  (aiconfigurator-core ``mla_generation_module_perf``: the whole attention module, 128 heads, FP8 KV, at the
  real sequences a rank and the mean resident context; ``moe_perf``: NVFP4, MoE TP1 EP8, balanced, at the
  graph-padded tokens of the EP group — the dummies are routed too; scripts/trt_decode_split.py), per step;
- ``kv_skew``: the MLA kernel's extra time on the rank with the most KV. A rank's n sequences hold resident
  contexts drawn from the dataset's length mix (a decoding sequence is met in proportion to its output length,
  at a uniform point of it: context ISL + u·OSL); their sum has coefficient of variation cv/√n, and the fullest
  of dp ranks sits E[max of dp standard normals]·cv/√n above the mean (cost/adp_rank.expected_max_std_normal);
  priced as that fraction of the ``mla`` term (an upper bound: it raises the whole kernel, and TensorRT-LLM's
  dispatch balances active tokens);
- ``prompt``: the prompt-carrying steps' share of the mean step, τ − t_dec. TensorRT-LLM's context balancing
  (``attention_dp_config`` timeout_iters 9, batching_wait_iters 3 in the Server configs) releases held prompts
  on a clock of 9 iterations at these loads (serve/adp_balance.adp_release_prompts): a share a/E[min(N, dp) | N ≥ 1], N ~ Poisson(a·T)
  (≈ (1 − e^(−a·T))/T at a·T ≈ 3 ≪ dp), of the steps carries prompts (a prompts per step), each such step at least the eager floor (cost/host_calls.py,
  fit/mlperf_engines.DSR1_EAGER_PROMPT_CALL_S). ``prompt_dp`` is the same term with every release carrying dp
  prompts (a/dp of the steps: the model before round 36);
- ``tau``: the model's mean step now; ``with_tables`` = tau with ``attn`` and ``experts`` taken from the tables
  and ``kv_skew`` added; ``left`` = measured − with_tables; ``need_x``: the factor the largest remaining term
  (``experts`` from the table) would need to carry ``left`` alone.

Nothing is fitted or written. Needs the aiconfigurator-core package (pip install -e ".[calibrate]").
Run: python scripts/adp_server_step36.py   (about 20 s)
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

from jalapeno.cost.adp_rank import expected_max_std_normal
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.pool_backends import with_pool_backends
from jalapeno.cost.step import Batch, pool_step_cost
from jalapeno.fit.mlperf import MLPERF_LIMIT_ENGINES, load_mlperf, submitted_deployment
from jalapeno.serve.analytic import agg_plan
from jalapeno.serve.limits import decode_step_s, floored_steps, graph_padded, prompt_floor_s
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.specs.catalog import load_model, load_system

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mlperf_server_operating_point import STACK, measured_per_rank  # noqa: E402
from trt_decode_split import HEADS, LAYERS, MOE_LAYERS, _tables, interp_loglog  # noqa: E402

#: the three DeepSeek-R1 Server rows (fit/mlperf.MLPERF_LIMIT_ENGINES)
ROWS = tuple(r for r in MLPERF_LIMIT_ENGINES if "deepseek-r1_Server" in r)


def context_cv(isl: np.ndarray, osl: np.ndarray, grid: int = 64) -> tuple[float, float]:
    """(mean, coefficient of variation) of a decoding sequence's resident context, tokens: a request is met in
    proportion to its decode steps (OSL − 1), at a uniform point u of its output, context ISL + u·OSL
    (u on a ``grid``-point midpoint rule).

    >>> m, cv = context_cv(np.array([100.0]), np.array([201.0]), grid=2)  # contexts 150.25 and 250.75
    >>> round(m, 2), round(cv, 4)
    (200.5, 0.2506)
    """
    u = (np.arange(grid) + 0.5) / grid
    ctx = isl[:, None] + u[None, :] * osl[:, None]
    w = np.repeat((osl - 1)[:, None], grid, axis=1)
    mean = float((w * ctx).sum() / w.sum())
    var = float((w * (ctx - mean) ** 2).sum() / w.sum())
    return mean, var**0.5 / mean


def row_terms(row_id: str) -> dict:
    """The module docstring's terms for one Server row, seconds (and the sequences a rank)."""
    pts, _ = load_mlperf(server_mapping="frontier@limits")
    p = next(x for x in pts if x.id == row_id)
    model, eng, wl = load_model(p.model), MLPERF_LIMIT_ENGINES[row_id], p.workload
    dep, _ = submitted_deployment(eng, p.precision, p.chips, model, load_system(p.system))
    dep = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
    lay = dep.decode.layout
    base = load_pricer(p.system, stack=STACK)
    pr = with_pool_backends(base, dep.decode, model, lay, dep.precision.kv_cache.name)  # as served_at_concurrency
    per_rank = measured_per_rank(p)
    b = np.array([per_rank * lay.dp])
    plan = agg_plan(model, pr, dep, wl, b)
    _, _, steps, p_mb, _, _, p_big, _, _, _, _, batch = plan
    sc = pool_step_cost(
        model,
        pr,
        dep,
        lay,
        batch,
    )
    mixed = float(
        floored_steps(sc.step_time_s, batch.decode_seqs - 1, batch.prefill_tokens, prompt_floor_s(model, dep))[1]
    )
    t_dec = float(
        decode_step_s(sc, pr.efficiency, dep, np.concatenate([b, b, np.zeros(sc.step_time_s.shape[0] - 2)]), lay)[0]
    )
    a = float(p_mb[0] / wl.mean_isl)  # prompts per step (the spread's arrivals do not bunch)
    share = float(min(p_mb[0] / p_big[0], 1.0))
    share_dp = a / lay.dp
    # the decode-only step's ops at its padded batch, as served (decode_pool_step wraps the bare pricer once)
    sd = decode_pool_step(model, base, dep, wl.decode_ctx, b)
    dec = graph_padded(dep, lay, Batch.make(decode_seqs=b / lay.pp, decode_ctx=wl.decode_ctx))
    ops = {o["op"]: o["time_s"] for o in sd.op_rows(0)}
    attn = sum(v for k, v in ops.items() if k.startswith("attn."))
    experts, mla = ops["moe.experts"], ops["attn.mla_decode"]
    exch = float(sum(c["time_s"] for c in sd.collective_rows(0)))
    padded = float(dec.decode_seqs[0]) / lay.dp
    mod, moe = _tables(p.system, "fp4")
    grid = (
        mod[mod.num_heads == HEADS].pivot_table(index="batch_size", columns="step", values="latency", aggfunc="min")
        * 1e-3
    )
    attn_tab = LAYERS * interp_loglog(grid, per_rank, float(wl.decode_ctx))
    curve = moe[(moe.moe_tp_size == 1) & (moe.moe_ep_size == lay.ep)].groupby("num_tokens").latency.min() * 1e-3
    exp_tab = MOE_LAYERS * interp_loglog(curve, padded * lay.dp)
    _, cv = context_cv(wl.spread.isl_tokens, wl.spread.osl_tokens)
    kv_skew = mla * expected_max_std_normal(lay.dp) * cv / np.sqrt(per_rank)
    tau = (1 - share) * t_dec + share * mixed
    tau_dp = (1 - share_dp) * t_dec + share_dp * mixed
    with_tables = tau + (attn_tab - attn) + (exp_tab - experts) + kv_skew
    left = p.measured["tpot_s"] - with_tables
    return {
        "row": row_id,
        "per_rank": per_rank,
        "padded": padded,
        "measured": p.measured["tpot_s"],
        "t_dec": t_dec,
        "attn": attn,
        "mla": mla,
        "experts": experts,
        "exch": exch,
        "rest": t_dec - attn - experts - exch,
        "attn_tab": attn_tab,
        "exp_tab": exp_tab,
        "ctx_cv": cv,
        "kv_skew": kv_skew,
        "mixed": mixed,
        "arrivals_per_step": a,
        "share": share,
        "share_dp": share_dp,
        "prompt": tau - t_dec,
        "prompt_dp": tau_dp - t_dec,
        "tau": tau,
        "with_tables": with_tables,
        "left": left,
        "need_x": (exp_tab + left) / exp_tab,
    }


def main() -> None:
    cols = (
        "measured",
        "t_dec",
        "attn",
        "mla",
        "experts",
        "exch",
        "rest",
        "attn_tab",
        "exp_tab",
        "kv_skew",
        "prompt_dp",
        "prompt",
        "tau",
        "with_tables",
        "left",
    )
    print(
        f"{'row':34s} {'/rank':>5s} {'a':>5s} {'share':>11s} " + " ".join(f"{c:>9s}" for c in cols) + f" {'need_x':>6s}"
    )
    for rid in ROWS:
        t = row_terms(rid)
        print(
            f"{rid[9:43]:34s} {t['per_rank']:5.0f} {t['arrivals_per_step']:5.3f} "
            f"{t['share_dp']:.3f}>{t['share']:.3f} "
            + " ".join(f"{t[c] * 1e3:9.1f}" for c in cols)
            + f" {t['need_x']:6.2f}"
        )


if __name__ == "__main__":
    main()
