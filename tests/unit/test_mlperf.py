"""MLPerf Inference rows as measured points (fit/mlperf.py): the mapping, the output-only to
input+output conversion (by hand from the shipped row), skips with their reasons, bad files."""

from __future__ import annotations

import pytest

from jalapeno.errors import SpecError
from jalapeno.fit.mlperf import load_mlperf


def test_shipped_results_map_and_skip_with_reasons():
    pts, skipped = load_mlperf()
    assert len(pts) == 36 and all(p.source == "mlperf" for p in pts)
    assert {p.model for p in pts} == {"llama-2-70b", "deepseek-r1", "llama-3.1-405b"}
    reasons = dict(skipped)
    assert len(reasons) == 2 and all("405b" in k and "open-division" in v for k, v in reasons.items())


def test_offline_throughput_counts_input_and_output_tokens():
    """MI300X Llama-2-70B Offline: 27,803.9 output tok/s on 8 GPUs, 302 output tokens per sample
    (its log), OpenOrca's mean input 222.33 tokens (24,576 prompts, mean of their token counts):
    (27803.9 / 8) x (222.33 + 302) / 302 tok/s per chip. The delivered spread's mean is the log's 302 (with
    ``multi_step`` off; on, the workload holds the lengths its 11-step V0 windows compute: 302 + ~(11 - 1) / 2)."""
    pts, _ = load_mlperf()
    p = next(x for x in pts if x.id == "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Offline")
    assert p.mapping == "matched" and (p.isl, p.osl) == (222, 302)
    assert p.measured["throughput_per_chip"] == pytest.approx(27803.9 / 8 * (222.33 + 302) / 302, rel=1e-4)
    delivered = next(x for x in load_mlperf(multi_step=False)[0] if x.id == p.id)
    assert delivered.workload.spread is not None and delivered.workload.mean_osl == pytest.approx(302, rel=1e-6)
    assert p.workload.mean_osl == pytest.approx(302 + 5, abs=0.5)
    fixed = next(x for x in load_mlperf(spread=False)[0] if x.id == p.id)
    assert fixed.workload.spread is None and (fixed.workload.isl, fixed.workload.osl) == (222, 302)


def test_rows_are_priced_with_their_engine_at_the_submitted_release():
    """The rows' 'TensorRT-LLM' is the trtllm profile (engines trt, trtllm) pinned before 1.2.0rc3
    (NVIDIA's v5.1 code builds a 2025 commit), so DeepSeek-R1 at EP 8 = top-k 8 all-gathers; AMD's
    vLLM-based harness on an MI system is vllm-rocm."""
    from jalapeno.fit.validate import point_stack

    pts, _ = load_mlperf()
    nv = next(x for x in pts if x.id == "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server")
    st = point_stack(nv)
    assert st.name == "trtllm@1.2.0rc2" and st.moe_exchange == "nvlink_all_to_all_above_top_k"
    amd = next(x for x in pts if x.id == "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Offline")
    assert point_stack(amd).name == "vllm-rocm"


def test_server_and_interactive_map_to_the_best_point_within_the_rules_limits():
    """loadgen/mlperf.conf: llama2-70b.Server ttft_latency 2000 ms / tpot_latency 200 ms, Interactive
    450 / 40 ms; deepseek-r1.Server 2000 / 80 ms; llama3.1-405b.Interactive 4500 / 80 ms. The measured
    TPOT and TTFT are not inputs of the mapping."""
    pts = {p.id: p for p in load_mlperf()[0]}
    srv = pts["mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Server"]
    assert (srv.mapping, srv.tpot_limit_s, srv.ttft_limit_s) == ("frontier@limits", 0.200, 2.0)
    inter = pts["mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Interactive"]
    assert (inter.tpot_limit_s, inter.ttft_limit_s) == (0.040, 0.450)
    assert pts["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server"].tpot_limit_s == 0.080
    big = pts["mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama3p1-405b_Interactive"]
    assert (big.tpot_limit_s, big.ttft_limit_s) == (0.080, 4.5)
    assert all(p.tpot_limit_s is None and p.ttft_limit_s is None for p in pts.values() if p.id.endswith("_Offline"))
    assert any("Poisson p99 TPOT <= the rules' limit 200 ms and Poisson p99 TTFT <= 2 s" in n for n in srv.notes)
    old = {p.id: p for p in load_mlperf(server_mapping="frontier@tpot_limit")[0]}[srv.id]
    assert (old.mapping, old.tpot_limit_s, old.ttft_limit_s) == ("frontier@tpot_limit", 0.200, None)


def test_server_can_still_map_to_the_frontier_at_the_measured_interactivity():
    pts, _ = load_mlperf(server_mapping="frontier@interactivity")
    p = next(x for x in pts if x.id == "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Server")
    assert p.mapping == "frontier@interactivity" and p.tpot_limit_s is None and p.ttft_limit_s is None
    assert p.measured["interactivity"] == pytest.approx(1e3 / p.measured["tpot_s"] / 1e3)
    with pytest.raises(SpecError, match="server_mapping.*unknown mapping 'peak'"):
        load_mlperf(server_mapping="peak")


