"""docs/scripts.md (scripts/gen_scripts_doc.py): every ``scripts/*.py`` has a row, and the page is current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from script_module import load_script

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))  # the generator imports scripts/_docgen.py, as when run as a script
gen = load_script("gen_scripts_doc")


def test_every_script_has_a_row_and_no_row_is_stale():
    page = (ROOT / "docs" / "scripts.md").read_text()
    listed = {ln.split("`")[1] for ln in page.splitlines() if ln.startswith("| `")}
    on_disk = {p.name for p in (ROOT / "scripts").glob("*.py")}
    assert on_disk - listed == set(), "scripts missing from docs/scripts.md: run scripts/gen_scripts_doc.py"
    assert listed - on_disk == set(), "docs/scripts.md lists removed scripts: run scripts/gen_scripts_doc.py"


def test_scripts_doc_is_current():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_scripts_doc.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_check_fails_on_a_stale_page(tmp_path, monkeypatch):
    stale = tmp_path / "scripts.md"
    page = gen.render()  # ~4 s (every script's docstring, every doc page read); --check's own render is this page
    stale.write_text(page.replace("| `run_loso.py` |", "| `run_loso_old.py` |"))
    monkeypatch.setattr(gen, "render", lambda: page)
    assert gen.main(["--check", "--out", str(stale)]) == 1


def test_parsing_rules_on_hand_written_docstrings():
    doc = ("What-if (not shipped): a thing. More words.\n\nRun: HOST_US=20 python scripts/x.py A [--b]"
           "   (~30 s)\n")
    assert gen.first_sentence(doc) == "What-if (not shipped): a thing."
    assert gen.run_line("x", doc) == "HOST_US=20 python scripts/x.py A [--b]"
    assert gen.run_line("x", "Usage: ``python scripts/x.py`` (prints)") == "python scripts/x.py"
    assert gen.run_line("x", "No command here.") == ""
    assert gen.kind_of("x", doc) == "what-if"
    assert gen.kind_of("fit_x", "") == "fit"
    assert gen.kind_of("gen_x_doc", "") == "doc generator"
    assert gen.kind_of("validation_x_sections", "") == "doc section"
    assert gen.kind_of("x_split", "Where the error sits.") == "diagnosis"
