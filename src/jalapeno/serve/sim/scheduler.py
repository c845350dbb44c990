"""An instance and its vLLM/SGLang-like scheduler: FCFS admission, continuous batching,
chunked prefill under a token budget, a paged KV cache with its real capacity, preemption by
recompute when the cache overflows, and an LRU prefix cache of finished turns.

Roles: ``agg`` (prefill + decode), ``prefill`` (prefill only; hands the KV off) and ``decode``
(decode only; admits a request once its KV has arrived, reserving its whole context so it is
never preempted). Accounting per step:
- admission: a waiting request is admitted while running < ``max_running`` (and, with
  ``max_tokens_per_step`` T, while the running sequences' decode rows q each stay ≤ T) and its
  prompt's KV fits (evicting prefix-cache entries LRU-first); admission is head-of-line FCFS;
  with ``reserve_outputs`` (an SGLang memory profile for ``ignore_eos`` clients) also only while
  every running request and it can finish with their whole outputs (:meth:`Instance._can_finish`);
- the step carries every decoding sequence plus prefill chunks of admitted requests, oldest
  first, up to ``token_budget`` prefill tokens (and within T − decode rows when T is set), each
  prompt at most its attention-DP rank's share of the budget (cost/adp_rank.py); the
  limits an instance gets are its own (Simulation passes Deployment.prefill_budget /
  step_token_cap / running_limit: an engine limit counted per attention-DP rank, TensorRT-LLM,
  is multiplied by the ranks);
- after the step each decoding sequence holds ``a`` more tokens (a = 1, or the MTP mean);
  if the cache overflows, the most recently admitted decoding request is preempted: its KV is
  freed and it waits at the head of the queue to recompute its prompt and output so far;
- new requests reach the queue when the scheduler polls for them (SGLang ``--scheduler-recv-interval``
  n, ``managers/scheduler_recv_skipper.py``): after a step that carried prefill, after an idle loop,
  and otherwise after every n decode-only steps; until then they wait in an inbox;
- TensorRT-LLM's batch waiting (``batch_wait_iters`` T > 0, ``batch_wait_tokens`` θ): a step whose
  chunks meet a decoding batch runs the decode alone while fewer than T steps were held and the chunks'
  prompts plus the decode rows stay below θ tokens; the step that lets them through resets the count
  (serve/batch_wait.py);
- TensorRT-LLM's attention-DP context balancing (``adp_gate``, serve/sim/adp_gate.py): new prompts wait on their
  rank until every rank has one, or ``timeout_iters`` iterations.
KV is counted in tokens; the block granularity of a paged cache (16-64 tokens) adds under one
block per sequence, which the instance capacity absorbs.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable
from functools import partial

import numpy as np

from jalapeno.deploy.deployment import MTP
from jalapeno.serve.sim.adp_gate import AdpGate
from jalapeno.serve.sim.entities import PrefixCache, Request, cache_key
from jalapeno.serve.sim.lookahead import LOOKAHEAD_STEPS, play_forward
from jalapeno.serve.sim.step_time import StepTimer


def decode_steps(tokens: int, mtp: MTP | None, rng: np.random.Generator) -> int:
    """Verify steps needed to emit ``tokens`` tokens: ``tokens`` without MTP, else a draw.

    With k drafts and acceptance α, a step emits 1 + j tokens, j = the number of leading drafts
    accepted (P(j) = α^j (1 − α) for j < k, α^k for j = k).
    """
    if tokens <= 0:
        return 0
    if mtp is None:
        return tokens
    k, a = mtp.draft_tokens, mtp.acceptance
    n = int(tokens / mtp.tokens_per_step * 1.5) + 8
    while True:
        accepted = np.minimum(rng.geometric(1 - a, size=n) - 1, k) if a > 0 else np.zeros(n, dtype=int)
        emitted = np.cumsum(1 + accepted)
        idx = int(np.searchsorted(emitted, tokens))
        if idx < n:
            return idx + 1
        n *= 2


def _key(req: Request) -> int:
    return req.id


class Instance:
    """One model instance (a replica, or a prefill/decode worker) and its scheduler state."""

    def __init__(
        self,
        idx: int,
        role: str,
        timer: StepTimer,
        chips: int,
        capacity_tokens: float,
        max_running: int,
        token_budget: int,
        prefix_cache: PrefixCache,
        mtp: MTP | None,
        rng: np.random.Generator,
        max_tokens_per_step: int | None = None,
        recv_interval: int = 1,
        reserve_outputs: bool = False,
        prefill_first: bool = False,
        batch_wait_iters: int = 0,
        batch_wait_tokens: float = 0.0,
        prebuilt: bool = False,
        admission_lag: int = 0,
        adp_gate: AdpGate | None = None,
    ) -> None:
        self.id, self.role, self.timer, self.chips = idx, role, timer, chips
        self.capacity = float(capacity_tokens)
        self.rows = 1 + mtp.draft_tokens if mtp else 1  # decode rows per sequence per step
        self.max_tokens = max_tokens_per_step
        if max_tokens_per_step is not None:  # every running sequence decodes q rows per step
            max_running = min(max_running, max(1, max_tokens_per_step // self.rows))
        self.max_running, self.budget = max_running, token_budget
        # a prompt runs on one attention-DP rank, chunked at its share of the budget (cost/adp_rank.py)
        self.prompt_budget = max(int(token_budget / getattr(getattr(timer, "layout", None), "dp", 1)), 1)
        self.cache, self.mtp, self.rng = prefix_cache, mtp, rng
        self.a = mtp.tokens_per_step if mtp else 1.0
        self.waiting: deque[Request] = deque()
        self.inbox: list[Request] = []  # arrived, not yet read by the scheduler (its poll)
        # a decode worker's hand-offs whose KV transfer is under way: the engine has taken the request
        # (TensorRT-LLM's gen server allocates it at DISAGG_GENERATION_INIT, before the transfer), so
        # the router counts it; without this, one prefill step's hand-offs all chose the same worker
        self.incoming = 0
        self.recv_interval = max(int(recv_interval), 1)
        # an overlap loop (serve/overlap_loop.py): what a busy loop reads waits ``admission_lag`` steps in ``staged``
        self.admission_lag = max(int(admission_lag), 0) if role == "agg" else 0
        self.staged: list[list[Request]] = []
        self.reserve_outputs = reserve_outputs and role != "decode"
        # a prefill-first engine (Deployment.prefill_steps "separate", ROCm/ATOM): a step with prompt
        # chunks carries them alone and the decoding sequences wait it out
        self.prefill_first = prefill_first and role == "agg"
        self._prefill_only = False
        # TensorRT-LLM's batch waiting (serve/batch_wait.py): hold new prompts while fewer than
        # ``batch_wait_iters`` steps were held and the step's tokens stay below ``batch_wait_tokens``
        self.batch_wait_iters = int(batch_wait_iters) if role == "agg" and batch_wait_tokens > 0 else 0
        self.batch_wait_tokens, self._held = float(batch_wait_tokens), 0
        self._since_poll = 0
        self._last_prefill = False
        # TensorRT-LLM's attention-DP context balancing (serve/sim/adp_gate.py): new prompts wait on their rank
        self.gate = adp_gate if role == "agg" else None
        # a decode worker with a prebuilt iteration (SGLang, serve/handshake.py): an admitted request rides
        # one step as a prebuilt batch and its first token leaves at that step's end (``_first_at_end``)
        self.prebuilt = prebuilt and role == "decode"
        self._first_at_end: list[Request] = []
        self.step_end_s = 0.0  # when the step in flight ends (the next iteration's top), s
        self.prefilling: list[Request] = []
        self.decoding: dict[int, Request] = {}
        # decoding request ids, oldest first (a dict as an ordered set: a retirement removes in O(1))
        self.admit_order: dict[int, None] = {}
        self.finish: list[tuple[int, int]] = []
        self.step_index = 0
        self.used = 0.0  # KV tokens held by admitted requests
        self.decode_ctx_sum = 0.0
        self.busy = False
        self.preemptions = 0
        self._chunks: list[tuple[Request, int]] = []
        #: (prompt tokens, front-end s) of the next n requests the simulation will issue (for lookahead)
        self.upcoming: Callable[[int], list[tuple[int, float]]] | None = None
        #: (arrival time s, prompt tokens) of requests on their way to this instance (for lookahead)
        self.in_flight: Callable[[], list[tuple[float, int]]] | None = None
        self._now = 0.0  # the time of the last plan
        self._dt_decode_s = self._dt_prefill_token_s = 0.0  # the last steps' times, for lookahead
        #: loads a session's lower-tier prefix at admission (Simulation._load_lower, RELOAD_AT_ADMISSION_ON):
        #: (req, now) -> (s until it is in HBM, tokens loaded); None: no lower tier, or reloaded at arrival
        self.reload_lower: Callable[[Request, float], tuple[float, float]] | None = None
        # a StepTimer prices the lookahead's guesses with a miss; any other callable is used as is
        self._time = partial(timer, hint=self.lookahead) if isinstance(timer, StepTimer) else timer

    def recompute_s(self, tokens: float) -> float:
        """Estimated extra prefill time to recompute ``tokens`` of a prefix: tokens/budget steps of a
        full chunk (one prompt's: its attention-DP rank's budget) at half that prefix beside the
        current decode batch (the reload-or-recompute choice, serve/sessions.py)."""
        b = len(self.decoding)
        ctx = self.decode_ctx_sum / b if b else 0.0
        return self.timer(b, ctx, float(self.prompt_budget), tokens / 2, 1) * tokens / self.prompt_budget

    # ---- queue -------------------------------------------------------------------------
    @property
    def load(self) -> int:
        """Requests routed to this instance and not finished, those whose KV is still on its way in
        (``incoming``, a decode worker) included."""
        return (
            self.incoming
            + len(self.inbox)
            + sum(map(len, self.staged))
            + len(self.waiting)
            + len(self.prefilling)
            + len(self.decoding)
        )

    def enqueue(self, req: Request) -> None:
        """Route ``req`` to this instance: into its inbox, polled at the next step."""
        req.instance = self.id
        self.inbox.append(req)

    def _poll(self) -> None:
        """Read the inbox into the queue when the scheduler polls (module docstring): after a step
        with prefill or an idle loop, else every ``recv_interval`` decode-only steps. An overlap loop
        (``admission_lag`` L > 0) has the step it plans now already launched when it reads: what it reads
        while it has work joins the queue L steps later (``staged``); an idle loop's read joins at once."""
        if self.staged and (len(self.staged) >= self.admission_lag or not self._has_work()):
            self.waiting.extend(self.staged.pop(0))
        while self.staged and not self._has_work():
            self.waiting.extend(self.staged.pop(0))
        if self.busy and not self._last_prefill:
            self._since_poll += 1
            if self._since_poll < self.recv_interval:
                return
        self._since_poll = 0
        if self.admission_lag and self.inbox and self._has_work():
            self.staged.append(list(self.inbox))
        else:
            self.waiting.extend(self.inbox)
        self.inbox.clear()

    def _has_work(self) -> bool:
        """The loop has a step to launch from what it already holds (the overlap loop's step in flight)."""
        return bool(self.decoding or self.prefilling or self.waiting)

    def _free(self, need: float) -> bool:
        short = self.used + self.cache.tokens + need - self.capacity
        if short > 0:
            self.cache.evict(int(short) + 1)
        return self.used + self.cache.tokens + need <= self.capacity

    def _can_finish(self, req: Request) -> bool:
        """SGLang's admission of ``ignore_eos`` requests without a radix cache
        (``PrefillAdder.add_one_req_ignore_eos``; deploy/engine_memory.py): the running requests and
        ``req``, sorted by output tokens left, must all finish in the pool — when the i-th finishes,
        the free tokens plus those the earlier ones freed cover the growth (its tokens left) of each
        of the bs still running, with one token per sequence to spare. A decoding request's output so
        far is ``generated`` at its decode start plus ``a`` tokens per step since (``generated``
        itself moves only at retirement): its tokens left shrink and its occupancy grows as it decodes."""
        held = [(r.osl - r.generated, r.isl + r.generated) for r in self.prefilling]
        for r in self.decoding.values():  # a decoding request's output so far: its steps since it started
            out = min(r.generated + (self.step_index - r.decode_start_step) * self.a, r.osl)
            held.append((r.osl - out, r.isl + out))
        held.append((req.osl - req.generated, req.isl + req.generated))
        held.sort()
        free = self.capacity - self.used - self.cache.tokens - (req.isl + req.generated)
        freed, n = 0.0, len(held)
        for i, (left, occ) in enumerate(held):
            if left <= 0:
                freed += occ
                continue
            if free + freed - left * (n - i) <= n - i:
                return False
            freed += occ
        return True

    def _admit(self, now: float) -> None:
        while self.waiting and len(self.prefilling) + len(self.decoding) < self.max_running:
            req = self.waiting[0]
            entry = 0
            if self.role == "decode":
                need = req.isl + req.osl  # whole context reserved: never preempted
            else:
                key = cache_key(req.session, req.prefix_group)
                entry = 0
                if req.prefill_done == 0 and req.generated == 0 and req.cached_tokens == 0:
                    entry = self.cache.entries.get(key, 0)
                    req.cached_tokens = self.cache.lookup(key, req.isl)
                need = req.isl + req.generated
            if not self._free(need) or (self.reserve_outputs and not self._can_finish(req)):
                if self.role != "decode" and entry:
                    self.cache.insert(key, entry)  # not admitted: its prefix stays cached
                    self.cache.hits_tokens -= req.cached_tokens
                    self.cache.lookup_tokens -= req.isl
                    req.cached_tokens = 0
                break
            self.waiting.popleft()
            self.used += need
            if self.reload_lower is not None and self.role != "decode" and not entry and req.session >= 0:
                self._load_prefix(req, now)
            if math.isnan(req.first_scheduled_s):
                req.first_scheduled_s = now
            if self.role == "decode":
                # the client's first token leaves with the first decode iteration that schedules the
                # request, after its slot and its KV (TensorRT-LLM ``_handle_first_token_response``,
                # SGLang ``process_prebuilt``; docs/simulator.md §5): the slot wait is TTFT
                if self.prebuilt:
                    self._first_at_end.append(req)
                elif math.isnan(req.first_token_s):
                    req.first_token_s = now
                self._start_decode(req, int(self.prebuilt))
            else:
                self.prefilling.append(req)

    def _load_prefix(self, req: Request, now: float) -> None:
        """An admitted request with no HBM prefix loads its session's lower-tier prefix into its own reservation
        (``need`` already counts the whole prompt): those tokens are a hit, and its prefill waits until the load is
        done (``lower_ready_s``; vLLM's ``WAITING_FOR_REMOTE_KVS``, serve/sim/simulation.RELOAD_AT_ADMISSION_ON).
        Only a fresh request: one preempted after its load recomputes, as a preempted HBM hit does."""
        if req.prefill_done or req.generated or req.cached_tokens:
            return
        req.lower_ready_s = 0.0  # a request preempted while its prefix loaded lost it: nothing to wait for
        delay, tokens = self.reload_lower(req, now)
        if tokens <= 0:
            return
        hit = min(int(tokens), max(req.isl - 1, 0))  # the prompt's last token is recomputed for its logits
        req.cached_tokens = hit
        self.cache.hits_tokens += hit
        req.lower_ready_s = now + delay

    def _start_decode(self, req: Request, extra_steps: int = 0) -> None:
        steps = decode_steps(req.osl - req.generated, self.mtp, self.rng) + extra_steps
        req.decode_start_step = self.step_index
        req.decode_steps = steps
        req.finish_step = self.step_index + steps
        self.decoding[req.id] = req
        self.admit_order[req.id] = None
        self.decode_ctx_sum += req.isl + req.generated
        heapq.heappush(self.finish, (req.finish_step, req.id))
        if self.gate is not None:
            self.gate.decoding((req.id,))

    # ---- one step ----------------------------------------------------------------------
    def plan(self, now: float) -> float | None:
        """Poll, admit, build the next batch and return its duration (None when idle)."""
        self._now = now
        self._poll()
        if self.gate is not None:  # the balancing gate's iteration; what it releases goes first
            self.gate.take(self.waiting, key=_key)
            self.waiting.extendleft(reversed(self.gate.tick()))
        self._admit(now)
        budget = self.budget
        if self.max_tokens is not None:
            budget = min(budget, self.max_tokens - len(self.decoding) * self.rows)
        chunks: list[tuple[Request, int]] = []
        pre_tokens = pre_ctx_w = 0.0
        for req in self.prefilling:
            if budget <= 0:
                break
            take = min(req.prefill_needed, budget, self.prompt_budget)
            if take <= 0 or req.lower_ready_s > now:  # its lower-tier prefix is still loading
                continue
            chunks.append((req, take))
            budget -= take
            pre_tokens += take
            pre_ctx_w += take * (req.cached_tokens + req.prefill_done)
        b = len(self.decoding)
        if self.batch_wait_iters and chunks and b:  # PyExecutor._waiting_requests (serve/batch_wait.py)
            tokens = sum(req.isl for req, _ in chunks) + b * self.rows
            if self._held < self.batch_wait_iters and tokens < self.batch_wait_tokens:
                self._held += 1
                chunks, pre_tokens, pre_ctx_w = [], 0.0, 0.0
            else:
                self._held = 0
        self._last_prefill = bool(chunks)
        if b == 0 and not chunks:
            loading = [r.lower_ready_s for r in self.prefilling if r.lower_ready_s > now]
            if loading:  # nothing to run but prefixes loading: the loop idles until the first is in HBM
                self._chunks, self._prefill_only, self.busy = [], True, True
                self.step_end_s = min(loading)
                return self.step_end_s - now
            self.busy = False
            return None
        self._chunks = chunks
        self.busy = True
        self._prefill_only = self.prefill_first and bool(chunks)
        if self._prefill_only:
            b = 0  # the decode batch waits out the prefill step
        ctx = self.decode_ctx_sum / b if b else 0.0
        dur = self._time(b, ctx, pre_tokens, pre_ctx_w / pre_tokens if pre_tokens else 0.0, len(chunks))
        if pre_tokens:
            self._dt_prefill_token_s = max(dur - self._dt_decode_s, 0.0) / pre_tokens
        else:
            self._dt_decode_s = dur
        self.step_end_s = now + dur
        return dur

    def lookahead(self, steps: int = LOOKAHEAD_STEPS) -> np.ndarray:
        """Guesses (M, 5) at the inputs of the next ``steps`` steps, for the step timer to price ahead
        (serve/sim/lookahead.play_forward: the batch played forward; no KV check, preemption or MTP draw)."""
        return play_forward(self, steps)

    def complete(self, now: float) -> tuple[list[Request], list[Request]]:
        """Apply the finished step. Returns (requests done, requests whose prefill finished).

        ``step_index`` counts decode steps: a prefill-only step (prefill-first engine) advances no
        decoding sequence."""
        b = 0 if self._prefill_only else len(self.decoding)
        if not self._prefill_only:
            self.step_index += 1
        for req in self._first_at_end:  # the prebuilt step's result streams the first token
            if math.isnan(req.first_token_s):
                req.first_token_s = now
        self._first_at_end.clear()
        self.decode_ctx_sum += b * self.a
        if self.role != "decode":  # decode workers reserved the whole context at admission
            self.used += b * self.a
        done: list[Request] = []
        while not self._prefill_only and self.finish and self.finish[0][0] <= self.step_index:
            _, rid = heapq.heappop(self.finish)
            req = self.decoding.get(rid)
            if req is None or req.finish_step != self.step_index:
                continue  # stale entry of a preempted request
            self._retire(req, now)
            done.append(req)
        prefilled: list[Request] = []
        for req, take in self._chunks:
            req.prefill_done += take
            if req.prefill_needed == 0:
                self.prefilling.remove(req)
                if math.isnan(req.first_token_s):
                    req.first_token_s = now
                if req.generated == 0:
                    req.generated = 1
                    self.used += 1
                prefilled.append(req)
                if self.role == "prefill":
                    req.first_token_s = float("nan")  # the user sees it after the KV hand-off
                if self.role == "agg":
                    if req.generated >= req.osl:
                        self.used -= req.isl + req.generated
                        req.done_s = now
                        if self.gate is not None:
                            self.gate.done(req.id)
                        done.append(req)
                    else:
                        self._start_decode(req)
                else:  # prefill worker: the KV leaves with the hand-off
                    self.used -= req.isl + req.generated
        self._chunks = []
        self._preempt_if_full()
        return done, prefilled

    def _retire(self, req: Request, now: float) -> None:
        del self.decoding[req.id]
        del self.admit_order[req.id]
        ctx = req.isl + req.osl
        grown = req.isl + req.generated + req.decode_steps * self.a
        self.decode_ctx_sum -= grown
        self.used -= ctx if self.role == "decode" else grown
        req.generated = req.osl
        req.done_s = now
        if self.gate is not None:
            self.gate.done(req.id)
        if self.role == "decode":
            return  # the prefix cache lives with the prefill workers (simulation.py re-inserts it)
        if req.session >= 0:
            self.cache.insert(req.session, ctx)
        elif req.prefix_group >= 0:
            self.cache.insert(cache_key(req.session, req.prefix_group), req.isl)

    def _preempt_if_full(self) -> None:
        if self.role == "decode" or self.used + self.cache.tokens <= self.capacity:
            return
        self.cache.evict(int(self.used + self.cache.tokens - self.capacity) + 1)
        # newest first: requests still prefilling give back their reservation (as vLLM does)
        while self.used > self.capacity and self.prefilling and (len(self.prefilling) > 1 or self.decoding):
            req = self.prefilling.pop()
            self.used -= req.isl + req.generated
            req.prefill_done = 0
            req.cached_tokens = 0
            req.preemptions += 1
            self.preemptions += 1
            self.waiting.appendleft(req)
        while self.used > self.capacity and len(self.admit_order) > 1:
            rid = self.admit_order.popitem()[0]
            req = self.decoding.pop(rid)
            if self.gate is not None:
                self.gate.preempted(req.id)
            progressed = (self.step_index - req.decode_start_step) * self.a
            held = req.isl + req.generated + progressed
            self.used -= held
            self.decode_ctx_sum -= held
            req.generated = min(int(req.generated + progressed), req.osl - 1)
            req.prefill_done = 0
            req.cached_tokens = 0
            req.preemptions += 1
            self.preemptions += 1
            self.waiting.appendleft(req)
