"""scripts/aic_ttft_lag_steps.py: the lag in decode steps and the InferenceX TRT-LLM token budget, by hand."""

from __future__ import annotations

import numpy as np
import pytest
from script_module import load_script

lag = load_script("aic_ttft_lag_steps")


def test_lag_steps_by_hand():
    # 0.40 s measured over a 0.22 s steady TTFT = 180 ms; 12 ms per token without MTP -> 15 steps
    assert lag.lag_steps(0.40, 0.22, 0.012) == pytest.approx(15.0)
    # MTP3 at 0.75: a = 1 + 0.75 + 0.5625 + 0.421875 = 2.734375 tokens per step; 7.5 ms per token -> 20.5 ms steps
    a = 1 + 0.75 + 0.75**2 + 0.75**3
    assert lag.lag_steps(0.313, 0.137, 0.0075, a) == pytest.approx(0.176 / (0.0075 * 2.734375))
    # below the steady state the lag is negative
    got = lag.lag_steps(np.array([0.10, 0.30]), np.array([0.20, 0.20]), np.array([0.01, 0.02]))
    assert got.tolist() == pytest.approx([-10.0, 5.0])


def test_lag_steps_names_the_field():
    with pytest.raises(ValueError, match="tpot_s: the decode step needs a positive TPOT"):
        lag.lag_steps(0.4, 0.2, 0.0)
    with pytest.raises(ValueError, match="tokens_per_step: a step emits at least one token"):
        lag.lag_steps(0.4, 0.2, 0.01, 0.5)


def test_script_max_num_tokens_as_the_launch_scripts_compute_it():
    # MTP3, CONC 4, ISL 1024: (4·4 + 1024 + 64 + 63) // 64 · 64 = 1167 // 64 · 64 = 18 · 64 = 1152
    assert lag.script_max_num_tokens(1024, 4, 3) == 1152
    # no MTP, CONC 256, ISL 8192: 256 + 8192 + 64 = 8512 = 133 · 64 exactly
    assert lag.script_max_num_tokens(8192, 256) == 8512
    # the 1.2.0rc6 non-MTP scripts' floor: max(1024 + 64 + 64 -> 1152, 8192)
    assert lag.script_max_num_tokens(1024, 64, 0, floor=8192) == 8192
    with pytest.raises(ValueError, match="isl, max_batch"):
        lag.script_max_num_tokens(0, 4)
    with pytest.raises(ValueError, match="draft_tokens"):
        lag.script_max_num_tokens(1024, 4, -1)


def test_whole_prompts_per_step():
    # 1152 tokens with 4·3 = 12 decode rows leave 1140: one 1024-token prompt (a second needs 2048)
    assert lag.whole_prompts_per_step(1152, 12, 1024) == 1
    # 8192 tokens with 63 rows leave 8129: seven whole 1024-token prompts
    assert lag.whole_prompts_per_step(8192, 63, 1024) == 7
    # a budget under one prompt still admits it (the engine's floor is one context request)
    assert lag.whole_prompts_per_step(8320, 600, 8192) == 1
    with pytest.raises(ValueError, match="longest_prompt"):
        lag.whole_prompts_per_step(8192, 0, 0)
