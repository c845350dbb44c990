"""A sweep's launch-script engine settings applied to a row's deployment (split from fit/aic_sweeps.py, round 38).

Each function takes the row's deployment and its sweep (fit/aic_sweeps.sweep_of; None: the row is returned as it
is) and gives back the deployment and a note naming the sweep: :func:`with_sweep_mtp` the MTP its launch script ran
at the row's layout; :func:`with_sweep_launch` the launch script's attention-DP context balancing and running cap on
an attention-DP row (TensorRT-LLM ``attention_dp_config``, the mechanism of serve/adp_balance.adp_balance_wait_s);
:func:`with_sweep_kernels` the KV-cache dtype and MoE kernel backend the launch script sets;
:func:`with_sweep_batch_wait` the script's TensorRT-LLM batch waiting (serve/batch_wait.py); :func:`with_sweep_limits`
a vLLM script's ``--max-num-batched-tokens`` and ``--gpu-memory-utilization``; :func:`with_sweep_token_limit` a
TensorRT-LLM script's ``--max_num_tokens`` sized to the load (one whole prompt a step). The MoE layouts a sweep
restates are fit/aic_sweep_layouts.py's.
"""

from __future__ import annotations

import math
from dataclasses import replace

from jalapeno.deploy.memory_fit import driver_share_as_usable
from jalapeno.fit.aic_sweeps import Sweep
from jalapeno.specs.efficiency import Efficiency


def with_sweep_mtp(dep, sweep: Sweep | None, acceptance_single: float, acceptance_chain: float):
    """(deployment, spec, note) of a row its sweep ran: ``dep`` (deploy/deployment.Deployment) with the
    sweep's MTP at its layout (acceptance ``acceptance_single`` for one draft token, ``acceptance_chain``
    per token for more: the validation's stated assumptions), the sweep's spec ("mtp"/"none"; "" without
    a sweep) and a note naming the sweep ("" without one).
    """
    if sweep is None or dep is None:
        return dep, "", ""
    k = sweep.draft_tokens(dep.decode.layout.dp)
    if not k:
        return dep, sweep.spec, f"InferenceX sweep {sweep.config_key} (no MTP; data/validation/aic_sweeps.toml)"
    from jalapeno.deploy.deployment import MTP

    mtp = MTP(k, acceptance_single if k == 1 else acceptance_chain)
    return (
        replace(dep, mtp=mtp),
        "mtp",
        f"InferenceX MTP sweep {sweep.config_key}: MTP{k} (its launch script), "
        f"acceptance {mtp.acceptance} assumed (data/validation/aic_sweeps.toml)",
    )


def with_sweep_launch(dep, sweep: Sweep | None, concurrency: float):
    """(deployment, note) of an aggregated attention-DP row its sweep ran: ``dep`` with the launch script's
    TensorRT-LLM attention-DP context balancing (``adp_balance_timeout_iters``: each rank holds its new
    prompts until every rank has one, at most that many steps; serve/adp_balance.adp_balance_wait_s) and, where
    the script passes one, its running cap (``max_running`` = dp x the per-rank ``max_batch_size`` at the
    row's ``concurrency``: whether the slots are full decides how new requests reach the ranks). Rows
    without attention DP, disaggregated rows and sweeps whose script sets no balancing are returned as
    they are, with "".

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("b200", "deepseek-r1", "trtllm", "1", "fp4", "2026-01-01", "k", "mtp", "", 3, 1, 60, "conc/4")
    >>> d, note = with_sweep_launch(Deployment(get_precision("fp4"), Pool(Layout(tp=1, dp=4, ep=4))), s, 256)
    >>> d.adp_balance_timeout_iters, d.max_running
    (60, 256)
    >>> with_sweep_launch(Deployment(get_precision("fp4"), Pool(Layout(tp=4, ep=4))), s, 256)[0].max_running is None
    True
    """
    if sweep is None or dep is None or dep.prefill is not None or not sweep.adp_balance_timeout_iters:
        return dep, ""
    dp = dep.decode.layout.dp
    if dp <= 1:
        return dep, ""
    kw = {"adp_balance_timeout_iters": sweep.adp_balance_timeout_iters}
    per_rank = sweep.max_batch_per_rank(concurrency, dp)
    if per_rank is not None:
        kw["max_running"] = per_rank * dp
    cap = f", max_batch_size {per_rank} per rank ({sweep.max_batch_dp_attention})" if per_rank is not None else ""
    return replace(dep, **kw), (
        f"attention-DP context balancing, timeout_iters {sweep.adp_balance_timeout_iters}{cap}: "
        f"InferenceX sweep {sweep.config_key}'s launch script (data/validation/aic_sweeps.toml)"
    )


