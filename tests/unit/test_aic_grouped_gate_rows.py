"""The zero-bias grouped gate replica (fit/collector_routing.py, moved there from scripts/aic_grouped_gate_rows.py in
round 35) and the script's HBM bound, against hand counts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import aic_grouped_gate_rows as g  # noqa: E402

from jalapeno.fit import collector_routing as cr  # noqa: E402


def test_balanced_picks_one_per_group_at_deepseek_shape():
    # stride ceil(256/8) = 32 = the group size: token i's picks are i, i+32, ..., i+224, one per group
    p = cr.balanced_picks(64, 256, 8)
    assert p[5].tolist() == [5 + 32 * j for j in range(8)]
    assert sorted((p[5] // 32).tolist()) == list(range(8))


@pytest.mark.parametrize("tokens, expected", [
    (4, 16 + 4),     # 4 tokens x their 4 picks in groups 0-3 + the 4 tie picks (experts 0-3; none picked)
    (32, 4 * 32),    # tokens 0..31 pick i+32j, j<4: all 128 experts of groups 0-3 (the tie picks among them)
    (128, 128),      # never more than the 4 kept groups
])
def test_grouped_gate_touched_by_hand(tokens, expected):
    assert g.grouped_gate_touched(tokens, 256, 8) == expected


def test_rank0_carries_the_whole_load_at_ep2():
    # groups 0-3 = experts 0..127 = EP rank 0 of 2: all T*k assignments land there
    load, touched = cr.grouped_gate_rank0(48, 256, 8, 2)
    assert (load, touched) == (48 * 8, 128)
    # EP 8: rank 0 = group 0 (experts 0..31). Each token's group-0 balanced pick is expert i mod 32, and its 4
    # tie picks are the 4 lowest unpicked ids of groups 0-3, all in group 0: 5 assignments per token on rank 0;
    # 48 tokens reach every i mod 32
    assert cr.grouped_gate_rank0(48, 256, 8, 8) == (48 * 5, 32)


def test_hbm_bound_by_hand():
    # 3 * 7168 * 2048 elements * 0.5625 B = 24.77 MB per expert; 1 ms at 8 TB/s streams 8 GB = 323 experts
    assert g.hbm_bound_experts(1e-3, 8e12, 7168, 2048) == pytest.approx(8e9 / (3 * 7168 * 2048 * 0.5625))
    assert round(g.hbm_bound_experts(1e-3, 8e12, 7168, 2048)) == 323
