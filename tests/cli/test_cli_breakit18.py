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
    assert "time by constraint (an op's roofline part under compute or hbm_bandwidth, its per-kernel overhead" in text
    assert "HBM traffic per chip: " in text and "(weights 34.75," in text and "at peak bandwidth" in text


def test_predict_splits_the_mean_ttft_into_its_parts(capsys):
    # was: TTFT 450 ms at concurrency 1 on 8xH200 beside a ~250 ms prefill, unexplained: the fitted front end
    # (request_overhead_s 0.15 s + prompt_overhead_s_per_token 6.4e-6 s x ISL, data/calibration/h200.toml)
    # is the rest; at concurrency 1 nobody else is waiting, so the queue part is ~0
    args = ("predict", "-s", "h200", "-m", "deepseek-r1", "--tp", "8", "-c", "1", "--fixed-lengths")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    d = json.loads(out)
    parts = d["ttft_parts"]
    assert list(parts) == ["frontend_s", "prefill_s", "kv_transfer_s", "first_step_s", "queue_and_waits_s"]
    assert parts["frontend_s"] == pytest.approx(0.15 + 6.4e-6 * 8192)
    assert parts["kv_transfer_s"] == 0.0  # aggregated: no hand-off
    assert parts["first_step_s"] == pytest.approx(d["tpot_s"] / 2)  # no MTP: one token a step
    assert abs(parts["queue_and_waits_s"]) < 1e-3
    assert sum(parts.values()) == pytest.approx(d["ttft_s"])
    # the 8K prompt's prefill: within the step time `jalapeno step` gives for it beside one decoding sequence
    code, out, err = run(capsys, "step", "-s", "h200", "-m", "deepseek-r1", "--tp", "8", "-b", "1", "-c", "8192",
                         "--prefill-tokens", "8192", "--json")
    assert parts["prefill_s"] == pytest.approx(json.loads(out)["step_time_s"], rel=0.05)
    code, out, err = run(capsys, *args)
    text = " ".join(out.split())
    assert "TTFT mean, by part" in text and "front end 202 + prefill" in text and "queue, batch and wave waits 0 ms" in text
    assert "half a decode step 4.2 +" in text  # under 10 ms: one decimal (TPOT 8.41 ms / 2)


def test_a_disaggregated_ttft_names_its_kv_transfer(capsys):
    code, out, err = run(capsys, "predict", "--system", "gb200-nvl72", "--model", "deepseek-r1", "-c", "256",
                         "--prefill", "tp=4,ep=4,workers=4", "--decode", "dp=32,ep=32,workers=1", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["ttft_parts"]["kv_transfer_s"] == pytest.approx(d["kv_transfer_s"])
    assert sum(d["ttft_parts"].values()) == pytest.approx(d["ttft_s"])


def test_predict_states_its_lengths_and_that_it_prices_a_whole_run(capsys):
    # a new user read '8192/1024' in the title and found E2E != TTFT + 1023 x TPOT: the lengths are InferenceX's
    # uniform [0.8 L, L] (means 0.9 L: 7,373 / 922); and predict's throughput sat below frontier's at the same
    # deployment and concurrency without a word (a whole run from an idle start vs the steady state)
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-c", "8")
    assert code == 0, err
    text = " ".join(out.split())
    assert "uniform 6,554-8,192 / 819-1,024, means 7,373 / 922 (InferenceX --random-range-ratio 0.8;" in text
    assert "a whole InferenceX run: 10·C requests from an idle start" in text
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-c", "8", "--fixed-lengths")
    assert "fixed 8,192 / 1,024" in " ".join(out.split())


def test_step_tbo_says_its_tables_are_the_unsplit_step(capsys):
    # the tables were titled 'times below are two-batch overlapped' but print the unsplit step; the hidden
    # all-to-all (the two half-batch exchanges) exceeded the table's whole-step all-to-all without a word
    code, out, err = run(capsys, "step", "--system", "gb200-nvl72", "--dp", "16", "--ep", "16", "--batch", "4096",
                         "--overlap", "tbo")
    assert code == 0, err
    text = " ".join(out.split())
    assert "ops and collectives of the whole step, unsplit; the step time below is two-batch overlapped" in text
    assert "each micro-batch's exchange is priced at half the batch" in text


def test_compare_ratio_flags_follow_the_per_kw_bracket(default_compare):
    # was '2.78x (below a frontier's start) (1.96x)': the per-kW bracket read as a second flag
    from jalapeno.report.compare_cells import _ratio

    r = {"ratio": 2.78, "status_a": "below_frontier_start", "status_b": "ok", "at_frontier_end": False}
    # round 22 printed n/a; round 29: that side reads its peak, flagged after the bracket
    assert _ratio(r) == ("2.78x", "below frontier start: this")  # round 49: naming the side (newuser49)
    assert _ratio({**r, "status_a": "ok", "at_frontier_end": True}) == ("2.78x", "at frontier end")
    code, out, err, _ = default_compare  # ``jalapeno compare``, run once (tests/conftest.py)
    text = " ".join(out.split())
    assert code == 0, err
    assert "[at frontier end: " in text and ") (at frontier end)" not in text
