"""Engine recipes' CUDA-graph captured sizes (deploy/graph_capture.py, Recipe.graph_sizes) and the MLPerf submitted
engines' attention-DP balancing and FP8 context attention (fit/mlperf_engines.py).

Expected lists are written out by hand from the engines' rules as their sources state them (module docstring of
deploy/graph_capture.py), not from the code: TensorRT-LLM 1.1-1.2 with padding: 1, 2, 4, 8, 16, ..., 128 then the
powers of two from 256 below the maximum, then the maximum; SGLang 0.5.x: 1, 2, 4, 8, 12, 16, 24, ..., 256 (no
drafts) or 1..8, 10, 12, ..., 32, 40, 44, ..., 64, 72, 80, ... (drafts); vLLM V1: 1, 2, 4, 8, ..., 248, 256, 272, ...
"""

from __future__ import annotations

import pytest

from jalapeno.deploy.engines import get_recipe, launch_limits
from jalapeno.deploy.graph_capture import captured_sizes, sglang_batch_sizes, trtllm_batch_sizes, vllm_capture_sizes
from jalapeno.deploy.recipe import _recipe
from jalapeno.errors import SpecError
from jalapeno.fit.mlperf import MLPERF_ENGINES, MLPERF_LIMIT_ENGINES, load_mlperf, submitted_deployment

EIGHTS_TO_128 = (1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128)


def test_trtllm_padded_lists_by_release():
    assert trtllm_batch_sizes(128, "1.1.0rc2.post2") == EIGHTS_TO_128
    assert trtllm_batch_sizes(1024, "1.2.0rc6.post3") == (*EIGHTS_TO_128, 256, 512, 1024)
    assert trtllm_batch_sizes(300, "1.2.0rc6.post3") == (*EIGHTS_TO_128, 256, 300)  # the maximum itself is captured
    assert trtllm_batch_sizes(20, "1.2.0rc6.post3") == (1, 2, 4, 8, 16, 20)
    # PR #12895 (2026-04): steps of 64 after 128
    assert trtllm_batch_sizes(448, "1.3.0") == (*EIGHTS_TO_128, 192, 256, 320, 384, 448)


def test_sglang_and_vllm_lists():
    assert sglang_batch_sizes(32, False) == (1, 2, 4, 8, 12, 16, 24, 32)
    assert sglang_batch_sizes(80, True) == (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32,
                                            40, 44, 48, 52, 56, 60, 64, 72, 80)
    assert sglang_batch_sizes(304, False)[-4:] == (256, 272, 288, 304)
    assert vllm_capture_sizes(288)[-5:] == (240, 248, 256, 272, 288)
    assert vllm_capture_sizes(288)[:5] == (1, 2, 4, 8, 16)


def test_padding_switch_per_engine():
    assert captured_sizes("trt", "1.2.0rc6.post3", 128) is None  # TRT-LLM enable_padding defaults to False
    assert captured_sizes("trt", "1.2.0rc6.post3", 128, padding=True) == EIGHTS_TO_128
    assert captured_sizes("sglang-disagg", "0.5.9", 160, padding=False) is None  # every size captured: no dummies
    assert captured_sizes("sglang", "0.5.12", 32) == (1, 2, 4, 8, 12, 16, 24, 32)  # SGLang pads by default
    assert captured_sizes("atom-rocm", "atom20260511", 512) is None  # rule not read


def test_recipes_carry_their_engines_lists():
    kw, _ = launch_limits("h200", "deepseek-r1", "trt", "fp8", 8, 1024, 1024, 64, mtp=True)
    assert kw["cuda_graph_batch_sizes"] == EIGHTS_TO_128 and kw["cuda_graph_max_batch"] == 128
    kw, _ = launch_limits("b200", "deepseek-r1", "sglang", "fp8", 4, 8192, 1024, 4)  # --cuda-graph-max-bs 32
    assert kw["cuda_graph_batch_sizes"] == (1, 2, 4, 8, 12, 16, 24, 32)
    # the MoRI decode workers capture every size 1..160 (cuda_graph_bs_range): nothing padded
    assert get_recipe("sglang-mori-mi355x-dsr1-fp4-dep").graph_sizes(160) is None
    # the B200 TRT-LLM recipe pads, but its ceiling is sized to each load (CONC, CONC/4 per rank): not set
    assert "cuda_graph_batch_sizes" not in get_recipe("trtllm-b200-dsr1-fp4-mtp").deployment_kwargs(64)


def test_bad_padding_flag_is_one_clear_error():
    raw = {"name": "x", "engine": "trt", "version": "1.2.0", "systems": ["b200"], "model": "deepseek-r1",
           "source": "s", "precision": "fp4", "serving": "agg", "cuda_graph_padding": "yes"}
    with pytest.raises(SpecError, match="cuda_graph_padding.*not true or false") as e:
        _recipe(raw, 0)
    assert "enable_padding" in e.value.fix


def test_mlperf_engines_carry_adp_balancing():
    """inference_results_v5.1 @965182b deepseek-r1.py configs: adp_balancing_timeout_iters 500 Offline (NVIDIA /
    Google B200, HPE H200), 50 Offline (NVIDIA GB200-NVL72 x72), 9 Server; the dense Llama engines have none."""
    want = {"NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Offline": 500, "HPE_HPE_Cray_XD670_H200_SXM_141GBx8_TRT_"
            "deepseek-r1_Offline": 500, "NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_deepseek-r1_Offline": 50,
            "Google_B200-SXM-180GBx8_TRT_deepseek-r1_Server": 9}
    engines = {**MLPERF_ENGINES, **MLPERF_LIMIT_ENGINES}
    for key, iters in want.items():
        dep, _ = submitted_deployment(engines["mlperf51_" + key], "fp4", 72 if "GB200" in key else 8)
        assert dep.adp_balance_timeout_iters == iters
    dep, _ = submitted_deployment(MLPERF_LIMIT_ENGINES["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_Server"],
                                  "nvfp4", 8)
    assert dep.adp_balance_timeout_iters is None


def test_mlperf_fp8_llama_rows_run_fp8_context_attention():
    """Nebius H200 Llama configs build with use_fp8_context_fmha: their fp8-tensor rows price FP8 attention math;
    the AMD FP8 rows (vLLM harness) and the DeepSeek-R1 rows (block FP8 / FP4) keep their presets."""
    pts, _ = load_mlperf()
    prec = {p.id: p.precision for p in pts}
    assert prec["mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama3p1-405b_Offline"] == "fp8-tensor,attn=fp8"
    assert prec["mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama2-70b-99_Server"] == "fp8-tensor,attn=fp8"
    assert prec["mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Offline"] == "fp8-tensor"
    assert prec["mlperf51_HPE_HPE_Cray_XD670_H200_SXM_141GBx8_TRT_deepseek-r1_Offline"] == "fp8"


def test_an_explicit_ceiling_takes_the_engines_list_under_it():
    """``--cuda-graph-max-batch 100`` over an SGLang recipe: SGLang captures its list up to 100 (…, 88, 96) and
    its max-bs becomes 96, the largest listed size; without a recipe no list (nothing padded)."""
    from jalapeno.cli.engine_opts import limit_kwargs

    kw = limit_kwargs(get_recipe("sglang-b200-dsr1-fp4"), 64, None, None, 100)
    assert kw["cuda_graph_batch_sizes"][-3:] == (80, 88, 96) and kw["cuda_graph_max_batch"] == 96
    assert "cuda_graph_batch_sizes" not in limit_kwargs(None, 64, None, None, 100)
