"""TensorRT-LLM's MLA KV hand-off fan-out (Efficiency.kv_handoff_fanout, serve/disagg.handoff_copies).

Expected values by hand: TensorRT-LLM's MLACacheFormatter sends the request's whole MLA latent to each decode
attention-TP rank from the prefill ranks of the request's attention group, max(1, t_d / t_p) copies per sender
(docs/gap_aic_ttft.md round 36, kvfan36); a DeepSeek-R1 token is 61 x (512 + 64) x 1 B = 35,136 B of FP8 KV.
"""

from dataclasses import replace

import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.serve.disagg import handoff_copies, kv_transfer_s
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY
from jalapeno.specs.formats import get_precision
from jalapeno.specs.catalog import load_model
from jalapeno.specs.stacks import _stack, get_stack

DEP4, DEP8, TEP8 = Layout(dp=4, ep=4), Layout(dp=8, ep=8), Layout(tp=8, ep=8)


@pytest.fixture(scope="module")
def trt():
    return load_pricer("b200", stack=get_stack("dynamo-trtllm"))


def test_copies_follow_the_formatter(trt):
    dsr1 = load_model("deepseek-r1")
    # attention-DP prefill (one rank holds the request) -> TEP8 decode: 8 whole copies from that rank
    assert handoff_copies(dsr1, trt, DEP4, TEP8) == 8.0
    # -> an attention-DP decode (attention TP 1 per group): one copy
    assert handoff_copies(dsr1, trt, DEP4, DEP8) == 1.0
    # TP2 -> TP4: each prefill rank serves two decode ranks (the engine's targetTest: ranks {0, 1} from rank 0)
    assert handoff_copies(dsr1, trt, Layout(tp=2), Layout(tp=4)) == 2.0
    # TP8 -> TP4: needSendCache keeps one sender of each pair, one copy each
    assert handoff_copies(dsr1, trt, Layout(tp=8), Layout(tp=4)) == 1.0
    # pipeline stages split the layers: not modelled, the even spread stays
    assert handoff_copies(dsr1, trt, Layout(tp=4, pp=2), TEP8) is None


def test_only_mla_on_the_switched_stacks(trt):
    assert handoff_copies(load_model("llama-3.3-70b"), trt, Layout(tp=4), Layout(tp=8)) is None  # GQA: split by head
    sgl = load_pricer("b200", stack=get_stack("sglang"))
    assert handoff_copies(load_model("deepseek-r1"), sgl, DEP4, TEP8) is None
    assert DEFAULT_EFFICIENCY.kv_handoff_fanout is False
    for name in ("trtllm", "dynamo-trtllm"):
        assert get_stack(name).kv_handoff_fanout is True and "mlaCacheFormatter" in get_stack(name).sources[
            "kv_handoff_fanout"]
    assert get_stack("sglang").kv_handoff_fanout is None and get_stack("vllm").kv_handoff_fanout is None


def test_dep4_to_tep8_time_by_hand(trt):
    """8k prompt, DEP4 -> TEP8 on B200 (12 chips: the pools span nodes, one 50 GB/s NIC per GPU):
    8 x 8192 x 35,136 B = 2.30 GB through one NIC at 50 GB/s x the scale-out fraction."""
    dsr1 = load_model("deepseek-r1")
    prec = get_precision("fp8")
    assert dsr1.kv_bytes_per_token(prec.kv_cache, 8192) == 35_136
    bw = 50e9 * trt.efficiency.scale_out_link_fraction
    t8 = kv_transfer_s(dsr1, trt, prec, 8192, 4, 8, 12, copies=8.0)
    assert t8 == pytest.approx(8 * 8192 * 35_136 / bw, rel=0.03)
    # the even spread it replaces: one copy over min(4, 8) lanes, 32x fewer bytes per link
    t_even = kv_transfer_s(dsr1, trt, prec, 8192, 4, 8, 12)
    assert t_even == pytest.approx(8192 * 35_136 / 4 / bw, rel=0.10)
    assert 25 < t8 / t_even <= 32


def test_bad_switch_value_names_the_field():
    with pytest.raises(SpecError, match="kv_handoff_fanout: must be true or false"):
        DEFAULT_EFFICIENCY.with_overrides({"kv_handoff_fanout": 1})
    with pytest.raises(SpecError, match="stack x.kv_handoff_fanout: must be true or false"):
        _stack({"name": "x", "label": "x", "source": "s", "kv_handoff_fanout": "yes"}, 0, {})
    assert replace(DEFAULT_EFFICIENCY, kv_handoff_fanout=True).kv_handoff_fanout
