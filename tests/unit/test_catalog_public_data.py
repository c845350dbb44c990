"""Systems and models added for public measurements (issue 18 part 7): the values the model
loads against the published figures (datasheets, model cards), computed independently here."""

from __future__ import annotations

import pytest

from jalapeno.specs.catalog import load_model, load_system


@pytest.mark.parametrize("name, bf16_tflops, hbm_tb_s, hbm_gb, link_gb_s, nvls, tdp_w", [
    ("a100-sxm", 312, 2.039, 80, 300, False, 400),   # NVIDIA A100 datasheet; NVLink 3 600 GB/s bidirectional
    ("h800", 989, 3.35, 80, 200, True, 700),         # H100 SXM compute; NVLink 400 GB/s bidirectional
    ("mi350x", 2307, 8.0, 288, 537.6, False, 1000),  # AMD MI350X datasheet; 7 x 153.6 GB/s / 2
])
def test_new_systems_match_their_datasheets(name, bf16_tflops, hbm_tb_s, hbm_gb, link_gb_s, nvls, tdp_w):
    s = load_system(name)
    assert s.chip.peak_flop_per_s["bf16"] == pytest.approx(bf16_tflops * 1e12, rel=1e-3)
    assert s.chip.hbm_bandwidth_bytes_per_s == pytest.approx(hbm_tb_s * 1e12, rel=1e-3)
    assert s.chip.hbm_capacity_bytes == pytest.approx(hbm_gb * 1e9, rel=1e-3)
    node = s.levels[0]
    assert node.chips == 8 and node.scope == "scale_up"
    assert node.bandwidth_bytes_per_s == pytest.approx(link_gb_s * 1e9, rel=2e-3)
    assert node.in_network_reduction is nvls
    assert s.chip.tdp_w == tdp_w


def test_a100_has_no_fp8():
    """Ampere tensor cores have no FP8: the catalog must not invent a peak for it."""
    assert "fp8" not in load_system("a100-sxm").chip.peak_flop_per_s


@pytest.mark.parametrize("name, layers, params_b, rel", [
    ("llama-2-70b", 80, 68.98, 0.005),    # Meta Llama 2 paper / model card: 70B class, 68.98B from the config shapes
    ("llama-3.1-405b", 126, 405.85, 0.005),  # Meta: 405B
    ("mixtral-8x7b", 32, 46.7, 0.005),    # Mistral AI: 46.7B total
    ("qwq-32b", 64, 32.5, 0.01),          # Qwen: 32.5B (31.0B non-embedding + 2 x 152064 x 5120)
    ("qwen3-32b", 64, 32.8, 0.005),       # Qwen3 model card: 32.8B (31.2B non-embedding)
])
def test_new_models_match_published_sizes(name, layers, params_b, rel):
    m = load_model(name)
    assert m.num_layers == layers
    assert m.total_params / 1e9 == pytest.approx(params_b, rel=rel)


def test_mixtral_routes_two_of_eight_and_qwq_is_dense_gqa():
    mix, qwq = load_model("mixtral-8x7b"), load_model("qwq-32b")
    assert (mix.moe.num_experts, mix.moe.top_k) == (8, 2)
    assert qwq.moe is None
    assert (qwq.attention.num_heads, qwq.attention.num_kv_heads) == (40, 8)
