"""fit/aic_bounds.py rule E: a decode step is no faster than its bytes over the chips' HBM bandwidth.

The measured values are real aiconfigurator-core 0.12.0 ``silicon_sample.csv`` rows of gpt-oss-120b on H100 SXM,
vLLM, aggregated, ISL/OSL as named, copied by hand (TTFT / TPOT in ms):
  1024/1024, C = 512, TP2 (release blank, "vllm nan"): 23793.330964 / 5.609278   (id ..._c512_tp2_ep1_1135)
  1024/8192, C = 512, TP8 (vLLM 0.11.2):               117788.205570 / 3.571428  (id ..._c512_tp8_ep1_1128)

gpt-oss-120b by hand from its config.json (36 layers, hidden 2880, 64 query / 8 KV heads of 64, 128 experts of
intermediate 2880, top-4, vocabulary 201088, every other layer a 128-token sliding window; MXFP4 experts = 4 bits +
one 8-bit scale per 32 = 0.53125 B, everything else BF16):
  attention per layer 2880*(4096+512+512) + 4096*2880 + biases 4096+512+512+2880 + 64 sinks = 26,550,144
  dense bytes (embedding left out) = 2 * (36*26,550,144 + router 36*(2880*128+128) + lm_head 201088*2880
                                         + norms 73*2880) = 3.0968e9 B
  experts: 36*128*(2880*5760 + 2880*2880) = 114,661,785,600 weights * 0.53125 = 60.9141e9 B
           + BF16 biases 36*128*(5760+2880)*2 = 0.0796e9 B  -> 60.9937e9 B
  KV of one sequence at 0.8*1024 = 819.2 tokens, BF16: 18 full layers * 819.2 * (2*8*64*2 = 2048 B) = 30.199e6 B
                                                      + 18 sliding layers * 128 * 2048 B = 4.719e6 B -> 34.918e6 B
Row 1135: B = 512 * 1023*5.609278 / (23793.330964 + 1023*5.609278) = 512 * 5738.29 / 29531.62 = 99.487
  touched = 1 - (124/128)^99.487 = 1 - exp(-3.15863) = 0.95752
  bytes = 3.0968e9 + 0.95752*60.9937e9 + 99.487*34.918e6 = 3.0968e9 + 58.4027e9 + 3.4739e9 = 64.973e9 B
  floor = 64.973e9 / (2 * 3.35e12 B/s) = 9.697 ms; TPOT / floor = 5.609 / 9.697 = 0.578 < 0.7: flagged.
Row 1128: B = 512 * 8191*3.571428 / (117788.205570 + 8191*3.571428) = 512 * 29253.57 / 147041.78 = 101.86
  touched = 1 - exp(-0.031749*101.86) = 0.96059; bytes = 3.0968e9 + 58.590e9 + 101.86*34.918e6 = 65.244e9 B
  floor = 65.244e9 / (8 * 3.35e12) = 2.4345 ms; TPOT / floor = 1.467: not flagged (its TTFT says ~102 of its
  512 requests decode at a time; at all 512 the same bytes would be 3.06 ms, still below its TPOT / 0.7).
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from jalapeno.deploy.deployment import MTP, Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.fit.aic_bounds import FLOOR_FACTOR, aic_floor_flags, decode_floor
from jalapeno.fit.aic_quality import aic_decode_flags
from jalapeno.specs.formats import get_precision


def _pt(pid, isl, osl, ttft_ms, tpot_ms, tp, conc=512, dp=1, workers=1, mtp=None, source="aiconfigurator",
        model="gpt-oss-120b", system="h100"):
    dep = Deployment(get_precision("mxfp4"), Pool(Layout(tp=tp, dp=dp, ep=1), workers))
    dep = replace(dep, mtp=mtp) if mtp else dep
    return SimpleNamespace(id=pid, source=source, system=system, model=model, framework="vllm nan",
                           precision="mxfp4", mode="agg", isl=isl, osl=osl, concurrency=float(conc), spec="",
                           deployment=dep, measured={"ttft_s": ttft_ms / 1e3, "tpot_s": tpot_ms / 1e3})


def _row1135(**kw):
    return _pt("r1135", 1024, 1024, 23793.330964, 5.609278, 2, **kw)


def _row1128(**kw):
    return _pt("r1128", 1024, 8192, 117788.205570, 3.571428, 8, **kw)


def test_floor_of_a_real_row_matches_the_hand_count():
    f = decode_floor(_row1135())
    assert f["batch"] == pytest.approx(99.487, rel=1e-4)
    assert f["chips"] == 2
    assert f["weight_bytes"] + f["kv_bytes"] == pytest.approx(64.973e9, rel=2e-3)
    assert f["kv_bytes"] == pytest.approx(3.4739e9, rel=2e-3)
    assert f["floor_s"] == pytest.approx(9.697e-3, rel=2e-3)
    assert f["ratio"] == pytest.approx(0.578, abs=0.002)


def test_row_below_its_floor_is_flagged_and_the_reason_says_so():
    flags = aic_floor_flags([_row1135(), _row1128()])
    assert list(flags) == ["r1135"]
    assert "TPOT 5.61 ms is 0.58x the 9.70 ms floor" in flags["r1135"] and "rule E" in flags["r1135"]
    assert decode_floor(_row1128())["floor_s"] == pytest.approx(2.4345e-3, rel=2e-3)


def test_floor_reads_only_the_chip_count_not_the_layout():
    # TP2 and DP2 of the same two chips: a mis-stated layout cannot raise the floor
    assert decode_floor(_pt("a", 1024, 1024, 23793.330964, 5.609278, 1, dp=2))["floor_s"] == pytest.approx(
        decode_floor(_row1135())["floor_s"], rel=1e-9)


def test_more_instances_split_the_concurrency():
    # two TP2 workers: 256 requests per instance, B halves (99.487 / 2), so the floor falls
    f1, f2 = decode_floor(_row1135()), decode_floor(_row1135(workers=2))
    assert f2["batch"] == pytest.approx(f1["batch"] / 2, rel=1e-9)
    assert f2["floor_s"] < f1["floor_s"]


def test_mtp_divides_the_floor_by_the_tokens_a_step_can_yield():
    # MTP with 2 draft tokens: at most 3 tokens per step, floor / 3 = 3.232 ms; TPOT 5.61 ms is then above it
    f = decode_floor(_row1135(mtp=MTP(2, 0.7)))
    assert f["floor_s"] == pytest.approx(9.697e-3 / 3, rel=2e-3)
    assert aic_floor_flags([_row1135(mtp=MTP(2, 0.7))]) == {}


def test_the_factor_is_the_threshold():
    # the same row at TPOT just above / below 0.7 x 9.697 ms = 6.788 ms (B moves with TPOT, so checked via ratio)
    assert FLOOR_FACTOR == 0.7
    for tpot, flagged in ((6.5, True), (7.2, False)):
        p = _pt("x", 1024, 1024, 23793.330964, tpot, 2)
        assert (decode_floor(p)["ratio"] < FLOOR_FACTOR) is flagged
        assert bool(aic_floor_flags([p])) is flagged


def test_passed_over_rows():
    assert aic_floor_flags([_row1135(source="inferencex")]) == {}
    assert decode_floor(_pt("m", 1024, 1024, 0.0, 5.6, 2)) is None  # no TTFT: no batch
    assert decode_floor(_pt("o", 1024, 1, 100.0, 5.6, 2)) is None  # OSL 1: no decode step
    assert decode_floor(_row1135(), catalog=lambda p: None) is None  # model or chip not in the catalog
    assert decode_floor(_row1135(system="no-such-system")) is None


def test_decode_flags_join_rules_d_e_and_f():
    # both rows also decode ~100 of the 512 requests their memory admits (rule F, tests/unit/test_aic_rule_f.py);
    # rule E flags 1135 alone
    flags = aic_decode_flags([_row1135(), _row1128()])
    assert sorted(flags) == ["r1128", "r1135"]
    assert "rule E" in flags["r1135"] and "rule F" in flags["r1135"]
    assert "rule E" not in flags["r1128"] and "rule F" in flags["r1128"]
