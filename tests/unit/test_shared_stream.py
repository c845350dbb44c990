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


def _step(model="kimi-k2.5", stack="vllm+ar_rms", seqs=4, system="b300", tp=8):
    return step_cost(load_model(model), load_pricer(system, stack=stack), Layout(tp=tp, ep=1),
                     get_precision("fp4" if model != "qwen3-235b-a22b" else "fp8"),
                     Batch.make(decode_seqs=seqs, decode_ctx=1500))


def _by_hand(sc) -> float:
    """min(Σ_shared max(time − memory, 0), time of moe.experts) from the step's op rows, seconds."""
    rows = sc.op_rows()
    beyond = sum(max(r["time_s"] - r["memory_s"], 0.0) for r in rows if r["op"].startswith("moe.shared_expert."))
    routed = sum(r["time_s"] for r in rows if r["op"] == "moe.experts")
    return min(beyond, routed)


def test_vllm_step_hides_the_shared_expert_beyond_its_bytes(monkeypatch):
    on = _step()
    monkeypatch.setattr(ss, "SHARED_EXPERT_STREAM_TOKENS", {})
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
    monkeypatch.setattr(ss, "SHARED_EXPERT_STREAM_TOKENS", {})
    off = _step()
    # the bytes are not hidden: the HBM share is untouched, the overhead + compute shares lose the hidden time
    assert on.attribution_s["hbm_bandwidth"][0] == pytest.approx(off.attribution_s["hbm_bandwidth"][0], rel=1e-12)
    lost = sum(off.attribution_s[k][0] - on.attribution_s[k][0] for k in ("compute", "overhead", "on_die_network"))
    assert lost == pytest.approx(_by_hand(off), rel=1e-9)


@pytest.mark.parametrize("stack", ["trtllm", "sglang", "vllm-rocm", "default"])
def test_other_stacks_do_not_overlap(stack, monkeypatch):
    base = _step(stack=stack).time_s(0)
    monkeypatch.setattr(ss, "SHARED_EXPERT_STREAM_TOKENS", {})
    assert _step(stack=stack).time_s(0) == base


def test_above_256_tokens_and_without_a_shared_expert_nothing_moves(monkeypatch):
    big_on = _step(seqs=300)
    noshared_on = _step(model="qwen3-235b-a22b", stack="vllm", system="h200")
    monkeypatch.setattr(ss, "SHARED_EXPERT_STREAM_TOKENS", {})
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
    hid, se = ss.hidden_shared_s(ops, t, np.array([True] * 3), np.array([256.0, 257.0]), 256)
    assert hid.tolist() == pytest.approx([7e-6, 0.0])
    assert se.tolist() == [True, True, False]
