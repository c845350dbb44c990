"""scripts/moe_row_rule.py: the routed experts' HBM/compute ridge under the row-count rule, worked by hand
(docs/model.md §11.3)."""

from __future__ import annotations

import pytest
from script_module import load_script

from jalapeno.cli.common import resolve_precision
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model

mrr = load_script("moe_row_rule")


def test_ridge_by_hand_jalapeno_fp8():
    # the rule's inputs as the set holds them; the ridge by the formula m0 = b P pf / (2 W eta_m), m* = m0 - half
    pr = load_pricer("jalapeno")
    e = pr.efficiency
    pf, half, em = e.gemm_peak("fp8_block"), e.gemm_half("fp8_block"), e.moe_hbm("fp8")
    m0 = 1.0 * 3400e12 * pf / (2.0 * 15.4e12 * em)  # FP8 3.4 PF, HBM 15.4 TB/s (systems/jalapeno.toml)
    r = mrr.rule_terms(pr, "fp8")
    assert (r["pf"], r["half"], r["src_pf"], r["src_half"]) == (pf, half, "gemm.fp8_block", "gemm.fp8_block")
    assert r["m0"] == pytest.approx(m0, rel=1e-12)
    assert r["m_star"] == pytest.approx(m0 - half, rel=1e-12)
    # one expert at 2 rows: compute 2 (2 + half) / (P pf) against the stream 1 B / (W eta_m)
    want = (2.0 * (2 + half) / (3400e12 * pf)) / (1.0 / (15.4e12 * em))
    assert r["ratio"][2] == pytest.approx(want, rel=1e-12)


def test_rule_binds_on_jalapeno_fp8_not_on_gb300():
    # docs/model.md §11.3: the same borrowed (pf, half) streams on GB300 below ~195 rows, never on Jalapeño
    assert mrr.rule_terms(load_pricer("jalapeno"), "fp8")["m_star"] < 0
    assert mrr.rule_terms(load_pricer("gb300-nvl72"), "fp8")["m_star"] > 100


def test_half_rows_zero_turns_the_batch64_experts_to_hbm():
    model = load_model("deepseek-r1")
    prec = resolve_precision(model, None, None, None, False)
    pr = load_pricer("jalapeno")
    t, bound = mrr.experts_us(pr, model, prec, 64, 8)
    flat = pr.with_efficiency(pr.efficiency.with_kernel("moe", "fp8", half_rows=0.0))
    t0, bound0 = mrr.experts_us(flat, model, prec, 64, 8)
    assert (bound, bound0) == ("compute", "hbm")
    assert t0 < t
