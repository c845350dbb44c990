"""Round 53's leftovers (mend53) that break53 and newuser53 found: each case below fails on main 13043682."""

from __future__ import annotations

import numpy as np
import pytest

import jalapeno as jp
from jalapeno.cost.step import step_cost as internal_step_cost
from jalapeno.errors import JalapenoError


def _message(fn) -> str:
    with pytest.raises(JalapenoError) as e:
        fn()
    return str(e.value)


# ---- 1. jalapeno.step_cost refuses a step with no tokens, as the CLI step does -------------------------------------


def _args():
    return jp.load_model("deepseek-r1"), jp.load_pricer("jalapeno"), jp.Layout(dp=8, ep=8), jp.get_precision("fp8")


def test_public_step_cost_refuses_an_empty_batch_with_the_cli_message():
    msg = _message(lambda: jp.step_cost(*_args(), jp.Batch.make()))  # main: a 2.67 ms step, no word
    assert msg.startswith("batch: the step has no tokens: no decoding sequence and no prompt token")
    assert "Batch.make(decode_seqs=N" in msg and "prefill_tokens=N" in msg
    # a sweep with one empty point names it (0-based), not the whole batch
    msg = _message(lambda: jp.step_cost(*_args(), jp.Batch.make(decode_seqs=np.array([8.0, 0, 64]), decode_ctx=1024)))
    assert "no prompt token at point(s) 1." in msg


def test_public_step_cost_prices_a_batch_with_tokens_as_the_internal_one():
    b = jp.Batch.make(decode_seqs=np.array([8.0, 64]), decode_ctx=1024, prefill_tokens=np.array([0.0, 512]))
    assert np.array_equal(jp.step_cost(*_args(), b).step_time_s, internal_step_cost(*_args(), b).step_time_s)
    b = jp.Batch.make(prefill_tokens=2048)  # prefill only: tokens, so priced
    assert jp.step_cost(*_args(), b).time_s() > 0


def test_internal_step_cost_still_prices_empty_points_for_the_simulator():
    """serve/sim/step_time.py and the sweeps call cost/step.step_cost with points that hold no work."""
    sc = internal_step_cost(*_args(), jp.Batch.make(decode_seqs=np.array([0.0, 16]), decode_ctx=1024))
    assert sc.step_time_s.shape == (2,) and sc.step_time_s[0] > 0
