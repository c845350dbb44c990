"""scripts/refill_gate42.py: TensorRT-LLM's attention-DP context gate at full slots, per rank; expected values by hand.

A deterministic closed loop (one output length, no MTP) repeats a cycle of OSL steps: the prompt's step, then OSL − 1
decode steps, then the user's next request arrives for the following step. So a share 1/OSL of the steps carry
prompts, TTFT is the prompt step's time and TPOT the decode step's.
"""

from __future__ import annotations

import numpy as np
import pytest
from script_module import load_script

rg = load_script("refill_gate42")


def test_two_synchronised_ranks_release_together_by_hand():
    # dp 2, one slot each, OSL 5: both ranks start held at step 0 and stay in phase: every 5th step carries 2 prompts
    r = rg.simulate(2, 1, 5, 1.0, 0.0, 60, [1.0, 2.0, 3.0], steps=200, warm=100)
    assert (r["k"] > 0).mean() == pytest.approx(0.2)
    assert set(r["k"][r["k"] > 0].tolist()) == {2}
    assert r["ttft_s"] == pytest.approx(3.0) and r["tpot_s"] == pytest.approx(1.0)
    assert r["wait_steps"] == 0.0


def test_gate_releases_one_prompt_on_every_rank():
    # with the timeout out of reach a release happens only when every rank holds a prompt, and each rank runs one
    t = [0.05, 0.3, 0.32, 0.34, 0.36]
    gated = rg.simulate(4, 16, 200, 0.8, 0.6, 10**9, t, steps=6000, warm=1000)
    assert set(np.unique(gated["k"]).tolist()) == {0, 4}
    spread = rg.simulate(4, 16, 200, 0.8, 0.6, 10**9, t, gate=False, steps=6000, warm=1000)
    assert ((spread["k"] > 0) & (spread["k"] < 4)).any()  # without the gate the ranks' prompts do not line up
    assert gated["wait_steps"] > spread["wait_steps"]


def test_timeout_of_one_step_is_no_gate():
    # the count reaches 1 at the first iteration any rank lacks a prompt, so every step releases what is held
    t = [0.05, 0.3, 0.32, 0.34, 0.36]
    a = rg.simulate(4, 8, 100, 0.8, 0.6, 1, t, steps=3000, warm=500, seed=3)
    b = rg.simulate(4, 8, 100, 0.8, 0.6, 60, t, gate=False, steps=3000, warm=500, seed=3)
    np.testing.assert_array_equal(a["k"], b["k"])
    assert a["tpot_s"] == b["tpot_s"]


def test_closed_loop_conserves_prompts():
    # every request makes one prompt, so prompts per step = users / (steps a request holds its slot); with OSL 50,
    # no MTP the cycle is the wait, the prompt's step and 49 decode steps (the next request arrives for the step after)
    r = rg.simulate(2, 4, 50, 1.0, 0.0, 60, [0.1, 0.2, 0.3], steps=20000, warm=2000)
    assert r["k"].mean() == pytest.approx(8 / (50 + r["wait_steps"]), rel=0.02)


def test_twin_factor_median_and_filters():
    base = {
        "source": "aiconfigurator",
        "metric": "ttft_s",
        "system": "b200",
        "precision": "fp4",
        "stack": "s",
        "mode": "agg",
        "isl": "8192",
        "osl": "1024",
        "deployment": "agg attn TP4 DP1 · MoE",
        "concurrency": "8",
        "model": "deepseek-r1",
        "framework": "trtllm 1.1",
    }
    rows = [dict(base, measured=m, predicted="1.0") for m in ("1.2", "1.5", "1.4")]
    rows.append(dict(base, measured="9.0", predicted="1.0", concurrency="64"))  # above C 16: left out
    rows.append(dict(base, measured="9.0", predicted="1.0", deployment="agg attn TP1 DP4 · MoE"))  # attention DP
    assert rg.twin_factor(rows, "b200", "fp4", "s", "8192") == (pytest.approx(1.4), 3)
    assert rg.twin_factor(rows, "h200", "fp4", "s", "8192") == (1.0, 0)


def test_bad_input_names_the_fields():
    with pytest.raises(ValueError, match="step_s of length dp"):
        rg.simulate(4, 8, 100, 0.8, 0.6, 60, [0.1, 0.2])
    with pytest.raises(ValueError, match="dp, slots, osl must be >= 1"):
        rg.simulate(0, 8, 100, 0.8, 0.6, 60, [0.1])
