"""A tiny hand-computable system and dense model shared by the serving and simulator tests.

1 PFLOP/s BF16, 1 TB/s HBM, every fixed overhead 0 and every efficiency 1 (so step times are
bytes / bandwidth by hand); a 2-layer Llama-shaped model (h 2048, 16 heads / 4 KV heads).
"""

from __future__ import annotations

import textwrap

PEAK_TFLOPS = 1000.0  # bf16, dense
HBM_TB_S = 1.0  # 1e12 B/s
H, LAYERS, HEADS, KV_HEADS, INTER, VOCAB = 2048, 2, 16, 4, 8192, 32000
HEAD_DIM = H // HEADS  # 128


def system_toml(hbm_gb: float) -> str:
    return textwrap.dedent(f"""\
        schema_version = 1
        name = "tiny-{hbm_gb:g}"
        description = "hand-computable test system"
        vendor_verified = false

        [chip]
        name = "Tiny"
        peak_dense_tflops.bf16 = {{ value = {PEAK_TFLOPS}, source = "test" }}
        hbm_capacity_gb = {{ value = {hbm_gb}, source = "test" }}
        hbm_bandwidth_tb_per_s = {{ value = {HBM_TB_S}, source = "test" }}
        hbm_stacks = {{ value = 1, source = "test" }}
        tdp_w = {{ value = 500, source = "test" }}

        [[levels]]
        name = "node"
        chips = 8
        scope = "scale_up"
        topology = "switched"
        bandwidth_gb_per_s = {{ value = 100, source = "test" }}
        latency_us = {{ value = 1.0, source = "test" }}

        [power]
        allin_kw_per_chip = {{ value = 1.0, source = "test" }}

        [cost]
        usd_per_chip_hour = {{ value = 1.0, source = "test" }}

        [efficiency]
        kernel_launch_s = 0
        collective_launch_s = 0
        step_overhead_s = 0
        request_overhead_s = 0
        prompt_overhead_s_per_token = 0
        hbm_fraction = 1
        attention_peak_fraction = 1
        memory_reserve_fraction = 0.05

        [efficiency.gemm.bf16]
        peak_fraction = 1
        half_rows = 1e-6
        """)


def model_config() -> dict:
    return {
        "model_type": "llama", "hidden_size": H, "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS, "intermediate_size": INTER,
        "vocab_size": VOCAB, "tie_word_embeddings": False, "max_position_embeddings": 4096,
    }
