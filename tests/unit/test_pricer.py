"""The pricer seam (cost/pricer.py): a second pricer flows through the step cost, serving, sweeps,
frontiers and the simulator without any of them knowing which pricer it is.

The second pricer is a toy that doubles every op and collective time of the roofline one. With
no compute/communication overlap, pp = 1 and no MTP, the step assembly (cost/step.py) is linear in
those times, so by hand:

    step_toy − step_overhead = 2 · (step_roofline − step_overhead)

and every serving quantity built on the step time follows from it.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from jalapeno.analysis.comparison import compare_systems, system_frontier
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.pricer import CollectiveTimes, Pricer, RooflinePricer, band_pricers, load_pricer
from jalapeno.cost.roofline import OpTimes
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import MTP, Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.serve.analytic import aggregated_by_batch
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.serve.sim.simulation import simple_deployment
from jalapeno.serve.sim.run import simulate
from jalapeno.specs.catalog import load_efficiency, load_model, load_system
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import Workload, get_workload


@dataclasses.dataclass(frozen=True)
class DoublingPricer:
    """A toy pricer: every op and collective costs twice what ``inner`` says. Not a subclass."""

    inner: RooflinePricer

    @property
    def system(self):
        return self.inner.system

    @property
    def efficiency(self):
        return self.inner.efficiency

    def op_times(self, ops) -> OpTimes:
        t = self.inner.op_times(ops)
        return OpTimes(2 * t.compute_s, 2 * t.memory_s, 2 * t.overhead_s, 2 * t.time_s)

    def collective_times(self, colls) -> CollectiveTimes:
        c = self.inner.collective_times(colls)
        return dataclasses.replace(c, time_s=2 * c.time_s)

    def collective(self, kind, group, message_bytes, placement="packed"):
        r = self.inner.collective(kind, group, message_bytes, placement)
        return dataclasses.replace(r, time_s=2 * r.time_s)

    def with_efficiency(self, efficiency):
        return DoublingPricer(self.inner.with_efficiency(efficiency))


@pytest.fixture(scope="module")
def pricers():
    roof = load_pricer("gb200-nvl72")
    return roof, DoublingPricer(roof)


def test_the_toy_satisfies_the_protocol(pricers):
    assert isinstance(pricers[1], Pricer) and isinstance(pricers[0], Pricer)


def test_step_cost_doubles_all_but_the_step_overhead(pricers):
    roof, toy = pricers
    m, prec = load_model("deepseek-r1"), get_precision("fp8")
    batch = Batch.make(decode_seqs=[1, 64, 512], decode_ctx=8192, prefill_tokens=[0, 0, 2048])
    a = step_cost(m, roof, Layout(tp=1, dp=8, ep=8), prec, batch)
    b = step_cost(m, toy, Layout(tp=1, dp=8, ep=8), prec, batch)
    so = roof.efficiency.step_overhead_s
    np.testing.assert_allclose(b.step_time_s - so, 2 * (a.step_time_s - so), rtol=1e-12)
    # attribution doubles too (overhead keeps one step overhead)
    np.testing.assert_allclose(b.attribution_s["compute"], 2 * a.attribution_s["compute"], rtol=1e-12)
    np.testing.assert_allclose(b.attribution_s["overhead"] - so, 2 * (a.attribution_s["overhead"] - so), rtol=1e-12)
    # what the step does is the pricer's business only through times: same ops, same memory
    np.testing.assert_array_equal(a.ops.flop, b.ops.flop)
    assert a.memory.weights_bytes == b.memory.weights_bytes


def test_mtp_draft_passes_priced_by_the_same_pricer(pricers):
    """The drafting passes (cost/mtp_draft.py) are op and collective times of the step's pricer
    with no step overhead, so the toy doubles them exactly."""
    roof, toy = pricers
    m, prec = load_model("deepseek-r1"), get_precision("fp8")
    batch = Batch.make(decode_seqs=[8.0, 0.0], decode_ctx=4096, prefill_tokens=[0.0, 1024.0])
    mtp = MTP(2, 0.7)
    a, b = (step_cost(m, p, Layout(tp=8, ep=8), prec, batch, mtp) for p in (roof, toy))
    assert b.draft_s[0] == pytest.approx(2 * a.draft_s[0], rel=1e-12) and a.draft_s[0] > 0
    assert a.draft_s[1] == b.draft_s[1] == 0.0  # no decoding sequence: nothing to draft
    # verify rows: 1 + k per decoding sequence
    plain = step_cost(m, roof, Layout(tp=8, ep=8), prec, Batch.make(decode_seqs=24, decode_ctx=4096))
    ver = step_cost(m, roof, Layout(tp=8, ep=8), prec, Batch.make(decode_seqs=8, decode_ctx=4096), mtp)
    j = plain.ops.name.index("lm_head")
    assert ver.ops.flop[j, 0] == pytest.approx(plain.ops.flop[j, 0], rel=1e-12)  # 8·3 rows = 24 rows


def test_aggregated_serving_follows_the_toy(pricers):
    roof, toy = pricers
    m = load_model("deepseek-r1")
    dep = Deployment(get_precision("fp8"), Pool(Layout(tp=1, dp=8, ep=8)))
    wl = Workload("hand", 1024, 257, range_ratio=1.0)
    a = aggregated_by_batch(m, roof, dep, wl, np.array([1.0, 32.0]))
    b = aggregated_by_batch(m, toy, dep, wl, np.array([1.0, 32.0]))
    so = roof.efficiency.step_overhead_s
    assert np.all(b.step_time_s > a.step_time_s)
    # decode-only steps dominate at these loads: τ_toy − so is between 1.9x and 2x τ − so
    ratio = (b.step_time_s - so) / (a.step_time_s - so)
    assert np.all((ratio > 1.9) & (ratio <= 2.0 + 1e-9)), ratio
    np.testing.assert_allclose(b.throughput_per_chip * b.step_time_s, a.throughput_per_chip * a.step_time_s,
                               rtol=1e-9)  # same batch: throughput ∝ 1/τ


def test_disaggregated_and_frontier_run_on_the_toy(pricers):
    roof, toy = pricers
    m, wl, prec = load_model("deepseek-r1"), get_workload("8k1k"), get_precision("fp8")
    dep = Deployment(prec, Pool(Layout(dp=8, ep=8)), prefill=Pool(Layout(tp=4, ep=4), 2))
    a = serve_at_concurrency(m, roof, dep, wl, [64])
    b = serve_at_concurrency(m, toy, dep, wl, [64])
    assert b.tpot_s[0] > 1.8 * a.tpot_s[0] and b.throughput_per_chip[0] < a.throughput_per_chip[0]
    opts = SweepOptions(serving="agg")
    fa = system_frontier(m, roof, wl, prec, opts)
    fb = system_frontier(m, toy, wl, prec, opts)
    assert fb.y.max() < fa.y.max() and fb.x.max() < fa.x.max()


def test_compare_takes_pricers():
    m, wl, prec = load_model("gpt-oss-120b"), get_workload("1k1k"), get_precision("mxfp4")
    res = compare_systems(m, [load_pricer("h100"), load_pricer("h200")], wl, prec, baseline="h100",
                          options=SweepOptions(serving="agg"))
    assert res.comparisons["h100"].peak_ratio["throughput_per_chip"] == pytest.approx(1.0)
    assert res.headlines["h200"].efficiency_source == load_efficiency("h200").source


def test_simulator_runs_on_the_toy(pricers):
    roof, toy = pricers
    m, prec = load_model("deepseek-r1"), get_precision("fp8")
    dep = simple_deployment(prec, tp=1, dp=8, ep=8)
    kw = dict(workload=Workload("hand", 1024, 128, range_ratio=1.0), concurrency=8, num_requests=24, seed=3)
    a = simulate(m, roof, dep, **kw)
    b = simulate(m, toy, dep, **kw)
    assert b.summary["tpot_s"]["mean"] > 1.8 * a.summary["tpot_s"]["mean"]


def test_bands_are_pricers_of_the_same_system():
    p = load_pricer("jalapeno")
    band = band_pricers(p)
    assert {k: v.system for k, v in band.items()} == {"low": p.system, "calibrated": p.system, "high": p.system}
    assert band["low"].efficiency != band["high"].efficiency  # derived set: a real band
    assert band["calibrated"].efficiency == p.efficiency


def test_system_is_pure_hardware_and_efficiency_is_separate(tmp_path):
    s = load_system("h200")
    assert not hasattr(s, "efficiency")
    assert load_efficiency("h200", "spec").source.startswith("jalapeno defaults")
    with pytest.raises(SpecError, match="pricer.efficiency"):
        RooflinePricer(s, "calibrated")


@pytest.mark.parametrize("call", ["step", "serve", "sweep", "simulate", "compare"])
def test_a_system_where_a_pricer_belongs_names_the_fix(call):
    """The pre-seam call style (a System, no efficiency) gets one clear error, not an AttributeError."""
    s, m, prec = load_system("h200"), load_model("gpt-oss-120b"), get_precision("mxfp4")
    dep = Deployment(prec, Pool(Layout(tp=1)))
    wl = get_workload("1k1k")
    calls = {
        "step": lambda: step_cost(m, s, Layout(tp=1), prec, Batch.make(decode_seqs=1, decode_ctx=10)),
        "serve": lambda: serve_at_concurrency(m, s, dep, wl, [4]),
        "sweep": lambda: __import__("jalapeno.analysis.sweep", fromlist=["sweep"]).sweep(m, s, wl, prec),
        "simulate": lambda: simulate(m, s, dep, workload=wl, concurrency=2),
        "compare": lambda: compare_systems(m, [s], wl, prec),
    }
    with pytest.raises(SpecError) as e:
        calls[call]()
    assert "has no efficiency set" in str(e.value) and "load_pricer('h200')" in e.value.fix


def test_step_and_collective_take_an_efficiency_set(capsys):
    """`--efficiency` picks the pricer's set on every command that prices; the set is named."""
    import json

    from cli_runner import check_error, run

    code, out, _ = run(capsys, "step", "-s", "h200", "-m", "gpt-oss-120b", "--dp", "1", "--ep", "1", "-b", "4",
                       "--efficiency", "spec", "--json")
    spec = json.loads(out)
    code2, out2, _ = run(capsys, "step", "-s", "h200", "-m", "gpt-oss-120b", "--dp", "1", "--ep", "1", "-b", "4",
                         "--json")
    cal = json.loads(out2)
    assert code == code2 == 0
    assert spec["efficiency_source"] == load_efficiency("h200", "spec").source
    assert cal["efficiency_source"] == load_efficiency("h200").source
    assert spec["step_time_s"] != cal["step_time_s"]
    code, out, _ = run(capsys, "collective", "-s", "h200", "--efficiency", "spec", "--json")
    assert code == 0 and json.loads(out)["efficiency_source"].startswith("jalapeno defaults")
    check_error(*run(capsys, "collective", "-s", "h200", "--efficiency", "medium"), "efficiency", "medium", "spec")
