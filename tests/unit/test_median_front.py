"""fit/median_front.py: a ROCm profile's InferenceX front end from its engine's published low-load medians (round 40)."""

import pytest

from jalapeno.fit import median_front as mf
from jalapeno.specs.stacks import load_stacks

TWIN = {"request_overhead_s": 0.0875, "prompt_overhead_s_per_token": 1.75e-5}


def test_front_end_at_by_hand():
    # 0.0875 s + 17.5 us x 921.6 tokens (1k with InferenceX's range: (1 + 0.8) / 2 x 1024) = 0.0875 + 0.016128
    assert mf.ISSUE_WORKLOAD.mean_isl == pytest.approx(921.6)
    assert mf.front_end_at(TWIN, 921.6) == pytest.approx(0.103628)


def test_scaled_entry_keeps_the_twin_ratio_and_meets_the_mean_room():
    # rooms 5 and 3 ms -> 4 ms at 921.6 tokens; k = 0.004 / 0.103628 = 0.038600
    got = mf.scaled_entry(TWIN, [0.005, 0.003], 921.6)
    assert got["request_overhead_s"] == pytest.approx(0.0875 * 0.004 / 0.103628)
    assert got["prompt_overhead_s_per_token"] == pytest.approx(1.75e-5 * 0.004 / 0.103628)
    assert mf.front_end_at(got, 921.6) == pytest.approx(0.004)


def test_scaled_entry_never_negative_and_refuses_bad_input():
    assert mf.scaled_entry(TWIN, [-0.01, -0.02], 921.6) == {
        "request_overhead_s": 0.0,
        "prompt_overhead_s_per_token": 0.0,
    }
    with pytest.raises(ValueError, match="need rooms"):
        mf.scaled_entry(TWIN, [], 921.6)
    with pytest.raises(ValueError, match="positive twin front end"):
        mf.scaled_entry({"request_overhead_s": 0.0, "prompt_overhead_s_per_token": 0.0}, [0.01], 921.6)


def test_shipped_off_returns_the_twin():
    assert mf.MEDIAN_FRONT_ON is False
    assert mf.median_front_end("sglang-rocm", load_stacks()["sglang-rocm"], TWIN) == TWIN


def test_on_other_profiles_and_withheld_systems_keep_the_twin(monkeypatch):
    monkeypatch.setattr(mf, "MEDIAN_FRONT_ON", True)
    assert mf.median_front_end("atom-rocm", load_stacks()["atom-rocm"], TWIN) == TWIN
    assert mf.median_front_end("sglang-rocm", load_stacks()["sglang-rocm"], TWIN, frozenset({"mi325x"})) == TWIN
    assert mf.median_front_end("sglang-rocm", load_stacks()["sglang-rocm"], {}) == {}


def test_on_the_fit_lands_on_the_medians(monkeypatch):
    """Switched on, the fitted front end at the issue's mean prompt is the mean room (to 3 significant digits), and the
    room is below what the borrowed front end takes: issue #890's medians (115 / 119 ms) minus the model's p50 without a
    front end leave less than the twin's 104 ms (round 39: the borrowed front end and the half step alone exceed them)."""
    monkeypatch.setattr(mf, "MEDIAN_FRONT_ON", True)
    stack = load_stacks()["sglang-rocm"]
    rooms = mf.rooms(stack, mf.recipe_point(mf.RECIPE_ROW), mf.RELEASE, mf.ISSUE_890_MEDIANS)
    assert len(rooms) == 2 and all(r < mf.front_end_at(TWIN, 921.6) for r in rooms)
    assert all(r < min(mf.ISSUE_890_MEDIANS.values()) for r in rooms)
    got = mf.median_front_end("sglang-rocm", stack, TWIN)
    assert mf.front_end_at(got, 921.6) == pytest.approx(sum(rooms) / 2, rel=2e-3)
    assert got["prompt_overhead_s_per_token"] / got["request_overhead_s"] == pytest.approx(1.75e-5 / 0.0875, rel=2e-3)
