"""SGLang's disaggregated decode-loop handshake (serve/handshake.py, serve/sim/bootstrap.py) by hand.

SGLang's decode loop holds a disaggregated request's TTFT for 2 decode steps on average (½ at the
pre-allocation poll, ½ at the transfer poll, 1 prebuilt iteration; docs/gap_aic_ttft.md, sglboot28) where the
model held ½; the pre-allocation poll's ½ overlaps the prefill queue's wait W: E[max(U(0, τ) − W, 0)].
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from tiny_fixtures import model_config, system_toml

import jalapeno.serve.sim.simulation as sim_mod
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.serve.disagg import decode_curve, disaggregated_points, pool_prefill_perf
from jalapeno.serve.handshake import handshake_s, prealloc_wait_s
from jalapeno.serve.sim.bootstrap import Bootstrap
from jalapeno.serve.sim.entities import Request
from jalapeno.serve.sim.simulation import Simulation
from jalapeno.serve.sim.workloads import RequestSpec
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.model_file import load_model_file
from jalapeno.specs.stacks import _stack, get_stack
from jalapeno.specs.workload import Workload


def test_the_term_by_hand():
    # τ = 10 ms. No queue: ½ (pre-allocation) + 1 (prebuilt) = 15 ms beyond the model's ½ step (2 steps in all)
    assert handshake_s("decode_prealloc", 0.010, 0.0) == pytest.approx(0.015)
    # W = 4 ms of prefill queue: the poll's residual past it is (10 − 4)² / (2·10) = 1.8 ms
    assert handshake_s("decode_prealloc", 0.010, 0.004) == pytest.approx(0.010 + 0.0018)
    # a queue longer than the step hides the poll entirely; the prebuilt step stays
    assert handshake_s("decode_prealloc", 0.010, 0.025) == pytest.approx(0.010)
    # TensorRT-LLM and vLLM: nothing
    assert handshake_s("none", np.array([0.01, 0.02]), 0.0).tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="disagg_handshake"):
        handshake_s("bogus", 0.01, 0.0)


def test_the_overlap_is_the_mean_residual_of_a_uniform_poll():
    """E[max(U − W, 0)], U ~ U(0, τ), against a midpoint quadrature of U (an independent computation)."""
    u = (np.arange(100_000) + 0.5) / 100_000 * 0.008
    for w in (0.0, 0.002, 0.006, 0.009):
        assert float(prealloc_wait_s(0.008, w)) == pytest.approx(np.maximum(u - w, 0).mean(), abs=1e-9)


def test_the_engine_property_lives_on_the_sglang_stack_only():
    assert get_stack("sglang").disagg_handshake == "decode_prealloc"
    for name in ("trtllm", "dynamo-trtllm", "vllm", "default"):
        assert get_stack(name).disagg_handshake is None  # the efficiency set's "none"
    assert load_pricer("h200", stack="sglang").efficiency.disagg_handshake == "decode_prealloc"
    assert load_pricer("h200", stack="trtllm").efficiency.disagg_handshake == "none"


def test_a_bad_handshake_is_one_clear_error():
    with pytest.raises(SpecError) as e:
        _stack({"name": "x", "label": "x", "source": "x", "disagg_handshake": "prealloc"}, 0, {})
    assert "disagg_handshake" in str(e.value) and "decode_prealloc" in str(e.value)


def test_the_analytic_points_add_the_prebuilt_step_and_the_poll_past_the_queue():
    """The same points priced with and without the handshake differ by τ + (τ − W)²/(2τ), W read off the
    plain points' TTFT (TTFT − lone prefill − hand-off − τ/2 − front end)."""
    model, wl = load_model("gpt-oss-120b"), Workload("1k/256", 1024, 256)
    dep = Deployment(get_precision("mxfp4"), Pool(Layout(tp=2)), prefill=Pool(Layout(tp=1), 1))
    on = load_pricer("h200", stack="sglang")
    off = on.with_efficiency(dataclasses.replace(on.efficiency, disagg_handshake="none"))
    pre = pool_prefill_perf(model, on, dep, wl)
    dec = decode_curve(model, on, dep.decode.layout, dep.precision, wl, np.array([1.0, 16.0, 64.0]), None, dep)
    a, b = (disaggregated_points(model, p, dep.precision, wl, pre, dec, [1], [1]) for p in (on, off))
    tau = dec.tau_s
    from jalapeno.serve.analytic import frontend_s
    w = b.ttft_s - pre.service_s - b.kv_transfer_s - tau / 2 - frontend_s(on.efficiency, wl.mean_isl)
    assert (w >= 0).all() and (w > 0).any()
    want = tau + np.where(w < tau, (tau - w) ** 2 / (2 * tau), 0.0)
    assert a.ttft_s - b.ttft_s == pytest.approx(want, rel=1e-9)


