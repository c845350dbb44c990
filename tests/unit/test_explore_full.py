"""analysis/explore_full.py: a design's figure as ``compare`` prices it, and the lines explore prints with it."""

from __future__ import annotations

import math

import pytest

from jalapeno.analysis.explore_full import compare_lines, compare_precisions, compare_score, full_case_metrics
from jalapeno.specs.design_space import design_space_from_dict


def _space(power: str = "chip") -> object:
    return design_space_from_dict(
        {
            "name": "t",
            "base": "jalapeno",
            "objective": {"metrics": ["tok_s_per_kw"], "min_interactivity": 100, "power": power},
            "cases": [{"model": "deepseek-r1", "workload": "8k1k"}],
            "params": {"chip.peak_dense_tflops.fp8": {"low": 2000, "high": 4000}},
        }
    )


def test_compare_score_is_the_weighted_geometric_mean_of_ratios():
    # by hand: ratios 2 and 1, weights 3 and 1 -> 2 ** (3/4)
    figs = [
        {"base": {"compare": {"m": 50.0}}, "design": {"compare": {"m": 100.0}}},
        {"base": {"compare": {"m": 7.0}}, "design": {"compare": {"m": 7.0}}},
    ]
    assert compare_score(figs, [3.0, 1.0], "m") == pytest.approx(2**0.75)
    assert math.isnan(compare_score([{"base": {"compare": {}}, "design": {"compare": {}}}], [1.0], "m"))


def test_compare_precisions_pinned_and_native():
    from jalapeno.specs.catalog import load_model, load_system

    r1 = load_model("deepseek-r1")
    assert compare_precisions(r1, load_system("jalapeno"), "fp8") == ("fp8",)
    # Jalapeño computes FP8 and FP4 (its spec: 3.4 / 13.4 PF dense), H100 FP8 only (Hopper has no FP4 math)
    assert set(compare_precisions(r1, load_system("jalapeno"), None)) == {"fp8", "fp4"}
    assert "fp4" not in compare_precisions(r1, load_system("h100"), None)


def test_full_figure_is_compares_fast_tier():
    """The figure equals the Fast tier compare_systems/analysis.compare.tiers read (an independent path: the
    comparison's own frontier and tier rule), and is well above the coarse figure (FP4 and disagg; 2.22x)."""
    from jalapeno.analysis.compare import tiers
    from jalapeno.analysis.comparison import compare_systems
    from jalapeno.analysis.explore import make_evaluator
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.workload import get_workload

    sp = _space()
    p = load_pricer("jalapeno")
    m, wl = load_model("deepseek-r1"), get_workload("8k1k")
    got = full_case_metrics(sp, p, m, wl)
    c = compare_systems(m, [p], wl, None, convention="chip", precisions={"jalapeno": ["fp8", "fp4"]})
    fast = tiers(c.frontiers["jalapeno"].as_frontier(), {"fast": 100.0})["fast"]["throughput"]
    assert got.metrics["tok_s_per_chip"] == pytest.approx(fast, rel=1e-9)
    assert got.metrics["tok_s_per_kw"] == pytest.approx(fast / 0.7, rel=1e-9)  # Jalapeño's chip TDP, 700 W
    coarse = make_evaluator(sp).base_metrics[0]["tok_s_per_chip"]
    assert got.metrics["tok_s_per_chip"] > 2 * coarse


def test_full_figure_names_an_unreachable_floor():
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.workload import get_workload

    sp = _space()
    sp = sp.model_copy(update={"objective": sp.objective.model_copy(update={"min_interactivity": 5000.0})})
    r = full_case_metrics(sp, load_pricer("jalapeno"), load_model("deepseek-r1"), get_workload("8k1k"))
    assert r.metrics == {} and "never reaches 5000 tok/s/user" in r.reason


