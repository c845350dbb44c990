"""docs/agentic.md §4's worked tables are what scripts/check_agentic.py prints now: hold them to it.

The doc says its coding-agent tables (DeepSeek-R1 and Kimi K2.5 with the catalog's KV tiers, DeepSeek-R1 with HBM
only) and the per-turn lines under them are that script's output (the same numbers as `jalapeno compare --workload
agentic:coding-agent [--model kimi-k2.5]`). Until round 42 nothing checked it: the Kimi K2.5 table stayed round 39's
(61.0 peak tasks/h/chip on Jalapeño) for a round after the W4A16 expert form moved it to 59.0. Each printed row and
per-turn line must appear in the doc verbatim; a failure names the line to replace. The long-memory-chat tier table
and the simulator grid are not rerun here (minutes).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import check_agentic  # noqa: E402

DOC = (ROOT / "docs" / "agentic.md").read_text()
FIX = "rerun `python scripts/check_agentic.py --no-sim` and paste its tables into docs/agentic.md §4"


@pytest.mark.parametrize(("model", "tiers"), [("deepseek-r1", True), ("kimi-k2.5", True), ("deepseek-r1", False)])
def test_worked_table_is_the_scripts_output(model, tiers, capsys):
    check_agentic.worked(model, use_tiers=tiers)
    printed = capsys.readouterr().out
    title = next(line for line in printed.splitlines() if line.startswith("**"))
    assert title in DOC, f"docs/agentic.md lost the table {title!r}; {FIX}"
    # the block of the doc from this table's title to the next bold title: rows must match within it
    start = DOC.index(title)
    end = DOC.find("\n**", start + len(title))
    block = DOC[start : end if end > 0 else len(DOC)]
    rows = [line for line in printed.splitlines() if line.startswith(("| ", "- ")) and not line.startswith("| system")]
    assert len(rows) == 8, printed  # four systems: a table row and a per-turn line each
    stale = [line for line in rows if line not in block]
    assert not stale, f"docs/agentic.md {title}: these lines are printed now and not in the doc: {stale}; {FIX}"
