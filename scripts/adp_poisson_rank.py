#!/usr/bin/env python3
"""Measure TensorRT-LLM's exact attention-DP prompt assignment, E[⌈S/dp⌉] over Poisson steps, in place of the model's
max(n/dp, min(n, 1)) (cost/adp_rank.busiest_rank_prompts), without shipping it (docs/gap_aic_ttft.md, round 31 adprank31).

TensorRT-LLM's ``_balance_requests_across_ranks`` (tensorrt_llm/_torch/pyexecutor/executor_request_queue.py, 1.1-1.2)
puts ⌈S/dp⌉ of a step's S equal new prompts on the busiest rank. The analytic paths price a mean step of n prompts;
with the step's prompt count S Poisson about n (arrivals during the previous step, no queue), the busiest rank's mean
prompts are E[⌈S/dp⌉] = Σ_k P(S = k)·⌈k/dp⌉. ``--table`` prints it against the model's f(n); ``--validate OUT.csv``
runs ``jalapeno validate --json -o OUT.csv`` with busiest_rank_prompts replaced by it (every attention-DP prefill of
every engine and path, the simulator's integer steps included: an upper bound of the change's reach) for
comparison with a plain run (compare the two tables per source × system × metric).
Run: python scripts/adp_poisson_rank.py [--table] [--validate OUT.csv | --run "predict ..."]
"""

from __future__ import annotations

import argparse
import shlex

import numpy as np
from scipy.stats import poisson

from jalapeno.cost.adp_rank import busiest_rank_prompts


def expected_busiest_rank(mean_prompts, dp) -> np.ndarray:
    """E[⌈S/dp⌉] for S ~ Poisson(``mean_prompts``), arrays (N,); ``dp`` an int or (N,). Means above 200·dp take the
    asymptote n/dp + (dp − 1)/(2·dp) (the fractional part of S/dp then uniform over its dp values).

    >>> round(float(expected_busiest_rank([1.0], 4)[0]), 4)  # e^-1(1 + 1/2 + 1/6 + 1/24) + 2·P(5 <= S <= 8) + ...
    0.6358
    """
    mu = np.atleast_1d(np.asarray(mean_prompts, dtype=float))
    d = np.broadcast_to(np.asarray(dp, dtype=float), mu.shape)
    if (mu < 0).any() or (d < 1).any():
        raise ValueError("mean_prompts must be >= 0 and dp >= 1; fix: pass a step's mean prompt count and a DP degree")
    out = mu / d + (d - 1.0) / (2.0 * d)
    small = mu <= 200.0 * d
    if small.any():
        m, dd = mu[small], d[small]
        k = np.arange(int(np.max(m + 12.0 * np.sqrt(m + 1.0) + 20.0)) + 1, dtype=float)
        out[small] = (poisson.pmf(k[None, :], m[:, None]) * np.ceil(k[None, :] / dd[:, None])).sum(axis=1)
    return out


def model_busiest_rank(mean_prompts, dp) -> np.ndarray:
    """The model's busiest-rank prompts, max(n/dp, min(n, 1)): cost/adp_rank.busiest_rank_prompts itself (a copy here
    could drift from the model it stands for), bound at import, before ``run_with_poisson`` replaces the module's name."""
    return busiest_rank_prompts(mean_prompts, dp)


def table(dps=(2, 4, 8, 16), means=(0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)) -> None:
    """Engine (Poisson steps) over model busiest-rank prompts at each mean step and DP degree."""
    print("mean prompts a step:", "  ".join(f"{m:6g}" for m in means))
    for dp in dps:
        r = expected_busiest_rank(means, dp) / model_busiest_rank(means, dp)
        print(f"dp {dp:2d} engine/model:   ", "  ".join(f"{x:6.3f}" for x in r))


def run_with_poisson(argv: list[str]) -> None:
    """The ``jalapeno`` command line ``argv`` with cost/adp_rank.busiest_rank_prompts replaced by E[⌈S/dp⌉]."""
    import jalapeno.cost.adp_rank as adp
    from jalapeno.cli.app import main

    plain = adp.busiest_rank_prompts

    def poisson_rank(prompts, dp):
        if type(dp) is not np.ndarray and dp <= 1:
            return plain(prompts, dp)
        return expected_busiest_rank(prompts, dp)

    adp.busiest_rank_prompts = poisson_rank  # busiest_rank_prefill reads the module's name at call time
    main(argv)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", action="store_true", help="print E[ceil(S/dp)] / f(n) by mean step and dp")
    ap.add_argument("--validate", metavar="OUT.csv", help="run validate with the Poisson busiest rank into OUT.csv")
    ap.add_argument(
        "--run", metavar="ARGS", help="run any jalapeno command line (quoted) with the Poisson busiest rank"
    )
    a = ap.parse_args()
    if a.table or not (a.validate or a.run):
        table()
    if a.validate:
        run_with_poisson(["validate", "--json", "-o", a.validate])
    elif a.run:
        run_with_poisson(shlex.split(a.run))
