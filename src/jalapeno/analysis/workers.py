"""Independent tasks (the sweeps of a comparison) in forked worker processes.

``compare`` sweeps each system at each of its precisions on its own (analysis/comparison.compare_systems,
analysis/deployed.sweep_plan): no sweep reads another's result, so each can run in a process of its own
and give the same bytes as a run in one process (the same code on the same inputs; the memos the
sweeps fill are meant to return what a fresh computation gives, and tests/unit/test_workers.py checks
a comparison's JSON in one process and in two byte for byte).
:func:`in_workers` forks the workers after the parent has imported everything (a fork copies the
imported modules: no import cost per worker, unlike ``spawn``), hands them task numbers, and brings
each result back pickled. Where forking is unavailable or unsafe it runs the tasks in this process,
one after the other, as before.

``JALAPENO_WORKERS`` (environment) sets the number of worker processes; ``1`` runs everything in
this process. Unset: the CPUs this process may run on (os.sched_getaffinity), at most
:data:`DEFAULT_MAX_WORKERS` and at most one per task.
"""

from __future__ import annotations

import contextlib
import copyreg
import dataclasses
import gc
import io
import operator
import os
import pickle
import signal
import sys
import threading
import types
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING

from jalapeno.errors import JalapenoError, SpecError

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

ENV = "JALAPENO_WORKERS"
#: the default cap on workers (ASSUMPTION, memory): each worker holds one sweep's per-point tables, about 0.45 GB
#: for ``compare -w 128k1k`` (benchmarks/bench_compare.py --long, round 35), so 8 workers (4 systems x 2
#: precisions on a many-core machine) would hold ~3.6 GB across processes; 4 keep it under ~2 GB while taking
#: most of the speed-up (8 tasks in 2 rounds). ``JALAPENO_WORKERS`` overrides it.
DEFAULT_MAX_WORKERS = 4

_JOB: tuple[Callable, Sequence] | None = None  # (function, items): set before the fork, read by the workers
_IN_WORKER = False  # a worker never forks workers of its own
#: work for this process while :func:`in_workers` waits on its workers (:func:`meanwhile`)
_MEANWHILE: ContextVar[Callable[[], object] | None] = ContextVar("jalapeno_meanwhile", default=None)


@contextlib.contextmanager
def meanwhile(fn: Callable[[], object] | None) -> Iterator[None]:
    """Within the block, an :func:`in_workers` that forks workers runs ``fn()`` once in this process after
    handing out the tasks, while it would otherwise only wait: work the caller needs after the tasks and that does
    not read their results (``compare`` imports plotly and loads its validators for its chart, about 0.15 s CPU
    off the run's serial end, report/html.warm_chart). Ahead-of-time work only: without workers it is not run, and
    an Exception it raises is dropped (what it did not do is done, or fails with its own error, where it is
    needed). ``None``: nothing.
    """
    token = _MEANWHILE.set(fn)
    try:
        yield
    finally:
        _MEANWHILE.reset(token)


def _run_meanwhile() -> None:
    """The :func:`meanwhile` work of this context, at most once (a second in_workers in the block waits idle)."""
    fn = _MEANWHILE.get()
    if fn is None:
        return
    _MEANWHILE.set(None)
    try:
        fn()
    except Exception:  # noqa: BLE001 - ahead-of-time work: its caller redoes it, and raises there, if it must
        pass


def worker_count(tasks: int) -> int:
    """How many worker processes run ``tasks`` independent tasks (1: in this process, no fork).

    ``JALAPENO_WORKERS`` if set, else the CPUs this process may use up to :data:`DEFAULT_MAX_WORKERS`; never
    more than ``tasks``.
    1 inside a worker, where the ``fork`` start method is unavailable (not Linux: macOS's system
    libraries are not fork-safe, Python's default there is ``spawn``), or while other Python threads
    run (a fork copies only the calling thread: a lock another thread holds would stay held).

    Raises:
        SpecError: ``JALAPENO_WORKERS`` is not a whole number >= 1.
    """
    text = os.environ.get(ENV, "").strip()
    if text:
        try:
            n = int(text)
        except ValueError:
            n = 0
        if n < 1:
            raise SpecError(
                ENV,
                f"{text!r} is not a whole number of worker processes >= 1",
                f"set {ENV}=1 to run in one process, or {ENV}=N for N processes, or unset it",
            )
    else:
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        n = min(n, DEFAULT_MAX_WORKERS)
    if (
        _IN_WORKER
        or tasks < 2
        or not sys.platform.startswith("linux")
        or not hasattr(os, "fork")
        or threading.active_count() > 1
    ):
        return 1
    return max(1, min(n, tasks))


def _proxy(d: dict) -> types.MappingProxyType:
    return types.MappingProxyType(d)


#: dataclasses' own pickle state functions of a frozen dataclass with slots (CPython 3.10+; None elsewhere: such
#: classes then pickle as dataclasses has them do)
_DC_STATE = (getattr(dataclasses, "_dataclass_getstate", None), getattr(dataclasses, "_dataclass_setstate", None))


def _rebuild(cls: type, names: tuple[str, ...], values: tuple):
    """A frozen slotted dataclass from its field values, as dataclasses' ``__setstate__`` makes it (a new object,
    each field set with ``object.__setattr__``, no ``__init__``), without its ``fields()`` call per object."""
    obj = object.__new__(cls)
    for name, value in zip(names, values, strict=True):
        object.__setattr__(obj, name, value)
    return obj


