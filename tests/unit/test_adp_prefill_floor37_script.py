"""scripts/adp_prefill_floor37.py: the what-if floors on attention-DP prefill pools, worked by hand."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

s = load_script("adp_prefill_floor37")


def _dep(prefill: Layout):
    return Deployment(get_precision("fp4"), Pool(Layout(tp=8, ep=8)), prefill=Pool(prefill), eager_prompt_call_s=24e-6)


def test_the_what_ifs_on_a_dep4_prefill_pool():
    m = load_model("deepseek-r1")  # 58 MoE layers, 256 routed experts
    dep = _dep(Layout(tp=1, dp=4, ep=4))
    shipped = (3 * 43 + 58 * 82) * 24e-6  # 4,885 calls
    assert s.adp_floor("shipped", 0.0)(m, dep, dep.prefill)[0] == pytest.approx(shipped)
    assert s.adp_floor("tp count", 0.0)(m, dep, dep.prefill)[0] == pytest.approx(3609 * 24e-6)
    assert s.adp_floor("rate", 36e-6)(m, dep, dep.prefill)[0] == pytest.approx(4885 * 36e-6)
    # 64 experts per EP rank × 58 layers × 16 µs
    assert s.adp_floor("experts", 16e-6)(m, dep, dep.prefill)[0] == pytest.approx(shipped + 58 * 64 * 16e-6)


def test_a_pool_without_attention_dp_keeps_the_shipped_floor():
    m = load_model("deepseek-r1")
    dep = _dep(Layout(tp=4, ep=4))
    for kind in ("rate", "experts", "tp count"):
        assert s.adp_floor(kind, 48e-6)(m, dep, dep.prefill)[0] == pytest.approx(3609 * 24e-6)


def test_an_unknown_what_if_names_the_fix():
    m = load_model("deepseek-r1")
    dep = _dep(Layout(tp=1, dp=2, ep=2))
    with pytest.raises(SystemExit, match="fix: rate, experts, tp count or shipped"):
        s.adp_floor("bogus", 0.0)(m, dep, dep.prefill)


def test_loss_reads_the_warm_fit_rows_only():
    tab = pd.DataFrame({"split": ["fit", "fit", "held_out"], "cold": [False, True, False], "meas": [1.0, 1.0, 1.0]},
                       index=["a", "b", "c"])
    pred = pd.Series({"a": 2.0, "b": 100.0, "c": 100.0})
    assert s.loss(pred, tab) == pytest.approx(0.6931471805599453)  # |ln 2|


def test_a_missing_csv_is_refused_with_the_fix(tmp_path):
    with pytest.raises(SystemExit, match=r"nope\.csv: cannot read it \(FileNotFoundError\).*jalapeno validate --json"):
        s.rows(str(tmp_path / "nope.csv"))


def test_tp_count_takes_back_the_count_the_floor_took():
    """On GB200 a DEP2 pool runs TensorRT-LLM's NVLink all-to-all (15 calls a MoE layer, review37); ``tp count``
    takes those back: 3,609 calls × 24 µs."""
    from jalapeno.fit.table_lookup import load_any_pricer

    m = load_model("deepseek-r1")
    dep = _dep(Layout(tp=1, dp=2, ep=2))
    pricer = load_any_pricer("gb200-nvl72", "calibrated", pricer="roofline", stack="trtllm")
    assert s.adp_floor("shipped", 0.0)(m, dep, dep.prefill, pricer)[0] == pytest.approx((3609 + 58 * 15) * 24e-6)
    assert s.adp_floor("tp count", 0.0)(m, dep, dep.prefill, pricer)[0] == pytest.approx(3609 * 24e-6)
