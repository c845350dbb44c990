"""A validate record is labelled with the MTP acceptance it is priced at (the engine profile's, fit/entries.
with_stack_mtp), and its notes name the stated one it replaced (round 38, h200ix38; docs/gap_aic_itl.md)."""

from __future__ import annotations

from jalapeno.fit.validate import load_aiconfigurator, predict_points
from jalapeno.specs.stacks import get_stack

#: an aiconfigurator row of InferenceX's dsr1-fp8-h200-trt-mtp sweep (MTP1, acceptance 0.85 stated by the sweep)
ROW = "aic:2026_03_25_deepseek_r1_h200_sxm_trtllm_fp8_agg_8192x1024_c64_tp8_0_ep8_0_1242"


def test_aic_mtp_row_labelled_with_the_priced_acceptance():
    p = next(q for q in load_aiconfigurator()[0] if q.id == ROW)
    assert p.deployment.mtp.acceptance == 0.85  # what the sweep states
    priced = get_stack("trtllm").acceptance("deepseek-r1", 1)  # the fitted profile's (data/stack_fits.toml)
    rows = predict_points([p])
    assert set(rows.deployment) == {p.deployment.label.replace("MTP1@0.85", f"MTP1@{priced:g}")}
    replaced = [f"MTP acceptance {priced:g} (the " in n and "in place of the stated 0.85" in n for n in rows.notes]
    assert all(replaced) if priced != 0.85 else not any(replaced)


def test_a_stated_acceptance_not_replaced_prints_as_stated():
    # InferenceX row 99 (ATOM MI355X DeepSeek-R1 FP8, MTP3, acceptance 0 as the row's notes state): the atom-rocm
    # profile fits no MTP acceptance, so the record keeps the stated label and carries no replacement note
    from importlib.resources import files

    from jalapeno.fit.ix_points import load_inferencex

    p = next(q for q in load_inferencex(files("jalapeno") / "data/validation/inferencex_points.csv")[0]
             if q.id == "inferencex_points:99")
    assert p.deployment.mtp.draft_tokens == 3 and p.deployment.mtp.acceptance == 0.0
    rows = predict_points([p])
    assert set(rows.deployment) == {p.deployment.label}
    assert "MTP3@0 " in p.deployment.label
    assert not any("priced in place of the stated" in n for n in rows.notes)
