"""specs/fp4_checkpoint: NVIDIA's NVFP4 DeepSeek-R1 checkpoints at their own module formats (round 48, shipped off).
Off: the preset itself; on: attention input projections BF16, o_proj (round 49: the -v2 checkpoint), dense FFN and shared
experts NVFP4 on DeepSeek-R1 (and its MTP module) only, read by the step's op table and the resident weight bytes."""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.batch import Batch
from jalapeno.cost.ops import build_step_ops
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.memory_fit import weight_bytes_per_chip
from jalapeno.specs import fp4_checkpoint as fc
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import get_precision


def test_shipped_off_and_off_is_the_preset_itself():
    p = get_precision("fp4")
    assert fc.FP4_CHECKPOINT_FORMATS_ON is False
    assert fc.checkpoint_precision("deepseek-r1", p) is p
    assert fc.checkpoint_precision("deepseek-r1", p, on=False) is p


def test_on_sets_the_checkpoint_formats_and_keeps_the_rest():
    p = get_precision("fp4,kv=bf16")
    on = fc.checkpoint_precision("deepseek-r1", p, on=True)
    got = {m: (on.modules[m].weight.name, on.modules[m].compute) for m in on.modules}
    # Model-Optimizer #150 / the 0528-FP4 tensor listing / TensorRT-LLM blog 1: attention BF16, dense + shared NVFP4
    assert got["attention"] == ("bf16", "bf16")
    # the -v2 model card: "additionally quantizes the wo module in attention layers" (round 49)
    assert got["attention_out"] == ("nvfp4", "fp4")
    assert got["dense_ffn"] == ("nvfp4", "fp4")
    assert got["shared_experts"] == ("nvfp4", "fp4")
    assert got["routed_experts"] == ("nvfp4", "fp4")  # the preset's already
    assert on.name == "fp4,kv=bf16" and on.kv_cache.name == "bf16" and on.attention_compute == "fp8"
    assert fc.checkpoint_precision("deepseek-r1", p, on=True) is on  # one copy per precision


@pytest.mark.parametrize(
    ("model", "preset"),
    [("kimi-k2.5", "fp4"), ("deepseek-r1", "fp8"), ("deepseek-r1x", "fp4"), ("deepseek-v3.2", "fp4")],
)
def test_on_leaves_other_models_and_presets_alone(model, preset):
    p = get_precision(preset)
    assert fc.checkpoint_precision(model, p, on=True) is p


def test_the_mtp_module_is_the_models_checkpoint():
    on = fc.checkpoint_precision("deepseek-r1.mtp", get_precision("fp4"), on=True)
    assert on.modules["attention"].weight.name == "bf16"


def test_resident_weight_bytes_move_by_the_formats(monkeypatch):
    model = load_model("deepseek-r1")
    lay = Layout(tp=1)
    off = weight_bytes_per_chip(model, lay, get_precision("fp4"))
    monkeypatch.setattr(fc, "FP4_CHECKPOINT_FORMATS_ON", True)
    on = weight_bytes_per_chip(model, lay, get_precision("fp4"))
    # by hand from DeepSeek-R1's config.json (h 7168, q_lora 1536, kv_lora 512, rope 64, 128 heads of 128 + 64 / 128):
    # attention a layer = 7168·1536 + 1536 + 1536·24576 + 7168·576 + 512 + 512·32768 + 16384·7168 = 187,107,328, x 61;
    # dense FFN 3 x 3·7168·18432; shared experts 58 x 3·7168·2048
    # o_proj (16384·7168 a layer) is NVFP4 in the -v2 checkpoint (round 49), the rest of the attention BF16
    o_proj = 61 * 16384 * 7168
    attn = 61 * 187_107_328 - o_proj
    dense_shared = 3 * 3 * 7168 * 18432 + 58 * 3 * 7168 * 2048
    fp8_block = 1 + 4 / 16384  # 8 bits + one fp32 scale a 128x128 block
    nvfp4 = (4 + 8 / 16) / 8  # 4 bits + one e4m3 scale a 16
    expected = attn * (2 - fp8_block) - (dense_shared + o_proj) * (fp8_block - nvfp4)  # about +6.01 GB
    assert on - off == pytest.approx(expected, rel=1e-9)  # exact: the count above is the model's own shapes


def test_the_step_reads_bf16_attention_weights(monkeypatch):
    model, system = load_model("deepseek-r1"), load_system("b200")
    batch = Batch.make(decode_seqs=[1.0], decode_ctx=[1024.0])
    lay = Layout(tp=8)

    def attn_ops():
        ops, _ = build_step_ops(model, system.chip, lay, get_precision("fp4"), batch, Efficiency())
        return {
            n: (float(b[0]), f, float(np.ravel(k)[0]))
            for n, b, f, k in zip(ops.name, ops.weight_bytes, ops.fmt, ops.kernels)
            if n in ("attn.q_b_proj", "attn.o_proj")
        }

    off = attn_ops()
    monkeypatch.setattr(fc, "FP4_CHECKPOINT_FORMATS_ON", True)
    on = attn_ops()
    assert set(off) == set(on) == {"attn.q_b_proj", "attn.o_proj"}
    fp8_block = 1 + 4 / 16384
    # q_b (1536 x 24576 / 8 a layer): FP8 block-scale off, BF16 on: bytes x 2 / (1 + 4/16384), one kernel a layer
    assert on["attn.q_b_proj"][0] / off["attn.q_b_proj"][0] == pytest.approx(2 / fp8_block, rel=1e-6)
    assert on["attn.q_b_proj"][1:] == ("bf16", 61.0)
    # o_proj (16384·7168 / 8 a layer): NVFP4 on (4.5 bits an element), run in FP4 with its activation quantiser
    assert on["attn.o_proj"][0] / off["attn.o_proj"][0] == pytest.approx((4.5 / 8) / fp8_block, rel=1e-6)
    assert off["attn.o_proj"][1:] == ("fp8", 61.0)
    assert on["attn.o_proj"][1:] == ("fp4", 2 * 61.0)
