"""TensorRT-LLM's attention-DP context balancing (serve/adp_balance.adp_balance_wait_s, docs/model.md
§8.7 effect 5) and the H200 TRT-LLM launch recipe that turns it on (data/engines.toml
trtllm-h200-dsr1-fp8-mtp).

Expected waits come from a direct simulation of the gate's rule (a prompt is held until every
attention-DP rank has one; Poisson arrivals dealt to the least-loaded rank, or to a uniformly
random rank when the slots are full), not from the closed form; recipe values are quoted from
InferenceX benchmarks/dsr1_fp8_h200_trt_mtp_slurm.sh @008b91a9dd78 (timeout_iters 60,
max_batch_size CONC/TP with attention DP).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import MTP, Deployment, Pool
from jalapeno.deploy.engines import launch_limits
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.serve.analytic import solve_concurrency
from jalapeno.serve.adp_balance import adp_balance_wait_s
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import Workload


def _simulate_gate(dp: int, lam: float, random_rank: bool, rounds: int, seed: int = 0) -> float:
    """Mean wait of a prompt under the gate rule: held until every rank holds one, then all released."""
    rng = np.random.default_rng(seed)
    waits, t, nxt = [], 0.0, 0
    for _ in range(rounds):
        held: dict[int, list[float]] = {}
        while len(held) < dp:
            t += rng.exponential(1.0 / lam)
            rank = int(rng.integers(dp)) if random_rank else nxt % dp
            nxt += 1
            held.setdefault(rank, []).append(t)
        waits += [t - a for arr in held.values() for a in arr]
    return float(np.mean(waits))


@pytest.mark.parametrize("dp", [2, 4, 8])
def test_full_slots_wait_matches_simulated_gate(dp):
    got = float(adp_balance_wait_s(dp, 2.0, 1.0, 10**6, True))
    assert got == pytest.approx(_simulate_gate(dp, 2.0, True, 40000), rel=0.03)


@pytest.mark.parametrize("dp", [2, 8])
def test_free_slots_wait_matches_simulated_gate(dp):
    got = float(adp_balance_wait_s(dp, 2.0, 1.0, 10**6, False))
    assert got == pytest.approx(_simulate_gate(dp, 2.0, False, 40000), rel=0.03)


def test_wait_capped_at_timeout_and_zero_without_gate():
    assert float(adp_balance_wait_s(8, 0.01, 0.05, 60, True)) == pytest.approx(60 * 0.05)
    assert float(adp_balance_wait_s(8, 2.0, 0.05, None, True)) == 0.0
    assert float(adp_balance_wait_s(1, 2.0, 0.05, 60, True)) == 0.0


def test_h200_trt_recipe_turns_the_gate_on_and_sizes_slots_to_the_load():
    kw, note = launch_limits("h200", "deepseek-r1", "trt", "fp8", 1, 8192, 1024, 256)
    assert kw["adp_balance_timeout_iters"] == 60 and kw["max_running"] == 256
    assert kw["cuda_graph_max_batch"] == 128 and "trtllm-h200-dsr1-fp8-mtp" in note


def test_gate_adds_its_wait_to_ttft_and_groups_the_prefill():
    model, pricer = load_model("deepseek-r1"), load_pricer("h200")
    dep = Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)), mtp=MTP(1, 0.85), max_running=256,
                     adp_balance_timeout_iters=60)
    wl = Workload("8k1k", 8192, 1024, 0.8)
    on = solve_concurrency(model, pricer, dep, wl, [256])
    off = solve_concurrency(model, pricer, dataclasses.replace(dep, adp_balance_timeout_iters=None), wl, [256])
    lam = float(on.request_rate_per_s[0])
    want = float(adp_balance_wait_s(8, lam, float(on.step_time_s[0]), 60, True))
    assert want > 1.0  # seconds: every rank must have received a prompt
    # the gate's wait is on top of what the engine would take anyway (same fixed point, less batch)
    assert float(on.ttft_s[0]) - float(off.ttft_s[0]) == pytest.approx(want, rel=0.1)
    # the held prompts start together, one on each rank: a step carrying prefill costs about one rank's
    # chunk either way (cost/adp_rank.py), so grouping 8 of them takes fewer such steps, and the
    # throughput is higher than the ungated engine's (the balancing's purpose), not lower
    assert float(on.throughput_per_chip[0]) > float(off.throughput_per_chip[0])
    # attention TP has no DP ranks to balance: no wait
    tp = dataclasses.replace(dep, decode=Pool(Layout(tp=8, ep=8)))
    tp_off = dataclasses.replace(tp, adp_balance_timeout_iters=None)
    assert float(solve_concurrency(model, pricer, tp, wl, [64]).ttft_s[0]) == pytest.approx(
        float(solve_concurrency(model, pricer, tp_off, wl, [64]).ttft_s[0]))


def test_bad_timeout_is_one_clear_error():
    with pytest.raises(SpecError, match="adp_balance_timeout_iters.*positive integer"):
        Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)), adp_balance_timeout_iters=0)


@pytest.mark.parametrize("cmd", [("predict",), ("simulate", "--requests", "20")])
def test_a_recipe_whose_running_cap_is_the_concurrency_needs_one(capsys, cmd):
    from cli_runner import check_error, run

    # max_running_is_concurrency with an open-loop rate ran without any running cap, silently
    check_error(*run(capsys, *cmd, "-s", "h200", "-r", "2", "--engine", "trtllm-h200-dsr1-fp8-mtp"),
                "--engine: trtllm-h200-dsr1-fp8-mtp sizes its running requests to the benchmark's concurrency",
                "pass --max-running N with the rate, or use --concurrency")


def test_the_clock_switch_is_read_at_the_call():
    """review39: ``clock`` defaulted to ADP_CLOCK_MEAN bound when the module loaded, so setting the switch (as its
    docstring says turns the clock mean on) changed nothing. By hand, dp = 2, λ = 1/s, Θ = 10 x 0.1 s = 1 s, x = 1:
    off, min((2 − 1)/(2·1), 1) = 0.5 s; on, P(Pois(1) > 1)/(λ·(P(Pois(1) > 0) + P(Pois(1) > 1))) =
    (1 − 2/e)/(2 − 3/e) = 0.2948 s."""
    from jalapeno.serve import adp_balance

    e = np.e
    assert float(adp_balance_wait_s(2, 1.0, 0.1, 10, False)) == pytest.approx(0.5)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(adp_balance, "ADP_CLOCK_MEAN", True)
        assert float(adp_balance_wait_s(2, 1.0, 0.1, 10, False)) == pytest.approx((1 - 2 / e) / (2 - 3 / e), rel=1e-9)
        assert float(adp_balance_wait_s(2, 1.0, 0.1, 10, False, clock=False)) == pytest.approx(0.5)
