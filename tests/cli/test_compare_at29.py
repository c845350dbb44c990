"""``compare``'s default iso-interactivity columns and its cells below a frontier's start (round 29, compare29).

The defaults (35, 60, 100 tok/s/user: analysis/comparison.DEFAULT_ISO_INTERACTIVITY, its sources there) sit
inside every default system's frontier on the default compare, so no column reads a peak; a speed below a
frontier's start reads that side's peak, the best throughput at or above the speed, flagged. Expected values
come from the frontier table of the same run (its slowest point and its peak), not from the ratio code."""

from __future__ import annotations

import json

from cli_runner import run


def _frontier_ends(rec: dict) -> dict:
    """(slowest interactivity, fastest interactivity, peak throughput per chip) of each system's frontier table."""
    out = {}
    for name, s in rec["systems"].items():
        xs = [p["interactivity"] for p in s["frontier"]]
        out[name] = (min(xs), max(xs), max(p["throughput_per_chip"] for p in s["frontier"]))
    return out


def test_the_default_columns_are_35_60_100_and_inside_every_default_frontier(default_compare, default_compare_json):
    from jalapeno.analysis.comparison import DEFAULT_ISO_INTERACTIVITY
    import inspect

    from jalapeno.cli.report_cmd import report
    from jalapeno.cli.serving_cmds import AT_DEFAULT

    assert DEFAULT_ISO_INTERACTIVITY == (35.0, 60.0, 100.0)
    assert AT_DEFAULT == "35,60,100"  # the CLI's literal (not imported, for start-up) matches the API's
    assert inspect.signature(report).parameters["at"].default.default == AT_DEFAULT  # report's --at too
    code, out, err, _ = default_compare  # ``jalapeno compare`` and ``compare --json --html ''``, each run once (conftest)
    assert code == 0, err
    header = next(ln for ln in out.splitlines() if "@35 tok/s/user" in ln)
    cols = [c.strip() for c in header.split("┃")[1:-1]]
    # round 44: the per-kW and per-$ ratios in each cell's brackets, at the peak and at each speed
    assert cols == ["system", "peak (kW, $)", "max tok/s/user", "@35 tok/s/user (kW, $)", "@60 tok/s/user (kW, $)",
                    "@100 tok/s/user (kW, $)"]
    assert "[below frontier start: who]:" in " ".join(out.split())  # the footnote
    code, js, err, _ = default_compare_json
    assert code == 0, err
    ends = _frontier_ends(json.loads(js))
    # every default system's frontier (DeepSeek-R1 8k1k, each its native precisions) starts below 35 and ends
    # above 100 tok/s/user: every default column is a number at an interactivity the frontier reaches
    assert all(lo < 35.0 and hi > 100.0 for lo, hi, _ in ends.values()), (
        f"a default frontier no longer spans 35-100 tok/s/user ({ends}): revisit DEFAULT_ISO_INTERACTIVITY")
    assert "below frontier start" not in out.split("operating tiers")[0].split("ratios vs")[1].split("└")[0]


def test_a_speed_below_every_start_reads_the_peak_ratio_flagged(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ("compare", "-m", "gpt-oss-120b", "--systems", "jalapeno,gb300-nvl72", "--serving", "agg", "--at", "1,35")
    code, js, err = run(capsys, *args, "--json")
    assert code == 0, err
    rec = json.loads(js)
    ends = _frontier_ends(rec)
    (lo_a, _, peak_a), (lo_b, _, peak_b) = ends["jalapeno"], ends["gb300-nvl72"]
    assert lo_a > 1.0 and lo_b > 1.0  # 1 tok/s/user is below both frontiers' slowest point
    row = rec["comparisons"]["jalapeno"]["iso_interactivity"]["throughput_per_chip"][0]
    assert row["x"] == 1.0 and row["status_a"] == row["status_b"] == "below_frontier_start"
    # each side's peak from its frontier table: the best throughput at any speed >= 1 tok/s/user
    assert abs(row["ratio"] - peak_a / peak_b) <= 1e-12 * peak_a / peak_b
    code, out, err = run(capsys, *args, "--html", "")
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if ln.startswith("│ jalapeno") and "x" in ln)
    cells = [c.strip() for c in line.split("│")[1:-1]]
    assert cells[3].startswith(f"{peak_a / peak_b:.2f}x (")  # @1: the peak ratio (per kW and $ in brackets) ...
    assert cells[3].split(")")[0] + ")" == cells[1]  # ... the very text of the peak column
    assert "[below frontier start: both]" in cells[3]  # 1 tok/s/user is below both frontiers' starts
