"""Round 52 architect fixes (arch52): what the chip would need, priced and spelled one way.

Expected values are worked by hand in each test's comments (from the system files and the model's formulas), not
read off the code's printed text.
"""

from __future__ import annotations

import re
from pathlib import Path

from cli_runner import run

ROOT = Path(__file__).resolve().parents[2]


def test_a_ratio_at_x_claim_is_spelled_one_way_in_output_help_and_docs(capsys):
    """audit's title wrote throughput_per_chip_ratio@50 (analysis/claims.Claim.name) where README, docs/audit.md and
    compare's audit hint wrote throughput_per_chip@50_ratio (both parse). One spelling: METRIC_ratio@X, the one the
    output writes; the help names it, and says the other is read the same."""
    code, out, err = run(capsys, "audit", "--help")
    assert code == 0, err
    assert "throughput_per_chip_ratio@50=1.0" in re.sub(r"[\s│]+", "", out)  # rich wraps the help in a box
    at_then_ratio = re.compile(r"@[0-9X{][^\s=`]{0,14}_ratio\b")
    for doc in ("README.md", "docs/audit.md", "src/jalapeno/report/win_tables.py"):
        text = (ROOT / doc).read_text()
        hits = [m.group(0) for m in at_then_ratio.finditer(text)]
        assert hits == [], f"{doc} spells a ratio claim @X_ratio: {hits}"
    assert "throughput_per_chip_ratio@50=1.0" in (ROOT / "README.md").read_text()
