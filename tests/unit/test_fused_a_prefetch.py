"""TensorRT-LLM's BF16 fused-A GEMM hides the MoE all-reduce before it (cost/ops.fused_a_cover, round 49, shipped off).

By hand from the source: TensorRT-LLM runs DeepSeek's fused q_a + kv_a projection (kv_a_proj_with_mqa, 7168 -> 2112)
in ``dsv3_fused_a_gemm_op`` when its weight is unquantised and 1 <= tokens <= 16, prefetching its weights while the
all-reduce before it runs (modeling_deepseekv3.py DeepseekV3Linear.apply_linear; tech blog 1): the all-reduce is hidden
(hidden_stages inf) at 1-16 tokens a rank and serial above (hidden_stages 1, which exposes it whole:
max(0, t - t_op) + min(t, t_op) / 1 = t).
"""

from dataclasses import replace

import numpy as np
import pytest

from jalapeno.cost import ops as ops_mod
from jalapeno.cost.batch import Batch
from jalapeno.cost.ops import build_step_ops, fused_a_cover
from jalapeno.cost.optable import CollectiveTable, OpTable
from jalapeno.cost.overlap import exposed_coll_s
from jalapeno.cost.roofline import OpTimes
from jalapeno.deploy.layout import Layout
from jalapeno.specs import fp4_checkpoint as fc
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import get_stack


def test_shipped_off_and_set_by_the_trtllm_profiles_only():
    assert ops_mod.FUSED_A_PREFETCH_ON is False
    for name in ("trtllm", "dynamo-trtllm"):
        assert get_stack(name).fused_a_prefetch is True
    for name in ("sglang", "vllm"):
        assert not get_stack(name).fused_a_prefetch


def _moe_all_reduce(monkeypatch, seqs, precision="fp4", ckpt=True, layout=Layout(tp=8, ep=8), on=True):
    monkeypatch.setattr(ops_mod, "FUSED_A_PREFETCH_ON", on)
    monkeypatch.setattr(fc, "FP4_CHECKPOINT_FORMATS_ON", ckpt)
    model, system = load_model("deepseek-r1"), load_system("gb300-nvl72")
    batch = Batch.make(decode_seqs=[float(s) for s in seqs], decode_ctx=[1536.0] * len(seqs))
    _, colls = build_step_ops(
        model, system.chip, layout, get_precision(precision), batch, Efficiency(fused_a_prefetch=True)
    )
    j = colls.name.index("moe.all_reduce")
    return (colls.hidden_under[j] if colls.hidden_under else ""), (
        colls.hidden_stages[j] if colls.hidden_stages is not None and len(colls.hidden_stages) else None
    )


def test_hidden_at_one_to_sixteen_tokens_a_rank(monkeypatch):
    under, stages = _moe_all_reduce(monkeypatch, [1, 16, 17, 64])
    assert under == "attn.qkv_a_proj"
    assert stages.tolist() == [np.inf, np.inf, 1.0, 1.0]  # attention TP: every rank runs the whole batch's tokens


@pytest.mark.parametrize(
    ("kw", "why"),
    [
        ({"on": False}, "switch off"),
        ({"ckpt": False}, "FP8 block-scale attention: the kernel needs BF16 weights"),
        ({"precision": "fp8"}, "FP8 checkpoint"),
    ],
)
def test_not_where_the_kernel_does_not_run(monkeypatch, kw, why):
    under, _ = _moe_all_reduce(monkeypatch, [1], **kw)
    assert under == "", why


def test_the_profile_flag_gates_it(monkeypatch):
    monkeypatch.setattr(ops_mod, "FUSED_A_PREFETCH_ON", True)
    monkeypatch.setattr(fc, "FP4_CHECKPOINT_FORMATS_ON", True)
    model = load_model("deepseek-r1")
    p = fc.checkpoint_precision(model.name, get_precision("fp4"))
    assert fused_a_cover(Efficiency(), model, p, 8, 1, np.array([1.0])) == {}
    assert fused_a_cover(Efficiency(fused_a_prefetch=True), model, p, 8, 1, np.array([1.0]))
    # attention DP (no all-reduce before it) or TP 1: nothing to hide
    assert fused_a_cover(Efficiency(fused_a_prefetch=True), model, p, 8, 2, np.array([1.0])) == {}
    assert fused_a_cover(Efficiency(fused_a_prefetch=True), model, p, 1, 1, np.array([1.0])) == {}
    assert (
        fused_a_cover(
            replace(Efficiency(), fused_a_prefetch=True),
            load_model("llama-3.3-70b"),
            get_precision("bf16"),
            8,
            1,
            np.array([1.0]),
        )
        == {}
    )  # GQA: no fused-A projection


def test_exposed_all_reduce_by_hand():
    # a 10 µs all-reduce under a 7 µs fused-A GEMM: 3 µs shows where hidden (inf), all 10 where serial (1)
    ops = OpTable(
        name=("attn.qkv_a_proj",),
        kind=("gemm",),
        fmt=("bf16",),
        per_stage=np.array([True]),
        flop=np.zeros((1, 2)),
        weight_bytes=np.zeros((1, 2)),
        kv_bytes=np.zeros((1, 2)),
        act_bytes=np.zeros((1, 2)),
        rows=np.ones((1, 2)),
        kernels=np.ones(1),
    )
    colls = CollectiveTable(
        name=("moe.all_reduce",),
        kind=("all_reduce",),
        group=(8,),
        per_stage=np.array([True]),
        bytes=np.zeros((1, 2)),
        calls=np.ones(1),
        hidden_under=("attn.qkv_a_proj",),
        hidden_stages=np.array([[np.inf, 1.0]]),
    )
    times = OpTimes(*[np.full((1, 2), 7e-6)] * 4)  # compute, memory, overhead, time: the op takes 7 µs
    got = exposed_coll_s(np.full((1, 2), 10e-6), colls, ops, times)
    assert got[0].tolist() == pytest.approx([3e-6, 10e-6])
