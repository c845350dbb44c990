"""Ten docs/model.md formulas held to the code on seed models and systems (docs54), beside the ones
test_model_doc_numbers.py and test_model_doc_numbers38.py already check: MLA decode KV bytes and FLOPs (§3.2, §1.1,
fp8 and fp8_ds_mla), the roofline of that op (§4), GQA KV bytes per token per GPU (§1.1), the busiest EP rank's
assignments and the MoE all-to-all bytes they size (§3.6, §3.8), that all-to-all's time (§5), a TP all-reduce's
bytes and time (§3.8, §5), the LM head's all-gather bytes (§3.8), the TTFT / TPOT / E2E / concurrency identities
(§8.2), the steady prefill queue under the arrival theorem (§8.7 (1)), the sustained power convention (§9) and
J/token and $/M tokens (§9).

Every expected value is the page's formula written out by hand with the model's config.json numbers, the
system's datasheet figures (data/systems/*.toml) and the `spec` set's documented constants (§11); none is copied
from the program's output. Round 54 found §5's worked all-to-all (the op table's `moe.dispatch`) priced at the
mean rank's 458,752 B (380 µs) where the code sends the busiest receiving rank's 568 kB (388 µs, §3.6's A_max),
and §3.8's dispatch / combine rows silent on that busiest rank: the page was fixed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cli_runner import run

import jalapeno as jp
from jalapeno.analysis.power_cost import energy_and_cost
from jalapeno.serve.queueing import agg_queue_s

MODEL_MD = (Path(__file__).resolve().parents[2] / "docs" / "model.md").read_text()
#: GB200 (data/systems/gb200-nvl72.toml): dense BF16 2.5 PFLOP/s, HBM 8 TB/s, NVLink 900 GB/s per direction
GB200_BF16, GB200_HBM, GB200_NVLINK = 2.5e15, 8e12, 900e9
#: the spec set (§11): attention peak fraction (BF16) 0.65, HBM fraction 0.85, kernel launch 4 µs, collective launch
#: 5 µs, all-to-all link fraction 0.8
ETA_ATT, ETA_M, LAUNCH, COLL_LAUNCH, A2A_FRACTION = 0.65, 0.85, 4e-6, 5e-6, 0.8
#: DeepSeek-R1 (config.json): 61 layers (58 MoE), 128 heads, hidden 7,168, kv_lora_rank r 512, rope 64, top-8 of 256
R1_LAYERS, R1_MOE_LAYERS, R1_HEADS, R1_H, R1_R, R1_ROPE, R1_K, R1_E = 61, 58, 128, 7168, 512, 64, 8, 256


#: Llama-3.3-70B (80 layers, hidden 8,192, vocabulary 128,256) on H100, TP8, 64 sequences at 2,048
LLAMA_TP8 = "-s h100 -m llama-3.3-70b --tp 8 --batch 64 --context 2048".split()


def _step(capsys, *args: str) -> dict:
    code, out, err = run(capsys, "step", "--efficiency", "spec", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def _op_table_case(capsys, *extra: str) -> dict:
    """docs/op_table.md's case: DeepSeek-R1 FP8 on GB200, DP8 EP8, 64 sequences at 8,192 (8 per attention rank)."""
    return _step(
        capsys, *"-s gb200-nvl72 -m deepseek-r1 --precision fp8 --dp 8 --ep 8 --batch 64 --context 8192".split(), *extra
    )


def _ops(d: dict) -> dict:
    return {o["op"]: o for o in d["ops"]}


def _colls(d: dict) -> dict:
    return {c["collective"]: c for c in d["collectives"]}


