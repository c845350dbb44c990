"""cost/a2a_floor.py: TensorRT-LLM's NVLink one-sided all-to-all priced no faster than its measured per-call floor
(shipped off), and fit/ep_all_to_all.ep_all_to_all_floor, which reads the floor off the kernel table."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import jalapeno.cost.a2a_floor as fl
from jalapeno.errors import SpecError
from jalapeno.fit.ep_all_to_all import ep_all_to_all_floor
from jalapeno.fit.table_lookup import load_any_pricer


def test_shipped_off():
    assert fl.A2A_FLOOR_ON is False


def test_floor_is_the_tables_one_token_call():
    # aiconfigurator gb200 comm/trtllm/1.3.0rc10 NVLinkOneSided NVFP4 at 1 token a rank: dispatch 20.9 us,
    # combine 32.4 us at EP32 (read off the table by hand, 3 significant digits); one call is their mean
    assert fl.a2a_floor_s("gb200-nvl72", 32) * 1e6 == pytest.approx((20.9 + 32.4) / 2, abs=0.1)
    # EP8: dispatch 18.3, combine 25.3
    assert fl.a2a_floor_s("gb200-nvl72", 8) * 1e6 == pytest.approx((18.3 + 25.3) / 2, abs=0.1)
    # GB300 reads GB200's table (fit/kernel_tables.A2A_FABRIC_SIBLING)
    assert fl.a2a_floor_s("gb300-nvl72", 32) == fl.a2a_floor_s("gb200-nvl72", 32)
    assert fl.a2a_floor_s("h200", 8) is None


def test_floor_log2_interpolation_and_clamp():
    f16, f32 = fl.a2a_floor_s("gb200-nvl72", 16), fl.a2a_floor_s("gb200-nvl72", 32)
    # EP24 lies log2(24) - 4 = 0.585 of the way from EP16 to EP32
    assert fl.a2a_floor_s("gb200-nvl72", 24) == pytest.approx(f16 + (math.log2(24) - 4) * (f32 - f16))
    assert fl.a2a_floor_s("gb200-nvl72", 64) == pytest.approx(f32)  # clamped at the largest measured size


def _pricer(exchange: str, system: str = "gb200-nvl72"):
    pr = load_any_pricer(system, "calibrated", pricer="roofline")
    return pr.with_efficiency(replace(pr.efficiency, moe_exchange=exchange))


def test_floor_binds_small_calls_only_when_on(monkeypatch):
    msgs = np.array([1e3, 1e9])  # a one-token call and a 1 GB one (the line is far above any floor)
    trt = _pricer("nvlink_all_to_all")
    off = trt.collective("all_to_all", 32, msgs).time_s
    assert off[0] < fl.a2a_floor_s("gb200-nvl72", 32)  # the line prices a tiny call below the measured floor
    monkeypatch.setattr(fl, "A2A_FLOOR_ON", True)
    on = trt.collective("all_to_all", 32, msgs).time_s
    assert on[0] == pytest.approx(fl.a2a_floor_s("gb200-nvl72", 32))
    assert on[1] == off[1]
    # DeepEP stacks (moe_exchange all_to_all), another collective kind and an unmeasured system keep the line
    deepep = _pricer("all_to_all")
    assert deepep.collective("all_to_all", 32, msgs).time_s[0] < fl.a2a_floor_s("gb200-nvl72", 32)
    assert trt.collective("all_gather", 32, msgs).time_s[0] < fl.a2a_floor_s("gb200-nvl72", 32)
    h200 = _pricer("nvlink_all_to_all", "h200")
    assert h200.collective("all_to_all", 8, msgs).time_s[0] < fl.a2a_floor_s("gb200-nvl72", 8)


def _table(rows):
    base = {"kernel_source": "NVLinkOneSided", "moe_dtype": "nvfp4", "hidden_size": 7168, "topk": 8, "num_experts": 256}
    return pd.DataFrame(
        [{**base, "moe_ep_size": ep, "num_tokens": n, "op_name": op, "latency": ms} for ep, n, op, ms in rows]
    )


def test_ep_all_to_all_floor_reads_the_smallest_token_count():
    t = _table(
        [
            (8, 1, "alltoall_dispatch", 0.010),
            (8, 1, "alltoall_combine", 0.030),
            (8, 2, "alltoall_dispatch", 0.001),
            (8, 2, "alltoall_combine", 0.001),
            (4, 1, "alltoall_dispatch", 0.012),
            (4, 1, "alltoall_combine", 0.012),
        ]
    )
    f = ep_all_to_all_floor(t)
    assert f.ep.tolist() == [4, 8]
    assert f.floor_s.tolist() == pytest.approx([12e-6, 20e-6])  # (10 + 30) / 2 us at EP8, not the 2-token row


def test_ep_all_to_all_floor_refuses_a_table_without_both_calls():
    with pytest.raises(SpecError, match="dispatch and combine"):
        ep_all_to_all_floor(_table([(8, 1, "alltoall_dispatch", 0.010)]))
