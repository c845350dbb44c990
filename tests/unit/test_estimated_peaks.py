"""compare says when a system's compute-bound frontier rests on a peak its file marks as an estimate
(analysis/estimated_peaks.py). By hand: Kimi K2.5's ``int4`` release is weight-only, so its routed
experts compute in BF16 (specs/formats.py); Jalapeño's BF16 peak is 1,700 TFLOP/s = FP8 3,400 / 2,
``estimate = true`` in data/systems/jalapeno.toml; its FP8 and FP4 peaks are not marked estimates, and
GB300's BF16 peak is NVIDIA's (not an estimate)."""

from __future__ import annotations

import pytest
from cli_runner import run

from jalapeno.analysis.comparison import compare_systems
from jalapeno.analysis.estimated_peaks import bound_format, compute_formats, estimated_peak_notes, prefill_compute_formats
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


# --- bound31: compute-bound prefill pools count, weighted by their chips -------------------------
def _fake_record(system: str, prec):
    """Five frontier points by hand (p.bound: the decode step's; prefill_bound / prefill_chip_share: the
    prefill pool's): A aggregated compute-bound; B disaggregated, decode HBM-bound, prefill compute-bound
    on 0.7 of its chips; C both compute-bound, prefill on 0.5; D aggregated overhead-bound; E decode
    overhead-bound, prefill link-bound on 0.4."""
    from types import SimpleNamespace as N

    dep = N(precision=prec)
    pts = [N(interactivity=x, bound=b, prefill_bound=pb, prefill_chip_share=sh, deployment=dep)
           for x, b, pb, sh in ((10.0, "compute", "", 0.0), (20.0, "hbm_bandwidth", "compute", 0.7),
                                (30.0, "compute", "compute", 0.5), (40.0, "overhead", "", 0.0),
                                (50.0, "overhead", "scale_up_link", 0.4))]
    return N(systems={system: N(frontier=pts)})


def test_prefill_pools_on_an_estimated_peak_are_counted_by_their_chips():
    """DeepSeek-R1 FP8 (specs/formats.py): experts, attention projections, shared experts and dense FFN
    compute in FP8, the MLA math in BF16, so a decode step and a prefill step both scale with
    {FP8, BF16}. Jalapeño: BF16 (1,700 = 3,400 / 2) is an estimate, FP8 is reported → one line (BF16).
    Points with compute-bound work: A (decode), B (prefill), C (both) = 3 of 5; 2 by the decode step
    (A, C), 2 by the prefill pool (B, C). Chip-weighted: A 1 + B 0.7 + C (0.5 decode + 0.5 prefill) = 2.7.
    Vera Rubin: FP8 (16,700, inferred from the rack's 1.2 EF) and BF16 (FP8 / 2) are both estimates with the
    same points → one line naming both (round 38: it printed two lines alike but for the format)."""
    m, prec = load_model("deepseek-r1"), get_precision("fp8")
    jal = load_pricer("jalapeno").system
    notes = estimated_peak_notes(_fake_record("jalapeno", prec), {"jalapeno": jal}, m)
    assert len(notes) == 1
    assert notes[0].startswith("jalapeno: 3 of its 5 fp8 frontier points (10-30 tok/s/user) are compute-bound "
                               "(2 in the decode step, 2 in the prefill pool; weighted by the share of their chips "
                               "that runs those steps, 2.7 of 5), and deepseek-r1's attention math")
    assert "in BF16 under fp8" in notes[0] and "1,700 TFLOP/s, is an estimate" in notes[0]
    rubin = load_pricer("vera-rubin-nvl72").system
    notes = estimated_peak_notes(_fake_record("vera-rubin-nvl72", prec), {"vera-rubin-nvl72": rubin}, m)
    assert len(notes) == 1 and "3 of its 5 fp8 frontier points" in notes[0] and "2.7 of 5" in notes[0]
    assert notes[0].split("compute-bound (")[1].split(" under ")[0].split("), and ")[1] == (
        "deepseek-r1's routed experts compute in FP8 and attention math (scores, softmax·V) computes in BF16")
    assert ("whose peaks on vera-rubin-nvl72, FP8 16,700 TFLOP/s (inferred: NVIDIA GTC 2025 keynote, 18 Mar 2025) and "
            "BF16 8,350 TFLOP/s (assumption: FP8 / 2 as on every NVIDIA and AMD chip in the catalog), are estimates"
            ) in notes[0]  # 16,700 / 2 = 8,350
    assert "--set chip.peak_dense_tflops.fp8=VALUE, --set chip.peak_dense_tflops.bf16=VALUE or" in notes[0]


