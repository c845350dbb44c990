"""scripts/mlperf_interactive52.py: the MLPerf TensorRT Llama-2-70B Interactive step gap is not how prompts share the
steps (the B200 step is linear in its prompt tokens, so Poisson grouping leaves the mean step), not the per-query tail
(the model's p99 / mean at the run's load meets the run's), and not the per-sequence context (the attention floor
adds a fraction of a millisecond); AMD's Interactive steps are priced slow where B200's is fast (docs/
gap_large_batch_decode.md "Round 52 (mlperfint52)").

Expected values by hand: the B200 run (NVIDIA, inference_results_v5.1 @965182b LoadGen summary) holds 254.6 requests
a GPU (Little's law, scripts/mlperf_interactive_tail37.measured_running's doctest), so a = 254.6 / (272 - 1) = 0.94
prompts a step and 1 - e^-0.94 = 0.609 of the steps carry one; its p99 / mean TPOT is 38.15 / 34.21 = 1.115; the
GigaComputing run at a 512-token budget 33.14 / 31.53 = 1.051."""

from __future__ import annotations

import math

import pytest
from script_module import load_script

it = load_script("mlperf_interactive52")


def test_prompt_share_is_the_poisson_probability_of_at_least_one():
    assert it.prompt_share(0.0) == 0.0
    assert it.prompt_share(0.94) == pytest.approx(1 - math.exp(-0.94))
    assert it.prompt_share(5.6) > 0.99


def test_peer_budgets_read_from_the_configs():
    # closed/GigaComputing/configs/G894-SD1_B200-SXM-180GBx8/Interactive/llama2-70b.py: runtime max_num_tokens 512;
    # NVIDIA's own config 768
    assert it.PEER_BUDGET["GigaComputing"] == 512
    assert it.PEER_BUDGET["NVIDIA"] == 768


@pytest.fixture(scope="module")
def pts():
    from jalapeno.fit.mlperf import load_mlperf

    return load_mlperf()[0]


def test_b200_interactive_steps_mean_is_left_by_poisson_grouping(pts):
    r = next(r for r in it.mixed_rows(pts) if r["row"].startswith("NVIDIA_B200") and r["row"].endswith("Interactive"))
    assert r["running"] == pytest.approx(254.6, abs=0.5)
    assert r["a"] == pytest.approx(254.6 / 271, rel=0.02)
    assert r["share_poisson"] == pytest.approx(0.609, abs=0.01)
    assert r["nonlinear"] < 0.02  # the step is a line in its prompt tokens ...
    assert abs(r["model_mix_s"] - r["poisson_s"]) < 1e-3 * r["tau_s"] * 10  # ... so the grouping moves < 1%
    assert r["measured_ratio"] == pytest.approx(38.15 / 34.21, abs=0.002)
    assert r["p99_s"] / r["tau_s"] == pytest.approx(r["measured_ratio"], abs=0.02)  # the tail is met
    assert r["measured_s"] - r["tau_s"] > 0.007  # and the mean step is ~8 ms short (round 43: 34.2 vs 26.0)


def test_attention_floor_per_sequence_is_a_fraction_of_a_millisecond(pts):
    rows = {r["row"].split("_")[0]: r for r in it.attention_rows(pts)}
    b200 = rows["NVIDIA"]
    assert 0.0 < b200["per_seq_s"] - b200["at_mean_s"] < 0.5e-3  # convex (the floor), but not the ~8 ms
    assert rows["Nebius"]["per_seq_s"] == pytest.approx(
        rows["Nebius"]["at_mean_s"], rel=1e-3
    )  # Hopper: no floor, linear


def test_smaller_budget_peer_has_the_shorter_tail():
    rows = {r["who"].split()[0]: r for r in it.budget_rows()}
    assert rows["GigaComputing"]["ratio"] == pytest.approx(33.14 / 31.53, abs=0.002)
    assert rows["GigaComputing"]["ratio"] < min(r["ratio"] for k, r in rows.items() if k != "GigaComputing")
    assert rows["GigaComputing"]["ttft_mean_ms"] > max(
        r["ttft_mean_ms"] for k, r in rows.items() if k != "GigaComputing"
    )


def test_amd_steps_are_priced_slow_where_b200_is_priced_fast(pts):
    for r in it.amd_rows(pts):
        assert r["TPOT_mean"] < r["model_tpot_s"]  # measured 32.1 / 35.3 ms against the model's ~41
