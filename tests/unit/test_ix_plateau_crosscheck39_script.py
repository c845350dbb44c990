"""scripts/ix_plateau_crosscheck39.py: the slowed prefill pool, the pool key, the plateau table, the held-out ratio,
the lookup and κ, worked by hand."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

from jalapeno.deploy.layout import Layout
from jalapeno.serve.disagg import PrefillPerf

ix = load_script("ix_plateau_crosscheck39")


def _perf() -> PrefillPerf:
    # 10,000 prompt tokens/s; a full step of 0.8 s = t0 0.2 s + σ 75 µs × 8,000 tokens; a lone prompt 0.12 s
    return PrefillPerf(Layout(dp=4, ep=4), 10_000.0, 0.12, {None: 0.12}, True, "", "compute", 0.8, 0.2, 75e-6, 0.01)


def test_slowed_divides_throughput_and_keeps_latency():
    q = ix.slowed(_perf(), 1.25)
    assert q.tokens_per_s == pytest.approx(8_000.0)
    assert (q.interval_s, q.step0_s, q.per_token_s) == pytest.approx((1.0, 0.25, 93.75e-6))
    assert (q.service_s, q.fill_s, q.service_q_s) == (0.12, 0.01, {None: 0.12})


def test_slowed_never_speeds_a_pool_up():
    assert ix.slowed(_perf(), 0.5).tokens_per_s == 10_000.0


def test_pool_key_and_engine_words():
    assert ix.pool_key("b200", "trtllm", "deepseek-r1", "fp8", Layout(dp=8, ep=8), 1024.0) == (
        "b200",
        "trtllm",
        "deepseek-r1",
        "fp8",
        "TP1 DP8 EP8",
        1024,
    )
    assert [ix.engine_of(f) for f in ("TRTLLM 1.0.0rc6", "dynamo-trt", "dynamo-sglang", "vLLM 0.18.0")] == [
        "trtllm",
        "trtllm",
        "sglang",
        "vllm",
    ]


def test_plateau_is_the_largest_queued_row_and_needs_two():
    rows = pd.DataFrame(
        {
            "system": "s",
            "engine": "e",
            "model": "m",
            "precision": "fp4",
            "layout": "L",
            "isl": [1024] * 4 + [8192] * 2,
            "queued": [True, True, False, True, True, False],
            # the unqueued 1k row is the largest load but does not count; 8k has one queued row only
            "measured_tok_s": [60.0, 80.0, 90.0, 70.0, 50.0, 10.0],
            "model_tok_s": 120.0,
        }
    )
    t = ix.plateau_table(rows)
    assert list(t.index.get_level_values("isl")) == [1024]
    assert float(t.measured_max.iloc[0]) == 80.0
    assert float(t.model_over_measured.iloc[0]) == pytest.approx(120.0 / 80.0)


def test_held_out_rows_over_the_fit_plateau():
    t = pd.DataFrame(
        {"measured_max": [80.0]},
        index=pd.MultiIndex.from_tuples(
            [("s", "e", "m", "p", "L", 1024)], names=["system", "engine", "model", "precision", "layout", "isl"]
        ),
    )
    d = pd.DataFrame(
        {
            "id": ["a", "b", "c", "d"],
            "split": ["held_out", "none", "fit", "held_out"],
            "system": "s",
            "engine": "e",
            "model": "m",
            "precision": "p",
            "layout": "L",
            "isl": [1024, 1024, 1024, 8192],
            "c": 1.0,
            "ttft": 1.0,
            "queued": True,
            "measured_tok_s": [84.0, 40.0, 80.0, 70.0],
            "model_tok_s": 1.0,
        }
    )
    h = ix.held_out_against(d, t)  # the fit row and the 8k row (no plateau) drop out
    assert h.id.tolist() == ["a", "b"]
    assert h.over_plateau.tolist() == pytest.approx([1.05, 0.5])


def test_lookup_prefers_the_exact_pool_then_the_nearest_isl_then_another_system():
    t = {
        ("a", "e", "m", "p", "L", 1024): 1.2,
        ("a", "e", "m", "p", "L", 16384): 2.0,
        ("b", "e", "m", "p", "L", 8192): 1.5,
    }
    assert ix.lookup(t, ("a", "e", "m", "p", "L", 1024), True, True)[0] == 1.2
    # 8k on system a: |log(8192/1024)| = 2.08 > |log(16384/8192)| = 0.69, so the 16k pool of the same system
    assert ix.lookup(t, ("a", "e", "m", "p", "L", 8192), True, True)[0] == 2.0
    assert ix.lookup(t, ("a", "e", "m", "p", "L", 8192), False, True)[0] == 1.5  # same ISL elsewhere
    assert ix.lookup(t, ("a", "e", "m", "p", "L2", 1024), True, True) is None  # another layout never matches


def test_kappa_by_hand():
    # row 30: TTFT 1.986 s, TPOT 46.3 ms, mean OSL 921.6: 1 + 920.6 × 0.0463 / 1.986 = 22.46
    assert ix.kappa(1.986, 0.0463, 921.6) == pytest.approx(1 + 920.6 * 0.0463 / 1.986)
    assert ix.kappa(1.986, 0.0463, 921.6) == pytest.approx(22.46, abs=0.01)
    # the residual's amplification: TTFT = C/λ − D·TPOT; a 1% lower λ adds 1% of C/λ = κ % of TTFT
    c_over_lam, d_tpot = 1.986 + 920.6 * 0.0463, 920.6 * 0.0463
    ttft_slow = c_over_lam / 0.99 - d_tpot
    assert ttft_slow / 1.986 - 1 == pytest.approx(ix.kappa(1.986, 0.0463, 921.6) / 100 / 0.99, rel=1e-9)
