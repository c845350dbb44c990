"""The generated pages whose figures follow the calibration (docs/chip.md, docs/op_table.md) are current.

docs/chip.md had drifted from its generator for several rounds (figures 1-3% off, and a sentence
hand-edited into the page that the script did not write); these tests fail as soon as a calibration or
code change moves a figure without the page being regenerated.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pytest
from script_module import load_script

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))  # the generators import scripts/_docgen.py, as when run as a script


@pytest.fixture(scope="module")
def chip_doc():
    """scripts/gen_chip_doc.py loaded once, its ``render`` run once for both chip-page tests (it was two
    subprocesses, each rendering the page: ~7 s of CPU apiece). ``render`` is pure: it reads the package's shipped
    data through its API, with no clock, no randomness and no file written, and nothing in this module changes a
    switch it reads; so its one result is the text each ``--check`` compares. ``main`` reads ``render`` from the
    module's globals when it is called, so the cached one is the one both checks run."""
    mod = load_script("gen_chip_doc")
    mod.render = functools.cache(mod.render)
    return mod


def test_chip_page_is_current(chip_doc, capsys):
    code = chip_doc.main(["--check"])
    assert code == 0, f"run scripts/gen_chip_doc.py: {capsys.readouterr().err}"


@pytest.mark.parametrize("script", ["gen_op_table_doc.py"])
def test_generated_page_is_current(script):
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / script), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, f"run scripts/{script}: {r.stdout}{r.stderr}"


def test_check_fails_on_a_stale_chip_page(chip_doc, tmp_path, capsys):
    page = (ROOT / "docs" / "chip.md").read_text()
    stale = tmp_path / "chip.md"
    stale.write_text(page.replace("the special case of one slice", "the special case of two slices"))
    assert stale.read_text() != page  # the edit took: the sentence is on the page
    assert chip_doc.main(["--check", "--out", str(stale)]) == 1
    assert "is out of date; run scripts/gen_chip_doc.py" in capsys.readouterr().err


def test_collectives_page_is_current():
    """docs38: docs/collectives.md had drifted from scripts/check_collectives.py (the stacks' refits moved its
    TP-scaling tables, the GB200/GB300 ramps and its prose figures), and round 26 had hand-added a section the
    script did not write (now scripts/collectives_engine_section.engine_allreduce_trials), which a regeneration
    would have deleted. Its kernel decomposition reads aiconfigurator-core's tables: the [calibrate] extra."""
    pytest.importorskip("aiconfigurator_core")
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_collectives.py"), "--check"], capture_output=True, text=True
    )
    assert r.returncode == 0, f"run scripts/check_collectives.py: {r.stdout}{r.stderr}"
