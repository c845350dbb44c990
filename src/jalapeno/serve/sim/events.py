"""Events of the serving simulation: frozen records; handlers live in the simulation."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Arrival:
    """A request reaches the router."""

    request_id: int
    priority: int = 1


@dataclass(frozen=True, slots=True)
class StepDone:
    """An instance finished a step; its scheduler picks the next one."""

    instance: int
    priority: int = 0


@dataclass(frozen=True, slots=True)
class KVTransferDone:
    """A request's KV cache arrived at its decode instance (disaggregated serving)."""

    request_id: int
    instance: int
    priority: int = 1


@dataclass(frozen=True, slots=True)
class TraceNext:
    """The next request of a trace or open-loop plan arrives (created now, routed after the front end)."""

    index: int
    priority: int = 1
