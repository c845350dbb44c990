"""A small discrete-event engine: a heap of (time_s, priority, seq, event).

``seq`` comes from a counter owned by the simulation, so events at the same time and priority
run in the order they were scheduled (FIFO), whatever their creation order. A handler returns
follow-up events as (delay_s, event) pairs and only the engine pushes them.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from typing import Any

Handler = Callable[[float, Any], Iterable[tuple[float, Any]]]


class Engine:
    """Event loop. ``dispatch(now_s, event)`` returns (delay_s, event) follow-ups."""

    def __init__(self, dispatch: Handler) -> None:
        self._heap: list[tuple[float, int, int, Any]] = []
        self._seq = itertools.count()
        self._dispatch = dispatch
        self.now_s = 0.0
        self.processed = 0

    def schedule(self, at_s: float, event: Any, priority: int = 0) -> None:
        """Schedule ``event`` at absolute time ``at_s``, s (never in the past).

        Raises:
            ValueError: ``at_s`` is before the current time (a bug in the caller, not bad input).
        """
        if at_s < self.now_s - 1e-12:
            raise ValueError(f"event {event!r} scheduled at {at_s} s, before now ({self.now_s} s)")
        heapq.heappush(self._heap, (at_s, priority, next(self._seq), event))

    def run(self, until_s: float = float("inf"), stop: Callable[[], bool] | None = None) -> float:
        """Process events in time order until the heap empties, ``until_s`` (s) or ``stop()``; returns the time reached, s.

        Raises:
            ValueError: a handler scheduled a follow-up in the past (a bug in the handler).
        """
        heap = self._heap
        while heap:
            if heap[0][0] > until_s or (stop is not None and stop()):
                break
            t, prio, _, ev = heapq.heappop(heap)
            self.now_s = t
            self.processed += 1
            for delay, follow in self._dispatch(t, ev):
                if delay < 0:
                    raise ValueError(f"follow-up {follow!r} scheduled {delay} s in the past")
                heapq.heappush(heap, (t + delay, getattr(follow, "priority", 0), next(self._seq), follow))
        return self.now_s

    def __len__(self) -> int:
        return len(self._heap)
