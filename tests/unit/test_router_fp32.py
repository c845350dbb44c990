"""MiniMax-M2's FP32 gate (round 26, bigbatch26): vLLM and SGLang run the router GEMM in FP32, priced on the
chip's FP32 vector units (``chip.fp32_vector_tflops``) with its FP32 weights and input; expected values by hand."""

from __future__ import annotations

import numpy as np
import pytest
from cli_runner import check_error, run

from jalapeno.cost.ops import build_step_ops
from jalapeno.cost.roofline import op_times
from jalapeno.cost.step import Batch
from jalapeno.deploy.layout import Layout
from jalapeno.specs.catalog import load_efficiency, load_model, load_system
from jalapeno.specs.formats import get_precision

H, E, LAYERS = 3072, 256, 62  # MiniMax-M2.5 config.json: hidden_size, num_local_experts, num_hidden_layers


def _router(system: str, tokens: float):
    m, chip, eff = load_model("minimax-m2.5"), load_system(system).chip, load_efficiency(system)
    batch = Batch.make(decode_seqs=np.array([tokens]), decode_ctx=np.array([2048.0]))
    ops, _ = build_step_ops(m, chip, Layout(tp=4), get_precision("fp8"), batch, eff)
    j = list(ops.name).index("moe.router")
    return ops, j, chip, eff


def test_the_fp32_peaks_are_read_with_their_sources():
    # HGX B200 80, HGX B300 75 TFLOPS (Lockwood's pages, NVIDIA figures); H100/H200 SXM 67 (NVIDIA datasheets)
    for name, tflops in (("b200", 80), ("b300", 75), ("h100", 67), ("h200", 67), ("gb200-nvl72", 90)):
        s = load_system(name)
        assert s.chip.fp32_vector_flop_per_s == tflops * 1e12 == s.chip.peak("fp32")
        assert "TFLOPS" in s.sources["chip.fp32_vector_tflops"]
    assert load_system("mi355x").chip.fp32_vector_flop_per_s is None


def test_only_minimax_runs_an_fp32_gate():
    assert load_model("minimax-m2.5").moe.router_fp32
    for name in ("qwen3-235b-a22b", "gpt-oss-120b", "deepseek-r1", "kimi-k2.5"):
        assert not load_model(name).moe.router_fp32, name


def test_the_fp32_gate_op_by_hand():
    ops, j, _, _ = _router("b300", 512.0)
    assert ops.fmt[j] == "fp32"
    # replicated on every TP rank: 2·tokens·h·E FLOPs per layer; FP32 weights h·E·4 bytes; input 8 bytes per
    # element (the FP32 copy written by the fused cast, read by the GEMM), output 2·E bytes per token
    assert ops.flop[j][0] == pytest.approx(2 * 512 * H * E * LAYERS)
    assert ops.weight_bytes[j][0] == pytest.approx(H * E * 4 * LAYERS)
    assert ops.act_bytes[j][0] == pytest.approx(512 * (H * 8 + 2 * E) * LAYERS)


def test_the_fp32_gate_has_no_few_rows_penalty():
    """compute = FLOPs / (FP32 peak x the set's BF16 GEMM peak fraction) at every row count: linear in tokens."""
    for tokens in (1.0, 16.0, 512.0):
        ops, j, chip, eff = _router("b300", tokens)
        compute = op_times(ops, chip, eff).compute_s[j][0]
        assert compute == pytest.approx(2 * tokens * H * E * LAYERS / (75e12 * eff.gemm_peak("bf16")), rel=1e-9)


def test_a_chip_without_the_fp32_peak_prices_the_gate_in_bf16_as_before():
    ops, j, _, _ = _router("mi355x", 512.0)
    assert ops.fmt[j] == "bf16"
    assert ops.weight_bytes[j][0] == pytest.approx(H * E * 2 * LAYERS)


def test_an_implausible_fp32_peak_is_refused_naming_the_key(capsys):
    """75,000 (GFLOPS typed as TFLOPS) is refused with the key and the likely slip, not priced."""
    check_error(*run(capsys, "step", "-s", "b300", "-m", "minimax-m2.5", "--tp", "4", "--set",
                     "chip.fp32_vector_tflops=75000"),
                "chip.fp32_vector_tflops", "outside the plausible range", "not the tf32 tensor-core figure")
