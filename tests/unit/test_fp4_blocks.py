"""FP4 block formats per chip (issue 18, MI355X): NVFP4 refused where the FP4 tensor cores take
MXFP4 only, AMD's MXFP4 DeepSeek-R1 checkpoint as its own preset, and the validation rows and
compare sweeps reading it."""

from __future__ import annotations

import pytest

from jalapeno.deploy.checkpoints import available_precisions
from jalapeno.errors import SpecError
from jalapeno.fit.searched import ix_precision as _ix_precision
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.precision_checks import check_precision
from jalapeno.specs.formats import get_precision


@pytest.fixture(scope="module")
def dsr1():
    return load_model("deepseek-r1")


def test_catalog_fp4_block_formats():
    # CDNA 4 MFMA scale instructions take E8M0 scales per 32 (MXFP4); Blackwell tcgen05 both kinds
    assert load_system("mi355x").chip.fp4_block_formats == {"mxfp4"}
    assert load_system("b200").chip.fp4_block_formats == {"mxfp4", "nvfp4"}
    assert load_system("jalapeno").chip.runs_fp4_block("nvfp4")  # not stated: accepted


@pytest.mark.parametrize("prec, what", [("fp4", "routed experts"), ("nvfp4", "attention projections")])
def test_nvfp4_refused_on_mi355x(dsr1, prec, what):
    with pytest.raises(SpecError) as ei:
        check_precision(get_precision(prec), dsr1, load_system("mi355x").chip)
    e = ei.value
    assert e.field == "--precision"
    assert f"{prec} stores the {what} in NVFP4, which MI355X's FP4 tensor cores do not take (they take MXFP4)" \
        in str(e)
    assert "-p quark-mxfp4" in e.fix


def test_nvfp4_kv_refused_on_mi355x(dsr1):
    with pytest.raises(SpecError) as ei:
        check_precision(get_precision("fp8,kv=nvfp4"), dsr1, load_system("mi355x").chip)
    assert ei.value.field == "--kv-dtype"
    assert "KV cache in NVFP4" in str(ei.value) and ei.value.fix == "use --kv-dtype fp8 or bf16"


def test_nvfp4_still_runs_on_blackwell(dsr1):
    check_precision(get_precision("fp4"), dsr1, load_system("b200").chip)  # no error


def test_quark_mxfp4_preset_stores_what_the_checkpoint_does(dsr1):
    """AMD-Quark w_mxfp4_a_mxfp4, group 32, '*self_attn*' excluded: MLPs at (4 + 8/32)/8 bytes per
    weight with FP4 math, attention projections BF16 (2 bytes), FP8 KV."""
    p = get_precision("quark-mxfp4")
    for m in ("dense_ffn", "routed_experts", "shared_experts"):
        assert p.modules[m].weight.bytes_per_elem == (4 + 8 / 32) / 8 and p.modules[m].compute == "fp4"
    assert p.modules["attention"].weight.bytes_per_elem == 2.0 and p.modules["attention"].compute == "bf16"
    assert p.kv_cache.name == "fp8"
    check_precision(p, dsr1, load_system("mi355x").chip)
    with pytest.raises(SpecError, match="dense model"):
        check_precision(p, load_model("llama-3.3-70b"), load_system("mi355x").chip)


def test_released_fp4_checkpoint_by_chip(dsr1):
    def avail(system):
        chip = load_system(system).chip
        return available_precisions(dsr1.name, dsr1.default_precision, chip.formats, dsr1, chip)

    assert avail("mi355x") == ("fp8", "quark-mxfp4")  # AMD's checkpoint stands in for NVIDIA's
    assert avail("b200") == ("fp8", "fp4")
    assert avail("h200") == ("fp8",)


def test_validation_rows_read_the_chips_checkpoint():
    assert _ix_precision("deepseek-r1", "FP4 (MXFP4)", "mi355x") == "quark-mxfp4"
    assert _ix_precision("deepseek-r1", "FP4", "gb200-nvl72") == "fp4"
    assert _ix_precision("deepseek-r1", "FP8", "mi355x") == "fp8"


def test_w4a4_mxfp4_is_the_mxfp4_counterpart_of_nvfp4():
    """Every linear layer at (4 + 8/32)/8 B per weight with FP4 math; runs on MI355X, where -p nvfp4
    is refused; the dense-model error names both."""
    p, llama, mi355x = get_precision("w4a4-mxfp4"), load_model("llama-3.3-70b"), load_system("mi355x").chip
    for m in ("attention", "dense_ffn", "routed_experts", "shared_experts"):
        assert p.modules[m].weight.bytes_per_elem == 0.53125 and p.modules[m].compute == "fp4"
    check_precision(p, llama, mi355x)
    with pytest.raises(SpecError) as ei:
        check_precision(get_precision("fp4"), llama, mi355x)
    assert "-p nvfp4" in ei.value.fix and "-p w4a4-mxfp4" in ei.value.fix


def test_mlperf_mxfp4_rows_read_the_dense_mxfp4_preset():
    from jalapeno.fit.mlperf import load_mlperf

    pts, _ = load_mlperf()
    mx = [p for p in pts if p.system == "mi355x" and p.model == "llama-2-70b"]
    assert mx and {p.precision for p in mx} == {"w4a4-mxfp4"}
