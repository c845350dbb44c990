"""scripts/mla_decode_table_check.py: the per-sequence / per-context split, the summary and the kernel pricing."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

chk = load_script("mla_decode_table_check")

CTX = [1024, 2048, 4096, 8192]


def _frame(batch: int, meas, model, heads: int = 128, kv: str = "fp8") -> pd.DataFrame:
    return pd.DataFrame({"kv": kv, "num_heads": heads, "batch_size": batch, "ctx": CTX,
                         "meas_us": [meas(c) for c in CTX], "model_us": [model(c) for c in CTX]})


def test_lines_split_a_known_intercept_and_slope():
    # measured 300 us + 40 us per 1K tokens, modelled 100 + 50, over 100 sequences:
    # per sequence 3.0 vs 1.0 us, per 1K tokens 0.4 vs 0.5 us
    df = _frame(100, lambda c: 300 + 40 * c / 1024, lambda c: 100 + 50 * c / 1024)
    r = chk.lines(df).iloc[0]
    assert r["meas a/b us"] == pytest.approx(3.0)
    assert r["model a/b us"] == pytest.approx(1.0)
    assert r["meas s/b us per 1K"] == pytest.approx(0.4)
    assert r["model s/b us per 1K"] == pytest.approx(0.5)


def test_summary_keeps_128_heads_and_the_largest_gap():
    # 64 sequences, measured 1.5x the model at every context (96 vs 64 us per 1K tokens): the largest gap is at
    # 8K, (768 - 512) / 64 x 61 layers = 244 us per sequence per step; the 16-head kernel rows (modelled 100x
    # the measured) stay out of the kernel summary, which reads 128 heads per rank only
    k = pd.concat([_frame(64, lambda c: 96 * c / 1024, lambda c: 64 * c / 1024),
                   _frame(64, lambda c: 1.0, lambda c: 100.0, heads=16)])
    k["ratio"] = k.model_us / k.meas_us
    k["gap us/seq/step"] = (k.meas_us - k.model_us) / k.batch_size * chk.LAYERS
    m = k[k.num_heads == 128].copy()
    rows = chk.summary_rows("sys", k, m)
    assert [(r["check"], r["kv"]) for r in rows] == [("kernel", "fp8"), ("module", "fp8")]
    assert rows[0]["ratio median"] == pytest.approx(64 / 96)
    assert rows[0]["largest gap us/seq/step"] == pytest.approx(244.0)


def test_kernel_row_priced_compute_bound_at_the_calibrated_fraction():
    pytest.importorskip("aiconfigurator_core")
    from jalapeno.specs.calibration import load_calibration

    # H200, BF16 KV, 128 heads, 1,024 sequences at 8,192 tokens of context: FLOPs 2·b·n·(2r + d_rope)·L =
    # 2·1024·128·1088·8192 = 2.336e12 at the fitted mla_decode[bf16] fraction of H200's 989 TFLOP/s BF16 dense
    # (NVIDIA H200 datasheet); its KV read (1024·8192·1152 B = 9.7 GB at 4.8 TB/s x 0.9, 2.2 ms) is shorter;
    # plus the set's fixed cost per kernel (kernel_launch_s) for the op's two kernels
    from jalapeno.specs.catalog import load_efficiency

    pf = load_calibration("h200")["parameters"]["mla_decode"]["bf16"]["peak_fraction"]
    launch = load_efficiency("h200").kernel_launch_s
    k = chk.kernel_frame("h200")
    row = k[(k.kv == "bf16") & (k.num_heads == 128) & (k.batch_size == 1024) & (k.ctx == 8192)].iloc[0]
    assert row.model_us == pytest.approx(2 * 1024 * 128 * 1088 * 8192 / (pf * 989e12) * 1e6 + 2 * launch * 1e6, rel=1e-3)
