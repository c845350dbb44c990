"""The FP8 block-scale activation quantiser (cost/ops.FP8_BLOCK_ACT_QUANT_ON, shipped off; round 47).

Expected values by hand: TensorRT-LLM's FP8 block-scale linear runs a per-token 1x128 quantiser and then the
GEMM (two kernels), a BF16 or per-tensor FP8 linear one GEMM, an NVFP4 linear its FP4 quantiser and the GEMM
(two). Kernel counts from DeepSeek-R1's config (61 layers, 3 dense, 58 MoE; one sequence, TP8 decode).
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost import ops as ops_mod
from jalapeno.specs.formats import FORMATS


@pytest.mark.parametrize("on", [False, True])
def test_act_quant_kernels_by_weight_format(monkeypatch, on):
    monkeypatch.setattr(ops_mod, "FP8_BLOCK_ACT_QUANT_ON", on)
    assert ops_mod.act_quant_kernels(FORMATS["nvfp4"], "fp4") == 1.0
    assert ops_mod.act_quant_kernels(FORMATS["fp8"], "fp8") == (1.0 if on else 0.0)  # 128x128 blocks
    assert ops_mod.act_quant_kernels(FORMATS["fp8_e4m3"], "fp8") == 0.0  # per-tensor: no per-token quantiser
    assert ops_mod.act_quant_kernels(FORMATS["fp8"], "bf16") == 0.0  # run in BF16: no FP8 activations
    assert ops_mod.act_quant_kernels(FORMATS["bf16"], "bf16") == 0.0


def _kernels(precision: str) -> dict[str, float]:
    from jalapeno.cost.step import Batch
    from jalapeno.deploy.layout import Layout
    from jalapeno.specs.catalog import load_model, load_system
    from jalapeno.specs.efficiency import Efficiency
    from jalapeno.specs.formats import get_precision

    b = Batch(
        decode_seqs=np.array([1.0]),
        decode_ctx=np.array([1000.0]),
        prefill_tokens=np.array([0.0]),
        prefill_seqs=np.array([0.0]),
        prefill_ctx=np.array([0.0]),
    )
    ops, _ = ops_mod.build_step_ops(
        load_model("deepseek-r1"),
        load_system("b200").chip,
        Layout(tp=8, ep=8),
        get_precision(precision),
        b,
        Efficiency(),
    )
    return {n: float(k) for n, k in zip(ops.name, ops.kernels)}


def test_switch_doubles_the_fp8_block_linears_and_leaves_the_rest(monkeypatch):
    off = _kernels("fp8")
    monkeypatch.setattr(ops_mod, "FP8_BLOCK_ACT_QUANT_ON", True)
    on = _kernels("fp8")
    for name in ("attn.qkv_a_proj", "attn.q_b_proj", "attn.o_proj"):  # every layer: 61 -> 122
        assert (off[name], on[name]) == (61.0, 122.0)
    for name in ("moe.shared_expert.gate_up", "moe.shared_expert.down"):  # MoE layers: 58 -> 116
        assert (off[name], on[name]) == (58.0, 116.0)
    for name in ("dense_ffn.gate_up", "dense_ffn.down"):  # dense layers: 3 -> 6
        assert (off[name], on[name]) == (3.0, 6.0)
    assert on["moe.experts"] == off["moe.experts"]  # the MoE block quantises inside (not a linear here)
    assert on["lm_head"] == off["lm_head"]  # BF16 head
