"""serve/prebuilt_skip.py: the share of an attention-DP decode rank's iterations spent admitting transferred
requests (SGLang before PR #19568) and its TPOT factor. Expected values are independent: the omega constant
(W(1) = 0.5671432904097838, the root of u·e^u = 1), a Newton solve of u·e^u = x written here, and the small-x limit;
for the lockstep form in prefill waves (round 48) roots built backwards by hand at two ranks (one by one: L = e^{−1}/2;
one wave a step: L = 0.097757), its limits and the waves of a worked prefill pool."""

import math

import numpy as np

import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.serve import prebuilt_skip
from jalapeno.serve.prebuilt_skip import (
    applies,
    decode_tau_factor,
    lost_share,
    prefill_waves_per_step,
    skip_fraction,
    tpot_factor,
)
from jalapeno.specs.stacks import get_stack

OMEGA = 0.5671432904097838  # W(1), the omega constant


def _newton_w(x: float) -> float:
    """u with u·e^u = x by Newton's method (an independent route to 1 − P = W(x) / x)."""
    u = math.log1p(x)
    for _ in range(50):
        u -= (u * math.exp(u) - x) / (math.exp(u) * (1 + u))
    return u


def test_omega_constant():
    # x = 1: 1 − P = W(1) / 1
    assert float(skip_fraction(1, 1)) == pytest.approx(1 - OMEGA, abs=1e-12)
    assert float(tpot_factor(3, 3)) == pytest.approx(1 / OMEGA, abs=1e-10)


def test_mori_rows_against_newton():
    x = 160 / 1023
    expect = 1 - _newton_w(x) / x
    assert float(skip_fraction(160, 1023)) == pytest.approx(expect, abs=1e-12)
    assert 0.12 < expect < 0.13  # ~1 iteration in 8 admits a request at 160 a rank over 1,023 steps


def test_small_x_limit_and_zero():
    # P = 1 − e^{−x(1−P)} → P ≈ x / (1 + x) to second order for small x
    assert float(skip_fraction(1, 1000)) == pytest.approx(1e-3 / (1 + 1e-3), rel=1e-3)
    assert float(skip_fraction(0, 100)) == 0.0


def test_large_x_still_a_root():
    # past x = e the plain fixed-point iteration would diverge; the bisection still meets the equation
    x = 5.0
    p = float(skip_fraction(5, 1))
    assert p == pytest.approx(1 - math.exp(-x * (1 - p)), abs=1e-12)


@pytest.mark.parametrize("s, n, field", [(1, 0, "decode_steps"), (-1, 10, "seqs_per_rank")])
def test_bad_input_names_the_field(s, n, field):
    with pytest.raises(ValueError, match=field):
        skip_fraction(s, n)


E = math.e


def test_lost_share_two_ranks_one_by_one_by_hand():
    # D = 2, prompts one by one: K ~ Poisson(μ), E[K·1{K < 2}] = P(K = 1) = μ e^{−μ}; built backwards at μ = 1:
    # L = e^{−1}/2 = 0.18394, and μ = (b/n)(1 − L) gives b/n = 1/(1 − L) = 1.22540
    lost = 1 / (2 * E)
    assert float(lost_share(1 / (1 - lost), 1.0, 2, math.inf)) == pytest.approx(lost, abs=1e-11)
    assert float(lost_share(1000 / (1 - lost), 1000.0, 2, math.inf)) == pytest.approx(lost, abs=1e-11)  # b/n counts


def test_lost_share_two_ranks_in_waves_by_hand():
    # D = 2, waves at w = 1 a step of Poisson(m = 1) prompts (μ = w·m = 1): K = 1 needs exactly one prompt in all,
    # P(K = 1) = w·m·e^{−m}·exp(−w(1 − e^{−m})) = 0.36788 × 0.53146 = 0.19551 (Panjer's first term), so
    # L = 0.097757 and b/n = 1/(1 − L) = 1.10835
    p1 = 1 * 1 * math.exp(-1) * math.exp(-(1 - math.exp(-1)))
    assert p1 == pytest.approx(0.19551, abs=1e-5)
    lost = p1 / 2
    assert float(lost_share(1 / (1 - lost), 1.0, 2, 1.0)) == pytest.approx(lost, abs=1e-11)


def test_lost_share_limits():
    # many ranks, small rate: L = x(1 − L), x = b/(nD) (each prompt costs its rank one step): x = 0.01 → 1/101
    assert float(lost_share(80.0, 1000.0, 8, math.inf)) == pytest.approx(0.01 / 1.01, rel=2e-3)
    # waves far larger than D: every rank admits at once, no forward, nothing lost
    assert float(lost_share(8000.0, 100.0, 8, 0.01)) < 1e-3
    # one rank: an admitting rank has no forward either
    assert float(lost_share(1000.0, 100.0, 1, math.inf)) == 0.0
    assert float(lost_share(0.0, 100.0, 8, 1.0)) == 0.0


