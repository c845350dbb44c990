"""The Python API for notebooks (issue 15, part 4): scalar accessors, a short repr and frames.

Expected values come another way: the op table's rows (``op_rows``) summed by hand for bytes and
FLOPs, the frontier lengths for the frame sizes.
"""

from __future__ import annotations

import pytest

import jalapeno as jp
from jalapeno.errors import SpecError


@pytest.fixture(scope="module")
def r1():
    return jp.load_model("deepseek-r1"), jp.load_pricer("jalapeno"), jp.get_precision("fp8")


def test_one_point_scalars_and_repr(r1):
    m, pr, p = r1
    sc = jp.step_cost(m, pr, jp.Layout(dp=8, ep=8), p, jp.Batch.make(decode_seqs=64, decode_ctx=8192))
    rows = sc.op_rows(0)
    assert sc.n == 1
    assert sc.time_s() == float(sc.step_time_s[0])
    assert sc.bound_of() in ("compute", "hbm_bandwidth", "scale_up_link", "scale_out_link", "overhead")
    assert sc.flop() == pytest.approx(sum(r["flop"] for r in rows))
    assert sc.hbm_bytes() == pytest.approx(sum(r["weight_bytes"] + r["kv_bytes"] + r["act_bytes"] for r in rows))
    text = repr(sc)
    assert text.startswith("StepCost(deepseek-r1 on jalapeno, attn TP1 DP8 · MoE TP1 EP8, fp8: step ")
    assert f"{sc.time_s() * 1e3:.3g} ms" in text and sc.bound_of() in text and len(text) < 120


def test_many_points_need_an_index_and_give_a_frame(r1):
    m, pr, p = r1
    sc = jp.step_cost(m, pr, jp.Layout(dp=8, ep=8), p, jp.Batch.make(decode_seqs=[8, 64, 256], decode_ctx=8192))
    with pytest.raises(SpecError, match="holds 3 points"):
        sc.time_s()
    with pytest.raises(SpecError, match="outside the 3 points"):
        sc.time_s(3)
    assert sc.time_s(2) == float(sc.step_time_s[2]) > sc.time_s(0)
    df = sc.to_frame()
    assert len(df) == 3 and list(df.step_time_s) == [sc.time_s(i) for i in range(3)]
    assert {"bound", "layout", "attribution_compute_s", "memory_weights_bytes"} <= set(df.columns)
    assert "3 points" in repr(sc)


def test_comparison_frames(r1):
    m, pr, p = r1
    res = jp.compare_systems(m, [pr, jp.load_pricer("b200")], jp.get_workload("1k1k"), p, baseline="b200",
                             options=jp.SweepOptions(serving="agg", concurrency=(4.0, 64.0, 512.0)),
                             iso_interactivity=[10, 50])
    df = res.to_frame()
    assert len(df) == sum(len(sf.record().frontier) for sf in res.frontiers.values())
    assert set(df.system) == {"jalapeno", "b200"}
    assert len(res.frontiers["b200"].to_frame()) == (df.system == "b200").sum()
    r = res.ratios_frame()
    assert len(r) == 2 * 2 and set(r.interactivity) == {10, 50}
    assert (r[r.system == "b200"].ratio_per_chip.dropna() == 1.0).all()  # the baseline against itself
