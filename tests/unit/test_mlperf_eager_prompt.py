"""Round 27 (hostiter27): the MLPerf v5.1 DeepSeek-R1 engines' prompt-carrying steps run eagerly.

Expected values by hand: DeepSeek-R1 has 3 dense + 58 MoE layers; a mixed eager step makes 3·(37 + 33 + 6) +
58·(37 + 33 + 23) = 228 + 5,394 = 5,622 host calls, a context-only one 3·(37 + 6) + 58·(37 + 23) = 129 + 3,480 = 3,609
(cost/host_calls.py); at 24 µs a call (fit/trt_prompt_graphs.TRTLLM_EAGER_CALL_S) that is 134.928 ms and 86.616 ms.
"""

import pytest

from jalapeno.cost.host_calls import step_host_calls
from jalapeno.fit.mlperf_engines import MLPERF_ENGINES, MLPERF_LIMIT_ENGINES
from jalapeno.fit.submitted_engine import submitted_deployment
from jalapeno.serve.limits import prompt_floor_s
from jalapeno.specs.catalog import load_model


def test_wideep_counted_like_trtllm():
    m = load_model("deepseek-r1")
    assert step_host_calls(m, True, moe_backend="wideep") == 5622
    assert step_host_calls(m, False, moe_backend="wideep") == 3609


@pytest.mark.parametrize("key", sorted(k for k in MLPERF_ENGINES if "deepseek-r1" in k))
def test_dsr1_engines_price_eager_prompt_steps(key):
    dep, _ = submitted_deployment(MLPERF_ENGINES[key], "fp4", 72 if "x72" in key else 8)
    assert dep.eager_prompt_call_s == pytest.approx(24e-6)
    ctx, mixed = prompt_floor_s(load_model("deepseek-r1"), dep)
    assert ctx == pytest.approx(0.086616)
    assert mixed == pytest.approx(0.134928)


def test_limit_engines_dsr1_only():
    # the DeepSeek-R1 Server engines (engine@limits) carry the floor; the Llama engines (use_graphs False, not read
    # further) keep none
    for key, eng in MLPERF_LIMIT_ENGINES.items():
        dep, _ = submitted_deployment(eng, "fp4", eng.instance_chips * (9 if "x72" in key else 1))
        assert dep.eager_prompt_call_s == (pytest.approx(24e-6) if "deepseek-r1" in key else 0.0)


def test_frontier_rows_carry_the_engine_floor():
    from jalapeno.fit.mlperf import load_mlperf

    pts = load_mlperf()[0]
    dsr1 = [p for p in pts if p.model == "deepseek-r1" and p.framework == "trt"]
    assert len(dsr1) == 7
    assert all(p.eager_prompt_call_s == pytest.approx(24e-6) for p in dsr1)
    assert all(p.eager_prompt_call_s == 0.0 for p in pts if p.model != "deepseek-r1")


def test_sweep_options_give_every_deployment_the_floor():
    from jalapeno.analysis.sweep import SweepOptions
    from jalapeno.deploy.deployment import Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.specs.formats import get_precision

    dep = SweepOptions(eager_prompt_call_s=24e-6).deployment(get_precision("fp4"), Pool(Layout(tp=8, ep=8)))
    assert dep.eager_prompt_call_s == pytest.approx(24e-6)
    assert SweepOptions().deployment(get_precision("fp4"), Pool(Layout(tp=8, ep=8))).eager_prompt_call_s == 0.0
