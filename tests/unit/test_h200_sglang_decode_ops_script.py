"""scripts/h200_sglang_decode_ops.py: its table reads at grid points and its shapes, by hand (round 27, h200sgl27)."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

pytest.importorskip("aiconfigurator_core")
s = load_script("h200_sglang_decode_ops")


def _raw(kind: str, ver: str, name: str) -> pd.DataFrame:
    return pd.read_parquet(str(s.DATA / kind / "sglang" / ver / f"{name}.parquet"))


def test_loglog_is_geometric_between_points_and_holds_the_ends():
    assert s.loglog(8, [4, 16], [1.0, 4.0]) == pytest.approx(2.0)  # sqrt(1 x 4), halfway in log x
    assert s.loglog(1, [4, 16], [1.0, 4.0]) == pytest.approx(1.0)
    assert s.loglog(64, [4, 16], [1.0, 4.0]) == pytest.approx(4.0)


def test_a_grid_gemm_reads_the_fastest_measured_row():
    g = _raw("gemm", "0.5.14", "gemm_perf")
    # o_proj of DeepSeek-R1 at TP8: n = hidden 7168, k = 128 heads x 128 v_head_dim / 8 = 2048, at 32 rows
    want = g[(g.gemm_dtype == "fp8_block") & (g.m == 32) & (g.n == 7168) & (g.k == 2048)].latency.min()
    assert s.gemm_ms("fp8_block", 32, 7168, 2048) == pytest.approx(want)


def test_an_off_grid_n_lies_between_its_neighbours():
    # the dense FFN's gate_up at TP8: n = 2 x 18432 / 8 = 4608, between the table's 4096 and 5120
    lo, hi = s.gemm_ms("fp8_block", 32, 4096, 7168), s.gemm_ms("fp8_block", 32, 5120, 7168)
    assert min(lo, hi) <= s.gemm_ms("fp8_block", 32, 4608, 7168) <= max(lo, hi)


def test_the_mla_read_is_sixteen_local_heads_bf16_kv():
    d = _raw("mla", "0.5.14", "generation_mla_perf")
    # 128 heads / TP8 = 16 a rank; batch 8 at 1023 cached tokens (a grid point: the collector's step)
    want = d[(d.kv_cache_dtype == "bfloat16") & (d.num_heads == 16) & (d.batch_size == 8) & (d.step == 1023)].latency.min()
    assert s.mla_ms(8, 1023) == pytest.approx(want)


def test_the_table_step_counts_every_layer_once():
    t = s.table_step(8, 1023)
    assert t["mla"] == pytest.approx(61 * s.mla_ms(8, 1023))  # 61 decoder layers (DeepSeek-V3 config.json)
    assert t["experts"] == pytest.approx(58 * s.experts_ms(8))  # 58 MoE layers (the first 3 dense)
    assert t["dense"] == pytest.approx(3 * (s.gemm_ms("fp8_block", 8, 4608, 7168) + s.gemm_ms("fp8_block", 8, 7168, 2304)))
    # two all-reduces of 8 x 7168 BF16 elements per layer
    assert t["allreduce"] == pytest.approx(61 * 2 * s.allreduce_ms(8 * 7168))
