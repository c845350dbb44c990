"""fit/mlperf_scenarios: one MLPerf engine under its benchmark's rules keeps Interactive <= Server <= unbounded.

The rules are loadgen/mlperf.conf's (v5.1 submissions' copies: ``llama2-70b.Server`` 2,000 / 200 ms,
``llama2-70b-interactive`` 450 / 40 ms, ``llama3_1-405b`` 6,000 / 175 ms, ``-interactive`` 4,500 / 80 ms,
``deepseek-r1`` 2,000 / 80 ms): a tighter rule admits a subset of the loads, so the best within it cannot be higher.
"""

from __future__ import annotations

import pytest

from jalapeno.errors import SpecError
from jalapeno.fit.mlperf import MLPERF_RULES, load_mlperf
from jalapeno.fit.mlperf_scenarios import benchmark_of, scenario_ladder

#: one row per benchmark and scenario kind (the whole set: scripts/mlperf_scenarios42.py, ~1 minute)
ROWS = (
    "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server",
    "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_Interactive",
    "mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama3p1-405b_Server",
)


@pytest.fixture(scope="module")
def rows():
    pts, _ = load_mlperf()
    return {p.id: p for p in pts}


def test_rules_are_the_v51_conf_values():
    # loadgen/mlperf.conf as the v5.1 submissions carry it (ms), written out here, not read from the code
    assert (MLPERF_RULES["llama2-70b-99"].server_ttft_s, MLPERF_RULES["llama2-70b-99"].server_tpot_s) == (2.0, 0.2)
    assert (MLPERF_RULES["llama2-70b-99"].interactive_ttft_s, MLPERF_RULES["llama2-70b-99"].interactive_tpot_s) == (
        0.45,
        0.04,
    )
    assert (MLPERF_RULES["llama3.1-405b"].interactive_ttft_s, MLPERF_RULES["llama3.1-405b"].interactive_tpot_s) == (
        4.5,
        0.08,
    )
    assert (MLPERF_RULES["deepseek-r1"].server_ttft_s, MLPERF_RULES["deepseek-r1"].server_tpot_s) == (2.0, 0.08)


@pytest.mark.parametrize("key", ROWS)
def test_interactive_at_most_server_at_most_unbounded(rows, key):
    s = scenario_ladder(rows[key])
    assert s["server"] > 0 and s["unbounded"] >= s["server"] * (1 - 1e-9)
    if "interactive" in s:  # DeepSeek-R1's Interactive rule (15 ms) admits no load of this engine: 0
        assert s["interactive"] <= s["server"] * (1 + 1e-9)
        assert s["interactive"] == 0 or s["interactive_load"] <= s["server_load"] * (1 + 1e-9)
    assert s["server_load"] <= s["unbounded_load"] * (1 + 1e-9) <= rows[key].concurrency * (1 + 1e-9)


def test_counted_run_keeps_the_order(rows):
    s = scenario_ladder(rows[ROWS[0]], counted=True)
    steady = scenario_ladder(rows[ROWS[0]])
    assert s["server"] <= s["unbounded"] * (1 + 1e-9)
    # LoadGen's count (to the last-issued query's response) can only take time away from the steady state
    assert s["server"] <= steady["server"] and s["unbounded"] <= steady["unbounded"]


def test_bad_rows_are_refused(rows):
    offline = rows["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Offline"]
    with pytest.raises(SpecError, match="mapping"):
        scenario_ladder(offline)
    assert benchmark_of(offline) == "deepseek-r1"
    import dataclasses

    with pytest.raises(SpecError, match="model"):
        benchmark_of(dataclasses.replace(offline, model="qwen3-235b-a22b"))
