"""The SGLang FP4 attention-DP prefill pools' plateau on GB200/GB300 against every forward-step term the recipe names
(issue 18, round 44, gb300pre44; diagnosis, nothing fitted or shipped).

Round 43 (scripts/aic_gb_ttft_axes43.py --knee) found the aiconfigurator GB300 TTFT miss carried by the 1k/1k
throughput sweep of a 4 x DEP4 SGLang FP4 prefill pool, whose closed-loop request rate stops at ~178 requests/s while
the model's keeps growing. This asks which part of the prefill worker sets that plateau. Three parts:

1. ``plateau`` (ALL.csv, a `jalapeno validate --json -o` table with every split): every GB200/GB300 deployment with
   DEP4 SGLang FP4 prefill workers and a DEP32 decode worker, per row the closed loop's request rate
   λ = C / (TTFT + (OSL − 1)·TPOT), the users decoding at once λ·(OSL − 1)·TPOT and the prompt tokens a prefill GPU
   serves, λ · :data:`MEAN_ISL_SHARE` · ISL over the prefill GPUs, beside the MoE exchange the deployment's prefill
   ran (:data:`EXCHANGE`, each with its source). If λ plateaus at one value across exchanges, engine releases and
   decode batches, none of them sets it. The 1k and 8k deployments of one release, script and exchange (cfg259,
   cfg254) split a prompt's cost into a + L·b (:func:`per_request_and_token`), whole and outside the model's forward.
2. ``forward``: the model's forward step of such a pool (cost/step.step_cost with the rows' stack and pool backends,
   one full prefill step of whole 0.9·1,024-token prompts) at the shipped budget (2,048 tokens a rank) and at the
   recipe's steps (16,384 and 32,768 a rank), priced with the stack's DeepEP-style ``all_to_all`` (the exchange of
   the 0.5.5.post2 pools, and of every SGLang pool before round 44's moeag44) and with the one SGLang runs on these
   recipes (:func:`fp4_allgather`: NVFP4 all-gather of every token, BF16 reduce-scatter; ``nvfp4_all_gather``, which
   fit/aic_moe_exchange now sets on the 0.5.8 / 0.5.8.post1 DEP prefill pools). Each column names its exchange, so
   neither follows the pool's shipped one.
3. ``bounds``: per step, the host time the plateau would need if the whole gap sat in the step
   (:func:`needed_host_s`), and the time a request would have to hold its prefill KV for the system's recipe's KV pool
   (:data:`PREFILL_KV_TOKENS`) to bind (:func:`kv_hold_bound_s`).

Sources: NVIDIA/srt-slurm @5063eb43 ``recipes/gb300-fp4/1k1k/mid_curve.yaml`` and
``recipes/gb200-fp4/1k1k/mid-curve.yaml`` (prefill: tp = dp = ep = 4, enable-dp-attention, quantization modelopt_fp4,
moe-runner-backend flashinfer_cutlass, no moe-a2a-backend, max-prefill-tokens 32768, chunked-prefill-size 65536,
max-total-tokens 131072, disable-cuda-graph, enable-single-batch-overlap, disaggregation-transfer-backend nixl);
sgl-project/sglang ``python/sglang/srt/layers/moe/utils.py`` @d737979c
``should_use_flashinfer_cutlass_moe_fp4_allgather`` (read at stored versions, not at the 0.5.8 tag: no
moe-a2a-backend, flashinfer_cutlass runner, DP attention, modelopt_fp4 and MoE EP = attention DP → quantise to
NVFP4 before ``all_gatherv``, ``reduce_scatterv`` after the experts) and
``python/sglang/srt/layers/dp_attention.py`` @00161092 ``DpPaddingMode.get_dp_padding_mode`` (an extend batch over
several DP ranks gathers by sum length, not padded to the largest rank).

Run: python scripts/sgl_fp4_prefill_plateau44.py ALL.csv [--no-forward]  (the forward part about 10 s)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

#: the rows' prompts are uniform in [0.8, 1.0] x ISL (sa-bench range ratio 0.8; fit/validate point_workload)
MEAN_ISL_SHARE = 0.9
#: LMSYS, "Deploying DeepSeek on GB200 NVL72 with PD and Large Scale EP (Part II)", 2025-09-25: prefill input
#: tokens/s a GPU, forward only, FP8 attention + NVFP4 MoE, DEP8, 2,000-token prompts (as sgl_prefill_forward_vs_served)
LMSYS_FP4 = 26156.0
#: each system's recipe's prefill KV pool, tokens a rank (prefill ``max-total-tokens``, NVIDIA/srt-slurm @5063eb43:
#: recipes/gb200-fp4/1k1k/mid-curve.yaml and recipes/gb300-fp4/1k1k/mid_curve.yaml both set 131072)
PREFILL_KV_TOKENS = {"gb200-nvl72": 131072, "gb300-nvl72": 131072}
#: the exchange each column of :func:`forward_rates` prices (specs/efficiency_params.MOE_EXCHANGE_NAMES)
FORWARD_EXCHANGES = {"a2a": "all_to_all", "allgather": "nvfp4_all_gather"}
#: the MoE exchange each deployment's prefill workers ran, with its source
EXCHANGE = {
    "cfg259": "DeepEP all-to-all (SGLang 0.5.5.post2; data/validation/aic_sweeps.toml: Dynamo's gb200-fp4.sh "
    "--enable-deepep-moe)",
    "cfg483": "NVFP4 all-gather + reduce-scatter (SGLang 0.5.8; srt-slurm gb200-fp4/1k1k/mid-curve.yaml, "
    "flashinfer_cutlass)",
    "cfg576": "NVFP4 all-gather + reduce-scatter (SGLang 0.5.8.post1; srt-slurm gb300-fp4/1k1k/mid_curve.yaml)",
    "cfg254": "DeepEP all-to-all (SGLang 0.5.5.post2, 8k/1k, 10 prefill workers; the same sweep and script as cfg259)",
}
DEPLOYMENT = "x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32"


def closed_loop(concurrency, ttft_s, tpot_s, osl) -> tuple[np.ndarray, np.ndarray]:
    """(λ requests/s, users decoding at once) of a closed loop of ``concurrency`` users, each always holding one
    request: λ = C / (TTFT + (OSL − 1)·TPOT) (Little's law over one request's cycle), decoding = λ·(OSL − 1)·TPOT.

    >>> [round(float(x), 1) for x in closed_loop(8192, 22.6, 0.0229, 1024)]  # 8,192 / (22.6 + 23.43) = 178.0
    [178.0, 4169.6]
    """
    c, t, p, o = (np.asarray(x, dtype=float) for x in (concurrency, ttft_s, tpot_s, osl))
    lam = c / (t + (o - 1.0) * p)
    return lam, lam * (o - 1.0) * p


def fp4_allgather(flags: dict) -> bool:
    """Whether an SGLang worker with these launch ``flags`` (recipe keys: moe-a2a-backend, moe-runner-backend,
    enable-dp-attention, quantization, ep-size, dp-size) exchanges MoE tokens by an NVFP4 all-gather and a
    reduce-scatter: SGLang's ``should_use_flashinfer_cutlass_moe_fp4_allgather`` (no all-to-all backend,
    flashinfer_cutlass runner, DP attention, modelopt_fp4, MoE EP = attention DP).

    >>> fp4_allgather({"moe-runner-backend": "flashinfer_cutlass", "enable-dp-attention": True,
    ...                "quantization": "modelopt_fp4", "ep-size": 4, "dp-size": 4})
    True
    """
    return (
        flags.get("moe-a2a-backend", "none") == "none"
        and flags.get("moe-runner-backend") == "flashinfer_cutlass"
        and bool(flags.get("enable-dp-attention", False))
        and flags.get("quantization") == "modelopt_fp4"
        and flags.get("ep-size", 1) == flags.get("dp-size", 1)
    )


def needed_host_s(per_rank_tokens: float, forward_tok_s: float, served_tok_s: float) -> float:
    """Seconds a full step of ``per_rank_tokens`` would have to spend outside its forward (at ``forward_tok_s``
    tokens/s a GPU) for the GPU to serve only ``served_tok_s``: per_rank / served − per_rank / forward.

    >>> round(needed_host_s(16384, 32768, 11000), 3)  # 1.489 − 0.5
    0.989
    """
    if min(per_rank_tokens, forward_tok_s, served_tok_s) <= 0:
        raise ValueError("per_rank_tokens, forward_tok_s and served_tok_s must be > 0")
    return per_rank_tokens / served_tok_s - per_rank_tokens / forward_tok_s


def kv_hold_bound_s(served_tok_s: float, pool_tokens: float) -> float:
    """Seconds a request must hold its prefill KV (admission to the end of its transfer) for a KV pool of
    ``pool_tokens`` a rank to cap the rank at ``served_tok_s`` prompt tokens/s (Little's law: pool / rate).

    >>> round(kv_hold_bound_s(10240.0, 131072), 1)
    12.8
    """
    if served_tok_s <= 0:
        raise ValueError("served_tok_s must be > 0")
    return pool_tokens / served_tok_s


def prefill_kv_tokens(system: str) -> int:
    """The prefill KV pool, tokens a rank, of ``system``'s srt-slurm FP4 1k/1k recipe (:data:`PREFILL_KV_TOKENS`).
    Raises ValueError naming the systems it knows for any other.

    >>> prefill_kv_tokens("gb200-nvl72")
    131072
    """
    if system not in PREFILL_KV_TOKENS:
        raise ValueError(f"no recipe prefill KV pool for {system!r}; known: {', '.join(PREFILL_KV_TOKENS)}")
    return PREFILL_KV_TOKENS[system]


def plateau(path: str) -> pd.DataFrame:
    """The rows of the DEP4-prefill + DEP32-decode SGLang FP4 deployments in ``path`` (every split), one per row with
    measured λ, decoding users and prompt tokens/s a prefill GPU (λ · :data:`MEAN_ISL_SHARE` · ISL over the
    deployment's prefill GPUs, 4 a worker). Raises ValueError if the table holds none."""
    d = pd.read_csv(path)
    d = d[(d.source == "aiconfigurator") & d.system.str.startswith("gb") & d["stack"].str.startswith("sglang")]
    d = d[d.deployment.str.contains(DEPLOYMENT, regex=False) & (d.precision == "fp4")]
    if d.empty:
        raise ValueError(f"{path}: no SGLang FP4 DEP4 + DEP32 rows (a `jalapeno validate --json -o` table?)")
    d = d.assign(workers=d.deployment.str.extract(r"P (\d+)x", expand=False).astype(int))
    idx = ["id", "system", "isl", "osl", "concurrency", "workers"]
    w = d.pivot_table(index=idx, columns="metric", values="measured").reset_index()
    w["cfg"] = w.id.str.extract(r"_(cfg\d+)$", expand=False)
    w["lam"], w["decoding"] = closed_loop(w.concurrency, w.ttft_s, w.tpot_s, w.osl)
    w["tok_s_gpu"] = w.lam * MEAN_ISL_SHARE * w.isl / (4 * w.workers)
    return w.sort_values(["isl", "cfg", "concurrency"])[
        ["system", "cfg", "isl", "workers", "concurrency", "ttft_s", "tpot_s", "lam", "decoding", "tok_s_gpu"]
    ]


def per_request_and_token(len_a: float, time_a: float, len_b: float, time_b: float) -> tuple[float, float]:
    """(a s a request, b s a token) of a prompt cost a + L·b on one GPU, from the seconds ``time_a`` a prompt of mean
    length ``len_a`` costs and ``time_b`` one of ``len_b``: two equations, two unknowns. With time = L / served the
    whole served cost; with time = L / served − L / forward the cost outside the forward step.

    >>> [round(x, 6) for x in per_request_and_token(1000, 0.1, 8000, 0.64)]  # 0.1 = a + 1000b, 0.64 = a + 8000b
    [0.022857, 7.7e-05]
    """
    if len_a == len_b or min(len_a, len_b) <= 0:
        raise ValueError("two different positive prompt lengths are needed")
    b = (time_b - time_a) / (len_b - len_a)
    return time_a - b * len_a, b


def forward_rates(
    systems=("gb200-nvl72", "gb300-nvl72"), per_rank=(2048, 16384, 32768), isl: float = 1024, dp: int = 4
) -> pd.DataFrame:
    """The model's forward prompt tokens/s a GPU of a DEP4 SGLang FP4 prefill worker (the first such row of each
    system, its stack and pool backends) at ``per_rank`` tokens a rank of whole :data:`MEAN_ISL_SHARE` · ``isl``-token
    prompts, one column per exchange of :data:`FORWARD_EXCHANGES` (``a2a@N``: the stack's all-to-all; ``allgather@N``:
    SGLang's NVFP4 all-gather + reduce-scatter), whatever exchange the row's pool ships with; ``dp``: the worker's
    attention DP = MoE EP (the rows' 4; 8 for LMSYS's published configuration). One row a system."""
    from sgl_prefill_forward_vs_served import _point  # noqa: PLC0415  (a sibling script)

    from jalapeno.cost.batch import Batch
    from jalapeno.cost.pool_backends import with_pool_backends
    from jalapeno.cost.step import step_cost
    from jalapeno.deploy.deployment import pool_overlap
    from jalapeno.fit.entries import with_stack_mtp
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import load_aiconfigurator
    from jalapeno.specs.catalog import load_model

    points, _ = load_aiconfigurator()
    out = []
    for system in systems:
        p, st = _point(points, system, "fp4", 4)
        dep, model = with_stack_mtp(p.deployment, st, p.model), load_model(p.model)
        lay = dataclasses.replace(dep.prefill.layout, dp=dp, ep=dp)
        pr = with_pool_backends(
            load_any_pricer(system, "calibrated", pricer="roofline", stack=st),
            dep.prefill,
            model,
            lay,
            dep.precision.kv_cache.name,
        )
        toks = np.asarray(per_rank, dtype=float) * lay.dp
        batch = Batch.make(prefill_tokens=toks, prefill_seqs=toks / (MEAN_ISL_SHARE * isl), prefill_ctx=0 * toks)
        row = {"system": system}
        for name, exchange in FORWARD_EXCHANGES.items():
            q = dataclasses.replace(pr, efficiency=dataclasses.replace(pr.efficiency, moe_exchange=exchange))
            # a bare forward under each exchange (no MTP, memory fraction or engine profile): not pool_step_cost
            sc = step_cost(model, q, lay, dep.precision, batch, overlap=pool_overlap(dep.overlap, model, lay))
            row.update({f"{name}@{n}": float(n / s) for n, s in zip(per_rank, sc.interval_s)})
        out.append(row)
    return pd.DataFrame(out).set_index("system")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("all_csv", help="jalapeno validate --json -o X.csv (every split)")
    ap.add_argument("--no-forward", action="store_true", help="skip the model's forward pricing")
    args = ap.parse_args()
    pd.set_option("display.width", 200)
    w = plateau(args.all_csv)
    print("1. Measured closed loop of the DEP4 SGLang FP4 prefill + DEP32 decode deployments")
    print(w.round(3).to_string(index=False))
    for cfg, text in EXCHANGE.items():
        print(f"   {cfg}: prefill MoE exchange {text}")
    top = w.groupby("cfg").tok_s_gpu.max()
    la, lb = MEAN_ISL_SHARE * 1024, MEAN_ISL_SHARE * 8192
    a, b = per_request_and_token(la, la / top["cfg259"], lb, lb / top["cfg254"])
    print(
        f"   GB200 SGLang 0.5.5.post2 DeepEP pair (cfg259 1k, cfg254 8k, highest rates), the whole served cost: "
        f"{1e3 * a:.1f} ms a prompt + {1e6 * b:.1f} us a token, a GPU"
    )
    served = w[w.cfg.isin(["cfg483", "cfg576"])].groupby("system").tok_s_gpu.max()  # the NVFP4 all-gather pools
    if args.no_forward:
        return
    f = forward_rates()
    print(
        "\n2. Model forward, prompt tokens/s a GPU (a2a: the stack's all-to-all, the 0.5.5.post2 pools'; allgather: "
        "SGLang's NVFP4 all-gather, these recipes' and the model's on the 0.5.8 pools since moeag44)"
    )
    print(f.round(0).to_string())
    lm = forward_rates(("gb200-nvl72",), (16384,), isl=2000 / MEAN_ISL_SHARE, dp=8).iloc[0]
    print(
        f"   LMSYS Part II configuration (GB200 DEP8, 16,384 a rank, 2,000-token prompts): all-to-all "
        f"{lm['a2a@16384']:,.0f}, all-gather {lm['allgather@16384']:,.0f} against the published forward-only "
        f"{LMSYS_FP4:,.0f} ({lm['a2a@16384'] / LMSYS_FP4:.2f} / {lm['allgather@16384'] / LMSYS_FP4:.2f})"
    )
    f8 = forward_rates(("gb200-nvl72",), (16384,), isl=8192)
    fa, fb = f.loc["gb200-nvl72", "a2a@16384"], f8.loc["gb200-nvl72", "a2a@16384"]
    a, b = per_request_and_token(la, la / top["cfg259"] - la / fa, lb, lb / top["cfg254"] - lb / fb)
    print(
        f"   the same pair outside the model's DeepEP forward (1k {fa:,.0f}, 8k {fb:,.0f} tokens/s a GPU at 16,384 a "
        f"rank): {1e3 * a:.1f} ms a prompt + {1e6 * b:.1f} us a token, a GPU"
    )
    print("\n3. Bounds at the NVFP4 all-gather pools' highest served rate (cfg483, cfg576)")
    for system, s in served.items():
        for n in (16384, 32768):
            fw = f.loc[system, f"allgather@{n}"]
            print(
                f"   {system}: served {s:,.0f}; a {n:,}-token step would need {needed_host_s(n, fw, s):.2f} s "
                f"outside its {n / fw:.2f} s forward; {prefill_kv_tokens(system):,}-token KV pool binds only at a hold of "
                f"{kv_hold_bound_s(s, prefill_kv_tokens(system)):.1f} s"
            )


if __name__ == "__main__":
    main()
