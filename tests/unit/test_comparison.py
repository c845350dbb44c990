"""compare_systems (analysis/comparison.py): the JSON contract, headline, ratios and errors.

Contract (issue): a point has throughput_per_chip, output_throughput_per_chip, interactivity,
ttft_s, tpot_s, e2e_s, chips, power_w_per_chip, tok_s_per_kw, usd_per_mtok, bound, deployment;
``compare --json`` is {"systems": {NAME: {"frontier": [point, ...], "headline": {...}}},
"comparisons": {...}}.
"""

from __future__ import annotations

import contextlib
import io
import json
import math

import numpy as np
import pytest

from jalapeno.analysis.comparison import compare_systems
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cli.common import print_json
from jalapeno.errors import SpecError
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

POINT_KEYS = {"throughput_per_chip", "output_throughput_per_chip", "interactivity", "ttft_s", "tpot_s",
              "e2e_s", "chips", "power_w_per_chip", "tok_s_per_kw", "usd_per_mtok", "bound", "deployment"}
FAR = 1.0e5  # tok/s/user: 10 µs per token, beyond any system here

# all-in kW per chip and $/chip-hour from the catalog TOMLs (InferenceX constants for GB200)
ALLIN_KW = {"gb200-nvl72": 2.10}
USD_H = {"gb200-nvl72": 2.21}


@pytest.fixture(scope="module")
def comp():
    model = load_model("deepseek-r1")
    systems = [load_pricer("jalapeno"), load_pricer("gb200-nvl72")]
    return compare_systems(model, systems, get_workload("8k1k"), get_precision("fp8"), baseline="gb200-nvl72",
                           options=SweepOptions(serving="agg"), iso_interactivity=(25.0, 50.0, FAR))


@pytest.fixture(scope="module")
def as_json(comp):
    # what `compare --json` prints (NaN → null)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_json(comp.as_dict())
    return json.loads(buf.getvalue())


def test_top_level_contract(as_json):
    assert set(as_json["systems"]) == {"jalapeno", "gb200-nvl72"}
    assert set(as_json["comparisons"]) == {"jalapeno", "gb200-nvl72"}
    for name, s in as_json["systems"].items():
        assert {"frontier", "headline"} <= set(s)
        assert isinstance(s["frontier"], list) and s["frontier"]


def test_every_frontier_point_has_the_contract_keys(as_json):
    for name, s in as_json["systems"].items():
        for pt in s["frontier"]:
            missing = POINT_KEYS - set(pt)
            assert not missing, f"{name}: {missing}"
            for k in POINT_KEYS - {"bound", "deployment"}:
                assert isinstance(pt[k], (int, float)) and pt[k] > 0, (name, k, pt[k])
            assert isinstance(pt["bound"], str) and pt["bound"]
            assert isinstance(pt["deployment"], dict) and pt["deployment"]["kind"] == "agg"
            assert pt["interactivity"] == pytest.approx(1 / pt["tpot_s"], rel=1e-9)
            assert pt["e2e_s"] > pt["ttft_s"]


def test_frontier_sorted_and_non_dominated(as_json):
    for s in as_json["systems"].values():
        x = np.array([p["interactivity"] for p in s["frontier"]])
        y = np.array([p["throughput_per_chip"] for p in s["frontier"]])
        assert np.all(np.diff(x) > 0)
        assert np.all(np.diff(y) < 0)


def test_power_and_cost_by_hand(as_json):
    for pt in as_json["systems"]["gb200-nvl72"]["frontier"]:
        t = pt["throughput_per_chip"]
        assert pt["power_w_per_chip"] == pytest.approx(ALLIN_KW["gb200-nvl72"] * 1000)
        assert pt["tok_s_per_kw"] == pytest.approx(t / ALLIN_KW["gb200-nvl72"], rel=1e-9)
        assert pt["usd_per_mtok"] == pytest.approx(USD_H["gb200-nvl72"] / (t * 3600 / 1e6), rel=1e-9)


def test_headline_keys_and_values(comp, as_json):
    for name, s in as_json["systems"].items():
        h = s["headline"]
        for k in ("peak_throughput_per_chip", "peak_tok_s_per_kw", "max_interactivity", "min_e2e_s",
                  "interactivity_at_peak", "bound_at_peak", "deployment_at_peak", "usd_per_mtok_at_peak"):
            assert k in h, (name, k)
        ys = [p["throughput_per_chip"] for p in s["frontier"]]
        xs = [p["interactivity"] for p in s["frontier"]]
        assert h["peak_throughput_per_chip"] == pytest.approx(max(ys))
        assert h["max_interactivity"] == pytest.approx(max(xs))
        # the peak is the maximum over every feasible sweep point, not only the frontier's
        p = comp.frontiers[name].sweep.points
        assert h["peak_throughput_per_chip"] == pytest.approx(p.throughput_per_chip[p.feasible].max())
        assert h["min_e2e_s"] == pytest.approx(p.e2e_s[p.feasible].min())
        kw = load_system(name).allin_power_w_per_chip / 1000
        assert h["peak_tok_s_per_kw"]["all-in"] == pytest.approx(h["peak_throughput_per_chip"] / kw)


