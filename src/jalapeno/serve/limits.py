"""Engine limits that shape a serving frontier: running requests, tokens per step, CUDA graphs.

Serving engines cap what one instance runs at once (docs/model.md §8.6):

- ``max_running`` (SGLang ``--max-running-requests``, vLLM ``max_num_seqs``, TRT-LLM
  ``max_batch_size``): decoding + prefilling sequences per instance (per pipeline micro-batch),
  so the decode batch B ≤ max_running·pp;
- ``max_tokens_per_step`` T (TRT-LLM ``max_num_tokens``, vLLM ``max_num_batched_tokens``): the
  rows one step processes. In the aggregated steady state a step carries B/pp decoding sequences
  of q rows (q = 1 + k with MTP) and on average p = (B/pp)·ISL/D prefill tokens, so
  B ≤ T·pp / (q + ISL/D); a decode-only instance (disaggregated) has B ≤ T·pp/q;
- beyond a cap the excess requests queue (serve/analytic.py: throughput flat, TTFT grows).

CUDA graphs: engines replay the decode step as a captured CUDA graph up to a batch ceiling
(SGLang ``--cuda-graph-max-bs``, TRT-LLM ``cuda_graph_config.max_batch_size``, vLLM
``max_capture_size``); a larger decode batch (per attention rank) runs eagerly. Eagerly, the
host enqueues every kernel itself; it runs ahead of the GPU asynchronously, so the step takes
max(graph step, kernels · :data:`EAGER_LAUNCH_S` + step overhead) — the GPU waits only when the
host is slower than the kernels it launches.

Padding: an engine that captures a list of batch sizes and pads (TRT-LLM ``cuda_graph_config``
``batch_sizes`` + ``enable_padding``; SGLang pads to its captured sizes always) runs a decode-only
step of n sequences per attention rank as the smallest captured size >= n, the rest dummy
sequences (:func:`graph_padded`, ``Deployment.cuda_graph_batch_sizes``). TensorRT-LLM's PyTorch
executor (``tensorrt_llm/_torch/pyexecutor/cuda_graph_runner.py`` ``_get_padded_batch``, 1.1-1.2):
under attention DP the ranks all-gather their batch sizes and every rank pads to the largest's
captured size; the dummy requests are generation requests of one context token
(``kv_cache_manager.add_dummy_requests(..., is_gen=True)``); a step with a prompt in it is not
graphed (``can_run_cuda_graph`` false) and is not padded.
"""

from __future__ import annotations

import numpy as np

from jalapeno.cost.host_calls import step_host_calls
from jalapeno.cost.priced import moe_all_to_all
from jalapeno.cost.step import Batch, StepCost, step_overhead
from jalapeno.deploy.deployment import Deployment
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.model import ModelSpec

#: Host time to launch one kernel from an eager PyTorch engine (Python, the ATen dispatcher and
#: the CUDA driver's cudaLaunchKernel), seconds. A named assumption: 10 µs, inside the 5-20 µs
#: commonly measured for eager PyTorch ops; the driver alone costs ~2-4 µs per launch ("Getting
#: Started with CUDA Graphs", NVIDIA developer blog, A. Gray, 2019: graphs remove that per-kernel
#: launch cost), and CUDA graphs replay the whole step with one launch (PyTorch blog,
#: "Accelerating PyTorch with CUDA Graphs", 2021). Band: 5-20 µs.
EAGER_LAUNCH_S = 10e-6


def kernels_per_step(sc: StepCost, pp: int) -> np.ndarray:
    """Kernels (and collective calls) one step launches through all pp stages, (N,).

    Counts the ops that run at each point (an op with no work launches nothing) times their
    kernels, per-stage ops pp times, plus every collective call.
    """
    w = np.where(sc.ops.per_stage, float(pp), 1.0)[:, None]
    active = (sc.ops.flop + sc.ops.weight_bytes + sc.ops.kv_bytes + sc.ops.act_bytes) > 0
    k = (np.asarray(sc.ops.kernels, dtype=float)[:, None] * active * w).sum(axis=0)
    c = sc.collectives
    if len(c.name):
        cw = np.where(c.per_stage, float(pp), 1.0)
        k = k + float((np.asarray(c.calls, dtype=float) * cw).sum())
    return k


