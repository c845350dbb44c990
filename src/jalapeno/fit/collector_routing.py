"""How aiconfigurator's MoE collectors route tokens: the measured rank's load and touched experts.

Each row of an aiconfigurator ``moe_perf`` table names the token-to-expert ``distribution`` its kernel
was timed under; a row says what the kernel costs only when it is read with that routing. Both
routings are read from the collector's own generators (aiconfigurator ``collector/helper.py``,
``balanced_logits`` and ``_generate_power_law_distribution`` / ``power_law_logits_v3``, used by the
trtllm, sglang and vllm ``collect_moe.py``; github.com/ai-dynamo/aiconfigurator):

- ``balanced``: stride s = ceil(E/k); token i takes experts (i + j·s) mod E, j < k, when T >= s, else
  (i·s/T + j·s) mod E. T tokens reach min(E, T·k) distinct experts, a rank of E/ep experts
  min(E/ep, T·k/ep), each with the same rows.
- ``power_law_<alpha>``: per-expert weights x_e drawn from a power law of exponent alpha truncated to
  [1, 0.8·T] when T·k > E, else to [0.01, 2] (inverse-CDF sampling); counts c_e = round(T·k · x_e/Σx);
  the rounding residual T·k − Σc added one by one to (or taken from) the experts in descending count
  order; then the EP rank whose E/ep consecutive experts hold the most assignments is swapped into
  rank 0, the rank the kernel runs, so the row times the *busiest* rank. Each measurement averages 5
  such draws (``num_iter = 5`` in the trtllm collector; latency divided by it).

Two consequences the balanced reading misses. At T·k <= E almost every count rounds to 0 and the
residual goes to the first experts in the sort's order: with ties kept in expert-id order (a stable
sort; assumption, checked on the table: H200 TRT-LLM FP8 DeepSeek shape at EP8 measures 137 µs at 1
token under power-law against 53 µs balanced, ~12 µs per added expert, i.e. 8 experts on the
measured rank rather than 1) one rank takes all T·k assignments on T·k experts. At large T the
heavy tail concentrates the load: the busiest rank carries far more than T·k/ep.

:func:`collector_routing` returns the expectation over seeded draws (``SAMPLES``) of the measured
rank's assignments and distinct experts (the kernel time is close to linear in both, so the mean
draw prices the mean of the 5 timed ones).

TensorRT-LLM's ``min_latency`` NVFP4 MoE rows (``kernel_source`` ``moe_torch_flow_min_latency``, SM100:
B200, GB200) are not routed by the balanced logits alone: that pass sends them through TensorRT-LLM's
DeepSeek grouped gate (``DeepseekV3Gate(n_group=8, topk_group=4)``, aiconfigurator
``collector/trtllm/collect_moe.py`` @095f58a51, "FIXME: all use deepseek setting for now") whose
``e_score_correction_bias`` the collector never loads (``torch.empty``). With the balanced logits every
group scores the same, so the choice of groups falls to the kernel's tie-break: :func:`grouped_gate_rank0`
replicates it with a zero bias and ties broken to the lowest index (an ASSUMPTION about the fused kernel;
round 29, docs/gap_aic_itl.md "collect29": the rows' own times bound the experts touched at saturation to
at most 155 of 256 at EP 1, the replica says 128).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from jalapeno.errors import SpecError

#: draws averaged per configuration (the collector times 5; more draws only steady the expectation)
SAMPLES = 64
#: seed of the draws (results are reproducible)
SEED = 20251201
#: the ``distribution`` prefix of the power-law rows; the exponent follows it (``power_law_1.01``)
POWER_LAW = "power_law_"


def power_law_alpha(distribution: str) -> float | None:
    """The exponent of a ``power_law_<alpha>`` distribution name; None for ``balanced``.

    >>> power_law_alpha("power_law_1.01"), power_law_alpha("balanced")
    (1.01, None)

    Raises:
        SpecError: a name that is neither (the tables carry only these two kinds).
    """
    if distribution == "balanced":
        return None
    if distribution.startswith(POWER_LAW):
        try:
            return float(distribution[len(POWER_LAW) :])
        except ValueError:
            pass
    raise SpecError(
        "moe_perf: distribution",
        f"unknown routing {distribution!r}",
        "expected 'balanced' or 'power_law_<alpha>' (aiconfigurator's collector names)",
    )


def power_law_counts(u: np.ndarray, num_tokens: int, top_k: int, alpha: float) -> np.ndarray:
    """Per-expert assignment counts of one power-law draw from uniform variates ``u`` ((E,) in [0, 1)),
    as the collector computes them (module docstring): inverse-CDF weights, rounded shares of T·k, the
    residual spread in descending count order (ties in expert-id order). Returns (E,) ints summing to T·k.

    >>> power_law_counts(np.full(8, 0.5), 1, 2, 1.01).tolist()  # every share rounds to 0: the residual
    [1, 1, 0, 0, 0, 0, 0, 0]
    """
    e = u.size
    lo, hi = (1.0, num_tokens * 0.8) if num_tokens * top_k > e else (0.01, 2.0)
    a = 1.0 - alpha
    x = ((hi**a - lo**a) * u + lo**a) ** (1.0 / a)
    target = num_tokens * top_k
    c = np.round(x / x.sum() * target).astype(np.int64)
    delta = int(target - c.sum())
    order = np.argsort(-c, kind="stable")
    if delta > 0:
        c += delta // e
        c[order[: delta % e]] += 1
    for i in range(-delta):
        j = order[-(i % e) - 1]
        if c[j] > 0:
            c[j] -= 1
        else:
            c[np.argmax(c)] -= 1
    return c


@lru_cache(maxsize=4096)
def _power_law_rank(num_tokens: int, num_experts: int, top_k: int, ep: int, alpha: float) -> tuple[float, float]:
    rng = np.random.default_rng(SEED)
    per_rank = num_experts // ep
    load = touched = 0.0
    for _ in range(SAMPLES):
        c = power_law_counts(rng.random(num_experts), num_tokens, top_k, alpha)
        ranks = c[: per_rank * ep].reshape(ep, per_rank)
        busiest = ranks[np.argmax(ranks.sum(axis=1))]
        load += float(busiest.sum())
        touched += float(np.count_nonzero(busiest))
    return load / SAMPLES, touched / SAMPLES


def collector_routing(num_tokens: int, num_experts: int, top_k: int, ep: int, distribution: str) -> tuple[float, float]:
    """(assignments, distinct experts) on the rank a collector row times, expected over the draws.

    ``balanced``: (T·k/ep, min(E/ep, T·k/ep)) exactly, the measured rank being any rank. Power law:
    the busiest rank of the draw (swapped into rank 0 by the collector), averaged over ``SAMPLES``
    seeded draws.

    >>> collector_routing(32, 256, 8, 8, "balanced")
    (32.0, 32.0)
    >>> collector_routing(1, 256, 8, 8, "power_law_1.01")  # 8 assignments, all on the first rank
    (8.0, 8.0)

    Raises:
        SpecError: an unknown ``distribution``; ``ep`` not dividing ``num_experts`` for a power law (the
            collector reshapes the counts into ep equal ranks).
    """
    alpha = power_law_alpha(distribution)
    if alpha is None:
        load = num_tokens * top_k / ep
        return float(load), float(min(math.ceil(num_experts / ep), load))
    if num_experts % ep:
        raise SpecError(
            "moe_perf: moe_ep_size",
            f"{ep} does not divide {num_experts} experts",
            "the collector's power-law routing needs equal ranks; drop the row",
        )
    return _power_law_rank(int(num_tokens), int(num_experts), int(top_k), int(ep), float(alpha))


#: the ``kernel_source`` of TensorRT-LLM's NVFP4 low-latency MoE rows, routed through the grouped gate
MIN_LATENCY_SOURCE = "moe_torch_flow_min_latency"
#: the collector's grouped gate (DeepSeek's: 8 groups, the best 4 kept; collect_moe.py @095f58a51)
GATE_GROUPS, GATE_TOPK_GROUPS = 8, 4


def balanced_picks(num_tokens: int, num_experts: int, top_k: int) -> np.ndarray:
    """(T, k) expert ids of the collector's ``balanced`` routing (module docstring): stride s = ceil(E/k);
    token i takes (i + j·s) mod E when T >= s, else floor(i·s/T + j·s) mod E.

    >>> balanced_picks(2, 8, 2).tolist()
    [[0, 4], [2, 6]]
    """
    s = math.ceil(num_experts / top_k)
    i, j = np.arange(num_tokens)[:, None], np.arange(top_k)[None, :]
    if num_tokens >= s:
        return (i + j * s) % num_experts
    return np.floor(i * s / num_tokens + j * s).astype(np.int64) % num_experts


def grouped_gate_picks(
    num_tokens: int, num_experts: int, top_k: int, n_group: int = GATE_GROUPS, topk_group: int = GATE_TOPK_GROUPS
) -> np.ndarray:
    """(T, k) expert ids the zero-bias DeepSeek grouped gate picks from the collector's balanced logits.

    Score of an expert: 1 if the balanced routing picked it, else 0 (only the order matters: sigmoid is
    monotone and the bias is taken as zero); group score: the sum of its top-2 scores; the ``topk_group``
    best groups kept, then the ``top_k`` best experts inside them; every tie broken to the lowest index
    (stable sorts: the ASSUMPTION of the module docstring). Needs E divisible by ``n_group``.

    >>> [int(np.unique(grouped_gate_picks(t, 256, 8)).size) for t in (4, 16, 32, 64)]
    [20, 66, 128, 128]
    """
    gsize = num_experts // n_group
    score = np.zeros((num_tokens, num_experts))
    np.put_along_axis(score, balanced_picks(num_tokens, num_experts, top_k), 1.0, axis=1)
    g = np.sort(score.reshape(num_tokens, n_group, gsize), axis=2)[:, :, -2:].sum(axis=2)
    keep = np.zeros((num_tokens, n_group), dtype=bool)
    np.put_along_axis(keep, np.argsort(-g, axis=1, kind="stable")[:, :topk_group], True, axis=1)
    masked = np.where(np.repeat(keep, gsize, axis=1), score, -1.0)
    return np.argsort(-masked, axis=1, kind="stable")[:, :top_k]


@lru_cache(maxsize=4096)
def grouped_gate_rank0(num_tokens: int, num_experts: int, top_k: int, ep: int) -> tuple[float, float]:
    """(assignments, distinct experts) on EP rank 0 (experts [0, E/ep), the rank the collector times) under
    :func:`grouped_gate_picks`.

    >>> grouped_gate_rank0(64, 256, 8, 2)  # every token's 8 picks land in groups 0-3, all on rank 0
    (512.0, 128.0)
    """
    p = grouped_gate_picks(num_tokens, num_experts, top_k)
    r = p[p < num_experts // ep]
    return float(r.size), float(np.unique(r).size)


def gated_row(kernel_source: str, num_experts: int) -> bool:
    """Whether a ``moe_perf`` row was routed through the grouped gate: a ``min_latency`` row (its imputed
    copies included: fit/kernel_tables.fill_missing_kernel_paths suffixes the source) of a shape the gate
    can group (E divisible by 8, at least two experts a group).

    >>> gated_row("moe_torch_flow_min_latency (imputed from b200)", 256), gated_row("moe_torch_flow_cutlass", 256)
    (True, False)
    """
    return (
        str(kernel_source).startswith(MIN_LATENCY_SOURCE)
        and num_experts % GATE_GROUPS == 0
        and num_experts >= 2 * GATE_GROUPS
    )
