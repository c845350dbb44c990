"""compare says when a system's compute-bound frontier rests on a peak its file marks as an estimate
(analysis/estimated_peaks.py). By hand: Kimi K2.5's ``int4`` release is weight-only, so its routed
experts compute in BF16 (specs/formats.py); Jalapeño's BF16 peak is 1,700 TFLOP/s = FP8 3,400 / 2,
``estimate = true`` in data/systems/jalapeno.toml; its FP8 and FP4 peaks are not marked estimates, and
GB300's BF16 peak is NVIDIA's (not an estimate)."""

from __future__ import annotations

import pytest
from cli_runner import run

from jalapeno.analysis.comparison import compare_systems
from jalapeno.analysis.estimated_peaks import bound_format, compute_formats, estimated_peak_notes
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


def test_bound_format_by_preset():
    kimi, r1, llama = load_model("kimi-k2.5"), load_model("deepseek-r1"), load_model("llama-3.3-70b")
    assert bound_format(kimi, "int4") == "bf16"  # W4A16: dequantised to BF16
    assert bound_format(kimi, "nvfp4") == "fp4" and bound_format(r1, "fp8") == "fp8"
    assert bound_format(llama, "fp8") == "fp8"  # a dense model: its FFN
    assert bound_format(r1, "not-a-preset") is None


@pytest.fixture(scope="module")
def kimi():
    m = load_model("kimi-k2.5")
    prs = [load_pricer("jalapeno"), load_pricer("gb300-nvl72")]
    res = compare_systems(m, prs, get_workload("8k1k"), get_precision("int4"), options=SweepOptions(serving="agg"))
    return m, prs, res.record()


def test_kimi_int4_on_jalapeno_is_noted_and_gb300_is_not(kimi):
    m, prs, rec = kimi
    jal = load_pricer("jalapeno").system
    assert jal.chip.peak_flop_per_s["bf16"] == 1700e12 == jal.chip.peak_flop_per_s["fp8"] / 2
    notes = estimated_peak_notes(rec, {p.system.name: p.system for p in prs}, m)
    compute = [p for p in rec.systems["jalapeno"].frontier if p.bound == "compute"]
    assert compute, "the case: Jalapeño's Kimi int4 frontier has compute-bound points"
    assert len(notes) == 1 and notes[0].startswith(
        f"jalapeno: {len(compute)} of its {len(rec.systems['jalapeno'].frontier)} int4 frontier points")
    assert "routed experts compute in BF16 under int4" in notes[0] and "1,700 TFLOP/s, is an estimate" in notes[0]
    assert "--set chip.peak_dense_tflops.bf16=VALUE" in notes[0]


def test_no_note_where_the_bound_format_peak_is_not_an_estimate():
    # FP4: routed experts in FP4 (13,400 TFLOP/s) and the MLA math in FP8 (3,400): both reported
    m = load_model("deepseek-r1")
    prs = [load_pricer("jalapeno"), load_pricer("gb300-nvl72")]
    rec = compare_systems(m, prs, get_workload("1k1k"), get_precision("fp4"), options=SweepOptions(serving="agg")).record()
    assert any(p.bound == "compute" for p in rec.systems["jalapeno"].frontier)
    assert estimated_peak_notes(rec, {p.system.name: p.system for p in prs}, m) == []


def test_compute_formats_include_the_attention_math():
    r1, kimi = load_model("deepseek-r1"), load_model("kimi-k2.5")
    # DeepSeek-R1's FP8 release: experts FP8, MLA math BF16 (FlashMLA); FP4: experts FP4, MLA math FP8
    assert compute_formats(r1, "fp8") == [("routed experts compute", "fp8"),
                                          ("attention math (scores, softmax·V) computes", "bf16")]
    assert [f for _, f in compute_formats(r1, "fp4")] == ["fp4", "fp8"]
    assert compute_formats(kimi, "int4") == [("routed experts compute", "bf16")]  # one format, one entry
    assert compute_formats(r1, "not-a-preset") == []


def test_deepseek_fp8_mla_in_bf16_on_jalapeno_is_noted():
    """The sanity31 case: Jalapeño's DeepSeek-R1 FP8 frontier is compute-bound with the MLA math in BF16,
    whose 1,700 TFLOP/s is FP8 / 2, an estimate; before, only the experts' FP8 (reported) was checked."""
    m = load_model("deepseek-r1")
    prs = [load_pricer("jalapeno"), load_pricer("gb300-nvl72")]
    rec = compare_systems(m, prs, get_workload("1k1k"), get_precision("fp8"), options=SweepOptions(serving="agg")).record()
    notes = estimated_peak_notes(rec, {p.system.name: p.system for p in prs}, m)
    assert len(notes) == 1 and notes[0].startswith("jalapeno: ")
    assert "deepseek-r1's attention math (scores, softmax·V) computes in BF16 under fp8" in notes[0]
    assert "1,700 TFLOP/s, is an estimate" in notes[0] and "--set chip.peak_dense_tflops.bf16=VALUE" in notes[0]


def test_compare_prints_the_note_on_stderr_only(capsys):
    code, out, err = run(capsys, "compare", "-m", "kimi-k2.5", "--systems", "jalapeno,gb300-nvl72", "-w", "1k1k",
                         "--serving", "agg", "--json")
    assert code == 0, err
    assert "note: jalapeno: " in err and "is an estimate" in err and "note:" not in out
    # the user's own value (--set) is not an estimate to warn about
    code, out, err = run(capsys, "compare", "-m", "kimi-k2.5", "--systems", "jalapeno,gb300-nvl72", "-w", "1k1k",
                         "--serving", "agg", "--set", "jalapeno:chip.peak_dense_tflops.bf16=2226", "--json")
    assert code == 0, err
    assert "is an estimate" not in err
