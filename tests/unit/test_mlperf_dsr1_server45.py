"""scripts/mlperf_dsr1_server45.py: the DeepSeek-R1 Server runs it reads (published LoadGen figures), Little's law,
the runs' margins to the rules' limits, the straight lines by hand, and the caps the configs declare."""

from __future__ import annotations

import pytest
from script_module import load_script

ds = load_script("mlperf_dsr1_server45")


def _run(submitter, system):
    return next(r for r in ds.dsr1_runs() if (r["submitter"], r["system"]) == (submitter, system))


def test_reads_the_eight_v51_dsr1_server_runs():
    runs = ds.dsr1_runs()
    assert len(runs) == 8
    assert {r["benchmark"] for r in runs} == {"deepseek-r1"}
    # NVIDIA GB200-NVL72 x72: 72 GPUs, nine 8-GPU instances
    assert _run("NVIDIA", "GB200-NVL72_GB200-186GB_aarch64x72_TRT")["instances"] == 9


def test_load_by_littles_law_from_the_summary():
    # NVIDIA B200: 18,592.24 output tok/s over 8 ranks x 66.46 ms mean TPOT (its mlperf_log_summary.txt)
    r = _run("NVIDIA", "B200-SXM-180GBx8_TRT")
    assert r["load"] == pytest.approx(18592.24 / 8 * 0.06646, rel=1e-9)
    # GB200 x72: 167,578.06 tok/s over 72 ranks x 69.57 ms
    g = _run("NVIDIA", "GB200-NVL72_GB200-186GB_aarch64x72_TRT")
    assert g["load"] == pytest.approx(167578.06 / 72 * 0.06957, rel=1e-9)


def test_margins_to_the_limits():
    m = {x["run"]: x for x in ds.margins(ds.dsr1_runs())}
    nv = m["NVIDIA B200-SXM-180GBx8_TRT"]
    assert nv["ttft"] == pytest.approx(1.69586 / 2.0, rel=1e-4)  # p99 first token 1,695.86 ms of 2 s
    assert nv["tpot"] == pytest.approx(72.18 / 80.0, rel=1e-4)  # p99 TPOT 72.18 ms of 80 ms
    gb = m["NVIDIA GB200-NVL72_GB200-186GB_aarch64x72_TRT"]
    assert gb["ttft"] < 0.65 and gb["tpot"] < 0.85  # the GB200 x72 run is near neither limit
    assert all(x["ttft"] < 1.0 and x["tpot"] < 1.0 for x in m.values())  # every run is VALID


def test_line_to_limit_by_hand():
    # y = 40 + 0.2 x: 80 ms at x = 200
    assert ds.line_to_limit([50.0, 150.0], [50.0, 70.0]) == pytest.approx((40.0, 0.2, 200.0))
    # the same-config B200 runs: the line rises with the load
    same = [r for r in ds.dsr1_runs() if (r["submitter"], r["system"]) in ds.SAME_ENGINE]
    assert len(same) == 3
    a, b, lim = ds.line_to_limit([r["load"] for r in same], [r["tpot_p99_ms"] for r in same])
    assert b > 0 and 154.5 < lim < 512


def test_interpolated_limit_load_by_hand():
    # from (150, 70) to (510, 91.6): 0.06 ms a request; 80 - 2 - 70 = 8 ms more -> 150 + 8 / 0.06
    assert ds.interpolated_limit_load(150.0, 70.0, 2.0, 510.0, 91.6) == pytest.approx(150.0 + 8.0 / 0.06)
    # a tail that already breaks the limit gives a load below the run's
    assert ds.interpolated_limit_load(150.0, 70.0, 12.0, 510.0, 91.6) < 150.0


def test_engine_caps_as_the_configs_declare():
    # closed/NVIDIA/configs/B200-SXM-180GBx8/Server/deepseek-r1.py @965182b
    nv = ds.ENGINE_CAPS[ds.NVIDIA_B200]
    assert (nv["batch"], nv["tokens"], nv["max_concurrency"], nv["graph_max"]) == (512, 3456, 5120, 512)
    # GB200 x72 declares 5 x 9 (nine instances at B200's rate); Google's file declares 5, its user.conf ran 4.0
    assert (
        ds.ENGINE_CAPS["mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_deepseek-r1_Server"]["config_qps"] == 45
    )
    assert _run("Google", "B200-SXM-180GBx8_TRT")["target_qps"] == 4.0
    assert ds.ENGINE_CAPS["mlperf51_Google_B200-SXM-180GBx8_TRT_deepseek-r1_Server"]["config_qps"] == 5.0


def test_file_without_columns_names_the_fix(tmp_path):
    f = tmp_path / "peers.csv"
    f.write_text("submitter,system\nNVIDIA,B200\n", encoding="utf-8")
    with pytest.raises(ValueError, match="needs columns"):
        ds.dsr1_runs(f)
