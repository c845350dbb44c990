"""The shared expert on vLLM's auxiliary CUDA stream (cost/shared_stream.py; docs/gap_aic_itl.md round 26).

Expected values are computed here from the step's own op rows by the rule written out by hand
(hidden = min(Σ_shared (t_op − memory_op), t_routed) at <= 256 tokens), and from worked numbers;
the tests fail if the step stops hiding, hides the shared expert's bytes, hides more than the routed
experts last, or touches a stack or model that has no aux stream or no shared expert.
"""

from __future__ import annotations

import numpy as np
import pytest

import jalapeno.cost.shared_stream as ss
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision


def _step(model="kimi-k2.5", stack="vllm+ar_rms", seqs=4, system="b300", tp=8, ep=1, dp=1, prompt=0.0):
    return step_cost(load_model(model), load_pricer(system, stack=stack), Layout(tp=tp, ep=ep, dp=dp),
                     get_precision("fp4" if model != "qwen3-235b-a22b" else "fp8"),
                     Batch.make(decode_seqs=seqs, decode_ctx=1500, prefill_tokens=prompt,
                                prefill_seqs=1.0 if prompt else 0.0))


def _by_hand(sc) -> float:
    """min(Σ_shared max(time − memory, 0), time of moe.experts) from the step's op rows, seconds."""
    rows = sc.op_rows()
    beyond = sum(max(r["time_s"] - r["memory_s"], 0.0) for r in rows if r["op"].startswith("moe.shared_expert."))
    routed = sum(r["time_s"] for r in rows if r["op"] == "moe.experts")
    return min(beyond, routed)


def test_vllm_step_hides_the_shared_expert_beyond_its_bytes(monkeypatch):
    on = _step()
    monkeypatch.setattr(ss, "SHARED_EXPERT_STREAMS", {})
    off = _step()
    hand = _by_hand(off)
    # Kimi K2.5 NVFP4 on B300, TP8, 4 sequences: the shared expert's gate_up / act / down take ~1.0 ms per
    # step (60 MoE layers), of which its 5.5 MB of FP8 weights per layer read in well under 0.1 ms
    assert 0.7e-3 < hand < 1.1e-3
    assert off.time_s(0) - on.time_s(0) == pytest.approx(hand, rel=1e-9)
    shared_bytes_s = sum(r["memory_s"] for r in off.op_rows() if r["op"].startswith("moe.shared_expert."))
    assert shared_bytes_s > 0 and hand < sum(r["time_s"] for r in off.op_rows()
                                             if r["op"].startswith("moe.shared_expert.")) - 0.99 * shared_bytes_s


def test_attribution_still_sums_to_the_step_and_keeps_hbm(monkeypatch):
    on = _step()
    assert sum(on.attribution_s[k][0] for k in on.attribution_s) == pytest.approx(on.time_s(0), rel=1e-9)
    monkeypatch.setattr(ss, "SHARED_EXPERT_STREAMS", {})
    off = _step()
    # the bytes are not hidden: the HBM share is untouched, the overhead + compute shares lose the hidden time
    assert on.attribution_s["hbm_bandwidth"][0] == pytest.approx(off.attribution_s["hbm_bandwidth"][0], rel=1e-12)
    lost = sum(off.attribution_s[k][0] - on.attribution_s[k][0] for k in ("compute", "overhead", "on_die_network"))
    assert lost == pytest.approx(_by_hand(off), rel=1e-9)


@pytest.mark.parametrize("stack", ["trtllm", "sglang", "vllm-rocm", "default"])
def test_other_stacks_do_not_overlap(stack, monkeypatch):
    base = _step(stack=stack).time_s(0)
    monkeypatch.setattr(ss, "SHARED_EXPERT_STREAMS", {})
    assert _step(stack=stack).time_s(0) == base


def test_above_256_tokens_and_without_a_shared_expert_nothing_moves(monkeypatch):
    big_on = _step(seqs=300)
    noshared_on = _step(model="qwen3-235b-a22b", stack="vllm", system="h200")
    monkeypatch.setattr(ss, "SHARED_EXPERT_STREAMS", {})
    assert _step(seqs=300).time_s(0) == big_on.time_s(0)
    assert _step(model="qwen3-235b-a22b", stack="vllm", system="h200").time_s(0) == noshared_on.time_s(0)


