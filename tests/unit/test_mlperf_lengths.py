"""The shipped MLPerf dataset lengths (fit/mlperf_rules.DEFAULT_LENGTHS) against figures published
independently of them: the sample counts of the MLPerf rules, the reference implementations'
filters and mean outputs, NVIDIA's engine limits and TensorRT-LLM's stated mean input."""

from __future__ import annotations

import pytest

from jalapeno.errors import SpecError
from jalapeno.fit.mlperf_rules import benchmark_spread


def test_sample_counts_are_the_rules_dataset_sizes():
    """loadgen/mlperf.conf performance_sample_count: llama2-70b 24,576, deepseek-r1 4,388, llama3.1-405b 8,313."""
    assert [benchmark_spread(b).isl_tokens.size for b in ("llama2-70b-99", "deepseek-r1", "llama3.1-405b")] == \
        [24576, 4388, 8313]


def test_openorca_prompts_pass_the_reference_filter():
    """language/llama2-70b/processorca.py keeps tok_input_length < 1024 (seqlen_limit=1024)."""
    s = benchmark_spread("llama2-70b-99")
    assert s.isl_tokens.max() < 1024 and s.isl_tokens.min() >= 1


def test_deepseek_lengths_match_the_reference_run_and_nvidia_limits():
    """language/deepseek-r1/README.md: mean-output-tok-len 3886.2274 (outputs capped at 20K);
    NVIDIA configs max_input_len 3140; TensorRT-LLM tech blog 10: average input length 803 tokens."""
    s = benchmark_spread("deepseek-r1")
    assert s.mean_osl == pytest.approx(3886.2274, abs=0.05)
    assert s.isl_tokens.max() == 3140 and s.osl_tokens.max() == 20000
    assert 803 <= s.mean_isl < 804


def test_llama405b_outputs_match_the_readme():
    """language/llama3.1-405b/README.md: tokens_per_sample 684.68."""
    assert benchmark_spread("llama3.1-405b").mean_osl == pytest.approx(684.68, abs=0.005)


def test_unknown_benchmark_and_missing_file_are_named(tmp_path):
    with pytest.raises(SpecError, match="no dataset lengths for 'gptj'"):
        benchmark_spread("gptj")
    with pytest.raises(SpecError, match="file not found"):
        benchmark_spread("deepseek-r1", tmp_path / "none.csv.gz")