def with_sweep_batch_wait(dep, sweep: Sweep | None, isl: int, osl: int, concurrency: float):
    """(deployment, note) of an aggregated row without attention DP that its sweep's launch script ran with
    TensorRT-LLM batch waiting (its ``DELAY_BATCHING``: ``batch_wait_timeout_iters`` and
    ``batch_wait_max_tokens_ratio`` on one workload from one concurrency up, below one TP where the script
    says so: ``batch_wait_below_tp``; serve/batch_wait.py); ``dep`` and "" otherwise (TensorRT-LLM skips the
    hold under attention DP).

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("b200", "deepseek-r1", "trtllm", "1", "fp8", "2026-01-01", "k", "none", "",
    ...           batch_wait_timeout_iters=40, batch_wait_max_tokens_ratio=0.8, batch_wait_workload="1k1k",
    ...           batch_wait_from_concurrency=64)
    >>> d = Deployment(get_precision("fp8"), Pool(Layout(tp=8)))
    >>> with_sweep_batch_wait(d, s, 1024, 1024, 64)[0].batch_wait_timeout_iters
    40
    >>> with_sweep_batch_wait(d, s, 1024, 1024, 32)[0].batch_wait_timeout_iters  # below the script's CONC 64
    0
    >>> s8 = replace(s, batch_wait_from_concurrency=1, batch_wait_below_tp=8)  # the Llama-70B scripts' TP < 8
    >>> [with_sweep_batch_wait(Deployment(get_precision("fp8"), Pool(Layout(tp=t))), s8, 1024, 1024, 4)[0]
    ...  .batch_wait_timeout_iters for t in (4, 8)]
    [40, 0]
    """
    from jalapeno.deploy.recipe import workload_key

    if (
        sweep is None
        or dep is None
        or dep.prefill is not None
        or not sweep.batch_wait_timeout_iters
        or dep.decode.layout.dp > 1
        or workload_key(isl, osl) != sweep.batch_wait_workload
        or concurrency < sweep.batch_wait_from_concurrency
        or (sweep.batch_wait_below_tp and dep.decode.layout.tp >= sweep.batch_wait_below_tp)
    ):
        return dep, ""
    return (
        replace(
            dep,
            batch_wait_timeout_iters=sweep.batch_wait_timeout_iters,
            batch_wait_max_tokens_ratio=sweep.batch_wait_max_tokens_ratio,
        ),
        f"batch waiting {sweep.batch_wait_timeout_iters} steps / {sweep.batch_wait_max_tokens_ratio:g} of "
        f"max_num_tokens: InferenceX sweep {sweep.config_key}'s launch script (data/validation/aic_sweeps.toml)",
    )


