"""The audit's one-parameter tables (analysis/audit.py step 3, cli/audit_tables._changes_table): the stated headline
specs solved alone ("what the chip would need"), parameters that cannot move the claim on one line, the rest ranked.

Independent checks: the headline keys are read here from the system file itself (data/systems/jalapeno.toml: its
FP8/FP4 peaks, HBM bandwidth and capacity and the rack and global levels' bandwidth are stated; BF16 peak and tray bandwidth are
marked estimates, so they are ``spec`` parameters already); a required HBM bandwidth is plugged back through
``frontier --set`` (another path than the audit's own); a KV tier cannot move an 8K/1K claim whose KV cache fits in
HBM (the model offloads to a tier only when HBM is full, docs/model.md), so its parameters must be told apart."""

from __future__ import annotations

import json
import tomllib
from importlib import resources

import pytest
from cli_runner import run, run_captured

from jalapeno.analysis.uncertain import HEADLINE_RANGE, headline_parameters, uncertain_parameters
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

ARGS = ("--system", "jalapeno", "--model", "gpt-oss-120b", "--workload", "8k1k", "--serving", "agg")


def _stated(data: dict, estimate: bool) -> set[str]:
    keys = {f"chip.peak_dense_tflops.{f}" for f, v in data["chip"]["peak_dense_tflops"].items()
            if v.get("estimate", False) == estimate}
    if data["chip"]["hbm_bandwidth_tb_per_s"].get("estimate", False) == estimate:
        keys.add("chip.hbm_bandwidth_tb_per_s")
    # the nominal HBM capacity (216 GiB, stated; arch52: searched with usable HBM moved along)
    keys |= {f"chip.{k}" for k in ("hbm_capacity_gb", "hbm_capacity_gib")
             if k in data["chip"] and data["chip"][k].get("estimate", False) == estimate}
    keys |= {f"levels.{lv['name']}.bandwidth_gb_per_s" for lv in data["levels"]
             if lv["bandwidth_gb_per_s"].get("estimate", False) == estimate}
    return keys


def test_headline_parameters_are_the_stated_specs_not_the_estimates():
    data = tomllib.loads(resources.files("jalapeno.data.systems").joinpath("jalapeno.toml").read_text())
    pricer = load_pricer("jalapeno")
    m = load_model("gpt-oss-120b")
    spec_keys = {p.key for p in uncertain_parameters(pricer, m, get_precision(m.default_precision))}
    heads = headline_parameters(pricer, spec_keys)
    assert {p.key for p in heads} == _stated(data, estimate=False)
    assert _stated(data, estimate=True) <= spec_keys  # BF16 peak, tray bandwidth: already spec parameters
    fp8 = next(p for p in heads if p.key == "chip.peak_dense_tflops.fp8")
    assert (fp8.current, fp8.low, fp8.high, fp8.limit) == (3400, 3400, 3400, None)  # no band: the stated value
    assert (fp8.lo, fp8.hi) == (HEADLINE_RANGE[0] * 3400, HEADLINE_RANGE[1] * 3400)


