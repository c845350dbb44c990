"""scripts/mtp_step_split.py: CUDA-graph padding and the request-weighted step of randomly spread users."""

from __future__ import annotations

import pytest
from script_module import load_script

split = load_script("mtp_step_split")


def test_graph_padding_follows_the_recipe_list():
    # the recipe captures 1-5, 8-10, 16-18, 29-32: 6 -> 8, 11 -> 16, 19 -> 29; 18 runs as itself
    assert [split.graph_padded(m) for m in (3, 6, 11, 18, 19, 28)] == [3, 8, 16, 18, 29, 29]
    # above the largest captured size the batch runs eagerly, unpadded
    assert split.graph_padded(40) == 40


def test_graph_padding_bad_input_is_named():
    with pytest.raises(ValueError, match="m = 0"):
        split.graph_padded(0)
    with pytest.raises(ValueError, match="sizes is empty"):
        split.graph_padded(3, ())


def test_per_user_step_by_hand():
    # 2 users on 2 workers: a worker holds 0, 1 or 2 of them with P = 1/4, 1/2, 1/4.
    # step(m) = m: sum P*m*step = 1/2*1*1 + 1/4*2*2 = 1.5 over sum P*m = 1/2 + 1/2 = 1.0 -> 1.5
    assert split.per_user_step(lambda m: float(m), 2, 2, cap=8) == pytest.approx(1.5)
    # captured sizes (1, 4): a worker with 2 runs the step of 4: 1/2*1*1 + 1/4*2*4 = 2.5 over 1.0
    assert split.per_user_step(lambda m: float(m), 2, 2, cap=8, sizes=(1, 4)) == pytest.approx(2.5)
    # one worker capped at 1: one user is served at step 1, the other waits and is not counted
    assert split.per_user_step(lambda m: float(m), 2, 1, cap=1) == pytest.approx(1.0)


def test_per_user_step_bad_input_is_named():
    with pytest.raises(ValueError, match="workers = 0"):
        split.per_user_step(lambda m: 1.0, 4, 0, cap=4)
