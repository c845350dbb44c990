"""Issue 17 kinds 1-4: files that cannot be read, CSV that cannot be parsed, user strings holding
square brackets, a byte-order mark, arrival times that are not seconds. Each is refused with one
line naming the file (and row/column) and the fix, or read as the user meant it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_runner import check_error, run

from jalapeno.errors import SpecError
from jalapeno.serve.sim.trace import read_trace
from jalapeno.specs.files import read_user_text

SIM = ["simulate", "-s", "h200", "-m", "gpt-oss-120b"]
HEADER = "arrival_s,input_tokens,output_tokens\n"


def _deny(monkeypatch, name: str) -> None:
    """Reading a file called ``name`` fails as a file without read permission does (tests may run as
    root, where chmod 000 does not stop a read)."""
    real = Path.read_bytes

    def read_bytes(self):
        if self.name == name:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)
    monkeypatch.setattr(Path, "read_bytes", read_bytes)


@pytest.mark.parametrize("name, text, args", [
    ("t.csv", HEADER + "0,100,10\n", lambda p: [*SIM, "-w", p]),
    ("sys.toml", "name = 'x'\n", lambda p: ["hardware", "show", p]),
    ("config.json", "{}", lambda p: ["models", "show", p]),
    ("pts.csv", "hardware\n", lambda p: ["validate", "--points", p]),
])
def test_unreadable_file_is_one_line(capsys, monkeypatch, tmp_path, name, text, args):
    p = tmp_path / name
    p.write_text(text)
    _deny(monkeypatch, name)  # tmp_path is new for each case: no cached load of the path
    check_error(*run(capsys, *args(str(p))), name, "permission denied", "chmod")


def test_directory_instead_of_a_file():
    with pytest.raises(SpecError, match="is a directory"):
        read_user_text(Path("/"), "a trace", "pass a file")


def test_unterminated_quote_over_the_csv_field_limit(capsys, tmp_path):
    p = tmp_path / "q.csv"
    p.write_text(HEADER + '0,100,"' + "x" * 200_000 + "\n")
    check_error(*run(capsys, *SIM, "-w", str(p)), "q.csv", "malformed csv", "quote")


def test_unterminated_quote_in_validation_points(capsys, tmp_path):
    p = tmp_path / "pts.csv"
    p.write_text('hardware,model\n"h200,' + "x" * 200_000 + "\n")
    check_error(*run(capsys, "validate", "--points", str(p)), "pts.csv", "malformed csv")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux /dev/full")
def test_stdout_that_cannot_be_written():
    """``jalapeno hardware list --json > /dev/full``: one line on stderr, exit 2, no traceback."""
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "jalapeno.cli.app", "hardware", "list", "--json"],
                           stdout=full, stderr=subprocess.PIPE, text=True)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and p.stderr.count("\n") == 1
    assert p.stderr.startswith("error: stdout: cannot write") and "No space left" in p.stderr


def test_closed_pipe_exits_quietly():
    p = subprocess.run(f"{sys.executable} -m jalapeno.cli.app hardware list | head -c 10", shell=True,
                       capture_output=True, text=True)
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr


# ---- kind 2: square brackets in user strings print literally ------------------------------------

def _h200_named(tmp_path, name: str, description: str | None = None) -> str:
    from importlib import resources

    text = (resources.files("jalapeno") / "data" / "systems" / "h200.toml").read_text()
    text = text.replace('name = "h200"', f'name = "{name}"', 1)
    if description is not None:
        text = text.replace('description = "', f'description = "{description} ', 1)
    p = tmp_path / "mine.toml"
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize("args", [
    ["hardware", "show", "{p}"],
    ["predict", "-s", "{p}", "-m", "gpt-oss-120b", "-c", "4"],
    ["frontier", "-s", "{p}", "-m", "gpt-oss-120b", "-c", "4,16"],
    ["compare", "-s", "{p},h100", "-m", "gpt-oss-120b", "-c", "4,16", "--html", ""],
    ["collective", "-s", "{p}", "--op", "all_reduce", "--group", "8", "--bytes", "1e6"],
    ["step", "-s", "{p}", "-m", "gpt-oss-120b", "--batch", "8"],
    [*SIM, "-s", "{p}", "-c", "2", "-n", "2"],
])
def test_markup_in_a_system_name_prints_literally(capsys, tmp_path, args):
    p = _h200_named(tmp_path, "my-h200[/bold]", "[/] [red]")  # no space: a system name holds none (newuser37b)
    code, out, err = run(capsys, *[a.format(p=p) for a in args])
    assert code == 0, err
    assert "Traceback" not in out + err
    if args[0] in ("hardware", "predict", "frontier", "compare", "simulate"):
        assert "my-h200[/bold]" in out


# ---- kinds 3-4: byte-order mark, epoch timestamps ------------------------------------------------

def test_byte_order_mark_is_not_part_of_the_header(tmp_path):
    p = tmp_path / "bom.csv"
    p.write_bytes(b"\xef\xbb\xbf" + (HEADER + "0,100,10\n1.5,200,20\n").encode())
    tr = read_trace(p)
    np.testing.assert_array_equal(tr.arrival_s, [0.0, 1.5])
    np.testing.assert_array_equal(tr.isl, [100, 200])


@pytest.mark.parametrize("first, unit, factor", [(1.7e18, "nanoseconds", "1e9"), (1.7e15, "microseconds", "1e6"),
                                                 (1.7e12, "milliseconds", "1e3")])
def test_epoch_timestamps_that_are_not_seconds_are_refused(capsys, tmp_path, first, unit, factor):
    p = tmp_path / "epoch.csv"
    p.write_text(HEADER + f"{first:.0f},100,10\n{first * (1 + 1e-9):.0f},100,10\n")
    check_error(*run(capsys, *SIM, "-w", str(p)), "epoch.csv", "arrival_s", "not seconds", unit, factor)


def test_epoch_seconds_are_rebased_to_the_first_arrival(tmp_path):
    """1.7e9 s is a wall clock in seconds: only the gaps matter (float64 spacing there is 0.24 µs)."""
    p = tmp_path / "epoch_s.csv"
    p.write_text(HEADER + "1700000000.25,100,10\n1700000000.75,100,10\n1700000003.25,100,10\n")
    np.testing.assert_allclose(read_trace(p).arrival_s, [0.0, 0.5, 3.0], atol=1e-6)


def test_rebased_epoch_seconds_simulate_real_latencies(capsys, tmp_path):
    p = tmp_path / "epoch_s.csv"
    p.write_text(HEADER + "1700000000.0,1000,50\n1700000000.5,1000,50\n")
    code, out, err = run(capsys, *SIM, "-w", str(p), "--json")
    assert code == 0, err
    sm = json.loads(out)["summary"]
    assert sm["ttft_s"]["p50"] > 0 and sm["tpot_s"]["p50"] > 0
    assert sm["simulated_s"] < 100


@pytest.mark.parametrize("rows, words", [
    ("0,100\n", ["row 1", "output_tokens", "missing value"]),
    ("0,abc,10\n", ["row 1", "input_tokens", "'abc'", "not a finite number"]),
    ("0,100,10\n1,1e300,10\n", ["row 2", "input_tokens", "out of range"]),
    ("-1,100,10\n", ["row 1", "arrival_s", "out of range"]),
    ("0,0,10\n", ["row 1", "input_tokens"]),
    ("0,inf,10\n", ["row 1", "input_tokens", "not a finite number"]),
])
def test_bad_trace_cells_name_row_and_column(capsys, tmp_path, rows, words):
    p = tmp_path / "bad.csv"
    p.write_text(HEADER + rows)
    check_error(*run(capsys, *SIM, "-w", str(p)), "bad.csv", *words)


@pytest.mark.parametrize("line, words", [
    ('{"arrival_s": 0, "input_tokens": [1], "output_tokens": 5}', ["row 1", "input_tokens"]),
    ('{"arrival_s": true, "input_tokens": 10, "output_tokens": 5}', ["row 1", "arrival_s"]),
    ('[1, 2, 3]', ["line 1", "not a json object"]),
])
def test_bad_jsonl_values(capsys, tmp_path, line, words):
    p = tmp_path / "t.jsonl"
    p.write_text(line + "\n")
    check_error(*run(capsys, *SIM, "-w", str(p)), "t.jsonl", *words)


# ---- own break-it pass: CSV rows pandas would silently re-align --------------------------------

@pytest.mark.parametrize("text, words", [
    # one cell too many: pandas would take the first column as the index and shift every value
    (HEADER + "0,100,10,99\n", ["more cells than the header"]),
    # a column twice: pandas would rename the second one and drop it silently
    ("arrival_s,input_tokens,output_tokens,arrival_s\n0,100,10,5\n", ["header", "'arrival_s' appears twice"]),
])
def test_csv_that_would_be_realigned_is_refused(capsys, tmp_path, text, words):
    p = tmp_path / "t.csv"
    p.write_text(text)
    check_error(*run(capsys, *SIM, "-w", str(p)), "t.csv", *words)
