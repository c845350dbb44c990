"""The MLA generation kernel's floor (KernelEfficiency.floor_s; cost/roofline.kernel_floor_s) and the
floor calibration fits for it (fit/mla_kernels.py: the decode fit's t0, reported, not set).

Expected values: by hand from the definitions (kernels x max(launch, floor)), and from TensorRT-LLM
1.3.0rc20's own MLA generation table (aiconfigurator-core ``generation_mla_perf``, H200, 16 heads per
GPU, FP8 KV): the measured latencies are read from the table, not from the model.
"""

from __future__ import annotations

import pytest

from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import RooflinePricer
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_system
from jalapeno.specs.efficiency import Efficiency


def _mla_op(count: float = 1.0, kv: float = 0.0, kernel: str = "mla_decode"):
    ob = OpBuilder(1)
    ob.op("attn.mla_decode", "attention", "fp8", flop=1.0, kv=kv, kernels=2, count=count, kernel=kernel)
    return ob.build()[0]


def _time(table, launch: float, floor: float | None) -> float:
    entry = {"hbm_fraction": 0.5, **({"floor_s": floor} if floor is not None else {})}
    eff = Efficiency().with_overrides({"kernel_launch_s": launch, "mla_decode": {"fp8": entry}})
    return float(RooflinePricer(load_system("h200"), eff).op_times(table).time_s[0, 0])


def test_floor_replaces_shorter_launches():
    # two kernels, 8 us floor each, 2.4 us launches: 2 x 8 = 16 us fixed (no work to speak of)
    assert _time(_mla_op(), 2.4e-6, 8e-6) == pytest.approx(16e-6, rel=1e-6)
    # without a floor: the launches, 2 x 2.4 = 4.8 us
    assert _time(_mla_op(), 2.4e-6, None) == pytest.approx(4.8e-6, rel=1e-6)
    # launches longer than the floor stay: 2 x 10 us
    assert _time(_mla_op(), 10e-6, 8e-6) == pytest.approx(20e-6, rel=1e-6)


def test_floor_is_per_layer_and_adds_to_the_kv_read():
    # 61 layers: 122 kernels x 8 us = 976 us; plus 61 x 37.7 MB of FP8 latent (8 sequences x 8,192 tokens x
    # 576 B) at 0.5 x 4.8 TB/s = 61 x 15.73 us
    kv = 8 * 8192 * 576.0
    t = _time(_mla_op(count=61, kv=kv), 2.4e-6, 8e-6)
    assert t == pytest.approx(122 * 8e-6 + 61 * kv / (0.5 * 4.8e12), rel=1e-6)


def test_floor_only_for_its_own_family_and_format():
    # a generic attention op (no kernel family) and the bf16 entry take nothing from mla_decode[fp8]
    assert _time(_mla_op(kernel=""), 2.4e-6, 8e-6) == pytest.approx(4.8e-6, rel=1e-6)
    eff = Efficiency().with_overrides({"kernel_launch_s": 2.4e-6, "mla_decode": {"bf16": {"floor_s": 8e-6}}})
    t = float(RooflinePricer(load_system("h200"), eff).op_times(_mla_op()).time_s[0, 0])
    assert t == pytest.approx(4.8e-6, rel=1e-3)


def test_bad_floor_named_with_fix():
    with pytest.raises(SpecError, match=r"mla_decode\.fp8\.floor_s.*must be >= 0"):
        Efficiency().with_overrides({"mla_decode": {"fp8": {"floor_s": -1e-6}}})
    with pytest.raises(SpecError, match=r"1.5e-5 is 15 µs"):
        Efficiency().with_overrides({"mla_decode": {"fp8": {"floor_s": 8.0}}})
    with pytest.raises(SpecError, match=r"unknown gemm parameter"):
        Efficiency().with_overrides({"gemm": {"fp8": {"floor_s": 1e-6}}})


def _reported_floor_s(system: str, fmt: str) -> float:
    import tomllib
    from importlib.resources import files

    text = (files("jalapeno") / "data" / "calibration" / f"{system}.toml").read_text()
    return float(tomllib.loads(text)["report"]["mla"]["decode"][fmt]["kernel_floor_s"])


def test_fitted_h200_floor_matches_trtllm_table_at_few_sequences():
    """The calibrated H200 MLA decode with the floor its fit reports, against TensorRT-LLM's measured kernel
    at 16 heads per GPU (DeepSeek-R1 at TP8), FP8 KV, 1-8 sequences: the regime the launches under-price."""
    pytest.importorskip("pyarrow")
    kt = pytest.importorskip("jalapeno.fit.kernel_tables")
    pytest.importorskip("aiconfigurator_core")  # the table's package; a table missing from it is a failure, not a skip
    df, _ = kt.load_table("h200_sxm", "mla", "generation_mla_perf")
    from jalapeno.fit.mla_kernels import MLA_TABLE_MODEL, mla_table
    from jalapeno.specs.catalog import load_efficiency, load_model

    d = df[(df.kv_cache_dtype == "fp8") & (df.num_heads == 16) & df.batch_size.isin([1, 8])
           & df.step.isin([1023, 8191])].drop_duplicates(subset=["batch_size", "step"])
    assert len(d) == 4  # b 1 and 8 at 1K and 8K context: 14.2, 19.8, 16.2, 27.9 us in the table
    tab = mla_table("decode", d, "fp8", "fp8", load_model(MLA_TABLE_MODEL).attention)
    floor = _reported_floor_s("h200", "fp8")
    # two kernels' floor against the table's time at one sequence and the fit's shortest context (1K:
    # 14.2 us, where the latent read is 0.6 MB, < 0.3 us): the floor is most of it. (Shorter contexts run
    # 11-13.5 us: the fit's floor also takes the latency-bound part of 1K-8K, not fitted below 1K)
    b1 = d[(d.batch_size == 1) & (d.step == 1023)].latency.iloc[0] * 1e-3
    assert 2 * floor == pytest.approx(float(b1), rel=0.25)
    eff = load_efficiency("h200").with_overrides({"kernel_launch_s": 2.4e-6,  # a serving launch
                                                  "mla_decode": {"fp8": {"floor_s": floor}}})
    model = RooflinePricer(load_system("h200"), eff).op_times(tab).time_s[0]
    measured = d.latency.to_numpy() * 1e-3
    assert model == pytest.approx(measured, rel=0.2)
    # launches alone (no floor) price the same rows 35-70% short
    bare = load_efficiency("h200").with_overrides({"kernel_launch_s": 2.4e-6})  # the shipped set: no floor
    short = RooflinePricer(load_system("h200"), bare).op_times(tab).time_s[0] / measured
    assert (short < 0.65).all()


def test_h200_bf16_mla_fit_against_flashmla_published_figures():
    """Cross-check (deepseek-ai/FlashMLA README, H800 SXM5, BF16): up to 3,000 GB/s memory-bound of the
    H800's 3.35 TB/s (0.90) and 580 TFLOP/s compute-bound (660 in the README's later version) of the
    989 TFLOP/s BF16 dense peak (0.59-0.67). H800 is H100's die with H100's SM and clocks; the H200
    fit's fractions (TensorRT-LLM's own kernel, another implementation) should land near them."""
    from jalapeno.specs.catalog import load_efficiency

    e = load_efficiency("h200")
    assert e.kernel_hbm("mla_decode", "bf16") == pytest.approx(3000.0 / 3350.0, abs=0.05)
    assert 580.0 / 989.0 - 0.05 <= e.kernel_peak("mla_decode", "bf16") <= 660.0 / 989.0 + 0.05
