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


def test_jsonl_quoted_numeric_id_is_the_same_session_but_a_quoted_time_is_refused(tmp_path):
    """A quoted time or length is refused in JSONL; a quoted id is a label and names the same session as the number
    (as a CSV cell does). Pinned so the two rules stay apart on purpose (trace._Quoted)."""
    from jalapeno.serve.sim.trace import read_trace

    ids = tmp_path / "ids.jsonl"
    ids.write_text(
        '{"arrival_s": 0, "input_tokens": 100, "output_tokens": 10, "session_id": "5"}\n'
        '{"arrival_s": 0.1, "input_tokens": 100, "output_tokens": 10, "session_id": 5}\n'
    )
    assert read_trace(ids).session.tolist() == [5, 5]
    csv = tmp_path / "ids.csv"
    csv.write_text("arrival_s,input_tokens,output_tokens,session_id\n0,100,10,5\n0.1,100,10,5\n")
    assert read_trace(csv).session.tolist() == [5, 5]
    t = tmp_path / "t.jsonl"
    t.write_text('{"arrival_s": "0", "input_tokens": 100, "output_tokens": 10}\n')
    with pytest.raises(SpecError, match=r'arrival_s: "0" is text, not a number'):
        read_trace(t)
