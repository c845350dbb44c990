"""TensorRT-LLM's MoE token exchange (cost/moe_exchange.moe_all_to_all_on, cost/ops.py): an all-to-all only
when the EP group sits inside one NVLink domain with whole experts per rank, else all-gather +
reduce-scatter (NVIDIA/TensorRT-LLM communication_factory.py: MNNVL, then DeepEP only with
TRTLLM_CAN_USE_DEEP_EP, else AllGatherReduceScatter; "AlltoAll cannot support MoE TP").

Expected byte counts are worked by hand: tokens of the whole stage x hidden 7168 (DeepSeek-R1
config.json) x 2 bytes (BF16) or x (0.5 + 1/16) bytes (NVFP4: 4 bits + an FP8 scale per 16).
The H100 figure is InferenceX's measured TPOT (inferencex_points.csv, H100 dynamo-trt 1k/1k
concurrency 4916: 119.5 ms).
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.moe_exchange import moe_all_to_all_on
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import build_stacks, get_stack

H = 7168  # DeepSeek-R1 hidden size


def _moe_colls(system: str, stack: str, layout: Layout, prec: str, seqs: float) -> dict[str, float]:
    sc = step_cost(load_model("deepseek-r1"), load_pricer(system, stack=stack), layout, get_precision(prec),
                   Batch.make(decode_seqs=np.array([seqs]), decode_ctx=1500.0))
    c = sc.collectives
    return {n: float(c.bytes[i][0]) for i, n in enumerate(c.name) if n.startswith("moe.")}


def test_rule():
    assert moe_all_to_all_on("nvlink_all_to_all", 8, 8) and moe_all_to_all_on("nvlink_all_to_all", 32, 72)
    assert not moe_all_to_all_on("nvlink_all_to_all", 16, 8)  # two HGX nodes: scale-out between them
    assert not moe_all_to_all_on("nvlink_all_to_all", 8, 8, moe_tp=2)
    assert moe_all_to_all_on("all_to_all", 16, 8)


def test_trtllm_profiles_carry_the_exchange():
    assert get_stack("trtllm").moe_exchange == "nvlink_all_to_all"
    assert get_stack("dynamo-trtllm").moe_exchange == "nvlink_all_to_all"
    assert get_stack("sglang").moe_exchange is None
    assert load_pricer("h100", stack="trtllm").efficiency.moe_exchange == "nvlink_all_to_all"
    assert load_pricer("h100", stack="sglang").efficiency.moe_exchange == "all_to_all"


def test_h100_dep16_gathers_under_trtllm_and_all_to_alls_under_sglang():
    lay = Layout(dp=16, ep=16)
    trt = _moe_colls("h100", "dynamo-trtllm", lay, "fp8", 4096)
    assert set(trt) == {"moe.all_gather", "moe.reduce_scatter"}
    assert trt["moe.all_gather"] == pytest.approx(4096 * H * 2)  # every token of the stage, BF16
    assert trt["moe.reduce_scatter"] == pytest.approx(4096 * H * 2)
    assert "moe.dispatch" in _moe_colls("h100", "sglang", lay, "fp8", 4096)


def test_inside_one_nvlink_domain_trtllm_keeps_the_all_to_all():
    assert "moe.dispatch" in _moe_colls("gb200-nvl72", "dynamo-trtllm", Layout(dp=32, ep=32), "fp4", 2048)
    assert "moe.dispatch" in _moe_colls("b200", "trtllm", Layout(dp=8, ep=8), "fp4", 1024)


def test_nvfp4_is_gathered_quantised():
    # DP16 with the experts split 4 ways (MoE TP4 EP4): TensorRT-LLM cannot all-to-all MoE TP
    got = _moe_colls("b200", "trtllm", Layout(dp=16, ep=4), "fp4", 256)
    assert got["moe.all_gather"] == pytest.approx(256 * H * (0.5 + 1 / 16))
    assert got["moe.reduce_scatter"] == pytest.approx(256 * H * 2)


def test_h100_dep16_decode_step_meets_the_measured_tpot():
    # 2 prefill DEP16 + 1 decode DEP16, 256 sequences per rank (the ctx2_gen1_dep16_batch256 entry):
    # the measured TPOT 119.5 ms; the step with the all-to-all the engine does not run was 16% short
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.workload import Workload

    dep = Deployment(get_precision("fp8"), Pool(Layout(dp=16, ep=16)), prefill=Pool(Layout(dp=16, ep=16), workers=2),
                     max_running=256, budget_per="rank")
    r = serve_at_concurrency(load_model("deepseek-r1"), load_pricer("h100", stack="dynamo-trtllm"), dep,
                             Workload("1k1k", 1024, 1024, 0.8), [4916])
    assert float(r.tpot_s[0]) == pytest.approx(0.1195, rel=0.08)


def test_bad_exchange_is_one_clear_error():
    import jalapeno.specs.stacks as S

    raw = {"name": "x", "label": "x", "source": "x", "moe_exchange": "deepep"}
    with pytest.raises(SpecError, match="moe_exchange.*use one of all_to_all, nvlink_all_to_all"):
        S._stack(raw, 0, {})
    assert build_stacks({})  # the shipped file still loads


def test_bad_exchange_override_is_one_clear_error():
    from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY

    with pytest.raises(SpecError, match="efficiency.moe_exchange: unknown moe_exchange .deepep.. Fix: use one of all_to_all, nvlink_all_to_all, nvlink_all_to_all_above_top_k"):
        DEFAULT_EFFICIENCY.with_overrides({"moe_exchange": "deepep"})
    assert DEFAULT_EFFICIENCY.with_overrides({"moe_exchange": "nvlink_all_to_all"}).moe_exchange == "nvlink_all_to_all"
