"""scripts/engine_allreduce_coverage.py: the running-minimum changes it lists, against the data file's rows.

Expected from src/jalapeno/data/collectives/engine_allreduce.toml (aiconfigurator-core 0.12.0 vLLM 0.24.0
b200_sxm, TP 8, bytes per rank -> ms): 262,144 -> 0.0258032 and 524,288 -> 0.0261494, both above 1,048,576's
0.0171725 (priced at it); the TensorRT-LLM B200 curve has no such point at 2 KiB or more.
"""

from __future__ import annotations

from script_module import load_script

cov = load_script("engine_allreduce_coverage")


def test_running_minimum_changes_listed_by_hand():
    lines = cov._running_min_changes("vllm")
    b200 = [s for s in lines if s.startswith("vllm b200 TP8 ")]
    assert b200 == ["vllm b200 TP8 262144 B: 25.8 us measured, priced 17.2 us",
                    "vllm b200 TP8 524288 B: 26.1 us measured, priced 17.2 us"]
    assert not [s for s in cov._running_min_changes("trtllm") if s.startswith("trtllm b200 ")]
