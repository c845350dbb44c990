"""scripts/aic_kimi_split.py: the log-log interpolation and the measured-kernel look-ups it reads."""

from __future__ import annotations

import pytest
from script_module import load_script

split = load_script("aic_kimi_split")


def test_interp_loglog_by_hand():
    # halfway between 4 and 16 in log x is 8; halfway between 1 and 4 in log y is 2
    assert split.interp_loglog(8, [4, 16], [1.0, 4.0]) == pytest.approx(2.0)
    # a power law y = x^0.5 through (1, 1) and (100, 10) is reproduced anywhere between: x = 10 -> sqrt(10)
    assert split.interp_loglog(10, [1, 100], [1.0, 10.0]) == pytest.approx(10 ** 0.5)
    # outside the measured range the end values hold
    assert split.interp_loglog(1, [4, 16], [1.0, 4.0]) == pytest.approx(1.0)
    assert split.interp_loglog(64, [4, 16], [1.0, 4.0]) == pytest.approx(4.0)


def test_kernel_tables_cover_the_checkpoints_split():
    # both checkpoints' attention projections are BF16 (the INT4 release quantises experts only; NVIDIA's
    # NVFP4 checkpoint excludes the MLA projections), and only B200 has a vLLM MLA module table read
    assert split.MLA_GEMM == {"fp4": "bfloat16", "int4": "bfloat16"}
    assert set(split.MLA_DIRS) == {"b200"}
    assert {k for k in split.MOE_KERNELS} == {("b200", "fp4"), ("b300", "fp4"), ("gb200-nvl72", "fp4"),
                                              ("b200", "int4")}


def test_measured_kernels_at_table_grid_points():
    pytest.importorskip("aiconfigurator_core")
    # aiconfigurator-core 0.12.0, b200_sxm moe vllm 0.19.0 moe_perf: vllm_flashinfer_trtllm_moe_fp4, nvfp4,
    # 7168 x 2048, 384 experts top-8, MoE TP1 EP4, balanced, 16 tokens: 0.1353 ms (fastest row)
    tokens, lat = split._moe_curve("b200", "fp4", 7168, 2048, 384, 1, 4)
    assert split.interp_loglog(16, tokens, lat) == pytest.approx(0.1353e-3, rel=2e-3)
    # a layout the table does not hold, or a system/checkpoint without a kernel named, gives None
    assert split._moe_curve("b200", "fp4", 7168, 2048, 384, 3, 1) is None
    assert split._moe_curve("h200", "int4", 7168, 2048, 384, 8, 1) is None
    # b200_sxm mla vllm 0.24.0 mla_generation_module_perf: FLASHINFER_MLA, bfloat16 GEMMs, fp8 KV, 16 heads,
    # batch 16, step 2048: 0.0497 ms
    assert split.mla_module_s("b200", "bfloat16", "fp8", 16, 16, 2048) == pytest.approx(0.0497e-3, rel=2e-3)
    assert split.mla_module_s("b300", "bfloat16", "fp8", 16, 16, 2048) is None
    assert split.mla_module_s("b200", "bfloat16", "fp8", 3, 16, 2048) is None
