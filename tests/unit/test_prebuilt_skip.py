"""serve/prebuilt_skip.py: the share of an attention-DP decode rank's iterations spent admitting transferred
requests (SGLang before PR #19568) and its TPOT factor. Expected values are independent: the omega constant
(W(1) = 0.5671432904097838, the root of u·e^u = 1), a Newton solve of u·e^u = x written here, and the small-x limit."""

import math

import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.serve import prebuilt_skip
from jalapeno.serve.prebuilt_skip import decode_tau_factor, skip_fraction, tpot_factor
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


def test_gate():
    f = float(tpot_factor(160, 1023))
    assert float(decode_tau_factor(True, "skip", 8, 1280.0, 1023)) == pytest.approx(f)
    assert float(decode_tau_factor(False, "skip", 8, 1280.0, 1023)) == 1.0
    assert float(decode_tau_factor(True, "merge", 8, 1280.0, 1023)) == 1.0
    assert float(decode_tau_factor(True, "skip", 1, 1280.0, 1023)) == 1.0  # no attention DP: no lockstep idle step


def test_shipped_off():
    assert prebuilt_skip.PREBUILT_SKIP_ON is False


def test_stack_rules_by_release():
    assert get_stack("sglang-rocm@0.5.9").disagg_prebuilt == "skip"
    assert get_stack("sglang@0.5.8.post1").disagg_prebuilt == "skip"
    assert get_stack("sglang@0.5.12.post1").disagg_prebuilt is None  # the newest behaviour: merged
    assert load_pricer("mi355x", stack="sglang-rocm@0.5.9").efficiency.disagg_prebuilt == "skip"
    assert load_pricer("mi355x", stack="sglang-rocm").efficiency.disagg_prebuilt == "merge"