def with_sweep_kernels(dep, sweep: Sweep | None):
    """(deployment, note) of a row its sweep ran: ``dep`` with the launch script's KV-cache dtype
    (``kv_dtype``: the precision's KV format replaced) and MoE kernel backend (``moe_backend``: the decode
    pool's, priced by cost/pool_backends.with_moe_backend where the system measured it); ``dep`` and "" when the
    sweep sets neither (or there is no sweep).

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("b200", "gpt-oss-120b", "trtllm", "1", "mxfp4", "2026-01-01", "k", "none", "", kv_dtype="fp8_e4m3",
    ...           moe_backend="trtllm")
    >>> d, note = with_sweep_kernels(Deployment(get_precision("mxfp4"), Pool(Layout(tp=2))), s)
    >>> d.precision.kv_cache.name, d.decode.moe_backend
    ('fp8', 'trtllm')
    """
    if sweep is None or dep is None or not (sweep.kv_dtype or sweep.moe_backend):
        return dep, ""
    kw, said = {}, []
    if sweep.kv_dtype:
        kw["precision"] = dep.precision.with_options(kv=sweep.kv_dtype)
        said.append(f"KV cache {sweep.kv_dtype}")
    if sweep.moe_backend:
        kw["decode"] = replace(dep.decode, moe_backend=sweep.moe_backend)
        said.append(f"MoE backend {sweep.moe_backend}")
    return replace(
        dep, **kw
    ), f"{', '.join(said)}: InferenceX sweep {sweep.config_key}'s launch script (data/validation/aic_sweeps.toml)"


def with_sweep_limits(dep, sweep: Sweep | None, isl: int):
    """(deployment, note) of an aggregated row whose sweep's vLLM launch script sets
    ``--max-num-batched-tokens`` (a TensorRT-LLM one ``--max_num_tokens``, the same per-step limit) or
    ``--gpu-memory-utilization``: ``dep`` with that many tokens per step
    (the scheduler counts decode rows and prompt chunks against it: ``max_tokens_per_step``, and
    ``token_budget`` for the chunk alone) at input length ``isl``, and that utilization as a share of usable HBM
    (deploy/memory_fit.driver_share_as_usable: vLLM's default 0.9 of the driver memory is the set's default 0.96 of
    usable HBM); ``dep`` and "" when the sweep sets neither, or for a disaggregated row.

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("b200", "minimax-m2.5", "vllm", "0.19.0", "fp8", "2026-04-22", "k", "none", "",
    ...           max_num_batched_tokens="2*isl", memory_fraction=0.9)
    >>> d, note = with_sweep_limits(Deployment(get_precision("fp8"), Pool(Layout(tp=4))), s, 8192)
    >>> d.token_budget, d.max_tokens_per_step, round(d.memory_fraction, 4)
    (16384, 16384, 0.96)
    """
    if sweep is None or dep is None or dep.prefill is not None:
        return dep, ""
    kw, said = {}, []
    n = sweep.batched_tokens(isl)
    if n is not None:
        kw.update(token_budget=n, max_tokens_per_step=n)
        flag = "--max_num_tokens" if sweep.engine == "trtllm" else "--max-num-batched-tokens"
        said.append(f"{flag} {n} ({sweep.max_num_batched_tokens})")
    if sweep.memory_fraction:  # a share of the driver's memory, as a share of usable HBM (these rows have no profile)
        kw["memory_fraction"] = driver_share_as_usable(sweep.memory_fraction, Efficiency())
        said.append(f"--gpu-memory-utilization {sweep.memory_fraction:g} ({kw['memory_fraction']:.3g} of usable HBM)")
    if not kw:
        return dep, ""
    return replace(
        dep, **kw
    ), f"{', '.join(said)}: InferenceX sweep {sweep.config_key}'s launch script (data/validation/aic_sweeps.toml)"


#: TensorRT-LLM's ``max_num_tokens`` granule in InferenceX's sizing, ``$(( (N + 63) / 64 * 64 ))``, and the slack
#: the scripts add (``+64``): SemiAnalysisAI/InferenceX benchmarks/dsr1_fp4_b200_trt_slurm.sh @9596d23d7, @d22bf9ca9
#: (``MAX_NUM_TOKENS=$(( ($CONC+$ISL+64+63)/64*64 ))``), dsr1_fp{4,8}_b200_trt_mtp_slurm.sh @bf3456727 and
#: dsr1_fp{4,8}_b200_trt_mtp.sh @0aae52d4c / @5d517074c (``$(( ((MTP+1)*MAX_BATCH_SIZE+ISL+64+63)/64*64 ))``)
SIZED_TOKENS_ROUND = 64
SIZED_TOKENS_SLACK = 64


