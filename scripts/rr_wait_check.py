"""Round-robin decode-slot wait: the closed form (serve/rr_wait.py) against a request-level simulation, on a grid.

C users in a closed loop over N decode workers of B slots each (C ≤ N·B). Each request's prefill and hand-off take
``PREFILL_S``; the front end then routes it round-robin to the next decode worker, where it waits FIFO for one of
its B slots and decodes OSL x TPOT, OSL uniform on [r·L, L] (InferenceX's random range, r = 0.8); on completion its
user sends the next, R = 10 requests per user (serve/queueing.REQUESTS_PER_USER). Prints, per (N, B, C, L), the
simulated mean wait over ``SEEDS`` seeds beside serve/rr_wait.router_wait_s and their ratio. Nothing is fitted:
the closed form takes only N, B, C, the lengths and the TPOT. Run: python scripts/rr_wait_check.py
"""

from __future__ import annotations

import heapq
import random

#: a prompt's prefill and hand-off before it is routed, s (the model's lone-prompt TTFT on the GB300 rows: 0.14-0.32 s)
PREFILL_S = 0.15
#: seeds averaged per grid point
SEEDS = 8
#: (N workers, B slots, C users) of the grid; every L of LENGTHS at TPOT 10 ms
GRID = [(2, 2, 4), (4, 1, 4), (7, 1, 7), (2, 4, 8), (3, 8, 24), (4, 15, 60), (4, 15, 52), (2, 30, 60), (8, 16, 128),
        (4, 16, 48), (1, 8, 8), (16, 8, 128), (64, 1, 64), (4, 64, 256), (2, 128, 256)]
LENGTHS = (1024, 8192)
TPOT_S = 0.01


def simulated_wait_s(workers: int, slots: int, users: int, osl: int, tpot_s: float, seed: int = 0,
                     ratio: float = 0.8, requests_per_user: int = 10) -> float:
    """Mean wait for a decode slot (s) of ``users`` closed-loop users routed round-robin (module docstring).

    >>> simulated_wait_s(1, 4, 4, 1024, 0.01)  # one worker: every user keeps its own slot
    0.0
    """
    rnd = random.Random(seed)
    events: list[tuple] = []  # (time, seq, kind, payload)
    busy, queues, waits, seq, issued, turn = [0] * workers, [[] for _ in range(workers)], [], 0, 0, 0
    for _ in range(users):
        issued += 1
        events.append((PREFILL_S, seq, "routed", rnd.uniform(ratio * osl, osl)))
        seq += 1
    heapq.heapify(events)
    while events:
        t, _, kind, x = heapq.heappop(events)
        if kind == "routed":
            w, turn = turn % workers, turn + 1
            if busy[w] < slots:
                busy[w] += 1
                waits.append(0.0)
                heapq.heappush(events, (t + x * tpot_s, seq, "done", w))
            else:
                queues[w].append((t, x))
        else:
            busy[x] -= 1
            if queues[x]:
                t0, o = queues[x].pop(0)
                busy[x] += 1
                waits.append(t - t0)
                heapq.heappush(events, (t + o * tpot_s, seq, "done", x))
            if issued < requests_per_user * users:
                issued += 1
                heapq.heappush(events, (t + PREFILL_S, seq, "routed", rnd.uniform(ratio * osl, osl)))
        seq += 1
    return sum(waits) / len(waits)


def main() -> None:
    from jalapeno.serve.rr_wait import router_wait_s
    from jalapeno.specs.workload import Workload

    print("N x B | C | L | simulated s | closed form s | ratio")
    for n, b, c in GRID:
        for osl in LENGTHS:
            sim = sum(simulated_wait_s(n, b, c, osl, TPOT_S, s) for s in range(SEEDS)) / SEEDS
            wl = Workload("grid", 1024, osl, range_ratio=0.8)
            model = float(router_wait_s("round_robin", c / n, b, n, TPOT_S, wl, PREFILL_S))
            ratio = f"{model / sim:.2f}" if sim > 0 else "-"
            print(f"{n} x {b} | {c} | {osl} | {sim:.3f} | {model:.3f} | {ratio}")


if __name__ == "__main__":
    main()
