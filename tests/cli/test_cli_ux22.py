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
                "--set: chip.peak_dense_tflops", "is a table (one value per key: bf16, fp4, fp8)",
                "e.g. chip.peak_dense_tflops.fp8=<value>")
    check_error(*run(capsys, "step", "-s", "gb300-nvl72", "-m", "gpt-oss-120b", "--set", "chip.peak=1"),
                "--set: chip.peak", "unknown system field", "chip.peak_dense_tflops.fp8")
