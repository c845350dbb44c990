"""HBM capacity in one unit everywhere a user reads it: the CLI prints GiB (hardware list/show),
docs/catalog.md's per-chip summary follows it, and a range error names the key the file gave."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from cli_runner import check_error, run

ROOT = Path(__file__).resolve().parents[2]


def _summary_rows() -> dict[str, list[str]]:
    text = (ROOT / "docs" / "catalog.md").read_text()
    part = text.split("## Per-chip summary", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in part.splitlines():
        m = re.match(r"\| `([a-z0-9.-]+)` \|", line)
        if m:
            rows[m.group(1)] = [c.strip() for c in line.strip("|").split("|")]
    return rows


def test_catalog_summary_gives_hbm_in_gib_with_the_datasheet_gb():
    text = (ROOT / "docs" / "catalog.md").read_text()
    assert "| HBM GiB | usable GiB |" in text and "| HBM GB |" not in text
    rows = _summary_rows()
    # by hand: 141e9 / 2^30 = 131.32; 192e9 / 2^30 = 178.81, 186e9 / 2^30 = 173.23; Jalapeño quotes 216 GiB
    assert rows["h200"][5] == "131.3 (141 GB)"
    assert rows["gb200-nvl72"][5:7] == ["178.8 (192 GB)", "173.2 (186 GB)"]
    assert rows["jalapeno"][5] == "216"


def test_catalog_doc_is_current():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_catalog_doc.py"), "--check"],
                       capture_output=True, text=True, env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr


def test_cli_hbm_column_is_gib(capsys):
    code, out, _ = run(capsys, "hardware", "list")
    assert code == 0 and "HBM GiB" in out and "131.3" in out  # H200: 141 GB = 131.3 GiB


def test_gib_key_out_of_range_is_named_in_gib(capsys):
    """--set chip.hbm_capacity_gib=100000 said 'chip.hbm_capacity_gb: 1.074e+05 GB', a key the
    file does not have, in another unit."""
    code, out, err = run(capsys, "hardware", "show", "jalapeno", "--set", "chip.hbm_capacity_gib=100000")
    # the GB range 0.1-10000 in GiB, by hand: 0.1e9/2^30 = 0.0931, 1e13/2^30 = 9313
    check_error(code, out, err, "chip.hbm_capacity_gib: 1e+05 GiB", "0.0931-9313 GiB")
    assert "hbm_capacity_gb" not in err
    check_error(*run(capsys, "hardware", "show", "jalapeno", "--set", "chip.hbm_usable_gib=0.01"),
                "chip.hbm_usable_gib: 0.01 GiB")
    check_error(*run(capsys, "hardware", "show", "h200", "--set", "chip.hbm_usable_gb=0.01"),
                "chip.hbm_usable_gb: 0.01 GB", "0.1-10000 GB")
