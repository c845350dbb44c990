"""InferenceX's own points take their engine's front end fitted on the same client's exported rows (fit/stack_fit.
same_client_front_end; round 30, ixttft30) and the ROCm profiles their server program's (SAME_SERVER; round 31, ixttft31):
the rules, and what the shipped profiles give, by hand."""

import pytest

from jalapeno.fit.stack_front_ends import same_client_front_end
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
    for name in ("sglang", "dynamo-trtllm"):  # own fit, or no export entry and no twin server: unchanged
        assert s[name].for_client("inferencex") is s[name]


def front(st):
    return st.request_overhead_s, st.prompt_overhead_s_per_token


@pytest.mark.parametrize("name, twin", [("sglang-rocm", "sglang"), ("atom-rocm", "vllm")])
def test_rocm_profiles_take_their_server_programs_front_end(name, twin):
    """Round 31 (fit/stack_fit.SAME_SERVER): InferenceX's own points on SGLang-ROCm get SGLang's own fitted front end,
    on ATOM vLLM's (its exports' entry); neither profile fits one of its own."""
    s = stacks()
    assert s[name].request_overhead_s is None and "inferencex-db" not in s[name].clients
    assert front(s[name].for_client("inferencex")) == front(s[twin].for_client("inferencex"))


def test_atom_front_end_fits_inside_its_measured_ttft():
    """InferenceX row 49 (MI355X gpt-oss-120b, ATOM, 1k/1k C128, InferenceX-app blog @2d1d3d65): median TTFT 50.5 ms.
    The mean prompt is 0.9 x 1024 = 921.6 tokens (InferenceX's range ratio 0.8). The global constant's front end alone,
    0.15 s + 6.4 us x 921.6 = 155.9 ms, is three times the whole measured TTFT; vLLM's, 25 ms + 7.5 us x 921.6 =
    31.9 ms (round 35's stack refit: 6.875 us before, 31.3 ms), leaves 19 ms for a 1k prefill and a decode step (16 ms
    modelled) — the hand figures, not the model's."""
    a, b = front(stacks()["atom-rocm"].for_client("inferencex"))
    assert a + b * 921.6 == pytest.approx(0.025 + 7.5e-6 * 921.6) == pytest.approx(0.031912, abs=1e-5)
    assert a + b * 921.6 < 0.0505 < 0.15 + 6.4e-6 * 921.6



def test_fit_stack_takes_the_twin_servers_front_end_and_says_so(monkeypatch):
    """fit/stack_fit.fit_stack's ``server_front`` (round 31, SAME_SERVER): a profile that fits no front end of its own
    (here: no points at all) and has no ``inferencex`` entry takes the twin's pair as given, and its report says where
    the entry came from (stack_fits.toml showed the pair beside 'not fitted' notes only); an own ``inferencex`` entry
    is not replaced."""
    import pandas as pd

    from jalapeno.fit import stack_fit

    monkeypatch.setattr(stack_fit, "_predict", lambda pts, st: pd.DataFrame(
        columns=["id", "metric", "predicted", "measured", "error"]))
    twin = {"request_overhead_s": 0.0875, "prompt_overhead_s_per_token": 1.6875e-5}
    got = stack_fit.fit_stack("sglang-rocm", [], {}, front_end=True, server_front=twin)
    assert got["clients"]["inferencex"] == twin
    assert any("SAME_SERVER" in n for n in got["report"]["notes"])
    plain = stack_fit.fit_stack("sglang-rocm", [], {}, front_end=True)
    assert "inferencex" not in plain["clients"] and not any("SAME_SERVER" in n for n in plain["report"]["notes"])
