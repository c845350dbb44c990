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

    @property
    def prefill_needed(self) -> int:
        """Prompt (+ recomputed output) tokens still to prefill."""
        return max(self.isl + self.generated - self.cached_tokens - self.prefill_done, 0)

    @property
    def context(self) -> int:
        """Tokens in this request's KV cache now."""
        return self.cached_tokens + self.prefill_done + (self.generated if self.prefill_needed == 0 else 0)


@dataclass(slots=True)
class PrefixCache:
    """LRU cache of inactive KV (tokens per key), sharing the instance's KV capacity.

    Keys are sessions (agentic multi-turn) or prefix groups. Entries are evicted LRU-first when
    running requests need the space. ``lookup`` returns the cached tokens usable by a request
    whose prompt starts with the cached context.
    """

    enabled: bool = True
    entries: OrderedDict = field(default_factory=OrderedDict)
    tokens: int = 0
    hits_tokens: int = 0
    lookup_tokens: int = 0

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
        """Free at least ``need`` tokens LRU-first; returns tokens freed."""
        freed = 0
        while freed < need and self.entries:
            _, t = self.entries.popitem(last=False)
            freed += t
            self.tokens -= t
        return freed

    @property
    def hit_rate(self) -> float:
        return self.hits_tokens / self.lookup_tokens if self.lookup_tokens else 0.0
