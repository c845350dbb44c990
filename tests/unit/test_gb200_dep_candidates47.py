"""scripts/gb200_dep_candidates47.py: TensorRT-LLM's LM-head TP size under attention DP, the tokens a verify step
emits, and the measured one-sided all-to-all it reads (expected values worked by hand or read off the table in the
round-44 doc section, docs/gap_disagg_overprediction.md "MNNVL all-to-all floor")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import gb200_dep_candidates47 as g  # noqa: E402


def test_lm_head_tp_buckets():
    # create_lm_head_tp_mapping: 256 // rows, next power of two, clamped to [1, gpus_per_node] (4 on a GB200 tray)
    assert g.lm_head_tp(4) == 4  # 64 -> 64 -> 4 (row 7: 4 sequences a rank)
    assert g.lm_head_tp(256) == 1  # 1 -> 1 (row 9)
    assert g.lm_head_tp(100) == 2  # 256 // 100 = 2 -> 2
    assert g.lm_head_tp(70) == 4  # 256 // 70 = 3 -> next power of two 4
    assert g.lm_head_tp(1000) == 1  # 0 -> 1
    assert g.lm_head_tp(4, gpus_per_node=8) == 8


def test_accepted_per_step():
    assert g.accepted_per_step(0.8, 3) == pytest.approx(1 + 0.8 + 0.64 + 0.512)
    assert g.accepted_per_step(0.8, 1) == pytest.approx(1.8)
    assert g.accepted_per_step(0.5, 0) == pytest.approx(1.0)


def test_one_sided_all_to_all_reads_the_table():
    tab = g.a2a_one_sided(32)
    assert tab is not None
    # dispatch + combine at EP32: 53.4 us at 1 token a rank, 58.0 at 16 (round 44's table, read by hand)
    assert g._loglog(tab, 1.0) * 1e6 == pytest.approx(53.4, abs=0.2)
    assert g._loglog(tab, 16.0) * 1e6 == pytest.approx(58.0, abs=0.2)
    assert g.a2a_one_sided(3) is None
