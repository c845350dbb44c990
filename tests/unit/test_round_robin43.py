"""Round-robin dispatch (round 43): a harness that deals a Poisson stream over k instances in turn gives each instance
Erlang(k) gaps. serve/open_loop.erlang_arrival_tail prices its FCFS prefill queue's tail; checked here against an
independent Lindley recursion with Erlang gaps, by hand, and on the MLPerf rows that carry the harness's policy
(inference_results_v5.1 @965182b closed/NVIDIA/code/llmlib/config.py: round_robin outside Server)."""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.errors import SpecError
from jalapeno.serve.finite_run import ServerRun
from jalapeno.serve.open_loop import cramer_lundberg, erlang_arrival_tail, ttft_quantile_s
from jalapeno.serve.tpot_tail import renewal_dispersion


def _lindley_erlang(lam: float, service: np.ndarray, k: int, n: int, seed: int) -> np.ndarray:
    """Sojourn (wait + own service) of n FCFS customers whose gaps are Erlang(k) of mean 1/lam (every k-th arrival of
    a Poisson stream of rate k·lam), service drawn uniformly from ``service``: W_{j+1} = max(0, W_j + S_j − A_{j+1})."""
    rng = np.random.default_rng(seed)
    gaps = rng.gamma(k, 1.0 / (k * lam), n)
    s = rng.choice(service, n)
    w, out = 0.0, np.empty(n)
    for j in range(n):
        out[j] = w + s[j]
        w = max(0.0, w + s[j] - gaps[(j + 1) % n])
    return out[n // 20 :]


def _prompt_mix() -> np.ndarray:
    from jalapeno.fit.mlperf import benchmark_spread
    from jalapeno.specs.workload import Workload

    wl = Workload("x", 9429, 653, 1.0, spread=benchmark_spread("llama3.1-405b"))
    v = np.array([wl.isl_quantile((j + 0.5) / 256) for j in range(256)])
    return v / v.mean()  # 1 s of work for the mean prompt


@pytest.mark.parametrize("k,rho,tol", [(2, 0.5, 0.05), (2, 0.8, 0.05), (18, 0.5, 0.08), (18, 0.8, 0.08)])
def test_p99_against_a_simulated_round_robin_queue(k, rho, tol):
    """The Llama-3.1-405B prompt mix (CV 0.43) behind Erlang(k) gaps: the p99 sojourn within 5% (k 2) / 8% (k 18) of
    a 150,000-customer Lindley recursion. The Poisson split's p99 (k = 1) is 1.5x (k 2) to 4x (k 18, ρ 0.8) the
    simulated one, so a tail that ignored k fails here."""
    v = _prompt_mix()
    lam = rho / v.mean()
    sim = float(np.quantile(_lindley_erlang(lam, v, k, 150_000, seed=11), 0.99))
    got = float(ttft_quantile_s(0.99, [lam], v[None, :], v[None, :], arrival_k=k)[0])
    assert got == pytest.approx(sim, rel=tol)
    poisson = float(ttft_quantile_s(0.99, [lam], v[None, :], v[None, :])[0])
    assert poisson > 1.3 * sim


def test_one_instance_is_the_poisson_tail():
    v = np.array([0.2, 0.2, 0.2, 3.0])
    g1, c1 = cramer_lundberg(0.5, v)
    g, c = erlang_arrival_tail(0.5, v, 1)
    assert g[0] == g1[0] and c[0] == c1[0]


def test_erlang_root_by_hand():
    """E2/D/1, λ = 0.5, V = 1 s: the root of log E[e^{γV}] = 2·log(1 + γ/(2λ)) is γ = 2·log(1 + γ), 2.5129 by
    iteration (γ ← 2·log(1 + γ) from 3); C = min(ρ, γ·Kingman's mean) = min(0.5, 2.513·0.25) = 0.5."""
    g = 3.0
    for _ in range(200):
        g = 2 * np.log1p(g)
    got, c = erlang_arrival_tail(0.5, np.array([1.0]), 2)
    assert got[0] == pytest.approx(g, rel=1e-6) and c[0] == pytest.approx(0.5)
    assert erlang_arrival_tail(1.2, np.array([1.0]), 4)[0][0] == 0.0  # ρ ≥ 1: no steady state


def test_renewal_dispersion_by_hand():
    """Prompts 1 and 3 tokens: E[I] 2, Var 1, E[I²] 5; k = 4: (1 + 4/4)/5 = 0.4; k = 1: 1 (Poisson)."""
    assert renewal_dispersion(np.array([1.0, 3.0]), 4) == pytest.approx(0.4)
    assert renewal_dispersion(np.array([1.0, 3.0]), 1) == 1.0


@pytest.mark.parametrize("bad", [0, 1.5, True, "2"])
def test_bad_instance_count_is_refused(bad):
    with pytest.raises(SpecError, match="arrival_k"):
        erlang_arrival_tail(0.5, np.array([1.0]), bad)
    with pytest.raises(SpecError, match="arrival_k"):
        renewal_dispersion(np.array([1.0]), bad)


def test_server_run_round_robin_must_be_a_bool():
    with pytest.raises(SpecError, match="round_robin"):
        ServerRun(100, round_robin="yes")


def test_interactive_rows_carry_round_robin_and_server_rows_do_not():
    """The NVIDIA-harness engine rows: Interactive dealt round-robin, Server not (load_balancing, priced as a
    Poisson split); the GB200-NVL72 x72 Llama-3.1-405B Interactive engine runs 18 TP4 instances."""
    from jalapeno.fit.mlperf import load_mlperf

    pts = {p.id: p for p in load_mlperf()[0] if p.mapping == "matched@limits"}
    gb = pts["mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_llama3p1-405b_Interactive"]
    assert gb.server_run.round_robin and gb.deployment.decode.workers == 18
    assert not pts["mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_llama3p1-405b_Server"].server_run.round_robin
    assert all(p.server_run.round_robin == p.id.endswith("_Interactive") for k, p in pts.items() if "_TRT_" in k)
    # each row's note names the arrivals its p99s were priced under (lead, round 43: it said Poisson on every row)
    assert any("under the harness's round-robin over its 18 instances (each every 18th query" in n for n in gb.notes)
    srv = pts["mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_llama3p1-405b_Server"]
    assert any("p99 TTFT <= " in n and "under Poisson arrivals" in n for n in srv.notes)


@pytest.mark.parametrize("k", [2, 18, 72])
@pytest.mark.parametrize("rho", [0.1, 0.5, 0.95])
def test_the_constant_is_capped_at_rho(k, rho):
    """C = min(ρ, γ·Kingman's E[W]): on the 405B prompt mix (c_s² 0.18) and a heavy-tailed mix (nine 0.1 s and one
    9.1 s job, c_s² 7.3) γ·E[W] >= ρ at every k and load, so C is ρ (by hand: the probability a customer waits
    under Poisson arrivals, an upper bound for the more regular Erlang gaps). Docstring and docs/model.md say so."""
    for v in (_prompt_mix(), np.array([0.1] * 9 + [9.1])):
        _, c = erlang_arrival_tail(rho / v.mean(), v, k)
        assert c[0] == pytest.approx(rho, rel=1e-12)
