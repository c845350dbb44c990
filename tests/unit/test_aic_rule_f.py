"""fit/aic_bounds.py rule F: a closed loop with room for its requests runs them.

Real aiconfigurator-core 0.12.0 ``silicon_sample.csv`` rows of gpt-oss-120b on H100 SXM (80 GB, 989 TFLOP/s
BF16 dense), vLLM 0.11.2, aggregated, concurrency 512, copied by hand (TTFT / TPOT in ms):
  1024/8192, TP8: 117788.205570 / 3.571428     (id ..._c512_tp8_ep1_1128)
  8192/1024, TP4:  24323.132184 / 5.456033     (id ..._c512_tp4_ep1_1130)
  1024/8192, TP2: 462052.658228 / 14.770535    (id ..._c512_tp2_ep1_1131)

gpt-oss-120b by hand from its config.json (tests/unit/test_aic_rule_e.py gives the per-part counts):
  weights W = dense 3.0968e9 + embedding 201088*2880*2 = 1.1583e9 + experts 60.9937e9 = 65.249e9 B
  KV of one sequence at ISL + OSL = 9216 tokens, BF16: 18 full layers * 9216 * 2048 B = 339.739e6
                                                       + 18 sliding layers * 128 * 2048 B = 4.719e6 -> 344.458e6 B
  active weights N = attention 36*26,550,144 + router 36*(2880*128+128) + lm_head 201088*2880
                     + experts 36*128*(2880*5760 + 2880*2880 + 5760 + 2880) * 4/128
                   = 955,805,184 + 13,275,648 + 579,133,440 + 3,584,424,960 = 5,132,639,232
Row 1128 (TP8): B = 512 * 8191*3.571428 / (117788.21 + 29253.57) = 101.86 (as rule E's test)
  K = (8 * 80e9 * 0.8 - 65.249e9) / 344.458e6 = 1297.0 -> admitted min(512, 1297) = 512, ratio 0.1989
  rate = 512 / 147.04178 s = 3.48201 /s; prefill 3.48201 * 2 * 5.13264e9 * 1024 = 3.6602e13 FLOP/s
  over 8 * 989e12 = 0.00463 of peak: flagged.
Row 1130 (TP4, 8k/1k): B = 512 * 1023*5.456033 / (24323.13 + 5581.52) = 95.56; K = (4*64e9 - 65.249e9)/344.458e6
  = 553.8; ratio 95.56/512 = 0.1866, but prefill 512/29.90465 * 2 * 5.13264e9 * 8192 = 1.4398e15 FLOP/s is 0.364
  of 4 * 989e12: the queue may be prefill compute, not flagged.
Row 1131 (TP2): B = 512 * 8191*14.770535 / (462052.66 + 120985.65) = 106.24; K = (2*64e9 - 65.249e9)/344.458e6
  = 182.2 -> admitted 182.2, ratio 0.583: its KV cache holds too few, not flagged.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.fit import aic_bounds
from jalapeno.fit.aic_bounds import ADMIT_FACTOR, admission, aic_admission_flags
from jalapeno.fit.aic_quality import aic_decode_flags, aic_ttft_flags
from jalapeno.specs.formats import get_precision


def _pt(pid, isl, osl, ttft_ms, tpot_ms, tp, conc=512, mode="agg", source="aiconfigurator"):
    dep = Deployment(get_precision("mxfp4"), Pool(Layout(tp=tp, dp=1, ep=1), 1))
    return SimpleNamespace(id=pid, source=source, system="h100", model="gpt-oss-120b", framework="vllm 0.11.2",
                           precision="mxfp4", mode=mode, isl=isl, osl=osl, concurrency=float(conc), spec="",
                           deployment=dep, measured={"ttft_s": ttft_ms / 1e3, "tpot_s": tpot_ms / 1e3})


def _r1128(**kw):
    return _pt("r1128", 1024, 8192, 117788.205570, 3.571428, 8, **kw)


def _r1130():
    return _pt("r1130", 8192, 1024, 24323.132184, 5.456033, 4)


def _r1131():
    return _pt("r1131", 1024, 8192, 462052.658228, 14.770535, 2)


def test_admission_of_a_real_row_matches_the_hand_count():
    a = admission(_r1128())
    assert a["batch"] == pytest.approx(101.86, rel=1e-3)
    assert a["kv_room"] == pytest.approx(1297.0, rel=2e-3)
    assert a["admitted"] == 512.0
    assert a["ratio"] == pytest.approx(0.1989, abs=5e-4)
    assert a["prefill_share"] == pytest.approx(0.00463, rel=5e-3)


def test_capped_row_is_flagged_in_every_metric_and_the_reason_says_so():
    pts = [_r1128(), _r1130(), _r1131()]
    flags = aic_admission_flags(pts)
    assert list(flags) == ["r1128"]
    assert "102 requests decoding per instance" in flags["r1128"] and "of the 512 its concurrency 512" in flags["r1128"]
    assert "a cap the row does not record" in flags["r1128"] and "rule F" in flags["r1128"]
    assert "rule F" in aic_ttft_flags(pts)["r1128"] and "rule F" in aic_decode_flags(pts)["r1128"]


def test_a_queue_that_prefill_compute_may_explain_is_not_flagged():
    a = admission(_r1130())
    assert a["ratio"] == pytest.approx(0.1866, abs=5e-4) and a["kv_room"] == pytest.approx(553.8, rel=2e-3)
    assert a["prefill_share"] == pytest.approx(0.364, abs=2e-3)
    assert aic_admission_flags([_r1130()]) == {}


def test_a_row_its_kv_cache_caps_is_held_to_its_kv_room():
    a = admission(_r1131())
    assert a["kv_room"] == pytest.approx(182.2, rel=2e-3) and a["admitted"] == pytest.approx(a["kv_room"])
    assert a["ratio"] == pytest.approx(0.583, abs=2e-3)
    assert aic_admission_flags([_r1131()]) == {}


def test_the_factor_is_the_threshold(monkeypatch):
    r = _r1128()
    monkeypatch.setattr(aic_bounds, "ADMIT_FACTOR", 0.19)  # ratio 0.1989 is above it
    assert aic_admission_flags([r]) == {}
    monkeypatch.setattr(aic_bounds, "ADMIT_FACTOR", 0.20)
    assert list(aic_admission_flags([r])) == ["r1128"]
    assert 0.2 < ADMIT_FACTOR < 0.44  # under the next rows (0.44-0.6: prefill-heavy 8k/1k near saturation)


def test_passed_over_rows():
    assert admission(_r1128(mode="disagg")) is None
    assert aic_admission_flags([_r1128(source="inferencex")]) == {}
    no_tpot = _r1128()
    no_tpot.measured = {"ttft_s": 117.8}
    assert admission(no_tpot) is None
    assert admission(_r1128(), catalog=lambda p: None) is None  # model or chip not in the catalog
