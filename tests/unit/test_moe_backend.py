"""Engine MoE backends: routed experts priced by the measured kernels of the backend a recipe names.

Expected values by hand from aiconfigurator-core 0.12.0's B200 ``moe_perf`` table (TRT-LLM
1.3.0rc20; systems/data/b200_sxm/moe/trtllm/1.3.0rc20/moe_perf.parquet), DeepSeek-R1's routed-expert
shape (hidden 7168, intermediate 2048, 256 experts, top-8), NVFP4, MoE TP1 EP8, balanced routing,
latency per layer in ms:

    tokens            32     128    512
    CUTLASS        0.307  0.278  0.287      (kernel_source moe_torch_flow_cutlass)
    TRT-LLM-gen    0.136  0.182  0.212      (kernel_source moe_torch_flow_min_latency)

and from the InferenceX recipe files (benchmarks/multi_node/srt-slurm-recipes/dsr1/trtllm/
{b200,gb200}-fp4/1k1k/disagg/mtp/*.yaml @792d8aa4b858, decode ``moe_config.backend``).

CuTe-DSL (``cutedsl``), GB200, same shape and routing, from aiconfigurator's source tree @095f58a51c4c
(aic-core/src/aiconfigurator_core/systems/data/gb200/moe/sglang/0.5.10/moe_perf.parquet,
kernel_source sglang_flashinfer_cutedsl_moe), ms per layer:

    EP16: 512 tokens 0.0890, 8192 tokens 0.1480;   EP32: 512 tokens 0.0521

Independent cross-check: FlashInfer's benchmark of TensorRT-LLM's fused CuTe-DSL NVFP4 MoE as ported
to FlashInfer (flashinfer-ai/flashinfer PR #5301 description, benchmarks/bench_moe_deepseek.py,
DeepSeek-V3 shape, 32 local experts = EP8, CuteDSL W4A4 column; EP8 confirmed by its TFLOPS column:
552.98 TFLOP/s x 0.163106 ms / (6·7168·2048 FLOP) = 1024 assignments at 1024 tokens), ms:

    tokens      64        128       256       512       1024
    CuteDSL   0.143649  0.147601  0.155697  0.157825  0.163106

MXFP4 experts (gpt-oss-120b: hidden 2880, intermediate 2880, 128 experts, top-4), W4A8 MXFP4 x MXFP8,
TRT-LLM-gen (kernel_source moe_torch_flow, moe_dtype w4a8_mxfp4_mxfp8: aiconfigurator's collector pins
TRTLLMGenFusedMoE for gpt-oss on SM100), same tables, MoE TP1, balanced routing, ms per layer:

    tokens            1       32      128     1024
    B200  EP1     0.0253   0.2730   0.2790   0.3119
    B200  EP8     0.0194   0.0544   0.0762   0.2324
    GB200 EP1     0.0252   0.2650   0.2709   0.3657

Cross-check by hand: at 32 tokens on EP1 the 128 balanced assignments reach every expert once, so the
layer reads all routed weights, 128 x 3 x 2880 x 2880 x 0.53125 B = 1.693 GB; in 0.2730 ms that is
6.20 TB/s, 0.78 of B200's 8 TB/s.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from jalapeno.cost.moe_backend import MeasuredMoePricer, MoeCurve
from jalapeno.cost.pool_backends import with_moe_backend
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import Pool
from jalapeno.deploy.engines import identified_config, recipes
from jalapeno.deploy.identified import _identified, _pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.serve.disagg import decode_curve
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import Workload

MOE_LAYERS = 58  # DeepSeek-R1: 61 layers, the first 3 dense
GPTOSS_LAYERS = 36  # gpt-oss-120b: every layer MoE
# Expected per-layer ms, by hand from the measured rows (data/moe_backends.toml) and the module docstring of
# cost/moe_backend.py. Uniform top-k routing of T tokens touches u = n·(1 − (1 − k/E)^T) of a rank's n = E/ep
# experts; the op is the balanced row touching u experts, log-log between the two rows around it, less nothing
# else where the load is <= n, and c(load) − (c(n) − c(u)) (never below min(c(u), c(load))) beyond it.
# gpt-oss (E 128, k 4): T = 32 → u = 128·(1 − (31/32)^32) = 81.66 assignments = 20.414 tokens' balanced row,
# between the 16- and 32-token rows at ln(20.414/16)/ln 2 = 0.3515 of the way (b200 EP1:
# 0.147893·(0.272987/0.147893)^0.3515 = 0.18345); T = 128 → u = 125.80 = 31.450 tokens' row, fraction 0.9750,
# 0.272987 − 0.268827 = 0.00416 saved from the 128-token row 0.279029 → 0.27488. T = 1 touches 4 = load
# (balanced), T = 1024 every expert: the rows themselves.
MXFP4_MS = {("b200", 1): {1: 0.0253, 32: 0.18345, 128: 0.27488, 1024: 0.3119},
            ("b200", 8): {1: 0.0194, 32: 0.04122, 128: 0.07563, 1024: 0.2324},
            ("gb200-nvl72", 1): {1: 0.0252, 32: 0.17837, 128: 0.26685, 1024: 0.3657}}
# DeepSeek-R1 EP8 (E 256, k 8, n 32): 32 tokens → u = 32·(1 − (31/32)^32) = 20.414 (CUTLASS 0.184901 → 0.306976
# between 16 and 32: 0.22097; TRT-LLM-gen 0.0847733 → 0.136389: 0.10020); 128 tokens → u = 31.450, saving
# c(32) − c(31.45) = 0.00386 / 0.00161 from the 128-token rows 0.278075 / 0.182219 (CUTLASS: its 32-token row is
# slower than its 128-token one, so the op stays at min(c(u), c(load)) = 0.278075); 512 tokens touch all 32.
MEASURED_MS = {"cutlass": {32: 0.22097, 128: 0.27808, 512: 0.28687},
               "trtllm": {32: 0.10020, 128: 0.18061, 512: 0.21244}}
CUTEDSL_GB200_MS = {16: {512: 0.0890, 8192: 0.1480}, 32: {512: 0.0521}}
FLASHINFER_CUTEDSL_EP8_MS = {64: 0.143649, 128: 0.147601, 256: 0.155697, 512: 0.157825, 1024: 0.163106}


@pytest.fixture(scope="module")
def dsr1():
    return load_model("deepseek-r1")


@pytest.fixture(scope="module")
def b200():
    return load_any_pricer("b200", "calibrated")


def _moe_ms_per_layer(pricer, model, layout, tokens):
    sc = step_cost(model, pricer, layout, get_precision("fp4"),
                   Batch.make(decode_seqs=np.asarray(tokens, dtype=float), decode_ctx=1536.0))
    return sc.times.time_s[sc.ops.name.index("moe.experts")] / MOE_LAYERS * 1e3


@pytest.mark.parametrize("backend", ["cutlass", "trtllm"])
def test_routed_experts_cost_the_measured_kernel_of_the_named_backend(dsr1, b200, backend):
    # no busiest-rank tail (the table's load is balanced); the touched experts of uniform routing (MEASURED_MS)
    flat = b200.with_efficiency(replace(b200.efficiency, moe_load_skew=0.0))
    lay = Layout(tp=1, dp=8, ep=8)
    p = with_moe_backend(flat, backend, dsr1, lay)
    assert isinstance(p, MeasuredMoePricer)
    got = _moe_ms_per_layer(p, dsr1, lay, list(MEASURED_MS[backend]))
    np.testing.assert_allclose(got, list(MEASURED_MS[backend].values()), atol=2e-5)  # ms


def test_wideep_pools_cost_the_cutlass_kernels_it_runs(dsr1, b200):
    """TensorRT-LLM's WIDEEP computes its experts with the CUTLASS fused-MoE op
    (fused_moe_wide_ep.py): a B200 DEP8 WIDEEP pool (the MLPerf DeepSeek-R1 engines) costs the
    table's CUTLASS curve, read at the experts uniform routing touches (MEASURED_MS); on H100 its FP8
    block-scale CUTLASS curve (fit/moe_backends.SYSTEM_DIRS); on B300 (no CUTLASS table) the calibrated set stays."""
    flat = b200.with_efficiency(replace(b200.efficiency, moe_load_skew=0.0))
    lay = Layout(tp=1, dp=8, ep=8)
    p = with_moe_backend(flat, "wideep", dsr1, lay)
    assert isinstance(p, MeasuredMoePricer) and "cutlass" in p.curve.label
    got = _moe_ms_per_layer(p, dsr1, lay, list(MEASURED_MS["cutlass"]))
    np.testing.assert_allclose(got, list(MEASURED_MS["cutlass"].values()), atol=5e-4)
    h100 = with_moe_backend(load_any_pricer("h100", "calibrated"), "wideep", dsr1, lay)
    assert isinstance(h100, MeasuredMoePricer) and "h100_sxm" in h100.curve.label and h100.curve.fmt == "fp8"
    b300 = load_any_pricer("b300", "calibrated")
    assert with_moe_backend(b300, "wideep", dsr1, lay) is b300


@pytest.mark.parametrize("ep", sorted(CUTEDSL_GB200_MS))
def test_gb200_cutedsl_pools_cost_the_measured_cute_dsl_kernel(dsr1, ep):
    gb = load_any_pricer("gb200-nvl72", "calibrated")
    flat = gb.with_efficiency(replace(gb.efficiency, moe_load_skew=0.0))
    lay = Layout(tp=1, dp=ep, ep=ep)
    p = with_moe_backend(flat, "cutedsl", dsr1, lay)
    assert isinstance(p, MeasuredMoePricer) and "sglang 0.5.10" in p.curve.label
    got = _moe_ms_per_layer(p, dsr1, lay, list(CUTEDSL_GB200_MS[ep]))
    np.testing.assert_allclose(got, list(CUTEDSL_GB200_MS[ep].values()), atol=5e-4)


@pytest.mark.parametrize("system", ["b200", "gb200-nvl72"])
def test_cutedsl_curve_agrees_with_flashinfers_fused_cute_dsl_moe(dsr1, system):
    # two CuTe-DSL NVFP4 MoE paths measured independently (SGLang's masked grouped GEMM in
    # aiconfigurator's table; TensorRT-LLM's gather/finalize-fused kernels in FlashInfer's benchmark)
    lay = Layout(tp=1, dp=8, ep=8)
    pr = load_any_pricer(system, "calibrated")
    p = with_moe_backend(pr.with_efficiency(replace(pr.efficiency, moe_load_skew=0.0)), "cutedsl", dsr1, lay)
    got = _moe_ms_per_layer(p, dsr1, lay, list(FLASHINFER_CUTEDSL_EP8_MS))
    ratio = got / np.array(list(FLASHINFER_CUTEDSL_EP8_MS.values()))
    assert np.all(np.abs(ratio - 1) < 0.10), ratio


def test_cutlass_is_slower_than_trtllm_gen_where_the_tables_say_so(dsr1, b200):
    lay = Layout(tp=1, dp=8, ep=8)
    cut = _moe_ms_per_layer(with_moe_backend(b200, "cutlass", dsr1, lay), dsr1, lay, [512.0])
    gen = _moe_ms_per_layer(with_moe_backend(b200, "trtllm", dsr1, lay), dsr1, lay, [512.0])
    cal = _moe_ms_per_layer(b200, dsr1, lay, [512.0])
    # with the busiest-rank tail the load sits a little above 512 assignments: between the rows
    assert 0.286 <= cut[0] <= 0.292 and 0.212 <= gen[0] <= 0.255
    assert cal[0] < gen[0] < cut[0]


def test_other_ops_and_collectives_are_the_wrapped_pricers(dsr1, b200):
    lay = Layout(tp=1, dp=8, ep=8)
    p = with_moe_backend(b200, "cutlass", dsr1, lay)
    b = Batch.make(decode_seqs=np.array([64.0, 512.0]), decode_ctx=1536.0)
    a, c = step_cost(dsr1, b200, lay, get_precision("fp4"), b), step_cost(dsr1, p, lay, get_precision("fp4"), b)
    other = [i for i, n in enumerate(a.ops.name) if n != "moe.experts"]
    np.testing.assert_array_equal(a.times.time_s[other], c.times.time_s[other])
    np.testing.assert_array_equal(a.coll_time_s, c.coll_time_s)
    assert p.system is b200.system and p.efficiency is b200.efficiency


def test_unmeasured_backend_shape_or_layout_keeps_the_calibrated_pricer(dsr1, b200):
    dep8 = Layout(tp=1, dp=8, ep=8)
    assert with_moe_backend(b200, None, dsr1, dep8) is b200
    assert with_moe_backend(b200, "deepgemm", dsr1, dep8) is b200  # not collected for B200 NVFP4
    assert with_moe_backend(b200, "cutlass", dsr1, Layout(tp=1, dp=8, ep=8, eplb=32)) is b200  # redundant experts
    assert with_moe_backend(b200, "cutlass", load_model("llama-3.3-70b"), Layout(tp=8)) is b200  # dense
    b300 = load_any_pricer("b300", "calibrated")
    assert with_moe_backend(b300, "cutlass", dsr1, dep8) is b300  # no CUTLASS table shipped for B300


def test_curve_interpolates_log_log_and_extends_linearly():
    c = MoeCurve(7168.0, 2048.0, "fp4", np.array([10.0, 100.0, 1000.0]), np.array([1e-4, 2e-4, 1e-3]))
    assert c(np.array([10.0]))[0] == pytest.approx(1e-4)
    assert c(np.array([np.sqrt(10 * 100)]))[0] == pytest.approx(np.sqrt(1e-4 * 2e-4))  # log-log midpoint
    assert c(np.array([1.0]))[0] == pytest.approx(1e-4)  # below the first row: the first latency
    slope = (1e-3 - 2e-4) / 900.0
    assert c(np.array([2000.0]))[0] == pytest.approx(1e-3 + slope * 1000.0)


def test_identified_entries_carry_the_recipes_decode_backend():
    cases = {("b200", 875): "cutlass", ("b200", 180): "trtllm", ("gb200-nvl72", 180): "cutedsl",
             ("gb200-nvl72", 16130): "cutlass", ("gb200-nvl72", 8): "trtllm"}
    for (system, conc), backend in cases.items():
        e = identified_config(system, "deepseek-r1", "dynamo-trt", "fp4", 1024, 1024, conc, True)
        assert e is not None and e.decode.moe_backend == backend, (system, conc)
        assert f"moe_config.backend {backend.upper()}" in e.source


def test_decode_pool_prices_its_backend(dsr1, b200):
    e = identified_config("b200", "deepseek-r1", "dynamo-trt", "fp4", 1024, 1024, 875, True)
    dep = e.deployment()
    wl = Workload("1k/1k", 1024, 1024, 0.8)
    with_be = decode_curve(dsr1, b200, dep.decode.layout, dep.precision, wl, [128.0], dep.mtp, dep)
    plain = decode_curve(dsr1, b200, dep.decode.layout, dep.precision, wl, [128.0], dep.mtp,
                         replace(dep, decode=replace(dep.decode, moe_backend=None)))
    # 16 sequences x 4 rows per rank x 8 ranks = 512 tokens into each MoE layer: CUTLASS's 0.287+ ms
    # per layer against the calibrated 0.153 ms, over 58 layers and the 3 MTP drafts' share
    assert with_be.tau_s[0] - plain.tau_s[0] > MOE_LAYERS * (0.287 - 0.16) * 1e-3


def test_unknown_backend_is_refused_naming_the_field():
    with pytest.raises(SpecError, match="moe_backend.*unknown MoE backend 'cutlas'.*cutlass"):
        Pool(Layout(tp=8, ep=8), 1, "cutlas")
    with pytest.raises(SpecError, match=r"decode\.moe_backend"):
        _pool({"tp": 8, "ep": 8, "moe_backend": "CUTLASS"}, "entry x.decode")
    raw = {"name": "x", "recipe": next(iter(recipes())), "system": "b200", "model": "deepseek-r1",
           "framework": "dynamo-trt", "precision": "fp4", "isl": 1024, "osl": 1024, "concurrency": 4,
           "decode": {"tp": 8, "ep": 8, "moe_backend": "fast"}, "source": "s"}
    with pytest.raises(SpecError, match="unknown MoE backend 'fast'"):
        _identified(raw, 0, recipes())


def test_a_variant_chip_carries_the_measurement_over_by_its_roofline(dsr1):
    # The measured CUTLASS latency is of the B200 chip (8 TB/s HBM3e). A what-if with twice the HBM
    # bandwidth must not keep the B200's absolute latency: at 32 tokens the routed experts read
    # every expert's weights once (memory bound), so doubling the bandwidth about halves the op
    # (a little more than half: kernel launches do not scale); the measured-to-roofline ratio of
    # the root chip is kept at every load.
    from jalapeno.cost.pricer import load_pricer

    lay = Layout(tp=1, dp=8, ep=8)
    base = load_pricer("b200")
    fast = load_pricer("b200", overrides=(("chip.hbm_bandwidth_tb_per_s", 16.0),))
    tokens = [32.0, 512.0, 4096.0]
    measured = _moe_ms_per_layer(with_moe_backend(fast, "cutlass", dsr1, lay), dsr1, lay, tokens) / \
        _moe_ms_per_layer(with_moe_backend(base, "cutlass", dsr1, lay), dsr1, lay, tokens)
    roofline = _moe_ms_per_layer(fast, dsr1, lay, tokens) / _moe_ms_per_layer(base, dsr1, lay, tokens)
    assert 0.5 < measured[0] < 0.6
    np.testing.assert_allclose(measured, roofline, rtol=1e-9)
    # an efficiency-only what-if leaves the chip as measured: the measurement is used as is
    same = load_pricer("b200", overrides=(("efficiency.kernel_launch_s", 4e-6),))
    assert with_moe_backend(same, "cutlass", dsr1, lay).reference is None


def test_repo_table_is_read_from_a_checkout_and_a_missing_one_is_named(tmp_path):
    pytest.importorskip("pyarrow")  # parquet: the [calibrate] extra
    import pandas as pd

    from jalapeno.fit.kernel_tables import REPO_DATA, load_repo_table

    d = tmp_path.joinpath(*REPO_DATA, "gb200", "moe", "sglang", "0.5.10")
    d.mkdir(parents=True)
    pd.DataFrame({"num_tokens": [1, 2], "latency": [0.02, 0.03]}).to_parquet(d / "moe_perf.parquet")
    got = load_repo_table(str(tmp_path), "gb200", "moe", "moe_perf", "sglang", "0.5.10")
    assert list(got.latency) == [0.02, 0.03]
    with pytest.raises(SpecError, match=r"aic_repo.*moe/sglang/0\.5\.9/moe_perf\.parquet.*ai-dynamo/aiconfigurator"):
        load_repo_table(str(tmp_path), "gb200", "moe", "moe_perf", "sglang", "0.5.9")


def test_fit_script_refuses_to_drop_the_repo_curves(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "fit_moe_backends.py"
    spec = importlib.util.spec_from_file_location("fit_moe_backends", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main([]) == 2
    assert "--aic-repo PATH is needed" in capsys.readouterr().out


# ---- MXFP4-stored experts (gpt-oss-120b) on the TRT-LLM-gen MXFP4 x MXFP8 kernels --------------------------

def _gptoss_ms_per_layer(pricer, layout, tokens, precision="mxfp4"):
    sc = step_cost(load_model("gpt-oss-120b"), pricer, layout, get_precision(precision),
                   Batch.make(decode_seqs=np.asarray(tokens, dtype=float), decode_ctx=1024.0))
    return sc.times.time_s[sc.ops.name.index("moe.experts")] / GPTOSS_LAYERS * 1e3


@pytest.mark.parametrize("system, ep", sorted(MXFP4_MS))
def test_mxfp4_experts_cost_the_measured_trtllm_gen_kernel(system, ep):
    pr = load_any_pricer(system, "calibrated")
    flat = pr.with_efficiency(replace(pr.efficiency, moe_load_skew=0.0))  # balanced routing, as measured
    lay = Layout(tp=1, dp=ep, ep=ep)
    p = with_moe_backend(flat, "trtllm", load_model("gpt-oss-120b"), lay)
    assert isinstance(p, MeasuredMoePricer) and p.curve.weights == "mxfp4" and p.curve.fmt == "fp8"
    got = _gptoss_ms_per_layer(p, lay, list(MXFP4_MS[system, ep]))
    np.testing.assert_allclose(got, list(MXFP4_MS[system, ep].values()), atol=5e-5)


def test_mxfp4_curve_streams_most_of_the_hbm_where_nearly_every_expert_is_read(b200):
    lay = Layout(tp=1)
    p = with_moe_backend(b200.with_efficiency(replace(b200.efficiency, moe_load_skew=0.0)), "trtllm",
                         load_model("gpt-oss-120b"), lay)
    t_ms = _gptoss_ms_per_layer(p, lay, [128.0])[0]
    touched = 128 * (1 - (1 - 4 / 128) ** 128)  # 125.8 of 128 experts under uniform top-4 routing
    weights_b = touched * 3 * 2880 * 2880 * 0.53125  # MXFP4: 4 bits + an 8-bit scale per 32
    assert 0.74 < weights_b / (t_ms * 1e-3) / 8e12 < 0.78  # 6.05 TB/s of 8 TB/s


def test_curve_read_by_touched_experts_hand_values():
    # rows: 10 assignments 10 us, 100 assignments 100 us, 1000 assignments 120 us; 100 experts on the rank
    c = MoeCurve(1.0, 1.0, "fp4", np.array([10.0, 100.0, 1000.0]), np.array([1e-5, 1e-4, 1.2e-4]),
                 experts_on_rank=100.0)
    # balanced routing (touched = load): the balanced reading itself
    np.testing.assert_allclose(c.routed(np.array([50.0, 500.0]), np.array([50.0, 100.0])), c(np.array([50.0, 500.0])))
    # 100 assignments on 31.6 experts: the row touching 31.6 = sqrt(10·100) experts, log-log midpoint sqrt(10·100) us
    assert c.routed(np.array([100.0]), np.array([np.sqrt(1000.0)]))[0] == pytest.approx(np.sqrt(1e-5 * 1e-4))
    # 1000 assignments on 31.6 experts: 120 us less the untouched experts' reads, 100 − 31.6 us → 51.6 us
    assert c.routed(np.array([1000.0]), np.array([np.sqrt(1000.0)]))[0] == pytest.approx(1.2e-4 - (1e-4 - np.sqrt(1e-9)))
    # experts on the rank unknown: the load alone
    plain = MoeCurve(1.0, 1.0, "fp4", c.load, c.time_s)
    assert plain.routed(np.array([100.0]), np.array([10.0]))[0] == pytest.approx(1e-4)
    # a curve slower at few rows than at many (CUTLASS's) is never read above its balanced latency
    bumpy = MoeCurve(1.0, 1.0, "fp4", np.array([10.0, 100.0, 1000.0]), np.array([1e-5, 3e-4, 2e-4]),
                     experts_on_rank=100.0)
    assert bumpy.routed(np.array([1000.0]), np.array([90.0]))[0] <= 2e-4


def test_mxfp4_curves_price_only_mxfp4_experts(b200):
    gptoss = load_model("gpt-oss-120b")
    lay = Layout(tp=1)
    p = with_moe_backend(b200, "trtllm", gptoss, lay)
    assert isinstance(p, MeasuredMoePricer)
    # the same shape served with FP8 experts runs other kernels: the calibrated set prices it
    np.testing.assert_array_equal(_gptoss_ms_per_layer(p, lay, [64.0], "fp8"),
                                  _gptoss_ms_per_layer(b200, lay, [64.0], "fp8"))
    assert _gptoss_ms_per_layer(p, lay, [64.0])[0] != _gptoss_ms_per_layer(b200, lay, [64.0])[0]
    # Hopper has no W4A8 rows
    h200 = load_any_pricer("h200", "calibrated")
    assert with_moe_backend(h200, "trtllm", gptoss, lay) is h200
    # TRITON: no measured curve shipped, its fitted form with the floor (tests/unit/test_triton_moe_backend.py)
    assert with_moe_backend(h200, "triton", gptoss, lay).__class__.__name__ == "KernelMoePricer"


# ---- expert TP read as expert parallelism (gpt-oss-120b TP2-TP8, MoE TP = attention TP) -------------------
# TensorRT-LLM's table has no expert-TP rows at gpt-oss's shape; a rank of expert TP t holds 1/t of every expert,
# a rank of EP t every t-th expert whole: the same weight bytes, the same grouped-GEMM rows per rank. vLLM's table
# of the same TRT-LLM-gen MXFP4 kernel family (aiconfigurator-core 0.12.0, systems/data/b200_sxm/moe/vllm/0.24.0/
# moe_perf.parquet, kernel_source vllm_gptossmxfp4moe_flashinfer_trtllm_mxfp4_bf16_trtllmmxfp4expertsmonolithic,
# W4A16, balanced) measured both, us per layer:
#     tokens          1      8     32    128
#     TP2 EP1      22.1   71.4  203.2  207.7      TP1 EP2  25.1  72.2  203.3  208.4
#     TP4 EP1      21.0   46.0  117.5  119.6      TP1 EP4  23.5  47.9  118.6  121.6
#     TP8 EP1      19.6   36.4   87.3   90.0      TP1 EP8  23.6  32.5   74.9   74.6
# (TP8 is up to 21% slower than EP8 where the 360-wide slices run: read as EP8 it is a lower bound).
# So expert TP t at T tokens is the EP t row at T tokens, by hand from MXFP4_MS (EP8) and the rows themselves
# (EP2 / EP4 at 1 token: 0.0216373 / 0.0210667 ms).
TP_AS_EP_MS = {2: {1: 0.0216373}, 4: {1: 0.0210667}, 8: MXFP4_MS["b200", 8]}


@pytest.mark.parametrize("tp", sorted(TP_AS_EP_MS))
def test_expert_tp_is_priced_by_the_ep_row_of_as_many_ranks(b200, tp):
    flat = b200.with_efficiency(replace(b200.efficiency, moe_load_skew=0.0))
    lay = Layout(tp=tp)
    assert lay.moe_tp == tp and lay.ep == 1
    p = with_moe_backend(flat, "trtllm", load_model("gpt-oss-120b"), lay)
    assert isinstance(p, MeasuredMoePricer) and p.curve.width_split == tp
    got = _gptoss_ms_per_layer(p, lay, list(TP_AS_EP_MS[tp]))
    np.testing.assert_allclose(got, list(TP_AS_EP_MS[tp].values()), atol=5e-5)


def test_expert_tp_without_an_ep_row_keeps_the_calibrated_pricer(b200):
    # a backend with no row at this shape at any EP (CUTLASS: not collected for MXFP4 experts)
    assert with_moe_backend(b200, "cutlass", load_model("gpt-oss-120b"), Layout(tp=8)) is b200