def test_peak_within_tpot_keeps_feasible_points_within_the_limit():
    """Four swept points (TPOT 50, 90, 70, 200 ms; 100, 300, 200, 400 tok/s/chip; the last infeasible):
    within 80 ms only the 50 and 70 ms points count, so the best is 200; within 10 ms none."""
    from types import SimpleNamespace

    import numpy as np

    from jalapeno.fit.validate import peak_within_tpot

    pts = SimpleNamespace(feasible=np.array([True, True, True, False]), tpot_s=np.array([0.05, 0.09, 0.07, 0.2]),
                          throughput_per_chip=np.array([100.0, 300.0, 200.0, 400.0]))
    assert peak_within_tpot(pts, 0.080) == 200.0
    assert peak_within_tpot(pts, 0.010) == 0.0
    assert peak_within_tpot(pts, 1.0) == 300.0
    with pytest.raises(SpecError, match="tpot_limit_s"):
        peak_within_tpot(pts, None)


def test_bad_file_names_the_missing_columns(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("id,hardware\na,b\n")
    with pytest.raises(SpecError, match="missing"):
        load_mlperf(f)
    with pytest.raises(SpecError, match="file not found"):
        load_mlperf(tmp_path / "none.csv")


def _write_server(tmp_path, tpot_p99_ms: float):
    """One Llama-2-70B Server result (four metric rows) with a chosen p99 TPOT."""
    head = "id,hardware,num_chips,model,precision,concurrency_or_batch,framework,metric,value,notes\n"
    base = "r_{m},H200-SXM-141GB,8,llama2-70b-99,weights fp8,Server,TensorRT-LLM,{m},{v},{n}\n"
    rows = [("tput", "output_tok_s_system", 30000, "mean output tok/sample ~294"), ("TTFT_mean", "TTFT_mean", 500, ""),
            ("TTFT_p99", "TTFT_p99", 1500, ""), ("TPOT_mean", "TPOT_mean", 150, ""),
            ("TPOT_p99", "TPOT_p99", tpot_p99_ms, "")]
    f = tmp_path / "s.csv"
    f.write_text(head + "".join(base.format(m=m, v=v, n=n).replace(f"r_{m}", f"r_{i}") for i, m, v, n in rows))
    return f


def test_server_result_beyond_the_tpot_limit_is_skipped_with_the_limit(tmp_path):
    """loadgen/mlperf.conf: llama2-70b.Server.tpot_latency = 200 ms, ttft_latency = 2000 ms."""
    pts, skipped = load_mlperf(_write_server(tmp_path, 201.0))
    assert pts == [] and len(skipped) == 1
    assert "beyond the benchmark's limits 2000/200 ms" in skipped[0][1]
    pts, skipped = load_mlperf(_write_server(tmp_path, 199.0))
    assert len(pts) == 1 and skipped == []


def test_running_requests_per_chip_by_littles_law(tmp_path):
    """30,000 output tok/s on 8 chips at a 150 ms mean TPOT: 3,750 tok/s x 0.15 s = 562.5 running."""
    pts, _ = load_mlperf(_write_server(tmp_path, 199.0))
    assert "running ~562 requests per chip" in pts[0].notes[1] or "running ~563 requests per chip" in pts[0].notes[1]


def test_deepseek_offline_runs_the_submitted_engine_with_every_slot_filled():
    """closed/NVIDIA/configs/GB200-NVL72_GB200-186GB_aarch64x72/Offline/deepseek-r1.py: TP8 with attention
    DP, EP8, gpu_batch_size 512, max_num_tokens 4608; 72 GPUs = 9 instances, 512 x 8 ranks x 9 = 36,864."""
    pts, _ = load_mlperf()
    p = next(x for x in pts if x.id == "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_deepseek-r1_Offline")
    assert p.mapping == "matched" and p.concurrency == 36864
    d = p.deployment
    assert (d.decode.layout.tp, d.decode.layout.dp, d.decode.layout.ep, d.decode.workers) == (1, 8, 8, 9)
    assert (d.max_running, d.max_tokens_per_step, d.budget_per, d.decode.moe_backend) == (512, 4608, "rank", "wideep")
    h = next(x for x in pts if x.id == "mlperf51_HPE_HPE_Cray_XD670_H200_SXM_141GBx8_TRT_deepseek-r1_Offline")
    assert h.concurrency == 216 * 8 and h.precision == "fp8"


def test_submitted_engine_refuses_a_partial_instance():
    from jalapeno.fit.mlperf import MLPERF_ENGINES, submitted_deployment

    eng = next(iter(MLPERF_ENGINES.values()))
    with pytest.raises(SpecError, match="not a whole number of 8-GPU instances"):
        submitted_deployment(eng, "fp4", 12)
