"""fit/aic_quality.py rule D: a chip no slower in any resource does not decode slower (and its campaign).

The measured values are real aiconfigurator-core 0.12.0 ``silicon_sample.csv`` rows of Qwen3-235B-A22B-FP8
on vLLM 0.12.0, copied by hand (TTFT / TPOT in ms, ISL/OSL, concurrency, layout):
  H100 disaggregated, decode 3 workers x TP4, 4000/1000, C = 72: 898.339221 / 11.383278 (row 1582)
  H200 aggregated TP4 (MoE TP4), 4000/1000, C = 24: 395.09 / 34.35 (row 1688)
  H200 aggregated TP4, 4000/500, C = 20: 352.74 / 35.16 (row 1685)
  H200 aggregated TP4, 1000/100, C = 28: 153.76 / 35.27 (row 1660)
  H200 aggregated TP2, 2000/1000, C = 16: 364.19 / 51.37 (row 1675)
Worked by hand from the rule (module docstring), H200 4000/1000 against H100:
  B_Y = 72/3 * 999*11.383278 / (898.339221 + 999*11.383278) = 24 * 11371.895 / 12270.234 = 22.243
  B_X = 24 * 999*34.35 / (395.09 + 999*34.35) = 24 * 34315.65 / 34710.74 = 23.727
  stall_X = 24 * 395.09 / 999 = 9.492 ms; decode_X = 34.35 - 9.492 = 24.858 ms
  bound_Y = 11.383278 * 23.727 / 22.243 = 12.143 ms; ratio = 24.858 / 12.143 = 2.047 > 1.5: flagged.
  4000/500 C = 20: B_X = 20 * 499*35.16 / (352.74 + 499*35.16) = 19.606 < B_Y; stall 20*352.74/499 = 14.138 ms;
  ratio = (35.16 - 14.138) / 11.383 = 1.847: flagged.
  1000/100 C = 28: stall 28*153.76/99 = 43.49 ms > 35.27 ms TPOT: the pair tests nothing.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pandas as pd
import pytest

from jalapeno.fit.aic_quality import SIBLING_TPOT_FACTOR, aic_sibling_flags, sibling_pairs


def _pt(pid, system, conc, ttft_ms, tpot_ms, isl, osl, tp=4, dp=1, ep=1, workers=1, mode="agg",
        framework="vllm 0.12.0", mtp=None, source="aiconfigurator"):
    dep = SimpleNamespace(decode=SimpleNamespace(layout=SimpleNamespace(tp=tp, dp=dp, ep=ep), workers=workers), mtp=mtp)
    return SimpleNamespace(id=pid, source=source, system=system, model="qwen3-235b-a22b", framework=framework,
                           precision="fp8", mode=mode, isl=isl, osl=osl, concurrency=float(conc), spec="",
                           deployment=dep, measured={"ttft_s": ttft_ms / 1e3, "tpot_s": tpot_ms / 1e3})


def _h100(**kw):
    return _pt("h100", "h100", 72, 898.339221, 11.383278, 4000, 1000, ep=0, workers=3, mode="disagg", **kw)


def _h200_4k1k(**kw):
    return _pt("x1k", "h200", 24, 395.09, 34.35, 4000, 1000, **kw)


def test_rule_d_pair_figures_match_the_hand_computation():
    q = [q for q in sibling_pairs([_h100(), _h200_4k1k()]) if q["x"].id == "x1k"]
    assert len(q) == 1
    q = q[0]
    assert q["batch_y"] == pytest.approx(22.243, abs=2e-3) and q["batch_x"] == pytest.approx(23.727, abs=2e-3)
    assert q["stall_x_s"] == pytest.approx(9.492e-3, abs=2e-6) and q["bound_y_s"] == pytest.approx(12.143e-3, abs=2e-6)
    assert q["ratio"] == pytest.approx(2.047, abs=2e-3) and q["ratio"] > SIBLING_TPOT_FACTOR


def test_rule_d_flags_the_h200_row_slower_than_its_h100_sibling():
    f = aic_sibling_flags([_h100(), _h200_4k1k(), _pt("x500", "h200", 20, 352.74, 35.16, 4000, 500)])
    assert sorted(f) == ["x1k", "x500"]  # ratios 2.05 and 1.85; the H100 row has no slower-chip sibling
    assert "is 2.0x the 11.4 ms TPOT of the same release and decode layout on h100" in f["x1k"]
    assert "less at most 9.5 ms of prefill stall" in f["x1k"] and "rule D" in f["x1k"]
    assert "is 1.8x" in f["x500"]


def test_rule_d_compares_only_a_faster_chip_of_the_same_compute_release_layout_and_no_more_context():
    assert aic_sibling_flags([_h100(), _h200_4k1k(framework="vllm 0.13.0")]) == {}  # another release
    assert aic_sibling_flags([_h100(framework="vllm nan"), _h200_4k1k(framework="vllm nan")]) == {}  # unstated
    assert aic_sibling_flags([_h100(), _h200_4k1k(tp=2)]) == {}  # another attention layout
    assert aic_sibling_flags([_h100(), _h200_4k1k(ep=4)]) != {}  # the H100 row states no EP: compared
    b200 = _h200_4k1k()
    b200.system = "b200"  # more bandwidth but another compute (another die, other kernels)
    assert aic_sibling_flags([_h100(), b200]) == {}
    assert aic_sibling_flags([_h100(), _h200_4k1k(mtp=SimpleNamespace(k=1))]) == {}  # MTP on one side only
    longer = _pt("x", "h200", 24, 395.09, 34.35, 8000, 1000)  # more context than the sibling: not bounded by it
    assert aic_sibling_flags([_h100(), longer]) == {}
    # the slower chip is never judged against the faster one; other sources are not judged
    assert "h100" not in aic_sibling_flags([_h100(), _h200_4k1k()])
    assert aic_sibling_flags([_h100(source="inferencex"), _h200_4k1k(source="inferencex")]) == {}


def test_rule_d_a_pair_whose_stall_bound_exceeds_the_tpot_tests_nothing():
    short = _pt("x100", "h200", 28, 153.76, 35.27, 1000, 100)  # stall 43.5 ms > TPOT 35.3 ms
    assert [q for q in sibling_pairs([_h100(), short]) if q["x"].id == "x100"] == []


def test_rule_d_within_its_factor_is_not_flagged():
    # TPOT 20 ms: B_X = 24 * 19980 / 20375.09 = 23.535, decode 20 - 9.492 = 10.508 ms,
    # bound 11.383 * 23.535 / 22.243 = 12.045 ms: ratio 0.87
    assert aic_sibling_flags([_h100(), _pt("x", "h200", 24, 395.09, 20.0, 4000, 1000)]) == {}


def test_rule_d_campaign_flags_every_row_when_every_matched_row_is_slower():
    pts = [_h100(), _h200_4k1k(), _pt("x100", "h200", 28, 153.76, 35.27, 1000, 100),
           _pt("tp2", "h200", 16, 364.19, 51.37, 2000, 1000, tp=2)]
    f = aic_sibling_flags(pts)
    # x1k breaks rule D and is the campaign's one row with an informative sibling: the unmatched x100
    # and tp2 rows of the same (h200, qwen3, vllm 0.12.0, fp8, agg) are flagged with it
    assert sorted(f) == ["tp2", "x100", "x1k"]
    assert "campaign h200 qwen3-235b-a22b vllm 0.12.0 fp8 agg" in f["tp2"] and "ratios 2.05" in f["tp2"]


def test_rule_d_campaign_is_not_extended_when_a_matched_row_is_consistent():
    fast = _pt("fast", "h200", 24, 395.09, 20.0, 4000, 1000)  # ratio 0.87 (above): consistent with its sibling
    pts = [_h100(), _h200_4k1k(), fast, _pt("tp2", "h200", 16, 364.19, 51.37, 2000, 1000, tp=2)]
    assert sorted(aic_sibling_flags(pts)) == ["x1k"]


def test_run_validation_flags_tpot_and_interactivity_not_ttft():
    from jalapeno.fit.validation_run import run_validation

    cols = pd.read_csv(__import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "aiconfigurator"
                       / "silicon_sample_subset.csv", nrows=0).columns
    common = {"backend": "vllm", "backend_version": "0.12.0", "model_path": "Qwen/Qwen3-235B-A22B-FP8",
              "precision": "fp8", "isl": 4000, "osl": 1000, "gemm_quant_mode": "fp8", "moe_quant_mode": "fp8"}
    h100 = {**common, "id": "qwen3_h100_vllm_disagg_4000x1000_c_tpnone_epnone_1", "system": "h100_sxm",
            "mode": "disagg", "prefill_batch_size": 1, "prefill_num_workers": 1, "prefill_tp_size": 1,
            "prefill_pp_size": 1, "prefill_attention_dp_size": 4, "prefill_moe_tp_size": 0, "prefill_moe_ep_size": 0,
            "decode_batch_size": 24, "decode_num_workers": 3, "decode_tp_size": 4, "decode_pp_size": 1,
            "decode_attention_dp_size": 1, "decode_moe_tp_size": 0, "decode_moe_ep_size": 0,
            "silicon_ttft_ms": 898.339221, "silicon_tpot_ms": 11.383278}
    h200 = {**common, "id": "qwen3_h200_vllm_agg_4000x1000_c24_tp4_epnone_31", "system": "h200_sxm", "mode": "agg",
            "batch_size": 24, "tp_size": 4, "pp_size": 1, "moe_tp_size": 4, "moe_ep_size": 1,
            "silicon_ttft_ms": 395.09, "silicon_tpot_ms": 34.35}
    frame = pd.DataFrame([h100, h200]).reindex(columns=cols)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "aiconfigurator_core", None)
        res = run_validation(use_aiconfigurator=False, aic_frame=frame)
    rows = res["rows"]
    mine = rows[rows.id == f"aic:{h200['id']}"].set_index("metric")
    assert "rule D" in mine.quality["tpot_s"] and "rule D" in mine.quality["interactivity"]
    assert mine.quality["ttft_s"] == ""
    # the flagged H200 row counts only with the flagged group; the H100 sibling (its 0 MoE sizes read as unset,
    # test_aic_zero_sizes.py) is priced and counts in both
    assert res["overall_all"]["aiconfigurator"]["tpot_s"]["n"] == 2 and res["overall"]["aiconfigurator"]["tpot_s"]["n"] == 1
