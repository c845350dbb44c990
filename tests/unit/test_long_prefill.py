"""Long-prompt prefill: context parallelism (Layout.cp) and chunked prefill pipelined over PP stages.

Expected values are computed by hand from the formulas of docs/model.md §3.9 and §8.6 (attention
pairs, ring bytes, flow-shop makespan) on Llama-3.3-70B (64 query heads, 8 KV heads, head dim 128,
80 layers, BF16 KV) and DeepSeek-R1, never read back from the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from cli_runner import check_error, run

from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout, validate_layout
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.serve.chunked import chunk_plan, pipelined_prefill_s
from jalapeno.serve.disagg import decode_curve, disaggregated_points, prefill_perf
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import Workload


@pytest.fixture(scope="module")
def llama():
    m = load_model("llama-3.3-70b")
    return m, load_pricer("h200"), get_precision(m.default_precision)


def _op(sc, name, field="flop"):
    return getattr(sc.ops, field)[sc.ops.name.index(name), 0]


def _coll(sc, name):
    return sc.collective_rows(0)[sc.collectives.name.index(name)]


# ----------------------------------------------------------------------------- pipeline (PP)

def test_pipeline_constant_stage_hand_computed():
    """pp = 4, 16 equal chunks: (16 + 3)·stage + 16·(edge + overhead) + (16 + 2)·p2p."""
    stage, edge, p2p, ovh, pp, c = 3.0e-3, 0.2e-3, 0.05e-3, 0.5e-3, 4, 16
    step = pp * stage + edge + (pp - 1) * p2p + ovh  # cost/step.py step_time
    interval = stage + edge + p2p + ovh  # cost/step.py interval
    owner = np.zeros(c, dtype=int)
    got = pipelined_prefill_s(np.full(c, step), np.full(c, interval), owner, 1)[0]
    want = 19 * stage + 16 * (edge + ovh) + 18 * p2p
    assert got == pytest.approx(want, rel=1e-12)
    # without pipelining it would be c·step = 64 stages: the "~4x too slow"
    assert c * step / got == pytest.approx((64 * stage + 16 * (edge + ovh) + 48 * p2p) / want)


def test_pipeline_growing_and_shrinking_chunks():
    """Proportionate flow shop: Σ s_j + (m − 1)·max s_j (pp = 3, no edge/p2p/overhead)."""
    s = np.array([1.0, 2.0, 4.0, 0.5])
    got = pipelined_prefill_s(3 * s, s, np.zeros(4, dtype=int), 1)[0]
    assert got == pytest.approx(s.sum() + 2 * 4.0)
    # pp = 1: chunks back to back
    assert pipelined_prefill_s(s, s, np.zeros(4, dtype=int), 1)[0] == pytest.approx(s.sum())


def test_chunk_plan_prefixes():
    tok, pre, own = chunk_plan([20000, 8192], 8192)
    assert tok.tolist() == [8192, 8192, 20000 - 16384, 8192]
    assert pre.tolist() == [0, 8192, 16384, 0]
    assert own.tolist() == [0, 0, 0, 1]


def test_pp4_128k_prefill_is_pipelined(llama):
    """The issue's example: one 128K prompt, 16 chunks of 8,192, on TP8 vs TP8 PP4 (Llama, H200).

    By hand: with s_j the single-stage time of chunk j at prefix j·8192, a 4-stage pipeline takes
    about Σ s_j/4 + 3·s_15/4 (each stage a quarter of the layers; the last, longest chunk crosses
    three more stages), so T_pp4/T_pp1 ≈ (1 + 3·s_15/Σ s)/4; the old formula c·step_pp4 ≈ T_pp1.
    For constant chunks the ratio old/new would be 16·4/(16 + 3) = 3.37.
    """
    m, pr, prec = llama
    wl = Workload("128k", 131072, 1024, range_ratio=1.0)
    one = prefill_perf(m, pr, Layout(tp=8), prec, wl, 8192)
    four = prefill_perf(m, pr, Layout(tp=8, pp=4), prec, wl, 8192)
    s = np.array([step_cost(m, pr, Layout(tp=8), prec, Batch.make(prefill_tokens=8192, prefill_ctx=j * 8192))
                  .step_time_s[0] for j in range(16)])
    assert one.service_s == pytest.approx(s.sum(), rel=1e-9)
    hand = (s.sum() + 3 * s[-1]) / 4
    assert four.service_s == pytest.approx(hand, rel=0.03)  # p2p, edge and overhead not split by 4
    ratio = one.service_s / four.service_s
    assert 2.7 < ratio < 16 * 4 / 19  # growth of later chunks keeps it under the constant-chunk 3.37
    old = 16 * step_cost(m, pr, Layout(tp=8, pp=4), prec,
                         Batch.make(prefill_tokens=8192, prefill_ctx=(131072 - 8192) / 2)).step_time_s[0]
    assert old / four.service_s > 2.7  # what the model used to say: ~3x too slow


def test_short_prompt_service_is_its_own_step(llama):
    """A prompt within one token budget: service = a step carrying that prompt alone (the prompts
    batched with it are the queue's, serve/queueing.py); throughput = budget / full-step interval."""
    m, pr, prec = llama
    wl = Workload("8k", 8192, 1024)
    p = prefill_perf(m, pr, Layout(tp=8, pp=2), prec, wl, 8192)
    lone = step_cost(m, pr, Layout(tp=8, pp=2), prec, Batch.make(prefill_tokens=wl.mean_isl, prefill_ctx=0.0))
    full = step_cost(m, pr, Layout(tp=8, pp=2), prec,
                     Batch.make(prefill_tokens=8192, prefill_seqs=8192 / wl.mean_isl, prefill_ctx=0.0))
    assert p.service_s == pytest.approx(lone.step_time_s[0], rel=1e-12)
    assert p.tokens_per_s == pytest.approx(8192 / full.interval_s[0], rel=1e-12)
    assert p.service_s < full.step_time_s[0]


# ----------------------------------------------------------------------------- context parallelism

def test_layout_cp_chips_label_and_validation(llama):
    m, pr, _ = llama
    lay = Layout(tp=8, cp=4)
    assert lay.chips == 32 and lay.stage_chips == 8 and "CP4" in lay.label
    assert Layout(tp=2, dp=2, pp=2, cp=3).chips == 24
    with pytest.raises(InfeasibleDeployment, match="cp"):
        validate_layout(Layout(tp=8, cp=0), m, pr.system)
    with pytest.raises(InfeasibleDeployment, match="chips"):
        validate_layout(Layout(tp=8, cp=2048), m, pr.system)


def test_cp_attention_flops_per_rank_zigzag(llama):
    """Zig-zag: each rank does 1/cp of the causal pairs C·P + P²/2 (one sequence)."""
    m, pr, prec = llama
    P, C = 8192.0, 65536.0
    pairs = C * P + P * P / 2
    n, d, layers = 64 / 8, 128, 80
    for cp in (1, 2, 4):
        sc = step_cost(m, pr, Layout(tp=8, cp=cp), prec, Batch.make(prefill_tokens=P, prefill_ctx=C))
        want = 2 * n * 2 * d * pairs / cp * layers
        assert _op(sc, "attn.prefill_full") == pytest.approx(want, rel=1e-12)
        # linear ops split by tokens, full (TP-sharded) weights on every CP rank
        h, inter = 8192, 28672 / 8
        assert _op(sc, "dense_ffn.down") == pytest.approx(2 * P / cp * inter * h * layers, rel=1e-12)
        assert _op(sc, "dense_ffn.down", "weight_bytes") == pytest.approx(inter * h * layers * 2, rel=1e-12)


def test_cp_ring_bytes(llama):
    """Ring: cp − 1 steps per layer, each one rank's block (C + P)/cp tokens of K+V (1 KV head/rank)."""
    m, pr, prec = llama
    P, C, cp = 8192.0, 65536.0, 4
    sc = step_cost(m, pr, Layout(tp=8, cp=cp), prec, Batch.make(prefill_tokens=P, prefill_ctx=C))
    row = _coll(sc, "attn.cp_ring_kv_full")
    kv_tok = 2 * 1 * 128 * 2.0  # K and V, 8 KV heads / TP8 = 1 per rank, 128 dims, BF16
    assert row["bytes_per_call"] == pytest.approx((C + P) / cp * kv_tok, rel=1e-12)
    assert row["calls"] == (cp - 1) * 80
    per_layer = row["bytes_per_call"] * row["calls"] / 80
    assert per_layer == pytest.approx((cp - 1) / cp * (C + P) * kv_tok, rel=1e-12)
    assert row["group"] == 32 and row["kind"] == "send_recv"
    assert "attn.cp_ring_kv_full" not in step_cost(m, pr, Layout(tp=8), prec,
                                                   Batch.make(prefill_tokens=P, prefill_ctx=C)).collectives.name


def test_cp_ring_exposed_only_beyond_attention(llama):
    """The ring hides under the attention op: exposed = max(0, t_ring − t_attention)."""
    m, pr, prec = llama
    for P, C in ((512.0, 0.0), (8192.0, 65536.0)):
        sc = step_cost(m, pr, Layout(tp=8, cp=4), prec, Batch.make(prefill_tokens=P, prefill_ctx=C))
        row = _coll(sc, "attn.cp_ring_kv_full")
        raw = pr.collective("send_recv", 32, np.array([row["bytes_per_call"]])).time_s[0] * row["calls"]
        attn = sc.times.time_s[sc.ops.name.index("attn.prefill_full"), 0]
        assert row["time_s"] == pytest.approx(max(0.0, raw - attn), abs=1e-12)
        assert (row["time_s"] > 0) == (C == 0.0)  # a short chunk exposes latency; a long one hides


def test_cp_ring_counts_in_the_step_time_at_pp1(llama):
    """The exposed ring is part of every layer, so it adds to the step at PP1 (it was once taken for the
    pipeline hand-off, charged (pp − 1) times: zero at PP1). By hand: the step with the ring minus the
    same step with the ring's exposed time taken out = the ring's exposed time, and it shows in the
    link attribution of the ring's scope."""
    m, pr, prec = llama
    P = 2048.0
    sc = step_cost(m, pr, Layout(tp=8, cp=8), prec, Batch.make(prefill_tokens=P))
    row = _coll(sc, "attn.cp_ring_kv_full")
    raw = pr.collective("send_recv", 64, np.array([row["bytes_per_call"]])).time_s[0] * row["calls"]
    attn = sc.times.time_s[sc.ops.name.index("attn.prefill_full"), 0]
    exposed = max(0.0, raw - attn)
    assert exposed > 1e-3  # a 2K chunk over 8 ranks across nodes: latency-bound steps outlast attention
    ops_s = sc.times.time_s[:, 0].sum()
    others = sum(_coll(sc, n)["time_s"] for n in sc.collectives.name if n != "attn.cp_ring_kv_full")
    eff = pr.efficiency
    fixed = eff.step_overhead_s + 7 * eff.tp_rank_step_s  # cost/step.step_overhead at TP8
    assert sc.step_time_s[0] == pytest.approx(ops_s + others + exposed + fixed, rel=1e-9)
    assert sc.coll_scope[sc.collectives.name.index("attn.cp_ring_kv_full")] == "scale_out"
    assert sc.attribution_s["scale_out_link"][0] == pytest.approx(exposed, rel=1e-9)


def test_cp_kv_memory_split(llama):
    m, pr, prec = llama
    b = Batch.make(prefill_tokens=8192, prefill_ctx=100000)
    kv1 = step_cost(m, pr, Layout(tp=8), prec, b).memory.kv_bytes[0]
    kv4 = step_cost(m, pr, Layout(tp=8, cp=4), prec, b).memory.kv_bytes[0]
    assert kv4 == pytest.approx(kv1 / 4, rel=1e-12)


def test_cp_mla_ring_and_pairs():
    """DeepSeek-R1 (MLA): the ring carries the 576-value latent; attention pairs split by cp."""
    m = load_model("deepseek-r1")
    pr, prec = load_pricer("gb200-nvl72"), get_precision(m.default_precision)
    P, C = 8192.0, 32768.0
    s1 = step_cost(m, pr, Layout(tp=4, ep=4), prec, Batch.make(prefill_tokens=P, prefill_ctx=C))
    s4 = step_cost(m, pr, Layout(tp=4, ep=4, cp=4), prec, Batch.make(prefill_tokens=P, prefill_ctx=C))
    assert _op(s4, "attn.mla_prefill") == pytest.approx(_op(s1, "attn.mla_prefill") / 4, rel=1e-12)
    row = _coll(s4, "attn.cp_ring_kv")
    kvb = prec.kv_cache.bytes_per_elem
    assert row["bytes_per_call"] == pytest.approx((C + P) / 4 * (512 + 64) * kvb, rel=1e-12)
    assert row["calls"] == 3 * 61


def test_cp_prefill_worker_counts_its_chips(llama):
    """A cp = 4 prefill worker counts 4x the chips of its TP group in throughput per chip."""
    m, pr, prec = llama
    wl = Workload("64k", 65536, 1024)
    pre = prefill_perf(m, pr, Layout(tp=8, cp=4), prec, wl, 8192)
    dec = decode_curve(m, pr, Layout(tp=8), prec, wl, [4.0, 8.0])
    pts = disaggregated_points(m, pr, prec, wl, pre, dec, [2], [1])
    assert np.all(pts.chips == 2 * 32 + 8)
    lam = pts.request_rate_per_s
    assert pts.throughput_per_chip == pytest.approx(lam * (wl.mean_isl + wl.mean_osl) / 72, rel=1e-12)


def test_cp_speeds_up_one_long_prompt(llama):
    m, pr, prec = llama
    wl = Workload("128k", 131072, 1024, range_ratio=1.0)
    t1 = prefill_perf(m, pr, Layout(tp=8), prec, wl, 8192).service_s
    t4 = prefill_perf(m, pr, Layout(tp=8, cp=4), prec, wl, 8192).service_s
    assert 2.5 < t1 / t4 <= 4.0  # attention splits 4 ways; weight reads and launches do not


def test_cp_on_decode_is_one_clear_error(llama, capsys):
    m, pr, prec = llama
    with pytest.raises(SpecError, match="prefill workers only"):
        Deployment(prec, Pool(Layout(tp=8, cp=2)))
    with pytest.raises(SpecError, match="prefill steps only"):
        step_cost(m, pr, Layout(tp=8, cp=2), prec, Batch.make(decode_seqs=4, decode_ctx=1000))
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "--prefill", "tp=8,cp=2",
                         "--decode", "tp=8,cp=2", "-c", "4")
    check_error(code, out, err, "cp", "prefill")


