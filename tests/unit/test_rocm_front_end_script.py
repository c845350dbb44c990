"""scripts/rocm_front_end.py: the "before" pricing it compares against is the global front end (round 31)."""

from __future__ import annotations

import pytest
from script_module import load_script

from jalapeno.fit.validate import MeasuredPoint

script = load_script("rocm_front_end")


def point(framework, system):
    return MeasuredPoint("inferencex", "p", system, "gpt-oss-120b", "mxfp4", framework, 1024, 1024, 128.0, None, {},
                         "matched")


@pytest.mark.parametrize("framework, system", [("atom", "mi355x"), ("sglang", "mi325x")])
def test_before_is_the_global_front_end(framework, system):
    # the efficiency set's front end (specs/efficiency.py: 0.15 s + 6.4 us per prompt token; the profile sets none)
    st = script.without_server_front_end(point(framework, system))
    assert "inferencex" not in st.clients
    assert st.request_overhead_s is None and st.prompt_overhead_s_per_token is None


def test_profiles_compared_are_the_twin_rule_s():
    assert script.SAME_SERVER == {"sglang-rocm": "sglang", "atom-rocm": "vllm"}
