"""scripts/dynamo_disagg_front_end36.py: the recomposed TTFT and the front end's grid argmin, worked by hand."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

fe = load_script("dynamo_disagg_front_end36")


def _rows(a_s, b_s_per_token):
    # four rows at L = 1,000 and 8,000 tokens (mean prompt 0.9 L = 900 and 7,200), measured = core + burst + a + b·0.9·L
    core = [0.10, 0.30, 0.12, 0.35]
    burst = [0.00, 0.05, 0.02, 0.20]
    isl = [1000, 8000, 1000, 8000]
    meas = [c + u + a_s + b_s_per_token * 0.9 * n for c, u, n in zip(core, burst, isl)]
    return pd.DataFrame({"core": core, "burst": burst, "front": [0.03] * 4, "isl": isl, "meas": meas})


def test_recompose_adds_the_front_end_to_rows_that_carry_one():
    d = pd.DataFrame({"core": [0.2, 3.0], "burst": [0.1, 0.4], "front": [0.04, 0.0], "isl": [8000, 8000]})
    # row 1: 0.2 + 0.1·(0.30/0.35) + 0.05 + 2e-6·7,200 = 0.2 + 0.085714 + 0.05 + 0.0144; row 2: no front end
    got = fe.recompose(d, 0.05, 2e-6, 0.30 / 0.35)
    assert got[0] == pytest.approx(0.2 + 0.1 * 0.30 / 0.35 + 0.05 + 0.0144)
    assert got[1] == pytest.approx(3.0 + 0.4 * 0.30 / 0.35)


@pytest.mark.parametrize("a_s, b_s_per_token", [(0.0725, 0.0), (0.025, 7.5e-6)])
def test_fit_front_end_finds_the_front_end_the_rows_were_made_with(a_s, b_s_per_token):
    a, b, loss = fe.fit_front_end(_rows(a_s, b_s_per_token))
    assert (a, b) == pytest.approx((a_s, b_s_per_token))
    assert loss == pytest.approx(0.0, abs=1e-12)


def test_fit_front_end_names_the_fix_without_front_end_rows():
    d = _rows(0.05, 0.0).assign(front=0.0)
    with pytest.raises(SystemExit, match="front.*fix: pass the disaggregated TensorRT-LLM rows"):
        fe.fit_front_end(d)
