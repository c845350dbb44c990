"""Unit tests of the discrete-event engine (serve/sim/engine.py, STYLE.md §4).

Contract: events run in order of (time, priority, scheduling order); simultaneous events of one
priority run FIFO in the order they were *scheduled*, whatever order their objects were created
in; a handler only returns follow-ups as (delay, event) and the engine pushes them;
``run(until_s)`` stops before later events; an event in the past is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from jalapeno.serve.sim.engine import Engine


@dataclass(frozen=True)
class Ev:
    name: str
    priority: int = 0


class Recorder:
    """A dispatch function that logs (time, name) and returns follow-ups from a table."""

    def __init__(self, follow: dict | None = None) -> None:
        self.log: list[tuple[float, str]] = []
        self.follow = follow or {}

    def __call__(self, now: float, ev):
        self.log.append((now, ev.name))
        return list(self.follow.get(ev.name, []))


def test_orders_by_time_first():
    rec = Recorder()
    eng = Engine(rec)
    eng.schedule(3.0, Ev("c"))
    eng.schedule(1.0, Ev("a"))
    eng.schedule(2.0, Ev("b"))
    end = eng.run()
    assert rec.log == [(1.0, "a"), (2.0, "b"), (3.0, "c")]
    assert end == 3.0 and eng.now_s == 3.0
    assert eng.processed == 3 and len(eng) == 0


def test_same_time_orders_by_priority_lower_first():
    rec = Recorder()
    eng = Engine(rec)
    eng.schedule(1.0, Ev("p2"), priority=2)
    eng.schedule(1.0, Ev("p0"), priority=0)
    eng.schedule(1.0, Ev("p1"), priority=1)
    eng.run()
    assert [n for _, n in rec.log] == ["p0", "p1", "p2"]


def test_simultaneous_events_are_fifo_in_scheduling_order_not_creation_order():
    rec = Recorder()
    eng = Engine(rec)
    created = [Ev(f"e{i}") for i in range(6)]  # created e0 ... e5
    order = [4, 1, 5, 0, 3, 2]  # scheduled in a different order
    for i in order:
        eng.schedule(5.0, created[i])
    eng.run()
    assert [n for _, n in rec.log] == [f"e{i}" for i in order]


def test_unorderable_payloads_never_compared():
    """Ties are broken by the engine's counter, so events need not be comparable."""
    seen = []
    eng = Engine(lambda now, ev: seen.append(ev) or [])
    a, b = object(), object()
    eng.schedule(1.0, a)
    eng.schedule(1.0, b)
    eng.run()
    assert seen == [a, b]


def test_follow_ups_are_pushed_by_the_engine_at_now_plus_delay():
    rec = Recorder({"a": [(2.0, Ev("b"))], "b": [(0.5, Ev("c"))]})
    eng = Engine(rec)
    eng.schedule(1.0, Ev("a"))
    eng.run()
    assert rec.log == [(1.0, "a"), (3.0, "b"), (3.5, "c")]
    assert eng.processed == 3


def test_zero_delay_follow_up_runs_after_events_already_scheduled_at_that_time():
    """'Schedule last': a follow-up at the current time queues behind its equals (FIFO)."""
    rec = Recorder({"first": [(0.0, Ev("follow"))]})
    eng = Engine(rec)
    eng.schedule(1.0, Ev("first"))
    eng.schedule(1.0, Ev("second"))
    eng.schedule(1.0, Ev("third"))
    eng.run()
    assert [n for _, n in rec.log] == ["first", "second", "third", "follow"]


def test_follow_up_priority_is_taken_from_the_event():
    """Two follow-ups at the same time: the lower ``priority`` attribute runs first."""
    rec = Recorder({"a": [(1.0, Ev("late", priority=1)), (1.0, Ev("early", priority=0))]})
    eng = Engine(rec)
    eng.schedule(0.0, Ev("a"))
    eng.run()
    assert [n for _, n in rec.log] == ["a", "early", "late"]


def test_run_until_stops_and_can_resume():
    rec = Recorder()
    eng = Engine(rec)
    for t in (1.0, 2.0, 3.0, 4.0):
        eng.schedule(t, Ev(f"t{t:g}"))
    eng.run(until_s=2.5)
    assert [n for _, n in rec.log] == ["t1", "t2"]
    assert len(eng) == 2  # the later events stay queued
    assert eng.now_s <= 2.5
    eng.run()
    assert [n for _, n in rec.log] == ["t1", "t2", "t3", "t4"]


def test_run_until_stops_a_self_perpetuating_process():
    """A handler that always reschedules itself would run forever without ``until_s``."""
    rec = Recorder({"tick": [(1.0, Ev("tick"))]})
    eng = Engine(rec)
    eng.schedule(0.0, Ev("tick"))
    eng.run(until_s=10.0)
    times = [t for t, _ in rec.log]
    assert times == [float(i) for i in range(11)]  # 0 ... 10 s, nothing later
    assert len(eng) == 1 and eng.now_s == 10.0


def test_run_stop_predicate():
    rec = Recorder({"tick": [(1.0, Ev("tick"))]})
    eng = Engine(rec)
    eng.schedule(0.0, Ev("tick"))
    eng.run(stop=lambda: len(rec.log) >= 4)
    assert len(rec.log) == 4


def test_event_in_the_past_is_refused():
    eng = Engine(Recorder())
    eng.schedule(5.0, Ev("a"))
    eng.run()
    assert eng.now_s == 5.0
    with pytest.raises((AssertionError, ValueError)):
        eng.schedule(4.0, Ev("past"))
    eng.schedule(5.0, Ev("now"))  # the current time itself is allowed
    assert len(eng) == 1


def test_follow_up_in_the_past_is_refused():
    rec = Recorder({"a": [(-1.0, Ev("past"))]})
    eng = Engine(rec)
    eng.schedule(5.0, Ev("a"))
    with pytest.raises((AssertionError, ValueError)):
        eng.run()