def test_1_mla_decode_kv_bytes_and_flop(capsys):
    """§3.2: KV bytes = b_d·L·(r + d_rope)·b_kv, FLOP = 2·T_d·n·(2r + d_rope)·L, per layer; §1.1: fp8 576 B, fp8_ds_mla
    656 B a token a layer."""
    b_d = 64 / 8  # sequences per attention-DP rank
    att = _ops(_op_table_case(capsys, "--kv-dtype", "fp8"))["attn.mla_decode"]
    assert att["kv_bytes"] == b_d * 8192 * (R1_R + R1_ROPE) * 1 * R1_LAYERS == 2_302_672_896  # "2.30 GB of latent"
    assert att["flop"] == 2 * b_d * R1_HEADS * (2 * R1_R + R1_ROPE) * 8192 * R1_LAYERS  # 1.11 TFLOP
    ds = _ops(_op_table_case(capsys, "--kv-dtype", "fp8_ds_mla"))["attn.mla_decode"]
    assert ds["kv_bytes"] == b_d * 8192 * (512 + 4 * 4 + 64 * 2) * R1_LAYERS  # 512 e4m3 + 4 fp32 scales + 64 bf16
    assert "512 + 16 + 128 = **656**" in MODEL_MD and "2.30 GB of latent" in MODEL_MD


def test_2_roofline_of_the_mla_decode_op(capsys):
    """§4 on §3.2's op: t = max(FLOP/(F·η_att), bytes/(W·η_m)) + kernels·t_launch; I_MLA = 2·n·q·(2r + d_rope)/((r +
    d_rope)·b_kv) = 484 FLOP/B against GB200's attention ridge 2.5e15·0.65/(8e12·0.85) = 239: compute-bound."""
    att = _ops(_op_table_case(capsys, "--kv-dtype", "fp8"))["attn.mla_decode"]
    flop = 2 * 8 * R1_HEADS * (2 * R1_R + R1_ROPE) * 8192 * R1_LAYERS
    compute = flop / (GB200_BF16 * ETA_ATT)  # 685 µs
    memory = (att["kv_bytes"] + att["act_bytes"]) / (GB200_HBM * ETA_M)  # 359 µs
    assert att["compute_s"] == pytest.approx(compute, rel=1e-9) and compute == pytest.approx(685e-6, abs=0.5e-6)
    assert att["memory_s"] == pytest.approx(memory, rel=1e-9) and compute > memory
    # two kernels a layer (§4's launches; docs/op_table.md's 488 µs = 61 x 2 x 4 µs)
    assert att["time_s"] == pytest.approx(compute + 2 * R1_LAYERS * LAUNCH, rel=1e-9)
    assert att["bound"] == "compute"
    intensity = 2 * R1_HEADS * 1 * (2 * R1_R + R1_ROPE) / ((R1_R + R1_ROPE) * 1)
    ridge = GB200_BF16 * ETA_ATT / (GB200_HBM * ETA_M)
    assert round(intensity) == 484 and round(ridge) == 239
    assert "**484 FLOP/B**" in MODEL_MD and "= 239 FLOP/B" in MODEL_MD


def test_3_gqa_kv_bytes_per_token_per_gpu(capsys):
    """§1.1: Qwen3-235B-A22B on 4 GPUs TP4, BF16 KV: 94 layers x 1 KV head a rank (4 / 4) x 128 x 2 (K, V) x 2 B =
    48,128 B per token per GPU; FP8 KV half."""
    for kv, per_token in (("bf16", 94 * 1 * 128 * 2 * 2), ("fp8", 94 * 1 * 128 * 2 * 1)):
        d = _step(
            capsys,
            *"-s h100 -m qwen3-235b-a22b --precision fp8 --tp 4 --batch 4 --context 4096".split(),
            "--kv-dtype",
            kv,
        )
        att = _ops(d)["attn.decode_full"]
        assert att["kv_bytes"] == 4 * 4096 * per_token, kv
    assert 94 * 128 * 2 * 2 == 48_128 and "2 (K, V) × 2 B = 48,128 B per token per GPU" in MODEL_MD


def _a_max(tokens: float, k: int, ep: int) -> float:
    """§3.6: A = T·k, A_max = min(A, A·q + sqrt(A·q·(1 − q))·sqrt(2·ln ep)), q = 1/ep (uniform routing, s = 1)."""
    a, q = tokens * k, 1 / ep
    return min(a, a * q + math.sqrt(a * q * (1 - q)) * math.sqrt(2 * math.log(ep)))