def test_hidden_is_capped_by_the_routed_experts():
    """Worked numbers (µs; compute, memory, overhead): shared ops (1, 3, 4) and (2, 1, 4) are 4 + 5 = 9 beyond
    their bytes; a routed block of (2, 3, 4) lasts 7, so only 7 is hidden; at 257 tokens nothing."""
    from types import SimpleNamespace

    from jalapeno.cost.roofline import OpTimes
    t = OpTimes.combine(np.array([[1e-6] * 2, [2e-6] * 2, [2e-6] * 2]), np.array([[3e-6] * 2, [1e-6] * 2, [3e-6] * 2]),
                        np.array([[4e-6] * 2] * 3))
    ops = SimpleNamespace(name=("moe.shared_expert.gate_up", "moe.shared_expert.down", "moe.experts"))
    on = ss.stream_on(ss.stream_rule("vllm"), np.array([256.0, 257.0]), np.zeros(2), False, 384, 1, 1)
    hid, se = ss.hidden_shared_s(ops, t, np.array([True] * 3), on)
    assert hid.tolist() == pytest.approx([7e-6, 0.0])
    assert se.tolist() == [True, True, False]


def _hidden(monkeypatch, **kw) -> tuple[float, float]:
    """(seconds the step hides with TensorRT-LLM's and SGLang's sourced rules switched on, as
    scripts/shared_stream_engines.py does; the same rule by hand on the step priced without any aux stream)."""
    with monkeypatch.context() as m:
        m.setattr(ss, "SHARED_EXPERT_STREAMS", {**ss.SHARED_EXPERT_STREAMS, **ss.UNPRICED_STREAMS})
        on = _step(**kw).time_s(0)
    with monkeypatch.context() as m:
        m.setattr(ss, "SHARED_EXPERT_STREAMS", {})
        off = _step(**kw)
    return off.time_s(0) - on, _by_hand(off)


def test_trtllm_hides_in_decode_steps_of_any_size_not_in_steps_with_prompt_rows(monkeypatch):
    """TensorRT-LLM overlaps only under CUDA-graph capture (generation-only steps), with no token threshold."""
    got, hand = _hidden(monkeypatch, stack="trtllm", system="gb200-nvl72", seqs=1, ep=8)
    assert hand > 0.3e-3 and got == pytest.approx(hand, rel=1e-9)
    got, hand = _hidden(monkeypatch, stack="trtllm", system="gb200-nvl72", seqs=2000, ep=8)
    assert hand > 0 and got == pytest.approx(hand, rel=1e-9)  # above vLLM's 256 and SGLang's 1024: still on
    got, _ = _hidden(monkeypatch, stack="trtllm", system="gb200-nvl72", seqs=4, ep=8, prompt=512.0)
    assert got == 0.0  # a mixed step runs eagerly: in series


def test_sglang_dual_stream_threshold_fusion_and_deepep(monkeypatch):
    """SGLang: <= 1024 rows; not with DeepEP (attention DP + EP); not for DeepSeek-R1 at EP 1, whose shared
    expert SGLang fuses into the routed MoE (256 routed + 1 shared); Kimi K2.5 (384 routed) at EP 1 is on."""
    got, hand = _hidden(monkeypatch, stack="sglang", seqs=4)
    assert hand > 0.3e-3 and got == pytest.approx(hand, rel=1e-9)
    assert _hidden(monkeypatch, stack="sglang", seqs=1100)[0] == 0.0
    r1 = dict(model="deepseek-r1", stack="sglang", system="b200", seqs=8)
    assert _hidden(monkeypatch, **r1)[0] == 0.0
    got, hand = _hidden(monkeypatch, **r1, ep=8)
    assert hand > 0 and got == pytest.approx(hand, rel=1e-9)
    assert _hidden(monkeypatch, **{**r1, "seqs": 64}, tp=1, dp=8, ep=8)[0] == 0.0
    assert _hidden(monkeypatch, stack="sglang-rocm", seqs=4)[0] == 0.0  # no alt_stream off CUDA
