"""scripts/aic_rr_decode_wait.py: round-robin routing at the decode cap, checked against what must hold."""

from __future__ import annotations

from script_module import load_script

rr = load_script("aic_rr_decode_wait")


def test_one_worker_never_waits_and_several_wait_less_than_a_decode_run():
    # one worker of 4 slots and 4 users: every user finds its own slot, whatever the lengths
    assert rr.mean_wait_s(1, 4, 8192, 0.01) == 0.0
    # 15 workers of 4 slots (GB200 config 374 at C = 60, 1k/8k, ~10 ms TPOT): round-robin sends requests to full
    # workers, so the mean wait is positive, and below one whole decode run (8,192 x 10 ms = 82 s), which a
    # request on a full worker waits at most for each request ahead of it in that worker's queue
    w = rr.mean_wait_s(15, 4, 8192, 0.01)
    assert 0.1 < w < 0.1 * 8192 * 0.01
    # the same layout at 1k/1k (S ~ 10 s): eight times shorter runs, a shorter wait
    assert rr.mean_wait_s(15, 4, 1024, 0.01) < w / 4
