"""scripts/mlperf_peer_runs38.py and fit/mlperf_engines.DSR1_HARNESS_STEP_S: the peer runs' figures as published,
their decode loads by Little's law by hand, the harness term as the fit split's mean residual, and the term carried
by the MLPerf TensorRT-LLM DeepSeek-R1 rows only."""

from __future__ import annotations

import pytest
from script_module import load_script

from jalapeno.fit.mlperf import DSR1_HARNESS_STEP_S, load_mlperf

pr = load_script("mlperf_peer_runs38")


def _run(submitter, system):
    return next(r for r in pr.peer_runs() if r["submitter"] == submitter and r["system"] == system)


def test_identical_config_ran_at_the_requested_rates():
    # closed/{NVIDIA,Google}/configs/B200-SXM-180GBx8/Server/deepseek-r1.py are the same file; Google's user.conf
    # asks target_qps 4.0, NVIDIA's config server_target_qps 5: completed 3.98 and 4.96 samples/s (their summaries)
    g, n = _run("Google", "B200-SXM-180GBx8_TRT"), _run("NVIDIA", "B200-SXM-180GBx8_TRT")
    assert (g["target_qps"], n["target_qps"]) == (4.0, 5.0)
    assert g["completed_per_s"] / n["completed_per_s"] == pytest.approx(4.0 / 5.0, abs=0.01)
    # every B200 run passed with its p99 TTFT at 82-92% of the 2 s limit
    for r in pr.peer_runs():
        if "B200-SXM" in r["system"] or "B200_SXM" in r["system"]:
            assert 0.80 < r["ttft_p99_ms"] / 2000 < 0.93


def test_decode_load_by_littles_law():
    # Dell XE9685L: 13,963.01 output tok/s on 8 GPUs x 59.93 ms mean TPOT = 104.6 sequences a GPU
    d = _run("Dell", "XE9685L_B200_SXM_180GBx8_TRT")
    assert pr.decode_per_rank(d, 8) == pytest.approx(13963.01 / 8 * 0.05993, rel=1e-3)
    assert pr.decode_per_rank(d, 8) == pytest.approx(104.6, abs=0.1)


def test_harness_term_is_the_fit_splits_mean_residual():
    rows = [{"fit": True, "residual_s": 0.017}, {"fit": True, "residual_s": 0.015},
            {"fit": False, "residual_s": 0.050}]
    assert pr.harness_term_s(rows) == pytest.approx(0.016)
    # the four fit runs are not validation rows
    ids = {p.id for p in load_mlperf()[0]}
    for sub, system in pr.FIT_RUNS:
        assert not any(sub in i and system in i for i in ids)
    assert 0.010 < DSR1_HARNESS_STEP_S < 0.020  # the script's 19.1 ms, rounded


def test_term_rides_on_the_deepseek_trt_rows_only():
    pts, _ = load_mlperf()
    for p in pts:
        if p.model.startswith("llama") and "_TRT_" in p.id:
            continue  # the Llama TensorRT-engine rows' own term: tests/unit/test_mlperf_llama_peers47.py
        want = DSR1_HARNESS_STEP_S if (p.model == "deepseek-r1" and p.framework == "trt") else 0.0
        assert p.harness_step_s == want, p.id


def test_missing_benchmark_names_the_file(tmp_path):
    f = tmp_path / "peers.csv"
    f.write_text("# c\ndivision,submitter,system,benchmark,scenario\nclosed,X,Y,llama2-70b-99,Server\n",
                 encoding="utf-8")
    with pytest.raises(ValueError, match="no deepseek-r1 Server run"):
        pr.peer_runs(f)


def test_fit_iterates_to_the_term_as_applied(monkeypatch):
    # a model whose mean TPOT takes 0.89 of a step term h: residual(h) = r0 - 0.89 h over the fit runs; with
    # r0 = 15.7 ms the mean residual of the model with h is zero at h = 15.7 / 0.89 = 17.64 ms (by hand)
    def fake(path=pr.PEERS, harness_s=0.0, fit_only=False, stat=pr.STEADY):
        return [{"fit": True, "residual_s": r - 0.89 * harness_s} for r in (0.0171, 0.0153, 0.0149, 0.0155)]
    monkeypatch.setattr(pr, "step_rows", fake)
    assert pr.fitted_term_s(tol_s=1e-7) == pytest.approx(0.0157 / 0.89, rel=1e-4)


def test_constant_is_current_with_the_fit():
    # staleness check (as tests/unit/test_fitted_files.py does for fitted files): the model carrying the shipped
    # constant as validate carries it (on efficiency.step_overhead_s) leaves the four fit runs' mean TPOT residual at
    # zero within 0.3 ms; if the model's step moves, rerun the script and update the constant
    rows = pr.step_rows(harness_s=DSR1_HARNESS_STEP_S, fit_only=True)
    assert [r["fit"] for r in rows].count(True) == 4 and len(rows) == 4
    assert pr.harness_term_s(rows) == pytest.approx(0.0, abs=0.3e-3)
    # the term reaches the mean TPOT at less than one for one (docs: 13.3-14.2 ms of 15.7, ~0.89x): at a fixed load
    # a slower step admits fewer prompts a step
    d = pr.step_rows(fit_only=True)[0]
    with_h = rows[0]
    assert d["run"] == with_h["run"]
    assert 0.80 < (with_h["model_s"] - d["model_s"]) / DSR1_HARNESS_STEP_S < 0.95


def test_steady_state_is_the_median_tpot():
    # round 42: Dell XE9685L's summary, median TPOT 60.88 ms above its mean 59.93 (a run starting on an idle engine);
    # its steady load 13,963.01 tok/s / 8 GPUs x 60.88 ms = 106.3 a rank (by hand), the mean's 104.6
    d = _run("Dell", "XE9685L_B200_SXM_180GBx8_TRT")
    assert (d["tpot_mean_ms"], d["tpot_p50_ms"]) == (59.93, 60.88)
    assert pr.STEADY == "p50"
    assert pr.decode_per_rank(d, 8, "p50") == pytest.approx(106.3, abs=0.1)
    # every DeepSeek-R1 Server run but GB200 x72 (a stalled tail lifts its mean) has its median above its mean
    for r in pr.peer_runs():
        if "GB200-NVL72" not in r["system"]:
            assert r["tpot_p50_ms"] > r["tpot_mean_ms"], r["system"]
