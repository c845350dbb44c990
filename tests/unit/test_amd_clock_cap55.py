"""AMD's MLPerf Llama-2-70B clock caps priced (fit/amd_clock_caps.py, cost/roofline.capped_clock; round 55 mlperf55).

Expected values by hand from closed/AMD/code/llama2-70b-99/scripts/power_settings.sh @965182b (caps: Offline MI300X
1,400 / MI325X 1,700 MHz, Server 1,300 / 1,600, Interactive 2,000 / 1,700) and the LoadGen summaries' tokens per second.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from script_module import load_script

import jalapeno.fit.amd_clock_caps as acc
from jalapeno.cost import roofline
from jalapeno.cost.optable import OpBuilder
from jalapeno.errors import SpecError
from jalapeno.fit.measured_point import with_clock_cap
from jalapeno.specs.catalog import load_system
from jalapeno.specs.efficiency import Efficiency

_MI300X_OFF = "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Offline"


def test_caps_as_power_settings_sets_them():
    # power_settings.sh: llama2-70b_offline mi325x 1700 / mi300x 1400; _server 1600 / 1300; _interactive 1700 / 2000
    assert acc.CLOCK_CAPS[("mi300x", "Offline")] == 1400 and acc.CLOCK_CAPS[("mi325x", "Offline")] == 1700
    assert acc.CLOCK_CAPS[("mi300x", "Server")] == 1300 and acc.CLOCK_CAPS[("mi325x", "Server")] == 1600
    assert acc.CLOCK_CAPS[("mi300x", "Interactive")] == 2000 and acc.CLOCK_CAPS[("mi325x", "Interactive")] == 1700
    assert not any(chip == "mi355x" for chip, _ in acc.CLOCK_CAPS)  # "no power setting found for: mi355x"


def test_clock_cap_of_by_hand(monkeypatch):
    monkeypatch.setattr(acc, "GFX942_DENSE_CALIBRATION_MHZ", 1600.0)
    # MI300X Offline: dense 1,400 / 1,600 = 0.875, light 1,400 / 2,100 = 2/3
    assert acc.clock_cap_of(_MI300X_OFF, "mi300x", "Offline", on=True) == pytest.approx((0.875, 2 / 3))
    # MI300X Interactive: the 2,000 MHz cap sits above the Offline cap (the power-held clock, 1,400): dense 0.875,
    # light 2,000 / 2,100 = 0.95238
    k = "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Interactive"
    assert acc.clock_cap_of(k, "mi300x", "Interactive", on=True) == pytest.approx((0.875, 0.952381), rel=1e-6)
    # MI325X Offline: 1,700 / 1,600 = 1.0625 (above the calibration clock: faster), light 1,700 / 2,100 = 0.809524
    k = "mlperf51_AMD_8xMI325X_2xEPYC_9575F_1_llama2-70b-99_Offline"
    assert acc.clock_cap_of(k, "mi325x", "Offline", on=True) == pytest.approx((1.0625, 0.809524), rel=1e-6)
    # MI325X Server: 1,600 / 1,600 = 1
    k = "mlperf51_AMD_8xMI325X_2xEPYC_9575F_1_llama2-70b-99_Server"
    assert acc.clock_cap_of(k, "mi325x", "Server", on=True)[0] == pytest.approx(1.0)


def test_clock_cap_of_leaves_other_rows_and_reads_the_switch(monkeypatch):
    assert (
        acc.clock_cap_of("mlperf51_AMD_8xMI355X_2xEPYC_9575F_llama2-70b-99_Offline", "mi355x", "Offline", on=True)
        is None
    )
    assert (
        acc.clock_cap_of("mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_Offline", "b200", "Offline", on=True)
        is None
    )
    assert acc.clock_cap_of("mlperf51_AMD_8xMI300X_2xEPYC_9575F_mixtral_Offline", "mi300x", "Offline", on=True) is None
    assert acc.clock_cap_of(_MI300X_OFF, "mi300x", "Offline", on=False) is None
    monkeypatch.setattr(acc, "MLPERF_AMD_CLOCK_CAP_ON", False)
    assert acc.clock_cap_of(_MI300X_OFF, "mi300x", "Offline") is None
    monkeypatch.setattr(acc, "MLPERF_AMD_CLOCK_CAP_ON", True)
    assert acc.clock_cap_of(_MI300X_OFF, "mi300x", "Offline") is not None


def test_capped_clock_by_hand():
    # a dense op (eta 0.5 >= 0.25) at 0.5 of its speed takes 2x; a light one (eta 0.1) at 0.8 takes 1.25x
    out = roofline.capped_clock(np.array([[1.0], [1.0]]), np.array([[0.5], [0.1]]), 0.5, 0.8)
    assert out.ravel().tolist() == [2.0, 1.25]


def test_chip_refuses_a_bad_clock_cap():
    chip = load_system("mi300x").chip
    with pytest.raises(SpecError, match="clock_cap"):
        replace(chip, clock_cap=(0.0, 1.0))


def test_with_clock_cap_scales_the_dense_compute_only():
    from jalapeno.fit.table_lookup import load_any_pricer

    pricer = load_any_pricer("mi300x", "calibrated", pricer="roofline")
    assert with_clock_cap(pricer, None) is pricer
    capped = with_clock_cap(pricer, (0.5, 1.0))
    assert capped.system.chip.clock_cap == (0.5, 1.0) and pricer.system.chip.clock_cap is None
    ob = OpBuilder(1)
    ob.gemm("g", "fp8", 8192.0, 8192.0, 8192.0, 1.0, 1.0)  # a large GEMM: near its fitted asymptote, dense
    t = ob.build()[0]
    eff = Efficiency()
    base = roofline.op_times(t, pricer.system.chip, eff)
    half = roofline.op_times(t, capped.system.chip, eff)
    assert float(half.compute_s[0, 0]) == pytest.approx(2.0 * float(base.compute_s[0, 0]))
    assert float(half.memory_s[0, 0]) == pytest.approx(float(base.memory_s[0, 0]))


def test_load_mlperf_sets_the_cap_on_the_amd_llama_rows_only(monkeypatch):
    from jalapeno.fit.mlperf import load_mlperf

    monkeypatch.setattr(acc, "MLPERF_AMD_CLOCK_CAP_ON", True)
    on = {p.id: p.clock_cap for p in load_mlperf(server_mapping="frontier@limits")[0]}
    assert on[_MI300X_OFF] == pytest.approx((1400 / acc.GFX942_DENSE_CALIBRATION_MHZ, 1400 / 2100))
    capped = {i for i, c in on.items() if c is not None}
    assert capped == {
        i for i in on if i.startswith(("mlperf51_AMD_8xMI300X", "mlperf51_AMD_8xMI325X")) and "llama2-70b" in i
    }
    assert len(capped) == 7  # MI300X Offline / Server / Interactive, MI325X Offline x2 / Server / Interactive
    monkeypatch.setattr(acc, "MLPERF_AMD_CLOCK_CAP_ON", False)
    assert all(p.clock_cap is None for p in load_mlperf(server_mapping="frontier@limits")[0])


def test_peer_measured_by_hand():
    mod = load_script("amd_clock_cap55")
    peers = {sub: m for sub, _chip, m in mod.peer_measured()}
    # Dell MI300X: AMD's row 6,034.11 tok/s a chip (input + output) x 27,325.9 / 27,803.9 = 5,930.38
    assert peers["Dell"] == pytest.approx(6034.11 * 27325.9 / 27803.9, rel=1e-5)
    # the peers' mean output lengths equal their AMD run's (tokens / samples): 301.7 MI300X, ~301 MI325X
    for _sub, _sys, chip, tps, sps in acc.PEER_OFFLINE_RUNS:
        _key, amd_tps, amd_sps = acc.AMD_OFFLINE_RUNS[chip]
        assert tps / sps == pytest.approx(amd_tps / amd_sps, rel=0.003)


def test_group_mean_weights_each_chip_equally():
    mod = load_script("amd_clock_cap55")
    # chip a: mean of +0.1 and +0.3 = +0.2; chip b: -0.2; their mean 0 (a per-run mean would be +0.067)
    assert mod.group_mean({"a": [0.1, 0.3], "b": [-0.2]}) == pytest.approx(0.0)


def test_shipped_clock_is_the_fit_splits_zero():
    mod = load_script("amd_clock_cap55")
    errs = mod.peer_errors(acc.GFX942_DENSE_CALIBRATION_MHZ, mod.peer_measured())
    assert abs(mod.group_mean(errs)) < 0.002  # the bisection's 1 MHz tolerance is ~0.06% of throughput


def test_shipped_state():
    # shipped ON (round 55: MLPerf MI300X meets its goals, ALL median 8.2 -> 7.7; ALL bias -1.4% within +/-5%);
    # the clock is the fit split's bisection
    assert acc.MLPERF_AMD_CLOCK_CAP_ON is True
    assert acc.GFX942_DENSE_CALIBRATION_MHZ == 1649.0
