"""scripts/mlperf_server_rate40.py: the published peer-run figures it reads, Little's law and the straight line by hand,
the config filter (NVIDIA's file unchanged only) and the summary parser."""

from __future__ import annotations

import pytest
from script_module import load_script

sr = load_script("mlperf_server_rate40")


def _run(submitter, system, bench, scenario):
    return next(
        r
        for r in sr.dense_runs()
        if (r["submitter"], r["system"], r["benchmark"], r["scenario"]) == (submitter, system, bench, scenario)
    )


def test_every_same_config_run_is_in_the_peer_file():
    runs = {(r["benchmark"], r["scenario"], r["submitter"], r["system"]) for r in sr.dense_runs()}
    want = {(b, s, sub, sys_) for (b, s), subs in sr.SAME_CONFIG.items() for sub, sys_ in subs}
    assert runs == want
    assert len(runs) == 32


def test_changed_configs_are_left_out():
    # GigaComputing's Llama-2-70B Interactive config sets max_num_tokens 512 (NVIDIA's 768); Nebius's files differ
    names = {(r["submitter"], r["benchmark"], r["scenario"]) for r in sr.dense_runs()}
    assert ("GigaComputing", "llama2-70b-99", "Interactive") not in names
    assert not any(sub == "Nebius" for sub, _, _ in names)


def test_decode_load_by_littles_law():
    # NVIDIA B200 Llama-2-70B Interactive: 59,545.45 output tok/s over 8 TP1 instances x 34.21 ms = 254.6 requests
    r = _run("NVIDIA", "B200-SXM-180GBx8_TRT", "llama2-70b-99", "Interactive")
    assert sr.decode_per_instance(r, 8) == pytest.approx(59545.45 / 8 * 0.03421, rel=1e-9)
    assert sr.decode_per_instance(r, 8) == pytest.approx(254.6, abs=0.1)


def test_line_through_nvidias_two_llama2_runs_by_hand():
    # (254.6, 34.21) and (1528.0, 123.32): slope 89.11 / 1273.4 = 0.06998 ms a request, intercept 16.39 ms
    a, b = sr.line([254.63, 1528.0], [34.21, 123.32])
    assert b == pytest.approx(89.11 / 1273.37, rel=1e-6)
    assert a == pytest.approx(34.21 - 254.63 * 89.11 / 1273.37, rel=1e-6)
    assert a == pytest.approx(16.39, abs=0.01)


def test_measured_figures_key_by_result(tmp_path):
    f = tmp_path / "p.csv"
    f.write_text(
        "id,metric,value\nX_Server_tput,output_tok_s_system,100\nX_Server_TPOT_p99,TPOT_p99,72.5\n"
        "X_Server_TTFT_mean,TTFT_mean,700\n",
        encoding="utf-8",
    )
    assert sr.measured_figures(f) == {"X_Server": {"output_tok_s_system": 100.0, "TPOT_p99": 72.5, "TTFT_mean": 700.0}}
