"""validate's ``split`` column and ``--held-out`` view (fit/heldout.py): the labels are fit/stack_fit.split's own,
drawn over the stack fits' pool, plus the front-end calibration points; the held-out figures count only
``held_out`` and ``none`` rows, and the counts add up."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from jalapeno.errors import SpecError
from jalapeno.fit import stack_fit
from jalapeno.fit.heldout import JUDGED, SPLITS, check_held_out, frontend_calibration, split_labels


def _pt(pid, conc, source="inferencex", system="b200", model="deepseek-r1", framework="sglang", isl=1024,
        mapping="matched", ttft=None):
    return SimpleNamespace(id=pid, source=source, system=system, model=model, framework=framework, isl=isl, osl=1024,
                           mode="agg", concurrency=conc, deployment=object(), mapping=mapping, precision="fp8",
                           measured={"ttft_s": ttft} if ttft else {}, identified_from="")


@pytest.fixture
def points():
    group_a = [_pt(f"a{c}", c) for c in (64, 4, 16, 8, 32)]  # out of order on purpose
    group_b = [_pt(f"b{c}", c, isl=8192) for c in (2, 1)]  # another ISL: its own group
    # an H200 SGLang group whose points at concurrency <= 8 with a TTFT are the front end's calibration split
    group_c = [_pt(f"c{c}", c, system="h200", ttft=0.3) for c in (32, 2, 16, 4)]
    others = [_pt("a12", 12, mapping="searched_best"),  # in group A's key but not matched: in no fit
              _pt("m1", 1, model="minimax-m2.5"),  # stack_fit.HELD_OUT_MODELS
              _pt("p1", 1, source="mlperf")]  # MLPerf rows never enter a fit
    return group_a + group_b + group_c + others


def test_split_alternates_by_concurrency_as_stack_fit_does(points):
    lab = split_labels(points)
    # by hand: group A sorted by concurrency 4, 8, 16, 32, 64 alternates fit / held out, starting with fit;
    # a12 (not matched) is outside the pool and does not shift the alternation
    assert [lab[f"a{c}"] for c in (4, 8, 16, 32, 64)] == ["fit", "held_out", "fit", "held_out", "fit"]
    assert (lab["b1"], lab["b2"]) == ("fit", "held_out")
    # group C by concurrency 2, 4, 16, 32: fit, held_out, fit, held_out; c4 is a front-end point, so fit
    assert [lab[f"c{c}"] for c in (2, 4, 16, 32)] == ["fit", "fit", "fit", "held_out"]
    assert (lab["a12"], lab["m1"], lab["p1"]) == ("none", "none", "none")
    # one source of truth: every stack-fit label is stack_fit.split's own on its pool
    own = stack_fit.split(stack_fit.fit_pool([p for p in points if p.source != "mlperf"]))
    front = {p.id for p in frontend_calibration(points)}
    assert front == {"c2", "c4"}
    assert {i: v for i, v in lab.items() if i in own and i not in front} == \
        {i: v for i, v in own.items() if i not in front}


def test_a_users_points_file_is_in_no_fit(points):
    aic = [_pt(f"x{c}", c, source="aiconfigurator") for c in (1, 2)]
    lab = split_labels(points + aic, shipped_inferencex=False)
    assert {lab[p.id] for p in points} == {"none"}
    assert (lab["x1"], lab["x2"]) == ("fit", "held_out")  # the other sources' split is untouched


@pytest.mark.parametrize("kw, word", [({"points_path": "mine.csv", "stack": None}, "--points"),
                                      ({"points_path": None, "stack": "default"}, "--stack default")])
def test_bad_combinations_error_naming_the_option(kw, word):
    with pytest.raises(SpecError) as e:
        check_held_out(True, **kw)
    assert e.value.field == "--held-out" and word in e.value.problem and "drop" in e.value.fix
    check_held_out(False, **kw)  # without --held-out they are fine


def test_held_out_counts_add_up():
    from jalapeno.fit.validation_run import run_validation

    every = run_validation(None, use_aiconfigurator=False, systems=("h100",))
    held = run_validation(None, use_aiconfigurator=False, systems=("h100",), held_out=True)
    rows, c = every["rows"], every["split_counts"]
    assert set(rows["split"]) <= set(SPLITS) and c == held["split_counts"]
    assert sum(c.values()) == rows.id.nunique()
    assert c["fit"] > 0 and c["held_out"] > 0
    judged = set(rows.id[rows["split"].isin(JUDGED)])
    assert set(held["rows"].id) == judged and len(judged) == c["held_out"] + c["none"]
    for m, d in every["overall"]["inferencex"].items():  # held-out n = all rows' n less the fit rows'
        ok = rows[(rows.quality == "") & (rows.metric == m)].dropna(subset=["error"])
        n_fit = int((ok["split"] == "fit").sum())
        assert held["overall"].get("inferencex", {}).get(m, {"n": 0})["n"] == d["n"] - n_fit
