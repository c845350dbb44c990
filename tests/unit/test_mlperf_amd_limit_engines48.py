"""AMD's MLPerf v5.1 Llama-2-70B Server / Interactive engines (fit/mlperf_engines.MLPERF_AMD_LIMIT_ENGINES, round 48,
docs/gap_large_batch_decode.md "Round 48 (mlperf48)"), read from the configs each result's README runs, and the switch
that maps the four rows onto them (``AMD_LIMIT_ENGINES_ON``, shipped off)."""

from __future__ import annotations

import pytest

import jalapeno.fit.mlperf_engines as me
from jalapeno.fit.mlperf import load_mlperf
from jalapeno.fit.mlperf_engines import MLPERF_AMD_LIMIT_ENGINES, limit_engine
from jalapeno.fit.submitted_engine import submitted_deployment

_MI300X_INT = "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Interactive"
_MI300X_SRV = "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Server"
_MI325X_SRV = "mlperf51_AMD_8xMI325X_2xEPYC_9575F_1_llama2-70b-99_Server"
_MI325X_INT = "mlperf51_AMD_8xMI325X_2xEPYC_9575F_2_llama2-70b-99_Interactive"


def test_engines_as_the_configs_read():
    """inference_results_v5.1 @965182b closed/AMD/code/llama2-70b-99/harness_llm/models/llama2-70b/, read by hand:
    interactive_mi300x.yaml has no VLLM_LLAMA2_MLPERF_SCHED, so max_num_seqs 600 caps it; server_mi300x.yaml's
    scheduler targets at most 608 (max_num_seqs 650); server_mi325x.yaml 832 (of 1,024); interactive_mi325x.yaml 2,048
    (of 3,840). max_num_batched_tokens 40,960 but MI325X Interactive's 43,008. enable_chunked_prefill False on the
    three V0 engines (num_scheduler_steps 8 / 9 / 9), True on MI325X Interactive (VLLM_USE_V1 1, num_scheduler_steps 1).
    """
    want = {
        _MI300X_INT: (600, 40960, "separate", 8, "interactive_mi300x.yaml"),
        _MI300X_SRV: (608, 40960, "separate", 9, "server_mi300x.yaml"),
        _MI325X_SRV: (832, 40960, "separate", 9, "server_mi325x.yaml"),
        _MI325X_INT: (2048, 43008, "mixed", 1, "interactive_mi325x.yaml"),
    }
    assert set(MLPERF_AMD_LIMIT_ENGINES) == set(want)
    for key, (batch, tokens, steps_kind, sched, cfg) in want.items():
        e = MLPERF_AMD_LIMIT_ENGINES[key]
        assert (e.batch_per_rank, e.tokens_per_step, e.prefill_steps, e.scheduler_steps) == (
            batch,
            tokens,
            steps_kind,
            sched,
        )
        assert (e.tp, e.dp, e.ep, e.moe_backend) == (1, 1, 1, None) and e.source.endswith(cfg)


def test_deployment_carries_the_prefill_scheduling():
    """Eight TP1 engines (device_count 8), every slot: 8 x 600 = 4,800 in flight on MI300X Interactive; the V0 engine
    runs its prompts in steps of their own (Deployment.prefill_steps 'separate'), MI325X's V1 engine mixes them."""
    dep, conc = submitted_deployment(MLPERF_AMD_LIMIT_ENGINES[_MI300X_INT], "fp8-tensor", 8)
    assert (dep.decode.layout.tp, dep.decode.workers, conc) == (1, 8, 4800.0)
    assert (dep.max_running, dep.max_tokens_per_step, dep.prefill_steps) == (600, 40960, "separate")
    dep, conc = submitted_deployment(MLPERF_AMD_LIMIT_ENGINES[_MI325X_INT], "fp8-tensor", 8)
    assert (conc, dep.prefill_steps) == (16384.0, "mixed")


def test_limit_engine_reads_the_switch_where_it_lives(monkeypatch):
    """NVIDIA's engines are declared either way; AMD's only with the switch on (None: the module's switch, read at
    the call, so setting it on fit/mlperf_engines moves fit/mlperf's rows)."""
    nv = "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_Server"
    assert limit_engine(nv, amd_on=False) is me.MLPERF_LIMIT_ENGINES[nv]
    assert limit_engine(_MI300X_SRV, amd_on=False) is None
    assert limit_engine(_MI300X_SRV, amd_on=True) is MLPERF_AMD_LIMIT_ENGINES[_MI300X_SRV]
    assert limit_engine("mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Offline", amd_on=True) is None
    monkeypatch.setattr(me, "AMD_LIMIT_ENGINES_ON", True)
    assert limit_engine(_MI325X_INT) is MLPERF_AMD_LIMIT_ENGINES[_MI325X_INT]


def test_switch_off_keeps_the_frontier_mapping():
    """Shipped off: the four rows keep ``frontier@limits`` with no declared deployment (the figures before round 48)."""
    assert me.AMD_LIMIT_ENGINES_ON is False
    pts = {p.id: p for p in load_mlperf()[0]}
    for key in MLPERF_AMD_LIMIT_ENGINES:
        assert pts[key].mapping == "frontier@limits" and pts[key].deployment is None


@pytest.mark.parametrize("key", [_MI300X_INT, _MI325X_SRV])
def test_switch_on_maps_the_rows_to_their_engines(monkeypatch, key):
    """On: ``matched@limits`` at the engine, every slot the cap (8 x 600 = 4,800; 8 x 832 = 6,656), the limits of the
    scenario (Interactive 0.45 s / 40 ms, Server 2 s / 200 ms: loadgen/mlperf.conf), Poisson arrivals (AMD's harness
    balances on the shortest queue, not NVIDIA's round-robin) and the engine's config named in the notes."""
    monkeypatch.setattr(me, "AMD_LIMIT_ENGINES_ON", True)
    p = {p.id: p for p in load_mlperf()[0]}[key]
    inter = "Interactive" in key
    assert p.mapping == "matched@limits" and p.concurrency == (4800.0 if inter else 6656.0)
    assert (p.ttft_limit_s, p.tpot_limit_s) == ((0.45, 0.040) if inter else (2.0, 0.200))
    assert p.server_run is not None and not p.server_run.round_robin
    assert MLPERF_AMD_LIMIT_ENGINES[key].source in "; ".join(p.notes)


def test_script_loads_by_hand():
    """scripts/mlperf_amd_engines48.py's run loads, Little's law by hand: MI300X Interactive 8,840.42 / 8 x 0.0321 =
    35.47; MI300X Server 24,593.8 / 8 x 0.1446 = 444.53; MI325X Server 32,027.6 / 8 x 0.1487 = 595.31; MI325X
    Interactive 18,407.2 / 8 x 0.0353 = 81.22. Its figures are the shipped rows' (mlperf_points.csv, the summaries)."""
    from script_module import load_script

    s = load_script("mlperf_amd_engines48")
    assert set(s.MEASURED) == set(MLPERF_AMD_LIMIT_ENGINES)
    for key, want in {_MI300X_INT: 35.47, _MI300X_SRV: 444.53, _MI325X_SRV: 595.31, _MI325X_INT: 81.22}.items():
        assert s.run_load_per_gpu(key) == pytest.approx(want, abs=0.01)
    pts = {p.id: p for p in load_mlperf()[0]}
    for key, (_, tpot_ms) in s.MEASURED.items():
        assert pts[key].measured["tpot_s"] == pytest.approx(tpot_ms / 1e3, rel=2e-3)
