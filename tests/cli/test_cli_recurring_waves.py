"""``jalapeno predict --recurring-waves``: the periodic regime of a fixed-length closed loop (docs/model.md §8.7 (6))."""

from __future__ import annotations

import json

import pytest

from cli_runner import check_error, run

BASE = ("predict", "-s", "h200", "-m", "gpt-oss-120b", "--isl", "1024", "--osl", "1024", "--tp", "2", "--json")


def test_recurring_waves_raise_ttft_and_leave_throughput_and_tpot(capsys):
    """128 users of 1k prompts, budget 8,192: the recurring burst (K decode steps of ~15 ms before the
    first arrival, 0.1 s prefill steps) puts the mean TTFT near 0.9 s, three times the spreading
    waves' (the simulator: 0.91 s); TPOT does not depend on it, and the run's throughput falls with
    its mean E2E (Little's law over the run: throughput x E2E unchanged)."""
    code, out, _ = run(capsys, *BASE, "-c", "128", "--fixed-lengths")
    assert code == 0
    spread = json.loads(out)
    code, out, _ = run(capsys, *BASE, "-c", "128", "--fixed-lengths", "--recurring-waves")
    assert code == 0
    recur = json.loads(out)
    assert recur["ttft_s"] > 2.5 * spread["ttft_s"]
    assert 0.75 < recur["ttft_s"] < 1.1
    assert recur["tpot_s"] == spread["tpot_s"]
    assert recur["throughput_per_chip"] * recur["e2e_s"] == pytest.approx(spread["throughput_per_chip"] * spread["e2e_s"])


def test_recurring_waves_need_fixed_lengths_and_a_concurrency(capsys):
    check_error(*run(capsys, *BASE, "-c", "128", "--recurring-waves"), "--recurring-waves", "--fixed-lengths")
    check_error(*run(capsys, *BASE, "--rate", "2", "--fixed-lengths", "--recurring-waves"), "--recurring-waves",
                "--concurrency")
