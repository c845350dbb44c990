"""The disaggregated request path's decode-first handshake in the simulator (serve/handshake.py).

With ``Efficiency.disagg_handshake`` = ``decode_prealloc`` (SGLang behind Dynamo's decode-first handler:
the decode worker takes the request, pre-allocates its KV at the top of its next iteration, and only then
may the prefill worker schedule the prompt) a request's decode worker is chosen when it arrives, and its
prompt enters the prefill worker's queue at that decode worker's next iteration boundary (at once if
the decode worker is idle: its loop spins). A prefill queue longer than that wait hides it, as
E[max(U − W, 0)] does in the analytic model. The first token's prebuilt step is the decode
worker's (sim/scheduler.Instance ``prebuilt``). With ``none`` the decode worker is chosen at the
hand-off, least loaded first, as before.

The choice itself follows ``Efficiency.disagg_router`` (serve/rr_wait.py): ``load_aware`` takes the least-loaded
decode worker; ``round_robin`` (Dynamo's frontend without ``--router-mode``) the next one in turn, whatever its
load, so a request can wait on a full worker (FIFO, sim/scheduler.Instance) while another has a free slot.
"""

from __future__ import annotations

from jalapeno.serve.sim.entities import Request
from jalapeno.serve.sim.scheduler import Instance


class Bootstrap:
    """Which decode worker each request pre-allocated on, and when its prompt may enter the prefill queue."""

    def __init__(self, kind: str, decoders: list[Instance], router: str = "load_aware") -> None:
        """``kind``: Efficiency.disagg_handshake; ``decoders``: the decode workers (none when aggregated);
        ``router``: Efficiency.disagg_router."""
        self.on = kind == "decode_prealloc" and bool(decoders)
        self.decoders = decoders
        self.chosen: dict[int, Instance] = {}  # request id -> the decode worker that pre-allocated it
        self.round_robin, self.turn = router == "round_robin", 0

    @classmethod
    def of(cls, eff, instances: list[Instance]) -> Bootstrap:
        """The bootstrap of a simulation's ``instances`` (its decode workers) under efficiency set ``eff``."""
        return cls(eff.disagg_handshake, [i for i in instances if i.role == "decode"], eff.disagg_router)

    def _pick(self) -> Instance:
        """The next request's decode worker: the next in turn (round-robin), else the least loaded."""
        if self.round_robin:
            self.turn += 1
            return self.decoders[(self.turn - 1) % len(self.decoders)]
        return min(self.decoders, key=lambda i: (i.load, i.id))

    def gate_s(self, req: Request, now: float) -> float:
        """Seconds from ``now`` until ``req``'s prompt may enter the prefill queue (0: at once). On its
        first call for a request it picks a decode worker (:meth:`_pick`), which counts the request from
        then on (``incoming``), and waits for the end of that worker's step in flight."""
        if not self.on or req.id in self.chosen:
            return 0.0
        dec = self._pick()
        self.chosen[req.id] = dec
        dec.incoming += 1
        return max(dec.step_end_s - now, 0.0) if dec.busy else 0.0

    def decoder(self, req: Request) -> Instance:
        """The decode worker ``req``'s KV goes to, counting it as ``incoming``: the one chosen at arrival,
        else :meth:`_pick`'s now."""
        dec = self.chosen.pop(req.id, None)
        if dec is None:
            dec = self._pick()
            dec.incoming += 1
        return dec
