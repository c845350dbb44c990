"""MLPerf v5.1 DeepSeek-R1 Server rows: does a per-request TPOT tail (prefill stalls under Poisson arrivals with
attention DP) bind the runs? (issue 18; diagnosis only, docs/gap_large_batch_decode.md "Round 35 (mlperf35b)").

LoadGen reports each run's mean and p99 TPOT over requests (``TPOT_mean`` / ``TPOT_p99`` of
src/jalapeno/data/validation/mlperf_points.csv, read from inference_results_v5.1 @965182b mlperf_log_summary.txt).
If prompts prefilled on one attention-DP rank stalled the decode stream of long-output requests enough to bind the
80 ms p99 TPOT limit (loadgen/mlperf.conf, fit/mlperf.MLPERF_RULES), the runs' p99 would sit well above their mean.
For each row this prints

- ``tail``: measured p99 TPOT / mean TPOT (1.0 = every request decodes at the mean step);
- ``p99/limit``, ``TTFT p99/limit``: how close each measured p99 sits to its limit;
- ``model mean @ load``: the submitted engine's modelled mean TPOT at the run's own decode load (Little's law;
  scripts/mlperf_server_operating_point.py), and ``tail needed``: the p99/mean ratio the model would need for the
  80 ms limit to bind at that load (limit / model mean);
- ``cap x meas tail``: the model's mean TPOT at the engine's 512-per-rank cap times the run's own tail (floored at 1): below 80 ms
  means that even the measured tail, added to the model, leaves the cap admissible.

Reading (round 35): the measured tails are 0.93-1.09, the model would need 2.1-2.7 at the runs' loads, and the
model's cap times the measured tail stays at 72-74 ms < 80 ms. The per-request TPOT tail is not what separates the
runs' Server load (112-162 per rank) from the model's (512): the runs' mean step at their own load is 1.76-2.08x the
model's (the decode-step gap of this page), and their p99 TPOT sits at 81-90% of the limit because of that step.
Run: python scripts/mlperf_server_tpot_tail35.py   (a few seconds)
"""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

from jalapeno.fit.mlperf import DEFAULT_MLPERF, MLPERF_LIMIT_ENGINES, MLPERF_RULES


def _operating_points():
    """scripts/mlperf_server_operating_point.operating_points, loaded from the sibling file."""
    path = Path(__file__).resolve().with_name("mlperf_server_operating_point.py")
    spec = importlib.util.spec_from_file_location("mlperf_server_operating_point", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.operating_points


def measured_latencies(row_id: str, path: Path = DEFAULT_MLPERF) -> dict:
    """The run's TTFT / TPOT mean and p99 in seconds from the published LoadGen summary figures (ms in the file)."""
    out = {}
    with Path(path).open(newline="", encoding="utf-8-sig") as f:
        for r in csv.DictReader(f):
            for key in ("TTFT_mean", "TTFT_p99", "TPOT_mean", "TPOT_p99"):
                if r["id"] == f"{row_id}_{key}":
                    if r["unit"] != "ms":
                        raise ValueError(f"{r['id']}: unit {r['unit']!r}, expected 'ms'; fix the row's unit field")
                    out[key] = float(r["value"]) / 1e3
    missing = {"TTFT_mean", "TTFT_p99", "TPOT_mean", "TPOT_p99"} - set(out)
    if missing:
        raise KeyError(f"{row_id}: no {sorted(missing)} rows in {path}; add the run's LoadGen summary figures")
    return out


def tail_rows() -> list[dict]:
    """One dict per DeepSeek-R1 Server row: the measured tails and the model's TPOT at the run's load and cap."""
    op = _operating_points()
    rules = MLPERF_RULES["deepseek-r1"]
    rows = []
    for rid in MLPERF_LIMIT_ENGINES:
        if "deepseek-r1_Server" not in rid:
            continue
        m, o = measured_latencies(rid), op(rid)
        tail = m["TPOT_p99"] / m["TPOT_mean"]
        rows.append(
            {
                "id": rid,
                "per_rank": o["per_rank"],
                "tail": tail,
                "tpot_p99_over_limit": m["TPOT_p99"] / rules.server_tpot_s,
                "ttft_p99_over_limit": m["TTFT_p99"] / rules.server_ttft_s,
                "model_mean_at_load_s": o["model_at_load"]["tpot_s"],
                "tail_needed": rules.server_tpot_s / o["model_at_load"]["tpot_s"],
                "cap_times_tail_s": o["model_at_cap"]["tpot_s"] * max(tail, 1.0),
            }
        )
    return rows


def main() -> None:
    print(
        f"{'row':50s} {'meas/rank':>9s} {'tail':>5s} {'p99/lim':>7s} {'TTFT p99/lim':>12s} | "
        f"{'model mean@load ms':>18s} {'tail needed':>11s} {'cap x meas tail ms':>18s}"
    )
    for r in tail_rows():
        print(
            f"{r['id'][9:59]:50s} {r['per_rank']:9.0f} {r['tail']:5.2f} {r['tpot_p99_over_limit']:7.2f} "
            f"{r['ttft_p99_over_limit']:12.2f} | {r['model_mean_at_load_s'] * 1e3:18.1f} {r['tail_needed']:11.2f} "
            f"{r['cap_times_tail_s'] * 1e3:18.1f}"
        )


if __name__ == "__main__":
    main()
