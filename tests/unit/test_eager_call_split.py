"""The eager call-rate fit's declared split (fit/trt_prompt_graphs.eager_call_split), by hand, and validate's ``split``
column carrying it (fit/heldout.split_labels): one rule, read by scripts/trt_eager_host_calls.py and
scripts/trt_eager_context_floor.py too."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from script_module import load_script

from jalapeno.fit import client_warmup, stack_fit, trt_prompt_graphs
from jalapeno.fit.heldout import split_labels
from jalapeno.fit.trt_prompt_graphs import eager_call_split

WARM, COLD = "2026-02-05", "2025-12-15"  # either side of client_warmup.WARMUP_FROM (2026-01-21)


def _pt(pid, model, conc, system="b200", mode="agg", framework="trtllm 1.2.0rc6.post2"):
    return SimpleNamespace(
        id=pid,
        source="aiconfigurator",
        system=system,
        model=model,
        framework=framework,
        precision="fp4",
        isl=1024,
        osl=1024,
        mode=mode,
        concurrency=conc,
        deployment=object(),
        mapping="matched",
        measured={},
        client="inferencex-db",
        identified_from="",
    )


DSR, LLAMA, GPTOSS = "deepseek-r1", "llama-3.3-70b", "gpt-oss-120b"
POINTS = [
    _pt("aic:a", DSR, 2),
    _pt("aic:b", DSR, 1),
    _pt("aic:aa", DSR, 3),
    _pt("aic:c", LLAMA, 4),
    _pt("aic:d", DSR, 4),
    _pt("aic:e", GPTOSS, 8),
    _pt("aic:f", DSR, 4),
    _pt("aic:g", DSR, 6),
    _pt("aic:bb", DSR, 16),
    _pt("aic:h2", DSR, 4, system="h200"),
    _pt("aic:dg", DSR, 4, mode="disagg"),
    _pt("aic:sg", DSR, 4, framework="sglang 0.5.6"),
    _pt("aic:qw", "qwen3-235b", 4),
]
DATES = {p.id: COLD if p.id in ("aic:b", "aic:g") else WARM for p in POINTS}
NO_PREDICTION = {"aic:aa"}


def _predicted(rows):
    return {p.id for p in rows} - NO_PREDICTION


def test_the_rule_by_hand():
    got = eager_call_split(POINTS, predicted=_predicted, dates=DATES)
    # by hand: B200, aggregated, TensorRT-LLM, the three models, C <= 8, with a prediction -> a b c d e f g (aa has no
    # prediction, bb runs at C 16, h2 / dg / sg / qw are another system, mode, engine, model); sorted by id:
    # a b c d e f g; even a c e g, odd b d f. Even rows took part unless cold DeepSeek-R1: g is none.
    assert got == {
        "aic:a": "fit",
        "aic:b": "held_out",
        "aic:c": "fit",
        "aic:d": "held_out",
        "aic:e": "fit",
        "aic:f": "held_out",
        "aic:g": "none",
    }


def test_an_undated_deepseek_row_took_no_part():
    got = eager_call_split(POINTS, predicted=_predicted, dates={})
    assert (got["aic:a"], got["aic:c"], got["aic:e"]) == ("none", "fit", "fit")


def test_no_candidate_no_pricing():
    def boom(rows):
        raise AssertionError("priced")

    assert eager_call_split([_pt("aic:x", DSR, 4, system="h200")], predicted=boom, dates={}) == {}


def test_split_column_marks_the_eager_fit_rows(monkeypatch):
    monkeypatch.setattr(trt_prompt_graphs, "_ttft_predicted", _predicted)
    monkeypatch.setattr(client_warmup, "aic_row_dates", lambda: DATES)
    lab = split_labels(POINTS)
    # the stack split alone, DeepSeek-R1 group by concurrency: b1 fit, a2 held_out, aa3 fit, d4 held_out, f4 fit,
    # g6 held_out, bb16 fit; a fed the eager rate, so it is fit; d and g did not, they stay held_out
    own = stack_fit.split(stack_fit.fit_pool(POINTS))
    assert (own["aic:a"], own["aic:d"], own["aic:g"]) == ("held_out", "held_out", "held_out")
    assert [lab[i] for i in ("aic:b", "aic:a", "aic:aa", "aic:d", "aic:f", "aic:g", "aic:bb")] == [
        "fit",
        "fit",
        "fit",
        "held_out",
        "fit",
        "held_out",
        "fit",
    ]
    assert (lab["aic:c"], lab["aic:e"]) == ("fit", "fit")
    assert {i: v for i, v in lab.items() if i != "aic:a"} == {i: own.get(i, "none") for i in lab if i != "aic:a"}


@pytest.mark.parametrize("name", ["trt_eager_host_calls", "trt_eager_context_floor"])
def test_the_scripts_read_the_package_rule(name):
    # no copy of the rule: the scripts draw their halves from eager_call_split's labels, never by row parity
    text = Path(load_script(name).__file__).read_text()
    assert 'split == "fit"' in text and "% 2" not in text
    floor = load_script("trt_eager_context_floor")
    assert floor.eager_call_split is eager_call_split
    assert floor.LOW_LOAD == trt_prompt_graphs.EAGER_FIT_MAX_CONCURRENCY


def test_validate_hands_its_own_predictions_to_the_split(monkeypatch):
    # run_validation passes the ids it already priced (ttft_predicted) so the eager split does not price its
    # candidates a second time; the labels are those of the split's own pricing (here: _predicted by hand)
    monkeypatch.setattr(client_warmup, "aic_row_dates", lambda: DATES)

    def boom(rows):
        raise AssertionError("priced again")

    monkeypatch.setattr(trt_prompt_graphs, "_ttft_predicted", boom)
    handed = split_labels(POINTS, ttft_predicted={p.id for p in POINTS} - NO_PREDICTION)
    monkeypatch.setattr(trt_prompt_graphs, "_ttft_predicted", _predicted)
    assert handed == split_labels(POINTS)


def _boom(rows):
    raise AssertionError("priced the eager split's candidates again")


def test_validate_systems_labels_without_pricing_rows_it_does_not_print(monkeypatch):
    """validate -s gb200-nvl72 priced every b200 eager candidate (fit/trt_prompt_graphs.EAGER_FIT_SYSTEM) to label
    rows it never prints (the split labels b200's aiconfigurator rows only); -s b200 priced them a second time,
    beside its own rows. Neither prices them now (ux53: about 4.0-4.5 -> 2.6-2.7 s and 10.1-10.7 -> 8.3-9.9 s CPU),
    and -s b200's labels are those the candidates' own pricing gives (the old path: split_labels with no ids)."""
    from jalapeno.fit.data_quality import DEFAULT_POINTS
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validate import load_aiconfigurator
    from jalapeno.fit.validation_run import run_validation

    pytest.importorskip("aiconfigurator_core")
    monkeypatch.setattr(trt_prompt_graphs, "_ttft_predicted", _boom)
    res = run_validation(systems=("gb200-nvl72",))
    assert set(res["rows"].system) == {"gb200-nvl72"} and res["split_counts"]["held_out"] > 0
    res = run_validation(systems=("b200",))
    monkeypatch.undo()
    every = load_inferencex(DEFAULT_POINTS)[0] + load_aiconfigurator(None)[0]
    own = split_labels(every)  # the eager split pricing its candidates itself
    rows = res["rows"].drop_duplicates("id")
    assert (rows.split == "held_out").any() and (rows.split == "fit").any()
    assert dict(zip(rows.id, rows.split)) == {i: own[i] for i in rows.id}
