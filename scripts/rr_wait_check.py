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
GRID = [
    (2, 2, 4),
    (4, 1, 4),
    (7, 1, 7),
    (2, 4, 8),
    (3, 8, 24),
    (4, 15, 60),
    (4, 15, 52),
    (2, 30, 60),
    (8, 16, 128),
    (4, 16, 48),
    (1, 8, 8),
    (16, 8, 128),
    (64, 1, 64),
    (4, 64, 256),
    (2, 128, 256),
]
LENGTHS = (1024, 8192)
TPOT_S = 0.01


def simulated_waits_by_wave(
    workers: int,
    slots: int,
    users: int,
    osl: int,
    tpot_s: float,
    seed: int = 0,
    ratio: float = 0.8,
    requests_per_user: int = 10,
    prefill_s: float = PREFILL_S,
) -> tuple[list[float], list[int]]:
    """Summed wait for a decode slot (s) and request count of each wave (a user's k-th request is in wave k), for
    ``users`` closed-loop users routed round-robin (module docstring); ``prefill_s`` is each request's time before it
    is routed. The run issues ``requests_per_user`` x ``users`` requests in all (a fast user may send more than
    ``requests_per_user``: the lists then run past it).

    >>> simulated_waits_by_wave(1, 4, 4, 1024, 0.01)[1]  # one worker: four requests a wave, none waits
    [4, 4, 4, 4, 4, 4, 4, 4, 4, 4]
    """
    rnd = random.Random(seed)
    events: list[tuple] = []  # (time, seq, kind, payload)
    busy, queues, seq, turn, issued = [0] * workers, [[] for _ in range(workers)], 0, 0, users
    wave_of = [1] * users  # the wave of each user's request in flight
    total, count = [0.0] * requests_per_user, [0] * requests_per_user
    for u in range(users):
        events.append((prefill_s, seq, "routed", (u, rnd.uniform(ratio * osl, osl))))
        seq += 1
    heapq.heapify(events)
    while events:
        t, _, kind, x = heapq.heappop(events)
        if kind == "routed":
            w, turn = turn % workers, turn + 1
            if busy[w] < slots:
                busy[w] += 1
                count[wave_of[x[0]] - 1] += 1
                heapq.heappush(events, (t + x[1] * tpot_s, seq, "done", (w, x[0])))
            else:
                queues[w].append((t, x))
        else:
            w, u = x
            busy[w] -= 1
            if queues[w]:
                t0, (u2, o) = queues[w].pop(0)
                busy[w] += 1
                total[wave_of[u2] - 1] += t - t0
                count[wave_of[u2] - 1] += 1
                heapq.heappush(events, (t + o * tpot_s, seq, "done", (w, u2)))
            if issued < requests_per_user * users:
                issued, wave_of[u] = issued + 1, wave_of[u] + 1
                if wave_of[u] > len(total):
                    total.append(0.0)
                    count.append(0)
                heapq.heappush(events, (t + prefill_s, seq, "routed", (u, rnd.uniform(ratio * osl, osl))))
        seq += 1
    return total, count


def simulated_wait_s(
    workers: int,
    slots: int,
    users: int,
    osl: int,
    tpot_s: float,
    seed: int = 0,
    ratio: float = 0.8,
    requests_per_user: int = 10,
) -> float:
    """Mean wait for a decode slot (s) of ``users`` closed-loop users routed round-robin (module docstring).

    >>> simulated_wait_s(1, 4, 4, 1024, 0.01)  # one worker: every user keeps its own slot
    0.0
    """
    total, count = simulated_waits_by_wave(workers, slots, users, osl, tpot_s, seed, ratio, requests_per_user)
    return sum(total) / sum(count)


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
