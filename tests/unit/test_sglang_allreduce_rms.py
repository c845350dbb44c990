"""SGLang's default FlashInfer all-reduce + residual add + RMSNorm fusion (round 47, sglbatch47): the ``sglang``
rule of cost/allreduce_rms.py, its profile key and switch (specs/stacks.py, data/stacks.toml), its price
(cost/ops.py).

Expected values by hand: SGLang fuses steps of 1 .. 2,048 tokens (``FUSE_ALLREDUCE_MAX_BATCH_SIZE``,
sgl-project/sglang layers/communicator.py), where vLLM's table gives H200 TP8 0.5 MiB // (7,168 x 2 B) = 36
tokens; only the architectures SGLang lists (DeepSeek-V3/R1, Kimi K2.5, gpt-oss, Qwen3-MoE); only CUDA SM90 /
SM100-family chips at TP > 1; the fused step is the unfused one less exactly its elementwise op.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.allreduce_rms import fused_steps, rule_max_tokens
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import get_stack


def _chip(system: str) -> str:
    return load_system(system).chip.name


@pytest.mark.parametrize(
    ("rule", "model_type", "system", "tp", "expected"),
    [
        ("sglang", "deepseek_v3", "h200", 8, 2048),
        ("sglang", "kimi_k2", "b200", 4, 2048),
        ("sglang", "qwen3_moe", "h200", 4, 2048),
        ("sglang", "gpt_oss", "b300", 2, 2048),
        ("vllm", "deepseek_v3", "h200", 8, 524288 // 14336),  # 0.5 MiB // (7,168 x 2 B) = 36
        ("sglang", "llama", "h200", 8, 0),  # not an architecture SGLang lists
        ("sglang", "deepseek_v32", "b200", 8, 0),  # DeepseekV32ForCausalLM: not listed
        ("sglang", "deepseek_v3", "h200", 1, 0),  # no TP all-reduce
        ("sglang", "deepseek_v3", "mi355x", 8, 0),  # not SM90 / SM100
    ],
)
def test_rule_token_cap_by_hand(rule, model_type, system, tp, expected):
    assert rule_max_tokens(rule, model_type, _chip(system), tp, 7168) == expected


def test_sglang_rule_covers_decode_batches_vllm_does_not():
    t = np.array([4.0, 36.0, 37.0, 64.0, 2048.0, 2049.0])
    chip = _chip("h200")
    assert fused_steps(t, chip, 8, 7168).tolist() == [True, True, False, False, False, False]
    assert fused_steps(t, chip, 8, 7168, "sglang", "deepseek_v3").tolist() == [True, True, True, True, True, False]


def _r1_h200(stack, seqs, layout: Layout = Layout(tp=8)):
    return step_cost(
        load_model("deepseek-r1"),
        load_pricer("h200", stack=stack),
        layout,
        get_precision("fp8"),
        Batch.make(decode_seqs=np.asarray(seqs, dtype=float), decode_ctx=1024.0),
    )


def _norms(c, i: int) -> float:
    return next(r["time_s"] for r in c.op_rows(i) if r["op"] == "layer.elementwise")


def test_sglang_profile_drops_exactly_the_norms_up_to_2048_tokens():
    on_stack = get_stack("sglang+ar_rms")
    assert on_stack.allreduce_rms_rule == "sglang"
    seqs = [16, 64, 2049]
    on, off = _r1_h200(on_stack, seqs), _r1_h200(get_stack("sglang"), seqs)
    for i in (0, 1):  # 16 and 64 decode rows: fused (64 > vLLM's 36 on H200 TP8)
        assert _norms(off, i) > 0 and _norms(on, i) == 0.0
        assert float(off.step_time_s[i] - on.step_time_s[i]) == pytest.approx(_norms(off, i), rel=1e-9)
    assert float(on.step_time_s[2]) == pytest.approx(float(off.step_time_s[2]), rel=1e-12)
    dp = Layout(tp=1, dp=8, ep=8)  # attention DP: no all-reduce pattern to fuse
    assert float(_r1_h200(on_stack, [16], dp).step_time_s[0]) == float(
        _r1_h200(get_stack("sglang"), [16], dp).step_time_s[0]
    )


def test_shipped_off_and_read_with_the_switch(monkeypatch):
    import jalapeno.specs.stacks as stacks_mod

    assert stacks_mod.SGLANG_AR_RMS_ON is False
    assert get_stack("sglang").allreduce_rms_fusion is None
    monkeypatch.setattr(stacks_mod, "SGLANG_AR_RMS_ON", True)
    on = stacks_mod.build_stacks({})
    assert (on["sglang"].allreduce_rms_fusion, on["sglang"].allreduce_rms_rule) == (True, "sglang")
    assert on["trtllm"].allreduce_rms_fusion is None  # TensorRT-LLM's own switch stays off
    assert on["sglang-rocm"].allreduce_rms_fusion is None  # no FlashInfer fusion on ROCm


def test_bad_rule_names_the_field():
    from jalapeno.specs.efficiency import Efficiency

    with pytest.raises(SpecError, match="allreduce_rms_rule"):
        Efficiency().with_overrides({"allreduce_rms_rule": "trtllm"})
    assert Efficiency().with_overrides({"allreduce_rms_rule": "sglang"}).allreduce_rms_rule == "sglang"
