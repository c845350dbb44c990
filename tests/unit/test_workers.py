"""analysis/workers.py: independent tasks in forked processes give what one process gives.

Claims checked: every result comes back in item order and equal to ``fn(item)`` computed here; the
tasks really run in other processes (their pids differ from this one's); a JalapenoError raised in a
worker is raised again with its class, field, problem and fix (one whose class takes other arguments,
and any other failure, is raised by running the item here); an item whose worker is killed runs here;
a MappingProxyType inside a result travels; ``JALAPENO_WORKERS=1`` forks nothing; a bad
``JALAPENO_WORKERS`` is refused naming it and the fix; and ``compare_systems`` prints the same bytes
with one process and with two (the CLI's --json output), its sweeps one per system and precision
(analysis/deployed.sweep_plan, as system_frontier runs them).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import types

import pytest

from jalapeno.analysis import workers
from jalapeno.analysis.workers import ENV, in_workers, worker_count
from jalapeno.errors import InfeasibleDeployment, SpecError

forks = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers fork on Linux only")


def _need_fork() -> None:
    if worker_count(2) < 2:  # another Python thread runs (a plugin): in_workers rightly forks nothing
        pytest.skip("in_workers forks only while no other Python thread runs")


def _square_and_pid(x):
    return x * x, os.getpid()


@forks
def test_results_in_order_from_other_processes(monkeypatch):
    monkeypatch.setenv(ENV, "2")
    _need_fork()
    assert worker_count(5) == 2
    out = [f() for f in in_workers(_square_and_pid, [3, 1, 4, 1, 5])]
    assert [v for v, _ in out] == [9, 1, 16, 1, 25]  # by hand
    assert all(pid != os.getpid() for _, pid in out)


def _fails(x):
    if x == 1:
        raise InfeasibleDeployment("deployment", "nothing fits", "use a bigger system")
    if x == 2:
        return 1 / 0
    return types.MappingProxyType({"attention": x})


@forks
def test_errors_and_read_only_mappings(monkeypatch):
    monkeypatch.setenv(ENV, "3")
    _need_fork()
    ok, infeasible, other = in_workers(_fails, [0, 1, 2])
    assert ok() == types.MappingProxyType({"attention": 0}) and isinstance(ok(), types.MappingProxyType)
    with pytest.raises(InfeasibleDeployment) as e:
        infeasible()
    assert (e.value.field, e.value.problem, e.value.fix) == ("deployment", "nothing fits", "use a bigger system")
    with pytest.raises(ZeroDivisionError):  # raised here: the thunk runs the item in this process
        other()


def test_one_worker_runs_here_when_called(monkeypatch):
    monkeypatch.setenv(ENV, "1")
    assert worker_count(8) == 1
    calls = []
    thunks = in_workers(lambda x: calls.append(x) or os.getpid(), ["a", "b"])
    assert calls == []  # nothing ran yet
    assert [t() for t in thunks] == [os.getpid()] * 2 and calls == ["a", "b"]


def test_never_more_workers_than_tasks(monkeypatch):
    monkeypatch.setenv(ENV, "16")
    monkeypatch.setattr(workers.threading, "active_count", lambda: 1)  # as in a plain run: no other thread
    assert worker_count(1) == 1
    assert worker_count(3) == (3 if sys.platform.startswith("linux") else 1)
    monkeypatch.setattr(workers, "_IN_WORKER", True)  # a worker never forks its own
    assert worker_count(3) == 1
    monkeypatch.setattr(workers, "_IN_WORKER", False)
    monkeypatch.setattr(workers.threading, "active_count", lambda: 2)  # another thread: a fork could deadlock
    assert worker_count(3) == 1


def test_default_count_is_the_cpus_capped_at_four(monkeypatch):
    # unset: the CPUs this process may use, capped at DEFAULT_MAX_WORKERS = 4 (memory: one sweep's tables a worker)
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setattr(workers.threading, "active_count", lambda: 1)
    monkeypatch.setattr(workers.sys, "platform", "linux")
    for cpus, want in ((1, 1), (2, 2), (3, 3), (16, 4)):
        monkeypatch.setattr(workers.os, "sched_getaffinity", lambda _pid, c=cpus: set(range(c)), raising=False)
        assert worker_count(8) == want
    monkeypatch.setenv(ENV, "6")  # the variable overrides the cap
    assert worker_count(8) == 6


@pytest.mark.parametrize("bad", ["0", "-2", "two", "1.5"])
def test_bad_worker_count_is_refused(monkeypatch, bad):
    monkeypatch.setenv(ENV, bad)
    with pytest.raises(SpecError, match=rf"JALAPENO_WORKERS: '{bad}' is not a whole number .*Fix: set "
                                        r"JALAPENO_WORKERS=1 to run in one process"):
        worker_count(4)


@forks
def test_compare_systems_same_bytes_in_one_and_two_processes(monkeypatch):
    from jalapeno.analysis.comparison import compare_systems
    from jalapeno.analysis.sweep import SweepOptions
    from jalapeno.cli.common import print_json
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.workload import get_workload

    def printed(n: str) -> str:
        monkeypatch.setenv(ENV, n)
        res = compare_systems(load_model("deepseek-r1"), [load_pricer("gb200-nvl72"), load_pricer("gb300-nvl72")],
                              get_workload("8k1k"), None, options=SweepOptions(serving="agg"),
                              precisions={"gb200-nvl72": ["fp8", "fp4"], "gb300-nvl72": ["fp4", "fp8"]})
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            print_json(res.as_dict())
        return buf.getvalue()

    two = printed("2")
    _need_fork()  # the two-process run did fork
    assert two == printed("1")


def test_sweep_plan_names_the_sweeps_system_frontier_runs():
    from jalapeno.analysis.deployed import sweep_plan
    from jalapeno.specs.formats import get_precision

    fp8 = get_precision("fp8")
    assert sweep_plan(fp8, None, None) == [None]  # one plain sweep at fp8
    assert sweep_plan(None, ["fp8", "fp4"], None) == ["fp8", "fp4"]  # compare's per-system precisions, in order
    assert sweep_plan(fp8, [], object()) == ["fp8"]  # a recipe sweeps the given precision by load
    assert sweep_plan(None, None, None) == []  # nothing to sweep: system_frontier refuses it first


_PARENT = os.getpid()


def _dies_in_a_worker(x):
    if x == 1 and os.getpid() != _PARENT:
        os.kill(os.getpid(), 9)  # as the out-of-memory killer would
    return x + 10


@forks
def test_a_killed_worker_leaves_its_items_to_this_process(monkeypatch):
    monkeypatch.setenv(ENV, "2")
    _need_fork()
    assert [f() for f in in_workers(_dies_in_a_worker, [0, 1, 2, 3])] == [10, 11, 12, 13]


class _OddError(SpecError):  # another signature than JalapenoError's (field, problem, fix)
    def __init__(self, what: str) -> None:
        super().__init__("odd", what, "none")


def _raises_odd(x):
    raise _OddError(f"item {x}")


@forks
def test_an_error_that_does_not_rebuild_is_raised_by_running_the_item_here(monkeypatch):
    monkeypatch.setenv(ENV, "2")
    _need_fork()
    first, second = in_workers(_raises_odd, [1, 2])
    with pytest.raises(_OddError, match="odd: item 2. Fix: none"):
        second()


@forks
def test_a_callers_own_gc_freeze_survives(monkeypatch):
    # review35: in_workers froze the heap before forking and unfroze it after, which also undid a freeze the calling
    # program had made itself; gc has no partial unfreeze, so a caller's freeze now keeps everything frozen
    import gc

    monkeypatch.setenv(ENV, "2")
    _need_fork()
    gc.freeze()
    try:
        assert [f()[0] for f in in_workers(_square_and_pid, [2, 3])] == [4, 9]
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    # without one, the heap is unfrozen afterwards as before
    [f() for f in in_workers(_square_and_pid, [2, 3])]
    assert gc.get_freeze_count() == 0


def test_frozen_slotted_dataclasses_travel_by_their_field_values():
    """Round 39: a frozen dataclass with slots (Deployment, Pool, Layout) is pickled as (workers._rebuild, (class,
    field names, values)) rather than through dataclasses' __getstate__/__setstate__ (a fields() call per object each
    way); what arrives equals what pickle's default makes, shared objects stay shared, other types are untouched."""
    import copyreg
    import dataclasses
    import pickle

    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.specs.formats import get_precision

    pool = Pool(Layout(tp=4, dp=2, ep=8), workers=3)
    dep = Deployment(get_precision("fp8"), pool)
    items = [dep, dep, pool, Layout(tp=2), {"x": (1.5, "a")}]
    packed = workers._dumps(items)
    assert b"_rebuild" in packed  # the short form was used
    back = pickle.loads(packed)
    f = io.BytesIO()  # workers._dumps before round 39: copyreg's table and the read-only mapping as a copy
    p = pickle.Pickler(f, protocol=pickle.HIGHEST_PROTOCOL)
    p.dispatch_table = copyreg.dispatch_table.copy()
    p.dispatch_table[types.MappingProxyType] = lambda m: (workers._proxy, (dict(m),))
    p.dump(items)
    assert b"_rebuild" not in f.getvalue()
    assert back == pickle.loads(f.getvalue()) == items
    assert back[0] is back[1] and type(back[0].decode.layout) is Layout
    with pytest.raises(dataclasses.FrozenInstanceError):  # still frozen after the rebuild
        back[3].tp = 8


