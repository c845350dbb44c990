"""The busiest attention-DP rank of a prefill step: how many prompts and tokens it runs.

Attention data parallelism gives every DP rank whole requests of its own — it runs their attention
(the MLA/GQA projections and the attention kernel), dense FFN, shared experts, norms, router and LM
head on its own tokens — while the routed experts see the whole instance's tokens through the MoE
exchange. The step ends when the busiest rank is done, so the rank-local work of a step is priced at
the busiest rank's prompts, not at the instance's prompts divided by dp (cost/ops.build_step_ops).

How the engines spread prompts over the ranks (read, not copied):

- TensorRT-LLM (``tensorrt_llm/_torch/pyexecutor/executor_request_queue.py``,
  ``_balance_requests_across_ranks``; the 1.x releases in the data, 1.1.0rc2-1.2.0rc6): the new
  requests of a scheduling round are sorted longest first and each goes to the rank with the fewest
  active tokens (a heap), no rank above ⌈(active + new)/dp⌉ requests; every rank then runs its own
  PyExecutor under its own ``max_num_tokens`` (``Deployment.budget_per`` = ``rank``).
- SGLang (``python/sglang/srt/managers/data_parallel_controller.py``, default
  ``load_balance_method`` ``round_robin``: consecutive requests go to consecutive DP ranks; each
  rank's scheduler chunks its prompts at ``chunked_prefill_size // dp_size``, ``server_args.py``).

Both put the prompts of a step on distinct ranks as far as they go (balanced dispatch; not
balls-in-bins, which neither engine does), so a step with fewer prompts than ranks runs one rank's
whole prompt (or chunk) beside idle ranks, and once every rank has a prompt the token balancing (the
heap) and each rank's own budget (chunking the excess to a later step) even the ranks out. The busiest
rank's prompts in a step of n prompts are therefore taken as

    f(n) = max(n/dp, min(n, 1)),

one whole prompt while n ≤ dp (n itself below one prompt: the fraction of a chunk a mean-load step
carries runs on one rank), the mean share n/dp above. This is exact at n ≤ dp and at a full-budget
step (every rank at its budget) and a lower bound in between (n = dp + 1 whole prompts put two on
one rank unless its budget chunks them; the discreteness is left out: the analytic paths give n as
a mean, serve/analytic.py prefill tokens / chunk). The busiest rank's tokens are its prompts times
the step's mean prompt chunk (tokens / prompts). A prompt lives on one rank, so it is chunked at the
rank's share of the token budget (``Deployment.prompt_budget``).

Refill (``Layout.dp_dispatch`` = ``refill``, round 41): where every rank's running cap binds — a TensorRT-LLM launch
that sizes ``max_batch_size`` to CONC/dp a rank, served at concurrency CONC (InferenceX
``dsr1_fp8_h200_trt_mtp_slurm.sh`` @008b91a9dd78 with attention DP) — a new request can only join a rank whose request
finished (``_balance_requests_across_ranks`` puts no rank above ⌈(active + new)/dp⌉ requests), and which one finishes
is random. Decodes stay balanced (every rank holds its cap), but the prompts of a step land on uniformly random ranks,
so the busiest rank runs the expected maximum of n balls in dp bins (:func:`expected_max_load`) in place of f(n).
Assumption (named): a fractional mean n is interpolated linearly between whole counts (between 0 and 1 prompt: n
itself, as f). Shipped on with the TensorRT-LLM scripts' sized ``max_num_tokens`` (fit/searched.py;
docs/gap_aic_itl.md round 41), which holds one whole prompt a rank a step: without it a rank's 1,024-token chunks
hide the placement.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np


#: whole prompt counts :func:`expected_max_load` tabulates exactly; above, the excess over n/dp grows as sqrt(n)
#: (the Poisson-normal limit of :func:`busiest_rank_decode`), scaled from the table's last entry
REFILL_TABLE_PROMPTS = 96


@lru_cache(maxsize=16)
def expected_max_load(n_max: int, dp: int) -> tuple[float, ...]:
    """E[most prompts on one of ``dp`` ranks] for n = 0..``n_max`` prompts each on a uniformly random rank, exact:
    P(max ≤ m) for every n at once by splitting the prompts rank by rank with binomial draws, E[max] = Σ_m P(max > m).

    >>> [round(x, 4) for x in expected_max_load(3, 2)]  # n = 2: 1 + P(both on one rank) = 1.5; n = 3: 2 + 1/4
    [0.0, 1.0, 1.5, 2.25]
    >>> round(expected_max_load(2, 8)[2], 4)  # 1 + 1/8
    1.125
    """
    from scipy.stats import binom

    r = np.arange(n_max + 1)
    shift = r[:, None] - r[None, :]  # prompts left for the other ranks when this one takes k
    pmf = {b: binom.pmf(r[None, :], r[:, None], 1.0 / b) for b in range(2, dp + 1)}
    e = np.zeros(n_max + 1)
    for m in range(n_max):
        f = (r <= m).astype(float)  # on one rank: fine while r ≤ m
        for b in range(2, dp + 1):
            w = np.where((r[None, :] <= m) & (shift >= 0), pmf[b], 0.0)
            f = (w * f[np.clip(shift, 0, None)]).sum(axis=1)
        e += 1.0 - f
    return tuple(float(x) for x in e)


def busiest_rank_prompts(prompts, dp: int, dispatch: str = "balanced") -> np.ndarray:
    """Prompts the busiest of ``dp`` attention-DP ranks runs in a step of ``prompts`` (N,) prompts:
    max(n/dp, min(n, 1)) (module docstring); with ``dispatch`` ``refill`` the expected maximum on random ranks
    (:func:`expected_max_load`, linear between whole counts; above :data:`REFILL_TABLE_PROMPTS`,
    n/dp + (E_T − T/dp)·sqrt(n/T)); n itself at dp = 1. ``dp`` may be an (N,) array of every point's
    degree, each > 1 (a build of several layouts by column, cost/layout_columns.py, balanced only), here and below.

    Raises:
        ValueError: ``refill`` with an (N,) array ``dp`` (per-column builds take balanced dispatch only).

    >>> busiest_rank_prompts([0.0, 0.5, 1.0, 3.0, 8.0, 8.125, 16.0], 8).tolist()
    [0.0, 0.5, 1.0, 1.0, 1.0, 1.015625, 2.0]
    >>> [round(x, 9) for x in busiest_rank_prompts([0.5, 2.0, 3.0], 8, "refill").tolist()]  # 1 + 1/8; 3: 87/64
    [0.5, 1.125, 1.359375]
    """
    n = np.atleast_1d(np.asarray(prompts, dtype=float))
    if type(dp) is not np.ndarray and dp <= 1:
        return n
    if dispatch != "refill":
        return np.maximum(n / dp, np.minimum(n, 1.0))
    if type(dp) is np.ndarray:  # int(dp) raised TypeError: only length-1 arrays can be converted
        raise ValueError("per-column dp takes balanced dispatch only")
    top = REFILL_TABLE_PROMPTS
    t = np.asarray(expected_max_load(top, int(dp)))
    far = n / dp + (t[-1] - top / dp) * np.sqrt(np.maximum(n, top) / top)
    return np.where(n <= top, np.interp(n, np.arange(top + 1, dtype=float), t), far)


def busiest_rank_prefill(
    prefill_tokens, prefill_seqs, dp: int, dispatch: str = "balanced"
) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, prompts) of a step's prefill on its busiest attention-DP rank, arrays (N,).

    ``prefill_tokens`` and ``prefill_seqs`` are the whole instance's; the busiest rank runs
    :func:`busiest_rank_prompts` of the prompts (at ``dispatch``), each the step's mean chunk (tokens / prompts).

    >>> t, s = busiest_rank_prefill([8192.0, 65536.0], [1.0, 8.0], 8)
    >>> t.tolist(), s.tolist()  # a lone 8k prompt stays whole on one rank; 8 prompts, one each
    ([8192.0, 8192.0], [1.0, 1.0])
    """
    tokens = np.atleast_1d(np.asarray(prefill_tokens, dtype=float))
    seqs = np.atleast_1d(np.asarray(prefill_seqs, dtype=float))
    if type(dp) is not np.ndarray and dp <= 1:
        return tokens, seqs
    busy = busiest_rank_prompts(seqs, dp, dispatch)
    return np.where(seqs > 0, tokens * busy / np.maximum(seqs, 1e-12), tokens / dp), busy