# ---- the simulator, by hand (the tiny fixture of tests/unit/test_sim_disagg_first_token.py) ----------
P, D, T = 0.010, 0.004, 0.001  # s: one prefill step, one decode step, one KV transfer
ISL, OSL = 64, 5


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny_handshake")
    (d / "sys.toml").write_text(system_toml(3.0))
    (d / "config.json").write_text(json.dumps(model_config()))
    return load_model_file(d / "config.json", name="tiny-llama"), load_pricer(str(d / "sys.toml"))


def _run(tiny, monkeypatch, kind: str, n: int = 1):
    model, pricer = tiny
    pricer = pricer.with_efficiency(dataclasses.replace(pricer.efficiency, disagg_handshake=kind))
    monkeypatch.setattr(sim_mod, "kv_transfer_s", lambda *a, **k: T)
    sim = Simulation(model, pricer, Deployment(get_precision("bf16"), Pool(Layout()), prefill=Pool(Layout()),
                                               token_budget=256))
    sim._frontend = lambda r: 0.0
    for inst in sim.instances:
        inst._time = (lambda *a: D) if inst.role == "decode" else (lambda *a: P)
    sim.closed_loop([RequestSpec(ISL, OSL) for _ in range(n)], concurrency=n, warmup=0)
    return sim, sim.run()


def test_the_simulators_prebuilt_step_by_hand(tiny, monkeypatch):
    """One request, ms: prefill 0-10, KV at 11; the idle decode worker admits it at 11. Without the
    handshake its first token leaves at 11 and 4 decode steps end at 27. With it, the request rides the
    11-15 step as a prebuilt batch: first token at 15, then 4 steps: done at 31. TPOT stays D."""
    plain, _ = _run(tiny, monkeypatch, "none")
    sgl, res = _run(tiny, monkeypatch, "decode_prealloc")
    assert (plain.requests[0].first_token_s, plain.requests[0].done_s) == pytest.approx((11e-3, 27e-3), abs=1e-12)
    assert (sgl.requests[0].first_token_s, sgl.requests[0].done_s) == pytest.approx((15e-3, 31e-3), abs=1e-12)
    assert res.summary["tpot_s"]["mean"] == pytest.approx(D, abs=1e-12)


class _Decoder:
    def __init__(self, idx: int, busy: bool, end: float) -> None:
        self.id, self.busy, self.step_end_s, self.incoming, self.load = idx, busy, end, 0, 0


def test_the_prompt_waits_for_the_decode_workers_next_iteration():
    # a decode worker mid-step (ends at 13 ms) pre-allocates at 13: a request arriving at 10 enters the
    # prefill queue 3 ms later, once; the hand-off goes to that worker, counted once
    dec = _Decoder(5, True, 0.013)
    boot, req = Bootstrap("decode_prealloc", [dec]), Request(0, 0.010, ISL, OSL)
    assert boot.gate_s(req, 0.010) == pytest.approx(0.003)
    assert boot.gate_s(req, 0.013) == 0.0 and dec.incoming == 1
    assert boot.decoder(req) is dec and dec.incoming == 1
    idle = Bootstrap("decode_prealloc", [_Decoder(6, False, 0.0)])  # an idle loop spins: at once
    assert idle.gate_s(Request(1, 0.0, ISL, OSL), 0.0) == 0.0
    plain = Bootstrap("none", [dec])  # TensorRT-LLM / vLLM: no gate, the decode worker chosen at the hand-off
    assert plain.gate_s(Request(2, 0.0, ISL, OSL), 0.0) == 0.0 and dec.incoming == 1
    assert plain.decoder(Request(2, 0.0, ISL, OSL)) is dec and dec.incoming == 2
