"""TensorRT-LLM 1.1.0rc2's per-prompt-token step cost (round 43, trt8k43): the term, its release rule, its switch.

Expected values are worked by hand from the rate and the token counts, not read from the code's output.
"""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import jalapeno.cost.step as step_mod
from jalapeno.cost.batch import Batch
from jalapeno.cost.step import prompt_token_s, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.specs.catalog import load_model
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import get_stack
from jalapeno.cost.pricer import load_pricer

RATE = 1.56e-5  # data/stacks.toml, the trtllm rule's value


def _script():
    path = Path(__file__).resolve().parents[2] / "scripts" / "trt_prompt_release43.py"
    spec = importlib.util.spec_from_file_location("trt_prompt_release43", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_rule_covers_1_1_0rc2_only():
    assert get_stack("trtllm@1.1.0rc2.post2").prompt_step_s_per_token == pytest.approx(RATE)
    assert get_stack("dynamo-trtllm@1.1.0rc2.post2").prompt_step_s_per_token == pytest.approx(RATE)
    for v in ("1.0.0rc3", "1.2.0rc2", "1.2.0rc6.post2"):  # measured without it (the rule's source)
        assert get_stack(f"trtllm@{v}").prompt_step_s_per_token is None
    assert get_stack("trtllm@1.2.0rc6.post2").apply(DEFAULT_EFFICIENCY).prompt_step_s_per_token == 0.0


def test_term_by_hand():
    eff = replace(DEFAULT_EFFICIENCY, prompt_step_s_per_token=RATE)
    # one 8,192-token prompt at attention TP: 8192 x 15.6 us = 127.8 ms; at DP4 a rank holds a quarter
    assert prompt_token_s(eff, np.array([8192.0]), Layout(tp=8), on=True)[0] == pytest.approx(0.1277952)
    assert prompt_token_s(eff, np.array([8192.0]), Layout(dp=4, ep=4), on=True)[0] == pytest.approx(0.0319488)
    # a prefill-only step (a disaggregated prefill pool) pays nothing when the decode rows are given
    out = prompt_token_s(eff, np.array([8192.0, 8192.0]), Layout(tp=8), on=True, decode_seqs=np.array([0.0, 16.0]))
    assert out.tolist() == pytest.approx([0.0, 0.1277952])
    assert prompt_token_s(eff, np.array([8192.0]), Layout(tp=8), on=False)[0] == 0.0
    assert prompt_token_s(DEFAULT_EFFICIENCY, np.array([8192.0]), Layout(tp=8), on=True)[0] == 0.0


def test_switch_adds_the_term_to_a_mixed_step_only(monkeypatch):
    m, lay, prec = load_model("deepseek-r1"), Layout(tp=8, ep=8), get_precision("fp8")
    p = load_pricer("h200")
    p = p.with_efficiency(replace(p.efficiency, prompt_step_s_per_token=RATE))
    mixed = Batch.make(
        decode_seqs=np.array([16.0]),
        decode_ctx=4096.0,
        prefill_tokens=np.array([8192.0]),
        prefill_ctx=0.0,
        prefill_seqs=np.array([1.0]),
    )
    alone = Batch.make(
        decode_seqs=np.array([0.0]),
        decode_ctx=0.0,
        prefill_tokens=np.array([8192.0]),
        prefill_ctx=0.0,
        prefill_seqs=np.array([1.0]),
    )
    monkeypatch.setattr(step_mod, "PROMPT_TOKEN_STEP_ON", False)
    off = [step_cost(m, p, lay, prec, b).step_time_s[0] for b in (mixed, alone)]
    monkeypatch.setattr(step_mod, "PROMPT_TOKEN_STEP_ON", True)
    on = [step_cost(m, p, lay, prec, b) for b in (mixed, alone)]
    assert on[0].step_time_s[0] - off[0] == pytest.approx(8192 * RATE, rel=1e-9)
    assert on[0].attribution_s["overhead"][0] >= 8192 * RATE  # charged to overhead
    assert on[1].step_time_s[0] == pytest.approx(off[1])  # prefill-only: unchanged


def test_shipped_off():
    assert step_mod.PROMPT_TOKEN_STEP_ON is False


def test_script_factors_by_hand():
    mod = _script()
    # TPOT 12 ms measured, 10 model, 8 decode-only: the prompt share 2 ms must grow by 2 ms -> x2
    s_tpot, s_ttft = mod.implied_factors((0.012, 0.010), (0.5, 0.4), 0.008, 0.1)
    assert (s_tpot, s_ttft) == pytest.approx((2.0, 2.0))
    # min(2.0, 3.0) - 1 = 1 prompt step of 0.1 s over 8,192 tokens
    assert mod.excess_per_token((2.0, 3.0), 0.1, 8192) == pytest.approx(0.1 / 8192)
    assert mod.excess_per_token((0.8, 1.5), 0.1, 8192) == 0.0
    with pytest.raises(ValueError, match="tpot_dec"):
        mod.implied_factors((0.012, 0.010), (0.5, 0.4), 0.010, 0.1)
    with pytest.raises(ValueError, match="isl"):
        mod.excess_per_token((2.0, 2.0), 0.1, 0)
