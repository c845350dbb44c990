"""TensorRT-LLM's attention-DP context balancing releases its held prompts on a clock of ``timeout_iters``
iterations (serve/adp_balance.adp_release_prompts, serve/analytic._chunk_step_load; docs/gap_large_batch_decode.md
"Round 36"), and a workload of measured lengths carries its own output-length spread (Workload.osl_std).

Expected values come from a direct simulation of the rule as ``_balance_adp_requests`` states it
(NVIDIA/TensorRT-LLM tensorrt_llm/_torch/pyexecutor/py_executor.py: a counter of iterations in which some rank
has no context request, reset only at a release; release when every rank has one or at the timeout) and from
closed forms worked by hand below, not from the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.serve.analytic import _chunk_step_load
from jalapeno.serve.batch_wait import bunched_arrivals_per_step
from jalapeno.serve.adp_balance import adp_release_prompts
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import LengthSpread, Workload


def _simulate_rule(a: float, dp: int, timeout: int, steps: int, seed: int = 0) -> tuple[float, float]:
    """(mean ranks carrying a prompt per release that carries any, share of steps that carry prompts) under
    the balancing rule: Poisson(a) prompts a step, dealt to distinct ranks (least-loaded dispatch)."""
    rng = np.random.default_rng(seed)
    held, count, sizes = 0, 0, []
    for _ in range(steps):
        held += int(rng.poisson(a))
        if held >= dp:  # every rank holds one: release (batching_wait_iters 0), counter reset; a step carries
            sizes.append(dp)  # at most one chunk a rank in the model (serve/analytic._chunk_step_load), so dp
            held, count = 0, 0
            continue
        count += 1  # some rank lacks a context request, whether or not any holds one
        if count >= timeout:
            if held:
                sizes.append(held)
            held, count = 0, 0
    return float(np.mean(sizes)), len(sizes) / steps


def _release_by_hand(x: float, dp: int) -> float:
    """E[min(N, dp) | N ≥ 1] for N ~ Poisson(x), summed term by term (k up to 600)."""
    pmf = [math.exp(k * math.log(x) - x - math.lgamma(k + 1)) for k in range(600)]
    return sum(min(k, dp) * p for k, p in enumerate(pmf)) / (1 - math.exp(-x))


# the last three at a·T ≈ dp (the attention-DP rows run T = 60), where round 36's min(dp, a·T/(1 − e^(−a·T))) was
# 6-22% off the rule (review36)
@pytest.mark.parametrize("a,dp,timeout", [(0.33, 8, 9), (0.05, 8, 60), (0.244, 8, 9), (8 / 60, 8, 60),
                                          (4 / 60, 4, 60), (6 / 60, 8, 60)])
def test_release_size_matches_the_simulated_rule(a, dp, timeout):
    size, share = _simulate_rule(a, dp, timeout, 400_000)
    got = float(adp_release_prompts([a], dp, timeout)[0])
    assert got == pytest.approx(size, rel=0.02)
    assert a / got == pytest.approx(share, rel=0.02)  # the same prompts, a per step, in fewer steps


def test_release_size_by_hand():
    # dp = 2, a·T = 1: P(N ≥ 1) = 1 − 1/e, P(N ≥ 2) = 1 − 2/e; (2 − 3/e)/(1 − 1/e) = 1.41802
    assert adp_release_prompts([1 / 9], 2, 9)[0] == pytest.approx((2 - 3 / math.e) / (1 - 1 / math.e), rel=1e-12)
    assert adp_release_prompts([1 / 9], 2, 9)[0] == pytest.approx(1.41802, abs=1e-5)
    # a·T = 0.33·9 = 2.97 ≪ dp = 8: near the Poisson mean given at least one, 2.97/(1 − e^−2.97) = 3.1306, less the
    # rounds that complete (P(N ≥ 8) = 0.0108): 3.1254
    got = adp_release_prompts([0.33], 8, 9)[0]
    assert got == pytest.approx(_release_by_hand(2.97, 8), rel=1e-9) and got == pytest.approx(3.1254, abs=1e-4)
    # a·T = 8 = dp: 6.886, not min(8, 8/(1 − e^−8)) = 8
    assert adp_release_prompts([8 / 60], 8, 60)[0] == pytest.approx(_release_by_hand(8.0, 8), rel=1e-9)
    assert adp_release_prompts([8 / 60], 8, 60)[0] == pytest.approx(6.886, abs=1e-3)
    # a·T = 150 ≫ dp: a round of dp completes before the timeout, dp
    assert adp_release_prompts([2.5], 8, 60)[0] == pytest.approx(8.0, rel=1e-12)
    # share of steps carrying prompts on the clock: 0.33/3.1254 = 0.10559, against a/dp = 0.04125 before round 36
    assert 0.33 / adp_release_prompts([0.33], 8, 9)[0] == pytest.approx(0.10559, abs=1e-5)


def test_osl_std_uniform_and_spread_by_hand():
    # uniform in [0.8·1024, 1024]: (1 − 0.8)·1024/√12 = 59.12
    assert Workload("w", 1024, 1024, 0.8).osl_std == pytest.approx(204.8 / math.sqrt(12), rel=1e-12)
    assert Workload("w", 1024, 1024, 1.0).osl_std == 0.0
    spread = LengthSpread("s", np.array([10.0, 10.0, 10.0]), np.array([2.0, 4.0, 6.0]))
    # population std of 2, 4, 6: √(8/3) = 1.633
    assert Workload("s", 10, 4, 1.0, spread=spread).osl_std == pytest.approx(math.sqrt(8 / 3), rel=1e-12)


def test_a_spread_does_not_read_as_fixed_lengths():
    # range_ratio 1.0 alone means everyone at once (C − 1 = 63 a step); a spread's std 1,024 tokens over
    # k̄ = 5.5 cycles: σ = √5.5·1024 = 2,401.5 steps, bunch 63/(2√π·2401.5) = 0.0074 < the mean 0.06
    assert bunched_arrivals_per_step(np.array([64.0]), np.array([0.06]), 1024, 1.0)[0] == 63.0
    got = bunched_arrivals_per_step(np.array([64.0]), np.array([0.06]), 1024, 1.0, osl_std=1024.0)[0]
    assert got == pytest.approx(0.06, rel=1e-12)


def _dep(timeout):
    return Deployment(get_precision("fp8"), Pool(Layout(tp=1, dp=8, ep=8)), max_running=512,
                      max_tokens_per_step=4096, budget_per="rank", adp_balance_timeout_iters=timeout)


def test_prompt_step_share_follows_the_clock():
    # a workload of measured lengths (no bunching): ISL 1,000 each, outputs 1,000-7,000 (mean 4,000)
    osl = np.linspace(1000.0, 7000.0, 61)
    wl = Workload("s", 1000, 4000, 1.0, spread=LengthSpread("s", np.full(61, 1000.0), osl))
    b, steps = np.array([1200.0]), 3999.0
    p, chunk, _, p_big, _ = _chunk_step_load(_dep(9), wl, b, steps)
    a = 1200.0 / 3999.0  # prompts a step: b/D
    assert p[0] == pytest.approx(a * 1000.0, rel=1e-12) and chunk == 1000.0
    # share of steps carrying prompts: a / E[min(N, 8) | N ≥ 1], N ~ Poisson(9a)
    assert p[0] / p_big[0] == pytest.approx(a / _release_by_hand(9 * a, 8), rel=1e-9)
    # a long timeout lets a round of dp prompts complete first: a/dp, as before round 36
    p, _, _, p_big, _ = _chunk_step_load(_dep(500), wl, b, steps)
    assert p[0] / p_big[0] == pytest.approx(a / 8, rel=1e-9)


def test_bad_timeout_is_one_clear_error():
    with pytest.raises(SpecError, match="adp_balance_timeout_iters"):
        _dep(0)
