"""A trace with more than one bad row names the FIRST bad row in file order (round 24's open item).

The reader used to check the file column by column (every arrival_s, then every input_tokens, ...)
and then range by range, so a bad cell in row 2's arrival_s was named before a bad cell in row 1's
input_tokens; the simulator named the *longest* request past the model's context, by its place in
arrival order, not its row in the file. Each case below has two bad rows, the first named. Rows
count requests (1 = the first under the header; the k-th object of a JSONL file) and the line is
the file's line, blank lines included.
"""

from __future__ import annotations

import numpy as np
import pytest
from cli_runner import check_error, error_line, run

from jalapeno.errors import SpecError
from jalapeno.serve.sim.trace import Trace, first_failing_row, read_trace

SIM = ["simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8"]
HEADER = "arrival_s,input_tokens,output_tokens"


@pytest.mark.parametrize("text, words", [
    # row 1 out of range, row 2 not a number (the number check ran first over every row)
    (f"{HEADER}\n0,0,10\nabc,100,10\n", ["row 1 (line 2): input_tokens", "0 is out of range"]),
    # row 1's third column, row 2's second (input_tokens was checked before output_tokens)
    (f"{HEADER}\n0,100,x\n1,y,10\n", ["row 1 (line 2): output_tokens", "'x'"]),
    # an optional column's id in row 1, a length in row 2 (ids were checked after lengths)
    (f"{HEADER},session_id\n0,100,10,-5\n1,abc,10,\n", ["row 1 (line 2): session_id", "-5 is not an id"]),
    # two range errors: arrival_s's range was checked over every row first
    (f"{HEADER}\n0,0,10\n-1,100,10\n", ["row 1 (line 2): input_tokens"]),
    # a whole-number error in row 1, a range error in row 2 of the same column
    (f"{HEADER}\n0,100.5,10\n1,0,10\n", ["row 1 (line 2): input_tokens", "100.5 is not a whole number"]),
    # two bad cells in one row: the leftmost in the file's own column order is named
    (f"{HEADER}\nabc,0,10\n", ["row 1 (line 2): arrival_s", "'abc'"]),
    ("input_tokens,arrival_s,output_tokens\n0,abc,10\n", ["row 1 (line 2): input_tokens", "out of range"]),
    # a blank line is skipped as a row but counted as a line
    (f"{HEADER}\n0,100,10\n\n1,0,10\n2,100,0\n", ["row 2 (line 4): input_tokens"]),
    # a row with a cell too many stops the parse: a bad value above it is still named first
    (f"{HEADER}\n0,0,10\n1,100,10\n2,100,10,5\n", ["row 1 (line 2): input_tokens"]),
    (f"{HEADER}\n0,10,10\n\n1,100,10\n2,100,10,5\n", ["row 3 (line 5)", "4 cells", "more cells than the header",
                                                        "(3)"]),
    (f"{HEADER}\n0,10,10,9\n1,0,10\n", ["row 1 (line 2)", "more cells than the header"]),
])
def test_csv_names_the_first_bad_row(capsys, tmp_path, text, words):
    p = tmp_path / "t.csv"
    p.write_text(text)
    check_error(*run(capsys, *SIM, "-w", str(p)), "t.csv", *words)


@pytest.mark.parametrize("lines, words", [
    # a bad value on line 2 and a malformed line 4: the parse stopped at line 4 and named it
    (['{"arrival_s": 0, "input_tokens": 10, "output_tokens": 5}',
      '{"arrival_s": 1, "input_tokens": 0, "output_tokens": 5}', "",
      '{"arrival_s": 1, "input_tokens": 10, "output_tokens": 5'], ["row 2 (line 2): input_tokens", "out of range"]),
    # the malformed line is still named when nothing above it is bad
    (['{"arrival_s": 0, "input_tokens": 10, "output_tokens": 5}', '{"arrival_s": 1,'], ["line 2", "malformed json"]),
    # rows and lines differ past a blank line
    (['{"arrival_s": 0, "input_tokens": 10, "output_tokens": 5}', "",
      '{"arrival_s": 1, "input_tokens": 0, "output_tokens": 5}'], ["row 2 (line 3): input_tokens"]),
    # an unknown key on line 2 comes before a bad value on line 3 ...
    (['{"arrival_s": 0, "input_tokens": 10, "output_tokens": 5}',
      '{"arrival_s": 1, "input_tokens": 10, "output_tokens": 5, "sesion_id": 3}',
      '{"arrival_s": 1, "input_tokens": 0, "output_tokens": 5}'], ["line 2: sesion_id", "did you mean 'session_id'"]),
    # ... and after a bad value on line 1
    (['{"arrival_s": -1, "input_tokens": 10, "output_tokens": 5}',
      '{"arrival_s": 1, "input_tokens": 10, "output_tokens": 5, "sesion_id": 3}'], ["row 1 (line 1): arrival_s"]),
    # a key given twice on line 3 after a bad id on line 1
    (['{"arrival_s": 0, "input_tokens": 10, "output_tokens": 5, "session_id": 1.5}', "",
      '{"arrival_s": 1, "arrival_s": 2, "input_tokens": 10, "output_tokens": 5}'], ["row 1 (line 1): session_id"]),
])
def test_jsonl_names_the_first_bad_row(capsys, tmp_path, lines, words):
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(lines) + "\n")
    check_error(*run(capsys, *SIM, "-w", str(p)), "t.jsonl", *words)


