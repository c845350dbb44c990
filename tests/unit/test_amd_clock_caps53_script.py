"""scripts/amd_clock_caps53.py: AMD's MLPerf v5.1 Llama-2-70B runs ran at declared GPU clock caps
(docs/gap_large_batch_decode.md "Round 53 (amdmlperf53)").

Expected values by hand: the caps are read from closed/AMD/code/llama2-70b-99/scripts/power_settings.sh
(mlcommons/inference_results_v5.1 @965182b): Offline MI300X 1,400 / MI325X 1,700 MHz, Server 1,300 / 1,600,
Interactive 2,000 / 1,700; the measured Offline per-chip throughputs (LoadGen summaries, validation table) are
6,034.1 (MI300X) and 7,502.3 / 7,509.8 (the two MI325X systems)."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

cc = load_script("amd_clock_caps53")


def test_caps_as_power_settings_sets_them():
    assert cc.CLOCK_CAPS[("mi300x", "Offline")] == (1400, 1)
    assert cc.CLOCK_CAPS[("mi325x", "Offline")] == (1700, 0)
    assert cc.CLOCK_CAPS[("mi300x", "Server")] == (1300, 1)
    assert cc.CLOCK_CAPS[("mi325x", "Server")] == (1600, 0)
    assert cc.CLOCK_CAPS[("mi300x", "Interactive")] == (2000, 0)
    assert ("mi355x", "Offline") not in cc.CLOCK_CAPS  # "no power setting found for: mi355x"


def test_cap_ratios_by_hand():
    assert cc.cap_ratio("Offline") == pytest.approx(1700 / 1400)  # 1.2143
    assert cc.cap_ratio("Server") == pytest.approx(1.2308, abs=1e-4)  # 1600 / 1300
    assert cc.cap_ratio("Interactive") == pytest.approx(0.85)  # 1700 / 2000: MI300X's cap is the higher one
    with pytest.raises(KeyError):
        cc.cap_ratio("SingleStream")


def test_zero_crossing_linear_bracketed_and_extrapolated():
    # e = 2 (r - 0.85): zero at 0.85, bracketed by 0.8 / 0.9
    rs = (0.7, 0.8, 0.9, 1.0)
    assert cc.zero_crossing(rs, [2 * (r - 0.85) for r in rs]) == pytest.approx(0.85)
    # every error negative (the model too slow even at r = 1): extrapolated from the last two. Errors that bend, so
    # the two ends give different lines: -0.50 / -0.30 / -0.15 / -0.05; the last two rise 0.10 over 0.1, zero at
    # 1.0 + 0.05 / 1.0 = 1.05 (the first two, slope 2.0, would say 0.7 + 0.50 / 2 = 0.95)
    assert cc.zero_crossing(rs, [-0.50, -0.30, -0.15, -0.05]) == pytest.approx(1.05)
    # every error positive, smallest at r = 0.7: from the first two. 0.05 / 0.15 / 0.30 / 0.50: slope 1.0, zero at
    # 0.7 - 0.05 / 1.0 = 0.65 (the last two, slope 2.0, would say 1.0 - 0.50 / 2 = 0.75)
    assert cc.zero_crossing(rs, [0.05, 0.15, 0.30, 0.50]) == pytest.approx(0.65)
    with pytest.raises(ValueError, match="flat"):
        cc.zero_crossing((0.8, 0.9), [0.1, 0.1])
    with pytest.raises(ValueError, match="two or more"):
        cc.zero_crossing((0.8,), [0.1])


def test_implied_calibration_clock_by_hand():
    # a 1,400 MHz run priced right at r = 0.864 needs a calibration clock of 1,400 / 0.864 = 1,620 MHz
    assert cc.implied_table_clock(1400, 0.864) == pytest.approx(1620.4, abs=0.1)


def test_pair_table_measured_ratio_by_hand():
    ids = [
        "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Offline",
        "mlperf51_AMD_8xMI325X_2xEPYC_9575F_1_llama2-70b-99_Offline",
        "mlperf51_AMD_8xMI325X_2xEPYC_9575F_2_llama2-70b-99_Offline",
        "x_Server",
        "y_Server",
        "x_Interactive",
        "y_Interactive",
    ]
    pts = pd.DataFrame(
        {
            "id": ids,
            "system": ["mi300x", "mi325x", "mi325x", "mi300x", "mi325x", "mi300x", "mi325x"],
            "measured": [6034.1, 7502.3, 7509.8, 100.0, 130.0, 10.0, 20.0],
        }
    )
    rows = {r[0]: r for r in cc.pair_table(pts)}
    # (7,502.3 + 7,509.8) / 2 / 6,034.1 = 1.2439
    assert rows["Offline"][1] == pytest.approx(1.2439, abs=1e-4)
    assert rows["Offline"][2] == pytest.approx(1.2143, abs=1e-4)
    assert rows["Offline"][3] == pytest.approx(6.0 / 5.3)
    assert rows["Offline"][4] == pytest.approx(1464 / 1230)  # AMD MAF blog, Table 1
    assert rows["Server"][1] == pytest.approx(1.3)


def test_clock_factor_restores_the_switch_and_the_pricer_on_error():
    import jalapeno.cost.roofline as roofline
    import jalapeno.fit.table_lookup as table_lookup

    before = (roofline.POWER_CLOCK, table_lookup.load_any_pricer)
    with pytest.raises(RuntimeError), cc.clock_factor(0.8):
        assert roofline.POWER_CLOCK is True
        assert table_lookup.load_any_pricer is not before[1]
        raise RuntimeError("inside")
    assert (roofline.POWER_CLOCK, table_lookup.load_any_pricer) == before
