"""fit/mlperf_quality.py: a mean latency above its own p99 flags the metrics that mean feeds."""

from __future__ import annotations

import csv

from jalapeno.fit.mlperf_quality import mlperf_tail_flags

HEAD = ["id", "source", "hardware", "num_chips", "model", "precision", "isl", "osl", "concurrency_or_batch",
        "parallelism", "framework", "metric", "value", "unit", "notes"]


def _write(path, cells):
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEAD)
        for rid, metric, value in cells:
            w.writerow([f"{rid}_{metric}", "s", "H200", 8, "m", "fp8", "", "", "Server", "", "", metric, value, "ms", ""])


def test_rule_on_hand_made_rows(tmp_path):
    f = tmp_path / "p.csv"
    _write(f, [("a", "TPOT_mean", 70.0), ("a", "TPOT_p99", 64.0),      # mean above p99: flagged
               ("a", "TTFT_mean", 500.0), ("a", "TTFT_p99", 1200.0),   # a normal TTFT: not flagged
               ("b", "TPOT_mean", 40.0), ("b", "TPOT_p99", 40.0),      # equal: not flagged
               ("c", "TTFT_mean", 900.0), ("c", "TTFT_p99", 800.0),    # TTFT tail: its own metric only
               ("d", "TPOT_mean", "n/a"), ("d", "TPOT_p99", 30.0)])    # not a number: not checked
    flags = mlperf_tail_flags(f)
    assert set(flags) == {("a", "interactivity"), ("a", "tpot_s"), ("c", "ttft_s")}
    assert "mean TPOT 70 ms above its own p99 64 ms" in flags[("a", "tpot_s")]
    assert "mean TTFT 900 ms above its own p99 800 ms" in flags[("c", "ttft_s")]


def test_shipped_gb200_deepseek_server_is_the_one_flag():
    """Its mlperf_log_summary.txt (inference_results_v5.1 @965182b): mean TPOT 69,572,752 ns, p99
    64,452,775 ns: transcribed as published, flagged, not corrected."""
    flags = mlperf_tail_flags()
    rid = "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_deepseek-r1_Server"
    assert set(flags) == {(rid, "interactivity"), (rid, "tpot_s")}
    assert "69.57 ms above its own p99 64.45 ms" in flags[(rid, "tpot_s")]


def test_the_note_says_so():
    from jalapeno.fit.mlperf import load_mlperf

    pts, _ = load_mlperf()
    by_id = {p.id: p for p in pts}
    note = " ".join(by_id["mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_TRT_deepseek-r1_Server"].notes)
    assert "mean TPOT 69.57 ms is above its own p99 64.45 ms" in note
    assert not any("above its own p99" in " ".join(p.notes) for p in pts if "GB200-NVL72" not in p.id
                   or "deepseek-r1_Server" not in p.id)