def _audit(capsys, claim: str) -> dict:
    code, out, err = run(capsys, "audit", *ARGS, "--claim", claim, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def audit_far_claim() -> str:
    """``_audit``'s JSON text for ``max_interactivity=100000`` (far past every band: every parameter searched), run once
    for the two tests that read it; each parses its own copy."""
    code, out, err = run_captured("audit", *ARGS, "--claim", "max_interactivity=100000", "--json")
    assert code == 0, err
    return out


def _frontier_peak(capsys, *sets: str) -> float:
    args = ["frontier", *ARGS, "--json"]
    for s in sets:
        args += ["--set", s]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    return max(p["throughput_per_chip"] for p in json.loads(out)["frontier"])


def test_a_required_headline_spec_plugged_back_reproduces_the_claim(capsys):
    now = _frontier_peak(capsys)
    claim = round(now * 1.3)  # 30% over: outside every band, within 4x of a headline spec
    d = _audit(capsys, f"peak_throughput_per_chip={claim}")
    assert d["verdict"] in ("requires", "plausible", "impossible")
    found = {c["parameter"]: c for c in d["spec_changes"] if c["required"] is not None}
    assert found, d["spec_changes"]
    for key, c in found.items():
        assert c["kind"] == "headline" and c["required"] > c["current"] and not c["within_band"]
        assert c["factor"] == pytest.approx(c["required"] / c["current"])
        got = _frontier_peak(capsys, f"{key}={c['required']!r}")
        assert got == pytest.approx(claim, rel=0.01), key
    # the verdict is under the stated specs: a headline spec never makes it plausible on its own
    assert all(not c["within_band"] for c in d["spec_changes"])


def test_kv_tiers_do_not_move_an_8k1k_claim_and_are_listed_on_one_line(capsys, audit_far_claim):
    d = json.loads(audit_far_claim)
    tiers = [c for c in d["changes"] if c["parameter"].startswith("kv_tiers.")]
    assert tiers and all(c["moves_metric"] is False for c in tiers)
    # the fixed cost per kernel moves a decode-bound speed (7,000+ kernels a second at 100+ tok/s/user)
    launch = next(c for c in d["changes"] if c["parameter"] == "efficiency.kernel_launch_s")
    assert launch["moves_metric"] is True and launch["best_in_range"] > d["predicted"]["value"]
    code, out, err = run(capsys, "audit", *ARGS, "--claim", "max_interactivity=100000")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "do not move max_interactivity anywhere in their search range:" in flat
    line = flat.split("anywhere in their search range:")[1]
    assert all(c["parameter"] in line for c in tiers)
    table = flat.split("each parameter alone")[1].split("do not move")[0]
    assert "kv_tiers." not in table and "efficiency.kernel_launch_s" in table


def test_best_alone_is_never_worse_than_as_priced(capsys):
    """The current value is inside every search range, so the best a parameter alone reaches is at least the
    prediction. MI355X's custom all-reduce fraction is priced at its limit 1 (search range ends 0.09 and 1):
    its 'best alone' showed the far end, 124.2 tok/s/user, under the 128.0 predicted."""
    code, out, err = run(capsys, "audit", "--system", "mi355x", "--claim", "max_interactivity=300", "--json")
    assert code == 0, err
    d = json.loads(out)
    pv = d["predicted"]["value"]
    rows = d["changes"] + d["spec_changes"]
    ar = next(c for c in rows if c["parameter"] == "efficiency.custom_ar_fraction")
    assert ar["current"] == ar["search_range"][1] == 1.0 and ar["best_in_range"] == pytest.approx(pv, rel=1e-3)
    assert all(c["best_in_range"] >= pv * (1 - 1e-3) for c in rows if c["best_in_range"] is not None)


def test_an_end_the_schema_refuses_is_searched_halved_and_reported_so(audit_far_claim):
    """review34: the search range and 'moves the metric' read the nominal ends, where an end the system's schema
    refuses is searched halved toward the current value (a NaN there counted as moving). Jalapeño's all-in power
    (1.15 kW, data/systems/jalapeno.toml) searched down to a tenth, 0.115 kW, is below the chip's own power
    (the lower of its TDP and sustained watts: specs/plausibility refuses it), so the searched end is at or above
    that; all-in power prices no time, so it cannot move a speed."""
    data = tomllib.loads(resources.files("jalapeno.data.systems").joinpath("jalapeno.toml").read_text())
    chip = data["chip"]
    own_kw = min(chip["tdp_w"]["value"], chip.get("sustained_w", chip["tdp_w"])["value"]) / 1e3
    allin = data["power"]["allin_kw_per_chip"]["value"]
    d = json.loads(audit_far_claim)
    c = next(c for c in d["changes"] if c["parameter"] == "power.allin_kw_per_chip")
    lo, hi = c["search_range"]
    assert allin / 10 < own_kw <= lo < allin < hi
    assert c["moves_metric"] is False


def test_a_mixed_list_of_changes_keeps_each_row_in_its_columns():
    """review34: the table's layout followed its first row's kind, so a headline row first and a fitted row after
    put the fitted row's eight cells under five headline columns (rich folds or drops the extra cells)."""
    from io import StringIO

    from rich.console import Console

    from jalapeno.cli.audit_tables import _changes_table

    def row(key, kind, current, band, required):
        return {"parameter": key, "kind": kind, "current": current, "band": band, "required": required,
                "factor": required / current, "within_band": band[0] <= required <= band[1], "note": "",
                "best_in_range": 2.0, "moves_metric": True}

    changes = [row("chip.hbm_bandwidth_tb_per_s", "headline", 15.4, [15.4, 15.4], 30.8),
               row("efficiency.kernel_launch_s", "fixed", 4e-6, [2e-6, 6e-6], 3e-6)]
    buf = StringIO()
    _changes_table(Console(file=buf, width=250), changes, "each parameter alone", "max_interactivity", lambda v: v or 0)
    lines = buf.getvalue().splitlines()
    header = next(x for x in lines if "┃" in x and "parameter" in x)
    assert "in band" in header and "kind" in header  # the full layout for a mixed list
    fitted = next(x for x in lines if "efficiency.kernel_launch_s" in x)
    cells = [c.strip() for c in fitted.split("│")[1:-1]]
    assert cells[:2] == ["efficiency.kernel_launch_s", "fixed"] and cells[6] == "yes"  # 3e-6 is inside 2e-6..6e-6