def eager_step_s(sc: StepCost, eff: Efficiency, layout) -> np.ndarray:
    """Step latency of ``sc`` run eagerly (no CUDA graph), (N,): max(graph, host launch time).

    The host time is the step's kernels × ``EAGER_LAUNCH_S`` plus the same per-step cost outside kernels the
    graphed step pays (cost/step.step_overhead: ``step_overhead_s`` and the per-TP-rank host cost over the
    engine's TP group, attention-DP ranks included where ``tp_rank_step_dp``); ``layout`` the pool's
    (deploy/layout.Layout; its ``pp`` splits the kernels).
    """
    host = kernels_per_step(sc, layout.pp) * EAGER_LAUNCH_S + step_overhead(eff, layout)
    if sc.draft_s.any():  # MTP drafting passes launch their own kernels: one layer's worth each
        host = host * (1 + sc.draft_s / np.maximum(sc.step_time_s - sc.draft_s, 1e-30))
    return np.maximum(sc.step_time_s, host)


def prompt_floor_s(model: ModelSpec, dep: Deployment, pool=None, pricer=None) -> tuple[float, float] | None:
    """Host time (s) of one eager prompt-carrying step, (context only, mixed with decodes): the step's host calls
    (cost/host_calls.step_host_calls, with the deployment's MTP drafting passes and the MoE backend and layout of
    ``pool``, default the decode pool, and the MoE exchange ``pricer``'s engine runs on that layout on its system,
    cost/priced.moe_all_to_all; None: the gather) × ``dep.eager_prompt_call_s``;
    None where that is 0 or the architecture was not counted; both the context-only one where the engine runs prompt
    steps alone (``dep.eager_prompt_alone``). Such a step costs max(this, its GPU time)
    (:func:`floored_steps`): the host runs ahead of the GPU (no counted call waits for it).

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.catalog import load_model
    >>> from jalapeno.specs.formats import get_precision
    >>> dep = Deployment(get_precision("fp8"), Pool(Layout(tp=8)), eager_prompt_call_s=24e-6)
    >>> [round(x, 4) for x in prompt_floor_s(load_model("llama-3.3-70b"), dep)]  # 1,120 calls × 24 µs
    [0.0269, 0.0269]
    """
    if dep.eager_prompt_call_s <= 0:
        return None
    k = dep.mtp.draft_tokens if dep.mtp else 0
    lay = (pool or dep.decode).layout
    a2a = pricer is not None and lay.dp > 1 and moe_all_to_all(pricer, lay, model)
    calls = [
        step_host_calls(model, mixed, k, (pool or dep.decode).moe_backend, (lay.tp, lay.dp, lay.ep), a2a)
        for mixed in (False, True)
    ]
    if None in calls:
        return None
    return (calls[0] * dep.eager_prompt_call_s, calls[0 if dep.eager_prompt_alone else 1] * dep.eager_prompt_call_s)


def floored_steps(step_s, decoding, prefill_tokens, floor: tuple[float, float] | None) -> np.ndarray:
    """Step times (N,) with :func:`prompt_floor_s`'s host floor on the steps that carry prompt tokens:
    max(step, floor[0] + (floor[1] − floor[0])·min(decoding, 1)), ``decoding`` the requests decoding beside the prompt
    (a simulated step's count, 0 or >= 1: the context-only or the mixed floor; the analytic model's mean other users,
    b − 1, which interpolates below one); unchanged without a floor.

    >>> floored_steps(np.array([0.01, 0.01, 0.2, 0.01, 0.01]), [4, 0, 4, 4, 0.5], [0, 1024, 1024, 1024, 1024],
    ...               (0.05, 0.08)).round(3).tolist()
    [0.01, 0.05, 0.2, 0.08, 0.065]
    """
    step_s = np.asarray(step_s, dtype=float)
    if floor is None:
        return step_s
    pre, dec = np.asarray(prefill_tokens, dtype=float), np.clip(np.asarray(decoding, dtype=float), 0.0, 1.0)
    return np.where(pre > 0, np.maximum(step_s, floor[0] + (floor[1] - floor[0]) * dec), step_s)


def graphed(dep: Deployment, decode_batch, layout) -> np.ndarray:
    """Whether decode batches (N,) per instance run as a CUDA graph (per attention rank ≤ ceiling)."""
    b = np.asarray(decode_batch, dtype=float)
    if dep.cuda_graph_max_batch is None:
        return np.ones(b.shape, dtype=bool)
    return b / (layout.pp * layout.dp) <= dep.cuda_graph_max_batch + 1e-9


