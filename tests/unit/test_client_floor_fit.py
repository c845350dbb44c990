"""fit/client_floor.DISAGG_TERMS is what scripts/aic_gb_ttft_terms47.py fits on the fit split, and only on it.

tests/fixtures/aic_ttft_terms47_parts.csv holds the script's priced parts of the 262 unflagged disaggregated
aiconfigurator TTFT rows of the ``inferencex-db`` client (main d3e3fcc = base47, fit/client_floor off; written by
``python scripts/aic_gb_ttft_terms47.py ALL.csv --cache PARTS.csv`` and joined with ALL.csv's split, system and
measured TTFT, six significant digits). A change to a shipped (F, w) that the script's fit does not give, or a fit
that reads a held-out row, fails here. Expected values: the shipped table and the row counts of the fixture."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from jalapeno.fit.client_floor import DISAGG_TERMS
from script_module import load_script

PARTS = Path(__file__).resolve().parents[1] / "fixtures" / "aic_ttft_terms47_parts.csv"


@pytest.fixture(scope="module")
def script():
    return load_script("aic_gb_ttft_terms47")


@pytest.fixture(scope="module")
def parts() -> pd.DataFrame:
    return pd.read_csv(PARTS).set_index("id")


@pytest.mark.parametrize("engine", ["sglang", "trtllm", "vllm"])
def test_shipped_terms_are_the_scripts_fit(script, parts, engine):
    fit_rows = parts[(parts.engine == engine) & (parts.split == "fit")]
    assert script.fit(fit_rows, "both") == pytest.approx(DISAGG_TERMS["inferencex-db", engine])


def test_every_engine_fitted_has_an_entry_and_no_other(script, parts):
    assert {e for _, e in DISAGG_TERMS} == set(parts.engine)
    assert {c for c, _ in DISAGG_TERMS} == {"inferencex-db"}


def test_held_out_rows_do_not_move_the_fit(script, parts):
    _, params = script.evaluate(parts)
    skewed = parts.copy()
    held = skewed.split == "held_out"
    skewed.loc[held, "measured"] *= 3.0  # a held-out row that fed the fit would move it
    _, moved = script.evaluate(skewed)
    fitted = [k for k in params if k[1] != "shipped"]  # "shipped" is (0, NaN): the shipped share, not fitted
    assert [moved[k] for k in fitted] == [params[k] for k in fitted]
    assert {e: params[e, "both"] for e in ("sglang", "trtllm", "vllm")} == {
        e: pytest.approx(DISAGG_TERMS["inferencex-db", e]) for e in ("sglang", "trtllm", "vllm")
    }


def test_the_vllm_floor_rests_on_eight_rows_of_one_model_on_one_system(parts):
    """The vLLM (F, w) is two constants fitted on 8 rows (Kimi-K2.5 on GB200 NVL72, two ISL/OSL shapes); the
    module docstring says so. If the fixture gains vLLM rows, refit and update the docstring."""
    v = parts[(parts.engine == "vllm") & (parts.split == "fit")]
    assert len(v) == 8
    assert set(v.system) == {"gb200-nvl72"}
    assert v.index.str.startswith("aic:kimik2_5_gb200_vllm").all()
