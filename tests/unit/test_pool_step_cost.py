"""cost/step.pool_step_cost and pool_step_times (round 47, code47): one pool's step of a deployment as it runs.

The helper replaces ~25 hand-written ``step_cost(model, pricer, lay, dep.precision, batch, dep.mtp,
dep.memory_fraction, pool_overlap(dep.overlap, model, lay), dep.memory_profile)`` calls. Expected values come from
the deployment's fields spelled out by hand and from the rules the helper documents (two-batch overlap only on a
pool with an EP all-to-all; the deployment's MTP drafts; its memory fraction bounds the memory fit), never from the
helper's own output.
"""

from __future__ import annotations

import numpy as np

from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, pool_step_cost, pool_step_times, step_cost
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.mtp import MTP
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

R1 = load_model("deepseek-r1")
FP8 = get_precision("fp8")
DEC = Layout(tp=1, dp=8, ep=8)  # attention DP with EP: the MoE dispatch/combine is an all-to-all
PRE = Layout(tp=8)  # TP only: no all-to-all to hide
PR = load_pricer("h200")
DECODE = Batch.make(decode_seqs=np.array([64.0, 256.0]), decode_ctx=2048.0)
PROMPT = Batch.make(prefill_tokens=np.array([8192.0]), prefill_seqs=np.array([1.0]), prefill_ctx=np.array([0.0]))


def _dep(**kw) -> Deployment:
    base = dict(prefill=Pool(PRE), mtp=MTP(1, 0.8), overlap="tbo", memory_fraction=0.9)
    return Deployment(FP8, Pool(DEC), **(base | kw))


def test_each_pool_runs_the_overlap_its_layout_allows():
    dep = _dep()
    assert pool_step_cost(R1, PR, dep, DEC, DECODE).overlap == "tbo"
    # SGLang's two-batch overlap needs the DeepEP dispatcher: the TP8 prefill pool beside it runs serially
    assert pool_step_cost(R1, PR, dep, PRE, PROMPT).overlap == "none"
    assert pool_step_cost(R1, PR, _dep(overlap="none"), DEC, DECODE).overlap == "none"


def test_the_pool_step_is_step_cost_with_the_deployment_spelled_out():
    dep = _dep()
    got = pool_step_cost(R1, PR, dep, DEC, DECODE)
    by_hand = step_cost(R1, PR, DEC, FP8, DECODE, MTP(1, 0.8), 0.9, "tbo", None)
    for field in ("step_time_s", "interval_s", "draft_s", "feasible"):
        np.testing.assert_array_equal(getattr(got, field), getattr(by_hand, field))
    serial = step_cost(R1, PR, DEC, FP8, DECODE, MTP(1, 0.8), 0.9, "none", None)
    assert not np.array_equal(got.step_time_s, serial.step_time_s)  # the check can tell the overlap apart


def test_the_deployment_mtp_drafts_and_its_memory_fraction_bounds_the_fit():
    with_mtp = pool_step_cost(R1, PR, _dep(), DEC, DECODE)
    plain = pool_step_cost(R1, PR, _dep(mtp=None), DEC, DECODE)
    assert np.all(with_mtp.draft_s > 0) and np.all(plain.draft_s == 0)
    assert np.all(with_mtp.step_time_s > plain.step_time_s)
    # DeepSeek-R1's ~671 GB of FP8 weights over 8 experts ranks, attention replicated on every DP rank: more than
    # 671/8 = 84 GB a chip, above half of an H200's 141 GB, below 0.9 of it
    assert pool_step_cost(R1, PR, _dep(), DEC, DECODE).feasible.all()
    assert not pool_step_cost(R1, PR, _dep(memory_fraction=0.5), DEC, DECODE).feasible.any()


def test_pool_step_times_are_the_pool_steps_times():
    dep = _dep()
    sc = pool_step_cost(R1, PR, dep, DEC, DECODE)
    t, i = pool_step_times(R1, PR, dep, DEC, DECODE)
    np.testing.assert_array_equal(t, sc.step_time_s)
    np.testing.assert_array_equal(i, sc.interval_s)
