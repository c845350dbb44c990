"""fit/aic_layout.aic_agg_layout: the parallel sizes of aiconfigurator's aggregated rows.

Expected layouts are read by hand off the row fields and ids of aiconfigurator-core 0.12.0's
``systems/silicon_sample.csv`` (the ids below are real rows of that file).
"""

from jalapeno.fit.aic_layout import aic_agg_layout


def test_inflated_fields_are_a_k_chip_run_with_attention_tp():
    # dsr1_b200_sglang_fp4_agg_1024x1024_c4_cfg202: tp 16, moe_tp 4, moe_ep 4 (its named twin
    # 2026_04_06_deepseek_r1_b200_sxm_sglang_fp4_agg_1024x1024_c4_tp4_ep4_1037 has the same TPOT)
    tp, dp, ep, note = aic_agg_layout(16, 1, 4, 4, "dsr1_b200_sglang_fp4_agg_1024x1024_c4_cfg202")
    assert (tp, dp, ep) == (4, 1, 4)
    assert "inflated form of a 4-chip run" in note


def test_inflated_fields_with_tp_1_are_attention_dp():
    # 2026_04_06_deepseek_r1_b200_sxm_trtllm_fp8_agg_1024x1024_c64_tp8_ep8_945: tp 1, dp 64, moe 8 x 8
    assert aic_agg_layout(1, 64, 8, 8, "2026_04_06_deepseek_r1_b200_sxm_trtllm_fp8_agg_1024x1024_c64_tp8_ep8_945")[:3] \
        == (1, 8, 8)


def test_a_run_the_id_names_at_tp_times_dp_keeps_its_fields():
    # H100 TRT-LLM Qwen3-235B ..._c16_tp4_epnone_16: TP4 with MoE TP2 x EP2 (2 H100s cannot hold it)
    assert aic_agg_layout(4, None, 2, 2, "qwen_h100_sxm_trtllm_agg_128x128_c16_tp4_epnone_16") == (4, 1, 2, "")


def test_vllm_moe_wider_than_attention_is_data_parallel_attention():
    # H200 vLLM 0.12.0 Qwen3-235B: tp 1, moe_tp 2 -> 2 chips, DP2 attention; tp 2, moe_tp 4 -> TP2 x DP2
    tp, dp, ep, note = aic_agg_layout(1, None, 2, 1, "qwen_h200_sxm_vllm_agg_1000x100_c8_tp1_epnone_2")
    assert (tp, dp, ep) == (1, 2, 1) and "attention DP2" in note
    assert aic_agg_layout(2, None, 4, 1, "qwen_h200_sxm_vllm_agg_2000x100_c11_tp2_epnone_13")[:3] == (2, 2, 1)
    assert aic_agg_layout(2, None, 1, 2, "qwen_h200_sxm_vllm_agg_8000x100_c4_tp2_epnone_37") == (2, 1, 2, "")


def test_an_id_naming_another_run_still_wins():
    tp, dp, ep, note = aic_agg_layout(64, 1, 8, 1, "x_agg_1024x1024_c32_tp8_ep8_922")
    assert (tp, dp, ep) == (8, 1, 8) and "disagree with the id" in note
    assert aic_agg_layout(8, None, 1, 8, "no_named_run") == (8, 1, 8, "")
