"""Issue 15 defect 8: help text and suggestions a new user reads."""

from __future__ import annotations

import json
import re

import pytest

from cli_runner import check_error, error_line, run


def _help(capsys, *cmd: str) -> str:
    code, out, err = run(capsys, *cmd, "--help")
    assert code == 0, err
    return out


@pytest.mark.parametrize("cmd", [("simulate",), ("predict",), ("compare",), ("step",), ("hardware", "list")])
def test_on_off_flags_show_no_value_type(capsys, cmd):
    out = _help(capsys, *cmd)
    for flag in ("--json", "--help"):
        line = next(ln for ln in out.splitlines() if f"{flag} " in ln)
        assert "<bool>" not in line, line


def test_every_simulate_option_is_described(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    out = _help(capsys, "simulate")
    rows = [ln for ln in out.splitlines() if re.match(r"^│ +(\* +)?--", ln)]
    assert len(rows) > 30
    for ln in rows:
        cells = re.split(r" {2,}", ln.strip("│ ").strip())
        assert len(cells) >= 2 and not cells[-1].startswith("[default"), ln  # a description, not only a default
    for opt in ("--efficiency", "--power"):
        assert any(f"{opt} " in ln for ln in rows), opt


def test_simulate_reports_throughput_per_kw_under_the_power_convention(capsys):
    """H200 TDP 700 W (NVIDIA datasheet): tok/s/kW = throughput per chip / 0.7."""
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "gpt-oss-120b", "-c", "2", "-n", "4",
                         "--power", "chip", "--json")
    assert code == 0, err
    sm = json.loads(out)["summary"]
    assert sm["power_convention"] == "chip" and sm["power_w_per_chip"] == 700
    assert sm["tok_s_per_kw"] == pytest.approx(sm["throughput_per_chip"] / 0.7)


def test_a_family_name_suggests_the_system_it_starts(capsys):
    check_error(*run(capsys, "predict", "-s", "gb200", "-c", "4"), "did you mean 'gb200-nvl72'?")


def test_did_you_mean_ends_its_sentence_once(capsys):
    line = error_line(*run(capsys, "compar"))
    assert "Did you mean 'compare'? Fix:" in line and "?." not in line


# ---- leftovers: a no-op --compute-fallback, Batch.make lengths ------------------------------------

@pytest.mark.parametrize("args", [
    ("predict", "-s", "b200", "-m", "gpt-oss-120b", "-c", "4"),
    ("step", "-s", "b200", "-m", "gpt-oss-120b", "--batch", "4"),
    ("simulate", "-s", "b200", "-m", "gpt-oss-120b", "-c", "2", "-n", "2"),
    ("compare", "-s", "b200,h200", "-m", "gpt-oss-120b", "-c", "4", "--html", ""),
])
def test_compute_fallback_that_changes_nothing_is_refused(capsys, args):
    """B200 and H200 have BF16 and FP8 tensor cores: gpt-oss's MXFP4 preset (FP8 expert math,
    BF16 elsewhere) needs no fallback there."""
    check_error(*run(capsys, *args, "--compute-fallback"), "--compute-fallback", "nothing falls back",
                "mxfp4 natively", "drop --compute-fallback")


def test_compute_fallback_that_applies_still_runs(capsys):
    """H200 has no FP4 tensor cores: NVFP4 runs dequantised at FP8 with the flag."""
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "gpt-oss-120b", "-c", "4", "-p", "nvfp4",
                         "--compute-fallback", "--json")
    assert code == 0, err


def test_batch_arrays_of_different_lengths_are_refused():
    from jalapeno.cost.step import Batch
    from jalapeno.errors import SpecError

    with pytest.raises(SpecError, match="decode_seqs 1, decode_ctx 3"):
        Batch.make(decode_seqs=[64], decode_ctx=[1024, 2048, 4096])
    assert Batch.make(decode_seqs=64, decode_ctx=[1024, 2048, 4096]).n == 3  # scalars broadcast
