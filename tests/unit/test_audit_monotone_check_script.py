"""scripts/audit_monotone_check.py: its figures are docs/audit.md's, and the lattice effect it documents holds."""

from __future__ import annotations

import re
from pathlib import Path

from script_module import load_script

amc = load_script("audit_monotone_check")
AUDIT_MD = Path(__file__).resolve().parents[2] / "docs" / "audit.md"


def _figures(capsys) -> list[int]:
    amc.main()
    out = capsys.readouterr().out
    return [int(v.replace(",", "")) for v in re.findall(r"tok_s_per_kw@50 ([\d,]+) tok/s/kW", out)]


def test_docs_quote_the_scripts_figures(capsys):
    """docs/audit.md, 'Assumptions and limits', quotes the six values (own worker pairs, then with 24 and
    32 prefill workers, each at 4, 1 and 0.32 us per kernel launch)."""
    own, wide = _figures(capsys)[:3], _figures(capsys)[3:]
    text = " ".join(AUDIT_MD.read_text(encoding="utf-8").split())
    assert (f"is {own[0]:,} tok/s/kW with `efficiency.kernel_launch_s` at 4 µs, {own[1]:,} at 1 µs and "
            f"{own[2]:,} at 0.32 µs") in text
    assert f"the same figures are {wide[0]:,}, {wide[1]:,} and {wide[2]:,}" in text


def test_a_faster_launch_can_lower_the_metric_and_wider_pairs_raise_it(capsys):
    """The documented shape, not the code's numbers: a 4x faster kernel launch lowers the metric on the
    sweep's own worker pairs, and here the added prefill workers raise each value (more deployments;
    not a rule: an added frontier point can move the interpolation either way)."""
    v = _figures(capsys)
    assert v[1] < v[0]
    assert all(w >= o for o, w in zip(v[:3], v[3:]))
    assert amc.sweep_mod.PREFILL_WORKERS == (1, 2, 3, 4, 6, 8, 12, 16)  # restored after the run
