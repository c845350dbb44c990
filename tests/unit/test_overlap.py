"""Two-batch overlap (cost/overlap.py, step_cost(overlap="tbo"), serving and sweep wiring).

Expected values are derived by hand (the max-plus schedule worked on paper), by an independent
layer-by-layer simulation of the schedule, or from the serial step's own bounds — never copied
from the code's output.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest

from jalapeno.analysis.sweep import SweepOptions, sweep
from jalapeno.cost.optable import CollectiveTable, OpTable
from jalapeno.cost.overlap import PREFILL_COMM_SM_FRACTION, tbo_stage
from jalapeno.cost.pricer import CollectiveTimes, load_pricer, price_collectives
from jalapeno.cost.roofline import OpTimes
from jalapeno.cost.step import Batch, step_cost
from jalapeno.cost.step_bounds import BOUNDS
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.serve.disagg import decode_curve
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

R1 = load_model("deepseek-r1")
FP8 = get_precision("fp8")
DEP = Layout(tp=1, dp=8, ep=8)


def _tables(n=1):
    """A micro-batch of MoE layers only: op 'attn.x' (every layer), 'moe.experts' (kind moe),
    dispatch and combine; the caller supplies their per-step times."""
    z = np.zeros((2, n))
    ops = OpTable(("attn.x", "moe.experts"), ("gemm", "moe"), ("bf16", "bf16"), np.array([True, True]),
                  z, z, z, z, np.ones((2, n)), np.ones(2))
    colls = CollectiveTable(("moe.dispatch", "moe.combine"), ("all_to_all", "all_to_all"), (8, 8),
                            np.array([True, True]), z, np.ones(2))
    return ops, colls


def _times(per_step_ops):
    t = np.asarray(per_step_ops, dtype=float)
    return OpTimes(t, np.zeros_like(t), np.zeros_like(t), t)


def _simulate(a, m, d, k, layers: int) -> float:
    """The schedule of the module docstring, layer by layer, written out independently."""
    comp_free = link_free = ready_a = ready_b = 0.0
    for _ in range(layers):
        aa = max(comp_free, ready_a) + a
        ab = max(aa, ready_b) + a
        da = max(link_free, aa) + d
        db = max(da, ab) + d
        ma = max(ab, da) + m
        mb = max(ma, db) + m
        ka = max(db, ma) + k
        kb = max(ka, mb) + k
        ready_a, ready_b, comp_free, link_free = ka, kb, mb, kb
    return ready_b


def _stage(a, m, d, k, layers):
    ops, colls = _tables()
    return float(tbo_stage(ops, _times([[a * layers], [m * layers]]), colls,
                           np.array([[d * layers], [k * layers]]), layers, 0.0, layers, 0.0).stage_s[0])


def test_hand_worked_schedule():
    # A=1, M=3, D=5, K=0.05 worked on paper: layer 1 ends at 14.05 (K_b), then every layer adds
    # the period A + M + 2D = 14 (the dispatches, not the compute, set the pace)
    assert _stage(1, 3, 5, 0.05, 2) == pytest.approx(28.05)
    assert _stage(1, 3, 5, 0.05, 3) == pytest.approx(42.05)
    # no communication: both micro-batches' compute back to back, 2(A + M) per layer
    assert _stage(1, 3, 0, 0, 2) == pytest.approx(16.0)
    # communication-bound (A = M = 0.1, D = K = 2): layer 1 ends at A + 2D + 2K = 8.1 (the first
    # dispatch waits for A_a only), then the links run 2(D + K) = 8 per layer
    assert _stage(0.1, 0.1, 2, 2, 4) == pytest.approx(8.1 + 3 * 8)


def test_extrapolated_period_matches_layer_by_layer_schedule():
    rng = np.random.default_rng(7)
    for _ in range(300):
        a, m, d, k = rng.exponential(1.0, 4) * rng.choice([0.01, 0.1, 1, 10], 4)
        layers = int(rng.integers(1, 62))
        assert _stage(a, m, d, k, layers) == pytest.approx(_simulate(a, m, d, k, layers), rel=1e-9)


@dataclass(frozen=True)
class NoCommPricer:
    """The roofline pricer with every collective free: a chip with infinitely fast links."""

    inner: object

    @property
    def system(self):
        return self.inner.system

    @property
    def efficiency(self):
        return self.inner.efficiency

    def op_times(self, ops):
        return self.inner.op_times(ops)

    def collective(self, kind, group, message_bytes, placement="packed"):
        r = self.inner.collective(kind, group, message_bytes, placement)
        return replace(r, time_s=np.zeros_like(np.asarray(r.time_s, dtype=float)))

    def collective_times(self, colls) -> CollectiveTimes:
        return price_collectives(self, colls)

    def with_efficiency(self, efficiency: Efficiency):
        return NoCommPricer(self.inner.with_efficiency(efficiency))


def test_zero_communication_costs_exactly_the_split(gb200=load_pricer("gb200-nvl72")):
    """With free links, TBO hides nothing: the step pays both micro-batches' ops back to back, so
    it is never faster than the serial step and slower by exactly the half-batch loss."""
    pr = NoCommPricer(gb200)
    b = Batch.make(decode_seqs=[16, 256, 4096], decode_ctx=8704)
    serial = step_cost(R1, pr, DEP, FP8, b)
    tbo = step_cost(R1, pr, DEP, FP8, b, overlap="tbo")
    half = step_cost(R1, pr, DEP, FP8, b.halved())
    st = serial.ops.per_stage
    loss = 2 * half.times.time_s[st].sum(axis=0) - serial.times.time_s[st].sum(axis=0)
    np.testing.assert_allclose(tbo.step_time_s - serial.step_time_s, loss, rtol=1e-9)
    assert np.all(tbo.step_time_s >= serial.step_time_s)
    assert np.all(tbo.hidden_comm_s == 0)


def test_zero_communication_sweep_never_chooses_overlap():
    """The issue's property at the level where the option is chosen: with free links, exploring
    overlap never beats (and never changes) the frontier without it."""
    pr = NoCommPricer(load_pricer("gb200-nvl72"))
    wl = get_workload("1k1k")
    auto = sweep(R1, pr, wl, FP8, SweepOptions(serving="agg", batches=(16.0, 512.0, 4096.0)))
    none = sweep(R1, pr, wl, FP8, SweepOptions(serving="agg", batches=(16.0, 512.0, 4096.0), overlap="none"))
    assert all(d.overlap == "none" for d in auto.deployments)
    np.testing.assert_allclose(auto.points.throughput_per_chip, none.points.throughput_per_chip)


@pytest.mark.parametrize("system", ["gb200-nvl72", "h200", "jalapeno"])
def test_overlapped_stage_bounded_by_compute_and_communication(system):
    pr = load_pricer(system)
    lay = Layout(tp=1, dp=16, ep=16) if system != "h200" else Layout(tp=1, dp=32, ep=32)
    b = Batch.make(decode_seqs=[64, 512, 4096, 16384], decode_ctx=2000)
    serial = step_cost(R1, pr, lay, FP8, b)
    tbo = step_cost(R1, pr, lay, FP8, b, overlap="tbo")
    half = step_cost(R1, pr, lay, FP8, b.halved())
    st, c = serial.ops.per_stage, serial.collectives.per_stage
    fixed = serial.step_time_s - serial.times.time_s[st].sum(axis=0) - serial.coll_time_s[c].sum(axis=0)
    layer = tbo.step_time_s - fixed  # pp = 1: edge ops and step overhead are the same in both
    compute_full = serial.times.time_s[st].sum(axis=0)
    comm_full = serial.coll_time_s[c].sum(axis=0)
    assert np.all(layer >= np.maximum(compute_full, comm_full) * (1 - 1e-12))
    # and no slower than the two micro-batches run one after the other with nothing overlapped
    serial_halves = 2 * (half.times.time_s[st].sum(axis=0) + half.coll_time_s[c].sum(axis=0))
    assert np.all(layer <= serial_halves * (1 + 1e-12))
    # the shares still sum to the step time, and hidden communication is not charged to a link
    total = sum(tbo.attribution_s[k] for k in BOUNDS)
    np.testing.assert_allclose(total, tbo.step_time_s, rtol=1e-9)
    assert np.all(tbo.hidden_comm_s > 0)


def test_prefill_pays_the_sm_share_of_the_communication_kernels():
    pr = load_pricer("gb200-nvl72")
    b = Batch.make(prefill_tokens=8 * 8192, prefill_seqs=8)
    tbo = step_cost(R1, pr, DEP, FP8, b, overlap="tbo")
    half = step_cost(R1, pr, DEP, FP8, b.halved())
    st, c = half.ops.per_stage, half.collectives.per_stage
    # upper bound with every compute-bound op slowed by 1/(1 - f) and nothing hidden
    slow = np.maximum(half.times.compute_s / (1 - PREFILL_COMM_SM_FRACTION), half.times.memory_s) + half.times.overhead_s
    serial = step_cost(R1, pr, DEP, FP8, b)
    edge = serial.step_time_s - serial.times.time_s[st].sum(axis=0) - serial.coll_time_s[c].sum(axis=0)
    layer = tbo.step_time_s - edge
    assert layer[0] <= 2 * (slow[st].sum() + half.coll_time_s[c].sum()) * (1 + 1e-12)
    # compute share grew beyond the unstretched micro-batches' (the SMs the kernels hold)
    plain = 2 * np.where(half.times.compute_s >= half.times.memory_s, half.times.compute_s, 0)[st].sum()
    assert tbo.attribution_s["compute"][0] > plain


def test_unsplittable_decode_runs_serially():
    pr = load_pricer("gb200-nvl72")
    b = Batch.make(decode_seqs=[8, 15.9, 16], decode_ctx=4096)  # 1, <2 and 2 sequences per DP rank
    serial = step_cost(R1, pr, DEP, FP8, b)
    tbo = step_cost(R1, pr, DEP, FP8, b, overlap="tbo")
    np.testing.assert_array_equal(tbo.step_time_s[:2], serial.step_time_s[:2])
    assert tbo.hidden_comm_s[0] == 0 and tbo.hidden_comm_s[2] > 0


def test_bad_overlap_inputs_name_the_field():
    pr = load_pricer("gb200-nvl72")
    with pytest.raises(SpecError, match="overlap: two-batch overlap hides the MoE dispatch/combine"):
        step_cost(R1, pr, Layout(tp=8, ep=8), FP8, Batch.make(decode_seqs=8, decode_ctx=1), overlap="tbo")
    with pytest.raises(SpecError, match="unknown overlap mode 'dbo'"):
        Deployment(FP8, Pool(DEP), overlap="dbo")
    with pytest.raises(SpecError, match="unknown overlap choice"):
        SweepOptions(overlap="on")
    with pytest.raises(SpecError, match="comm_overlap.*--overlap tbo"):
        Efficiency().with_overrides({"comm_overlap": 0.5})
    dense = load_model("llama-3.3-70b")
    with pytest.raises(SpecError, match="overlap:"):
        serve_at_concurrency(dense, pr, Deployment(FP8, Pool(Layout(tp=8)), overlap="tbo"),
                             get_workload("1k1k"), [8])


def test_deployment_label_and_pools():
    d = Deployment(FP8, Pool(DEP, 2), prefill=Pool(Layout(tp=4, ep=4), 3), overlap="tbo")
    assert d.label.endswith("TBO [fp8]") and d.as_dict()["overlap"] == "tbo"
    assert Deployment(FP8, Pool(DEP)).label == "agg attn TP1 DP8 · MoE TP1 EP8 [fp8]"
    # the TEP prefill pool has no all-to-all and runs serially; the DEP decode pool overlaps
    pr, wl = load_pricer("gb200-nvl72"), get_workload("8k1k")
    on = serve_at_concurrency(R1, pr, d, wl, [512])
    off = serve_at_concurrency(R1, pr, replace(d, overlap="none"), wl, [512])
    dec = decode_curve(R1, pr, DEP, FP8, wl, on.decode_batch, overlap="tbo")
    np.testing.assert_allclose(on.step_time_s, dec.tau_s, rtol=1e-9)
    assert on.step_time_s[0] != off.step_time_s[0]


def test_sweep_auto_keeps_the_faster_per_point():
    pr, wl = load_pricer("h200"), get_workload("1k1k")
    kw = dict(serving="agg", batches=(64.0, 1024.0, 8192.0))
    runs = {ov: sweep(R1, pr, wl, FP8, SweepOptions(overlap=ov, **kw)) for ov in ("auto", "none", "tbo")}

    def by_point(res):
        return {(res.deployments[i].decode.layout, round(float(b), 6)): float(t)
                for i, b, t in zip(res.dep_index, res.points.decode_batch, res.points.throughput_per_chip)}
    auto, none, tbo = (by_point(runs[k]) for k in ("auto", "none", "tbo"))
    assert auto.keys() == none.keys()
    for key, t in auto.items():
        assert t == pytest.approx(max(none[key], tbo.get(key, 0.0)))
    assert any(d.overlap == "tbo" for d in runs["auto"].deployments)  # H200 EP32 crosses IB: it wins somewhere


def test_cli_overlap_option(capsys):
    from cli_runner import run

    code, out, _ = run(capsys, "predict", "-s", "gb200-nvl72", "--dp", "8", "--ep", "8", "-c", "256",
                       "--overlap", "tbo", "--json")
    assert code == 0 and '"overlap": "tbo"' in out and "TBO [fp8]" in out
    code, _, err = run(capsys, "step", "-s", "h200", "--tp", "8", "--dp", "1", "--ep", "8", "--overlap", "tbo")
    assert code != 0 and "overlap" in err


def test_prefill_dispatch_sends_one_copy_per_destination_rank():
    """DeepEP normal (prefill) kernels send a token once per rank that holds any of its experts;
    low-latency (decode) kernels once per expert. For top-8 with uniformly placed experts the
    expected number of distinct ranks is ep·(1 − (1 − 1/ep)^8): EP4 3.600, EP16 6.447, EP256 7.89."""
    from jalapeno.cost.expert_ops import dispatch_copies

    for ep, want in ((4, 4 * (1 - 0.75 ** 8)), (16, 16 * (1 - (15 / 16) ** 8)), (256, 256 * (1 - (255 / 256) ** 8))):
        assert float(dispatch_copies(0.0, 1.0, 8, ep)) == pytest.approx(want, rel=1e-12)
    assert float(dispatch_copies(3.0, 0.0, 8, 16)) == 24.0  # decode rows: top_k copies each
    assert float(dispatch_copies(3.0, 10.0, 8, 4)) == pytest.approx(24.0 + 10 * 4 * (1 - 0.75 ** 8))
