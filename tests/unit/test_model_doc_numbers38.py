"""docs/model.md formulas checked by hand against the command line (docs38): the roofline of one GEMM and of one
decode attention op (§4), sliding-window KV bytes (§3.5), the routed experts' distinct-expert weight bytes (§3.6), a
predicted point's power / energy / cost lines (§9) and its mean TTFT by part (§8.3), and the SGLang poll wait
(§8.7 (4), whose page formula left the arrival theorem's (C − 1)/C out of L_p until round 38). Every expected value
is the page's arithmetic written out with the `spec` set's documented constants (§11: gemm[bf16] η_max 0.75,
m_half 32, hbm_fraction 0.85, kernel_launch_s 4 µs) and H100's datasheet numbers (989 TFLOP/s BF16, 3.35 TB/s,
data/systems/h100.toml); none is copied from the program's output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run

from jalapeno.serve.queueing import poll_wait_s

PEAK_BF16, HBM = 989e12, 3.35e12
ETA_MAX, M_HALF, ETA_M, LAUNCH = 0.75, 32, 0.85, 4e-6
MODEL_MD = (Path(__file__).resolve().parents[2] / "docs" / "model.md").read_text()


def _json(capsys, *args: str) -> dict:
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def _ops(capsys, *args: str) -> dict:
    return {o["op"]: o for o in _json(capsys, "step", "-s", "h100", "--efficiency", "spec", *args)["ops"]}


def test_roofline_of_a_gemm_and_a_decode_attention_op(capsys):
    """§4: t_op = max(FLOP/(F·η_c(m)), bytes/(W·η_m)) + kernels·t_launch; Llama-3.3-70B, TP8, 64 sequences at 2,048."""
    ops = _ops(capsys, "-m", "llama-3.3-70b", "--tp", "8", "--batch", "64", "--context", "2048")
    layers, h, n_qkv = 80, 8192, (64 + 2 * 8) * 128 // 8  # q + k + v heads x 128 per TP rank: 1,280
    qkv = ops["attn.qkv_proj"]
    w = h * n_qkv * 2 * layers  # 1,677,721,600 B
    act = 64 * (h + n_qkv) * 2 * layers  # 96,993,280 B
    flop = 2 * 64 * h * n_qkv * layers
    eta_c = ETA_MAX * 64 / (64 + M_HALF)  # 0.5
    assert qkv["weight_bytes"] == w and qkv["act_bytes"] == act and qkv["flop"] == flop
    assert qkv["compute_s"] == pytest.approx(flop / (PEAK_BF16 * eta_c), rel=1e-9)  # 217.1 µs
    assert qkv["time_s"] == pytest.approx((w + act) / (HBM * ETA_M) + layers * LAUNCH, rel=1e-9)  # 943.3 µs
    att = ops["attn.decode_full"]
    kv = 64 * 2048 * layers * 1 * 128 * 2 * 2  # 1 KV head per rank, K and V, BF16: 5,368,709,120 B
    assert att["kv_bytes"] == kv and att["flop"] == 4 * 64 * 2048 * 8 * 128 * layers
    assert att["memory_s"] == pytest.approx((kv + att["act_bytes"]) / (HBM * ETA_M), rel=1e-9)  # 1,892.8 µs


def test_sliding_window_kv_bytes_match_the_worked_number(capsys):
    """§3.5: gpt-oss-120b, H100 TP1, BF16 KV, 16 sequences at 2,048: 18 full and 18 window-128 layers."""
    ops = _ops(capsys, "-m", "gpt-oss-120b", "--tp", "1", "--batch", "16", "--context", "2048", "--kv-dtype", "bf16")
    full = 16 * 2048 * 2 * 8 * 64 * 2 * 18
    assert ops["attn.decode_full"]["kv_bytes"] == full == 1_207_959_552
    assert ops["attn.decode_full"]["flop"] == 2 * 16 * 64 * 128 * 2048 * 18
    assert ops["attn.decode_sliding128"]["kv_bytes"] == 16 * 128 * 2048 * 18 == 75_497_472
    assert "**1.21 GB**" in MODEL_MD and "**75.5 MB**" in MODEL_MD


def test_routed_expert_bytes_count_the_distinct_experts_touched(capsys):
    """§3.6: weight bytes = E·(1 − (1 − k/E)^T)·expert_params·b_w; gpt-oss-120b (128 experts, top-4, MXFP4 at
    0.53125 B/element, §1), 16 tokens at EP1."""
    ops = _ops(capsys, "-m", "gpt-oss-120b", "--tp", "1", "--batch", "16", "--context", "2048")
    touched = 128 * (1 - (1 - 4 / 128) ** 16)  # 50.98 of 128
    params = 3 * 2880 * 2880 + 2 * 2880 + 2880  # 24,891,840, §1's worked number
    moe = ops["moe.experts"]
    assert moe["weight_bytes"] == pytest.approx(touched * params * 0.53125 * 36, rel=1e-9)
    assert moe["flop"] == 2 * 16 * 4 * 3 * 2880 * 2880 * 36


def test_power_energy_cost_and_ttft_parts_of_a_predicted_point(capsys):
    """§9 on a predicted point (H100 all-in 1.73 kW, TDP 700 W, $1.30 per chip-hour) and §8.3's TTFT parts."""
    p = _json(capsys, "predict", "-s", "h100", "-m", "llama-3.3-70b", "--tp", "8", "--concurrency", "32")
    thr = p["throughput_per_chip"]
    assert p["tok_s_per_kw"] == pytest.approx(thr / 1.73, rel=1e-9)
    assert p["tok_s_per_kw_by_convention"]["chip"] == pytest.approx(thr / 0.7, rel=1e-9)
    assert p["j_per_token"] == pytest.approx(1730 / thr, rel=1e-9)
    assert p["usd_per_mtok"] == pytest.approx(1.30 / (thr * 3600 / 1e6), rel=1e-9)
    isl = 0.9 * 8192  # 8k1k, lengths uniform on [0.8·L, L]
    assert thr == pytest.approx(p["request_rate_per_s"] * 0.9 * (8192 + 1024) / 8, rel=1e-9)
    parts = p["ttft_parts"]
    assert parts["frontend_s"] == pytest.approx(0.15 + 6.4e-6 * isl, rel=1e-9)  # the defaults a + b·ISL (specs/efficiency.py)
    assert parts["first_step_s"] == pytest.approx(p["tpot_s"] / 2, rel=1e-9)
    assert sum(parts.values()) == pytest.approx(p["ttft_s"], rel=1e-12)


def test_poll_wait_follows_the_page_formula():
    """§8.7 (4): λ_c = n̄·(C − 1)/(C·τ), L_d = n·t_dec, L_p = step + s·λ_c·L_d, R = (L_d² + L_p²)/(2(L_d + L_p)),
    W = τ/2 + [R − τ/2 + s·(2·λ_c·R − n̄·(C − 1)/C)]."""
    lam = 0.5 * 3 / 4 / 0.02  # 18.75 chunks/s
    l_d, l_p = 10 * 0.018, 0.025 + 0.005 * lam * 10 * 0.018  # 0.18 s, 0.041875 s
    r = (l_d**2 + l_p**2) / (2 * (l_d + l_p))
    hand = 0.01 + (r - 0.01) + 0.005 * (2 * lam * r - 0.5 * 3 / 4)
    assert hand == pytest.approx(0.08952, abs=1e-5)
    assert float(poll_wait_s(10, 0.02, 4, 0.005, 0.5, 0.018, 0.025)) == pytest.approx(hand, rel=1e-12)
    assert "**W_poll = 89.52 ms**" in MODEL_MD
