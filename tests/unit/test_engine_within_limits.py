"""The submissions' declared Server / Interactive engines (fit/mlperf.MLPERF_LIMIT_ENGINES, read by
hand from the configs of mlcommons/inference_results_v5.1 @965182b) and the best load of one declared
deployment within the rules' limits (fit/latency_limits.engine_within_limits)."""

from __future__ import annotations

import dataclasses

import pytest

from jalapeno.errors import SpecError
from jalapeno.fit.latency_limits import engine_within_limits
from jalapeno.fit.mlperf import MLPERF_DISAGG_ENGINES, MLPERF_LIMIT_ENGINES, load_mlperf

DYNAMO = "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_Dynamo_llama3p1-405b_Interactive"


def test_engine_mapping_reads_each_declared_engine_and_leaves_the_rest_on_the_frontier():
    pts = {p.id: p for p in load_mlperf(server_mapping="engine@limits")[0]}
    assert {k for k, p in pts.items() if p.mapping == "matched@limits"} == set(MLPERF_LIMIT_ENGINES) | set(
        MLPERF_DISAGG_ENGINES
    )
    # closed/Nebius/configs/H200-SXM-141GBx8/Server/llama3_1-405b.py: tensor_parallelism 8, runtime
    # max_batch_size 64 (below gpu_batch_size 512), runtime max_num_tokens 2560; 8 GPUs = one instance
    h = pts["mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama3p1-405b_Server"]
    d = h.deployment
    assert (d.decode.layout.tp, d.decode.workers, d.max_running, d.max_tokens_per_step) == (8, 1, 64, 2560)
    assert (h.concurrency, h.tpot_limit_s, h.ttft_limit_s) == (64.0, 0.175, 6.0)
    # closed/NVIDIA/configs/B200-SXM-180GBx8/Interactive/llama3_1-405b.py: TP4 -> 8 / 4 = 2 instances of
    # gpu_batch_size 256 -> 512 slots; runtime max_num_tokens 1536 (the build's is 2048)
    b = pts["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama3p1-405b_Interactive"]
    assert (b.deployment.decode.layout.tp, b.deployment.decode.workers, b.concurrency) == (4, 2, 512.0)
    assert b.deployment.max_tokens_per_step == 1536 and (b.tpot_limit_s, b.ttft_limit_s) == (0.080, 4.5)
    # closed/NVIDIA/configs/B200-SXM-180GBx8/Server/deepseek-r1.py: attention DP 8, EP 8, WIDEEP,
    # 512 per rank (4,096 slots), max_num_tokens 3456 (the Offline config's is 4608)
    r = pts["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server"]
    lay = r.deployment.decode.layout
    assert (lay.dp, lay.ep, r.deployment.decode.moe_backend, r.concurrency) == (8, 8, "wideep", 4096.0)
    assert r.deployment.max_tokens_per_step == 3456 and r.mode == "agg"
    assert any("Server/deepseek-r1.py" in n and "at most 4096 in flight" in n for n in r.notes)
    # no config read: the frontier within the limits, as by default
    assert (
        pts["mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x4_TRT_llama2-70b-99_Interactive"].mapping
        == "frontier@limits"
    )
    assert pts["mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Server"].mapping == "frontier@limits"
    # the default since round 31; frontier@limits prices every Server / Interactive row at the best swept point
    assert {p.id for p in load_mlperf()[0] if p.mapping == "matched@limits"} == set(MLPERF_LIMIT_ENGINES) | {DYNAMO}
    assert not any(p.mapping == "matched@limits" for p in load_mlperf(server_mapping="frontier@limits")[0])


@pytest.fixture(scope="module")
def h200_llama():
    """Nebius H200 Llama-2-70B Interactive: TP1 per GPU, 512 slots, max_num_tokens 256, its dataset."""
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import point_stack, point_workload
    from jalapeno.specs.catalog import load_model

    p = next(
        x
        for x in load_mlperf(server_mapping="engine@limits")[0]
        if x.id == "mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama2-70b-99_Interactive"
    )
    pricer = load_any_pricer("h200", "calibrated", pricer="roofline", stack=point_stack(p))
    return load_model(p.model), pricer, p.deployment, point_workload(p)


@pytest.fixture(scope="module")
def one_within(h200_llama):
    """``within(max_concurrency, tpot_limit_s, ttft_limit_s)``: ``engine_within_limits`` on one instance of
    ``h200_llama`` (steady state, refined), priced once per argument triple for the module. Four tests price the same
    two triples (the 0.6 x full-load TPOT limit with a loose TTFT; 40 ms / 450 ms); a load search is ~1-2 s, and the
    search is a function of its arguments alone (same model, pricer, deployment and workload in, same dict out), so each
    test reads what it would have priced itself. Tests read the dicts and never modify them."""
    memo = {}

    def within(concurrency, tpot_limit_s, ttft_limit_s):
        key = (concurrency, tpot_limit_s, ttft_limit_s)
        if key not in memo:
            model, pricer, dep, wl = h200_llama
            one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
            memo[key] = engine_within_limits(model, pricer, one, wl, concurrency, tpot_limit_s, ttft_limit_s)
        return memo[key]

    return within


