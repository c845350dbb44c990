"""Round-44 review findings: an output path whose "folder" is a file was refused as "a folder, or its folder does not
exist" (neither); each of the three output checks (check_writable, explore's --html, results export) now names what
the path is. Expected messages written from the case, not copied from the code."""

from __future__ import annotations

import pytest

from cli_runner import check_error, run
from jalapeno.errors import SpecError, check_output_file


def test_output_file_check_names_each_case(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    check_output_file(tmp_path / "out.csv", "--out")  # a file in an existing folder: no error
    with pytest.raises(SpecError, match=r"--out: cannot write '.*notes\.txt/x\.csv' \('.*notes\.txt' is a file, not a"):
        check_output_file(tmp_path / "notes.txt" / "x.csv", "--out")
    with pytest.raises(SpecError, match=r"notes\.txt' is a file, not a folder"):  # deeper below the file
        check_output_file(tmp_path / "notes.txt" / "a" / "b.csv", "--out")
    with pytest.raises(
        SpecError, match=r"--html: cannot write '.*nope/x\.html' \(its folder '.*nope' does not exist\)"
    ):
        check_output_file(tmp_path / "nope" / "x.html", "--html")
    with pytest.raises(
        SpecError, match=r"cannot write '.*' \(a folder\)\. Fix: give a file path in an existing folder"
    ):
        check_output_file(tmp_path, "--out")


def test_simulate_out_below_a_file_names_the_file(capsys, tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    out = str(tmp_path / "notes.txt" / "x.csv")
    check_error(
        *run(capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "-c", "2", "-n", "4", "-o", out),
        "--out",
        "notes.txt' is a file, not a folder",
        "existing folder",
    )
