"""scripts/fit_stacks.py's ``--stacks`` (round 50, fp4pair50): refit some profiles, keep the others' shipped entries."""

import tomllib

import pytest
from script_module import load_script

from jalapeno.errors import SpecError

fs = load_script("fit_stacks")


def test_parse_stacks_orders_by_plan_and_names_a_bad_profile():
    # PLAN order is sglang, trtllm, vllm, dynamo-trtllm, sglang-rocm, atom-rocm (fit/stack_fit.PLAN): the twins
    # (sglang-rocm <- sglang) are fitted after the program they copy, whatever order the user types
    assert fs.parse_stacks("sglang-rocm,sglang") == ("sglang", "sglang-rocm")
    assert fs.parse_stacks(None) == ("sglang", "trtllm", "vllm", "dynamo-trtllm", "sglang-rocm", "atom-rocm")
    with pytest.raises(SpecError) as e:
        fs.parse_stacks("trtllm,vllm-rocm")  # vllm-rocm is a profile, but derived (base vllm), not fitted
    assert e.value.field == "--stacks" and "vllm-rocm" in e.value.problem and "trtllm" in e.value.fix
    with pytest.raises(SpecError):
        fs.parse_stacks(" , ")


def test_merged_replaces_only_the_refitted_profile_in_the_shipped_order():
    shipped = fs.to_toml(
        {
            "sglang": {"values": {"kernel_launch_s": 3.6e-6}, "report": {"n_fit": 1}},
            "trtllm": {"values": {"kernel_launch_s": 2.6e-6}, "report": {"n_fit": 2}},
        }
    )
    new = {"trtllm": {"values": {"kernel_launch_s": 2.4e-6}, "report": {"n_fit": 3}}}
    out = fs.merged(new, shipped)
    assert list(out) == ["sglang", "trtllm"]
    assert out["sglang"]["values"] == {"kernel_launch_s": 3.6e-6}  # kept as shipped
    assert out["trtllm"]["values"] == {"kernel_launch_s": 2.4e-6} and out["trtllm"]["report"] == {"n_fit": 3}
    # written back, the kept profile's table is the same text as before
    again = tomllib.loads(fs.to_toml(out))["fits"]
    assert again["sglang"] == tomllib.loads(shipped)["fits"]["sglang"]


def test_the_shipped_file_round_trips_through_merged():
    # with nothing refitted, merging writes the shipped file back byte for byte (so --stacks X --check compares X only)
    text = fs.OUT.read_text()
    assert fs.to_toml(fs.merged({}, text)) == text
