"""Claim audit and sensitivity (analysis/claims.py, uncertain.py, audit.py, sensitivity.py; the
``audit`` and ``sensitivity`` commands). Real model and system: gpt-oss-120b on Jalapeño at 8K/1K,
aggregated serving (the cheapest real sweep). Claims are checked through another path than the
audit's own (the ``frontier`` command with ``--set``), so an audit cannot agree with itself."""

from __future__ import annotations

import json

import pytest
from cli_runner import check_error, run, run_captured

from jalapeno.analysis.claims import ClaimContext, parse_claim
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.analysis.uncertain import apply, uncertain_parameters
from jalapeno.cost.pricer import load_pricer
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

ARGS = ("--system", "jalapeno", "--model", "gpt-oss-120b", "--workload", "8k1k", "--serving", "agg")


def _frontier_max_interactivity(capsys, *sets: str) -> float:
    args = ["frontier", *ARGS]
    for s in sets:
        args += ["--set", s]
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    return max(p["interactivity"] for p in json.loads(out)["frontier"])


def _audit(capsys, claim: str, *extra: str) -> dict:
    code, out, err = run(capsys, "audit", *ARGS, "--claim", claim, *extra, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def predicted_max_interactivity() -> float:
    """``_frontier_max_interactivity`` with no ``--set``, run once for the tests that start from it."""
    code, out, err = run_captured("frontier", *ARGS, "--json")
    assert code == 0, err
    return max(p["interactivity"] for p in json.loads(out)["frontier"])


@pytest.fixture(scope="module")
def audit_trivial_claim() -> str:
    """``_audit``'s JSON text for ``max_interactivity=1`` (holds trivially; it gives the physical limit and the band),
    run once for the tests that read it; each test parses its own copy."""
    code, out, err = run_captured("audit", *ARGS, "--claim", "max_interactivity=1", "--json")
    assert code == 0, err
    return out


@pytest.fixture(scope="module")
def ctx():
    m = load_model("gpt-oss-120b")
    return ClaimContext(m, get_workload("8k1k"), get_precision(m.default_precision), SweepOptions(serving="agg"))


def test_parse_claim_and_its_errors():
    c = parse_claim("throughput_per_chip@100=5000")
    assert (c.metric, c.at, c.value, c.ratio) == ("throughput_per_chip", 100.0, 5000.0, False)
    assert parse_claim("peak_tok_s_per_kw_ratio=1.7").ratio
    for bad, word in (("max_interactivity", "METRIC"), ("speed=3", "unknown metric"),
                      ("throughput_per_chip=3", "@100"), ("max_interactivity@5=3", "takes no @X"),
                      ("max_interactivity=-1", "positive")):
        with pytest.raises(SpecError, match=word):
            parse_claim(bad)


def test_claim_equal_to_the_prediction_holds_with_no_change(capsys, predicted_max_interactivity):
    now = predicted_max_interactivity
    d = _audit(capsys, f"max_interactivity={now}")
    assert d["verdict"] == "holds" and d["changes"] == [] and d["joint_change"] == {}
    assert d["predicted"]["value"] == pytest.approx(now, rel=1e-9)
    assert d["predicted"]["low"] <= now <= d["predicted"]["high"]
    assert set(d) >= {"claim", "predicted", "physical_limit", "verdict", "changes", "joint_change"}
    assert d["claim"] == {"metric": "max_interactivity", "value": now, "system": "jalapeno", "baseline": None,
                          "unit": "tok/s/user"}


def test_required_value_plugged_back_through_set_reproduces_the_claim(capsys, predicted_max_interactivity):
    now = predicted_max_interactivity
    claim = round(now * 1.08, 1)  # a little faster than predicted: fixed costs can buy it
    d = _audit(capsys, f"max_interactivity={claim}")
    assert d["verdict"] == "plausible"
    found = [c for c in d["changes"] if c["required"] is not None]
    assert {c["parameter"] for c in found} >= {"efficiency.kernel_launch_s", "efficiency.step_overhead_s"}
    for c in found:
        if c["parameter"].startswith("efficiency.") and c["kind"] == "fixed_cost":
            assert c["required"] < c["current"] and c["factor"] == pytest.approx(c["required"] / c["current"])
            got = _frontier_max_interactivity(capsys, f"{c['parameter']}={c['required']!r}")
            assert got == pytest.approx(claim, rel=0.01), c["parameter"]
    assert d["physical_limit"] > claim


def test_hundred_times_the_physical_limit_is_impossible(capsys, audit_trivial_claim):
    limit = json.loads(audit_trivial_claim)["physical_limit"]  # holds trivially; gives the limit
    d = _audit(capsys, f"max_interactivity={100 * limit}")
    assert d["verdict"] == "impossible"
    assert all(c["required"] is None and c["note"] == "none in range" for c in d["changes"])
    assert d["physical_limit"] == pytest.approx(limit, rel=1e-6)


def test_outside_the_bands_requires_named_changes(capsys, audit_trivial_claim):
    first = json.loads(audit_trivial_claim)
    limit = first["physical_limit"]
    d = _audit(capsys, f"max_interactivity={0.6 * limit}")
    assert d["joint_change"]["band_ends"]["value"] < 0.6 * limit  # the bands do not reach it ...
    assert d["verdict"] == "requires"  # ... the physical limit does
    assert not any(c["within_band"] for c in d["changes"])
    assert d["joint_change"]["together"]["within_band"] is False


def test_metric_monotone_in_parameters_where_physics_says(ctx):
    pr = load_pricer("jalapeno")
    mi, peak, perkw, e2e = (parse_claim(c) for c in ("max_interactivity=1", "peak_throughput_per_chip=1",
                                                     "peak_tok_s_per_kw=1", "min_e2e_s=1"))

    def full(values, claim, c=ctx):
        p, _ = apply(pr, values)
        return c.full(p, claim)[0]

    launch = [full({"efficiency.kernel_launch_s": v}, mi) for v in (1e-6, 4e-6, 8e-6)]
    assert launch[0] > launch[1] > launch[2]  # fixed cost per kernel: slower per user
    hbm = [full({"efficiency.hbm_fraction": v}, peak) for v in (0.7, 0.85, 1.0)]
    assert hbm[0] <= hbm[1] <= hbm[2] and hbm[0] < hbm[2]  # more bandwidth: no less throughput
    ctx_chip = ClaimContext(ctx.model, ctx.workload, ctx.precision, ctx.options, "chip")
    tdp = [full({"chip.tdp_w": v}, perkw, ctx_chip) for v in (600, 700, 900)]
    assert tdp[0] > tdp[1] > tdp[2] and tdp[0] * 600 == pytest.approx(tdp[2] * 900)  # tok/s/kW ∝ 1/TDP
    step = [full({"efficiency.step_overhead_s": v}, e2e) for v in (1e-4, 5e-4, 1e-3)]
    assert step[0] < step[1] < step[2]


def test_load_power_gives_more_tokens_per_kw_than_tdp(ctx):
    from dataclasses import replace

    pr = load_pricer("jalapeno")
    claim = parse_claim("peak_tok_s_per_kw=1")
    at_tdp = replace(ctx, convention="chip").full(pr, claim)[0]
    at_load = replace(ctx, convention="load").full(pr, claim)[0]
    assert at_load > at_tdp  # the chip draws less than its TDP at every operating point


def test_uncertain_parameters_carry_bands_and_limits():
    m = load_model("deepseek-r1")
    params = {p.key: p for p in uncertain_parameters(load_pricer("jalapeno"), m, get_precision("fp8"), "load")}
    k = params["efficiency.kernel_launch_s"]
    # a vendor-compiler stack: from whole-graph-compiled (~0.25-0.35 µs) up to the GPU-like 4 µs priced
    assert k.low <= 0.35e-6 and k.high == k.current == 4e-6 and k.limit == 0.0
    assert params["efficiency.hbm_fraction"].limit == 1.0
    assert "levels.rack.latency_us" in params and params["levels.rack.latency_us"].limit is None
    assert "power_terms.hbm4_pj_per_bit" in params
    g = {p.key: p for p in uncertain_parameters(load_pricer("gb300-nvl72"), m, get_precision("fp8"))}
    gk = g["efficiency.kernel_launch_s"]
    assert gk.low < gk.current < gk.high and gk.high <= 2 * gk.current + 1e-12  # a measured stack's spread


def test_sensitivity_tornado(tmp_path, capsys):
    html = tmp_path / "t.html"
    code, out, err = run(capsys, "sensitivity", *ARGS, "--metric", "max_interactivity", "--html", str(html),
                         "--json")
    assert code == 0, err
    d = json.loads(out)
    swings = [r["swing"] for r in d["rows"] if r["swing"] is not None]
    assert swings == sorted(swings, reverse=True)
    k = next(r for r in d["rows"] if r["parameter"] == "efficiency.kernel_launch_s")
    assert k["metric_at_low"] > d["value"] >= k["metric_at_high"]  # cheaper kernels: faster per user
    assert html.read_text().count("plotly") > 0 and "kernel_launch_s" in html.read_text()


def test_cli_errors(capsys):
    check_error(*run(capsys, "audit", *ARGS, "--claim", "peak_tok_s_per_kw_ratio=2"), "--baseline", "ratio")
    check_error(*run(capsys, "audit", *ARGS, "--claim", "fast=2"), "--claim", "unknown metric")
    check_error(*run(capsys, "audit", *ARGS, "--claim", "max_interactivity=2", "--power", "wall"), "--power")
    check_error(*run(capsys, "sensitivity", *ARGS, "--metric", "max_interactivity=3"), "--metric")


def test_collective_parameters_are_uncertain_with_their_limits():
    """The calibration's low/high sets move the collectives' fractions and half sizes too: the
    audit lists them (fractions to 1, half sizes to 0 at the physical limit), the all-to-all
    only for an MoE model."""
    params = {p.key: p for p in uncertain_parameters(load_pricer("jalapeno"), load_model("deepseek-r1"),
                                                      get_precision("fp8"))}
    for key, limit, better in (("efficiency.all_to_all_fraction", 1.0, "higher"),
                               ("efficiency.custom_ar_fraction", 1.0, "higher"),
                               ("efficiency.custom_ar_half_bytes", 0.0, "lower"),
                               ("efficiency.link_half_bytes", 0.0, "lower")):
        p = params[key]
        assert (p.limit, p.better, p.kind) == (limit, better, "efficiency"), key
        assert p.low <= p.current <= p.high and p.low < p.high, key
    dense = {p.key for p in uncertain_parameters(load_pricer("jalapeno"), load_model("llama-3.3-70b"),
                                                 get_precision("fp8"))}
    assert "efficiency.all_to_all_fraction" not in dense and "efficiency.link_half_bytes" in dense


def test_all_favourable_corner_reaches_the_band_top(capsys, audit_trivial_claim):
    """Every parameter at its favourable band end is at least the band's far end (the high
    efficiency set): the corner moves every efficiency the high set moves, each at least as far.
    The README's audit showed a band top of 720.6 above an all-favourable 707.5 when the
    all-to-all and custom all-reduce were left out of the list."""
    high = json.loads(audit_trivial_claim)["predicted"]["high"]
    d = _audit(capsys, f"max_interactivity={3 * high}")
    assert d["verdict"] != "holds"
    assert d["joint_change"]["band_ends"]["value"] >= high * (1 - 1e-6)


def test_setting_a_listed_parameter_to_its_current_value_changes_nothing():
    """Every efficiency key the sensitivity/audit lists, set back to its printed current value, leaves every
    listed key's effective value as it was. The MoE keys of formats the experts do not run (moe.bf16.half_rows
    on an FP8 DeepSeek-R1: inherited, read by no op) were listed, and setting one moved the fallback of the
    formats the experts do run: the audit moved 135.6 -> 131.4 tok/s/user with the 'current' value set back."""
    from jalapeno.analysis.uncertain import _efficiency_getters

    model, prec = load_model("deepseek-r1"), get_precision("fp8")
    pricer = load_pricer("jalapeno")
    params = [p for p in uncertain_parameters(pricer, model, prec) if p.kind == "efficiency"]
    keys = [p.key for p in params]
    assert "efficiency.moe.fp8.half_rows" in keys and not any(k.startswith("efficiency.moe.bf16") for k in keys)
    getters = _efficiency_getters(model, prec, pricer.system, pricer.efficiency)
    before = {k: g(pricer.efficiency) for k, g in getters.items()}
    for p in params:
        pr, _ = apply(pricer, {p.key: p.current})
        after = {k: g(pr.efficiency) for k, g in getters.items()}
        assert after == pytest.approx(before), p.key


def test_block_scaled_gemm_k_loop_time_is_listed():
    """The block-scaled FP8 GEMM's serial k-loop time (cost/roofline.k_serial_s) is one of the efficiencies the
    calibration's high set moves on DeepSeek-R1 FP8; left out of the list, the all-favourable corner read 480.9
    tok/s/user under the band's 500.2 and the physical limit kept a GPU kernel's k-loop floor (740.9 where it is
    1,623.5). Its band is the low/high sets' values, its limit 0 (no serial floor), fewer seconds faster; a model
    whose GEMMs run no block-scaled FP8 (gpt-oss-120b, MXFP4) does not list it."""
    from jalapeno.analysis.uncertain import physical_limit
    from jalapeno.cost.pricer import band_pricers

    pricer = load_pricer("jalapeno")
    params = uncertain_parameters(pricer, load_model("deepseek-r1"), get_precision("fp8"))
    p = next(p for p in params if p.key == "efficiency.gemm.fp8_block.k_block_s")
    sets = {w: pr.efficiency.gemm["fp8_block"].k_block_s for w, pr in band_pricers(pricer).items()}
    assert p.current == sets["calibrated"] and (p.low, p.high) == (min(sets.values()), max(sets.values()))
    assert p.low < p.current < p.high and p.favourable_end == sets["high"]
    assert (p.limit, p.better, p.kind) == (0.0, "lower", "efficiency")
    assert physical_limit(params)["efficiency.gemm.fp8_block.k_block_s"] == 0.0
    oss = uncertain_parameters(pricer, load_model("gpt-oss-120b"), get_precision("mxfp4"))
    assert not any(q.key.endswith("k_block_s") for q in oss)


def test_w4a16_experts_list_their_own_entry():
    """Kimi K2.5's INT4 (W4A16) routed experts are priced by the set's ``moe[w4a16]`` entry (specs/w4a16_moe, on since
    round 41), so the audit lists that entry's fields and not ``moe.bf16.*`` (their compute format's, which no op
    reads then). Each listed field set back to its current value changes nothing; the entry's peak fraction halved
    slows the routed experts of a 4,096-token prefill step (compute-bound at 128 rows per expert)."""
    from jalapeno.analysis.uncertain import _efficiency_getters
    from jalapeno.cli.common import resolve_precision
    from jalapeno.cost.batch import Batch
    from jalapeno.cost.step import step_cost
    from jalapeno.deploy.layout import Layout, for_model

    model = load_model("kimi-k2.5")
    prec = resolve_precision(model, "int4", None, None, False)
    pricer = load_pricer("jalapeno")
    params = [p for p in uncertain_parameters(pricer, model, prec) if p.kind == "efficiency"]
    keys = [p.key for p in params]
    assert {"efficiency.moe.w4a16.peak_fraction", "efficiency.moe.w4a16.half_rows",
            "efficiency.moe.w4a16.hbm_fraction"} <= set(keys)
    assert not any(k.startswith("efficiency.moe.bf16") for k in keys)
    getters = _efficiency_getters(model, prec, pricer.system, pricer.efficiency)
    before = {k: g(pricer.efficiency) for k, g in getters.items()}
    for p in params:
        pr, _ = apply(pricer, {p.key: p.current})
        assert {k: g(pr.efficiency) for k, g in getters.items()} == pytest.approx(before), p.key

    def experts_s(pr) -> float:
        layout = for_model(Layout(tp=1, dp=8, ep=8), model)
        sc = step_cost(model, pr, layout, prec, Batch.make(prefill_tokens=4096))
        return float(sc.times.time_s[list(sc.ops.name).index("moe.experts"), 0])

    peak = pricer.efficiency.moe_peak("w4a16")
    slow, _ = apply(pricer, {"efficiency.moe.w4a16.peak_fraction": peak / 2})
    assert experts_s(slow) > 1.3 * experts_s(pricer)