def _served(fx, concurrency, workers=1):
    from jalapeno.serve.point import serve_at_concurrency

    model, pricer, dep, wl = fx
    one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=workers))
    return serve_at_concurrency(model, pricer, one, wl, [concurrency], idle_start=False)


def _p99_tpot(fx, concurrency):
    from jalapeno.serve.tpot_tail import poisson_tpot_s

    model, pricer, dep, wl = fx
    one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
    return float(poisson_tpot_s(model, pricer, one, wl, _served(fx, concurrency))[0])


def test_the_best_load_is_the_highest_one_within_the_tpot_limit(h200_llama, one_within):
    """Throughput and TPOT both grow with the load, so within a p99 TPOT limit the best point is the
    highest load whose p99 TPOT (serve/tpot_tail.poisson_tpot_s) meets it: the load 20% above it
    (beyond the next rung, ratio <= 1.1) breaks the limit; loose limits give the throughput of every
    slot filled (the engine's token cap saturates it first: its lowest load reaching it is reported)."""
    loose = one_within(512, 10.0, 1e3)
    assert loose["feasible"] and loose["concurrency"] <= 512
    assert loose["throughput_per_chip"] == pytest.approx(float(_served(h200_llama, 512).throughput_per_chip[0]))
    t_full = float(_served(h200_llama, 512).tpot_s[0])
    limit = 0.6 * t_full
    got = one_within(512, limit, 1e3)
    assert got["feasible"] and got["throughput_per_chip"] < loose["throughput_per_chip"]
    assert (
        float(_served(h200_llama, got["concurrency"]).tpot_s[0]) <= _p99_tpot(h200_llama, got["concurrency"]) <= limit
    )
    assert _p99_tpot(h200_llama, 1.2 * got["concurrency"]) > limit


def test_identical_instances_share_the_load(h200_llama, one_within):
    """Eight TP1 instances: the same throughput per chip as one, at eight times the concurrency."""
    model, pricer, dep, wl = h200_llama
    a = one_within(512, 0.040, 0.450)
    b = engine_within_limits(model, pricer, dep, wl, 8 * 512, 0.040, 0.450)
    assert dep.decode.workers == 8 and b["throughput_per_chip"] == pytest.approx(a["throughput_per_chip"])
    assert b["concurrency"] == pytest.approx(8 * a["concurrency"])


def test_no_load_within_the_limits_says_so_and_bad_input_is_refused(h200_llama):
    model, pricer, dep, wl = h200_llama
    none = engine_within_limits(model, pricer, dep, wl, 4096, 1e-6, 0.450)
    assert not none["feasible"] and none["throughput_per_chip"] == 0.0
    assert "the submitted engine has no load with Poisson p99 TPOT <= 1e-06 s" in none["reason"]
    # a harness dealing queries round-robin over the 8 instances (round 43): the reason names those arrivals
    from jalapeno.serve.finite_run import ServerRun

    rr = engine_within_limits(model, pricer, dep, wl, 4096, 1e-6, 0.450, run=ServerRun(100, round_robin=True))
    assert dep.decode.workers == 8 and not rr["feasible"]
    assert "no load with round-robin (every 8th Poisson arrival an instance) p99 TPOT <= 1e-06 s" in rr["reason"]
    with pytest.raises(SpecError, match="max_concurrency.*give the engine's slots"):
        engine_within_limits(model, pricer, dep, wl, 0.5, 0.040, 0.450)
    with pytest.raises(SpecError, match="ttft_limit_s.*None is not a latency limit"):
        engine_within_limits(model, pricer, dep, wl, 512, 0.040, None)


def test_a_server_run_counted_to_its_last_query_is_below_the_steady_state(h200_llama, one_within):
    """LoadGen counts a Server run to its last-issued query's response (serve/finite_run.server_run_factor):
    the run's throughput is the steady one times a factor below 1, never above the engine's steady best,
    and a run ten times longer loses less to that one latency."""
    from jalapeno.serve.finite_run import ServerRun

    model, pricer, dep, wl = h200_llama
    one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
    steady = one_within(512, 0.040, 0.450)
    short = engine_within_limits(model, pricer, one, wl, 512, 0.040, 0.450, ServerRun(24576, 60.0))
    long = engine_within_limits(model, pricer, one, wl, 512, 0.040, 0.450, ServerRun(24576, 6000.0, 24576 * 40))
    assert steady["run_factor"] == 1.0
    assert 0 < short["run_factor"] < long["run_factor"] < 1.0
    assert short["throughput_per_chip"] < long["throughput_per_chip"] <= steady["throughput_per_chip"]


