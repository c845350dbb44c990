"""What validate prices, users get: vLLM's block-FP8 MoE kernel rule on Hopper at a stated release
(deploy/vllm_fp8_moe.py) on the predict path (round 37, vllmrule37)."""

from __future__ import annotations

import json

import pytest
from cli_runner import run

from jalapeno.analysis.prediction import predict_point
from jalapeno.cli.system_opts import system_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

ARGS = ["predict", "-m", "minimax-m2.5", "-s", "h200", "-p", "fp8", "-c", "16", "--json"]


def _by_hand(layout: Layout, backend: str | None) -> float:
    """The TPOT of MiniMax-M2.5 FP8 on H200 at concurrency 16 under the plain vllm profile, the pool's MoE
    backend set by hand (None: the calibrated set)."""
    dep = Deployment(get_precision("fp8"), Pool(layout, moe_backend=backend))
    rec = predict_point(load_model("minimax-m2.5"), system_pricer("h200", stack="vllm"), dep, get_workload("8k1k"), 16.0)
    return rec.as_dict()["tpot_s"]


def _cli(capsys, stack: str, *layout: str) -> tuple[float, str]:
    code, out, err = run(capsys, *ARGS, "--stack", stack, *layout)
    assert code == 0, err
    return json.loads(out)["tpot_s"], err


def test_vllm_0_16_0_prices_flashinfer_cutlass_at_moe_tp(capsys):
    """0.16.0 runs FlashInfer's CUTLASS experts at every layout: TP4 (EP 1) takes the cutlass curves."""
    tpot, err = _cli(capsys, "vllm@0.16.0", "--tp", "4")
    assert tpot == pytest.approx(_by_hand(Layout(tp=4), "cutlass"), rel=1e-9)
    assert tpot != pytest.approx(_by_hand(Layout(tp=4), None), rel=1e-3)  # the rule moves this point
    assert "MoE backend cutlass: vLLM 0.16.0" in err


def test_vllm_0_18_0_triton_at_ep1_cutlass_at_ep8(capsys):
    """From 0.17.0 Triton at EP 1 (no curve: the calibrated set), FlashInfer CUTLASS at EP > 1."""
    tp4, err = _cli(capsys, "vllm@0.18.0", "--tp", "4")
    assert tp4 == pytest.approx(_by_hand(Layout(tp=4), None), rel=1e-9)
    assert "Triton runs them at EP 1" in err
    ep8, _ = _cli(capsys, "vllm@0.18.0", "--tp", "8", "--ep", "8")
    assert ep8 == pytest.approx(_by_hand(Layout(tp=8, ep=8), "cutlass"), rel=1e-9)


def test_unstated_release_keeps_calibrated_set_and_says_so(capsys):
    tpot, err = _cli(capsys, "vllm", "--tp", "4")
    assert tpot == pytest.approx(_by_hand(Layout(tp=4), None), rel=1e-9)
    assert "vLLM release not stated" in err and "--stack vllm@VERSION" in err


def test_sweep_options_give_each_aggregated_layout_its_release_backend():
    """frontier/compare's sweep (SweepOptions.engine_release): the backend by EP size, a recipe's own backend wins."""
    from jalapeno.analysis.sweep import SweepOptions

    m, p = load_model("minimax-m2.5"), get_precision("fp8")
    opt = SweepOptions(engine_release=("vllm", "0.18.0"))
    assert opt.deployment(p, Pool(Layout(tp=4)), model=m, system="h200").decode.moe_backend is None  # Triton, EP 1
    assert opt.deployment(p, Pool(Layout(tp=8, ep=8)), model=m, system="h200").decode.moe_backend == "cutlass"
    assert opt.deployment(p, Pool(Layout(tp=8, ep=8)), model=m, system="b200").decode.moe_backend is None
    forced = SweepOptions(engine_release=("vllm", "0.16.0"), moe_backend="triton")
    assert forced.deployment(p, Pool(Layout(tp=4)), model=m, system="h200").decode.moe_backend == "triton"


def test_sweep_prices_the_pool_backend_as_predict_does():
    """The aggregated sweep prices a pool's MoE backend (it labelled the pool and priced the calibrated set before
    round 37): vllm@0.18.0 at TP8 EP8, concurrency 64, is the by-hand cutlass TPOT of predict_point."""
    import numpy as np

    from jalapeno.analysis.sweep import SweepOptions, sweep

    opt = SweepOptions(serving="agg", concurrency=(16.0,), engine_release=("vllm", "0.18.0"), overlap="none")
    res = sweep(load_model("minimax-m2.5"), system_pricer("h200", stack="vllm"), get_workload("8k1k"),
                get_precision("fp8"), opt)
    i = next(k for k, d in enumerate(res.deployments) if d.decode.layout == Layout(tp=8, ep=8))
    tpot = float(res.points.tpot_s[np.flatnonzero(res.dep_index == i)[0]])
    assert tpot == pytest.approx(_by_hand(Layout(tp=8, ep=8), "cutlass"), rel=1e-6)
