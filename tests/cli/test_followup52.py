"""Round 52's follow-up (followup52) to ux52: compare's chart closes with the report page's Reproduce section (the
command as typed and the data versions), the multi-workload compare prints each workload's per-rack line, and each
per-chip power figure compare prints points at its source, as the price basis lines do."""

from __future__ import annotations

import hashlib
import html
import re
import shlex
from importlib import resources
from importlib.metadata import version

from cli_runner import run

SMALL = ("compare", "-m", "llama-3.3-70b", "-w", "1k1k", "-s", "b200,h200")


def _digest(folder: str) -> str:
    """By the definition the line states: SHA-256 over the folder's .toml files in name order, each file's name then
    its bytes, the first 12 hex digits (computed here, not read from the code)."""
    h = hashlib.sha256()
    root = resources.files("jalapeno") / "data" / folder
    for f in sorted((p for p in root.iterdir() if p.name.endswith(".toml")), key=lambda p: p.name):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def test_the_compare_chart_names_the_command_and_data_that_wrote_it(capsys, tmp_path):
    chart = tmp_path / "c.html"
    code, _, err = run(capsys, *SMALL, "--html", str(chart))
    assert code == 0, err
    text = chart.read_text()
    repro = [html.unescape(p) for p in re.findall(r'<p class="reproduce">(.*?)</p>', text)]
    assert "<h2>Reproduce</h2>" in text and len(repro) == 2
    assert repro[0] == "reproduce: jalapeno " + shlex.join([*SMALL, "--html", str(chart)])
    assert repro[1].startswith(
        f"versions: jalapeno {version('jalapeno')}; shipped data: systems {_digest('systems')}, "
        f"calibration {_digest('calibration')} "
    )
    assert text.index("<h2>Reproduce</h2>") < text.index("</body>")  # inside the page, under the chart