def decode_step_s(sc: StepCost, eff: Efficiency, dep: Deployment, decode_batch, layout) -> np.ndarray:
    """Decode-step latency (N,) with the CUDA-graph ceiling applied: eager above it."""
    if dep.cuda_graph_max_batch is None:
        return sc.step_time_s
    return np.where(graphed(dep, decode_batch, layout), sc.step_time_s, eager_step_s(sc, eff, layout))


def graph_padded(dep: Deployment, layout, batch: Batch) -> Batch:
    """``batch`` as a padding CUDA-graph engine runs it (module docstring): each decode-only point
    (no prefill tokens) whose sequences per attention rank n = decode_seqs / dp (decode_seqs is per
    pipeline micro-batch) are at most the largest of ``dep.cuda_graph_batch_sizes`` carries the
    smallest captured size g >= n per rank; the g − n dummy sequences hold one context token each, so
    the mean context becomes (n·L + (g − n)) / g and the step reads the real sequences' KV and the
    dummies' one token each. Ranks are taken equally loaded (the mean; the all-gathered largest rank
    of a real step is not modelled, an ASSUMPTION; an open-loop batch's Poisson spread over the sizes is
    serve/occupancy_padding's, round 54). Unchanged without captured sizes, for mixed
    points and above the largest size (eager: :func:`decode_step_s`).

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> dep = Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)), cuda_graph_batch_sizes=(128, 256))
    >>> b = graph_padded(dep, Layout(dp=8, ep=8), Batch.make(decode_seqs=[8 * 155.0, 8 * 300.0], decode_ctx=4801.0))
    >>> # 155 -> 256 per rank, context (155·4801 + 101)/256; 300 > 256: as it is
    >>> b.decode_seqs.tolist(), b.decode_ctx.round(1).tolist()
    ([2048.0, 2400.0], [2907.2, 4801.0])
    """
    return padded_to_sizes(dep.cuda_graph_batch_sizes, layout.dp, batch, dep.cuda_graph_pad_routing)


def padded_to_sizes(sizes, dp: int, batch: Batch, pad_routing: str = "routed") -> Batch:
    """:func:`graph_padded` with the captured sizes per rank ``sizes`` (None: ``batch`` unchanged) over
    ``dp`` attention ranks; the dummies are ``Batch.pad_seqs`` (g − n per rank, times dp), routed by the MoE
    as ``pad_routing`` says (``Deployment.cuda_graph_pad_routing``; cost/ops.py prices it). ``sizes`` in any
    order: sorted, as the engines sort the list they are given (TensorRT-LLM ``llm_args`` validate_cuda_graph_config:
    ``config.batch_sizes = sorted(config.batch_sizes)``; SGLang ``cuda_graph_runner.get_batch_sizes_to_capture``:
    ``sorted(set(capture_bs))``; vLLM's ``cudagraph_capture_sizes`` end in ascending order) and as
    ``Deployment`` stores them (deploy/graph_capture.check_graph_sizes); (4, 2) padded a step of 1 to 4, not 2.

    >>> b = padded_to_sizes((4, 8), 2, Batch.make(decode_seqs=10.0, decode_ctx=100.0), "one_token")
    >>> # 5 per rank -> 8: 3 dummies per rank, 6 in all; context (10·100 + 6·1)/16
    >>> b.decode_seqs.tolist(), b.pad_seqs.tolist(), b.decode_ctx.tolist(), b.pad_routing
    ([16.0], [6.0], [62.875], 'one_token')
    """
    if not sizes:
        return batch
    per_rank = batch.decode_seqs / dp
    grid = np.unique(np.asarray(sizes, dtype=float))  # sorted: searchsorted needs it
    k = np.searchsorted(grid, per_rank - 1e-9)  # smallest captured size >= n (n within 1e-9 of a size: that size)
    pad = (batch.prefill_tokens <= 0) & (per_rank > 0) & (k < grid.size)
    if not pad.any():
        return batch
    # a batch within 1e-9 per rank above a size runs at that size: never below its own sequences (pad_seqs >= 0)
    g = np.where(pad, np.maximum(grid[np.minimum(k, grid.size - 1)] * dp, batch.decode_seqs), batch.decode_seqs)
    ctx = np.where(
        pad, (batch.decode_seqs * batch.decode_ctx + (g - batch.decode_seqs)) / np.maximum(g, 1e-30), batch.decode_ctx
    )
    return Batch.make(
        decode_seqs=g,
        decode_ctx=ctx,
        prefill_tokens=batch.prefill_tokens,
        prefill_ctx=batch.prefill_ctx,
        prefill_seqs=batch.prefill_seqs,
        pad_seqs=batch.pad_seqs + (g - batch.decode_seqs),
        pad_routing=pad_routing,
    )