def testcompare_lines():
    out = {
        "base": "jalapeno",
        "objective": {"min_interactivity": 100, "power": "chip"},
        "compare": {
            "trial": 7,
            "metric": "tok_s_per_kw",
            "score": 3.0,
            "cases": [
                {
                    "model": "deepseek-r1",
                    "workload": "8k1k",
                    "reason": "",
                    "base": {"coarse": {"tok_s_per_kw": 1000.0}, "compare": {"tok_s_per_kw": 2500.0}},
                    "design": {"coarse": {"tok_s_per_kw": 2000.0}, "compare": {"tok_s_per_kw": 7500.0}},
                }
            ],
        },
    }
    text = "\n".join(compare_lines(out))
    assert "base jalapeno on deepseek-r1 8k1k: compare 2,500, coarse 1,000 (compare / coarse 2.50)" in text
    assert "best design (trial 7) on deepseek-r1 8k1k: compare 7,500, coarse 2,000 (compare / coarse 3.75)" in text
    assert "best design on compare's figures: 3 x base" in text
    assert compare_lines({"base": "jalapeno"}) == []  # a run stored before round 45
    # newuser46: a figure past 10,000 read '1.013e+04' beside 'coarse 2,501' (',.4g')
    out["compare"]["cases"][0]["design"]["compare"]["tok_s_per_kw"] = 10130.4
    text = "\n".join(compare_lines(out))
    assert "compare 10,130, coarse 2,000 (compare / coarse 5.07)" in text  # 10,130.4 / 2,000 = 5.065


def _with_sweep(sp, **kw):
    return sp.model_copy(update={"sweep": sp.sweep.model_copy(update=kw)})


def test_native_precisions_read_the_union_of_each_precisions_sweep():
    """``[sweep] precisions = "native"``: the base's figure is the frontier of the FP8 and FP4 coarse sweeps together,
    computed here from the two sweeps directly; at least each one alone, and on R1 at 100 tok/s/user above twice the
    FP8-only figure (FP4 weights and experts halve the bytes a memory-bound decode step reads)."""
    import numpy as np

    from jalapeno.analysis.explore import make_evaluator, sweep_options, throughput_at_floor
    from jalapeno.analysis.sweep import sweep
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    sp = _space()
    native = make_evaluator(_with_sweep(sp, precisions="native")).base_metrics[0]["tok_s_per_chip"]
    case = make_evaluator(sp).base_metrics[0]["tok_s_per_chip"]
    p, m, wl = load_pricer("jalapeno"), load_model("deepseek-r1"), get_workload("8k1k")
    xs, ys, each = [], [], []
    for name in ("fp8", "fp4"):
        q = sweep(m, p, wl, get_precision(name), sweep_options(sp)).points
        ok = q.feasible & (q.throughput_per_chip > 0) & np.isfinite(q.interactivity)
        xs.append(q.interactivity[ok])
        ys.append(q.throughput_per_chip[ok])
        each.append(throughput_at_floor(xs[-1], ys[-1], 100.0))
    assert native == pytest.approx(throughput_at_floor(np.concatenate(xs), np.concatenate(ys), 100.0), rel=1e-12)
    assert native >= max(each) and case == pytest.approx(each[0], rel=1e-12)
    assert native > 2 * case


def test_native_precisions_keep_a_cases_own_precision():
    from jalapeno.analysis.explore import make_evaluator
    from jalapeno.specs.design_space import design_space_from_dict

    d = _space().model_dump()
    d["cases"] = [{"model": "deepseek-r1", "workload": "8k1k", "precision": "fp8"}]
    pinned = design_space_from_dict(d)
    a = make_evaluator(_with_sweep(pinned, precisions="native")).base_metrics[0]["tok_s_per_chip"]
    assert a == make_evaluator(pinned).base_metrics[0]["tok_s_per_chip"]


def test_precisions_default_keeps_the_stored_digest():
    """A study stored before round 45 resumes: the shipped example's digest as it was then (agg, no precisions
    key) is main 1da4091's (computed there, before the key existed); ``native`` scores differently and changes it,
    and the example has shipped with ``serving = "both"``, ``precisions = "native"`` since ux46."""
    from pathlib import Path

    from jalapeno.analysis.search import space_digest
    from jalapeno.specs.design_space import load_design_space

    sp = load_design_space(Path(__file__).resolve().parents[2] / "examples" / "explore_700w.toml")
    assert (sp.sweep.serving, sp.sweep.precisions) == ("both", "native")
    old = _with_sweep(sp, serving="agg", precisions="case")
    assert space_digest(old) == "f12d5407b2df4e9b"
    assert space_digest(_with_sweep(old, precisions="native")) != "f12d5407b2df4e9b"
    assert space_digest(sp) != "f12d5407b2df4e9b"


def test_precisions_setting_refuses_a_typo():
    from jalapeno.errors import SpecError
    from jalapeno.specs.design_space import design_space_from_dict

    d = _space().model_dump()
    d["sweep"]["precisions"] = "fp4"
    with pytest.raises(SpecError, match="precisions"):
        design_space_from_dict(d)
