"""``jalapeno validate`` and ``jalapeno calibrate`` in-process, on the committed fixtures.

Bad input: one ``error:`` line on stderr, exit code 2, no traceback. ``calibrate`` without the
optional aiconfigurator-core package must say how to install it (``.[calibrate]``).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import sys
from pathlib import Path

import pytest
from cli_runner import run

from jalapeno.cli.app import main

POINTS = Path(__file__).resolve().parents[1] / "fixtures" / "inferencex_points_sample.csv"




def one_error_line(code: int, out: str, err: str) -> str:
    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    """One validate run with --json, --out and --html together (the prediction is the slow part);
    capsys is per test, so output is captured by redirection here."""
    d = tmp_path_factory.mktemp("validate")
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["validate", "--points", str(POINTS), "--no-aiconfigurator", "--json",
                  "--out", str(d / "x.csv"), "--html", str(d / "p.html")])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return code, out.getvalue(), err.getvalue(), d


def test_validate_json(validated):
    code, out, err, _ = validated
    assert code == 0, err
    assert "Traceback" not in out + err
    d = json.loads(out)
    assert {"summary", "overall"} <= set(d)
    assert d["sources"] == {"inferencex": str(POINTS)}
    assert set(d["overall"]) == {"inferencex"}
    tput = d["overall"]["inferencex"]["throughput_per_chip"]
    assert tput["n"] == 11 and 0 <= tput["median_ape"] <= tput["p90_ape"]
    assert d["summary"] and {"system", "metric", "n", "median_ape", "bias"} <= set(d["summary"][0])
    assert sum(r["n"] for r in d["summary"] if r["metric"] == "throughput_per_chip") == 11
    assert d["skipped"] == []


def test_validate_out_csv(validated):
    code, _, err, d = validated
    assert code == 0, err
    with (d / "x.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) > 11
    assert {"id", "system", "metric", "measured", "predicted", "error", "mapping", "kernels_calibrated"} <= set(rows[0])
    assert {r["id"] for r in rows} == {f"inferencex_points_sample:{i}" for i in range(2, 13)}
    for r in rows:
        if r["error"]:
            assert float(r["error"]) == pytest.approx(float(r["predicted"]) / float(r["measured"]) - 1, rel=1e-9)


def test_validate_html_parity_plot(validated):
    code, _, err, d = validated
    assert code == 0, err
    html = (d / "p.html").read_text()
    assert html.lstrip().lower().startswith("<html") or "<html" in html[:2000].lower()
    assert "plotly" in html.lower() and "throughput_per_chip" in html


def test_validate_table(capsys):
    code, out, err = run(capsys, "validate", "--points", str(POINTS), "--no-aiconfigurator", "--efficiency", "spec")
    assert code == 0, err
    assert "validation (spec efficiencies)" in out and "inferencex" in out


def test_validate_missing_points_file(capsys, tmp_path):
    missing = tmp_path / "no_such_points.csv"
    line = one_error_line(*run(capsys, "validate", "--points", str(missing), "--no-aiconfigurator"))
    assert "no_such_points.csv" in line and "not found" in line


def test_validate_unknown_efficiency_set(capsys):
    line = one_error_line(*run(capsys, "validate", "--points", str(POINTS), "--no-aiconfigurator",
                               "--efficiency", "nonsense"))
    assert "efficiency" in line and "nonsense" in line


@pytest.mark.parametrize("args", [("--systems", "h200"), ()])
def test_calibrate_without_the_package(capsys, monkeypatch, tmp_path, args):
    monkeypatch.setitem(sys.modules, "aiconfigurator_core", None)  # importing it fails, as when not installed
    line = one_error_line(*run(capsys, "calibrate", *args, "--out-dir", str(tmp_path)))
    assert ".[calibrate]" in line and "aiconfigurator" in line
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_calibrate_unmeasured_system_without_the_package(capsys, monkeypatch, tmp_path):
    """A derived system needs its family's measured tables: the same clear error."""
    monkeypatch.setitem(sys.modules, "aiconfigurator_core", None)
    line = one_error_line(*run(capsys, "calibrate", "--systems", "mi300x", "--out-dir", str(tmp_path)))
    assert ".[calibrate]" in line
