"""cost/pricer.with_pool_backends is not idempotent, so serve/open_loop.decode_pool_step takes the bare pricer (round 45,
code45b).

The attention backend's wrapper (cost/attention_backend.AttentionBackendPricer) rescales the inner pricer's GQA decode
attention read by the set's HBM fraction over the backend's, so a pricer wrapped twice reads the KV cache at the
square of that ratio. serve/point.py's window step (``_fixed_cycle``) prices the padded decode batch on the pricer
``serve_at_concurrency`` already wrapped; it stays hand-built, and these tests say why and pin that its step equals
decode_pool_step's on the bare pricer.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.pricer import load_pricer, with_pool_backends
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import Deployment, Pool, pool_overlap
from jalapeno.deploy.layout import Layout
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


def test_attention_backend_twice_compounds():
    model, lay, dep, bare = _setup()
    once = with_pool_backends(bare, dep.decode, model, lay, "fp8")
    twice = with_pool_backends(once, dep.decode, model, lay, "fp8")
    m0, m1, m2 = (_gqa_decode_memory_s(model, p, lay, dep) for p in (bare, once, twice))
    ratio = bare.efficiency.kernel_hbm("", "fp8") / FA3_H200_FP8  # the set's fraction over FA3's, about 1.17
    assert ratio > 1.1
    assert m1 / m0 == pytest.approx(ratio, rel=1e-9)
    assert m2 / m1 == pytest.approx(ratio, rel=1e-9)  # applied again, not left alone: not idempotent


def test_decode_pool_step_takes_the_bare_pricer():
    model, lay, dep, bare = _setup()
    once = with_pool_backends(bare, dep.decode, model, lay, "fp8")
    right = decode_pool_step(model, bare, dep, CTX, SEQS).step_time_s
    wrong = decode_pool_step(model, once, dep, CTX, SEQS).step_time_s
    assert np.all(wrong > right)  # the KV read priced at the backend's fraction twice


def test_point_window_step_is_decode_pool_step():
    # serve/point._fixed_cycle's batch on the pricer serve_at_concurrency wrapped once: the same step, bit for bit
    model, lay, dep, bare = _setup()
    once = with_pool_backends(bare, dep.decode, model, lay, "fp8")
    batch = graph_padded(
        dep, lay, Batch.make(decode_seqs=SEQS / lay.pp, decode_ctx=CTX, prefill_tokens=np.zeros_like(SEQS))
    )
    assert batch.decode_seqs.tolist() == [4.0, 16.0, 40.0]  # padded to the captured sizes; 40 above them
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
    assert np.array_equal(window, decode_pool_step(model, bare, dep, CTX, SEQS).step_time_s)
