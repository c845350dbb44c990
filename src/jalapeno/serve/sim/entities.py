"""Mutable state of the simulation: requests and their timestamps, the prefix cache."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field


@dataclass(slots=True)
class Request:
    """One request and its timestamps (seconds of simulated time; NaN until reached).

    Attributes:
        isl: input tokens of this request (the whole context the turn sends).
        osl: output tokens it must produce.
        session: task/session id (agentic turns share one), or -1.
        turn: turn index inside its session.
        prefix_group: requests of one group share a cacheable prefix (-1 = none).
        counted: False for warm-up requests (excluded from metrics).
        cached_tokens: prompt tokens served from the prefix cache.
        prefill_done: prompt tokens already prefilled (recomputed after a preemption).
        generated: output tokens emitted so far.
        finish_step: the instance step index at which the last token is emitted.
        reload_s: s its lower-tier prefix took to load (lane wait included; 0 if none).
        lower_ready_s: when that prefix is in HBM, s; its prefill waits until then (reload at admission).
    """

    id: int
    arrival_s: float
    isl: int
    osl: int
    session: int = -1
    turn: int = 0
    prefix_group: int = -1
    counted: bool = True
    cached_tokens: int = 0
    prefill_done: int = 0
    generated: int = 0
    instance: int = -1
    decode_start_step: int = 0
    finish_step: int = 0
    decode_steps: int = 0
    preemptions: int = 0
    first_scheduled_s: float = float("nan")
    first_token_s: float = float("nan")
    done_s: float = float("nan")
    kv_ready_s: float = float("nan")
    reload_checked: bool = False
    reload_s: float = 0.0
    lower_ready_s: float = 0.0

    @property
    def prefill_needed(self) -> int:
        """Prompt (+ recomputed output) tokens still to prefill."""
        return max(self.isl + self.generated - self.cached_tokens - self.prefill_done, 0)

    @property
    def context(self) -> int:
        """Tokens in this request's KV cache now."""
        return self.cached_tokens + self.prefill_done + (self.generated if self.prefill_needed == 0 else 0)


@dataclass(slots=True)
class LowerTier:
    """A KV-cache tier below HBM (specs/kv_tiers.py) as the simulator keeps it: an LRU of entries
    (tokens per key) of at most ``capacity`` tokens for one instance. ``link_lanes``: when each
    reload lane (one per attention-DP rank) is next free, s."""

    name: str
    capacity: float
    bandwidth_bytes_per_s: float
    latency_s: float
    entries: OrderedDict = field(default_factory=OrderedDict)
    tokens: float = 0.0


#: A prefix group's key in :class:`PrefixCache` is ``GROUP_KEY_BASE + group``, so that group 3 and
#: session 3 of one trace are different entries (trace ids are below it: serve/sim/trace.MAX_ID).
GROUP_KEY_BASE = 1 << 62


def cache_key(session: int, prefix_group: int) -> int:
    """The prefix-cache key of a request: its session (>= 0), else its prefix group moved past
    :data:`GROUP_KEY_BASE`, else -1 (not cached)."""
    if session >= 0:
        return session
    return GROUP_KEY_BASE + prefix_group if prefix_group >= 0 else -1


@dataclass(slots=True)
class PrefixCache:
    """LRU cache of inactive KV (tokens per key), sharing the instance's KV capacity, with
    optional lower tiers (host, SSD, remote) that evicted entries move down to.

    Keys are sessions (agentic multi-turn) or prefix groups. Entries are evicted LRU-first when
    running requests need the space; with ``lower`` tiers an evicted entry moves to the next
    tier (whose own LRU entries move further down, or are dropped past the last tier).
    ``lookup`` returns the cached tokens usable by a request whose prompt starts with the cached
    context; ``take_lower`` removes an entry from a lower tier (to reload or to recompute it).
    """

    enabled: bool = True
    entries: OrderedDict = field(default_factory=OrderedDict)
    tokens: int = 0
    hits_tokens: int = 0
    lookup_tokens: int = 0
    lower: list = field(default_factory=list)
    reloads: int = 0
    recomputes: int = 0
    pending: dict = field(default_factory=dict)

    def lookup(self, key: int, prompt_tokens: int) -> int:
        """Tokens of ``prompt_tokens`` found in the cache under ``key`` (entry is consumed)."""
        self.lookup_tokens += prompt_tokens
        if not self.enabled or key < 0 or key not in self.entries:
            return 0
        cached = self.entries.pop(key)
        self.tokens -= cached
        # engines recompute at least the prompt's last token to get its logits
        hit = min(cached, max(prompt_tokens - 1, 0))
        self.hits_tokens += hit
        return hit

    def insert(self, key: int, tokens: int) -> None:
        """Keep ``tokens`` of KV for ``key`` (a finished turn's context)."""
        if not self.enabled or key < 0 or tokens <= 0:
            return
        old = self.entries.pop(key, 0)
        self.tokens += tokens - old
        self.entries[key] = tokens

    def evict(self, need: int) -> int:
        """Free at least ``need`` tokens LRU-first (moving entries to the lower tiers); returns tokens freed."""
        freed = 0
        while freed < need and self.entries:
            k, t = self.entries.popitem(last=False)
            freed += t
            self.tokens -= t
            self._demote(0, k, t)
        return freed

    def _demote(self, level: int, key: int, tokens: float) -> None:
        if level >= len(self.lower):
            return
        tier = self.lower[level]
        if tokens > tier.capacity:
            return self._demote(level + 1, key, tokens)
        while tier.tokens + tokens > tier.capacity and tier.entries:
            k, t = tier.entries.popitem(last=False)
            tier.tokens -= t
            self._demote(level + 1, k, t)
        tier.entries[key] = tokens
        tier.tokens += tokens

    def take_lower(self, key: int) -> tuple[LowerTier, float] | None:
        """Remove ``key`` from the lower tier holding it: (tier, tokens), or None."""
        if not self.enabled or key < 0 or key in self.entries:
            return None
        for tier in self.lower:
            if key in tier.entries:
                t = tier.entries.pop(key)
                tier.tokens -= t
                return tier, t
        return None

    @property
    def hit_rate(self) -> float:
        """Prompt tokens found in the cache over those looked up (0 before any lookup)."""
        return self.hits_tokens / self.lookup_tokens if self.lookup_tokens else 0.0