def test_a_dataclass_with_its_own_state_keeps_it():
    import dataclasses

    @dataclasses.dataclass(frozen=True, slots=True)
    class Own:
        a: int

        def __getstate__(self):
            return [self.a]

        def __setstate__(self, state):
            object.__setattr__(self, "a", state[0])

    table = workers._Reducers()
    with pytest.raises(KeyError):  # not dataclasses' own state functions: pickle's usual path
        table[Own]
    with pytest.raises(KeyError):
        table[dict]


@forks
def test_meanwhile_runs_once_here_while_workers_run_and_changes_no_result(monkeypatch):
    monkeypatch.setenv(ENV, "2")
    _need_fork()
    ran = []
    with workers.meanwhile(lambda: ran.append(os.getpid())):
        out = [f() for f in in_workers(_square_and_pid, [3, 1, 4])]
        again = [f() for f in in_workers(_square_and_pid, [2, 2])]  # once per block: not again
    assert ran == [os.getpid()]  # in this process, not in a worker
    assert [v for v, _ in out] == [9, 1, 16] and [v for v, _ in again] == [4, 4]
    with workers.meanwhile(lambda: 1 / 0):  # ahead-of-time work that fails is dropped: the results stand
        assert [f()[0] for f in in_workers(_square_and_pid, [5, 6])] == [25, 36]
    with workers.meanwhile(lambda: ran.append("outside")):
        pass
    assert [f()[0] for f in in_workers(_square_and_pid, [7, 8])] == [49, 64] and ran == [os.getpid()]


def test_meanwhile_is_not_run_without_workers(monkeypatch):
    monkeypatch.setenv(ENV, "1")
    ran = []
    with workers.meanwhile(lambda: ran.append(1)):
        assert [t()[0] for t in in_workers(_square_and_pid, [2, 3])] == [4, 9]
    assert ran == []  # one process: the caller does that work where it needs it