def test_cli_pool_and_step_take_cp(capsys):
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "--isl", "65536", "--osl", "512",
                         "--prefill", "tp=8,cp=4,workers=2", "--decode", "tp=8,workers=1", "-c", "4", "--json")
    assert code == 0, err
    import json

    d = json.loads(out)
    assert d["deployment"]["prefill"]["cp"] == 4 and d["deployment"]["prefill"]["chips"] == 64
    assert "CP4" in d["deployment"]["label"]
    code, out, err = run(capsys, "step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "--dp", "1", "--ep", "1",
                         "--cp", "4", "-b", "0", "--prefill-tokens", "8192", "--prefix", "65536", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["layout"]["cp"] == 4
    assert any(c["collective"] == "attn.cp_ring_kv_full" for c in d["collectives"])


def test_sweep_tries_cp_only_for_long_prompts(llama):
    from jalapeno.analysis.sweep_layouts import CP_PREFILL_MIN_ISL, disaggregated_layouts

    m, pr, prec = llama
    short, _ = disaggregated_layouts(m, pr.system, prec, pr.efficiency, isl=8192)
    long, _ = disaggregated_layouts(m, pr.system, prec, pr.efficiency, isl=CP_PREFILL_MIN_ISL)
    assert all(lay.cp == 1 for lay in short)
    assert {lay.cp for lay in long} == {1, 2, 4}


def test_aggregated_ttft_pipelined_over_pp(llama):
    """Aggregated PP4, one 64K prompt of 8 chunks beside the decode batch: TTFT's prefill part
    = Σ_{j<7} interval_j + step_7 (chunks of growing prefix), by hand from the chunk steps."""
    from jalapeno.serve.analytic import aggregated_by_batch, frontend_s

    m, pr, prec = llama
    wl = Workload("64k", 65536, 1024, range_ratio=1.0)
    lay = Layout(tp=8, pp=4)
    dep = Deployment(prec, Pool(lay))
    # half a sequence on average: fewer than two users, so no other prompt queues (arrival
    # theorem, serve/queueing.py) and TTFT is the prompt's own pipelined chunks
    pts = aggregated_by_batch(m, pr, dep, wl, np.array([0.5]))
    assert pts.concurrency[0] < 1
    b_mb, ctx = 0.5 / 4, 65536 + 1024 / 2
    scs = [step_cost(m, pr, lay, prec, Batch.make(decode_seqs=b_mb, decode_ctx=ctx, prefill_tokens=8192,
                                                  prefill_ctx=j * 8192)) for j in range(8)]
    hand = sum(s.interval_s[0] for s in scs[:7]) + scs[7].step_time_s[0]
    got = pts.ttft_s[0] - pts.step_time_s[0] / 2 - frontend_s(pr.efficiency, wl.mean_isl)
    assert got == pytest.approx(hand, rel=1e-9)
    assert math.ceil(wl.mean_isl / 8192) * scs[4].step_time_s[0] > 2.5 * got  # the old, unpipelined count