@lru_cache(maxsize=64)
def expected_max_std_normal(n: int) -> float:
    """E[max of ``n`` independent standard normal draws], by quadrature of n·x·φ(x)·Φ(x)^(n−1)
    (0 for n = 1): the spread term of :func:`busiest_rank_decode`.

    >>> round(expected_max_std_normal(2), 4), round(expected_max_std_normal(32), 3)  # 1/sqrt(pi); 2.07
    (0.5642, 2.07)
    """
    if n <= 1:
        return 0.0
    x = np.linspace(-9.0, 9.0, 18001)
    pdf = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    cdf = 0.5 * (1.0 + np.array([math.erf(v / math.sqrt(2.0)) for v in x]))
    return float(np.trapezoid(n * x * pdf * cdf ** (n - 1), x))


def busiest_rank_decode(decode_seqs, dp: int, dispatch: str = "balanced") -> np.ndarray:
    """Decoding sequences on the busiest of ``dp`` attention-DP ranks, (N,), for an instance decoding
    ``decode_seqs`` (N,) in all.

    ``balanced``: B/dp (round-robin dispatch keeps the ranks' counts within one another).
    ``random``: every request lands on a rank drawn uniformly at random (a disaggregated SGLang decode
    server before PR #16110 sends each request to rank ``bootstrap_room % dp``, and the router draws the
    room at random), so the ranks' counts are Multinomial(B; 1/dp, ..., 1/dp) and a step waits for the fullest:

        B_max = min(B, max(B/dp + e_dp · sqrt(B/dp), 1)),

    e_dp = E[max of dp standard normals] (:func:`expected_max_std_normal`: 2.07 at dp = 32). Why
    sqrt(B/dp) and not a binomial's sqrt(B/dp · (1 − 1/dp)): the multinomial counts are independent
    Poisson(B/dp) counts conditioned on their total, N_i ≈ B/dp + sqrt(B/dp)·(Z_i − Z̄) with Z_i independent
    standard normals, so max_i N_i − B/dp = sqrt(B/dp)·(max_i Z_i − Z̄), whose mean is e_dp·sqrt(B/dp) (the
    anti-correlation of the counts raises the maximum over that of independent binomials by 1/sqrt(1 − 1/dp):
    1.41x the spread at dp = 2, 1.02x at dp = 32). Check at dp = 2, where max(X, B − X) = B/2 + |X − B/2|:
    E = B/2 + sqrt(B/(2π)) = B/2 + e_2·sqrt(B/2), e_2 = 1/sqrt(π). The normal approximation is good from a
    few sequences per rank and leans slightly low (the binomial's right skew: a seeded draw of 4096 on 32 ranks
    gives a fullest rank of 152.0 on average, the formula 151.4); the fullest rank holds at least one whole
    request (its floor). The step costs of the ranks are close to linear in their counts, so the expected
    maximum is the mean step's. Only the step's work follows the fullest rank: the KV-capacity, running and
    CUDA-graph caps (serve/limits.py) stay at the mean rank's B/dp (the fullest rank reaches them first; not modelled).
    With CUDA-graph padding (serve/limits.graph_padded) every rank is first padded at the mean rank's count n to the
    captured size g >= n and the spread is then taken over g, dummies included, where an engine pads every rank to
    the size above the fullest rank's real count: a named approximation (its error is under a captured-size step;
    no validation row sets both, the random-dispatch SGLang 0.5.5.post2 rows price no graph sizes).

    >>> busiest_rank_decode([64.0], 8).tolist()
    [8.0]
    >>> round(float(busiest_rank_decode([4096.0], 32, "random")[0]), 1)  # 128 + 2.070·sqrt(128)
    151.4
    """
    b = np.atleast_1d(np.asarray(decode_seqs, dtype=float))
    if type(dp) is not np.ndarray and dp <= 1:
        return b
    mean = b / dp
    if dispatch != "random":  # balanced, and refill (every rank at its cap)
        return mean
    if type(dp) is np.ndarray:
        raise ValueError("per-column dp takes balanced dispatch only")
    spread = expected_max_std_normal(dp) * np.sqrt(mean)
    return np.minimum(b, np.maximum(mean + spread, 1.0))
