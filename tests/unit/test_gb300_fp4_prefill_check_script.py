"""scripts/gb300_fp4_prefill_check.py: GB200 / GB300 kernel-table ratios, the peak what-if, the paired rows' summary."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

script = load_script("gb300_fp4_prefill_check")

_MOE = {"moe_dtype": "nvfp4", "kernel_source": "cutlass", "hidden_size": 7168, "inter_size": 2048, "topk": 8,
        "num_experts": 256, "moe_tp_size": 4, "moe_ep_size": 1, "distribution": "balanced"}


def _moe(rows):
    return pd.DataFrame([{**_MOE, **over, "num_tokens": t, "latency": ms} for t, ms, over in rows])


def test_moe_ratio_keeps_prefill_shapes_of_deepseek_and_one_row_a_shape():
    gb300 = _moe([(1024, 1.0, {}), (1024, 3.0, {}),  # one shape collected twice: median 2.0
                  (4096, 2.0, {}), (512, 1.0, {}),  # 512 tokens: a decode shape, left out
                  (4096, 1.0, {"hidden_size": 4096})])  # another model's shape, left out
    gb200 = _moe([(1024, 2.2, {}), (4096, 2.4, {}), (512, 9.0, {}), (4096, 9.0, {"hidden_size": 4096})])
    t = script.table_ratios(gb300, gb200, "moe")
    assert len(t) == 1 and t.loc[0, "n"] == 2
    # ratios 2.2 / 2.0 = 1.1 and 2.4 / 2.0 = 1.2: median 1.15, p10 1.1 + 0.1·0.1 = 1.11, p90 1.19
    assert (t.loc[0, "median"], t.loc[0, "p10"], t.loc[0, "p90"]) == pytest.approx((1.15, 1.11, 1.19))


def test_gemm_top_decile_achieved_rate_by_hand():
    base = {"kernel_source": "k", "gemm_dtype": "nvfp4"}
    shapes = [(1024 * (i + 1), 1024, 1024) for i in range(10)]
    gb300 = pd.DataFrame([{**base, "m": m, "n": n, "k": k, "latency": 1.0} for m, n, k in shapes])
    gb200 = gb300.assign(latency=1.25)
    g = script.gemm_top_decile(gb300, gb200)
    # the top decile (quantile 0.9 of 10 FLOP counts) keeps only m = 10,240: 2·10240·1024·1024 FLOP = 21.475 GFLOP
    # in 1 ms = 21.475 TFLOP/s = 0.021 PFLOP/s on GB300, 0.017 at 1.25 ms on GB200; ratio 1.25
    assert g.loc[0, "n"] == 1
    assert g.loc[0, "pf_300 median"] == pytest.approx(0.021, abs=1e-3)
    assert g.loc[0, "pf_200 median"] == pytest.approx(0.017, abs=1e-3)
    assert g.loc[0, "ratio median"] == pytest.approx(1.25)


def test_peak_ratio_reads_the_catalog():
    # gb300-nvl72.toml FP4 15,000 TFLOP/s over gb200-nvl72.toml 10,000; FP8 5,000 over 5,000; B300 13,500 / B200 9,000
    assert script.peak_ratio("fp4") == pytest.approx(1.5)
    assert script.peak_ratio("fp8") == pytest.approx(1.0)
    assert script.peak_ratio("fp4", ("b300", "b200")) == pytest.approx(1.5)


def test_peak_step_replaces_only_the_routed_experts():
    # 100 ms step with 40 ms of experts; GB200's experts 42 ms / 1.5 = 28 ms -> 100 - 40 + 28 = 88 ms
    assert script.peak_step({"interval": 0.1, "routed experts": 0.04}, {"routed experts": 0.042}, 1.5) == pytest.approx(0.088)


def test_pair_summary_splits_by_release_series():
    t = pd.DataFrame({"engine": ["sglang"] * 3, "precision": ["fp4"] * 3, "c": [4.0, 8.0, 32.0],
                      "release 300": ["0.5.8.post1"] * 3, "release 200": ["0.5.8", "0.5.8", "0.5.5.post2"],
                      "measured 200/300": [1.0, 1.1, 2.0], "predicted 200/300": [1.05, 1.05, 1.06],
                      "err 300": [0.1, 0.3, 1.2], "err 200": [0.1, 0.2, 0.1]})
    s = script.pair_summary(t)
    same, diff = s.loc[("sglang", "fp4", "same")], s.loc[("sglang", "fp4", "different")]
    assert same["n"] == 2 and same["measured"] == pytest.approx(1.05) and same["err_300"] == pytest.approx(20.0)
    assert diff["n"] == 1 and diff["measured"] == pytest.approx(2.0) and diff["err_200"] == pytest.approx(10.0)


def test_labels():
    assert script.same_series("0.8.1.post2", "0.8.1") and not script.same_series("0.5.1-rc0.pre3", "0.8.1.post2")
    assert script.load_band(128, 1) == "C/gpu 16-128" and script.load_band(129, 1) == "C/gpu > 128"
    assert script.op_group("attn.mla_prefill") == "MLA prefill" and script.op_group("moe.router") == "rest"


def test_installed_tables_show_no_fp4_peak_gain():
    """The finding the docs state: aiconfigurator's own GB300 and GB200 NVFP4 MoE kernels at DeepSeek-R1's prefill
    shapes differ by a few per cent, far from the 1.5x FP4 peak ratio (fails if a table release changes that)."""
    pytest.importorskip("aiconfigurator_core")
    t = script.kernel_ratios()
    moe = t[(t.family == "moe") & (t.dtype == "nvfp4")]
    assert len(moe) == 2 and (moe["median"] < 1.1).all() and (moe.peak_ratio == 1.5).all()
