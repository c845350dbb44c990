"""Typed result records (analysis/records.py): JSON and frame views, immutability, documented schema.

The JSON views must keep the contract the dicts had (keys in order, same values); the frame has
one row per frontier point; records cannot be changed; docs/metrics.md §11 lists every field.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from jalapeno.analysis.comparison import compare_systems, system_frontier
from jalapeno.analysis.power_cost import energy_and_cost
from jalapeno.analysis.prediction import predict_point
from jalapeno.analysis.records import (
    RECORDS,
    ComparisonRecord,
    FrontierRecord,
    Headline,
    PointRecord,
    PredictionRecord,
    Ratios,
)
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.serving_points import ServingPoints
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

METRICS_MD = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"

#: the JSON keys of a point, in order, as analysis/records.point_record built them before the records
POINT_KEYS = ["throughput_per_chip", "output_throughput_per_chip", "interactivity", "ttft_s", "tpot_s", "e2e_s",
              "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "e2e_p50_s", "e2e_p90_s", "e2e_p99_s", "queue_s",
              "concurrency", "decode_batch", "request_rate_per_s", "chips", "step_time_s", "kv_transfer_s",
              "bound", "bound_margin", "bound_level", "limit", "feasible", "reason", "power_convention",
              "power_label", "power_w_per_chip", "tok_s_per_kw", "tok_s_per_kw_by_convention", "j_per_token",
              "usd_per_mtok", "system", "deployment", "config",
              "output_throughput_per_decode_chip", "in_flight",  # issue 15: appended, earlier keys unchanged
              "prefill_bound", "prefill_chip_share"]  # bound31: appended
HEADLINE_KEYS = ["peak_throughput_per_chip", "peak_output_throughput_per_chip", "interactivity_at_peak",
                 "bound_at_peak", "deployment_at_peak", "peak_tok_s_per_kw", "power_labels", "usd_per_mtok_at_peak",
                 "max_interactivity", "throughput_at_max_interactivity", "bound_at_max_interactivity",
                 "deployment_at_max_interactivity", "min_e2e_s", "min_ttft_s", "frontier_points",
                 "efficiency_source", "vendor_verified", "points_evaluated"]
#: bound31: appended after the optional ``bands`` (earlier keys unchanged)
HEADLINE_PREFILL = ["prefill_bound_at_peak", "prefill_chip_share_at_peak", "prefill_bound_at_max_interactivity",
                    "prefill_chip_share_at_max_interactivity",
                    "limit_at_peak", "limit_at_max_interactivity"]  # cap53: appended (earlier keys unchanged)
RATIO_KEYS = ["vs", "peak_ratio", "max_interactivity_ratio", "min_e2e_ratio", "iso_interactivity", "tiers",
              "tiers_tok_s_per_kw"]
OPTIONS = SweepOptions(serving="agg", concurrency=(4.0, 16.0, 64.0, 256.0))


@pytest.fixture(scope="module")
def oss():
    return load_model("gpt-oss-120b"), get_workload("1k1k"), get_precision("mxfp4")


@pytest.fixture(scope="module")
def comp(oss):
    model, wl, prec = oss
    return compare_systems(model, [load_pricer("h100"), load_pricer("h200")], wl, prec, baseline="h200",
                           options=OPTIONS, iso_interactivity=(10.0, 1e5))


def test_point_as_dict_is_the_old_contract(oss):
    model, wl, prec = oss
    pricer = load_pricer("h100")
    dep = Deployment(prec, Pool(Layout(tp=2, ep=2)))
    rec = predict_point(model, pricer, dep, wl, 32)
    assert isinstance(rec, PredictionRecord) and isinstance(rec, PointRecord)
    d = rec.as_dict()
    assert list(d) == POINT_KEYS + ["model", "workload", "efficiency_source", "ttft_parts"]
    # the serving fields are the ServingPoints values, the rest the power/cost arithmetic
    pts = serve_at_concurrency(model, pricer, dep, wl, [32])
    raw = pts.record(0)
    for k in POINT_KEYS[:25]:
        assert d[k] == raw[k], k
        assert type(d[k]) in (float, str, bool), (k, type(d[k]))
    ec = energy_and_cost(np.array([raw["throughput_per_chip"]]), pricer.system, "all-in")
    assert d["tok_s_per_kw"] == float(ec["tok_s_per_kw"][0])
    assert d["deployment"] == dep.as_dict() and d["workload"] == wl.as_dict()
    assert d["model"] == model.name and d["efficiency_source"] == pricer.efficiency.source
    # JSON-serialisable and back again: the same keys and values
    assert json.loads(json.dumps(d)) == d
    # and the record rebuilt from its own view is the same record
    assert PredictionRecord(**{**d, "deployment": dep, "workload": wl}) == rec


def test_point_record_from_points(oss):
    model, wl, prec = oss
    pricer = load_pricer("h100")
    dep = Deployment(prec, Pool(Layout(tp=4, ep=4)))
    pts = serve_at_concurrency(model, pricer, dep, wl, [8, 64])
    a = PointRecord.from_points(pts, 1, dep, pricer.system, "chip")
    assert a.concurrency == pytest.approx(64) and a.power_convention == "chip"
    assert list(a.as_dict()) == POINT_KEYS


def test_comparison_as_dict_keys_and_values(comp):
    rec = comp.record()
    assert isinstance(rec, ComparisonRecord)
    d = comp.as_dict()
    assert d == rec.as_dict()
    assert list(d) == ["model", "workload", "precision", "power_convention", "baseline", "options", "systems",
                       "comparisons", "infeasible"]
    for name, s in d["systems"].items():
        assert list(s) == ["frontier", "headline"]
        assert list(s["headline"]) == HEADLINE_KEYS + HEADLINE_PREFILL
        assert [p["interactivity"] for p in s["frontier"]] == list(comp.frontiers[name].x)
        for p in s["frontier"]:
            assert list(p) == POINT_KEYS
        assert s["headline"]["peak_throughput_per_chip"] == comp.headlines[name].peak_throughput_per_chip
    for name, c in d["comparisons"].items():
        # where_wins (ux51) is left out for the baseline, which it would compare with itself
        assert list(c) == RATIO_KEYS + ([] if name == comp.baseline else ["where_wins"])
        assert isinstance(c["iso_interactivity"]["throughput_per_chip"], list)
        assert c["max_interactivity_ratio"] == comp.comparisons[name].max_interactivity_ratio
    # JSON-serialisable (an unreachable ratio stays NaN here; print_json writes it as null)
    row = d["comparisons"]["h100"]["iso_interactivity"]["throughput_per_chip"][-1]
    assert row["status_a"] == "unreachable" and math.isnan(row["ratio"])
    json.dumps(d)


def test_frontier_record_json_and_frame(oss):
    model, wl, prec = oss
    pricer = load_pricer("h100")
    sf = system_frontier(model, pricer, wl, prec, OPTIONS)
    rec = sf.record()
    assert isinstance(rec, FrontierRecord) and rec.headline is None
    d = rec.as_dict()
    assert list(d) == ["system", "model", "workload", "precision", "frontier"]
    assert len(d["frontier"]) == sf.frontier.size
    df = rec.to_frame()
    assert len(df) == sf.frontier.size == len(rec.frontier)
    scalar = [k for k in POINT_KEYS if k not in ("tok_s_per_kw_by_convention", "deployment")]
    units = {"throughput_per_chip": "throughput_per_chip_tok_per_s",  # STYLE §6: the column carries its unit
             "output_throughput_per_chip": "output_throughput_per_chip_tok_per_s",
             "interactivity": "interactivity_tok_per_s_per_user",
             "output_throughput_per_decode_chip": "output_throughput_per_decode_chip_tok_per_s"}
    assert list(df.columns) == [units.get(k, k) for k in scalar] + ["deployment", "deployment_json"]
    assert df["throughput_per_chip_tok_per_s"].tolist() == [p.throughput_per_chip for p in rec.frontier]
    assert df["interactivity_tok_per_s_per_user"].tolist() == [p.interactivity for p in rec.frontier]
    assert not {"throughput_per_chip", "interactivity"} & set(df.columns)
    assert df["deployment"].tolist() == [p.deployment.label for p in rec.frontier]
    assert json.loads(df["deployment_json"].iloc[0]) == rec.frontier[0].deployment.as_dict()
    assert len(rec.frontier[0].to_frame()) == 1


def test_comparison_frame_has_every_frontier_point(comp):
    rec = comp.record()
    df = rec.to_frame()
    assert len(df) == sum(sf.frontier.size for sf in comp.frontiers.values())
    assert set(df["system"]) == {"h100", "h200"}


def test_records_are_immutable(comp):
    rec = comp.record()
    fr = rec.systems["h100"]
    pt = fr.frontier[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        pt.throughput_per_chip = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        fr.headline.peak_throughput_per_chip = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.baseline = "h100"
    with pytest.raises(TypeError):
        pt.tok_s_per_kw_by_convention["chip"] = 1.0
    with pytest.raises(TypeError):
        rec.systems["x"] = fr
    with pytest.raises(TypeError):
        rec.comparisons["h100"].iso_interactivity["throughput_per_chip"][0]["ratio"] = 2.0
    assert isinstance(fr.frontier, tuple)
    # a view is a fresh copy: changing it leaves the record alone
    d = pt.as_dict()
    d["throughput_per_chip"] = -1.0
    d["tok_s_per_kw_by_convention"]["chip"] = -1.0
    assert pt.throughput_per_chip > 0 and pt.tok_s_per_kw_by_convention["chip"] > 0


def test_bands_are_typed(oss):
    model, wl, prec = oss
    # a what-if set of h100: neither an efficiency band nor a measured one (a point band)
    pr = load_pricer("h100", overrides=(("efficiency.hbm_fraction", 0.7),))
    n = pr.system.name
    res = compare_systems(model, [pr], wl, prec, options=OPTIONS, bands={n: {"low": pr, "high": pr}})
    h = res.headlines[n]
    assert isinstance(h, Headline) and h.bands is not None
    assert h.bands.max_interactivity.low == h.bands.max_interactivity.mid == h.max_interactivity
    d = h.as_dict()
    assert list(d) == HEADLINE_KEYS + ["bands"] + HEADLINE_PREFILL
    assert list(d["bands"]) == ["peak_throughput_per_chip", "max_interactivity", "min_e2e_s", "peak_tok_s_per_kw"]
    assert d["bands"]["min_e2e_s"] == {"low": h.min_e2e_s, "mid": h.min_e2e_s, "high": h.min_e2e_s}
    assert isinstance(res.comparisons[n], Ratios)
    # h100 as validated: its measured error band, which says so (``source``)
    pr = load_pricer("h100")
    h = compare_systems(model, [pr], wl, prec, options=OPTIONS, bands={"h100": {"low": pr, "high": pr}}).headlines["h100"]
    assert list(h.as_dict()["bands"])[-1] == "source" and h.bands.max_interactivity.low < h.max_interactivity


def test_assemble_is_keyword_only():
    with pytest.raises(TypeError):
        ServingPoints.assemble(np.ones(1), np.ones(1))


def _documented_fields() -> dict[str, list[str]]:
    text = METRICS_MD.read_text()
    m = re.search(r"^## 11\. Result records.*?(?=^## |\Z)", text, flags=re.S | re.M)
    assert m, "docs/metrics.md has no '## 11. Result records' section"
    out: dict[str, list[str]] = {}
    for block in re.split(r"^### ", m.group(0), flags=re.M)[1:]:
        name = re.match(r"`(\w+)`", block).group(1)
        out[name] = re.findall(r"^\| `(\w+)` \|", block, flags=re.M)
    return out


def test_schema_section_lists_every_field():
    """docs/metrics.md §11 documents each record's own fields, in order, and nothing else."""
    documented = _documented_fields()
    assert set(documented) == {r.__name__ for r in RECORDS}
    for r in RECORDS:
        inherited = {f.name for base in r.__mro__[1:] if dataclasses.is_dataclass(base)
                     for f in dataclasses.fields(base)}
        own = [f.name for f in dataclasses.fields(r) if f.name not in inherited]
        assert documented[r.__name__] == own, f"{r.__name__}: docs {documented[r.__name__]} vs fields {own}"
