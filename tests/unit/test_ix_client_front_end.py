"""InferenceX's own points take their engine's front end fitted on the same client's exported rows (fit/stack_fit.
same_client_front_end; round 30, ixttft30): the rule, and what the shipped profiles give, by hand."""

import pytest

from jalapeno.fit.stack_fit import same_client_front_end
from jalapeno.specs.stacks import stacks

EXPORT = {"request_overhead_s": 0.025, "prompt_overhead_s_per_token": 7.5e-6, "agg_burst_fraction": 0.1}


def test_rule_takes_the_twin_entry_front_end_only():
    got = same_client_front_end({}, {"inferencex-db": EXPORT, "aiconfigurator": {"request_overhead_s": 0.2,
                                                                                "prompt_overhead_s_per_token": 0.0}})
    assert got == {"inferencex": {"request_overhead_s": 0.025, "prompt_overhead_s_per_token": 7.5e-6}}


@pytest.mark.parametrize("values, clients", [
    ({"request_overhead_s": 0.0875, "prompt_overhead_s_per_token": 1.6875e-5}, {"inferencex-db": EXPORT}),  # own fit wins
    ({}, {}),                                                                      # no export entry: no pooling across engines
    ({}, {"inferencex-db": {"request_overhead_s": 0.025}}),                        # half an entry is not a front end
])
def test_rule_leaves_a_profile_alone(values, clients):
    assert same_client_front_end(values, clients) == {}


def test_shipped_profiles():
    s = stacks()
    for name in ("trtllm", "vllm", "vllm-rocm"):  # vllm-rocm inherits vLLM's entries (base = "vllm")
        ix, db = s[name].for_client("inferencex"), s[name].for_client("inferencex-db")
        assert (ix.request_overhead_s, ix.prompt_overhead_s_per_token) == (db.request_overhead_s,
                                                                            db.prompt_overhead_s_per_token)
        assert s[name].request_overhead_s is None  # its own front end is not fitted: the rule applies
    for name in ("sglang", "sglang-rocm", "atom-rocm", "dynamo-trtllm"):  # own fit, or no export entry: unchanged
        assert s[name].for_client("inferencex") is s[name]

