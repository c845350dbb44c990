"""scripts/moe_path_choice.py (round 35 review): does the ``collector`` reading keep a kernel path for lighter work?

The claims checked: at EP 1 the grouped gate and the balanced routing put the same T·k assignments on the timed
rank, so a gated row that is fastest raw is never slower per assignment there and can be slower by both measures
only at EP > 1 — on B200's table it is on none (``certain`` 0); the configurations where it is slower by one
measure are under 1% of those with both kinds of path.
"""

from __future__ import annotations

import pytest
from script_module import load_script

pytest.importorskip("aiconfigurator_core")
sp = load_script("moe_path_choice")


def test_no_gated_row_is_kept_while_slower_by_both_measures():
    got = sp.path_choice("b200")
    assert got["both"] > 1000 and got["gated_fastest"] <= got["both"]
    assert got["certain"] == 0
    assert got["possible"] < 0.01 * got["both"]


def test_unknown_system_is_refused(monkeypatch):
    monkeypatch.setattr("sys.argv", ["moe_path_choice.py", "--systems", "h200"])
    with pytest.raises(SystemExit, match="--systems: no min_latency MoE rows for h200"):
        sp.main()
