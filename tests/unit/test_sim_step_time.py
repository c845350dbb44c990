"""The simulator's step timer (serve/sim/step_time.py) and the scheduler's lookahead that feeds it.

The lookahead only decides *when* a step's time is priced (with a miss, in one vectorised
step-cost call), never *what* it is: a simulation with the lookahead switched off must give the
same per-request timestamps, bit for bit, and the same count of distinct step inputs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.serve.sim import step_time
from jalapeno.serve.sim.entities import PrefixCache
from jalapeno.serve.sim.scheduler import Instance
from jalapeno.serve.sim.simulation import simple_deployment
from jalapeno.serve.sim.run import simulate
from jalapeno.serve.sim.step_time import StepTimer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import Workload

LOG_R = math.log(1.03)


def _bucket(x: float) -> float:
    """The documented bucketing, written out independently: integers up to 16, else the nearest
    power of 1.03."""
    if x <= 0:
        return 0.0
    if x <= 16:
        return float(round(x))
    return math.exp(round(math.log(x) / LOG_R) * LOG_R)


@pytest.fixture(scope="module")
def r1():
    return load_model("deepseek-r1"), load_pricer("gb200-nvl72"), get_precision("fp8")


def test_key_round_trips_to_the_bucketed_inputs(r1):
    m, pr, p = r1
    t = StepTimer(m, pr, Layout(dp=8, ep=8), p)
    for raw in [
        (0, 0, 0, 0, 0),
        (3.4, 12.6, 0, 0, 0),
        (255, 8650.2, 7795, 252, 1),
        (1, 17.2, 16.4, 16.6, 3),
        (4096, 131072, 16384, 65536, 2),
    ]:
        got = t.inputs(t.key(*raw))
        want = tuple(_bucket(x) for x in raw[:4]) + (float(max(round(raw[4]), 1 if raw[2] > 0 else 0)),)
        assert got == want


@pytest.mark.parametrize("interp", [False, True])
def test_guesses_warm_the_cache_without_changing_a_time(r1, monkeypatch, interp):
    """A timer fed guesses returns exactly what one without guesses returns, in one call, whatever
    step_time.BATCH_INTERP_ON's shipped value. Off (nearest buckets): every distinct key priced once, each time the
    step cost of its own bucketed inputs. On (a step priced at the two buckets around its decode sequences): the
    guesses name both buckets, so the warmed timer still prices everything in its first call."""
    monkeypatch.setattr(step_time, "BATCH_INTERP_ON", interp)
    m, pr, p = r1
    lay = Layout(dp=8, ep=8)
    steps = [
        (250 + i % 5, 8000 + 7 * i, 7000 - 50 * i if i % 3 else 0, 40.0 * i if i % 3 else 0, 1 + i % 2)
        for i in range(30)
    ]
    plain, warmed = StepTimer(m, pr, lay, p), StepTimer(m, pr, lay, p)
    a = [plain(*s) for s in steps]
    b = [warmed(*s, hint=lambda: np.array(steps, dtype=float)) for s in steps]
    assert a == b
    assert warmed.calls == 1 < plain.calls
    assert warmed.evaluations == plain.evaluations
    if interp:
        return
    assert warmed.evaluations == len({plain.key(*s) for s in steps})
    # and each time is the step cost of its own bucketed inputs
    k = plain.key(*steps[7])
    sc = step_cost(
        m, pr, lay, p, Batch.make(*[[v, v] for v in plain.inputs(k)[:4]], prefill_seqs=[plain.inputs(k)[4]] * 2)
    )
    assert a[7] == float(sc.step_time_s[0])


def test_lookahead_leaves_the_simulation_unchanged(r1, monkeypatch):
    """Same requests, same timestamps, same distinct step inputs, with and without lookahead;
    the lookahead needs far fewer step-cost calls (closed loop, 8K/1K-like prompts)."""
    m, pr, p = r1
    wl = Workload("t", 2048, 128)
    calls = [0]
    price = StepTimer._price

    def counted(self, keys):
        calls[0] += 1
        return price(self, keys)

    monkeypatch.setattr(StepTimer, "_price", counted)

    def run():
        calls[0] = 0
        res = simulate(m, pr, simple_deployment(p, dp=8, ep=8), workload=wl, concurrency=64, num_requests=400, seed=3)
        return res, calls[0]

    with_la, n_with = run()
    monkeypatch.setattr(Instance, "lookahead", lambda self, steps=0: np.zeros((0, 5)))
    without, n_without = run()
    cols = ["arrival_s", "first_scheduled_s", "first_token_s", "done_s", "input_tokens", "output_tokens"]
    assert np.array_equal(with_la.requests[cols].to_numpy(), without.requests[cols].to_numpy())
    assert with_la.summary["step_cost_evaluations"] == without.summary["step_cost_evaluations"]
    assert n_with < n_without / 2


def test_neighbour_guesses_skip_unused_codes(r1):
    """Guesses one bucket beside a small input never land on codes 17..93 (no input maps there)."""
    m, pr, p = r1
    t = StepTimer(m, pr, Layout(dp=8, ep=8), p)
    keys = t._codes(np.array([[16.0, 16.0, 100.0, 0.0, 1.0]]))
    mask = (1 << step_time._BITS) - 1
    for k in keys:
        for code in (k & mask, k >> step_time._BITS & mask):
            assert code <= 16 or code > step_time._FIRST_LOG_CODE


def test_guesses_are_priced_nearest_step_first(r1, monkeypatch):
    """A capped batch keeps the steps most likely to come: the guesses' own keys in step order (each
    as the scalar key() packs it), then their neighbours; a repeated guess appears once (nearest buckets)."""
    monkeypatch.setattr(step_time, "BATCH_INTERP_ON", False)
    m, pr, p = r1
    t = StepTimer(m, pr, Layout(dp=8, ep=8), p)
    rows = [
        (250.0, 8000.0, 2048.0, 512.0, 2.0),
        (250.0, 8100.0, 0.0, 0.0, 0.0),
        (249.0, 8200.0, 1024.0, 3000.0, 1.0),
        (250.0, 8000.0, 2048.0, 512.0, 2.0),
    ]
    keys = t._codes(np.array(rows))
    own = [t.key(*r) for r in rows[:3]]
    assert keys[:3] == own
    # then the two mixed guesses' 8 neighbours each (one bucket either way in decode sequences and context)
    assert len(keys) == 3 + 2 * 8 and len(set(keys)) == len(keys)
    t.cache[own[0]] = 1.0  # a priced key is not asked again
    assert t._codes(np.array(rows))[:2] == own[1:]


def test_lookahead_knows_the_requests_in_the_front_end(r1):
    """A request issued but not yet arrived (front-end time) is in the lookahead's guesses: an idle
    instance with one prompt of 3,000 tokens on its way plays to its arrival (decode-only stretches
    are skipped, not listed) and guesses a step that prefills it whole (budget 8,192)."""
    m, pr, p = r1
    lay = Layout(tp=8, ep=8)
    timer = StepTimer(m, pr, lay, p)
    inst = Instance(0, "agg", timer, 8, 1e6, 16, 8192, PrefixCache(0.0), None, np.random.default_rng(0))
    inst._dt_decode_s = 0.01
    assert not inst.lookahead(4)[:, 2].any()  # nothing to prefill, nothing on its way
    inst.in_flight = lambda: [(0.015, 3000)]  # arrives 15 ms from now
    guesses = inst.lookahead(4)
    assert guesses[0].tolist() == [0.0, 0.0, 3000.0, 0.0, 1.0]


def test_batch_interpolation_is_exact_on_an_affine_step_and_removes_the_bucket_edge(r1, monkeypatch):
    """step_time.BATCH_INTERP_ON (round 49, rrwait49): on a step cost affine in the decode sequences,
    t = 0.02 s + 10 µs·b, the blend of the two neighbouring buckets is the step cost itself (a chord of a line
    is the line): t(3,064) = 0.02 + 0.03064 = 0.05064 s. Off, the nearest bucket: ln 3,064 / ln 1.03 = 271.58 → 272,
    1.03^272 = 3,102.6 sequences, t = 0.051026 s. And b/t rises across the bucket edge at 1.03^271.5 = 3,057.1 when
    on (3,056 → 3,064: 3,056/0.05056 = 60,443 → 3,064/0.05064 = 60,506 a second), where off it falls (3,056 prices
    at 1.03^271 = 3,012.2: 0.050122 s, 60,971 a second; 3,064: 3,064/0.051026 = 60,048)."""
    m, pr, p = r1
    monkeypatch.setattr(step_time, "BATCH_INTERP_ON", False)

    def affine(self, keys):
        self.ahead.update({k: 0.02 + 1e-5 * self.inputs(k)[0] for k in keys})

    monkeypatch.setattr(StepTimer, "_price", affine)
    t = StepTimer(m, pr, Layout(dp=4, ep=4), p)
    assert t(3064, 1400.0, 0, 0, 0) == pytest.approx(0.051026, abs=1e-6)
    off = [b / t(b, 1400.0, 0, 0, 0) for b in (3056, 3064)]
    assert off[0] == pytest.approx(60971, abs=2) and off[1] == pytest.approx(60048, abs=2)
    monkeypatch.setattr(step_time, "BATCH_INTERP_ON", True)
    assert t(3064, 1400.0, 0, 0, 0) == pytest.approx(0.05064, rel=1e-12)
    on = [b / t(b, 1400.0, 0, 0, 0) for b in (3056, 3064)]
    assert on[0] == pytest.approx(60443, abs=2) and on[1] == pytest.approx(60506, abs=2)
    assert t(12, 1400.0, 0, 0, 0) == pytest.approx(0.02012)  # up to 16 sequences: exact either way


@pytest.mark.parametrize("ratio", [1.01, 1.03, 1.1])
def test_a_log_bucket_value_keys_back_to_its_own_code(r1, ratio):
    """The blended call packs the codes lo and lo + 1 straight into the key of the other inputs: that is the
    key of the bucket values r^lo and r^(lo+1) because round(ln(r^c) / ln r) = c for every code a key can hold
    (exp/log round trip errs by a few ulp, far from a half-code tie)."""
    m, pr, p = r1
    t = StepTimer(m, pr, Layout(dp=8, ep=8), p, ratio=ratio)
    rest = t.key(0.0, 1400.0, 7000.0, 40.0, 1)
    for c in range(1, 1 << step_time._BITS):
        b = math.exp(c * t.log_r)
        if b <= 16:  # the blend only packs codes of log buckets (both neighbours past 16 sequences)
            continue
        assert t.key(b, 1400.0, 7000.0, 40.0, 1) == rest | c, c


def test_a_blended_step_is_the_chord_of_its_two_bucket_prices(r1, monkeypatch):
    """With step_time.BATCH_INTERP_ON a step of b decode sequences past 16 costs, bit for bit, the chord between
    the bucket prices at 1.03^lo and 1.03^(lo+1), lo = floor(ln b / ln 1.03), each priced alone (interp=False):
    for b = 300, lo = floor(5.70378 / 0.0295588) = floor(192.96) = 192, buckets e^5.67529 = 291.57 and e^5.70485 = 300.32."""
    monkeypatch.setattr(step_time, "BATCH_INTERP_ON", True)
    m, pr, p = r1
    lay = Layout(dp=8, ep=8)
    blended, single = StepTimer(m, pr, lay, p), StepTimer(m, pr, lay, p)
    for b, ctx, tok, pctx, n in [(300, 8100.0, 0, 0, 0), (300, 8100.0, 2048, 512.0, 2), (17, 900.0, 0, 0, 0)]:
        lo = math.floor(math.log(b) / LOG_R)
        b_lo, b_hi = math.exp(lo * LOG_R), math.exp((lo + 1) * LOG_R)
        if b == 300:
            assert lo == 192 and b_lo == pytest.approx(291.57, abs=0.01) and b_hi == pytest.approx(300.32, abs=0.01)
        t_lo = single(b_lo, ctx, tok, pctx, n, interp=False)
        t_hi = single(b_hi, ctx, tok, pctx, n, interp=False)
        want = t_lo + (b - b_lo) / (b_hi - b_lo) * (t_hi - t_lo) if b_lo > 16 else single(b, ctx, tok, pctx, n)
        assert blended(b, ctx, tok, pctx, n) == want


def test_the_vectorised_bucket_values_are_value_bit_for_bit(r1):
    """_price reads a key's inputs from a 4,096-entry table instead of inputs(): every code's table entry is the
    float value() gives (code 16 → 16.0, code 94 → 1.03^94 = e^2.7785 = 16.10, code 4095 → e^121.04)."""
    m, pr, p = r1
    t = StepTimer(m, pr, Layout(dp=8, ep=8), p)
    table = step_time._bucket_values(t.log_r)
    assert table.shape == (4096,) and table[16] == 16.0 and table[94] == pytest.approx(16.10, abs=0.01)
    assert all(table[c] == t.value(c) for c in range(4096))
    assert math.log(table[4095]) == pytest.approx(121.04, abs=0.01)
