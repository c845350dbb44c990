"""scripts/gfx942_host_cpu55.py: the host ratio the same-image MI300X / MI325X InferenceX pairs would need
(docs/gap_large_batch_decode.md, round 55 amd55). Expected values are arithmetic by hand or read from
inferencex_points.csv, not the script's output."""

from __future__ import annotations

import csv
import math
from importlib.resources import files

import numpy as np
import pytest

from jalapeno.errors import SpecError
from jalapeno.specs.stack_profile import Stack
from script_module import load_script

s = load_script("gfx942_host_cpu55")


def test_scaled_stack_multiplies_only_the_host_fields_it_sets():
    st = Stack("x", "x", "x", kernel_launch_s=9.5e-6, step_overhead_s=4.75e-4, request_overhead_s=0.025)
    t = s.scaled_stack(st, 1.35)
    # 0.025 x 1.35 = 0.03375 s; 0.475 ms x 1.35 = 0.64125 ms; the kernel launch is not a host field
    assert t.request_overhead_s == pytest.approx(0.03375)
    assert t.step_overhead_s == pytest.approx(6.4125e-4)
    assert t.kernel_launch_s == 9.5e-6
    assert t.prompt_overhead_s_per_token is None and t.tp_rank_step_s is None
    f = s.scaled_stack(st, 2.0, s.FRONT_END_FIELDS)
    assert f.request_overhead_s == pytest.approx(0.05) and f.step_overhead_s == 4.75e-4
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(SpecError, match="host ratio"):
            s.scaled_stack(st, bad)


def test_needed_ratio_by_hand():
    # ratio 1.02 + 0.05 (s - 1) reaches 1.126 at s = 1 + 0.106 / 0.05 = 3.12
    assert s.needed_ratio(lambda r: 1.02 + 0.05 * (r - 1.0), 1.126) == pytest.approx(3.12, abs=2e-3)
    assert s.needed_ratio(lambda r: 1.2, 1.1) == 1.0  # already past the target at s = 1
    assert math.isinf(s.needed_ratio(lambda r: 1.0 + 0.001 * r, 1.126))  # 1.01 at s = 10: never


def test_goal_figures_by_hand():
    # MI300X held-out TTFT at main (rows 28 / 35 / 45 / 53): |e| sorted 7.76, 10.73, 29.36, 35.78 -> (10.73 + 29.36) / 2
    e = np.array([-0.107322, 0.077620, -0.357783, -0.293613])
    med, bias = s.goal_figures(e)
    assert med == pytest.approx(20.05, abs=0.01)
    assert bias == pytest.approx(-20.05, abs=0.01)


def test_pairs_are_same_run_rows():
    with open(files("jalapeno") / "data/validation/inferencex_points.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    by_id = {str(i + 2): r for i, r in enumerate(rows)}  # a row's id is its line number in the file
    for a, b in s.PAIRS:
        ra, rb = by_id[a], by_id[b]
        assert ra["hardware"] == "MI325X" and rb["hardware"] == "MI300X"
        for col in ("model", "framework", "isl", "osl", "conc", "date"):
            assert ra[col] == rb[col], (a, b, col)
    # rows 51 / 53 (gpt-oss 1k) are left out: same date and engine, but the run is TP2 on MI325X and TP1 on MI300X
    assert ("51", "53") not in s.PAIRS


def test_ratios_span_by_hand():
    # 5.0 / 3.7 = 1.351 (EPYC 9575F over 9534 boost clocks); x 1.16 (Zen 5 IPC) = 1.568; 1.16 x 5.0 / 3.1 = 1.871
    assert s.RATIOS[0] == 1.0 and s.RATIOS[1] == 1.16
    assert s.RATIOS[2] == pytest.approx(5.0 / 3.7, abs=0.005)
    assert s.RATIOS[3] == pytest.approx(1.16 * 5.0 / 3.7, abs=0.005)
    assert s.RATIOS[4] == pytest.approx(1.16 * 5.0 / 3.1, abs=0.005)


def test_vllm_pair_decode_ratio_is_out_of_host_reach():
    # row 45's host constants x 10 (vLLM: 0.475 ms a step, 25 ms + 7.5 us a prompt token) still leave the model's
    # MI300X / MI325X TPOT ratio below the measured 49.0 / 43.5 = 1.126: the host step is ~1% of a 46 ms step
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validate import predict_points

    points, _ = load_inferencex(files("jalapeno") / "data/validation/inferencex_points.csv")
    p44, p45 = (next(p for p in points if p.id.endswith(f":{n}")) for n in ("44", "45"))
    tpot44 = predict_points([p44]).set_index("metric").loc["tpot_s", "predicted"]
    slow = predict_points([p45], stack_of=s.host_stack_of({"mi300x": 10.0})).set_index("metric")
    base = predict_points([p45]).set_index("metric")
    assert slow.loc["tpot_s", "predicted"] > base.loc["tpot_s", "predicted"]  # the scale reaches the step
    assert slow.loc["tpot_s", "predicted"] / tpot44 < 49.0 / 43.5
