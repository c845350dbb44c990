"""Discrete-event simulation of requests through a serving deployment (``jalapeno simulate``).

Entities: requests (sim/entities.py) and instances with their schedulers (sim/scheduler.py);
events: arrivals, step completions, KV hand-offs (sim/events.py); engine: sim/engine.py.
Iteration durations come from the same step-cost function as the analytic model, memoised on
bucketed inputs (sim/step_time.py). Workloads: InferenceX closed loop at a concurrency
(12·C requests, the first 2·C warm-up and not counted; ``warmup=0``: InferenceX's idle start),
open loop at a rate, agentic sessions (closed loop over C concurrent sessions, think time between
turns), or a trace.
Randomness only through ``numpy.random.default_rng(seed)``: same seed, same result.
The entry point :func:`simulate` (options checked, request plan drawn, run, configuration recorded) lives in
serve/sim/run.py (split from here in round 50, module budget) and stays importable from here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd

from jalapeno.deploy.deployment import Deployment
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.memory_fit import kv_bytes_per_seq_per_chip
from jalapeno.errors import InfeasibleDeployment
from jalapeno.serve.analytic import frontend_s
from jalapeno.serve.disagg import handoff_copies, kv_transfer_s
from jalapeno.serve.sim.bootstrap import Bootstrap
from jalapeno.serve.sim.engine import Engine
from jalapeno.serve.sim.entities import Request
from jalapeno.serve.sim.instances import build_instances
from jalapeno.serve.sim.events import Arrival, KVTransferDone, StepDone, TraceNext
from jalapeno.serve.sim.metrics import downsample, request_frame, steady_state, summarize, task_frame
from jalapeno.serve.sim.scheduler import Instance
from jalapeno.serve.sim.timeseries import BinnedSeries
from jalapeno.serve.sim.trace import Trace, first_failing_row
from jalapeno.serve.sim.workloads import AgenticSpec, RequestSpec, agentic_turns
from jalapeno.cost.pricer import Pricer
from jalapeno.specs.model import ModelSpec
from jalapeno.moved import moved_names


#: Names that lived here until round 50 and now live in serve/sim/run.py; ``from jalapeno.serve.sim.simulation
#: import simulate`` keeps working for callers outside the package, resolved on first use (jalapeno/moved.py:
#: serve/sim/run.py imports this module, so not at import time).
MOVED_TO_RUN = ("simulate",)
__getattr__ = moved_names(__name__, {"jalapeno.serve.sim.run": MOVED_TO_RUN})


@dataclass(frozen=True)
class SimResult:
    """Outcome of a simulation: per-request and per-task frames, time series, summary."""

    summary: dict
    requests: pd.DataFrame
    tasks: pd.DataFrame
    timeseries: pd.DataFrame
    config: dict = field(default_factory=dict)

    def as_dict(self, with_requests: bool = False) -> dict:
        """The result as JSON: config, summary, the timeseries (at most 500 rows) and, with ``with_requests``, every request."""
        d = {
            "config": self.config,
            "summary": self.summary,
            "timeseries": downsample(self.timeseries, 500).to_dict(orient="list"),
        }
        if with_requests:
            d["requests"] = self.requests.to_dict(orient="records")
        return d


#: Requests of a trace or open-loop plan created per feed event (serve/sim/simulation.open_loop)
FEED_CHUNK = 256

#: Load a session's lower-tier prefix when its request is ADMITTED, not when it arrives (round 54). vLLM v1 does so:
#: ``Scheduler.schedule`` asks the KV connector ``get_num_new_matched_tokens`` for a waiting request as it schedules
#: it, allocates HBM blocks for the matched tokens together with the prompt's (``allocate_slots``), and with an
#: asynchronous load parks the request in ``WAITING_FOR_REMOTE_KVS`` until the load is done (vllm-project/vllm,
#: vllm/v1/core/sched/scheduler.py). Here: at admission the prefix is taken from its tier into the request's own HBM
#: reservation (never an evictable LRU entry), the load runs on a reload lane, and the request's prefill waits for it
#: (``Request.lower_ready_s``). Off: the older path, reloaded at arrival into the HBM LRU, where a request that then
#: queues for memory loses it again and prefills its whole context (tests/golden/test_agentic_plan_point_sim.py).
RELOAD_AT_ADMISSION_ON = True


class Simulation:
    """One run. Build with the deployment and a request plan, then :meth:`run`."""

    def __init__(
        self,
        model: ModelSpec,
        pricer: Pricer,
        dep: Deployment,
        *,
        seed: int = 0,
        ctx_ref: float = 4096.0,
        prefix_cache: bool = True,
        kv_tiers: bool = True,
    ) -> None:
        self.model, self.pricer, self.dep = model, pricer, dep
        self.system, self.eff = pricer.system, pricer.efficiency
        # its own stream (MTP draws), independent of the workload's lengths and arrivals
        self.rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[1])
        dep.check_overlap(model)
        self.requests: list[Request] = []
        self.instances: list[Instance] = build_instances(
            model, pricer, dep, self.rng, ctx_ref=ctx_ref, prefix_cache=prefix_cache, kv_tiers=kv_tiers
        )
        self.chips = dep.chips
        self._kv_capacity = sum(i.capacity for i in self.instances if i.role != "prefill")
        self.engine = Engine(self._dispatch)
        self._flying: dict[int, tuple[float, int]] = {}  # issued, not arrived: id -> (arrival s, prompt tokens)
        self.link_free = {i.id: 0.0 for i in self.instances if i.role == "decode"}
        self.boot = Bootstrap.of(self.eff, self.instances)
        self.reload_lanes = {i.id: [0.0] * i.timer.layout.dp for i in self.instances if i.role != "decode"}
        if RELOAD_AT_ADMISSION_ON:
            for inst in self.instances:
                if inst.role != "decode" and inst.cache.lower:
                    inst.reload_lower = partial(self._load_lower, inst)
        self.pending: list[RequestSpec] = []
        self.next_turn: dict[int, list[RequestSpec]] = {}
        self.think_s = 0.0
        self.done_count = 0
        self.target = 0
        self.series = BinnedSeries()
        self.trace: Trace | None = None
        self._session_instance: dict[int, int] = {}
        self.warmup_left = 0
        self.on_progress: Callable[[int, int], None] | None = None

    # ---- request plans -----------------------------------------------------------------
    def _new_request(self, spec: RequestSpec, at: float, counted: bool) -> Request:
        r = Request(len(self.requests), at, spec.isl, spec.osl, spec.session, spec.turn, spec.prefix_group, counted)
        self._check_fits(r)
        self.requests.append(r)
        arrive = at + self._frontend(r)
        self.engine.schedule(arrive, Arrival(r.id), priority=1)
        self._flying[r.id] = (arrive, r.isl)
        return r

    def _in_flight(self) -> list[tuple[float, int]]:
        """(arrival time s, prompt tokens) of the issued requests still in the front end (lookahead)."""
        return list(self._flying.values())

    def _reload(self, inst: Instance, req: Request, now: float) -> float:
        """Delay before ``req`` can be queued (the arrival-time path, :data:`RELOAD_AT_ADMISSION_ON` off): a prefix
        found in a lower tier is reloaded (:meth:`_load_lower`) and put back in HBM when the request is queued."""
        delay, tokens = self._load_lower(inst, req, now)
        if tokens:
            inst.cache.pending[req.session] = tokens
        return delay

    def _load_lower(self, inst: Instance, req: Request, now: float) -> tuple[float, float]:
        """Take ``req``'s session prefix from the lower tier holding it and load it over the tier's link (latency +
        bytes per chip / bandwidth; one lane per attention-DP rank, first free lane) when that is faster than
        recomputing it. Returns (s from ``now`` until it is in HBM, tokens loaded); (0, 0) when none is found or
        it is dropped and recomputed."""
        found = inst.cache.take_lower(req.session)
        if found is None:
            return 0.0, 0.0
        tier, tokens = found
        lay = inst.timer.layout
        load_s = (
            tier.latency_s
            + float(kv_bytes_per_seq_per_chip(self.model, lay, self.dep.precision, tokens)) / tier.bandwidth_bytes_per_s
        )
        if inst.recompute_s(tokens) <= load_s:
            inst.cache.recomputes += 1
            return 0.0, 0.0
        lanes = self.reload_lanes[inst.id]
        j = min(range(len(lanes)), key=lanes.__getitem__)
        start = max(now, lanes[j])
        lanes[j] = start + load_s
        inst.cache.reloads += 1
        req.reload_s = start + load_s - now
        return req.reload_s, tokens

    def _frontend(self, r: Request) -> float:
        """Front-end time before the request reaches the router (serve/analytic.frontend_s)."""
        return frontend_s(self.eff, r.isl)

    def _check_fits(self, r: Request) -> None:
        self.check_lengths(r.isl, r.osl)

    def check_lengths(self, isl: int, osl: int, where: str = "workload") -> None:
        """A request of ``isl`` + ``osl`` tokens must fit the model's context (checked first: it is
        the model's limit whatever the deployment) and one instance's KV cache.

        Raises:
            SpecError: longer than the model's context. InfeasibleDeployment: longer than the KV cache.
        """
        self.model.check_context(isl + osl, where, f"{isl} + {osl} tokens")
        biggest = max(i.capacity for i in self.instances if i.role != "prefill")
        if isl + osl > biggest:
            raise InfeasibleDeployment(
                where,
                f"a request of {isl}+{osl} tokens exceeds the {biggest:.0f}-token KV cache of one instance",
                "shard wider, use a smaller precision or shorter requests",
            )

    def closed_loop(self, specs: list[RequestSpec], concurrency: int, warmup: int) -> None:
        """Issue ``specs`` with at most ``concurrency`` in flight; the first ``warmup`` not counted."""
        self.pending = list(reversed(specs))
        self.warmup_left = warmup
        self.target = len(specs)
        entry = [inst for inst in self.instances if inst.role != "decode"]
        for inst in entry:  # requests on their way (lookahead guesses) can only come to a lone entry instance
            inst.upcoming, inst.in_flight = self._upcoming, self._in_flight if len(entry) == 1 else None
        for _ in range(min(concurrency, len(specs))):
            self._issue_next(0.0)

    def _upcoming(self, n: int) -> list[tuple[int, float]]:
        """(prompt tokens, front-end s) of the next ``n`` closed-loop requests (the step timer's lookahead)."""
        return [(spec.isl, frontend_s(self.eff, spec.isl)) for spec in self.pending[: -n - 1 : -1]]

    def _issue_next(self, now: float) -> None:
        if not self.pending:
            return
        spec = self.pending.pop()
        counted = self.warmup_left <= 0
        self.warmup_left -= 1
        self._new_request(spec, now, counted)

    def agentic(self, spec: AgenticSpec, sessions: int, concurrency: int) -> None:
        """``sessions`` agent tasks, ``concurrency`` in flight; each turn follows the previous one."""
        self.think_s = spec.think_s
        plans = [agentic_turns(spec, s, self.rng) for s in range(sessions)]
        self.target = sum(len(p) for p in plans)
        self.session_queue = list(reversed(plans))
        self.warmup_left = 0
        # the first sessions start at random offsets within one think time, so that equal think
        # times do not keep them in lock-step waves (a steady state has no such phase)
        offsets = self.rng.uniform(0.0, spec.think_s, size=min(concurrency, sessions))
        for off in sorted(offsets):
            self._start_session(float(off))

    def _start_session(self, now: float) -> None:
        if not getattr(self, "session_queue", None):
            return
        turns = self.session_queue.pop()
        first, rest = turns[0], turns[1:]
        self.next_turn[first.session] = list(reversed(rest))
        self._new_request(first, now, True)

    def open_loop(self, specs: list[RequestSpec] | Trace, arrivals_s: np.ndarray | None = None) -> None:
        """Issue ``specs`` at their own arrival times (trace) or at ``arrivals_s``.

        The requests are fed in chunks of :data:`FEED_CHUNK` (a :class:`TraceNext` event at the
        first arrival of a chunk creates its requests and schedules the next chunk), so the event
        heap holds at most one chunk of pending arrivals, not the whole plan.
        """
        tr = Trace.from_specs(specs)
        if arrivals_s is not None:
            tr = Trace(np.asarray(arrivals_s, dtype=float), tr.isl, tr.osl, tr.session, tr.prefix_group)
        check = self.check_lengths if arrivals_s is None else (lambda i, o, _: self.check_lengths(i, o, "workload"))
        first_failing_row(tr, check)  # a trace's first row too long in file order, not its longest
        self.trace = tr
        self.target = len(tr)
        self.warmup_left = 0
        self.engine.schedule(float(tr.arrival_s[0]), TraceNext(0), priority=1)

    def _feed(self, k: int, now: float):
        tr = self.trace
        end = min(k + FEED_CHUNK, len(tr))
        out = []
        for at, isl, osl, sess, grp in zip(
            tr.arrival_s[k:end].tolist(),
            tr.isl[k:end].tolist(),
            tr.osl[k:end].tolist(),
            tr.session[k:end].tolist(),
            tr.prefix_group[k:end].tolist(),
        ):
            r = Request(len(self.requests), at, isl, osl, sess, 0, grp, True)
            self.requests.append(r)
            out.append((at - now + self._frontend(r), Arrival(r.id)))
        if end < len(tr):
            out.append((float(tr.arrival_s[end]) - now, TraceNext(end)))
        return out

    # ---- events ------------------------------------------------------------------------
    def _route(self, req: Request) -> Instance:
        pool = [i for i in self.instances if i.role in ("agg", "prefill")]
        if req.session >= 0 and req.instance >= 0:
            return self.instances[req.instance]  # session affinity keeps the prefix cache warm
        return min(pool, key=lambda i: (i.load, i.id))

    def _dispatch(self, now: float, ev):
        # StepDone first: about four of every five events (one per step; arrivals one per request)
        if isinstance(ev, StepDone):
            inst = self.instances[ev.instance]
            done, prefilled = inst.complete(now)
            out = []
            for req in done:
                out += self._finished(req, now)
            if inst.role == "prefill":
                for req in prefilled:
                    out.append(self._handoff(req, now))
            self._sample(now)
            return out + self._wake(inst, now, force=True)
        if isinstance(ev, TraceNext):
            return self._feed(ev.index, now)
        if isinstance(ev, Arrival):
            req = self.requests[ev.request_id]
            self._flying.pop(req.id, None)
            prev = self._session_instance.get(req.session) if req.session >= 0 else None
            if prev is not None:
                req.instance = prev
            inst = self._route(req)
            if req.session >= 0:
                self._session_instance[req.session] = inst.id
                if not RELOAD_AT_ADMISSION_ON and not req.reload_checked and inst.cache.lower:
                    req.reload_checked = True
                    delay = self._reload(inst, req, now)
                    if delay > 0:
                        return [(delay, Arrival(req.id))]
                if req.session in inst.cache.pending:  # the reloaded prefix is back in HBM
                    inst.cache.insert(req.session, inst.cache.pending.pop(req.session))
            if (
                gate := self.boot.gate_s(req, now)
            ) > 0:  # SGLang: the decode side pre-allocates first (sim/bootstrap.py)
                return [(gate, Arrival(req.id))]
            inst.enqueue(req)
            return self._wake(inst, now)
        if isinstance(ev, KVTransferDone):
            inst = self.instances[ev.instance]
            req = self.requests[ev.request_id]
            req.kv_ready_s = now  # the first token waits for a decode slot too (Instance._admit)
            inst.incoming -= 1
            inst.enqueue(req)
            return self._wake(inst, now)
        raise AssertionError(f"unknown event {ev!r}")

    def _wake(self, inst: Instance, now: float, force: bool = False):
        if inst.busy and not force:
            return []
        dur = inst.plan(now)
        return [] if dur is None else [(dur, StepDone(inst.id))]

    def _handoff(self, req: Request, now: float):
        dec = self.boot.decoder(req)
        copies = handoff_copies(self.model, self.pricer, self.dep.prefill.layout, self.dep.decode.layout)
        t = kv_transfer_s(
            self.model,
            self.pricer,
            self.dep.precision,
            float(req.isl),
            self.dep.prefill.layout.chips,
            dec.chips,
            self.chips,
            copies,
        )
        start = max(now, self.link_free[dec.id])
        self.link_free[dec.id] = start + t
        return (start + t - now, KVTransferDone(req.id, dec.id))

    def _finished(self, req: Request, now: float):
        self.done_count += 1
        if self.on_progress and (self.done_count % 64 == 0 or self.done_count == self.target):
            self.on_progress(self.done_count, self.target)
        if req.session >= 0:
            nxt = self.next_turn.get(req.session)
            if nxt:
                spec = nxt.pop()
                r = Request(
                    len(self.requests),
                    now + self.think_s,
                    spec.isl,
                    spec.osl,
                    spec.session,
                    spec.turn,
                    spec.prefix_group,
                    True,
                )
                self._check_fits(r)
                self.requests.append(r)
                delay = self.think_s + self._frontend(r)
                if self.dep.prefill is not None:  # the next turn's prefix lives on its prefill worker
                    pre = self.instances[self._session_instance.get(req.session, 0)]
                    pre.cache.insert(req.session, req.isl + req.osl)
                return [(delay, Arrival(r.id))]
            self._start_session(now)
            return []
        if self.pending:
            self._issue_next(now)
        return []

    def _sample(self, now: float) -> None:
        run = wait = 0
        used = 0
        for i in self.instances:  # one plain loop: this runs after every step
            run += len(i.decoding) + len(i.prefilling)
            wait += len(i.waiting) + len(i.inbox)
            if i.role != "prefill":
                used += i.used
        cap = self._kv_capacity
        self.series.add(now, run, wait, used / cap if cap else 0.0)

    # ---- run ---------------------------------------------------------------------------
    def run(self) -> SimResult:
        """Run the events to the end and summarise (times in s).

        Raises:
            InfeasibleDeployment: a request never finished (the KV cache cannot hold it).
        """
        wall0 = time.perf_counter()
        end = self.engine.run()
        wall = time.perf_counter() - wall0
        unfinished = [r for r in self.requests if np.isnan(r.done_s)]
        if unfinished:
            raise InfeasibleDeployment(
                "workload",
                f"{len(unfinished)} requests never finished (the KV cache cannot hold them)",
                "shard wider or lower the concurrency",
            )
        df = request_frame(self.requests)
        tasks = task_frame(df)
        summary = summarize(df, self.chips, tasks if not tasks.empty else None)
        rq = self.requests
        summary["steady_state"] = steady_state(
            *(
                np.fromiter((getattr(r, a) for r in rq), dtype=float, count=len(rq))
                for a in ("arrival_s", "first_token_s", "done_s", "isl", "osl")
            ),
            np.fromiter((r.counted for r in rq), dtype=bool, count=len(rq)),
            self.chips,
        )
        summary.update(
            {
                "simulated_s": end,
                "wall_s": wall,
                "speedup": end / wall if wall > 0 else float("inf"),
                "events": self.engine.processed,
                "step_cost_evaluations": sum(
                    t.evaluations for t in {id(i.timer): i.timer for i in self.instances}.values()
                ),
                "preemptions_total": sum(i.preemptions for i in self.instances),
                "prefix_hit_rate_cache": float(np.mean([i.cache.hit_rate for i in self.instances])),
                "kv_reloads": sum(i.cache.reloads for i in self.instances),
                "kv_recomputes": sum(i.cache.recomputes for i in self.instances),
                "reload_s_total": float(sum(r.reload_s for r in self.requests)),
            }
        )
        ts = self.series.frame()
        return SimResult(summary, df, tasks, ts)


def simple_deployment(precision, tp=1, dp=1, ep=1, pp=1) -> Deployment:
    """An aggregated one-instance deployment (helper for tests and examples)."""
    from jalapeno.deploy.deployment import Pool

    return Deployment(precision, Pool(Layout(tp=tp, dp=dp, ep=ep, pp=pp)))