def test_comparison_keys(as_json):
    for name, c in as_json["comparisons"].items():
        assert c["vs"] == "gb200-nvl72"
        for k in ("peak_ratio", "iso_interactivity", "tiers", "max_interactivity_ratio", "min_e2e_ratio"):
            assert k in c, (name, k)
        assert set(c["peak_ratio"]) >= {"throughput_per_chip", "tok_s_per_kw"}
        assert set(c["iso_interactivity"]) >= {"throughput_per_chip", "tok_s_per_kw"}
        assert "batch" in c["tiers"]


def test_baseline_against_itself_is_one(comp):
    c = comp.comparisons["gb200-nvl72"]
    for v in c.peak_ratio.values():
        assert v == pytest.approx(1.0)
    assert c.max_interactivity_ratio == pytest.approx(1.0)
    assert c.min_e2e_ratio == pytest.approx(1.0)
    for row in c.iso_interactivity["throughput_per_chip"]:
        if row["status_a"] != "unreachable":
            assert row["ratio"] == pytest.approx(1.0)


def test_ratios_by_hand(comp):
    j, g = comp.headlines["jalapeno"], comp.headlines["gb200-nvl72"]
    c = comp.comparisons["jalapeno"]
    assert c.peak_ratio["throughput_per_chip"] == pytest.approx(
        j.peak_throughput_per_chip / g.peak_throughput_per_chip)
    # per kW: each side divided by its own all-in kW (jalapeno's from its TOML, GB200 2.10)
    jkw = load_system("jalapeno").allin_power_w_per_chip / 1000
    assert c.peak_ratio["tok_s_per_kw"] == pytest.approx(
        (j.peak_throughput_per_chip / jkw) / (g.peak_throughput_per_chip / 2.10))


def test_iso_interactivity_beyond_both_frontiers_is_unreachable(comp, as_json):
    for h in comp.headlines.values():
        assert h.max_interactivity < FAR  # precondition
    row = [r for r in comp.comparisons["jalapeno"].iso_interactivity["throughput_per_chip"] if r["x"] == FAR]
    assert len(row) == 1
    r = row[0]
    assert r["status_a"] == "unreachable" and r["status_b"] == "unreachable"
    assert math.isnan(r["ratio"])
    # and null in the JSON
    jrow = [r for r in as_json["comparisons"]["jalapeno"]["iso_interactivity"]["throughput_per_chip"]
            if r["x"] == FAR][0]
    assert jrow["ratio"] is None


def test_unknown_baseline_raises_naming_baseline():
    model = load_model("deepseek-r1")
    with pytest.raises(SpecError) as e:
        compare_systems(model, [load_pricer("jalapeno")], get_workload("8k1k"), get_precision("fp8"),
                        baseline="h100", options=SweepOptions(serving="agg"))
    assert "baseline" in e.value.field
    assert "baseline" in str(e.value)


def test_empty_system_list_raises():
    with pytest.raises(SpecError):
        compare_systems(load_model("deepseek-r1"), [], get_workload("8k1k"), get_precision("fp8"))


def test_ratios_in_a_collapsed_frontier_tail_are_labelled():
    """A ratio where either side has fallen below 10% of its frontier's peak throughput is a
    quotient of two small numbers: it must carry the at_frontier_end label."""
    from jalapeno.analysis.comparison import compare_systems
    from jalapeno.analysis.sweep import SweepOptions
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    res = compare_systems(load_model("deepseek-r1"), [load_pricer("jalapeno"), load_pricer("gb300-nvl72")],
                          get_workload("8k1k"), get_precision("fp8"), baseline="gb300-nvl72",
                          options=SweepOptions(serving="agg"), iso_interactivity=(10.0, 50.0, 100.0, 110.0))
    peak = {n: max(p.y) for n, p in ((n, sf.as_frontier()) for n, sf in res.frontiers.items())}
    rows = res.comparisons["jalapeno"].iso_interactivity["throughput_per_chip"]
    for r in rows:
        if r["y_b"] == r["y_b"] and r["y_b"] < 0.1 * peak["gb300-nvl72"]:
            assert r["at_frontier_end"], r
