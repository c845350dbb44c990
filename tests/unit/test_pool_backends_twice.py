"""cost/pool_backends.with_pool_backends is idempotent (round 46, code46; round 45's code45b found it was not).

The attention backend's wrapper (cost/attention_backend.AttentionBackendPricer) rescales the inner pricer's GQA decode
attention read by the set's HBM fraction over the backend's, so a pricer wrapped twice by it reads the KV cache at the
square of that ratio. with_pool_backends tags the outermost wrapper it returns with what it applied
(cost/pool_backends.pool_backends_key): the same pool again returns that pricer unchanged, another pool's backends
raise.
So serve/open_loop.decode_pool_step takes either the bare pricer or one the pool already wrapped, and serve/point.py's
window step (``_fixed_cycle``, on the pricer ``serve_at_concurrency`` wrapped) is decode_pool_step's.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from jalapeno.cost.moe_backend import KernelMoePricer, MeasuredMoePricer
from jalapeno.cost.pool_backends import applied_pool_key, with_attention_backend, with_pool_backends
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import Deployment, Pool, pool_overlap
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.serve.limits import graph_padded
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

#: vLLM's FA3 decode attention on H200 with an FP8 KV cache reads at 0.739 of the HBM peak (data/attention_backends:
#: aiconfigurator-core 0.12.0 h200_sxm generation_attention_perf, 0.8654 x 0.5499 / 0.6443)
FA3_H200_FP8 = 0.739
SEQS = np.array([3.0, 12.0, 40.0])  # decoding sequences: 3 and 12 pad to the captured 4 and 16, 40 runs eager
CTX = 2048.0


def _setup():
    model = load_model("llama-3.3-70b")
    lay = Layout(tp=2)
    dep = Deployment(get_precision("fp8"), Pool(lay, attention_backend="flash_attn"), cuda_graph_batch_sizes=(4, 16))
    return model, lay, dep, load_pricer("h200")


def _gqa_decode_memory_s(model, pricer, lay, dep) -> float:
    sc = step_cost(model, pricer, lay, dep.precision, Batch.make(decode_seqs=np.array([8.0]), decode_ctx=CTX))
    return sum(r["memory_s"] for r in sc.op_rows(0) if r["kind"] == "attention" and r["kv_bytes"] > 0)


def test_attention_backend_applied_once_however_often_wrapped():
    model, lay, dep, bare = _setup()
    once = with_pool_backends(bare, dep.decode, model, lay, "fp8")
    twice = with_pool_backends(once, dep.decode, model, lay, "fp8")
    assert twice is once
    m0, m1, m2 = (_gqa_decode_memory_s(model, p, lay, dep) for p in (bare, once, twice))
    ratio = bare.efficiency.kernel_hbm("", "fp8") / FA3_H200_FP8  # the set's fraction over FA3's, about 1.17
    assert ratio > 1.1
    assert m1 / m0 == pytest.approx(ratio, rel=1e-9)
    assert m2 == m1  # before round 46: m2 / m1 = ratio again
    # the hazard it guards: the attention wrapper itself, applied over the wrapped pricer, compounds
    raw = with_attention_backend(once, "flash_attn", "fp8")
    assert _gqa_decode_memory_s(model, raw, lay, dep) / m1 == pytest.approx(ratio, rel=1e-9)


def test_tag_survives_another_efficiency_set():
    model, lay, dep, bare = _setup()
    once = with_pool_backends(bare, dep.decode, model, lay, "fp8")
    other = once.with_efficiency(replace(once.efficiency, hbm_fraction=0.5))
    assert applied_pool_key(other) == applied_pool_key(once) is not None
    assert with_pool_backends(other, dep.decode, model, lay, "fp8") is other


def test_another_pools_backends_raise():
    model, lay, dep, bare = _setup()
    once = with_pool_backends(bare, dep.decode, model, lay, "fp8")
    with pytest.raises(SpecError, match="with_pool_backends: pricer.*already carries"):
        with_pool_backends(once, dep.decode, model, lay, "bf16")  # another KV format: another backend speed
    with pytest.raises(SpecError, match="pass the bare pricer"):
        with_pool_backends(once, replace(dep.decode, attention_backend="flashinfer"), model, lay, "fp8")


def test_a_call_that_wraps_nothing_tags_nothing():
    model, lay, _, bare = _setup()
    plain = with_pool_backends(bare, Pool(lay), model, lay, "fp8")  # no backend named: the pricer itself
    assert plain is bare and applied_pool_key(plain) is None


def test_moe_kernel_wrapper_applied_once():
    # vLLM's Marlin MoE on H100 (data/moe_backend_kernels.toml), the gpt-oss-120b experts at TP2
    model, lay = load_model("gpt-oss-120b"), Layout(tp=2)
    pool, bare = Pool(lay, moe_backend="marlin"), load_pricer("h100")
    once = with_pool_backends(bare, pool, model, lay, "bf16")
    assert isinstance(once, (KernelMoePricer, MeasuredMoePricer))
    assert with_pool_backends(once, pool, model, lay, "bf16") is once


def test_decode_pool_step_same_on_bare_or_wrapped_pricer():
    model, lay, dep, bare = _setup()
    once = with_pool_backends(bare, dep.decode, model, lay, "fp8")
    right = decode_pool_step(model, bare, dep, CTX, SEQS).step_time_s
    again = decode_pool_step(model, once, dep, CTX, SEQS).step_time_s
    assert np.array_equal(again, right)  # before round 46 the KV read was priced at the backend's fraction twice


def test_point_window_step_is_decode_pool_step():
    # serve/idle_start._fixed_cycle's batch built by hand on the pricer serve_at_concurrency wrapped once: the same step
    model, lay, dep, bare = _setup()
    once = with_pool_backends(bare, dep.decode, model, lay, "fp8")
    batch = graph_padded(
        dep, lay, Batch.make(decode_seqs=SEQS / lay.pp, decode_ctx=CTX, prefill_tokens=np.zeros_like(SEQS))
    )
    assert batch.decode_seqs.tolist() == [4.0, 16.0, 40.0]  # padded to the captured sizes; 40 above them
    # written out by hand (not cost/step.pool_step_cost, which decode_pool_step calls): the expected value stays independent
    window = step_cost(
        model,
        once,
        lay,
        dep.precision,
        batch,
        dep.mtp,
        dep.memory_fraction,
        pool_overlap(dep.overlap, model, lay),
        dep.memory_profile,
    ).step_time_s
    assert np.array_equal(window, decode_pool_step(model, once, dep, CTX, SEQS).step_time_s)