def test_a_format_only_the_prefill_step_runs_in_counts_prefill_pools_only():
    """FP4 with --attention-dtype bf16: experts FP4, MLA math BF16; the attention projections, shared
    experts and dense FFN compute in FP8, which only the prefill step's wide GEMMs make compute-bound.
    On Vera Rubin FP8 is an estimate: its line counts B and C's prefill pools only: 2 points, 0 in the
    decode step, chip-weighted 0.7 + 0.5 = 1.2. Jalapeño's FP8 and FP4 are reported, its BF16 is not:
    one BF16 line with A, B, C (A and C by the decode step, B and C by the prefill pool: 2.7 of 5)."""
    m = load_model("deepseek-r1")
    prec = get_precision("fp4").with_options(attention="bf16")
    assert prefill_compute_formats(m, prec) == [
        ("routed experts compute", "fp4"), ("attention math (scores, softmax·V) computes", "bf16"),
        ("attention projections, shared experts, dense FFN compute", "fp8")]
    rubin = load_pricer("vera-rubin-nvl72").system
    notes = estimated_peak_notes(_fake_record("vera-rubin-nvl72", prec), {"vera-rubin-nvl72": rubin}, m)
    fp8 = [n for n in notes if "--set chip.peak_dense_tflops.fp8=" in n]
    assert len(fp8) == 1 and fp8[0].startswith(
        f"vera-rubin-nvl72: 2 of its 5 {prec.name} frontier points (20-30 tok/s/user) are compute-bound (0 in the "
        "decode step, 2 in the prefill pool; weighted by the share of their chips that runs those steps, 1.2 of 5), "
        "and deepseek-r1's attention projections, shared experts, dense FFN compute in FP8")
    jal = load_pricer("jalapeno").system
    notes = estimated_peak_notes(_fake_record("jalapeno", prec), {"jalapeno": jal}, m)
    assert len(notes) == 1 and "in BF16 under" in notes[0] and "3 of its 5" in notes[0] and "2.7 of 5" in notes[0]


def test_rubin_fp4_prefill_pools_are_noted_where_no_decode_step_is_compute_bound():
    """The bound31 case: at 8K/1K Vera Rubin's FP4 frontier has no compute-bound decode step, but its
    disaggregated points' prefill pools are compute-bound with the MLA math in FP8, whose 16,700 TFLOP/s is
    inferred (an estimate); before, the note counted decode steps only and stayed silent."""
    m = load_model("deepseek-r1")
    prs = [load_pricer("vera-rubin-nvl72"), load_pricer("gb300-nvl72")]
    rec = compare_systems(m, prs, get_workload("8k1k"), get_precision("fp4")).record()
    fr = rec.systems["vera-rubin-nvl72"].frontier
    pre = [p for p in fr if p.prefill_bound == "compute"]
    assert pre and not any(p.bound == "compute" for p in fr), "the case: prefill compute-bound, decode not"
    notes = estimated_peak_notes(rec, {p.system.name: p.system for p in prs}, m)
    assert len(notes) == 1 and notes[0].startswith(f"vera-rubin-nvl72: {len(pre)} of its {len(fr)} fp4 frontier points")
    w = sum(p.prefill_chip_share for p in pre)
    assert f"0 in the decode step, {len(pre)} in the prefill pool" in notes[0] and f"{w:.1f} of {len(fr)}" in notes[0]
    assert "attention math (scores, softmax·V) computes in FP8 under fp4" in notes[0]
    # compare's headline names the peak's prefill pool beside the decode step's bound, with the caption saying how
    from jalapeno.report.tables import PREFILL_BOUND_CAPTION, comparison_tables

    h = rec.systems["vera-rubin-nvl72"].headline
    peak = max(fr, key=lambda p: p.throughput_per_chip)
    assert (h.bound_at_peak, h.prefill_bound_at_peak, h.prefill_chip_share_at_peak) == (
        peak.bound, peak.prefill_bound, peak.prefill_chip_share)
    assert PREFILL_BOUND_CAPTION in comparison_tables(rec)[0].caption


def test_the_note_quotes_the_sources_first_clause_and_points_at_the_whole():
    """The note opens `jalapeno compare`'s default output: it quotes a peak's source up to its first '; ' or
    ' (' and names the command that prints it whole (was the whole ~400-character source in the note).
    Vera Rubin's FP8 source (data/systems/vera-rubin-nvl72.toml) begins 'inferred: NVIDIA GTC 2025 keynote,
    18 Mar 2025 (Vera Rubin NVL144: ...'; cut at ' (' by hand."""
    from jalapeno.analysis.estimated_peaks import _first_clause
    from jalapeno.specs.catalog import load_system

    src = load_system("vera-rubin-nvl72").sources["chip.peak_dense_tflops.fp8"]
    assert _first_clause(src) == "inferred: NVIDIA GTC 2025 keynote, 18 Mar 2025"
    assert _first_clause("no separator at all") == "no separator at all"
