"""A finite run issued at once (serve/finite_run.py): the drain after the queue empties, by hand and
against a step-by-step simulation written here, and the MLPerf Offline rows that carry it."""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.errors import SpecError
from jalapeno.serve.finite_run import drain_factor, finite_run_factor, residual_survival


def test_residual_survival_by_hand():
    """Lengths 1 and 3, equally likely: a random moment falls in a 3-token request 3/4 of the time,
    its remaining output uniform on 1..3; in a 1-token one 1/4, remaining 1. P(R > 0) = 1,
    P(R > 1) = 3/4 x 2/3 = 1/2, P(R > 2) = 3/4 x 1/3 = 1/4. Fixed length 4: (4 - k) / 4."""
    assert residual_survival([1, 3]).tolist() == pytest.approx([1.0, 0.5, 0.25])
    assert residual_survival([4, 4, 4]).tolist() == pytest.approx([1.0, 0.75, 0.5, 0.25])


def test_drain_factor_constant_and_linear_step_by_hand():
    """Lengths {1, 3}: E[L] = 2, E[R] = 1.75; after the queue empties each of S = 10 requests still
    runs k steps on with p = 1, 1/2, 1/4 (k = 0, 1, 2), so step k happens with q = 1, 1 - 0.5^10,
    1 - 0.75^10. N = 100 requests: full phase (200 - 17.5) / 10 = 18.25 steps.
    Constant 1 s step: duration 18.25 + (q0 + q1 + q2) s, 200 tokens, over the steady 10 tok/s.
    Step 1 + 0.1 B s (B = 10 p / q when the step happens): full 18.25 x 2 s, drain
    (q0 + q1 + q2) + 0.1 x 10 x (1 + 0.5 + 0.25) s, over the steady 10 / 2 tok/s."""
    q = 1 + (1 - 0.5 ** 10) + (1 - 0.75 ** 10)
    assert drain_factor([1, 3], 100, 10, [1, 10], [1.0, 1.0]) == pytest.approx(200 / (18.25 + q) / 10)
    assert drain_factor([1, 3], 100, 10, [1, 10], [1.1, 2.0]) == pytest.approx(200 / (36.5 + q + 1.75) / 5)


def _simulate(lengths: np.ndarray, slots: int, step_s) -> float:
    """Step-by-step: every slot takes the next request as soon as it frees; throughput over the
    steady state's (every slot filled)."""
    rem, nxt, t, tokens = lengths[:slots].copy(), slots, 0.0, 0
    while True:
        run = rem > 0
        b = int(run.sum())
        if b == 0:
            break
        t, tokens = t + step_s(b), tokens + b
        rem[run] -= 1
        free = np.flatnonzero(run & (rem == 0))[: len(lengths) - nxt]
        rem[free], nxt = lengths[nxt:nxt + len(free)], nxt + len(free)
    return tokens / t / (slots / step_s(slots))


def test_drain_factor_agrees_with_a_simulation_of_a_long_tailed_run():
    """Exponential-like outputs (mean 300, capped at 3,000) on 64 slots, 1,500 requests in random
    order, step 10 ms + 0.2 ms per running request: the fluid factor within 1% of the simulation's,
    and the drain costs over 5% of the steady throughput."""
    rng = np.random.default_rng(7)
    lengths = np.minimum(rng.exponential(300, 1500).astype(int) + 1, 3000)
    step = lambda b: 0.010 + 0.0002 * b  # noqa: E731
    sim = _simulate(lengths, 64, step)
    fluid = drain_factor(lengths, 1500, 64, [1, 64], [step(1), step(64)])
    assert fluid == pytest.approx(sim, rel=0.01) and sim < 0.95


def test_bad_inputs_name_the_field():
    with pytest.raises(SpecError, match="osl_tokens"):
        residual_survival([])
    with pytest.raises(SpecError, match="queries/slots"):
        drain_factor([3], 0, 4, [1, 4], [1.0, 1.0])
    with pytest.raises(SpecError, match="reach the slots"):
        drain_factor([3], 10, 8, [1, 4], [1.0, 1.0])


