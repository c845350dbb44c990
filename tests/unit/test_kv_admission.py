"""serve/kv_admission.py: the tokens an engine's KV admission counts per running request (round 49, kvcap49)."""

from __future__ import annotations

import dataclasses

import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve import kv_admission
from jalapeno.serve.disagg import decode_curve
from jalapeno.serve.kv_admission import admission_rule, cohort_admission_osl, decode_admission_ctx
from jalapeno.specs.catalog import load_model
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import Workload

SGLANG = dataclasses.replace(Efficiency(), disagg_handshake="decode_prealloc")


def test_rule_follows_the_stacks_handshake():
    assert admission_rule(Efficiency()) == "whole"
    assert admission_rule(SGLANG) == "sglang_prealloc"


def test_decode_admission_tokens_by_hand():
    # 8k/1k at InferenceX's range ratio 0.8: E[ISL] = 0.9 x 8,192 = 7,372.8, E[OSL] = 0.9 x 1,024 = 921.6
    wl = Workload("8k/1k", 8192, 1024)
    assert decode_admission_ctx(wl, Efficiency()) == pytest.approx(7372.8 + 921.6)  # GUARANTEED_NO_EVICT: whole
    assert decode_admission_ctx(wl, SGLANG) == pytest.approx(7372.8 + 460.8 + 512)  # decode_ctx + R
    assert decode_admission_ctx(wl, SGLANG, on=False) == pytest.approx(7372.8 + 460.8)  # the old mean context
    fixed = Workload("1k/256", 1000, 200, 1.0)
    assert decode_admission_ctx(fixed, Efficiency()) == pytest.approx(1200)
    assert decode_admission_ctx(fixed, SGLANG) == pytest.approx(1000 + 100 + 512)


def test_switch_off_reads_the_mean_context(monkeypatch):
    wl = Workload("1k/1k", 1024, 1024)
    monkeypatch.setattr(kv_admission, "DECODE_ADMISSION_ON", False)
    assert decode_admission_ctx(wl, Efficiency()) == decode_admission_ctx(wl, SGLANG) == pytest.approx(1382.4)


def test_cohort_counts_its_shortest_output():
    # outputs uniform in [819.2, 1,024]; a pool of 516,256 tokens at E[ISL] 7,372.8: N = 63.0 (by the mean output
    # 516,256 / 8,294.4 = 62.24), E[min of N] = 819.2 + 204.8 / (N + 1) = 822.40
    wl = Workload("8k/1k", 8192, 1024)

    def count(osl):
        return 516_256.0 / (7372.8 + osl)

    osl = cohort_admission_osl(count, wl, on=True)
    assert osl == pytest.approx(822.40, abs=0.01)
    assert count(osl) == pytest.approx(63.0, abs=0.05)
    assert cohort_admission_osl(count, wl, on=False) == pytest.approx(921.6)
    assert cohort_admission_osl(count, wl) == pytest.approx(921.6)  # shipped off
    # equal outputs: the shortest is the mean, the count unchanged
    assert cohort_admission_osl(count, Workload("8k/1k", 8192, 1024, 1.0), on=True) == pytest.approx(1024)


def test_decode_cap_counts_the_whole_request(monkeypatch):
    # H200 TP8 DeepSeek-R1 FP8 1k/1k: the cap scales (to within the activations' share, which grows with the batch)
    # as the mean context over the whole request's tokens, 1,382.4 / 1,843.2 = 0.75
    model, pricer = load_model("deepseek-r1"), load_pricer("h200")
    lay, prec, wl = Layout(tp=8, ep=8), get_precision("fp8"), Workload("1k/1k", 1024, 1024)
    dep = Deployment(prec, Pool(lay), prefill=Pool(lay, 1))
    on = decode_curve(model, pricer, lay, prec, wl, [4096.0], limits=dep)
    monkeypatch.setattr(kv_admission, "DECODE_ADMISSION_ON", False)
    off = decode_curve(model, pricer, lay, prec, wl, [4096.0], limits=dep)
    assert on.cap_name == off.cap_name == "kv_capacity"
    assert on.cap / off.cap == pytest.approx(1382.4 / 1843.2, rel=0.01)
    assert on.batch[0] == pytest.approx(on.cap)


def test_simulated_decode_worker_holds_no_prefill_activations(monkeypatch):
    # a decode-only worker runs no prompt chunk, so its pool is not cut by a prefill budget's activations: with the
    # switch its capacity exceeds the prefill worker's of the same layout (which keeps them); off, the two are equal
    from jalapeno.serve.sim.simulation import Simulation

    model, pricer, lay = load_model("deepseek-r1"), load_pricer("h200"), Layout(tp=8, ep=8)
    dep = Deployment(get_precision("fp8"), Pool(lay), prefill=Pool(lay, 1))
    pre, dec = (i.capacity for i in Simulation(model, pricer, dep).instances)
    assert 1.0 < dec / pre < 1.10
    monkeypatch.setattr(kv_admission, "DECODE_ADMISSION_ON", False)
    pre, dec = (i.capacity for i in Simulation(model, pricer, dep).instances)
    assert dec == pre
