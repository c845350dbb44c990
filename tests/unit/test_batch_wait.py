"""TensorRT-LLM's batch waiting (serve/batch_wait.py, docs/model.md §8.7 effect 9): the engine's rule in the
simulator's scheduler on a hand-made arrival pattern, the closed form against hand sums, the analytic model
against the simulator, the rows it is switched on for, and the errors for bad settings."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.aic_sweep_launch import with_sweep_batch_wait
from jalapeno.fit.aic_sweeps import load_sweeps, sweep_of
from jalapeno.serve.batch_wait import batch_wait_steps, bunched_arrivals_per_step, prompts_to_fill
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.serve.sim.entities import PrefixCache, Request
from jalapeno.serve.sim.scheduler import Instance
from jalapeno.serve.sim.run import simulate
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import Workload


def _instance(seen, iters=4, tokens=250.0):
    def timer(b, ctx, pre_tokens, pre_ctx, pre_seqs, **kw):
        seen.append(pre_tokens)
        return 0.01

    return Instance(0, "agg", timer, 1, 1e6, 64, 4096, PrefixCache(enabled=False), None, np.random.default_rng(0),
                    batch_wait_iters=iters, batch_wait_tokens=tokens)


def _step(inst, now):
    inst.plan(now)
    inst.complete(now + 0.01)


def test_a_prompt_beside_a_decoding_batch_waits_the_timeout():
    """T = 4, θ = 250 tokens. A lone request meets an idle engine: no hold (no generation request). A
    100-token prompt arriving while it decodes (100 + 1 decode row < 250) is held 4 steps and prefilled in
    the 5th; the count then restarts: a second prompt waits 4 steps again."""
    seen = []
    inst = _instance(seen)
    inst.enqueue(Request(id=0, arrival_s=0.0, isl=50, osl=1000))
    _step(inst, 0.0)
    assert seen == [50]  # prefilled at once
    inst.enqueue(Request(id=1, arrival_s=0.01, isl=100, osl=1000))
    for i in range(5):
        _step(inst, 0.01 * (i + 1))
    assert seen[1:] == [0, 0, 0, 0, 100]  # four held steps, then its prefill
    inst.enqueue(Request(id=2, arrival_s=0.06, isl=100, osl=1000))
    for i in range(5):
        _step(inst, 0.06 + 0.01 * i)
    assert seen[6:] == [0, 0, 0, 0, 100]


def test_the_token_threshold_releases_a_window_early():
    """θ = 250: a first 100-token prompt is held; a second one joins after two held steps; 200 prompt tokens
    + 1 decode row < 250, still held; a third brings 301 ≥ 250 and the three prefill in that step."""
    seen = []
    inst = _instance(seen, iters=40)
    inst.enqueue(Request(id=0, arrival_s=0.0, isl=50, osl=1000))
    _step(inst, 0.0)
    inst.enqueue(Request(id=1, arrival_s=0.01, isl=100, osl=1000))
    _step(inst, 0.01)
    _step(inst, 0.02)
    inst.enqueue(Request(id=2, arrival_s=0.03, isl=100, osl=1000))
    _step(inst, 0.03)
    inst.enqueue(Request(id=3, arrival_s=0.04, isl=100, osl=1000))
    _step(inst, 0.04)
    assert seen == [50, 0, 0, 0, 300]


def test_closed_form_against_hand_sums():
    # K = 2, a = 0.1, T = 10: the opener waits min(10, Exp(mean 10)), E = 10·(1 − 1/e); the second prompt
    # closes the window (waits 0); prompts per window 1 + (1 − 1/e)
    hold, joined = batch_wait_steps(np.array([0.1]), 10, np.array([2]))
    p1 = 1 - math.exp(-1)
    assert hold[0] == pytest.approx(10 * p1 / (1 + p1))
    assert joined[0] == pytest.approx((1 + 3 * p1) / (1 + p1) - 1)  # E[n²]/E[n] − 1, n ∈ {1, 2}
    # timeout only, a·T = 4: T·(1 + a·T/2)/(1 + a·T) = 40·3/5
    assert batch_wait_steps(np.array([0.1]), 40, np.array([4096]))[0][0] == pytest.approx(24.0, rel=1e-9)
    # off: timeout 0
    assert batch_wait_steps(np.array([0.1]), 0, np.array([8]))[0][0] == 0.0
    # K: (0.8·8192 − 64)/1000 = 6.49 → 7 prompts of 1,000 tokens
    assert prompts_to_fill(0.8, 8192, np.array([64.0]), 1000.0).tolist() == [7]
    # the bunch: 9 users, outputs uniform in [0.5·1200, 1200] (std 173.2 steps), k̄ = 4: σ = 346.4
    assert bunched_arrivals_per_step(np.array([9.0]), np.array([0.0]), 1200, 0.5, cycles=4)[0] == \
        pytest.approx(8 / (2 * math.sqrt(math.pi) * 2 * 600 / math.sqrt(12)))


@pytest.mark.parametrize("c", (64, 128))
def test_analytic_hold_agrees_with_the_simulator(c):
    """DeepSeek-R1 FP8 TP8 on B200 at 1k/1k with the InferenceX script's 40 steps / 0.8 (goal 15%); the hold
    is most of the TTFT there (the same deployment without it: about a third)."""
    model, pricer, wl = load_model("deepseek-r1"), load_pricer("b200"), Workload("1k/1k", 1024, 1024)
    off = Deployment(get_precision("fp8"), Pool(Layout(tp=8)))
    on = dataclasses.replace(off, batch_wait_timeout_iters=40, batch_wait_max_tokens_ratio=0.8)
    ana = serve_at_concurrency(model, pricer, on, wl, [c], idle_start=False).record(0)
    base = serve_at_concurrency(model, pricer, off, wl, [c], idle_start=False).record(0)
    sim = simulate(model, pricer, on, workload=wl, concurrency=c, seed=0).summary
    assert ana["ttft_s"] == pytest.approx(sim["ttft_s"]["mean"], rel=0.15), (ana["ttft_s"], sim["ttft_s"]["mean"])
    assert ana["ttft_s"] > 2 * base["ttft_s"]


def test_no_hold_with_attention_dp_or_long_prompts():
    model, pricer = load_model("deepseek-r1"), load_pricer("b200")
    kw = {"batch_wait_timeout_iters": 40, "batch_wait_max_tokens_ratio": 0.8}
    for lay, wl in ((Layout(dp=8, ep=8), Workload("1k/1k", 1024, 1024)), (Layout(tp=8), Workload("8k/1k", 8192, 1024))):
        off = Deployment(get_precision("fp8"), Pool(lay))
        on = dataclasses.replace(off, **kw)
        t = [serve_at_concurrency(model, pricer, d, wl, [64], idle_start=False).record(0)["ttft_s"] for d in (off, on)]
        assert t[0] == t[1]  # attention DP: the engine skips it; an 8k prompt alone passes 0.8 of 8,192


def test_switched_on_for_the_delay_batching_rows_only():
    sweep = next(s for s in load_sweeps() if s.config_key == "dsr1-fp8-b200-trt")
    d = Deployment(get_precision("fp8"), Pool(Layout(tp=8)))
    assert (sweep.batch_wait_timeout_iters, sweep.batch_wait_max_tokens_ratio) == (40, 0.8)
    assert with_sweep_batch_wait(d, sweep, 1024, 1024, 128)[0].batch_waits
    assert not with_sweep_batch_wait(d, sweep, 1024, 1024, 32)[0].batch_waits  # CONC < 64
    assert not with_sweep_batch_wait(d, sweep, 8192, 1024, 128)[0].batch_waits  # the script: 1k/1k only
    adp = Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)))
    assert not with_sweep_batch_wait(adp, sweep, 1024, 1024, 128)[0].batch_waits
    llama = ("70b-b200-trt-fp8", "70b-b200-trt-fp4", "70b-h200-trt-fp8")
    assert not any(s.batch_wait_timeout_iters for s in load_sweeps() if s.config_key not in ("dsr1-fp8-b200-trt", *llama))


# Read by hand (SemiAnalysisAI/InferenceX benchmarks/70b_fp8_b200_trt_slurm.sh, 70b_fp4_b200_trt_slurm.sh and
# 70b_fp8_h200_trt_slurm.sh @9596d23d7, the last commit before Llama 70B's removal on 2025-10-29): `if [[ "$ISL" ==
# "1024" && "$OSL" == "1024" && ${TP} -lt 8 ]]` writes batch_wait_max_tokens_ratio: 0.9 and batch_wait_timeout_iters:
# 20 into llama-config.yml, at every CONC; trtllm-serve gets --max_num_tokens 16384 and kv_cache_config dtype fp8.
@pytest.mark.parametrize("key", ["70b-b200-trt-fp8", "70b-b200-trt-fp4", "70b-h200-trt-fp8"])
def test_llama_70b_trt_rows_wait_at_1k1k_below_tp8_only(key):
    sweep = next(s for s in load_sweeps() if s.config_key == key)
    assert (sweep.model, sweep.version, sweep.measured) == ("llama-3.3-70b", "", "2025-10-29")
    # an aiconfigurator row of that sweep (release blank; its silicon_data_source as the sample writes it)
    source = "source_file=2026-04-06.csv; model=Llama-3.1-70B; silicon_concurrency=8; measured=2025-10-29T00:00:00.000Z"
    assert sweep_of(sweep.system, "llama-3.3-70b", "trtllm unstated", sweep.precision, source) == sweep
    assert (sweep.batch_wait_timeout_iters, sweep.batch_wait_max_tokens_ratio, sweep.batch_wait_below_tp) == (20, 0.9, 8)
    assert (sweep.kv_dtype, sweep.batched_tokens(8192)) == ("fp8", 16384)
    on = [(tp, isl, osl, c) for tp in (1, 2, 4, 8) for isl, osl in ((1024, 1024), (1024, 8192), (8192, 1024))
          for c in (4, 128)
          if with_sweep_batch_wait(Deployment(get_precision("fp8"), Pool(Layout(tp=tp))), sweep, isl, osl, c)[0].batch_waits]
    assert on == [(tp, 1024, 1024, c) for tp in (1, 2, 4) for c in (4, 128)]


def test_llama_70b_1k1k_rows_hold_their_prompts_about_the_timeout():
    """At concurrency 4 a 1k/1k TP1 prompt's window (20 steps, or 0.9 x 16,384 tokens = 14 prompts of <= 1,024
    beside 3 decode rows) closes by the timeout: the other 3 users arrive once per ~1,000-step cycle, so the hold
    is close to 20 decode steps, and the TTFT rises by at least 15 of them over the same deployment without it."""
    model, pricer = load_model("llama-3.3-70b"), load_pricer("b200")
    off = Deployment(get_precision("fp8-tensor"), Pool(Layout(tp=1)), token_budget=16384, max_tokens_per_step=16384)
    on = dataclasses.replace(off, batch_wait_timeout_iters=20, batch_wait_max_tokens_ratio=0.9)
    wl = Workload("1k/1k", 1024, 1024, 0.8)
    r_off, r_on = (serve_at_concurrency(model, pricer, d, wl, [4], idle_start=False).record(0) for d in (off, on))
    assert 15 * r_on["tpot_s"] < r_on["ttft_s"] - r_off["ttft_s"] < 21 * r_on["tpot_s"]


@pytest.mark.parametrize(("kw", "field", "fix"), [
    ({"batch_wait_timeout_iters": -1}, "batch_wait_timeout_iters", "whole number of steps >= 0"),
    ({"batch_wait_timeout_iters": 2.5}, "batch_wait_timeout_iters", "whole number of steps >= 0"),
    ({"batch_wait_max_tokens_ratio": 1.5}, "batch_wait_max_tokens_ratio", r"share of max_num_tokens in \[0, 1\]"),
    ({"batch_wait_max_tokens_ratio": float("nan")}, "batch_wait_max_tokens_ratio", r"in \[0, 1\]"),
])
def test_bad_settings_name_the_field(kw, field, fix):
    with pytest.raises(SpecError, match=f"{field}.*{fix}") as e:
        Deployment(get_precision("fp8"), Pool(Layout(tp=8)), **kw)
    assert "TensorRT-LLM's" in str(e.value)


def test_a_sweep_entry_with_a_bad_tp_condition_is_refused(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('[[sweep]]\nsystem = "b200"\nmodel = "llama-3.3-70b"\nengine = "trtllm"\nversion = ""\n'
                 'precision = "nvfp4"\nmeasured = "2025-10-29"\nconfig_key = "k"\nspec = "none"\nsource = "s"\n'
                 'batch_wait_timeout_iters = 20\nbatch_wait_max_tokens_ratio = 0.9\nbatch_wait_workload = "1k1k"\n'
                 'batch_wait_from_concurrency = 1\nbatch_wait_below_tp = "8"\n')
    with pytest.raises(SpecError, match=r"batch_wait_below_tp.*\$\{TP\} -lt N"):
        load_sweeps.__wrapped__(p)


def test_a_sweep_entry_without_its_load_rule_is_refused(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('[[sweep]]\nsystem = "b200"\nmodel = "deepseek-r1"\nengine = "trtllm"\nversion = "1"\n'
                 'precision = "fp8"\nmeasured = "2026-01-01"\nconfig_key = "k"\nspec = "none"\nsource = "s"\n'
                 'batch_wait_timeout_iters = 40\nbatch_wait_max_tokens_ratio = 0.8\n')
    with pytest.raises(SpecError, match="batch_wait_workload.*batch_wait_from_concurrency"):
        load_sweeps.__wrapped__(p)
