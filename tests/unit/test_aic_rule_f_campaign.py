"""fit/aic_admission_campaign.py: rule F's campaign clause.

Real aiconfigurator-core 0.12.0 ``silicon_sample.csv`` rows of gpt-oss-120b on H100 SXM, vLLM 0.11.2, aggregated,
concurrency 512 (ids ``2026_04_06_gpt_oss_120b_h100_sxm_vllm_fp4_agg_<ISL>x<OSL>_c512_tp<N>_ep1_<n>``), copied by
hand (TTFT / TPOT in ms), with B = 512 · (OSL − 1)·TPOT / (TTFT + (OSL − 1)·TPOT) worked by hand:
  1128  1024/8192 TP8: 117788.205570 / 3.571428  -> 8191*3.571428 = 29253.57;  B = 512 * 29253.57/147041.78 = 101.86
  1132  1024/8192 TP4: 302654.758582 / 9.665821  -> 8191*9.665821 = 79172.74;  B = 512 * 79172.74/381827.50 = 106.16
  1136  8192/1024 TP8:  19691.502387 / 4.449212  -> 1023*4.449212 =  4551.54;  B = 512 *  4551.54/ 24243.04 =  96.13
  1129  8192/1024 TP2: 113500.088683 / 26.891841 -> 1023*26.891841 = 27510.35; B = 512 * 27510.35/141010.44 =  99.89
  1130  8192/1024 TP4:  24323.132184 / 5.456033  -> B = 95.56 (tests/unit/test_aic_rule_f.py)
  1131  1024/8192 TP2: 462052.658228 / 14.770535 -> B = 106.24 (tests/unit/test_aic_rule_f.py)
Rule F flags 1128, 1132, 1136 (ratios 0.20, 0.21, 0.19 of 512; prefill under 25% of peak) and not 1129 (room 182.2 at
TP2: ratio 0.55), 1130 (prefill 36% of peak) or 1131 (room 182.2: ratio 0.58). The capped rows' B run 96.13-106.16,
so with t = 0.10 the window is [87.39, 116.78]: 1129 (99.89 < 182.2 / 1.1 = 165.6), 1130 (95.56 < 512 / 1.1) and
1131 (106.24 < 165.6) are in it.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.fit import aic_admission_campaign
from jalapeno.fit.aic_bounds import admission, aic_admission_flags
from jalapeno.fit.aic_quality import aic_decode_flags, aic_ttft_flags
from jalapeno.specs.formats import get_precision

ROWS = {  # id: (ISL, OSL, TP, TTFT ms, TPOT ms)
    "r1128": (1024, 8192, 8, 117788.205570, 3.571428),
    "r1132": (1024, 8192, 4, 302654.758582, 9.665821),
    "r1136": (8192, 1024, 8, 19691.502387, 4.449212),
    "r1129": (8192, 1024, 2, 113500.088683, 26.891841),
    "r1130": (8192, 1024, 4, 24323.132184, 5.456033),
    "r1131": (1024, 8192, 2, 462052.658228, 14.770535),
}


def _pt(pid, conc=512, framework="vllm 0.11.2"):
    isl, osl, tp, ttft, tpot = ROWS[pid]
    dep = Deployment(get_precision("mxfp4"), Pool(Layout(tp=tp, dp=1, ep=1), 1))
    return SimpleNamespace(id=pid, source="aiconfigurator", system="h100", model="gpt-oss-120b", framework=framework,
                           precision="mxfp4", mode="agg", isl=isl, osl=osl, concurrency=float(conc), spec="",
                           deployment=dep, measured={"ttft_s": ttft / 1e3, "tpot_s": tpot / 1e3})


def test_the_hand_counted_batches():
    for pid, b in (("r1132", 106.16), ("r1136", 96.13), ("r1129", 99.89)):
        assert admission(_pt(pid))["batch"] == pytest.approx(b, abs=0.01)
    assert admission(_pt("r1129"))["admitted"] == pytest.approx(182.2, rel=2e-3)


def test_the_campaign_flags_the_rows_that_decode_the_capped_number():
    pts = [_pt(i) for i in ROWS]
    flags = aic_admission_flags(pts)
    assert sorted(flags) == sorted(ROWS)  # F: 1128, 1132, 1136; the clause: 1129, 1130, 1131
    why = flags["r1129"]
    assert "100 requests decoding per instance" in why and "the 96-106 that rule F's 3 capped rows" in why
    assert "campaign clause" in why and "r1128, r1132, r1136" in why
    assert "rule F" in flags["r1128"] and "campaign clause" not in flags["r1128"]
    assert "campaign clause" in aic_ttft_flags(pts)["r1131"] and "campaign clause" in aic_decode_flags(pts)["r1130"]


def test_one_capped_row_is_not_a_campaign():
    assert sorted(aic_admission_flags([_pt(i) for i in ("r1128", "r1129", "r1130", "r1131")])) == ["r1128"]
    assert sorted(aic_admission_flags([_pt(i) for i in ("r1128", "r1132", "r1131")])) == ["r1128", "r1131", "r1132"]


def test_the_window_is_the_noise(monkeypatch):
    pts = [_pt(i) for i in ("r1128", "r1132", "r1131")]  # capped 101.86-106.16; 1131 decodes 106.24
    monkeypatch.setattr(aic_admission_campaign, "SAME_B", 0.0)
    assert sorted(aic_admission_flags(pts)) == ["r1128", "r1132"]
    monkeypatch.setattr(aic_admission_campaign, "SAME_B", 0.001)  # 106.16 * 1.001 = 106.27
    assert sorted(aic_admission_flags(pts)) == ["r1128", "r1131", "r1132"]


def test_other_campaigns_and_concurrencies_are_not_bound():
    capped = [_pt("r1128"), _pt("r1132")]
    f = {"r1128": "F", "r1132": "F"}
    clause = aic_admission_campaign.campaign_admission_flags
    assert list(clause(capped + [_pt("r1131")], f, admission)) == ["r1131"]
    assert clause(capped + [_pt("r1131", framework="vllm 0.18.0")], f, admission) == {}
    assert clause(capped + [_pt("r1131", conc=256)], f, admission) == {}
