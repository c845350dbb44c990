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
from types import SimpleNamespace

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


# Checks 2-5 on hand-built points (review53: the quick subset holds no violation, so only a planted one shows each
# check can fail). A deployment with no CUDA-graph sizes and one instance, so no event names a move unless planted.
def _dep(label="agg attn TP8 DP1 · MoE TP1 EP8 [fp8]", prefill=None):
    layout = SimpleNamespace(dp=1, pp=1)
    return SimpleNamespace(
        label=label,
        decode=SimpleNamespace(layout=layout),
        prefill=prefill,
        cuda_graph_max_batch=None,
        cuda_graph_batch_sizes=(),
    )


def _served(conc, tpot, limit=None):
    """Points at concurrencies ``conc`` (each the decode batch) with TPOT ``tpot`` s: throughput = C / TPOT."""
    conc, tpot = np.asarray(conc, float), np.asarray(tpot, float)
    return SimpleNamespace(
        feasible=np.ones(conc.size, bool),
        tpot_s=tpot,
        throughput_per_chip=conc / tpot,
        decode_batch=conc,
        limit=np.array(limit if limit is not None else [""] * conc.size, dtype=object),
        bound=np.array(["hbm"] * conc.size, dtype=object),
    )


def test_continuity_check_can_fail(monkeypatch):
    # TPOT 10 ms to the 20th concurrency of the grid, 30 ms after: x3 over a x2^0.25 = x1.19 step is above
    # JUMP x step = 1.6 x 1.19 = 1.90, with no event; throughput C / TPOT falls 3 / 1.19 = 2.5x there, before its
    # knee (the last point: 4,096 / 0.03 = 136,533 tok/s is the highest)
    def served(model, pricer, dep, wl, conc):
        t = np.where(np.arange(len(conc)) < 20, 0.01, 0.03)
        return _served(conc, t)

    monkeypatch.setattr(ss, "serve_at_concurrency", served)
    f = ss.Findings(quiet=True)
    ss.check_dense_concurrency(f, "planted", None, None, _dep(), None)
    assert len(f.by_check["3 continuity"]) == 1 and "TPOT x3.00" in f.by_check["3 continuity"][0]
    assert len(f.by_check["2 monotone"]) == 1 and "before the knee (no event)" in f.by_check["2 monotone"][0]

    # the same jump where the binding limit changes is an event: counted, not a violation
    def limited(model, pricer, dep, wl, conc):
        i = np.arange(len(conc))
        return _served(conc, np.where(i < 20, 0.01, 0.03), np.where(i < 20, "", "kv"))

    monkeypatch.setattr(ss, "serve_at_concurrency", limited)
    g = ss.Findings(quiet=True)
    ss.check_dense_concurrency(g, "planted", None, None, _dep(), None)
    assert not g.by_check and g.checked["events"] == 2  # the throughput dip and the TPOT jump, each named


def test_ttft_in_isl_check_can_fail(monkeypatch):
    # TTFT = 1 s / ISL falls as the prompt grows: every one of the 24 ISL steps 512 ... 32,768 is a fall
    monkeypatch.setattr(
        ss,
        "serve_at_concurrency",
        lambda model, pricer, dep, wl, conc: SimpleNamespace(feasible=[True], ttft_s=[1.0 / wl.isl]),
    )
    f = ss.Findings(quiet=True)
    ss.check_isl(f, "planted", SimpleNamespace(max_context=40_000), None, _dep())
    assert len(f.by_check["2 monotone"]) == 24 and "TTFT falls" in f.by_check["2 monotone"][0]


def test_mtp_check_can_fail(monkeypatch):
    # without MTP interactivity 100 tok/s at batches 1 and 8; with MTP k: 90 at batch 1 (x0.9 < 1) and
    # 100 x (1 + k + 0.5) at 8 (above the 1 + k tokens a step can add): two violations a setting, four in all
    def fake_sweep(model, pricer, wl, prec, opts):
        k = opts.mtp.draft_tokens if opts.mtp else 0
        label = "agg attn TP8" + (f" MTP{k}@0.8" if k else "")
        inter = [100.0, 100.0] if not k else [90.0, 100.0 * (1.5 + k)]
        return SimpleNamespace(
            points=SimpleNamespace(
                feasible=np.ones(2, bool), interactivity=np.array(inter), decode_batch=np.array([1.0, 8.0])
            ),
            dep_index=np.zeros(2, int),
            deployments=[SimpleNamespace(label=label)],
        )

    monkeypatch.setattr(ss, "sweep", fake_sweep)
    f = ss.Findings(quiet=True)
    ss.check_mtp(f, "planted", None, None, None, None)
    lines = f.by_check["4 MTP"]
    assert len(lines) == 4 and sum("< 1 at batch 1" in ln for ln in lines) == 2
    assert any("speed-up x2.50 > 1 + k = 2" in ln for ln in lines)  # MTP1: 250 / 100


def test_frontier_check_can_fail(monkeypatch, capsys):
    # points (interactivity, tok/s/chip) (10, 100) and (20, 200): the first is dominated x2 on both axes; listed as
    # a frontier point (a frontier_indices that kept every point), the check names it
    res = SimpleNamespace(
        points=SimpleNamespace(
            feasible=np.ones(2, bool),
            throughput_per_chip=np.array([100.0, 200.0]),
            interactivity=np.array([10.0, 20.0]),
        ),
        dep_index=np.array([0, 1]),
        deployments=[_dep("agg A"), _dep("agg B")],
    )
    f = ss.Findings(quiet=True)
    ss.check_frontier(f, "planted", res)
    assert "5 frontier" not in f.by_check and f.checked["5 frontier"] == 1  # the true frontier: (20, 200) alone
    monkeypatch.setattr(ss, "frontier_indices", lambda x, y: np.arange(len(x)))
    ss.check_frontier(f, "planted", res)
    assert len(f.by_check["5 frontier"]) == 1 and "agg A dominated" in f.by_check["5 frontier"][0]