def sized_max_num_tokens(concurrency: float, isl: int, draft_tokens: int) -> int:
    """The script's ``--max_num_tokens`` T = ⌈((k + 1)·C + ISL + 64)/64⌉·64 at concurrency C (its max_batch_size
    without attention DP), input length ``isl`` and k = ``draft_tokens`` (tokens per step).

    >>> sized_max_num_tokens(256, 1024, 0), sized_max_num_tokens(64, 1024, 3), sized_max_num_tokens(4, 8192, 0)
    (1344, 1344, 8320)
    """
    n = (draft_tokens + 1) * max(int(math.ceil(concurrency)), 1) + int(isl) + SIZED_TOKENS_SLACK
    return -(-n // SIZED_TOKENS_ROUND) * SIZED_TOKENS_ROUND


def with_sweep_token_limit(dep, sweep: Sweep | None, isl: int, concurrency: float):
    """(deployment, note) of an aggregated row whose TensorRT-LLM script sizes ``--max_num_tokens`` to the load
    (``max_num_tokens_sized``): ``max_tokens_per_step`` T (:func:`sized_max_num_tokens`) and a prompt budget of one
    whole prompt a step (``token_budget`` = ISL), each per attention-DP rank; ``dep`` and "" otherwise.

    Why one prompt: the scripts set no ``enable_chunked_prefill`` (off by default: NVIDIA/TensorRT-LLM
    tensorrt_llm/llmapi/llm_args.py, ``enable_chunked_prefill: bool = Field(default=False, ...)``), so the micro-batch
    scheduler takes a context request whole or not at all (NVIDIA/TensorRT-LLM
    cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp, "skip chunking": ``if (maxNumTokensRuntime &&
    batchNumTokens + reqNumTokens > maxNumTokensRuntime.value()) break;``), after the running sequences' (k + 1)
    rows each. With the batch full those take (k + 1)·C of T, leaving ISL + 64..127 tokens: room for one prompt of
    at most ISL tokens and never two (two prompts of InferenceX's [0.8·ISL, ISL] need 1.6·ISL). An idle-start wave
    of C prompts is then C steps long, where the default 8192-token budget holds seven to eight 1k prompts a step.
    Assumption: the prompt budget is ISL tokens, so the model's chunked wave (serve/queueing.first_wave_s) carries
    ISL/mean ISL ≈ 1.1 of the [0.8·ISL, ISL] prompts a step, slightly more than the engine's one.

    Under attention DP each rank runs its own scheduler with its own T (NVIDIA/TensorRT-LLM: one PyExecutor per rank,
    fit/aic_row_engine.RANK_BUDGET_BACKENDS), sized by the script from its ``max_batch_size`` B (the per-rank
    ``max_batch_dp_attention`` where the script passes one: dsr1_fp8_h200_trt_mtp_slurm.sh @bf3456727
    ``MAX_BATCH_SIZE=$((CONC/TP))`` before ``MAX_NUM_TOKENS``; CONC in the non-MTP scripts, which pass none): one
    whole prompt a rank a step, written as instance totals (T·dp, ISL·dp with ``budget_per`` "instance", so that
    Deployment.prompt_budget gives ISL a rank and the running cap keeps its meaning). The 1.2.0rc6 non-MTP
    scripts floor T at 8192 (``MAX_NUM_TOKENS > 8192 ? MAX_NUM_TOKENS : 8192``, dsr1_fp4_b200_trt.sh @6eecc0e66): the
    default budget, so those sweeps leave the field out. At ISL 8k the prompt budget equals the default 8192 either way.

    >>> from jalapeno.deploy.deployment import Deployment, MTP, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("b200", "deepseek-r1", "trtllm", "", "fp4", "2025-11-02", "k", "none", "", max_num_tokens_sized=True)
    >>> d, note = with_sweep_token_limit(Deployment(get_precision("fp4"), Pool(Layout(tp=8))), s, 1024, 256)
    >>> d.max_tokens_per_step, d.token_budget
    (1344, 1024)
    >>> d = Deployment(get_precision("fp4"), Pool(Layout(tp=8)), mtp=MTP(3, 0.75))
    >>> with_sweep_token_limit(d, s, 1024, 64)[0].max_tokens_per_step  # (3 + 1)·64 + 1024 + 64, to 64
    1344
    >>> d = with_sweep_token_limit(Deployment(get_precision("fp4"), Pool(Layout(dp=8, ep=8))), s, 1024, 256)[0]
    >>> d.max_tokens_per_step, d.token_budget, d.prompt_budget(d.decode.layout)  # 1344 and 1024 a rank
    (10752, 8192, 1024.0)
    """
    if sweep is None or dep is None or not sweep.max_num_tokens_sized or dep.prefill is not None:
        return dep, ""
    dp = dep.decode.layout.dp
    per_rank = sweep.max_batch_per_rank(concurrency, dp) if dp > 1 else None
    return sized_token_limit(
        dep,
        isl,
        concurrency,
        per_rank,
        f"InferenceX sweep {sweep.config_key}'s launch script (data/validation/aic_sweeps.toml)",
    )


#: :func:`sized_token_limit` marks an attention-DP deployment whose per-rank ``max_batch_size`` holds the whole
#: concurrency (per rank x dp <= CONC: every rank at its cap) as ``refill`` dispatch (deploy/layout.DP_DISPATCH:
#: each new prompt on the random rank whose request finished, cost/adp_rank.busiest_rank_prompts). Round 41
#: (h200int41; docs/gap_aic_itl.md): shipped on.
REFILL_ON_FULL_SLOTS = True


def sized_token_limit(dep, isl: int, concurrency: float, per_rank: int | None, where: str):
    """(deployment, note) with a TensorRT-LLM script's load-sized ``--max_num_tokens`` (:func:`with_sweep_token_limit`'s
    rule: T = :func:`sized_max_num_tokens` at the script's max_batch, ``per_rank`` a rank under attention DP or None:
    CONC; one whole prompt a rank a step), ``where`` the script it is read from; with every rank's slots full
    (``per_rank``·dp <= concurrency) and :data:`REFILL_ON_FULL_SLOTS`, the layout's ``dp_dispatch`` ``refill``.

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> d, _ = sized_token_limit(Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8))), 8192, 256, 32, "s")
    >>> d.max_tokens_per_step, d.token_budget, d.decode.layout.dp_dispatch  # a rank: 32 + 8192 + 64, to 64
    (66560, 65536, 'refill')
    """
    k = dep.mtp.draft_tokens if dep.mtp is not None else 0
    dp = dep.decode.layout.dp
    t = sized_max_num_tokens(concurrency if per_rank is None else per_rank, isl, k)
    if dp > 1:  # one scheduler per rank: the rank's T and one whole prompt, as instance totals (budget_per "instance")
        full = per_rank is not None and per_rank * dp <= concurrency and REFILL_ON_FULL_SLOTS
        pool = replace(dep.decode, layout=replace(dep.decode.layout, dp_dispatch="refill")) if full else dep.decode
        return (
            replace(dep, decode=pool, max_tokens_per_step=t * dp, token_budget=int(isl) * dp),
            f"--max_num_tokens {t} per attention-DP rank ((k + 1)·{'CONC' if per_rank is None else 'max_batch'} + "
            f"ISL + 64, to 64), no chunked prefill: one whole prompt a rank a step (token budget {int(isl)} a rank, "
            f"x{dp}){'; every rank at its max_batch: prompts on the random rank a request left (refill)' if full else ''}"
            f": {where}",
        )
    return (
        replace(dep, max_tokens_per_step=t, token_budget=int(isl)),
        f"--max_num_tokens {t} ((k + 1)·CONC + ISL + 64, to 64), no chunked prefill: one whole prompt a step "
        f"(token budget {int(isl)}): {where}",
    )
