"""specs/precision_checks.priced_as (ux50): the modules whose stored weights are narrower than the compute format the op
table runs them at, named with the efficiency rows that price them."""

from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.formats import get_precision
from jalapeno.specs.precision_checks import priced_as


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


def test_w4a16_dense_linears_name_the_gemm_rows():
    """The w4a16 preset (AWQ / GPTQ: INT4 g128 weight-only in every linear, BF16 math) on a dense module: DeepSeek-R1's
    attention projections hold 4-bit weights dequantised into BF16 GEMMs, W4A16, priced by the BF16 GEMM rows
    (``efficiency.gemm.bf16``: an INT4 weight's GEMM key is its compute format, specs/number_formats.gemm_key) — the
    dense path, not the routed experts' ``moe.*`` rows."""
    lines = _lines("deepseek-r1", "w4a16", "b200")
    (attn,) = [x for x in lines if x.startswith("attention projections:")]
    assert attn.startswith(
        "attention projections: INT4 g128 weights priced at BF16 compute (W4A16; efficiency.gemm.bf16.*"
    )
    assert not any("efficiency.moe." in x for x in lines if not x.startswith("routed experts:"))
