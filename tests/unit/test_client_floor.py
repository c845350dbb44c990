"""fit/client_floor: the disaggregated inferencex-db rows' floor and burst share (shipped on); off, the profile as it
is; on, the floor adds to the client's front end and the share replaces the fitted one, on disaggregated rows only."""

from __future__ import annotations

import pytest

from jalapeno.fit import client_floor as cf
from jalapeno.specs.stack_profile import Stack


def _stack(name="sglang@0.5.8", front=0.125, share=0.65):
    return Stack(name, "x", "x", request_overhead_s=front, prefill_burst_fraction=share)


def test_off_returns_the_profile_itself():
    st = _stack()
    assert cf.with_client_floor(st, "inferencex-db", "disagg", on=False) is st


def test_shipped_on_by_default():
    st = _stack()
    assert cf.CLIENT_FLOOR_ON is True
    assert cf.with_client_floor(st, "inferencex-db", "disagg").request_overhead_s == pytest.approx(0.175)


def test_on_adds_the_floor_and_sets_the_share_on_disagg_rows():
    st = _stack()
    on = cf.with_client_floor(st, "inferencex-db", "disagg", on=True)
    # SGLang's entry: 0.125 s front end + 0.05 s floor; share 0.60 in place of 0.65
    assert on.request_overhead_s == pytest.approx(0.175)
    assert on.prefill_burst_fraction == pytest.approx(0.60)
    # one copy per profile and entry, so points sharing it are solved together
    assert cf.with_client_floor(st, "inferencex-db", "disagg", on=True) is on


@pytest.mark.parametrize(
    ("client", "mode", "name"),
    [
        ("inferencex-db", "agg", "sglang"),
        ("aiconfigurator", "disagg", "sglang"),
        ("inferencex-db", "disagg", "sglang-rocm"),
    ],
)
def test_on_leaves_other_rows_alone(client, mode, name):
    st = _stack(name)
    assert cf.with_client_floor(st, client, mode, on=True) is st


def test_trtllm_family_through_release_and_switch_suffixes():
    st = _stack("trtllm@1.2.0rc6.post2+ar_rms", front=0.025, share=0.35)
    on = cf.with_client_floor(st, "inferencex-db", "disagg", on=True)
    assert on.request_overhead_s == pytest.approx(0.0625)  # 0.025 + 0.0375
    assert on.prefill_burst_fraction == pytest.approx(0.30)


def test_missing_front_end_is_named():
    st = _stack(front=None)
    with pytest.raises(ValueError, match="request_overhead_s"):
        cf.with_client_floor(st, "inferencex-db", "disagg", on=True)
