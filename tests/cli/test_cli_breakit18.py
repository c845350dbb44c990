"""Findings of round 17/18's break-it pass: outputs a user misread. Expected figures by hand."""

from __future__ import annotations

import json

import pytest
from cli_runner import run

#: Llama-3.3-70B (config.json: hidden 8192, 80 layers, intermediate 28672, 64 heads, 8 KV heads of 128,
#: vocab 128256): weights one decode step reads, BF16, TP4 (the input embedding is a lookup, not read whole)
_LAYER = 8192 * (8192 + 2 * 1024 + 8192) + 3 * 8192 * 28672
LLAMA70_TP4_WEIGHT_BYTES = 2 * (80 * _LAYER + 128256 * 8192) / 4
H200_HBM_BYTES_PER_S = 4.8e12  # hardware_specs.md: H200 SXM 4.8 TB/s


def test_step_states_the_hbm_floor_beside_the_per_constraint_times(capsys):
    # was: "hbm_bandwidth 5.50 ms" read as the step's HBM time, below what the weights alone need at peak
    # bandwidth: it is the time of the ops HBM binds; an overhead-bound op carries its bytes elsewhere
    code, out, err = run(capsys, "step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "4", "-b", "1", "-c", "1024",
                         "--json")
    assert code == 0, err
    hbm = json.loads(out)["hbm_traffic"]
    assert hbm["weight_bytes"] == pytest.approx(LLAMA70_TP4_WEIGHT_BYTES, rel=1e-3)
    assert hbm["floor_s"] == pytest.approx(hbm["bytes"] / H200_HBM_BYTES_PER_S)
    assert 7.2e-3 < hbm["floor_s"] < 7.4e-3  # 34.75 GB of weights + a little KV / activations at 4.8 TB/s
    code, out, err = run(capsys, "step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "4", "-b", "1", "-c", "1024")
    text = " ".join(out.split())
    assert "time of the ops each constraint binds" in text
    assert "HBM traffic per chip: " in text and "(weights 34.75," in text and "at peak bandwidth" in text
