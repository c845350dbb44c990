"""CLI: ``--routing`` and ``--eplb`` on step, predict, frontier/compare and simulate."""

from __future__ import annotations

import json

from cli_runner import check_error, run


def _step(capsys, *extra):
    code, out, err = run(capsys, "step", "-s", "gb200-nvl72", "--dp", "32", "--ep", "32", "-b", "2048",
                         "-c", "2000", "--json", *extra)
    assert code == 0, err
    return json.loads(out)


def test_step_eplb_is_faster_and_heavier_at_wide_ep(capsys):
    off, on = _step(capsys, "--routing", "measured"), _step(capsys, "--routing", "measured", "--eplb", "32")
    assert on["step_time_s"] < off["step_time_s"]
    assert on["memory"]["weights_bytes"] > off["memory"]["weights_bytes"]
    uni = _step(capsys)  # the default: uniform routing, no hot rank
    assert uni["step_time_s"] < off["step_time_s"]


def test_bad_eplb_and_routing_get_one_line(capsys):
    check_error(*run(capsys, "step", "-s", "gb200-nvl72", "--dp", "32", "--ep", "32", "--eplb", "5"),
                "eplb", "261 slots", "--eplb 32")
    check_error(*run(capsys, "step", "-s", "gb200-nvl72", "--routing", "zipf"), "--routing", "uniform")
    check_error(*run(capsys, "frontier", "-s", "gb200-nvl72", "--eplb", "some"), "--eplb", "off")
    check_error(*run(capsys, "predict", "-s", "gb200-nvl72", "-c", "8", "--tp", "8", "--eplb", "0"), "eplb", "ep1")


def test_predict_pools_take_eplb(capsys):
    code, out, err = run(capsys, "predict", "-s", "gb200-nvl72", "-c", "64", "--prefill", "tp=8,ep=8,eplb=40",
                         "--decode", "dp=32,ep=32,eplb=32", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert "EPLB+40" in d["deployment"]["label"] and "EPLB+32" in d["deployment"]["label"]


def test_step_generated_routing_prices_a_decode_step_as_measured(capsys):
    # a decode-only step routes generated tokens only: --routing generated equals measured on it
    # (the hot EP rank and the touched experts alike), and differs from the uniform default
    gen, meas, uni = (_step(capsys, "--routing", mode) for mode in ("generated", "measured", "uniform"))
    assert gen["step_time_s"] == meas["step_time_s"] != uni["step_time_s"]
