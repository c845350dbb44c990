"""Findings of round 48's review (review48) of break48's input checks: a points CSV whose header ends in a comma (an
unnamed column, which break45 lets through while its cells are blank) was refused as "a row cut short" when the rows
do not end in one; ``compare --stack NAME+ar_rms`` over systems that each fuse nothing for a different reason named
only the first system's reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import check_error, run

DATA = Path(__file__).parents[2] / "src" / "jalapeno" / "data"


def test_a_header_with_a_trailing_comma_over_rows_without_one_still_reads(capsys, tmp_path):
    lines = (DATA / "validation" / "inferencex_points.csv").read_text().splitlines()
    h200 = [ln for ln in lines if ln.startswith("H200,")][:2]
    path = tmp_path / "p.csv"
    path.write_text("\n".join([lines[0] + ",", *h200]) + "\n")  # the header's unnamed last column, no cell for it
    code, out, err = run(capsys, "validate", "--no-aiconfigurator", "--points", str(path), "-s", "h200")
    # was (break48): "p.csv: line 2: 25 cell(s) where the header has 26 columns: a row cut short"; at b9dbd02 it read
    assert code == 0, err
    # a named column without its cell is still a row cut short: 24 of the 25 named columns given, the unnamed
    # 26th absent too
    short = ",".join(h200[0].split(",")[:-1])
    path.write_text("\n".join([lines[0] + ",", h200[1], short]) + "\n")
    code, out, err = run(capsys, "validate", "--no-aiconfigurator", "--points", str(path), "-s", "h200")
    check_error(code, out, err, "p.csv: line 3: 24 cell(s) where the header has 26 columns", "a row cut short")


def test_csv_rows_keeps_a_row_short_only_of_an_unnamed_column():
    from jalapeno.specs.files import csv_rows

    # header a,b,<unnamed>: the row "1,2" lacks only the unnamed cell, read as blank (None, as before break48)
    assert csv_rows("a,b,\n1,2\n", "x.csv") == [{"a": "1", "b": "2", "": None}]
