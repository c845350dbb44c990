"""specs/formats.priced_as (ux50): the modules whose stored weights are narrower than the compute format the op
table runs them at, named with the efficiency rows that price them."""

from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.formats import get_precision, priced_as


def _lines(model: str, precision: str, system: str) -> list[str]:
    return priced_as(get_precision(precision), load_model(model), load_system(system).chip)


def test_mxfp4_experts_are_w4a8_on_the_moe_fp8_rows():
    """gpt-oss-120b's release: MXFP4 experts (4-bit elements, config.json quantization_config) with MXFP8
    activations where the chip has FP8: 4-bit weights x 8-bit compute = W4A8, on B200 and H200 alike."""
    for system in ("b200", "h200"):
        (line,) = _lines("gpt-oss-120b", "mxfp4", system)
        assert line.startswith("routed experts: MXFP4 weights priced at FP8 compute (W4A8; efficiency.moe.fp8.*")


def test_int4_experts_are_w4a16():
    """Kimi K2.5's INT4 weight-only experts (compressed-tensors, group 32) run BF16 math: W4A16."""
    (line,) = _lines("kimi-k2.5", "int4", "jalapeno")
    assert "INT4 g32 weights priced at BF16 compute (W4A16; efficiency.moe.bf16.*" in line


def test_same_width_formats_say_nothing():
    """FP8 weights at FP8 compute (DeepSeek-R1's release), NVFP4 at FP4, BF16 at BF16: no line."""
    assert _lines("deepseek-r1", "fp8", "h200") == []
    assert _lines("deepseek-r1", "fp4", "b200") == []
    assert _lines("llama-3.3-70b", "bf16", "b200") == []
