"""cost/shared_fusion.py: SGLang's fused shared expert (DeepSeek-R1's shared expert as a 257th routed expert).

Expected values by hand from DeepSeek-R1's config (hidden 7,168, expert width 2,048, 58 MoE layers, one shared
expert of the routed width) at MoE TP8, FP8 weights (1 byte): one expert's slice is 3 x 7,168 x 256 = 5,505,024 B a
layer, plus its block scales (one FP32 a 128 x 128 block: 1,344 B); 32 tokens more through it cost 2 x 32 x 3 x 7,168 x 256 FLOPs a layer."""

from __future__ import annotations

import pytest

import jalapeno.cost.shared_fusion as sf
from jalapeno.cli.system_opts import system_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import get_stack

# one expert's gate, up and down at MoE TP8: FP8 weights plus one FP32 scale per 128 x 128 block (3 x 56 x 2 x 4 B)
SLICE_BYTES = 3 * 7168 * 256 + 3 * (7168 // 128) * (256 // 128) * 4
MOE_LAYERS = 58


def _ops(monkeypatch, on: bool, system: str = "h200", stack: str = "sglang", ep: int = 1, seqs: int = 32) -> dict:
    monkeypatch.setattr(sf, "FUSED_SHARED_ON", on)
    model = load_model("deepseek-r1")
    pricer = system_pricer(system, "calibrated", [], get_stack(stack), "roofline")
    sc = step_cost(
        model,
        pricer,
        for_model(Layout(tp=8, dp=1, ep=ep), model),
        get_precision("fp8"),
        Batch.make(decode_seqs=seqs, decode_ctx=1536),
    )
    return {r["op"]: r for r in sc.op_rows(0)} | {"_step": float(sc.step_time_s[0])}


def test_fused_drops_shared_ops_and_adds_one_expert(monkeypatch):
    off, on = _ops(monkeypatch, False), _ops(monkeypatch, True)
    assert any(k.startswith("moe.shared_expert.") for k in off)
    assert not any(k.startswith("moe.shared_expert.") for k in on)
    dw = on["moe.experts"]["weight_bytes"] - off["moe.experts"]["weight_bytes"]
    assert dw == pytest.approx(MOE_LAYERS * SLICE_BYTES, rel=1e-9)
    df = on["moe.experts"]["flop"] - off["moe.experts"]["flop"]
    assert df == pytest.approx(MOE_LAYERS * 2 * 32 * 3 * 7168 * 256, rel=1e-9)
    # the shared expert's own GEMMs (serial-k floors and launches) outweigh one more expert's slice
    assert on["_step"] < off["_step"]


# Blackwell at EP 1: SGLang's SM100 auto MoE runner for DeepSeek-V3/R1 FP8 is FlashInfer TRT-LLM, which sets
# --disable-shared-experts-fusion (sglang server_args.py); B300 / GB300 (SM103) take the same SM100 branch
@pytest.mark.parametrize(
    "system, stack, ep",
    [
        ("b200", "sglang", 1),
        ("b300", "sglang", 1),
        ("gb300-nvl72", "sglang", 1),
        ("h200", "vllm", 1),
        ("h200", "sglang", 8),
    ],
)
def test_not_fused_outside_the_engine_rule(monkeypatch, system, stack, ep):
    on = _ops(monkeypatch, True, system, stack, ep)
    assert any(k.startswith("moe.shared_expert.") for k in on)


def test_shipped_off():
    assert sf.FUSED_SHARED_ON is False
    assert not sf.fuses_shared_expert("sglang", {"fp8"}, 256, 1.0, 1, False)


def test_rocm_half_shipped_off():
    # round 46 (sgldsr46): the engine fuses on gfx942 / gfx950 (sglang PR #12201), but on it needs the chain's refit
    # (sglang-rocm per-kernel cost 9.5 -> 11.5 us, the v0.5.9 rule 6.60 -> 6.57 ms): docs/gap_aic_itl.md
    assert sf.ROCM_FUSED_SHARED_ON is False
    assert not sf.fuses_shared_expert("sglang-rocm", {"fp8", "bf16"}, 256, 1.0, 1, False)


def test_stack_base():
    assert sf.stack_base("calibrated h200 + stack sglang") == "sglang"
    assert sf.stack_base("calibrated b200 + stack vllm@0.18.0+ar_rms") == "vllm"
    assert sf.stack_base("calibrated h200") == ""


@pytest.mark.parametrize("bad", ["no", 1, 0.0])
def test_switch_that_is_not_a_boolean_is_refused(bad):
    # was: on="no" read as on (a truthy string), pricing the fusion the caller meant to turn off
    from jalapeno.errors import SpecError

    with pytest.raises(SpecError) as e:
        sf.fuses_shared_expert("sglang", {"fp8"}, 256, 1.0, 1, False, on=bad)
    assert f"on: must be True or False, got {bad!r}" in str(e.value)
    assert "pass on=True or False" in str(e.value)


# ROCm (sgl-project/sglang PR #12201): SGLang-ROCm fuses DeepSeek-V3/R1's shared expert on gfx942 and newer, at any
# EP; its own switch, independent of the CUDA one
def _rocm_ops(monkeypatch, rocm_on: bool, ep: int = 1, system: str = "mi325x", stack: str = "sglang-rocm@0.5.19"):
    monkeypatch.setattr(sf, "ROCM_FUSED_SHARED_ON", rocm_on)
    return _ops(monkeypatch, False, system, stack, ep)


@pytest.mark.parametrize("system, ep", [("mi325x", 1), ("mi325x", 8), ("mi300x", 1), ("mi355x", 1)])
def test_rocm_fuses_at_any_ep_on_gfx942_and_gfx950(monkeypatch, system, ep):
    off, on = _rocm_ops(monkeypatch, False, ep, system), _rocm_ops(monkeypatch, True, ep, system)
    assert any(k.startswith("moe.shared_expert.") for k in off)
    assert not any(k.startswith("moe.shared_expert.") for k in on)
    if ep == 1:  # one more TP8 expert slice a layer (EP8 holds whole experts: not this hand figure)
        dw = on["moe.experts"]["weight_bytes"] - off["moe.experts"]["weight_bytes"]
        assert dw == pytest.approx(MOE_LAYERS * SLICE_BYTES, rel=1e-9)


def test_rocm_saving_is_at_least_the_shared_launches_less_one_slice(monkeypatch):
    # by hand: the unfused shared expert runs its gate/up GEMM, SiLU-and-quantise and down GEMM, at least three
    # kernels a layer at the profile's per-kernel cost; the fused step reads one more expert slice a layer, at most
    # its bytes at MI325X's HBM peak (6.0 TB/s) times 1/0.3 (no priced MoE fraction is that low)
    from jalapeno.specs.stacks import get_stack

    launch = get_stack("sglang-rocm@0.5.19").kernel_launch_s
    off, on = _rocm_ops(monkeypatch, False), _rocm_ops(monkeypatch, True)
    saved = off["_step"] - on["_step"]
    assert saved > MOE_LAYERS * (3 * launch - SLICE_BYTES / (0.3 * 6.0e12))


def test_switches_are_independent(monkeypatch):
    # the ROCm switch leaves SGLang on H200 unfused; the CUDA switch leaves SGLang-ROCm unfused
    monkeypatch.setattr(sf, "ROCM_FUSED_SHARED_ON", True)
    assert any(k.startswith("moe.shared_expert.") for k in _ops(monkeypatch, False))
    monkeypatch.setattr(sf, "ROCM_FUSED_SHARED_ON", False)
    assert any(k.startswith("moe.shared_expert.") for k in _ops(monkeypatch, True, "mi325x", "sglang-rocm@0.5.19"))


def test_rocm_all_to_all_and_other_configs_not_fused():
    assert not sf.fuses_shared_expert("sglang-rocm", {"fp8"}, 256, 1.0, 8, True, on=True)
    assert not sf.fuses_shared_expert("sglang-rocm", {"fp8"}, 384, 1.0, 1, False, on=True)
    assert not sf.fuses_shared_expert("sglang-rocm", {"fp8"}, 256, 2.0, 1, False, on=True)
    assert not sf.fuses_shared_expert("vllm-rocm", {"fp8"}, 256, 1.0, 1, False, on=True)
