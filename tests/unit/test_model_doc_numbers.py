"""docs/model.md's worked numbers, each computed by hand here and by the function that prices it (review30,
docs30). The hand side follows the page's formula with the `spec` set's documented constants (§5, §9, §11), so
a change to the code or to the page that breaks the worked number fails here. Round 30 found §5's collective
numbers written before the size ramps (H100 TP8 all-reduce 10.3 µs on the page, 15.0 µs priced), and the spread
64-GPU all-reduce priced faster than packed (the NIC tree off the ramp; coll30 put it on the ramp).
"""

from __future__ import annotations

import math

import pytest

import jalapeno as jp
from jalapeno.analysis.power_cost import energy_and_cost
from jalapeno.cost.collectives import collective_time
from jalapeno.serve.handshake import handshake_s
from jalapeno.serve.rr_wait import wave_wait_s

from pathlib import Path

MODEL_MD = (Path(__file__).resolve().parents[2] / "docs" / "model.md").read_text()
LAUNCH = 5e-6  # `collective_launch_s`, spec set (§5)


def _eta(m, f, h, p):
    """The size ramp η(M) = f/(1 + (h/M)^p) (§5, §11)."""
    return f / (1 + (h / m) ** p)


def _priced(system, kind, g, m, **kw) -> float:
    return float(collective_time(kind, g, [m], jp.load_system(system), jp.load_efficiency(system, "spec"),
                                 **kw).time_s[0])


def test_h100_tp8_all_reduce_of_64_tokens():
    m = 64 * 7168 * 2
    bw = 450e9
    two_shot = 2e-6 + 2 * 7 / 8 * m / (bw * _eta(m, 1.0, 2.65e6, 0.21))
    ring = 14e-6 + 2 * 7 / 8 * m / (bw * _eta(m, 0.79, 10.2e6, 0.71))
    one_shot = 1e-6 + 7 * m / (bw * _eta(m, 1.0, 2.65e6, 0.21))
    in_switch = 2e-6 + m / (bw * _eta(m, 0.66, 20.4e6, 0.63))
    hand = min(two_shot, ring, one_shot, in_switch) + LAUNCH
    assert hand == pytest.approx(15.0e-6, abs=0.05e-6)
    assert _priced("h100", "all_reduce", 8, m) == pytest.approx(hand, rel=1e-6)
    assert "two-shot, 15.0 µs with the 5 µs launch" in MODEL_MD


def test_mi300x_full_mesh_all_reduce_of_64_mb():
    b = 448e9 * _eta(64e6, 1.0, 2.65e6, 0.21)
    tp8 = 2e-6 + 2 * 7 / 8 * 64e6 / b + LAUNCH
    tp2 = 1e-6 + 64e6 / (b / 7) + LAUNCH  # one of the 7 links
    assert _priced("mi300x", "all_reduce", 8, 64e6) == pytest.approx(tp8, rel=1e-6)
    assert _priced("mi300x", "all_reduce", 2, 64e6) == pytest.approx(tp2, rel=1e-6)
    assert f"**{tp8 * 1e6:.1f} µs**" in MODEL_MD and f"**{tp2 * 1e6:,.0f} µs**" in MODEL_MD


def test_h100_hierarchical_all_reduce_and_all_gather():
    inner = min(2 * (1e-6 + 7 / 8 * 1e6 / (450e9 * _eta(1e6, 0.79, 10.2e6, 0.71))),
                2e-6 + 1e6 / (450e9 * _eta(1e6, 0.66, 20.4e6, 0.63)))
    across = 2 * 5e-6 + 2 * 7 / 8 * (1e6 / 8) / (50e9 * _eta(1e6 / 8, 0.8, 10.2e6, 0.71))
    packed = inner + across + LAUNCH
    spread = 2 * 6 * 5e-6 + 2 * 1e6 / (50e9 * _eta(1e6, 0.8, 10.2e6, 0.71)) + LAUNCH  # the NIC tree, NIC ramp
    assert spread == pytest.approx(375.1e-6, abs=0.05e-6) and spread > packed  # never faster for leaving the node
    assert _priced("h100", "all_reduce", 64, 1e6) == pytest.approx(packed, rel=1e-6)
    assert _priced("h100", "all_reduce", 64, 1e6, placement="spread") == pytest.approx(spread, rel=1e-6)
    assert _priced("h100", "all_reduce", 64, 1e9, placement="spread") == pytest.approx(
        2 * 63 * 5e-6 + 2 * 63 / 64 * 1e9 / (50e9 * _eta(1e9, 0.8, 10.2e6, 0.71)) + LAUNCH, rel=1e-6)  # the ring
    assert "51.75 ms spread" in MODEL_MD
    ag = (5e-6 + 0.5 * (16e6 / 8) / (50e9 * _eta(2e6, 0.8, 10.2e6, 0.71))
          + 1e-6 + 7 / 8 * 16e6 / (450e9 * _eta(16e6, 0.79, 10.2e6, 0.71)) + LAUNCH)
    assert _priced("h100", "all_gather", 16, 16e6) == pytest.approx(ag, rel=1e-6)
    for v in (packed, spread, ag):
        assert f"**{v * 1e6:.1f} µs**" in MODEL_MD or f"**{v * 1e6:.0f} µs**" in MODEL_MD


