"""audit's band takes the estimated specs too (bands55): analysis/audit.audit_claim wraps band_pricers in
spec_bands.with_estimated_specs, as compare and report --bands do, so every command gives a derived system one band;
ESTIMATED_SPEC_BANDS_ON is on, and off gives the efficiency sets' band alone."""

import json

import pytest
from cli_runner import run

from jalapeno.analysis import spec_bands
from jalapeno.analysis.spec_bands import with_estimated_specs
from jalapeno.cli.system_opts import system_pricer
from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import band_pricers


def test_the_switch_ships_on():
    assert spec_bands.ESTIMATED_SPEC_BANDS_ON is True


def test_a_bf16_compute_bound_gemm_scales_as_one_over_the_estimated_peak():
    """By hand: a 16,384³ BF16 GEMM is 2 x 16,384³ = 8.8e12 FLOP, ~6-8 ms at Jalapeño's 1,700 TFLOP/s x 0.70-0.84,
    against 1.5 GiB of operands at 15.4 TB/s (~0.1 ms): compute-bound, so its time is 1/peak. Jalapeño's BF16 peak
    is estimated (1,700 TFLOP/s, "FP8 / 2", ±20% in jalapeno.toml): the band's low end prices it at 1,360 (time x
    1,700 / 1,360 = 1.25) and its high end at 2,040 (x 1,700 / 2,040 = 0.8333), each against the same efficiency
    set at the nominal peak. (The row-count rule's half rows, ~200 of 16,384 rows, leave 1e-4 of it.)"""
    pr = system_pricer("jalapeno", "calibrated", [])
    raw = band_pricers(pr)
    banded = with_estimated_specs(pr, raw)
    ob = OpBuilder(1)
    ob.gemm("gemm", "bf16", 16384.0, 16384.0, 16384.0, 2.0, 2.0)
    ops = ob.build()[0]
    for end, want in (("low", 1700 / 1360), ("high", 1700 / 2040)):
        nominal = raw[end].op_times(ops).time_s[0, 0]
        assert banded[end].op_times(ops).time_s[0, 0] / nominal == pytest.approx(want, rel=1e-3), end
        assert banded[end].efficiency == raw[end].efficiency, end  # only the spec moved


ARGS = ("-s", "jalapeno", "-m", "gpt-oss-120b", "-w", "1k1k", "--serving", "agg")


@pytest.mark.parametrize("on", [True, False])
def test_audit_and_compare_give_one_band(capsys, monkeypatch, on):
    """audit --claim's band is compare --bands' band for the same system, model, workload and serving, with the
    switch on (the estimated specs in both) and off (the efficiency sets alone in both); on, the band is wider than
    off (slower specs at the slow end, faster at the fast end), and audit's band line names the specs."""
    seen = {}
    for state in (on, not on):
        monkeypatch.setattr(spec_bands, "ESTIMATED_SPEC_BANDS_ON", state)
        code, out, err = run(capsys, "audit", *ARGS, "--claim", "max_interactivity=1", "--json")
        assert code == 0, err
        seen[state] = json.loads(out)["predicted"]
    monkeypatch.setattr(spec_bands, "ESTIMATED_SPEC_BANDS_ON", on)
    code, out, err = run(capsys, "compare", *ARGS, "--bands", "--json", "--html", "")
    assert code == 0, err
    b = json.loads(out)["systems"]["jalapeno"]["headline"]["bands"]["max_interactivity"]
    a = seen[on]
    assert (a["low"], a["value"], a["high"]) == pytest.approx((b["low"], b["mid"], b["high"]), rel=1e-9)
    wide, narrow = seen[True], seen[False]
    assert wide["value"] == narrow["value"]
    assert wide["low"] < narrow["low"] and wide["high"] > narrow["high"]
    assert "with the estimated specs (chip.peak_dense_tflops.bf16" in wide["band"]
    assert narrow["band"] == "efficiency sets"
