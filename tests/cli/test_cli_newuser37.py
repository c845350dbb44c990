"""Round 37 new-user pass and break-it (newuser37): report/HTML inputs, plan's shown arithmetic, custom files."""

from __future__ import annotations

import csv
from pathlib import Path

from cli_runner import error_line, run

POINTS = Path(__file__).resolve().parents[2] / "src" / "jalapeno" / "data" / "validation" / "inferencex_points.csv"


def _points(tmp_path: Path, **cells) -> Path:
    """A one-row InferenceX points CSV: the shipped file's first row with ``cells`` replaced."""
    rows = list(csv.reader(POINTS.open()))
    head, row = rows[0], list(rows[1])
    for k, v in cells.items():
        row[head.index(k)] = v
    p = tmp_path / "mine.csv"
    with p.open("w", newline="") as f:
        csv.writer(f).writerows([head, row])
    return p


def test_report_measured_file_of_which_no_row_reads_is_refused(capsys, tmp_path):
    """report --measured mine.csv, every row unreadable (a hardware name not in the catalog), warned and wrote a page
    without them, exit 0; validate --points refuses the same file. Now one error line, before the sweep, and no page."""
    p = _points(tmp_path, hardware="GB999")
    page = tmp_path / "r.html"
    line = error_line(*run(capsys, "report", "--systems", "gb200-nvl72", "--workload", "1k1k", "--measured", str(p),
                           "--html", str(page)))
    assert line.startswith("error: --measured mine.csv: no measured point could be read; 1 row(s) skipped (first: "
                           "mine:2: hardware/model 'GB999'/'DeepSeek-R1-0528' not in the catalog"), line
    assert line.endswith("Fix: check the CSV's hardware/model names and numbers against the InferenceX points format, "
                         "or pass --measured none"), line
    assert not page.exists()