def test_reader_raises_one_spec_error_for_the_first_row(tmp_path):
    """The library call, not only the command line: one SpecError whose field names row 1."""
    p = tmp_path / "t.csv"
    p.write_text(f"{HEADER}\n0,100,abc\n-3,100,10\n")
    with pytest.raises(SpecError) as e:
        read_trace(p)
    assert e.value.field == "t.csv: row 1 (line 2): output_tokens", e.value.field


# ---- the simulator's length checks: first row in the file, not the longest, not by arrival ----------

@pytest.mark.parametrize("rows, named", [
    # gpt-oss-120b's context is 131,072 tokens (max_position_embeddings in its config.json)
    ("0,200000,10\n1,300000,10\n", "trace row 1: 200000 + 10 tokens"),
    # file row 1 arrives last: it is still row 1 (arrival order put it at place 2)
    ("5,300000,10\n0,100,10\n", "trace row 1: 300000 + 10 tokens"),
    ("0,100,10\n1,140000,10\n2,100,10\n3,500000,10\n", "trace row 2: 140000 + 10 tokens"),
])
def test_context_check_names_the_first_long_row(capsys, tmp_path, rows, named):
    p = tmp_path / "t.csv"
    p.write_text(f"{HEADER}\n{rows}")
    line = error_line(*run(capsys, *SIM, "-w", str(p)))
    assert named in line and "context of 131072" in line, line


def _trace(totals, rows=None) -> Trace:
    n = len(totals)
    return Trace(np.arange(n, dtype=float), np.asarray(totals, dtype=np.int64) - 2, np.full(n, 2, dtype=np.int64),
                 np.full(n, -1), np.full(n, -1), row=None if rows is None else np.asarray(rows, dtype=np.int64))


def _limit_check(limit: int, seen: list | None = None):
    def check(isl: int, osl: int, where: str) -> None:
        if seen is not None:
            seen.append(where)
        if isl + osl > limit:
            raise SpecError(where, f"{isl} + {osl} tokens exceed {limit}", "shorter")
    return check


def test_first_failing_row_against_a_scan_of_every_row():
    """Bisecting the distinct totals finds what checking every row in file order finds."""
    rng = np.random.default_rng(24)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        totals = rng.integers(3, 100, n)
        rows = rng.permutation(n) + 1  # arrival order is not file order
        limit = int(rng.integers(2, 110))
        tr = _trace(totals, rows)
        expect = min((int(r) for t, r in zip(totals, rows, strict=True) if t > limit), default=None)
        if expect is None:
            first_failing_row(tr, _limit_check(limit))
            continue
        with pytest.raises(SpecError) as e:
            first_failing_row(tr, _limit_check(limit))
        assert e.value.field == f"trace row {expect}", (e.value.field, expect, totals, rows, limit)


def test_first_failing_row_checks_log_n_rows_not_n():
    """A million-row trace whose only long row is the last: ~log2(distinct totals) + 2 checks."""
    totals = np.arange(3, 1_000_003)
    seen: list[str] = []
    with pytest.raises(SpecError, match="trace row 1000000"):
        first_failing_row(_trace(totals), _limit_check(1_000_001, seen))
    assert len(seen) <= 23, len(seen)  # 1 (the longest) + ceil(log2 1e6) = 20 + 1 (the row named)


def _first_bad_by_scan(cols: list[str], rows: list[tuple[int, list[str]]]) -> str | None:
    """The first bad cell of a CSV trace in file order, by checking each cell alone (docs/simulator.md's
    rules: times finite and >= 0; token counts whole, 1 to 1e9; ids blank or whole, 0 to 2^62)."""
    import math

    for k, (line, cells) in enumerate(rows):
        for col, cell in zip(cols, cells, strict=True):
            if cell.strip() == "":
                if col in ("session_id", "prefix_group"):
                    continue
                return f"row {k + 1} (line {line}): {col}"
            try:
                v = float(cell)
            except ValueError:
                return f"row {k + 1} (line {line}): {col}"
            ok = math.isfinite(v) and (v >= 0 if col == "arrival_s" else
                                       1 <= v <= 1e9 and v == int(v) if col.endswith("_tokens") else
                                       0 <= v < 2.0**62 and v == int(v))
            if not ok:
                return f"row {k + 1} (line {line}): {col}"
    return None


def test_the_named_cell_is_the_first_a_scan_finds(tmp_path):
    """200 random CSV traces (columns in random order, blank lines, 15% bad cells): the reader names the
    cell a row-by-row, left-to-right scan finds first (6,000 traces agreed when this was written)."""
    import random

    rng = random.Random(24)
    cells, good = ["0", "1", "-1", "1.5", "abc", "", "nan", "inf", "1e300", "5e18", "7"], ["0", "1", "100", "2", "50"]
    p = tmp_path / "t.csv"
    for _ in range(200):
        cols = ["arrival_s", "input_tokens", "output_tokens"] + rng.sample(["session_id", "prefix_group"], rng.randint(0, 2))
        rng.shuffle(cols)
        text, rows, line = [",".join(cols)], [], 1
        for _ in range(rng.randint(1, 6)):
            if rng.random() < 0.2:
                text.append("")
                line += 1
            cells_k = [rng.choice(cells) if rng.random() < 0.15 else rng.choice(good) for _ in cols]
            text.append(",".join(cells_k))
            line += 1
            rows.append((line, cells_k))
        p.write_text("\n".join(text) + "\n")
        expect = _first_bad_by_scan(cols, rows)
        try:
            read_trace(p)
            got = None
        except SpecError as e:
            got = e.field.removeprefix("t.csv: ") if "row" in e.field else None  # trace-wide checks name no row
        assert got == expect, ("\n".join(text), expect, got)
