"""TensorRT-LLM's attention-DP context balancing in the simulator: a prompt waits on its rank until every rank has one
(round 51, waves51; the analytic wait is serve/adp_balance.py, effect 5 of docs/model.md §8.7).

With ``attention_dp_config.enable_balance`` (InferenceX's TensorRT-LLM DeepSeek-R1 attention-DP recipes:
``timeout_iters: 60``) the engine's ``PyExecutor._balance_adp_requests`` (NVIDIA/TensorRT-LLM
``tensorrt_llm/_torch/pyexecutor/py_executor.py``) empties an iteration's context requests unless every rank has a
context request and a free slot; each iteration it empties them counts toward ``timeout_iters``, and the count
reaching it (or some rank having no generation request) releases them; a release resets the count. New requests are
assigned to the rank with the fewest active requests that has a slot (``executor_request_queue.py``,
``_balance_requests_across_ranks``), so with every slot taken a new request can only join the rank whose request
just finished. The simulator's instance (serve/sim/scheduler.Instance) had no such gate: at H200 DeepSeek-R1
TensorRT-LLM 8k/1k C 256 (attention DP 8, InferenceX row 25) its steady TTFT was 1.2 s against the analytic 7.6 s
and the measured 8.48 s, 4.7 s of the analytic's being this gate (docs/gap_aic_ttft.md round 51, waves51).

:class:`AdpGate` keeps each rank's active requests (held, prefilling, decoding) and the prompts held, and
:meth:`AdpGate.tick` returns what an iteration releases. Shipped behind :data:`SIM_ADP_GATE_ON`. Pure: no I/O.
"""

from __future__ import annotations

from collections import deque

#: Whether the simulator's aggregated instance holds prompts for TensorRT-LLM's attention-DP balancing (module
#: docstring); read where the instances are built (serve/sim/instances.py). Built round 51 (waves51).
SIM_ADP_GATE_ON = True


class AdpGate:
    """One aggregated instance's balancing gate over ``ranks`` attention-DP ranks of ``slots`` requests each,
    releasing after at most ``timeout_iters`` held iterations.

    >>> g = AdpGate(2, 4, 3)
    >>> q = deque([1, 2])
    >>> g.take(q); g.tick(), list(q)  # an idle engine (no generation request): released at once
    ([1, 2], [])
    >>> g.decoding([1, 2]); q = deque([3]); g.take(q)
    >>> [g.tick() for _ in range(3)]  # rank 0 has 3, rank 1 none: held 2 iterations, the third times out
    [[], [], [3]]
    >>> g.decoding([3]); q = deque([4, 5]); g.take(q); g.tick()  # 4 to rank 1, 5 to rank 0: both ranks have one
    [4, 5]
    """

    def __init__(self, ranks: int, slots: int, timeout_iters: int) -> None:
        self.ranks, self.slots, self.timeout = int(ranks), max(int(slots), 1), int(timeout_iters)
        self.rank_of: dict = {}
        self.active = [0] * self.ranks  # requests on each rank: held, prefilling or decoding
        self.gen = [0] * self.ranks  # decoding (generation) requests on each rank
        self.dec: set = set()  # keys of the decoding requests
        self.held: list[list] = [[] for _ in range(self.ranks)]
        self.order: list = []  # held prompts in arrival order
        self.count = 0

    def take(self, waiting: deque, key=lambda r: r) -> None:
        """Move the new requests at the head of ``waiting`` onto the least-loaded rank with a free slot (FCFS: stops
        at a request that has a rank already, a preempted one, or when every rank is full)."""
        while waiting and key(waiting[0]) not in self.rank_of:
            rank = min(range(self.ranks), key=lambda r: (self.active[r], r))
            if self.active[rank] >= self.slots:
                return
            req = waiting.popleft()
            self.rank_of[key(req)] = rank
            self.active[rank] += 1
            self.held[rank].append(req)
            self.order.append(req)

    def tick(self) -> list:
        """One iteration of ``_balance_adp_requests``: the prompts it releases (arrival order), [] while it holds."""
        if not self.order:
            return []
        if all(self.held) and all(a - len(h) < self.slots for a, h in zip(self.active, self.held)):
            return self._release()
        self.count += 1
        if self.count >= self.timeout or not all(self.gen):
            return self._release()
        return []

    def _release(self) -> list:
        out, self.order, self.count = self.order, [], 0
        self.held = [[] for _ in range(self.ranks)]
        return out

    def decoding(self, keys) -> None:
        """Requests (by key) that started decoding."""
        for k in keys:
            if k in self.rank_of and k not in self.dec:
                self.dec.add(k)
                self.gen[self.rank_of[k]] += 1

    def preempted(self, key) -> None:
        """A decoding request (by key) went back to the queue: it keeps its rank, not its generation slot."""
        if key in self.dec:
            self.dec.remove(key)
            self.gen[self.rank_of[key]] -= 1

    def done(self, key) -> None:
        """A request (by key) finished and left its rank."""
        self.preempted(key)
        rank = self.rank_of.pop(key, None)
        if rank is not None:
            self.active[rank] -= 1