def test_mlperf_offline_rows_carry_the_submissions_query_counts():
    """The four DeepSeek-R1 Offline rows with a read engine run 26,328 samples per 8-GPU system
    (GB200-NVL72 x72: 26,328 x 8); their predicted throughput is the steady state's times a drain
    factor below 1; fixed lengths (spread=False) keep the steady state."""
    from jalapeno.fit.mlperf import load_mlperf
    from jalapeno.fit.validate import point_stack, point_workload
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.specs.catalog import load_model

    pts = {p.id: p for p in load_mlperf()[0] if p.mapping == "matched" and p.model == "deepseek-r1"}
    assert {k.split("_")[1]: p.queries for k, p in pts.items()} == {"Google": 26328, "NVIDIA": 26328 * 8,
                                                                     "HPE": 26328} or len(pts) == 4
    assert sorted(p.queries for p in pts.values()) == [26328, 26328, 26328, 26328 * 8]
    assert all(p.queries == 0 for p in load_mlperf(spread=False)[0])
    p = pts["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Offline"]
    pricer = load_any_pricer("b200", "calibrated", pricer="roofline", stack=point_stack(p))
    f = finite_run_factor(load_model("deepseek-r1"), pricer, p.deployment, point_workload(p), p.queries)
    assert 0.7 < f < 0.95
    fixed = point_workload(p).__class__("fixed", 804, 3736, 1.0)
    assert finite_run_factor(load_model("deepseek-r1"), pricer, p.deployment, fixed, p.queries) == 1.0


def test_trtllm_free_fraction_as_memory_fraction_by_hand():
    """TensorRT-LLM's KV pool is f of the memory free after load: KV = f (M - W - A), so the memory
    fit's share is m = f + (1 - f)(W + A)/M. DeepSeek-R1 FP8 at attention DP 8, EP 8 (docs/model.md
    §7's worked table): W = 100.84 GB per chip; A at 4,608 tokens and 216 logit rows per rank:
    4,608 x (8 x 7,168 + 4 x 18,432) x 2 B + 216 x 129,280 x 4 B; H200 usable 141 GB; f = 0.6 (HPE's
    kvcache_free_gpu_mem_frac)."""
    from jalapeno.deploy.layout import Layout
    from jalapeno.deploy.memory_fit import free_fraction_as_memory_fraction
    from jalapeno.specs.catalog import load_model, load_system
    from jalapeno.specs.formats import get_precision

    a = 4608 * (8 * 7168 + 4 * 18432) * 2 + 216 * 129280 * 4
    want = 0.6 + 0.4 * (100.84e9 + a) / 141e9
    got = free_fraction_as_memory_fraction(0.6, load_model("deepseek-r1"), load_system("h200"),
                                           Layout(tp=1, dp=8, ep=8), get_precision("fp8"), 4608, 216)
    assert got == pytest.approx(want, rel=1e-4)
    with pytest.raises(SpecError, match="kv_free_fraction"):
        free_fraction_as_memory_fraction(1.5, load_model("deepseek-r1"), load_system("h200"),
                                         Layout(tp=1, dp=8, ep=8), get_precision("fp8"), 4608, 216)


def test_mlperf_offline_engines_size_the_kv_pool_as_their_configs_say():
    """HPE H200 Offline: kvcache_free_gpu_mem_frac 0.6 leaves 0.6 x (141 GB - W - A) of KV: fewer than its
    216 x 8 slots of ~4,800-token contexts fit (each 61 x 576 B per token), so the KV cache, not the slots,
    caps the running batch; the B200 engines (0.9) hold every slot."""
    from jalapeno.fit.mlperf import load_mlperf
    from jalapeno.fit.validate import point_stack, point_workload
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model

    pts = {p.id: p for p in load_mlperf()[0] if p.mapping == "matched"}
    h = pts["mlperf51_HPE_HPE_Cray_XD670_H200_SXM_141GBx8_TRT_deepseek-r1_Offline"]
    kv_bytes = 0.6 * (141e9 - 100.84e9 - 1.32e9) * 0.98  # the pool, less a 2% margin for the activations' share
    per_seq = 4800 * 61 * 576
    assert h.deployment.memory_fraction < 0.96
    r = serve_at_concurrency(load_model("deepseek-r1"), load_any_pricer("h200", "calibrated", stack=point_stack(h)),
                             h.deployment, point_workload(h), [h.concurrency])
    assert str(r.limit[0]).startswith("kv_capacity") and r.decode_batch[0] < 216 * 8
    assert r.decode_batch[0] == pytest.approx(8 * kv_bytes / per_seq, rel=0.15)
    b = pts["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Offline"]
    rb = serve_at_concurrency(load_model("deepseek-r1"), load_any_pricer("b200", "calibrated", stack=point_stack(b)),
                              b.deployment, point_workload(b), [b.concurrency])
    assert rb.decode_batch[0] == pytest.approx(512 * 8, rel=0.01)