def test_the_dynamo_row_is_priced_at_its_declared_disaggregated_deployment():
    """closed/NVIDIA/scripts/slurm_llm/dynamo/trtllm/llama3_1-405b/disagg/disagg_18node.sbatch (inference_results_v5.1
    @965182b): NUM_PREFILL_WORKERS=14 and NUM_DECODE_WORKERS=4, tensor_parallel_size 4 in both engine configs
    (14 x 4 + 4 x 4 = 72 GPUs, the row's 18 nodes x 4), prefill max_num_tokens 4096, decode max_batch_size 512
    (4 x 512 = 2,048 slots)."""
    from jalapeno.fit.mlperf_disagg import submitted_disagg_deployment

    p = next(x for x in load_mlperf()[0] if x.id == DYNAMO)
    d = p.deployment
    assert p.mapping == "matched@limits" and d.kind == "disagg" and p.chips == 72
    assert (d.prefill.layout.tp, d.prefill.workers, d.decode.layout.tp, d.decode.workers) == (4, 14, 4, 4)
    assert (d.token_budget, d.max_running, p.concurrency) == (4096, 512, 2048.0)
    assert (p.tpot_limit_s, p.ttft_limit_s) == (0.080, 4.5)
    assert any("submitted deployment" in n and "disagg_18node.sbatch" in n for n in p.notes)
    with pytest.raises(SpecError, match="num_chips.*64 GPUs, but the declared deployment has 72.*submission's GPU"):
        submitted_disagg_deployment(MLPERF_DISAGG_ENGINES[DYNAMO], "nvfp4", 64)


def test_a_disaggregated_engine_is_held_to_its_prefill_queue():
    """A disaggregated deployment is priced whole (both pools): within a loose TPOT limit its best load is set by the
    prefill pool's Poisson TTFT tail, which grows with the load, so a 2 s limit allows less than a 4.5 s one, and the
    chosen load's request rate is below what the prefill pool can serve (14 workers x its prompt tokens per second over
    the mean prompt: the M/G/1 queue is stable only below it)."""
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import point_stack, point_workload
    from jalapeno.serve.disagg import pool_prefill_perf
    from jalapeno.specs.catalog import load_model

    p = next(x for x in load_mlperf()[0] if x.id == DYNAMO)
    model, wl, dep = load_model(p.model), point_workload(p), p.deployment
    pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=point_stack(p))
    loose = engine_within_limits(model, pricer, dep, wl, p.concurrency, 10.0, 4.5)
    tight = engine_within_limits(model, pricer, dep, wl, p.concurrency, 10.0, 2.0)
    assert loose["feasible"] and tight["feasible"]
    assert tight["throughput_per_chip"] < loose["throughput_per_chip"]
    assert loose["ttft_p99_s"] <= 4.5 and tight["ttft_p99_s"] <= 2.0
    cap_rate = 14 * float(pool_prefill_perf(model, pricer, dep, wl).tokens_per_s) / wl.mean_isl
    rate = loose["throughput_per_chip"] * 72 / (wl.mean_isl + wl.mean_osl) / loose["run_factor"]
    assert rate < cap_rate


def test_the_best_load_is_refined_between_the_ladder_rungs(h200_llama, one_within):
    """The ladder's rungs are <= 10% apart in load (LADDER 81 up to 512 slots: ratio 512^(1/80) = 1.081), so a
    TPOT-bound best rung can sit up to one rung below the load where the limit binds; refined by REFINE (12) loads
    between it and the next rung (ratio 1.081^(1/13) = 1.006), the chosen load is within the limit and one 2% above
    it is not, and the refined throughput is never below the rung's."""
    model, pricer, dep, wl = h200_llama
    one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
    limit = 0.6 * float(_served(h200_llama, 512).tpot_s[0])
    coarse = engine_within_limits(model, pricer, one, wl, 512, limit, 1e3, refine=False)
    fine = one_within(512, limit, 1e3)
    assert fine["throughput_per_chip"] >= coarse["throughput_per_chip"]
    assert coarse["concurrency"] <= fine["concurrency"] <= coarse["concurrency"] * 512 ** (1 / 80)
    assert _p99_tpot(h200_llama, fine["concurrency"]) <= limit < _p99_tpot(h200_llama, 1.02 * fine["concurrency"])
    with pytest.raises(SpecError, match="refine.*must be True or False"):
        engine_within_limits(model, pricer, one, wl, 512, limit, 1e3, refine="yes")