def batch_caps(
    dep: Deployment, rows_per_seq: int, prefill_tokens_per_seq_step: float, pp: int, backstop: bool = True, layout=None
) -> dict[str, float]:
    """Decode-batch caps (sequences per instance) set by the engine limits.

    Args:
        rows_per_seq: q, rows per decoding sequence per step (1, or 1 + k with MTP).
        prefill_tokens_per_seq_step: mean prefill tokens per decoding sequence per step
            (ISL/D aggregated; 0 for a decode-only instance).
        pp: pipeline stages (the batch is spread over pp micro-batches).
        backstop: apply the default ``max_running`` backstop when the deployment sets none
            (aggregated instances); False for disaggregated decode pools.
        layout: the instance's layout; with ``dep.budget_per == "rank"`` the limits count per
            attention-DP rank (x dp, Deployment.running_limit / step_token_cap). None: as one rank.

    Returns:
        ``{"max_running": ..., "max_tokens_per_step": ...}`` (each only when it applies).
    """
    caps = {}
    scale = 1 if layout is None else dep.rank_scale(layout)
    if dep.max_running is not None or backstop:
        caps["max_running"] = float((dep.running_cap if dep.max_running is None else dep.max_running * scale) * pp)
    if dep.max_tokens_per_step is not None:
        caps["max_tokens_per_step"] = (
            dep.max_tokens_per_step * scale * pp / (rows_per_seq + prefill_tokens_per_seq_step)
        )
    return caps


def running_cap(model: ModelSpec, pricer, dep: Deployment, wl=None) -> dict:
    """The cap on running requests of one (decode) instance of ``dep`` and its source, as the analytic model and the
    simulator apply it: ``{"max_running": requests or None, "source": "stated" | "kv_pool" | "default", "per":
    "instance" | "decode instance"}`` (ux50: ``Deployment.as_dict`` printed the 4,096 backstop for a
    disaggregated decode pool that states none, which since round 49 neither applies).

    ``stated``: ``max_running`` (per-rank scaled, Deployment.running_limit); ``default``: the 4,096 backstop
    (deploy/deployment.DEFAULT_MAX_RUNNING); ``kv_pool``: the decode batch the pool's KV capacity holds at the
    workload's admission context (deploy/kv_capacity.decode_batch_cap at serve/kv_admission.decode_admission_ctx,
    the ``kv_capacity`` cap of serve/disagg.decode_curve), None without a fixed-length workload ``wl``.
    """
    src, lay = dep.running_cap_source, dep.decode.layout
    per = "decode instance" if dep.prefill is not None else "instance"
    if src != "kv_pool":
        return {"max_running": dep.running_limit(lay), "source": src, "per": per}
    if wl is None:
        return {"max_running": None, "source": src, "per": per}
    from jalapeno.deploy.kv_capacity import decode_batch_cap
    from jalapeno.serve.kv_admission import decode_admission_ctx

    n = decode_batch_cap(
        model,
        pricer.system,
        lay,
        dep.precision,
        decode_admission_ctx(wl, pricer.efficiency),
        pricer.efficiency,
        dep.mtp,
        memory_fraction=dep.memory_fraction,
        engine=dep.memory_profile,
    )
    return {"max_running": float(n), "source": src, "per": per}


def running_cap_text(cap: dict) -> str:
    """:func:`running_cap`'s dict as one table cell.

    >>> running_cap_text({"max_running": 8095.4, "source": "kv_pool", "per": "decode instance"})
    '8,095 requests per decode instance (its KV pool at the workload mean context; no max_running stated)'
    >>> running_cap_text({"max_running": 4096, "source": "default", "per": "instance"})
    '4,096 requests per instance (the default backstop; no max_running stated)'
    >>> running_cap_text({"max_running": None, "source": "kv_pool", "per": "decode instance"})
    'its KV pool per decode instance (no max_running stated)'
    """
    n, src = cap["max_running"], cap["source"]
    if n is None:
        return f"its KV pool per {cap['per']} (no max_running stated)"
    why = {
        "stated": "stated: --max-running or the engine recipe",
        "kv_pool": "its KV pool at the workload mean context; no max_running stated",
        "default": "the default backstop; no max_running stated",
    }[src]
    return f"{n:,.0f} requests per {cap['per']} ({why})"
