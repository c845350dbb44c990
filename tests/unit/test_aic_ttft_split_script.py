"""scripts/aic_ttft_split.py: the TTFT parts, the needed burst share, y and the share form, by hand."""

from __future__ import annotations

import numpy as np
import pytest
from script_module import load_script

split = load_script("aic_ttft_split")


def test_parts_by_difference_sum_to_the_prediction():
    # full 0.80 s; without the burst 0.62 s; without the front end too 0.47 s; one prompt alone 0.12 s
    p = split.parts(np.array([0.80]), np.array([0.62]), np.array([0.47]), np.array([0.12]))
    assert p["burst"][0] == pytest.approx(0.18)
    assert p["front"][0] == pytest.approx(0.15)
    assert p["load"][0] == pytest.approx(0.35)
    assert p["lone"][0] == pytest.approx(0.12)
    assert sum(v[0] for v in p.values()) == pytest.approx(0.80)


def test_needed_share_by_hand():
    # burst 0.06 s at share 0.2: the wave's mean excess is 0.3 s; measured 0.40 s over a steady 0.31 s
    # needs 0.09 / 0.3 = 0.3 of it
    assert split.needed_share(0.40, 0.31, 0.06, 0.2) == pytest.approx(0.3)
    # measured below the steady state: a negative share (the steady part alone is too long)
    assert split.needed_share(0.25, 0.31, 0.06, 0.2) == pytest.approx(-0.2)
    # no excess (a lone user's wave): not defined
    assert np.isnan(split.needed_share(0.40, 0.31, 0.0, 0.2))


def test_needed_share_names_the_field():
    with pytest.raises(ValueError, match="share: a burst share must be in"):
        split.needed_share(0.4, 0.3, 0.06, 0.0)
    with pytest.raises(ValueError, match="share: a burst share must be in"):
        split.needed_share(0.4, 0.3, 0.06, 1.5)


def test_wave_per_prompt_over_step_by_hand():
    # burst 0.05 s at share 0.1 -> excess 0.5 s; 64 users -> 2·0.5/64 = 15.625 ms per prompt; TPOT 25 ms -> 0.625
    assert split.wave_per_prompt_over_step(0.05, 0.1, 64, 0.025) == pytest.approx(0.625)


def test_share_form_by_hand_and_capped():
    assert split.share_form(np.array([0.25]), 0.5)[0] == pytest.approx(0.4)  # 0.5 / 1.25
    assert split.share_form(np.array([3.0]), 0.8)[0] == pytest.approx(0.2)   # 0.8 / 4
    assert split.share_form(np.array([0.0]), 2.5)[0] == 1.0                  # at most every request


def test_fit_k_recovers_a_known_k():
    # rows made with k = 0.6 exactly: measured = steady + 0.6/(1 + y)·excess
    y = np.array([0.3, 0.8, 1.5, 4.0, 9.0])
    steady = np.array([0.10, 0.12, 0.20, 0.35, 0.50])
    excess = np.array([0.40, 0.90, 1.50, 3.00, 6.00])
    measured = steady + 0.6 / (1 + y) * excess
    assert split.fit_k(measured, steady, excess, y) == pytest.approx(0.6)
    with pytest.raises(ValueError, match="measured: no row to fit k on"):
        split.fit_k([], [], [], [])


def test_derived_frame_by_hand():
    import pandas as pd

    # burst 0.06 s at the client's share 0.2: the first wave's mean excess is 0.3 s; one wave in W = 10 of it over a
    # steady 0.25 s is 0.28 s; measured 0.44 s leaves 0.16 s, over 40 users 4 ms each; the wave's time per prompt is
    # 2·0.3/40 = 15 ms. A row without a burst (a lone user) keeps its steady TTFT.
    # Served one prompt at a time at a lone cost of 0.02 s, the 40 prompts wait (40 - 1)/2·0.02 = 0.39 s on average,
    # more than the batched wave's 0.3 s: 0.25 + 0.1·0.39 = 0.289 s; a lone user has no wave either way.
    df = pd.DataFrame({"m": [0.44, 0.10], "noburst": [0.25, 0.09], "burst": [0.06, 0.0], "share": [0.2, 0.2],
                       "conc": [40, 1], "lone": [0.02, 0.08]})
    d = split.derived_frame(df)
    assert d.excess.tolist() == pytest.approx([0.3, 0.0])
    assert d.derived.tolist() == pytest.approx([0.28, 0.09])
    assert d.rest_ms.tolist() == pytest.approx([4.0, 10.0])
    assert d.prompt_ms.tolist() == pytest.approx([15.0, 0.0])
    assert d.serial.tolist() == pytest.approx([0.289, 0.09])
