"""scripts/gb_sglang_routing_skew.py: the busiest EP rank's sampling tail (values by hand) and the row filter."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from script_module import load_script

sk = load_script("gb_sglang_routing_skew")


def test_sampling_tail_dep32_by_hand():
    # b = 64 per rank, DP32 = EP32, top-8: A = 64·32·8 = 16384 assignments, mean rank 512,
    # binomial std sqrt(512·31/32) = 22.271, Gaussian max over 32 ranks sqrt(2 ln 32) = 2.6328: tail 58.64
    r, x, d = sk.sampling_tail(64, 32, 32)
    assert x == pytest.approx(math.sqrt(512 * 31 / 32) * math.sqrt(2 * math.log(32)), rel=1e-9)
    assert r == pytest.approx((512 + 58.635) / 512, rel=1e-4)
    # d/db of 8b + 2.6328·sqrt(7.75 b) = 8 + 2.6328·sqrt(7.75) / (2 sqrt(64)) = 8.4580 (central difference)
    assert d == pytest.approx(8 + math.sqrt(2 * math.log(32)) * math.sqrt(7.75) / 16, rel=1e-4)


def test_sampling_tail_falls_with_tokens_and_ep():
    # the relative excess falls as tokens grow (sqrt(A) against A) and is smaller at EP8 for the same b
    rels = [sk.sampling_tail(b, 32, 32)[0] for b in (4, 30, 115, 164)]
    assert rels == sorted(rels, reverse=True)
    assert sk.sampling_tail(480, 8, 8)[0] < sk.sampling_tail(30, 32, 32)[0]
    # DEP8 at 480 per rank: mean 3840, tail sqrt(3840·7/8)·sqrt(2 ln 8) = 57.97·2.0393 = 118.2
    assert sk.sampling_tail(480, 8, 8)[1] == pytest.approx(118.2, abs=0.05)


def test_selected_keeps_deepseek_sglang_rows():
    pts = [SimpleNamespace(model="deepseek-r1", framework="SGLang 0.5.8"),
           SimpleNamespace(model="deepseek-r1", framework="dynamo-trt"),
           SimpleNamespace(model="kimi-k2.5", framework="sglang")]
    assert sk.selected(pts) == pts[:1]
    assert sk.selected(pts, every_engine=True) == pts[:2]
