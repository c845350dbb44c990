"""The wait a closed loop at its decode cap meets when Dynamo routes round-robin (issue 18; round 25 diagnosis, shipped
in round 29 as serve/rr_wait.py; scripts/rr_wait_check.py checks that closed form on a grid).

A disaggregated aiconfigurator TensorRT-LLM row whose concurrency equals its recipe's decode cap, C = N = W x B
(W decode workers of B slots, fit/aic_decode_caps.py), has a free slot for every user in total, yet its 1k/8k rows
measure seconds of TTFT where the model has 0.14-0.32 s. The srt-slurm runners start the Dynamo frontend without a
router mode (NVIDIA/srt-slurm @5063eb43 src/srtctl/frontends/dynamo.py: ``python3 -m dynamo.frontend
--http-port=...``; its recipes' ``frontend`` sections set no ``args``), and Dynamo's frontend routes round-robin by
default (ai-dynamo/dynamo docs/pages/components/frontend/configuration.md: ``--router-mode`` default
``round-robin``). Round-robin sends each new request to the next worker whatever its load; output lengths drawn
uniformly in [0.8 L, L] (InferenceX's random range) free slots on the workers out of that order, so some requests
wait for a slot on a full worker while another has one free.

This script simulates that: C users start together, each request's prefill takes ``PREFILL_S``, then it is routed
round-robin to a decode worker, waits FIFO for one of its B slots, and decodes OSL x TPOT (the row's measured TPOT);
on completion the user sends the next, R = 10 requests per user (serve/queueing.REQUESTS_PER_USER). It prints, per
row at its cap with W > 1, the mean wait over 5 seeds beside the row's measured TTFT and the model's prediction
(a validate CSV). Run: python scripts/aic_rr_decode_wait.py VALIDATE.csv
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rr_wait_check import simulated_wait_s  # noqa: E402  (the one request-level simulation of round-robin routing)


def mean_wait_s(workers: int, slots: int, osl: int, tpot_s: float, seed: int = 0) -> float:
    """Mean wait for a decode slot (s) of a closed loop of workers x slots users, round-robin routing (module docstring):
    scripts/rr_wait_check.simulated_wait_s at the cap (C = W x B; its prefill 0.15 s, outputs in [0.8 L, L], R = 10).

    >>> round(mean_wait_s(1, 4, 1024, 0.01), 6)  # one worker: every user has its own slot
    0.0
    """
    return simulated_wait_s(workers, slots, workers * slots, osl, tpot_s, seed)


def main(validate_csv: str) -> None:
    from jalapeno.fit.validate import load_aiconfigurator

    pred = pd.read_csv(validate_csv)
    pred = pred[(pred.source == "aiconfigurator") & (pred.metric == "ttft_s")].set_index("id")
    print("row | W x B | OSL | measured TTFT s | model s | round-robin wait s")
    for p in load_aiconfigurator()[0]:
        d = p.deployment
        if p.mode != "disagg" or d.max_running is None or d.decode.workers < 2 or p.id not in pred.index:
            continue
        slots = d.max_running * d.decode.layout.dp
        if p.concurrency != d.decode.workers * slots:
            continue
        wait = sum(mean_wait_s(d.decode.workers, slots, p.osl, p.measured["tpot_s"], s) for s in range(5)) / 5
        print(
            f"{p.id[4:]} | {d.decode.workers} x {slots} | {p.osl} | {p.measured['ttft_s']:.2f} | "
            f"{pred.loc[p.id, 'predicted']:.2f} | {wait:.2f}"
        )


if __name__ == "__main__":
    main(sys.argv[1])