def test_all_to_all_inside_nvl72_and_on_jalapeno_torus():
    # moe.dispatch of the op-table case: the busiest receiving rank's A_max = 64 + sqrt(512·⅛·⅞)·sqrt(2 ln 8)
    # FP8 vectors (§3.6; docs54: the page had the mean rank's 8·8·7168 B, 380 µs)
    m = (64 + math.sqrt(512 / 8 * 7 / 8) * math.sqrt(2 * math.log(8))) * 7168
    hand = 1e-6 + 7 / 8 * m / (900e9 * 0.8) + LAUNCH
    assert _priced("gb200-nvl72", "all_to_all", 8, m) == pytest.approx(hand, rel=1e-6)
    assert hand * 58 == pytest.approx(388e-6, abs=1e-6) and "**388 µs**" in MODEL_MD
    # g = 2048: α_o = 1.5 µs · diam 20, outer share 1920/2048 · M · f_o 12 / (200e9 · 0.8)
    jal = 20 * 1.5e-6 + 1920 / 2048 * 1e6 * 12 / 160e9 + LAUNCH
    assert _priced("jalapeno", "all_to_all", 2048, 1e6) == pytest.approx(jal, rel=1e-3)
    assert "**105 µs**" in MODEL_MD
    shared = 2 * 2e-6 + 2 * 15 / 16 * 1e6 / (600e9 * _eta(1e6, 1.0, 2.65e6, 0.21)) + LAUNCH
    assert _priced("jalapeno", "all_reduce", 16, 1e6) == pytest.approx(shared, rel=1e-6)
    assert f"**{shared * 1e6:.1f} µs**" in MODEL_MD


def test_power_energy_and_cost_of_the_h100_point():
    h100 = jp.load_system("h100")
    out = energy_and_cost([2561.0], h100, "all-in")
    assert float(out["tok_s_per_kw"][0]) == pytest.approx(2561 / 1.73, rel=1e-9)  # 1,480
    assert float(out["j_per_token"][0]) == pytest.approx(1730 / 2561, rel=1e-9)  # 0.676
    assert float(out["usd_per_mtok"][0]) == pytest.approx(1.30 / (2561 * 3600 / 1e6), rel=1e-9)  # 0.141
    assert float(energy_and_cost([2561.0], h100, "chip")["tok_s_per_kw"][0]) == pytest.approx(2561 / 0.7)
    for s in ("**1,480", "**0.676 J/token**", "**$0.141 per M tokens**", "3,658"):
        assert s in MODEL_MD


def test_sglang_handshake_and_round_robin_wait():
    tau, w = 0.02, 0.005
    assert float(handshake_s("decode_prealloc", tau, w)) == pytest.approx(tau + (tau - w) ** 2 / (2 * tau))
    assert float(handshake_s("decode_prealloc", tau, 0.05)) == pytest.approx(tau)
    assert float(handshake_s("none", tau, w)) == 0.0
    # closed form at the cap: (1 − r)·L·TPOT·(π/8)·√((N−1)/(N·n))/√(2π); L = 1000, r = 0.8, 10 ms, N = 3, n = 4
    closed = 0.2 * 1000 * 0.01 * (math.pi / 8) * math.sqrt(2 / 12) / math.sqrt(2 * math.pi)
    assert float(wave_wait_s(4.0, 4, 3, 2.0)) == pytest.approx(closed, rel=5e-3)  # 64-point midpoint rule


def test_mtp_tokens_per_step():
    k, alpha = 3, 0.7
    a = (1 - alpha ** (k + 1)) / (1 - alpha)
    assert round(a, 2) == 2.53 and "**2.53** tokens per step" in MODEL_MD


def test_tp_rank_step_row_shows_the_shipped_fits():
    """§11's parameter table gives the fitted per-TP-rank step cost of each stack (review30: it said vLLM 0.125 ms,
    TRT-LLM 0.20 ms, long after the fits had moved to 0.10 / 0.0625 ms, and round 30's refit to 0.075 ms). A refit
    that moves them fails here: write the new values in the row."""
    import tomllib

    fits = tomllib.loads((Path(__file__).resolve().parents[2] / "src/jalapeno/data/stack_fits.toml").read_text())
    row = next(line for line in MODEL_MD.splitlines() if line.startswith("| `tp_rank_step_s` |"))
    for stack, name in (("vllm", "vLLM"), ("trtllm", "TRT-LLM")):
        ms = fits["fits"][stack]["values"]["tp_rank_step_s"] * 1e3
        assert f"{name} {ms:g} ms" in row or f"{name} {ms:.2f} ms" in row, (stack, ms, row[-120:])
