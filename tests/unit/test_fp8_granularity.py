"""FP8 GEMM efficiency keyed by scale granularity (issue 18 item 7): per-tensor / per-channel FP8
GEMMs (``gemm[fp8]``) and 128x128 block-scaled ones (``gemm[fp8_block]``) are separate entries; a
checkpoint's quantization_config decides which its linear layers run, and the fits read each
kernel's own table rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jalapeno.cost.ops import build_step_ops
from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import RooflinePricer
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import FORMATS, get_precision
from jalapeno.specs.quant_config import checkpoint_precision


def _eff(**entries) -> Efficiency:
    return Efficiency().with_overrides({"kernel_launch_s": 0.0, "gemm": entries})


def test_block_entry_falls_back_to_per_tensor_then_bf16():
    e = _eff(bf16={"peak_fraction": 0.7, "half_rows": 10.0}, fp8={"peak_fraction": 0.6})
    assert e.gemm_peak("fp8_block") == 0.6 and e.gemm_half("fp8_block") == 10.0
    e = e.with_kernel("gemm", "fp8_block", peak_fraction=0.3)
    assert (e.gemm_peak("fp8_block"), e.gemm_peak("fp8"), e.gemm_peak("bf16")) == (0.3, 0.6, 0.7)


def test_fp8_moe_without_its_own_values_takes_the_block_gemm():
    """FP8 routed experts are block-scaled (specs/kernel_lookup.MOE_GEMM_KEY)."""
    e = _eff(fp8={"peak_fraction": 0.6, "half_rows": 20.0}, fp8_block={"peak_fraction": 0.3, "half_rows": 90.0})
    assert (e.moe_peak("fp8"), e.moe_half("fp8")) == (0.3, 90.0)


def test_block_key_is_a_gemm_and_moe_key_only():
    # moe[fp8_block]: block-scaled FP8 experts (gfx942's own fused-MoE fit, round 39); attention kernels have none
    assert Efficiency().with_overrides({"moe": {"fp8_block": {"peak_fraction": 0.5}}}).moe_peak("fp8_block") == 0.5
    with pytest.raises(SpecError) as err:
        Efficiency().with_overrides({"mla_decode": {"fp8_block": {"peak_fraction": 0.5}}})
    assert err.value.field == "efficiency.mla_decode.fp8_block" and "bf16" in err.value.fix
    with pytest.raises(SpecError) as err:
        Efficiency().with_overrides({"gemm": {"fp6_block": {"peak_fraction": 0.5}}})
    assert "kernel key" in err.value.problem and "fp8_block" in err.value.fix


def test_weight_format_names_its_gemm_kernel():
    assert FORMATS["fp8"].gemm_key("fp8") == "fp8_block"  # 128x128 blocks
    assert FORMATS["fp8_e4m3"].gemm_key("fp8") == "fp8"  # per-tensor
    assert FORMATS["fp8"].gemm_key("bf16") == "bf16"  # dequantised to BF16: no FP8 kernel
    assert FORMATS["nvfp4"].gemm_key("fp4") == "fp4"


@pytest.mark.parametrize("q, preset", [
    ({"quant_method": "fp8", "weight_block_size": [128, 128]}, "fp8,kv=bf16"),
    ({"quant_method": "fp8", "activation_scheme": "dynamic"}, "fp8-tensor,kv=bf16"),
    ({"quant_method": "fp8", "weight_block_size": None, "kv_cache_scheme": {"num_bits": 8}}, "fp8-tensor"),
    ({"quant_method": "fbgemm_fp8"}, "fp8-tensor,kv=bf16"),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {
        "weights": {"num_bits": 8, "type": "float", "strategy": "block", "block_structure": [128, 128]}}}},
     "fp8,kv=bf16"),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {
        "weights": {"num_bits": 8, "type": "float", "strategy": "tensor"}}}}, "fp8-tensor,kv=bf16"),
])
def test_checkpoint_granularity_picks_the_preset(q, preset):
    assert checkpoint_precision({"quantization_config": q}, "config.json", mla=False) == preset


def _keys(model: str, precision: str, system: str = "h200") -> dict[str, str]:
    ops, _ = build_step_ops(load_model(model), load_system(system).chip, Layout(tp=8), get_precision(precision),
                            _batch(), Efficiency())
    return {n: k for n, k, kind in zip(ops.name, ops.keys, ops.kind) if kind == "gemm"}


def _batch():
    from jalapeno.cost.step import Batch

    return Batch(decode_seqs=np.array([64.0]), decode_ctx=np.array([1000.0]), prefill_tokens=np.array([0.0]),
                 prefill_seqs=np.array([0.0]), prefill_ctx=np.array([0.0]))


def test_step_ops_carry_the_granularity():
    tensor, block = _keys("llama-2-70b", "fp8-tensor"), _keys("llama-2-70b", "fp8")
    linear = ("attn.qkv_proj", "attn.o_proj", "dense_ffn.gate_up", "dense_ffn.down")
    assert all(tensor[n] == "fp8" for n in linear) and all(block[n] == "fp8_block" for n in linear)
    assert tensor["lm_head"] == block["lm_head"] == "bf16"
    ds = _keys("deepseek-r1", "fp4", "b200")  # DeepSeek's FP8 non-expert layers keep the release's blocks
    assert ds["attn.o_proj"] == "fp8_block" and ds["moe.router"] == "bf16"


def test_roofline_prices_each_granularity_by_its_entry():
    """H200, m = 4096, k = n = 8192: 2·4096·8192² = 5.4976e11 FLOP at 1,979 TFLOP/s FP8 dense (system
    TOML) x 0.6 (per-tensor) = 0.46298 ms, x 0.3 (block) = 0.92597 ms; compute-bound (64 MiB of weights
    at 4.8 TB/s x 0.85 is 16 us), no launch cost, half rows 0."""
    e = _eff(fp8={"peak_fraction": 0.6, "half_rows": 0.0}, fp8_block={"peak_fraction": 0.3, "half_rows": 0.0})
    ob = OpBuilder(1)
    ob.gemm("per_tensor", "fp8", 4096.0, 8192.0, 8192.0, 1.0, 1.0)
    ob.gemm("block", "fp8", 4096.0, 8192.0, 8192.0, 1.0, 1.0, key="fp8_block")
    t = RooflinePricer(load_system("h200"), e).op_times(ob.build()[0]).time_s[:, 0]
    assert t[0] == pytest.approx(0.46298e-3, rel=1e-4)
    assert t[1] == pytest.approx(0.92597e-3, rel=1e-4)


def test_cdna3_ratio_and_borrowed_entry():
    """Hand-made aiter rows: per-channel at 1 / 2 / 1 / 1.5 of the block-scale time for M >= 1024
    (ratios 1, 2, 1.5; the M = 512 row is left out): median 1.5; the borrowed peak is 0.3 x 1.5."""
    from jalapeno.fit.amd import borrow_per_channel, per_channel_ratio

    shapes = [(1024, 8, 8, 10.0, 10.0), (2048, 8, 8, 20.0, 10.0), (4096, 8, 8, 30.0, 20.0), (512, 8, 8, 9.0, 1.0)]
    bs = pd.DataFrame([(80, m, n, k, b) for m, n, k, b, _ in shapes], columns=["cu_num", "M", "N", "K", "us"])
    pc = pd.DataFrame([(80, m, n, k, p) for m, n, k, _, p in shapes], columns=["cu_num", "M", "N", "K", "us"])
    tables = {"a8w8_blockscale_tuned_gemm": bs, "a8w8_bpreshuffle_tuned_gemm": pc}
    ratio, n = per_channel_ratio(tables, 80)
    assert (ratio, n) == (1.5, 3)
    params, report = {"gemm.fp8_block.peak_fraction": 0.3, "gemm.fp8_block.half_rows": 90.0}, {}
    borrow_per_channel(params, report, ratio, n, 80)
    assert params["gemm.fp8.peak_fraction"] == pytest.approx(0.45) and params["gemm.fp8.half_rows"] == 90.0
    assert report["gemm"]["fp8_borrowed"]["peak_ratio"] == 1.5
    with pytest.raises(SpecError) as err:
        per_channel_ratio(tables, 304)
    assert "cu_num 304" in str(err.value)


def test_fit_reads_each_fp8_kernel_into_its_own_entry():
    """Synthetic tables timed by the roofline itself with two different FP8 kernels: the fit gives
    each dtype its own entry back (per-tensor 0.6 / 40 rows, block 0.3 / 120 rows)."""
    pytest.importorskip("scipy")
    from jalapeno.fit.kernels import fit_gemm, gemm_model_s, gemm_table

    system = load_system("h200")
    m = np.tile([8.0, 16, 64, 256, 1024, 4096], 4)
    n = np.repeat([4096.0, 8192, 10240, 28672], 6)
    k = np.full_like(m, 8192.0)
    rows = []
    for dtype, key, eta, half in (("fp8", "fp8", 0.6, 40.0), ("fp8_block", "fp8_block", 0.3, 120.0)):
        t = gemm_model_s(system, gemm_table(m, n, k, "fp8", 1.0, 1.0, key), key, eta, half, 0.8, 5e-6)
        rows.append(pd.DataFrame({"gemm_dtype": dtype, "m": m, "n": n, "k": k, "latency": t * 1e3}))
    params, report = fit_gemm(pd.concat(rows), system)
    assert params["gemm"]["fp8"]["peak_fraction"] == pytest.approx(0.6, rel=0.02)
    assert params["gemm"]["fp8_block"]["peak_fraction"] == pytest.approx(0.3, rel=0.02)
    assert params["gemm"]["fp8_block"]["half_rows"] == pytest.approx(120.0, rel=0.05)
    assert report["formats"]["fp8"]["held_out_median_ape"] < 0.01


def test_mlperf_llama_fp8_rows_run_per_tensor_checkpoints():
    from jalapeno.fit.mlperf import load_mlperf

    by = {(p.model, p.precision.split(",")[0]) for p in load_mlperf()[0]}  # less options (attn=fp8: Nebius H200)
    assert ("llama-2-70b", "fp8-tensor") in by and ("llama-3.1-405b", "fp8-tensor") in by
    assert ("deepseek-r1", "fp8") in by and not any(m != "deepseek-r1" and pr == "fp8" for m, pr in by)
