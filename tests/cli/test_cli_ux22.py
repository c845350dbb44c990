"""Round 22's usability pass (a new user's report): the compare headline says which tokens it counts and names
the power figure each system's tok/s/kW divides by (docs/metrics.md §2-§3)."""

from __future__ import annotations

import re

import pytest

from cli_runner import check_error, run


def _number_after(text: str, name: str, nth: int) -> float:
    """The ``nth`` number of ``name``'s headline row (rich folds cells; the first line holds the figures)."""
    line = next(ln for ln in text.splitlines() if re.match(rf"\W*{re.escape(name)}\s", ln))
    cells = [c.strip() for c in line.split("│")[1:-1]]
    return float(cells[nth + 1].replace(",", ""))


def test_compare_headline_counts_input_and_output_and_names_the_power(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # compare writes its frontier chart in the working directory
    code, out, err = run(capsys, "compare", "-m", "gpt-oss-120b", "--systems", "jalapeno,gb300-nvl72",
                         "--power", "sustained", "--isl", "8192", "--osl", "1024")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "(in+out)" in flat and "out tok/s/chip at peak" in flat
    assert "count input + output tokens" in flat
    # catalog: Jalapeño publishes a sustained figure (550 W, hardware_specs.md); GB300 does not, so its tok/s/kW
    # divides by the chip TDP and says so (docs/metrics.md §3, the label it promises)
    assert "jalapeno chip sustained" in flat
    assert "gb300-nvl72 chip TDP (no sustained figure published)" in flat
    # output tokens at the peak point: in+out x OSL / (ISL + OSL) = x 1024 / 9216 = x 1/9 (every request of an
    # InferenceX run has the same ISL and OSL on average)
    for name in ("jalapeno", "gb300-nvl72"):
        total, output = _number_after(out, name, 0), _number_after(out, name, 1)
        assert output == pytest.approx(total / 9, rel=0.01)


def test_set_on_a_table_names_its_keys_and_a_dotted_example(capsys):
    """``--set chip.peak_dense_tflops=3400`` was answered "'peak_dense_tflops' is not a key of this table" under a
    doubled key; the table's keys are GB300's formats in the catalog (data/systems: bf16, fp8, fp4)."""
    check_error(*run(capsys, "step", "-s", "gb300-nvl72", "-m", "gpt-oss-120b", "--set", "chip.peak_dense_tflops=3400"),
                "--set: chip.peak_dense_tflops", "is a table (one value per key: fp8, bf16, fp4)",
                "e.g. chip.peak_dense_tflops.fp8=<value>")
    check_error(*run(capsys, "step", "-s", "gb300-nvl72", "-m", "gpt-oss-120b", "--set", "chip.peak=1"),
                "--set: chip.peak", "unknown system field", "chip.peak_dense_tflops.fp8")


def test_step_names_what_holds_a_compute_bound_op_and_whose_fits_those_are(capsys):
    """A new user saw Jalapeño's moe.experts ``compute``-bound at ~1% of FP8 peak and attn.qkv_a_proj identical to
    GB300's, with nothing saying both come from GB300's GPU kernel fits (Jalapeño has no kernel tables; its
    catalog entry derives its efficiency from gb300-nvl72, docs/catalog.md)."""
    code, out, err = run(capsys, "step", "--system", "jalapeno", "--model", "deepseek-r1", "--dp", "8", "--ep", "8",
                         "--batch", "64", "--context", "8192")
    assert code == 0, err
    rows = {ln.split("│")[1].strip(): ln.split("│")[-2].strip() for ln in out.splitlines() if ln.count("│") > 8}
    # DeepSeek-R1's q_a/kv_a projection: k = hidden 7168 = 56 blocks of 128, FP8 block-scaled (fp8_block entry)
    assert rows["attn.qkv_a_proj"] == "compute (serial-k floor)"
    m = re.fullmatch(r"compute \(few rows: ([\d.]+)% of peak\)", rows["moe.experts"])
    assert m and float(m.group(1)) < 10  # a few rows per expert: far under the row rule's half_rows
    flat = " ".join(out.split())
    assert "borrowed from gb300-nvl72's GPU kernel fits" in flat


def test_a_near_tie_is_called_one():
    from jalapeno.cli.step_cmd import margin_text

    assert margin_text(1.03) == "a near tie: 1.03x the next"
    assert margin_text(2.43) == "2.43x the next"


def test_a_wide_band_is_flagged(capsys, tmp_path, monkeypatch):
    """Jalapeño's max tok/s/user band spanned ~4x (GPU-like to compiled stacks) with nothing calling it out."""
    from jalapeno.report.compare_cells import band_text

    # by hand: 511.9 / 118.8 = 4.31; 17,012 / 12,449 = 1.37 (under 2x: not flagged)
    assert band_text(118.8, 511.9, ".1f") == " (118.8 to 511.9) [wide band: 4.3x]"
    assert band_text(12449, 17012, ",.0f") == " (12,449 to 17,012)"
    assert band_text(5.0, 5.0, ".1f") == ""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "compare", "-m", "deepseek-r1", "--systems", "jalapeno,gb300-nvl72", "--bands")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "[wide" in flat and "[wide band: Nx]: high / low of 2x or more" in flat


