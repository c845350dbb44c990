"""``--routing generated``: generated tokens route with the measured popularity, the prompt uniformly
(specs/routing.py, cost/moe.mixed_touched_fraction, cost/ops.py).

Expected values are computed by hand in the comments or summed directly over the experts
(Σ_e (1 − (1 − k·p_e)^T), not the tabulated interpolation the code uses), never copied from the
code's output.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.moe import busiest_rank_assignments, mixed_touched_fraction
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.routing import MEASURED_ROUTING_SIGMA, expert_popularity, with_routing


def test_mixed_touched_fraction_by_hand():
    # E = 2, k = 1, sigma = 1: z = ±Φ⁻¹(0.75) = ±0.67449, p_hot = 1 / (1 + e^-1.34898) = 0.79397,
    # p_cold = 0.20603. Two generated tokens and one uniform prompt token miss expert e with
    # (1 − p_e)² · (1 − 1/2): mean over e = 0.5 · (0.20603² + 0.79397²) / 2 = 0.16821 → f = 0.83179
    assert float(mixed_touched_fraction(2, 1, 2, 1, 1.0)) == pytest.approx(0.83179, abs=1e-3)
    # all uniform: 1 − (1/2)³ = 0.875; equal sigmas read as one stream of D + P tokens
    assert float(mixed_touched_fraction(2, 1, 2, 1, 0.0)) == pytest.approx(0.875, abs=1e-12)
    assert float(mixed_touched_fraction(2, 1, 2, 1, 1.0, 1.0)) == pytest.approx(
        1 - (0.20603 ** 3 + 0.79397 ** 3) / 2, abs=1e-3)
    # a uniform decode with a skewed prompt is the same sum with the roles swapped
    assert float(mixed_touched_fraction(1, 2, 2, 1, 0.0, 1.0)) == pytest.approx(0.83179, abs=1e-3)
    with pytest.raises(ValueError, match="equal sigmas or a uniform prompt"):
        mixed_touched_fraction(1, 1, 2, 1, 1.0, 0.5)


def test_generated_mode_sets_only_the_decode_sigma():
    m = load_model("deepseek-r1")
    gen, meas, uni = (with_routing(m, mode).moe for mode in ("generated", "measured", "uniform"))
    assert (gen.routing_sigma, gen.decode_routing_sigma) == (0.0, MEASURED_ROUTING_SIGMA)
    assert (meas.routing_sigma, meas.decode_routing_sigma) == (MEASURED_ROUTING_SIGMA, MEASURED_ROUTING_SIGMA)
    assert (uni.routing_sigma, uni.decode_routing_sigma) == (0.0, 0.0)
    with pytest.raises(SpecError, match=r"--routing.*generated routing applies to auxiliary-loss-free.*uniform"):
        with_routing(load_model("gpt-oss-120b"), "generated")


def _expert_weight_bytes(mode: str, batch: Batch, layout: Layout) -> float:
    m = with_routing(load_model("deepseek-r1"), mode)
    sc = step_cost(m, load_pricer("h200"), layout, get_precision("fp8"), batch)
    return next(r["weight_bytes"] for r in sc.op_rows(0) if r["op"] == "moe.experts")


def test_decode_step_reads_the_experts_its_generated_tokens_touch():
    # TP8 (EP1), 32 decoding sequences: expert weight reads scale with the distinct experts touched,
    # Σ_e (1 − (1 − 8·p_e)^32) under the measured popularity against 256·(1 − (31/32)^32) uniform
    p = expert_popularity(256, MEASURED_ROUTING_SIGMA)
    expected = np.sum(1 - (1 - np.minimum(8 * p, 1)) ** 32) / (256 * (1 - (1 - 8 / 256) ** 32))
    decode = Batch.make(decode_seqs=32, decode_ctx=1024)
    ratio = _expert_weight_bytes("generated", decode, Layout(tp=8)) / _expert_weight_bytes("uniform", decode, Layout(tp=8))
    assert ratio == pytest.approx(expected, rel=2e-3)
    assert ratio < 0.8  # the skew saves about a quarter of the reads at this batch
    # a prompt-only step of the same token count routes uniformly in both modes
    prefill = Batch.make(prefill_tokens=32, prefill_seqs=1)
    assert _expert_weight_bytes("generated", prefill, Layout(tp=8)) == _expert_weight_bytes("uniform", prefill, Layout(tp=8))


def test_busiest_rank_share_mixes_by_the_generated_share():
    # an array share is applied element-wise: A = 100 over 2 ranks, q = 0.5 and 0.6:
    # 50 + sqrt(100·.25)·1.1774 = 55.89; 60 + sqrt(100·.24)·1.1774 = 65.77 (sqrt(2 ln 2) = 1.1774)
    got = busiest_rank_assignments(np.array([100.0, 100.0]), 1, 2, share=np.array([0.5, 0.6]))
    assert got.tolist() == pytest.approx([55.89, 65.77], abs=0.01)
