"""Round-26 audit of the MLPerf v5.1 mapping (fit/mlperf.py) against the primary sources, by hand: the DeepSeek-R1
rows' rules, units and chip counts from their LoadGen logs (inference_results_v5.1 @965182b, closed/*/results/*/
deepseek-r1/*/performance/run_1/mlperf_log_summary.txt), the serving mode a frontier mapping may pick (the harnesses
serve aggregated engines), and the slot replay of scripts/mlperf_offline_percentiles.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from jalapeno.fit.mlperf import MLPERF_RULES, load_mlperf, serving_of


@pytest.fixture(scope="module")
def points():
    return {p.id: p for p in load_mlperf()[0]}


def test_deepseek_rules_are_the_logs_test_parameters():
    """Every DeepSeek-R1 log: ttft_latency (ns) 2000000000, tpot_latency (ns) 80000000, performance_sample_count
    4388; Offline samples_per_query 26328 = six permutations of the 4,388 (sample_concatenate_permutation true)."""
    r = MLPERF_RULES["deepseek-r1"]
    assert (r.server_ttft_s, r.server_tpot_s, r.samples) == (2.0, 0.080, 4388)
    assert 26328 == 6 * 4388


def test_deepseek_rows_are_system_output_tokens_over_the_systems_gpus(points):
    """NVIDIA B200 Offline: 'Tokens per second: 33379' = 'Samples per second: 8.93431' x 3,736 output tokens per
    sample (so output tokens of the whole 8-GPU system, not per GPU, not samples); per chip with input counted:
    33379 / 8 x (803.79 + 3736) / 3736 = 5,070.1. GB200-NVL72 x72: 289,712 tok/s over 72 GPUs (77.995 samples/s
    x 3,714), 289712 / 72 x (803.79 + 3714) / 3714 = 4,894.6."""
    assert 8.93431 * 3736 == pytest.approx(33379, rel=1e-3) and 77.995 * 3714 == pytest.approx(289712, rel=1e-3)
    b = points["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Offline"]
    assert b.chips == 8 and b.measured["throughput_per_chip"] == pytest.approx(5070.1, rel=2e-4)
    g = points["mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_deepseek-r1_Offline"]
    assert g.chips == 72 and g.measured["throughput_per_chip"] == pytest.approx(4894.6, rel=2e-4)


def test_aggregated_harnesses_map_to_aggregated_frontiers(points):
    """NVIDIA's TensorRT-LLM harness (one trtllm-serve endpoint per instance) and AMD's vLLM harness (one engine per
    GPU) serve aggregated engines; the Dynamo Llama-3.1-405B row is the disaggregated harness."""
    assert serving_of("mlperf51_X_TRT_deepseek-r1_Server", "TensorRT-LLM") == "agg"
    assert serving_of("mlperf51_AMD_8xMI300X_llama2-70b-99_Offline", "AMD ROCm stack (vLLM-based per v5.1 code)") == "agg"
    assert serving_of("mlperf51_X_Dynamo_llama3p1-405b_Interactive", "TensorRT-LLM") == "both"
    assert serving_of("mlperf51_X_llama2-70b-99_Offline", "some other harness") == "both"
    modes = {p.id: p.serving for p in points.values()}
    assert sum(m == "both" for m in modes.values()) == 1
    assert modes["mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_Dynamo_llama3p1-405b_Interactive"] == "both"
    assert modes["mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama3p1-405b_Server"] == "agg"


def _script():
    path = Path(__file__).resolve().parents[2] / "scripts" / "mlperf_offline_percentiles.py"
    spec = importlib.util.spec_from_file_location("mlperf_offline_percentiles", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_slot_replay_counts_steps_by_hand():
    """Two slots, four samples of 2 tokens: samples 1-2 end at step 2, 3-4 at step 4, both slots busy throughout.
    Lengths 1 and 3 (one permutation each time), two slots, two samples: they end at steps 1 and 3; busy 2, 1, 1."""
    replay = _script().replay
    done, busy = replay(np.array([2, 2]), 4, 2)
    assert sorted(done.tolist()) == [2, 2, 4, 4] and busy.tolist() == [2, 2, 2, 2]
    done, busy = replay(np.array([1, 3]), 2, 2)
    assert sorted(done.tolist()) == [1, 3] and busy.tolist() == [2, 1, 1]


def test_any_serving_restores_the_mapping_before_and_a_bad_value_is_refused():
    from jalapeno.errors import SpecError

    assert {p.serving for p in load_mlperf(serving="any")[0]} == {"both"}
    with pytest.raises(SpecError, match="serving"):
        load_mlperf(serving="disaggregated")
