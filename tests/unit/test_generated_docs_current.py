"""The generated pages whose figures follow the calibration (docs/chip.md, docs/op_table.md) are current.

docs/chip.md had drifted from its generator for several rounds (figures 1-3% off, and a sentence
hand-edited into the page that the script did not write); these tests fail as soon as a calibration or
code change moves a figure without the page being regenerated.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script", ["gen_chip_doc.py", "gen_op_table_doc.py"])
def test_generated_page_is_current(script):
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / script), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, f"run scripts/{script}: {r.stdout}{r.stderr}"


def test_check_fails_on_a_stale_chip_page(tmp_path):
    page = (ROOT / "docs" / "chip.md").read_text()
    stale = tmp_path / "chip.md"
    stale.write_text(page.replace("the special case of one slice", "the special case of two slices"))
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_chip_doc.py"), "--check", "--out", str(stale)],
                       capture_output=True, text=True)
    assert r.returncode == 1


def test_collectives_page_is_current():
    """docs38: docs/collectives.md had drifted from scripts/check_collectives.py (the stacks' refits moved its
    TP-scaling tables, the GB200/GB300 ramps and its prose figures), and round 26 had hand-added a section the
    script did not write (now scripts/collectives_engine_section.engine_allreduce_trials), which a regeneration
    would have deleted. Its kernel decomposition reads aiconfigurator-core's tables: the [calibrate] extra."""
    pytest.importorskip("aiconfigurator_core")
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_collectives.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"run scripts/check_collectives.py: {r.stdout}{r.stderr}"