def test_4_busiest_ep_rank_sizes_the_moe_all_to_all_bytes(capsys):
    """§3.6: 64 sequences over DP8 / EP8, A = 512: A_max = 64 + 7.48·2.039 = 79.3 assignments; §3.8: the dispatch moves
    that many hidden vectors at 1 B (FP8 experts, as DeepEP) and the combine at 2 B, a call per MoE layer."""
    a_max = _a_max(64, R1_K, 8)
    assert a_max == pytest.approx(64 + 15.3, abs=0.05) and a_max > 64 / 8 * R1_K  # the receiver beats the sender
    colls = _colls(_op_table_case(capsys))
    assert colls["moe.dispatch"]["bytes_per_call"] == pytest.approx(a_max * R1_H * 1, rel=1e-9)  # 568,143 B
    assert colls["moe.combine"]["bytes_per_call"] == pytest.approx(a_max * R1_H * 2, rel=1e-9)
    assert colls["moe.dispatch"]["calls"] == colls["moe.combine"]["calls"] == R1_MOE_LAYERS
    assert "A_max = 64 + 15.3 = **79.3**" in MODEL_MD


def test_5_all_to_all_time_inside_the_nvlink_domain(capsys):
    """§5: all-to-all = α + α_a2a + (g − 1)/g·M/B, B = 900 GB/s x 0.8, plus the 5 µs launch a call; GB200's α + α_a2a
    = 1 µs (the worked number); the op table's dispatch, 58 calls."""
    m = _a_max(64, R1_K, 8) * R1_H  # 568,143 B (test 4)
    per_call = 1e-6 + 7 / 8 * m / (GB200_NVLINK * A2A_FRACTION) + COLL_LAUNCH  # 6.69 µs
    d = _colls(_op_table_case(capsys))["moe.dispatch"]
    assert d["time_s"] == pytest.approx(per_call * R1_MOE_LAYERS, rel=1e-9)
    assert round(per_call * R1_MOE_LAYERS * 1e6) == 388 and "= 6.69 µs × 58 layers = **388 µs**" in MODEL_MD


def _eta(m, f, h, p):
    """§5 / §11's size ramp η(M) = f/(1 + (h/M)^p)."""
    return f / (1 + (h / m) ** p)


def test_6_tp_all_reduce_bytes_and_time(capsys):
    """§3.8: attn.all_reduce and dense_ffn.all_reduce carry T·h·2 B a call, one a layer; §5: each call the fastest of
    ring / two-shot / one-shot / in-switch at H100's 450 GB/s on its size ramp (§11's NCCL, one-/two-shot and NVLS
    ramps, α 1 µs), plus the 5 µs launch. Llama-3.3-70B, TP8, 64 sequences."""
    m = 64 * 8192 * 2  # 1,048,576 B
    bw = 450e9
    hand = (
        min(
            14e-6 + 2 * 7 / 8 * m / (bw * _eta(m, 0.79, 10.2e6, 0.71)),  # ring: 2(g − 1)·α
            2e-6 + 2 * 7 / 8 * m / (bw * _eta(m, 1.0, 2.65e6, 0.21)),  # two-shot
            1e-6 + 7 * m / (bw * _eta(m, 1.0, 2.65e6, 0.21)),  # one-shot
            2e-6 + m / (bw * _eta(m, 0.66, 20.4e6, 0.63)),  # in-switch (NVLS)
        )
        + COLL_LAUNCH
    )
    colls = _colls(_step(capsys, *LLAMA_TP8))
    for name in ("attn.all_reduce", "dense_ffn.all_reduce"):
        c = colls[name]
        assert c["bytes_per_call"] == m and c["calls"] == 80, name
        assert c["time_s"] == pytest.approx(80 * hand, rel=1e-6), name


def test_7_lm_head_all_gather_bytes(capsys):
    """§3.8: lm_head.all_gather moves (T_d + S_r)·V·b_L, b_L = 2 (the BF16 logits), once a step."""
    colls = _colls(_step(capsys, *LLAMA_TP8))
    g = colls["lm_head.all_gather"]
    assert g["bytes_per_call"] == 64 * 128_256 * 2 and g["calls"] == 1