def test_predict_says_its_p99_ttft_is_the_whole_runs(capsys):
    """predict's p99 TTFT (10 s against a 1 s mean at C = 64) read as a steady tail: it is the idle start's first
    wave (InferenceX issues C prompts at once into an idle server; serve/queueing.py effect 3)."""
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "gpt-oss-120b", "-c", "64")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "first wave included" in flat and "the larger of the steady tail and the first wave's p90" in flat
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "gpt-oss-120b", "--rate", "2")
    assert code == 0, err
    assert "first wave" not in " ".join(out.split())  # open loop: no idle start


def test_below_a_frontiers_start_reads_the_peak_flagged(capsys):
    """Round 22 printed n/a where one frontier starts faster than the speed asked; round 29 (compare29) prints the
    ratio with that side at its peak (analysis/frontier.py, ``below_frontier_start``: y = the peak), flagged,
    since a system serves at least its peak's throughput at a lower per-user speed."""
    from jalapeno.report.page import _ratio_cell
    from jalapeno.report.compare_cells import _ratio

    r = {"ratio": 2.78, "status_a": "below_frontier_start", "status_b": "at_point", "at_frontier_end": True}
    assert _ratio(r) == ("2.78x", "below frontier start: this")  # round 49: naming the side (newuser49)
    assert _ratio_cell(r) == "2.78× <span class=\"flag\">below frontier start: this</span>"
    assert _ratio({**r, "status_a": "at_point", "at_frontier_end": False}) == ("2.78x", "")


def test_report_writes_its_page_with_html_like_every_page_writer(capsys, tmp_path):
    """report took its page as --out/-o where compare, simulate, validate, sensitivity and explore take --html
    (--out/-o being their data files): --html is the one spelling; --out/-o stays, hidden, for old scripts."""
    base = ["report", "--systems", "jalapeno", "--serving", "agg", "-m", "gpt-oss-120b", "-w", "8k1k",
            "--measured", "none"]
    code, _, err = run(capsys, *base, "--html", str(tmp_path / "new.html"))
    assert code == 0, err
    assert (tmp_path / "new.html").read_text().lstrip().lower().startswith("<!doctype html")
    code, _, err = run(capsys, *base, "-o", str(tmp_path / "old.html"))  # the old spelling still runs
    assert code == 0, err
    assert (tmp_path / "old.html").is_file()
    check_error(*run(capsys, "report", "--html", str(tmp_path / "r.txt")), "--html", "is not an .html file")
    check_error(*run(capsys, "report", "-o", str(tmp_path / "r.txt")), "--out", "is not an .html file")
    check_error(*run(capsys, "report", "--html", str(tmp_path / "a.html"), "--out", str(tmp_path / "b.html")),
                "--out", "old spelling of --html", "give the page's path once, as --html")
    code, out, _ = run(capsys, "report", "--help")
    # no --out option (the --efficiency help may cite calibrate's --out-dir: another command's option)
    assert code == 0 and "--html" in out and not re.search(r"--out(?![-\w])", out)


def test_a_partly_measured_set_is_not_called_borrowed(capsys):
    """MI325X's GEMM and MoE fits are its own (amd-aiter's tuned-kernel tables; data/calibration/mi325x.toml kind
    partial, the rest derived from h200): the 'no kernel measurements' caption must not appear. (This step prints no
    compute label, so since newuser50 no label legend either: the 'compute (few rows:' this test once found was the
    legend's own text, explaining a label no row printed; the donor rule is checked on the set's source below.)"""
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.calibration import derived_from

    code, out, err = run(capsys, "step", "-s", "mi325x", "-m", "deepseek-r1", "--tp", "8", "--batch", "64",
                         "--context", "8192")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "has no kernel measurements" not in flat
    assert derived_from(load_pricer("mi325x").efficiency.source) is None  # partial: not borrowed
    assert derived_from(load_pricer("jalapeno").efficiency.source) == "gb300-nvl72"  # wholly derived: borrowed