class _Reducers(dict):
    """A pickler's dispatch table (type -> reducer) that also reduces every frozen dataclass with slots whose pickle
    state is dataclasses' own to (:func:`_rebuild`, (class, field names, field values)): the same fields and values
    as its ``__getstate__``/``__setstate__``, which call ``dataclasses.fields`` once per object each way. A plain
    ``compare`` brings back about 22,600 such objects (Deployment, Pool, Layout: every deployment a sweep tried)
    and their ``fields`` calls were the parent's largest cost after its imports (round 39)."""

    def __missing__(self, cls):
        if (
            _DC_STATE[0] is None
            or (getattr(cls, "__getstate__", None), getattr(cls, "__setstate__", None)) != _DC_STATE
        ):
            raise KeyError(cls)
        names = tuple(f.name for f in dataclasses.fields(cls))
        if len(names) >= 2:
            values = operator.attrgetter(*names)  # a tuple of the fields' values, in C
        else:

            def values(o):
                return tuple(getattr(o, n) for n in names)

        def reduce(o):
            return _rebuild, (cls, names, values(o))

        self[cls] = reduce
        return reduce


def _dumps(obj) -> bytes:
    """Pickle ``obj``; a read-only mapping (MappingProxyType, e.g. Precision.modules) as a new one over a copy
    of its dict (pickle refuses mappingproxy); a frozen slotted dataclass by its field values (:class:`_Reducers`)."""
    f = io.BytesIO()
    p = pickle.Pickler(f, protocol=pickle.HIGHEST_PROTOCOL)
    p.dispatch_table = _Reducers(copyreg.dispatch_table)
    p.dispatch_table[types.MappingProxyType] = lambda m: (_proxy, (dict(m),))
    p.dump(obj)
    return f.getvalue()


def _start_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C interrupts the parent, which stops handing out tasks


def _run(i: int) -> bytes:
    """Task ``i`` in a worker: ("ok", result), ("error", a JalapenoError's class, field, problem, fix) or
    ("again",) for any other failure (the parent runs that task itself, so it raises as it would have)."""
    global _IN_WORKER
    _IN_WORKER = True
    fn, items = _JOB
    try:
        out = ("ok", fn(items[i]))
    except JalapenoError as e:
        try:  # a subclass with another signature would not rebuild in the parent: it reruns there instead
            same = str(type(e)(e.field, e.problem, e.fix)) == str(e)
        except Exception:  # noqa: BLE001
            same = False
        out = ("error", type(e), e.field, e.problem, e.fix) if same else ("again",)
    except Exception:  # noqa: BLE001 - rerun in the parent, which raises it with its traceback
        return pickle.dumps(("again",))
    try:
        return _dumps(out)
    except Exception:  # noqa: BLE001 - a result that does not pickle: the parent computes it
        return pickle.dumps(("again",))


def _outcome(fn: Callable, item, packed: bytes | None) -> Callable[[], object]:
    if packed is None:
        return lambda: fn(item)
    out = pickle.loads(packed)
    if out[0] == "ok":
        return lambda: out[1]
    if out[0] == "error":

        def fail():
            raise out[1](*out[2:])

        return fail
    return lambda: fn(item)


def _terminate(pool: ProcessPoolExecutor | None) -> None:
    """Stop ``pool``'s workers at once: ProcessPoolExecutor.terminate_workers (Python 3.14+), else its
    processes (CPython 3.9-3.13 keep them in ``_processes``)."""
    if pool is None:
        return
    if hasattr(pool, "terminate_workers"):
        pool.terminate_workers()
        return
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        proc.terminate()


def in_workers(fn: Callable, items: Sequence) -> list[Callable[[], object]]:
    """``fn`` on every item, in :func:`worker_count` forked processes: one thunk per item, in order, which
    returns the item's result or raises its error (a JalapenoError as raised in the worker, field, problem and
    fix kept; any other failure by running the item here), so a caller handles each as if it had called
    ``fn(item)`` at that point. With one worker every thunk calls ``fn`` here, when called.

    ``fn`` must be deterministic and leave no state the caller reads (a worker's memos and globals die with
    it); results must pickle (a MappingProxyType travels as a copy).
    """
    n = worker_count(len(items))
    if n == 1:
        return [(lambda it=it: fn(it)) for it in items]
    import multiprocessing  # here, not at import: the plain import of a comparison stays light
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    global _JOB
    for stream in (sys.stdout, sys.stderr):  # a worker flushes its inherited copy of these buffers when it ends
        if stream is not None:
            stream.flush()
    _JOB = (fn, items)
    caller_froze = gc.get_freeze_count() > 0  # a freeze of the caller's own is not ours to undo
    gc.freeze()  # the objects already made stay out of the workers' collections: their pages stay shared (gc docs)
    packed: list[bytes | None] = [None] * len(items)  # None: run here (no fork, or its worker died)
    pool = None
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns at a fork in a process with other OS threads; NumPy's OpenBLAS pool is one,
            # and OpenBLAS stops it around a fork (pthread_atfork); Python threads are refused above
            warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*fork.*")
            pool = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("fork"), initializer=_start_worker)
            futures = [pool.submit(_run, i) for i in range(len(items))]  # the first one forks every worker
        _run_meanwhile()  # the workers are forked: this process would only wait
        for i, f in enumerate(futures):
            try:
                packed[i] = f.result()
            except BrokenProcessPool:  # a worker was killed (out of memory): this item runs here
                pass
    except (OSError, BrokenProcessPool):  # no fork (process limit, memory): the items left run here
        pass
    except BaseException:  # Ctrl-C (workers ignore SIGINT): end them now, not after the tasks they hold
        _terminate(pool)
        raise
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        _JOB = None
        if not caller_froze:  # gc has no partial unfreeze: a caller's freeze keeps ours frozen with it
            gc.unfreeze()
    return [_outcome(fn, it, b) for it, b in zip(items, packed, strict=True)]