def test_8_ttft_tpot_e2e_and_concurrency_identities(capsys):
    """§8.2 (a = 1, no MTP): TPOT = τ/a, E2E = TTFT + D·τ with D = (OSL − 1)/a, C = λ·E2E, output throughput per
    chip = λ·OSL/chips, interactivity = 1/TPOT; OSL the mean 0.9·1024 (§8.1)."""
    code, out, err = run(capsys, *"predict -s h100 -m llama-3.3-70b --tp 8 --concurrency 32 --json".split())
    assert code == 0, err
    p = json.loads(out)
    osl, lam, tau = 0.9 * 1024, p["request_rate_per_s"], p["step_time_s"]
    assert p["tpot_s"] == pytest.approx(tau / 1, rel=1e-12)
    assert p["e2e_s"] == pytest.approx(p["ttft_s"] + (osl - 1) * tau, rel=1e-9)
    assert p["concurrency"] == pytest.approx(lam * p["e2e_s"], rel=1e-6)
    assert p["output_throughput_per_chip"] == pytest.approx(lam * osl / 8, rel=1e-9)
    assert p["interactivity"] == pytest.approx(1 / p["tpot_s"], rel=1e-12)


def test_9_steady_prefill_queue_with_the_arrival_theorem():
    """§8.7 (1): Q = s·min(n̄, 1) + s·ρ²/(1 − ρ²) + s·ρ/(2(1 − ρ²)), ρ = n̄·s/E[τ], n̄ scaled by (C − 1)/C in a closed
    loop, ρ capped at 0.95."""
    s, n, tau = 0.1, 0.5, 0.2
    rho = n * s / tau  # 0.25
    big = s * min(n, 1) + s * rho**2 / (1 - rho**2) + s * rho / (2 * (1 - rho**2))
    assert big == pytest.approx(0.070, abs=5e-4) and "= **70 ms**" in MODEL_MD
    assert float(agg_queue_s(s, n, tau, 1e12)) == pytest.approx(big, rel=1e-9)
    n5 = n * 4 / 5  # C = 5: an arrival sees 4 others
    rho5 = n5 * s / tau  # 0.2
    five = s * n5 + s * rho5**2 / (1 - rho5**2) + s * rho5 / (2 * (1 - rho5**2))  # 40 + 4.17 + 10.42 ms
    assert float(agg_queue_s(s, n, tau, 5)) == pytest.approx(five, rel=1e-9)
    assert float(agg_queue_s(s, n, tau, 1)) == 0.0  # one user never queues behind another
    capped = s * 1 + s * 0.95**2 / (1 - 0.95**2) + s * 0.95 / (2 * (1 - 0.95**2))  # n̄ = 3, ρ = 1.5 -> 0.95
    assert float(agg_queue_s(s, 3.0, tau, 1e12)) == pytest.approx(capped, rel=1e-9)


def test_10_power_conventions_energy_and_cost():
    """§9: tok/s per kW = thr/(P/1000), J/token = P/thr, $/M tokens = ($/chip-hour)/(thr·3600/10^6); `sustained` is
    the catalog's sustained power where it has one (Jalapeño 550 W), else the TDP (H100 700 W)."""
    thr = 5000.0
    jal = jp.load_system("jalapeno")
    assert float(energy_and_cost([thr], jal, "sustained")["tok_s_per_kw"][0]) == pytest.approx(thr / 0.55)
    assert float(energy_and_cost([thr], jal, "chip")["tok_s_per_kw"][0]) == pytest.approx(thr / 0.70)
    allin = energy_and_cost([thr], jal, "all-in")
    assert float(allin["j_per_token"][0]) == pytest.approx(1150 / thr)  # 0.23 J/token at 1.15 kW all-in
    assert float(allin["usd_per_mtok"][0]) == pytest.approx(1.43 / (thr * 3600 / 1e6))  # $0.0794 per M tokens
    h100 = jp.load_system("h100")
    assert float(energy_and_cost([thr], h100, "sustained")["tok_s_per_kw"][0]) == pytest.approx(thr / 0.70)
    b200 = energy_and_cost([thr], jp.load_system("b200"), "all-in")
    assert float(b200["j_per_token"][0]) == pytest.approx(2170 / thr)  # 2.17 kW all-in
    assert float(b200["usd_per_mtok"][0]) == pytest.approx(1.95 / (thr * 3600 / 1e6))  # $1.95 per chip-hour
