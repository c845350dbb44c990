"""CUDA-graph batch padding (Deployment.cuda_graph_batch_sizes, serve/limits.graph_padded).

A padding engine runs a decode-only step of n sequences per attention rank as the smallest captured
size g >= n, the g − n extra rows dummy generation requests of one context token (TensorRT-LLM
``cuda_graph_runner._get_padded_batch``). Expected values are worked out here by hand (the padded
size, the mean context (n·L + (g − n))/g) or priced independently: a step-cost call on the batch
padded by hand, never the serving code's own output.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.pool_backends import with_pool_backends
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.serve.analytic import aggregated_by_batch
from jalapeno.serve.disagg import decode_curve
from jalapeno.serve.limits import graph_padded
from jalapeno.serve.sim.step_time import StepTimer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import Workload

DEP8 = Layout(dp=8, ep=8)
#: the MLPerf v5.1 DeepSeek-R1 configs' cuda_graph_batch_sizes (closed/NVIDIA/configs/B200-SXM-180GBx8/*/deepseek-r1.py)
MLPERF_SIZES = (128, 256, 384, 512)


@pytest.fixture(scope="module")
def b200():
    return load_model("deepseek-r1"), load_pricer("b200", stack="trtllm@1.2.0rc2"), get_precision("fp4")


def _dep(**kw):
    return Deployment(get_precision("fp4"), Pool(DEP8, moe_backend="wideep"), budget_per="rank", **kw)


def test_sizes_are_sorted_and_set_the_graph_ceiling():
    d = _dep(cuda_graph_batch_sizes=[512, 128, 384, 256, 128])
    assert d.cuda_graph_batch_sizes == (128, 256, 384, 512)
    assert d.cuda_graph_max_batch == 512  # TensorRT-LLM: max_batch_size = max(batch_sizes)
    assert d.as_dict()["cuda_graph_batch_sizes"] == [128, 256, 384, 512]
    assert "cuda_graph_batch_sizes" not in _dep().as_dict()


def test_bad_sizes_are_one_clear_error():
    for bad in ([], [0, 128], [128.0], "128", [True]):
        with pytest.raises(SpecError, match="cuda_graph_batch_sizes.*positive integers"):
            _dep(cuda_graph_batch_sizes=bad)
    with pytest.raises(SpecError, match="differs from the largest captured size 512") as e:
        _dep(cuda_graph_batch_sizes=MLPERF_SIZES, cuda_graph_max_batch=256)
    assert "leave cuda_graph_max_batch unset" in e.value.fix


def test_padded_sizes_and_context_by_hand():
    """Per rank: 1 -> 128, 128 -> 128 (a captured size runs as it is), 129 -> 256, 511.5 -> 512,
    600 -> 600 (above the largest: eager, unpadded); a step with prompt tokens is never padded.
    Context of 1 -> 128 at L = 4,000: (1·4000 + 127·1)/128 = 32.2421875."""
    d = _dep(cuda_graph_batch_sizes=MLPERF_SIZES)
    per = np.array([1.0, 128.0, 129.0, 511.5, 600.0, 100.0])
    b = graph_padded(d, DEP8, Batch.make(decode_seqs=per * 8, decode_ctx=4000.0,
                                         prefill_tokens=[0, 0, 0, 0, 0, 804.0]))
    assert (b.decode_seqs / 8).tolist() == [128.0, 128.0, 256.0, 512.0, 600.0, 100.0]
    assert b.decode_ctx[0] == pytest.approx(32.2421875)
    assert b.decode_ctx[1] == 4000.0 and b.decode_ctx[4] == 4000.0 and b.decode_ctx[5] == 4000.0
    # total KV tokens: the real rows' plus one per dummy
    assert b.decode_seqs[2] * b.decode_ctx[2] == pytest.approx(8 * (129 * 4000.0 + 127))
    assert graph_padded(_dep(), DEP8, Batch.make(decode_seqs=8.0, decode_ctx=10.0)).decode_seqs[0] == 8.0


def test_batch_a_rounding_error_above_a_size_runs_at_that_size():
    """512 + 1e-12 per rank (a load solved to the cap, rounding above it) is within the 1e-9 tolerance of the
    captured 512: it runs as 512 per rank with no dummies and no error (round 31: 512 x 8 + 1.1e-13 raised
    ``batch.pad_seqs`` on the GB200 DeepSeek-R1 Server engine). The batch is kept as it is: 4,096 + 1e-11."""
    d = _dep(cuda_graph_batch_sizes=MLPERF_SIZES)
    n = 512.0 * 8 + 1e-11
    b = graph_padded(d, DEP8, Batch.make(decode_seqs=[n, 8.0], decode_ctx=4000.0))
    assert b.decode_seqs.tolist() == [n, 1024.0]
    assert b.pad_seqs.tolist() == [0.0, 1016.0]

def test_aggregated_decode_step_is_the_hand_padded_step(b200):
    """The aggregated step is τ = (1 − f)·t_dec + f·t_mixed, f = B/(g·D) the share of steps carrying a prompt
    chunk (a prompt of ISL <= the token budget is one chunk; B·ISL/D prompt tokens per step). Padding
    moves t_dec alone, so at 155 per rank the step grows by (1 − f) times the difference of two hand
    step-cost calls: 256 per rank at context (155·L + 101)/256 against 155 per rank at L."""
    m, pr, p = b200
    wl = Workload("t", 2, 4000, 1.0)
    b = 8 * 155.0
    padded = aggregated_by_batch(m, pr, _dep(cuda_graph_batch_sizes=MLPERF_SIZES), wl, [b])
    plain = aggregated_by_batch(m, pr, _dep(), wl, [b])
    ctx = wl.decode_ctx
    hand = step_cost(m, pr, DEP8, p, Batch.make(decode_seqs=[b, 8 * 256.0],
                                                 decode_ctx=[ctx, (155 * ctx + 101) / 256]))
    # attention DP8 groups a step's prompt chunks (serve/analytic._chunk_step_load, cost/adp_rank.py): fixed
    # lengths start every user together, so the bunched rate is C − 1 = 1,239 prompts a step and g = dp = 8
    # chunks ride in each step carrying prefill: f = B/(8·D)
    f = b / (wl.mean_osl - 1) / 8
    assert padded.step_time_s[0] - plain.step_time_s[0] == pytest.approx(
        (1 - f) * (hand.step_time_s[1] - hand.step_time_s[0]), rel=1e-9)
    assert padded.step_time_s[0] > plain.step_time_s[0] * 1.05


def test_padding_never_makes_a_step_faster(b200):
    m, pr, p = b200
    wl = Workload("t", 1024, 1024, 1.0)
    bs = 8 * np.array([1.0, 17, 100, 130, 255, 300, 500, 512])
    a = aggregated_by_batch(m, pr, _dep(cuda_graph_batch_sizes=MLPERF_SIZES), wl, bs)
    z = aggregated_by_batch(m, pr, _dep(), wl, bs)
    assert np.all(a.step_time_s >= z.step_time_s * (1 - 1e-12))
    assert a.step_time_s[-1] == pytest.approx(z.step_time_s[-1], rel=1e-12)  # 512 is captured: no dummies


def test_disaggregated_decode_pool_is_padded(b200):
    m, pr, p = b200
    wl = Workload("t", 1024, 1024, 1.0)
    d = _dep(cuda_graph_batch_sizes=MLPERF_SIZES)
    got = decode_curve(m, pr, DEP8, p, wl, [8 * 200.0], limits=d)
    pool_pr = with_pool_backends(pr, d.decode, m, DEP8, p.kv_cache.name)  # the pool's WIDEEP MoE, as the curve prices
    hand = step_cost(m, pool_pr, DEP8, p, Batch.make(decode_seqs=8 * 256.0, decode_ctx=(200 * wl.decode_ctx + 56) / 256))
    assert got.tau_s[0] == pytest.approx(hand.step_time_s[0], rel=1e-12)


def test_simulator_prices_decode_only_steps_at_the_padded_batch(b200):
    m, pr, p = b200
    t = StepTimer(m, pr, DEP8, p, cuda_graph_max_batch=512, graph_sizes=MLPERF_SIZES)
    seqs, ctx = t.inputs(t.key(8 * 150.0, 3000.0, 0, 0, 0))[:2]  # the bucketed inputs the timer prices
    per = seqs / 8  # 150 per rank bucketed: still between 128 and 256
    assert 128 < per <= 256
    hand = step_cost(m, pr, DEP8, p, Batch.make(decode_seqs=8 * 256.0, decode_ctx=(per * ctx + 256 - per) / 256))
    # the bucket's own price (interp=False); with serve/sim/step_time.BATCH_INTERP_ON (round 49) a call blends the
    # two buckets around 1,200 sequences, both padded to 256 a rank, so only the padded mean context differs
    assert t(8 * 150.0, 3000.0, 0, 0, 0, interp=False) == pytest.approx(float(hand.step_time_s[0]), rel=1e-12)
    assert t(8 * 150.0, 3000.0, 0, 0, 0) == pytest.approx(float(hand.step_time_s[0]), rel=2e-3)
    mixed = StepTimer(m, pr, DEP8, p, cuda_graph_max_batch=512, graph_sizes=MLPERF_SIZES)
    plain = StepTimer(m, pr, DEP8, p, cuda_graph_max_batch=512)
    step = (8 * 150.0, 3000.0, 804.0 * 8, 0.0, 8.0)  # a step with prompts in it runs eager-shaped, unpadded
    assert mixed(*step) == plain(*step)


def test_mlperf_dsr1_engines_carry_their_configs_graph_sizes():
    from jalapeno.fit.mlperf import MLPERF_ENGINES, MLPERF_LIMIT_ENGINES, submitted_deployment

    b200 = MLPERF_ENGINES["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Offline"]
    dep, _ = submitted_deployment(b200, "fp4", 8)
    assert dep.cuda_graph_batch_sizes == (128, 256, 384, 512) and dep.cuda_graph_max_batch == 512
    gb = MLPERF_LIMIT_ENGINES["mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_deepseek-r1_Server"]
    assert gb.graph_sizes == (1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512)
    llama = MLPERF_LIMIT_ENGINES["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_Server"]
    assert llama.graph_sizes is None  # its config states no captured sizes
