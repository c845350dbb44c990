"""fit/aic_recipe_layout.py: the prefill layout InferenceX's metadata audit (PR #919) gives pre-audit aiconfigurator rows."""

from __future__ import annotations

import pytest

import jalapeno.fit.aic_recipe_layout as arl
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.specs.formats import get_precision


@pytest.fixture
def switch_on(monkeypatch):
    monkeypatch.setattr(arl, "RECIPE_LAYOUT_ON", True)


def _dep(prefill: Layout, decode: Layout, decode_workers: int = 1) -> Deployment:
    return Deployment(get_precision("fp8"), Pool(decode, decode_workers), prefill=Pool(prefill))


def test_the_audit_by_hand(switch_on):
    # InferenceX f316a0ef6 (PR #919): H200 FP8 TRT 1k/1k prefill dp-attn false -> true, 8k/1k true -> false;
    # B200 FP8 TRT 8k/1k prefill ep 8 -> 1, and the ctx1_gen1_tp8_batch1 entry's dp-attn true -> false as well
    cases = [
        ("h200", 1024, Layout(tp=8, ep=8), Layout(tp=8, ep=8), 9, 64, (1, 8, 8)),
        ("h200", 8192, Layout(dp=8, ep=8), Layout(dp=8, ep=8), 1, 16, (8, 1, 8)),
        ("b200", 8192, Layout(dp=8, ep=8), Layout(tp=8), 4, 8, (1, 8, 1)),
        ("b200", 8192, Layout(dp=8, ep=8), Layout(tp=8), 1, 1, (8, 1, 1)),
    ]
    for system, isl, stated, decode, workers, batch, want in cases:
        d = _dep(stated, decode, workers)
        e, note = arl.with_recipe_layout(d, system, "deepseek-r1", "trtllm", "fp8", isl, "2026-02-14", batch)
        assert (e.prefill.layout.tp, e.prefill.layout.dp, e.prefill.layout.ep) == want, (system, isl, batch)
        assert "f316a0ef6" in note
        assert e.decode == d.decode  # the decode pool is not the audit's (no GB200 row is touched either)


def test_left_alone_where_the_audit_says_nothing(switch_on):
    d = _dep(Layout(dp=8, ep=8), Layout(dp=8, ep=8))
    # after the fix, already audited; another system; B200 at 1k (the audit's B200 fixes are 8k/1k); SGLang; FP4
    assert arl.with_recipe_layout(d, "h200", "deepseek-r1", "trtllm", "fp8", 8192, "2026-03-23", 16)[0] is d
    assert arl.with_recipe_layout(d, "gb200-nvl72", "deepseek-r1", "trtllm", "fp8", 8192, "2026-02-05", 16)[0] is d
    assert arl.with_recipe_layout(d, "b200", "deepseek-r1", "trtllm", "fp8", 1024, "2026-02-12", 16)[0] is d
    assert arl.with_recipe_layout(d, "h200", "deepseek-r1", "sglang", "fp8", 8192, "2026-02-14", 16)[0] is d
    assert arl.with_recipe_layout(d, "b200", "deepseek-r1", "trtllm", "fp4", 8192, "2026-01-29", 16)[0] is d
    # an H200 1k row that already states DP8 is not a change
    assert arl.with_recipe_layout(d, "h200", "deepseek-r1", "trtllm", "fp8", 1024, "2026-02-14", 16)[0] is d


def test_switch_off_changes_nothing():
    assert arl.RECIPE_LAYOUT_ON is False  # shipped off (docs/gap_aic_ttft.md, round 51)
    d = _dep(Layout(dp=8, ep=8), Layout(dp=8, ep=8))
    assert arl.with_recipe_layout(d, "h200", "deepseek-r1", "trtllm", "fp8", 8192, "2026-02-14", 16) == (d, "")


def test_the_audited_rows_close_every_twin(monkeypatch):
    """Every pair of aiconfigurator rows that differ only in their stated prefill layout (scripts/adp_prefill_twins51.py)
    is one recipe measured before and after the audit: with the switch on both twins price the same prefill layout,
    and exactly those 17 pre-audit rows move."""
    pytest.importorskip("aiconfigurator_core")
    from script_module import load_script

    from jalapeno.fit.validate import load_aiconfigurator

    twins = load_script("adp_prefill_twins51")
    t = twins.twin_pairs(twins._sample())
    t = t[t.backend.str.contains("trt")]
    assert len(t) == 17
    assert (t.date_a < arl.AUDIT_DATE).all() and (t.date_b >= arl.AUDIT_DATE).all()
    monkeypatch.setattr(arl, "RECIPE_LAYOUT_ON", True)
    by = {p.id: p for p in load_aiconfigurator()[0]}
    for a, b in zip(t.a, t.b):
        la, lb = by[f"aic:{a}"].deployment.prefill.layout, by[f"aic:{b}"].deployment.prefill.layout
        assert (la.tp, la.dp, la.ep) == (lb.tp, lb.dp, lb.ep), (a, b)
    moved = {p.id for p in by.values() if "f316a0ef6" in str(p.notes)}
    assert moved == {f"aic:{a}" for a in t.a}