@pytest.mark.parametrize("rate", [0.5, 2.0, 7.0])
def test_fewer_larger_waves_lose_less(rate):
    ls = [float(lost_share(rate, 1.0, 8, w)) for w in (0.2, 1.0, 5.0, math.inf)]
    assert ls == sorted(ls) and ls[0] < ls[-1]


def test_prefill_waves_by_hand():
    # 4 workers, each iterating every t0/(1 − ρ) = 0.04/0.5 = 0.08 s: 4 × 0.05/0.08 = 2.5 waves a 50 ms decode step
    assert float(prefill_waves_per_step(0.05, 4, 0.04, 0.5)) == pytest.approx(2.5, abs=1e-12)
    assert math.isinf(float(prefill_waves_per_step(0.05, 4, 0.0, 0.5)))  # no step time known: one by one


@pytest.mark.parametrize(
    "args, field",
    [
        ((1, 10, 8, 0.0), "waves_per_step"),
        ((1, 0, 8, 1.0), "decode_steps"),
        ((-1, 10, 8, 1.0), "batch"),
        ((1, 10, 0, 1.0), "dp"),
    ],
)
def test_lost_share_bad_input_names_the_field(args, field):
    with pytest.raises(ValueError, match=field):
        lost_share(*args)


def test_gate():
    assert applies(True, "skip", 8) and not applies(True, "skip", 1) and not applies(False, "skip", 8)
    assert float(decode_tau_factor(True, "skip", 8, 1280.0, 1023, 0.5)) == pytest.approx(
        1 / (1 - float(lost_share(1280.0, 1023, 8, 0.5)))
    )
    f = float(tpot_factor(160, 1023))
    assert float(decode_tau_factor(True, "skip", 8, 1280.0, 1023)) == pytest.approx(f)
    assert float(decode_tau_factor(False, "skip", 8, 1280.0, 1023)) == 1.0
    assert float(decode_tau_factor(True, "merge", 8, 1280.0, 1023)) == 1.0
    assert float(decode_tau_factor(True, "skip", 1, 1280.0, 1023)) == 1.0  # no attention DP: no lockstep idle step


def test_shipped_off():
    assert prebuilt_skip.PREBUILT_SKIP_ON is False


def test_waves_are_the_form():
    assert prebuilt_skip.PREBUILT_WAVES_ON is True


def test_stack_rules_by_release():
    # the boundary read from the PyPI wheels: 0.5.9 skips, 0.5.10rc0 (the next release) merges
    for stack in ("sglang", "sglang-rocm"):
        assert get_stack(f"{stack}@0.5.9").disagg_prebuilt == "skip"
        assert get_stack(f"{stack}@0.5.10rc0").disagg_prebuilt is None
        assert get_stack(f"{stack}@0.5.10").disagg_prebuilt is None
    assert get_stack("sglang-rocm@0.5.9").disagg_prebuilt == "skip"
    assert get_stack("sglang@0.5.8.post1").disagg_prebuilt == "skip"
    assert get_stack("sglang@0.5.12.post1").disagg_prebuilt is None  # the newest behaviour: merged
    assert load_pricer("mi355x", stack="sglang-rocm@0.5.9").efficiency.disagg_prebuilt == "skip"
    assert load_pricer("mi355x", stack="sglang-rocm").efficiency.disagg_prebuilt == "merge"


def test_disagg_token_time_is_the_fixed_point(monkeypatch):
    """serve/disagg._prebuilt_token_time: off (or a rank-less layout) the lockstep step itself; on, τ_t = τ / (1 − L)
    with L at the waves w = X·τ·(1 − ρ)/t0 that τ_t's own request rate sets, ρ = Y·b/(n·τ_t)·(prompt's step)/X."""
    from types import SimpleNamespace

    from jalapeno.serve import disagg

    pricer = SimpleNamespace(efficiency=SimpleNamespace(disagg_prebuilt="skip"))
    b, tau, n, xs, ys, t0, prompt_s = (
        np.array([[1280.0, 7000.0]]),
        np.array([[0.05, 0.08]]),
        1023.0,
        1.0,
        1.0,
        0.065,
        0.004,
    )
    assert np.array_equal(disagg._prebuilt_token_time(pricer, 8, b, tau, n, xs, ys, t0, prompt_s), tau)  # shipped off
    monkeypatch.setattr(prebuilt_skip, "PREBUILT_SKIP_ON", True)
    assert np.array_equal(
        disagg._prebuilt_token_time(pricer, 1, b, tau, n, xs, ys, t0, prompt_s), tau
    )  # no attention DP
    tau_t = disagg._prebuilt_token_time(pricer, 8, b, tau, n, xs, ys, t0, prompt_s)
    rho = ys * b / (n * tau_t) * prompt_s / xs
    waves = xs * tau * (1 - rho) / t0
    np.testing.assert_allclose(tau_t, tau / (1 - lost_share(b, n, 8, waves)), rtol=1e-6)
    assert np.all(tau_t > tau)
