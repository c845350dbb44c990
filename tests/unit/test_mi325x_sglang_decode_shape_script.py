"""scripts/mi325x_sglang_decode_shape.py: the distinct-expert count by hand, its measured TPOTs against the points file,
and the doc's claim (docs/gap_large_batch_decode.md, round 33): the model's decode step is concave in batch where the
step the rows imply is a line."""

from __future__ import annotations

import csv
from importlib.resources import files

import numpy as np
import pytest
from script_module import load_script

shape = load_script("mi325x_sglang_decode_shape")


def test_distinct_experts_by_hand():
    # one token hits its k experts; two tokens: 256·(1 − (248/256)^2) = 256 − 240.25 = 15.75
    assert shape.distinct_experts(1) == pytest.approx(8.0)
    assert shape.distinct_experts(2) == pytest.approx(15.75)
    # saturates at E
    assert shape.distinct_experts(10_000) == pytest.approx(256.0)


def _points() -> list[dict]:
    path = files("jalapeno") / "data" / "validation" / "inferencex_points.csv"
    with path.open() as fh:
        return [r for r in csv.DictReader(fh) if r["framework"] == "sglang" and r["model"] == "DeepSeek-R1-0528"]


def test_measured_tpot_is_the_points_file():
    rows = _points()
    for c, tpot in shape.MEASURED_TPOT_MS.items():
        hit = [r for r in rows if r["hardware"] == "MI325X" and r["isl"] == "8192" and r["conc"] == str(c)
               and "v0.5.19" in r["notes"]]
        assert len(hit) == 1 and float(hit[0]["tpot_ms"]) == pytest.approx(tpot)
    for (system, isl), tpot in shape.PAIRS_TPOT_MS.items():
        hit = [r for r in rows if r["hardware"] == system.upper() and r["isl"] == str(isl) and r["conc"] == "64"
               and "v0.5.9" in r["notes"]]
        assert len(hit) == 1 and float(hit[0]["tpot_ms"]) == pytest.approx(tpot)


def test_model_step_concave_rows_linear():
    rs = shape.rows()
    c = np.array([r["C"] for r in rs], dtype=float)
    model, meas = np.array([r["model_step"] for r in rs]), np.array([r["meas_step"] for r in rs])
    slope_model = np.diff(model) / np.diff(c)
    assert np.all(np.diff(slope_model) < 0)  # the model's per-request cost falls with batch
    a = np.c_[np.ones_like(c), c]
    coef, res, *_ = np.linalg.lstsq(a, meas, rcond=None)
    assert np.sqrt(res[0] / len(c)) < 1.0  # the implied step is a line within 1 ms
    assert 0.4 < coef[1] < 0.7  # ms per request


def test_whatif_flatter_experts_fit_better():
    # the doc's what-if: the further the routed-expert term is from growing with batch, the better the line fits
    rms = [w["rms"] for w in shape.moe_mla_whatif(shape.rows())]
    assert all(b < a for a, b in zip(rms, rms[1:]))
    # at today's fraction the refit multiplier leaves the shape off by more than at the chip's generic fraction
    assert rms[0] > 2.0 > rms[3]


def test_the_whatif_fractions_are_the_calibration_files():
    # read from data/calibration/mi325x.toml by hand (tomllib), not from the script's reader
    import tomllib

    cal = tomllib.loads((files("jalapeno") / "data" / "calibration" / "mi325x.toml").read_text())["parameters"]
    assert shape.MOE_FRACTION_NOW == cal["moe"]["fp8"]["hbm_fraction"]
    assert shape.MOE_FRACTIONS[0] == shape.MOE_FRACTION_NOW and shape.MOE_FRACTIONS[3] == cal["hbm_fraction"]
