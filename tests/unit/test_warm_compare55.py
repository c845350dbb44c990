"""cli/compare_lines.warm_compare (round 55, code55): the first-use work of what ``compare`` prints after its sweeps,
done while the sweeps run in worker processes. It imports and loads caches only: each check runs in a fresh
interpreter (a module, once imported, stays for the process), cold beside warmed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")

#: what print_comparison and compare import on first use after the sweeps (cli/compare_lines.py, cli/serving_cmds.py)
PRINT_PATH = (
    "jalapeno.analysis.capacity",
    "jalapeno.analysis.estimated_peaks",
    "jalapeno.analysis.price_reason",
    "jalapeno.cost.tiles",
    "jalapeno.report.cell_notes",
    "jalapeno.report.narrow",
    "jalapeno.report.tables",
    "jalapeno.report.win_tables",
    "rich._emoji_codes",
)

SCRIPT = """
import io, json, sys
from rich.console import Console
mode = sys.argv[1]
if mode != "cold":
    from jalapeno.cli.compare_lines import warm_compare
    warm_compare(mode == "chart")
loaded = sorted(m for m in sys.modules if m.startswith(("jalapeno.", "rich._emoji", "plotly")))
out = io.StringIO()
Console(file=out, width=80, color_system=None).print("tiers :smile: fast ≥ 100 · 35 tok/s/user [bold]x[/bold]")
print(json.dumps({"loaded": loaded, "printed": out.getvalue()}))
"""


def _run(mode: str) -> dict:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", SCRIPT, mode], env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def test_warming_loads_the_print_path_and_prints_the_same():
    cold, warm = _run("cold"), _run("print")
    assert not set(PRINT_PATH) & set(cold["loaded"])  # a cold process has none of them: the test can tell
    assert set(PRINT_PATH) <= set(warm["loaded"])
    assert not any(m.startswith("plotly") for m in warm["loaded"])  # no chart: no plotly
    assert warm["printed"] == cold["printed"]
    assert ":smile:" not in cold["printed"] and "tiers " in cold["printed"]  # rich replaced the emoji code


def test_with_the_chart_plotly_and_its_page_writer_load_too():
    chart = _run("chart")
    assert "plotly.io._html" in chart["loaded"] and "plotly.subplots" in chart["loaded"]
    assert set(PRINT_PATH) <= set(chart["loaded"])
