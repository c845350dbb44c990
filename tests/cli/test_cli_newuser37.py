"""Round 37 new-user pass and break-it (newuser37): report/HTML inputs, plan's shown arithmetic, custom files."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
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


def _num(s: str) -> float:
    return float(s.replace(",", ""))


@pytest.mark.parametrize("args", [
    ("--system", "jalapeno", "--model", "kimi-k2.5", "--target", "1e6", "--min-interactivity", "50"),
    ("--system", "gb200-nvl72", "--power-mw", "20", "--min-interactivity", "50"),
])
def test_plan_arithmetic_checks_by_hand(capsys, args):
    """plan shows its arithmetic, and a factor rounded to one decimal broke it: '562.0 tok/s/chip x 732 chips =
    411,360 tok/s' (411,384 by hand), '9,408 chips x 1,173.6 ... = 11,040,776' (11,041,229), '8,625 concurrent per
    instance x 3 = 25,874' (25,875). Every 'N x F = T' line now gives F to the decimals T needs: N·F, rounded as T is
    printed, is T."""
    code, out, err = run(capsys, "plan", "--workload", "8k1k", *args)
    assert code == 0, err
    text = " ".join(out.split())
    pats = [r"one instance: ([\d,.]+) tok/s/chip x ([\d,]+) chips = ([\d,]+) tok/s",
            r"delivered: ([\d,]+) (?:chips )?x ([\d,.]+) (?:output tok/s/chip )?= ([\d,]+)",
            r"users: ([\d,.]+) concurrent per instance .*? x ([\d,]+) = ([\d,]+);",
            r"power \(all-in: all-in provisioned\): ([\d,]+) x ([\d,.]+) W = ([\d,.]+) kW",
            r"cost: ([\d,]+) x \$([\d.]+)/chip-hour.*? = \$([\d,.]+)/hour"]
    seen = 0
    for pat in pats:
        for m in re.finditer(pat, text):
            a, b, total = (_num(g) for g in m.groups())
            dec = len(m.group(3).split(".")[1]) if "." in m.group(3) else 0
            scale = 1e3 if pat.startswith("power") else 1.0
            assert round(a * b / scale, dec) == total, m.group(0)
            seen += 1
    assert seen >= 3, text
