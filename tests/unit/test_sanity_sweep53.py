"""scripts/sanity_sweep53.py: the physics sanity sweep's floors by hand, each check able to fail, and the quick subset.

By hand (DeepSeek-R1 config.json: 61 layers, MLA kv_lora_rank 512 + qk_rope_head_dim 64): an FP8 (e4m3, 8-bit) KV
cache holds 61 x (512 + 64) x 1 B = 35,136 B per token, so a sequence of 1,000 tokens makes a decode step read
35,136,000 B (block scales left out: a floor). gpt-oss-120b (36 layers, alternating full / 128-token sliding window,
8 KV heads x 64 dims, K and V): 18 full layers x 2 x 8 x 64 = 18,432 elements per token and 18 windowed layers x
1,024 elements x min(128, ctx): at ctx 1,000 and 1 B per element 18,432,000 + 18 x 1,024 x 128 = 20,791,296 B.
Uniform top-k routing of T tokens over E experts touches E(1 - (1 - k/E)^T) distinct experts: 8 at T = 1 and,
for DeepSeek-R1 (E = 256, k = 8) at T = 64, 256 x (1 - (31/32)^64) = 222.4.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from script_module import load_script

import jalapeno as jp

ss = load_script("sanity_sweep53")


def test_kv_floor_by_hand():
    fp8 = jp.get_precision("fp8")
    dsr1 = jp.load_model("deepseek-r1")
    assert fp8.kv_cache.element_bits == 8
    assert ss.kv_floor_bytes(dsr1, fp8, 1000.0) == pytest.approx(35_136_000)
    gpt = jp.load_model("gpt-oss-120b")
    assert ss.kv_floor_bytes(gpt, fp8, 1000.0) == pytest.approx(18_432_000 + 18 * 1024 * 128)


def test_distinct_experts_by_hand():
    m = jp.load_model("deepseek-r1")
    fp8 = jp.get_precision("fp8")
    bpp = ss._min_weight_bytes(fp8)
    routed = m.num_moe_layers * m.expert_params()
    fixed = m.active_params - m.moe.top_k * routed
    w1, w64 = ss.weights_floor_bytes(m, fp8, np.array([1.0, 64.0]))
    assert w1 == pytest.approx(bpp * (fixed + 0.95 * 8 * routed))
    assert w64 == pytest.approx(bpp * (fixed + 0.95 * 256 * (1 - (31 / 32) ** 64) * routed))
    assert 256 * (1 - (31 / 32) ** 64) == pytest.approx(222.4, abs=0.05)


@pytest.fixture(scope="module")
def small():
    m, pr, wl = jp.load_model("deepseek-r1"), jp.load_pricer("b200"), jp.get_workload("1k1k")
    res = ss.sweep(m, pr, wl, jp.get_precision("fp8"), ss.SweepOptions(serving="agg", overlap="none"))
    return m, pr, wl, res


def test_floor_check_can_fail(small):
    m, pr, wl, res = small
    f = ss.Findings(quiet=True)
    ss.check_floors(f, "b200", m, pr.system, res, wl)
    assert "1 floor" not in f.by_check and f.checked["1 floor"] > 0
    fast = replace(res, points=replace(res.points, step_time_s=res.points.step_time_s * 1e-3))
    ss.check_floors(f, "b200", m, pr.system, fast, wl)
    assert len(f.by_check["1 floor"]) == f.checked["1 floor"] // 2  # every point of the planted copy


def test_monotone_and_spec_checks_can_fail(small):
    m, pr, wl, res = small
    f = ss.Findings(quiet=True)
    ss.check_load_monotone(f, "b200", res)
    assert "2 monotone" not in f.by_check
    # TPOT made to fall with the batch inside every deployment
    bad = replace(res, points=replace(res.points, tpot_s=1.0 / res.points.decode_batch))
    ss.check_load_monotone(f, "b200", bad)
    assert f.by_check["2 monotone"]
    # a copy 10 % slower everywhere is flagged as slower than the original
    slow = replace(res, points=replace(res.points, tpot_s=res.points.tpot_s * 1.1, e2e_s=res.points.e2e_s * 1.1))
    ss.check_pair(f, "6 specs", "b200", res, slow, 0.005, "planted")
    assert "x1.100" in f.by_check["6 specs"][0]


def test_energy_identity(small):
    m, pr, wl, res = small
    f = ss.Findings(quiet=True)
    ss.check_energy(f, "b200", pr.system, res)
    assert f.checked["7 energy"] > 0 and "7 energy" not in f.by_check


def test_quick_subset_runs_every_check():
    f = ss.main(["--quick"], quiet=True)
    for check in (
        "1 floor",
        "2 monotone",
        "3 continuity",
        "4 MTP",
        "5 FP4 vs FP8",
        "5 frontier",
        "6 specs",
        "7 energy",
    ):
        assert f.checked.get(check, 0) > 0, check
    # physics holds on the quick subset: no violation; the moves it names are events (the script's docstring)
    assert not f.by_check


def test_bunched_prompt_event_named():
    """Jalapeño DeepSeek-R1 FP4 32k/1k, aggregated DP256 EP256: the TPOT fall from batch 2 to 4 is named by the
    prefill-carrying share of steps (it falls), and is a violation when nothing names it (no context)."""
    m, pr, wl = jp.load_model("deepseek-r1"), jp.load_pricer("jalapeno"), jp.get_workload("32k1k")
    res = ss.sweep(m, pr, wl, jp.get_precision("fp4"), ss.SweepOptions(serving="agg", overlap="none"))
    d = next(i for i, dep in enumerate(res.deployments) if dep.label.startswith("agg attn TP1 DP256"))
    idx = {float(res.points.decode_batch[i]): i for i in np.flatnonzero((res.dep_index == d) & res.points.feasible)}
    i, j = idx[2.0], idx[4.0]
    assert res.points.tpot_s[j] < res.points.tpot_s[i]
    f = ss.Findings(quiet=True)
    assert ss._named(f, "t", "l", res, i, j, (m, pr, wl)) is False
    assert "prefill-carrying share" in ss._event(res, i, j, (m, pr, wl))
    assert ss._named(f, "t", "l", res, i, j, None) is True
