"""scripts/trt_eager_host_calls.py: the host-call tables summed by hand, the step totals and the sum-or-max test."""

from __future__ import annotations

from script_module import load_script

hc = load_script("trt_eager_host_calls")


def test_part_totals_by_hand():
    # MLA context path (attention.py MLA.forward / forward_impl / forward_context_default): new_empty 1, custom op 1,
    # two slices 2, kv_a GEMM 1, split 1, two norms on two streams 2 + 6, q_b GEMM and concat on two streams 2 + 6,
    # four context slices 4, kv_b GEMM 1, split 1, empty_like + view 2, slice + view 2, compiled copy 1, view 1,
    # attention 1, output slice 1, o_proj 1 = 37
    assert hc.part_calls("mla_context") == 1 + 1 + 2 + 1 + 1 + 8 + 8 + 4 + 1 + 1 + 2 + 2 + 1 + 1 + 1 + 1 + 1 == 37
    # the absorption (generation) path a mixed step adds: 4 + 2 + 3 + 3 + 1 + 2 + (4 + 6) + 1 + 1 + 2 + 3 + 1 = 33
    assert hc.part_calls("mla_generation") == 33
    # DeepSeek MoE: fused pre-norm 1, two streams 6, gate 2, quantize 2, run_moe 5, shared expert 5, add 1, post-norm 1
    assert hc.part_calls("deepseek_moe") == 23
    # a GQA layer: Llama 1 + 2 + 1 + 1 + 2 + 1 + 6 = 14; gpt-oss 1 + 1 + 1 + 1 + 2 + 2 + 5 + 1 + 2 = 16
    assert (hc.part_calls("llama_layer"), hc.part_calls("gptoss_layer")) == (14, 16)


def test_step_totals_by_hand():
    # DeepSeek-R1: 3 dense layers (37 + 6) and 58 MoE layers (37 + 23); mixed adds 33 to each of the 61 layers
    assert hc.step_calls("deepseek-r1", False) == 3 * 43 + 58 * 60 == 3609
    assert hc.step_calls("deepseek-r1", True) == 3609 + 61 * 33 == 5622
    # MTP: each drafting pass is one MoE layer plus the MTP layer's 4 own calls
    assert hc.step_calls("deepseek-r1", False, 3) == 3609 + 3 * (37 + 23 + 4)
    # GQA engines run one attention call for context and decodes: mixed or not, 80 x 14 and 36 x 16
    assert hc.step_calls("llama-3.3-70b", True) == hc.step_calls("llama-3.3-70b", False) == 1120
    assert hc.step_calls("gpt-oss-120b", True) == 576
    # the ratio the ttfttrt26 bounds need (DeepSeek-R1 >= ~3.6x Llama-3.3-70B, >= ~7x gpt-oss-120b) on mixed steps
    assert hc.step_calls("deepseek-r1", True) / 1120 > 3.6 and hc.step_calls("deepseek-r1", True) / 576 > 7


def test_sum_or_max_by_hand():
    # FP4 TP8 warm rows: 1k lone 0.031 s implies 0.134 s; at 8k the lone step is 0.124 s. A host running ahead gives
    # max(0.134, 0.124) = 0.134 s; a host waiting every layer gives (0.134 - 0.031) + 0.124 = 0.227 s (rows: 0.144)
    mx, sm = hc.sum_or_max(0.031, 0.134, 0.124, 0.144)
    assert abs(mx - 0.134) < 1e-9 and abs(sm - 0.227) < 1e-9
