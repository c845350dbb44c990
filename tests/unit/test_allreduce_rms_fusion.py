"""vLLM's all-reduce + add + RMSNorm fusion (pass_config.fuse_allreduce_rms): cost/allreduce_rms.py,
cost/ops.py, specs/stacks.py, fit/aic_rows.py.

Expected values are computed here by hand: the token limits from vLLM's per-device, per-TP-size
table (MiB per rank) and Kimi K2.5's hidden size (config.json 7168, BF16: 14,336 bytes per token),
and the fused step as the unfused one less exactly its elementwise op (the only op the fusion removes).
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.allreduce_rms import fused_max_tokens
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.aic_row_engine import row_allreduce_rms_fusion
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import get_stack

KIMI_TOKEN_BYTES = 7168 * 2  # hidden_size x BF16


@pytest.mark.parametrize(
    ("system", "tp", "mib"),
    [
        ("b200", 8, 1.0),
        ("b200", 4, 32.0),
        ("b300", 8, 4.0),
        ("h200", 8, 0.5),
        ("h200", 4, 2.0),
        ("gb200-nvl72", 2, 64.0),
    ],
)
def test_token_limit_by_hand(system, tp, mib):
    chip = load_system(system).chip.name
    assert fused_max_tokens(chip, tp, 7168) == int(mib * 1024 * 1024) // KIMI_TOKEN_BYTES


def test_no_fusion_where_the_pass_is_off():
    assert fused_max_tokens(load_system("b200").chip.name, 1, 7168) == 0  # TP 1: no all-reduce
    assert fused_max_tokens(load_system("b200").chip.name, 6, 7168) == 0  # TP size not in vLLM's table
    assert fused_max_tokens(load_system("mi355x").chip.name, 8, 7168) == 0  # not a CUDA device


def _decode(stack: str, seqs, layout: Layout = Layout(tp=8)):
    pr = load_pricer("b200", stack=get_stack(stack))
    return step_cost(
        load_model("kimi-k2.5"),
        pr,
        layout,
        get_precision("int4"),
        Batch.make(decode_seqs=np.asarray(seqs, dtype=float), decode_ctx=2048.0),
    )


def _op_time(c, i: int, name: str) -> float:
    return next(r["time_s"] for r in c.op_rows(i) if r["op"] == name)


def test_fused_step_drops_exactly_the_norm_kernels():
    # B200 TP8: 73 tokens fused (1 MiB // 14,336 B), 74 not
    off, on = _decode("vllm", [32, 73, 74]), _decode("vllm+ar_rms", [32, 73, 74])
    for i in (0, 1):
        norms = _op_time(off, i, "layer.elementwise")
        assert norms > 0 and _op_time(on, i, "layer.elementwise") == 0.0
        assert float(off.step_time_s[i] - on.step_time_s[i]) == pytest.approx(norms, rel=1e-9)
    assert float(on.step_time_s[2]) == pytest.approx(float(off.step_time_s[2]), rel=1e-12)


def test_attention_dp_layout_is_not_fused():
    layout = Layout(tp=1, dp=8, ep=8)
    off, on = _decode("vllm", [32], layout), _decode("vllm+ar_rms", [32], layout)
    assert float(on.step_time_s[0]) == float(off.step_time_s[0])


def test_stack_switch_and_bad_input():
    s = get_stack("vllm+ar_rms")
    assert (s.name, s.allreduce_rms_fusion) == ("vllm+ar_rms", True)
    assert get_stack("vllm").allreduce_rms_fusion is None
    with pytest.raises(SpecError, match="allreduce_rms_fusion.*must be True or False"):
        get_stack("vllm").with_allreduce_rms_fusion("yes")


def test_rows_flagged_only_where_the_launch_script_sets_it():
    kw = {"client": "inferencex-db"}
    assert row_allreduce_rms_fusion("vllm", "h200", "kimi-k2.5", "int4", "2026-03-02", **kw)[0]
    assert row_allreduce_rms_fusion("vllm", "b200", "gpt-oss-120b", "mxfp4", "2026-02-25", **kw)[0]
    # the MiniMax-M2.5 and H200 gpt-oss scripts never pass it; GB200 Kimi's recipes are not identified
    for args in (
        ("b200", "minimax-m2.5", "fp4"),
        ("h200", "gpt-oss-120b", "mxfp4"),
        ("gb200-nvl72", "kimi-k2.5", "fp4"),
    ):
        assert not row_allreduce_rms_fusion("vllm", *args, "2026-04-07", **kw)[0]
    assert not row_allreduce_rms_fusion("sglang", "b200", "kimi-k2.5", "fp4", "2026-04-07", **kw)[0]
    # B200 Kimi INT4's script dates from 2026-02-23: a run before it did not run it
    assert not row_allreduce_rms_fusion("vllm", "b200", "kimi-k2.5", "int4", "2026-02-22", **kw)[0]


def test_aiconfigurator_rows_carry_the_flag():
    pytest.importorskip("aiconfigurator_core")
    from jalapeno.fit.aic_rows import load_aiconfigurator

    points, _ = load_aiconfigurator()
    flagged = {(p.system, p.model) for p in points if p.allreduce_rms_fusion}
    assert flagged == {("b200", "kimi-k2.5"), ("b300", "kimi-k2.5"), ("h200", "kimi-k2.5"), ("b200", "gpt-oss-120b")}
    assert all(p.framework.startswith("vllm") for p in points if p.allreduce_rms_fusion)


def _r1_decode(stack, seqs, layout: Layout = Layout(tp=8, ep=8)):
    pr = load_pricer("b200", stack=stack)
    return step_cost(
        load_model("deepseek-r1"),
        pr,
        layout,
        get_precision("fp4"),
        Batch.make(decode_seqs=np.asarray(seqs, dtype=float), decode_ctx=2048.0),
    )


def test_tensorrt_llm_profiles_fuse_only_with_the_switch(monkeypatch):
    # TensorRT-LLM's decoder classes (DeepseekV3, Qwen3MoE, GptOss, Llama) fuse at attention TP unless an
    # environment variable turns it off (data/stacks.toml source); shipped off (specs/stacks.ENGINE_AR_RMS_ON)
    import jalapeno.specs.stacks as stacks_mod

    assert stacks_mod.ENGINE_AR_RMS_ON is False
    assert get_stack("trtllm").allreduce_rms_fusion is None
    monkeypatch.setattr(stacks_mod, "ENGINE_AR_RMS_ON", True)
    on = stacks_mod.build_stacks({})
    for name in ("trtllm", "dynamo-trtllm"):
        assert on[name].allreduce_rms_fusion is True
    assert on["vllm"].allreduce_rms_fusion is None  # vLLM's pass only where a launch script sets it


def test_tensorrt_llm_drops_the_norms_at_attention_tp_only():
    # DeepSeek-R1 h = 7,168 as Kimi's: B200 TP8 covers 1 MiB // 14,336 B = 73 tokens a step, 74 not
    assert fused_max_tokens(load_system("b200").chip.name, 8, 7168) == 73
    st = get_stack("trtllm").with_allreduce_rms_fusion(True)
    on, off = _r1_decode(st, [8, 73, 74]), _r1_decode(st.with_allreduce_rms_fusion(False), [8, 73, 74])
    for i in (0, 1):
        norms = _op_time(off, i, "layer.elementwise")
        assert norms > 0 and _op_time(on, i, "layer.elementwise") == 0.0
        assert float(off.step_time_s[i] - on.step_time_s[i]) == pytest.approx(norms, rel=1e-9)
    assert float(on.step_time_s[2]) == pytest.approx(float(off.step_time_s[2]), rel=1e-12)
    # attention DP: the MoE output comes back through the exchange, no all-reduce to fuse into
    dp = Layout(tp=1, dp=8, ep=8)
    assert float(_r1_decode(st, [8], dp).step_time_s[0]) == float(
        _r1_decode(st.with_allreduce_rms_fusion(False), [8], dp).step_time_s[0]
    )
