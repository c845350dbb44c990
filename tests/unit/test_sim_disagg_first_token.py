"""The simulator's disaggregated hand-off by hand (serve/sim/simulation.py, scheduler.py; docs/simulator.md §5).

The engines emit a disaggregated request's first token from the decode worker, in the first
decode iteration that schedules it — after its decode slot is granted and its KV has arrived
(TensorRT-LLM ``py_executor._handle_first_token_response``; SGLang ``disaggregation/decode.py``
``process_prebuilt``; docs/gap_gb200_fp4_8k1k.md Update 7). So the wait for a decode slot is TTFT
and TPOT runs from that token. The scenario is small enough to follow on paper: step times and
the KV transfer are fixed by hand (a prefill step P, a decode step D whatever its batch, a
transfer T), the front end costs nothing, and the decode worker has 2 slots.
"""

from __future__ import annotations

import json

import pytest
from tiny_fixtures import model_config, system_toml

import jalapeno.serve.sim.simulation as sim_mod
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.sim.simulation import Simulation
from jalapeno.serve.sim.workloads import RequestSpec
from jalapeno.specs.formats import get_precision
from jalapeno.specs.model_file import load_model_file

P, D, T = 0.010, 0.004, 0.001  # s: one prefill step, one decode step, one KV transfer
ISL, OSL = 64, 5  # a prompt of 64 tokens: three fit one prefill step of the 256-token budget


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny_disagg")
    (d / "sys.toml").write_text(system_toml(3.0))
    (d / "config.json").write_text(json.dumps(model_config()))
    return load_model_file(d / "config.json", name="tiny-llama"), load_pricer(str(d / "sys.toml"))


def _run(tiny, monkeypatch, n_requests: int, decode_workers: int, decode_slots: int):
    """(simulation, result) of ``n_requests`` issued at t = 0 to one prefill worker and
    ``decode_workers`` decode workers of ``decode_slots`` slots, steps and transfer fixed by hand."""
    model, pricer = tiny
    monkeypatch.setattr(sim_mod, "kv_transfer_s", lambda *a, **k: T)
    dep = Deployment(get_precision("bf16"), Pool(Layout(), workers=decode_workers), prefill=Pool(Layout()),
                     token_budget=256)
    sim = Simulation(model, pricer, dep)
    sim._frontend = lambda r: 0.0
    for inst in sim.instances:
        if inst.role == "decode":
            inst.max_running = decode_slots
            inst._time = lambda b, ctx, pt, pc, ps: D
        else:
            inst._time = lambda b, ctx, pt, pc, ps: P
    sim.closed_loop([RequestSpec(ISL, OSL) for _ in range(n_requests)], concurrency=n_requests, warmup=0)
    return sim, sim.run()


def test_slot_wait_is_ttft_and_tpot_runs_from_the_first_token(tiny, monkeypatch):
    """2 decode slots, 3 requests at t = 0, by hand (ms):

    - request 0's arrival finds the prefill worker idle and starts a step alone (0-10); requests 1
      and 2 share the next one (10-20);
    - the decode worker's one link: request 0's KV ready at 11, request 1's at 21, request 2's at 22;
    - request 0 finds the decode worker idle: first token at 11, then OSL − 1 = 4 decode steps of
      4 ms ending 15, 19, 23, 27: done at 27;
    - requests 1 and 2 arrive during the 19-23 step; at 23 request 1 takes the second slot (first
      token at 23; done after steps ending 27, 31, 35, 39); request 2 finds both slots taken and
      waits for request 0's, freed at 27 (first token at 27, 5 ms after its KV arrived; done 43).

    Every TPOT is D = 4 ms. (Stamping the first token when the KV arrived, as before, read request
    2's TTFT as 22 ms and its TPOT as (43 − 22)/4 = 5.25 ms.)
    """
    sim, res = _run(tiny, monkeypatch, 3, decode_workers=1, decode_slots=2)
    want = [(11e-3, 27e-3), (23e-3, 39e-3), (27e-3, 43e-3)]
    for req, (first, done) in zip(sim.requests, want, strict=True):
        assert req.first_token_s - req.arrival_s == pytest.approx(first, abs=1e-12)
        assert req.done_s == pytest.approx(done, abs=1e-12)
    assert [r.kv_ready_s for r in sim.requests] == pytest.approx([11e-3, 21e-3, 22e-3], abs=1e-12)
    assert res.summary["ttft_s"]["mean"] == pytest.approx((11e-3 + 23e-3 + 27e-3) / 3, abs=1e-12)
    assert res.summary["tpot_s"]["mean"] == pytest.approx(D, abs=1e-12)
    assert res.summary["tpot_s"]["p99"] == pytest.approx(D, abs=1e-12)


def test_hand_offs_in_flight_count_toward_a_decode_workers_load(tiny, monkeypatch):
    """Two decode workers (A, B) of 2 slots, 4 requests at t = 0 (ms). Request 0 is prefilled alone
    (0-10) and goes to A (both idle, lowest id); requests 1-3 are prefilled together (10-20) and
    handed off at 20. Counting the transfers under way (the engine takes a request at its
    generation init, before its KV arrives), least-loaded routing sends them to B (A holds request
    0), A (1 each), B: A, B, A, B. (Counting only arrived requests sent all three to B, one past its
    2 slots.) By hand: A's link 10-11 (request 0), 20-21 (2); B's 20-21 (1), 21-22 (3). A: request 0
    first token 11, steps end 15, 19, 23, 27; request 2 joins at 23. B: request 1 starts B's steps at
    21 (25, 29, ...); request 3 joins at 25. No slot wait anywhere."""
    sim, _ = _run(tiny, monkeypatch, 4, decode_workers=2, decode_slots=2)
    a, b = (i.id for i in sim.instances if i.role == "decode")
    assert [r.instance for r in sim.requests] == [a, b, a, b]
    assert [r.kv_ready_s for r in sim.requests] == pytest.approx([11e-3, 21e-3, 21e-3, 22e-3], abs=1e-12)
    assert [r.first_token_s for r in sim.requests] == pytest.approx([11e-3, 21e-3, 23e-3, 25e-3], abs=1e-12)
    assert [r.done_s for r in sim.requests] == pytest.approx([27e-3, 37e-3, 39e-3, 41e-3], abs=1e-12)
