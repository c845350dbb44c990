"""MLPerf Inference rows as measured points (fit/mlperf.py): the mapping, the output-only to
input+output conversion (by hand from the shipped row), skips with their reasons, bad files."""

from __future__ import annotations

import pytest

from jalapeno.errors import SpecError
from jalapeno.fit.mlperf import load_mlperf


def test_shipped_results_map_and_skip_with_reasons():
    pts, skipped = load_mlperf()
    assert len(pts) == 26 and all(p.source == "mlperf" for p in pts)
    assert {p.model for p in pts} == {"llama-2-70b", "deepseek-r1"}
    reasons = dict(skipped)
    assert any("405b" in k for k in reasons) and all(v for v in reasons.values())


def test_offline_throughput_counts_input_and_output_tokens():
    """MI300X Llama-2-70B Offline: 27,803.9 output tok/s on 8 GPUs, 302 output tokens per sample
    (its log), 300 assumed input tokens: (27803.9 / 8) x (300 + 302) / 302 tok/s per chip."""
    pts, _ = load_mlperf()
    p = next(x for x in pts if x.id == "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Offline")
    assert p.mapping == "frontier_peak" and (p.isl, p.osl) == (300, 302)
    assert p.measured["throughput_per_chip"] == pytest.approx(27803.9 / 8 * 602 / 302, rel=1e-9)


def test_server_maps_to_the_frontier_at_the_measured_interactivity():
    pts, _ = load_mlperf()
    p = next(x for x in pts if x.id == "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Server")
    assert p.mapping == "frontier@interactivity"
    assert p.measured["interactivity"] == pytest.approx(1e3 / p.measured["tpot_s"] / 1e3)


def test_bad_file_names_the_missing_columns(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("id,hardware\na,b\n")
    with pytest.raises(SpecError, match="missing"):
        load_mlperf(f)
    with pytest.raises(SpecError, match="file not found"):
        load_mlperf(tmp_path / "none.csv")
