"""Data quality of the MLPerf results, two stated rules: a mean latency above its own p99 (rule 1), and a Server /
Interactive run scheduled well below a rate another submitter ran validly on the same system (rule 2).

LoadGen's summary (``mlperf_log_summary.txt``) reports per-sample TTFT and TPOT statistics: mean,
percentiles, min and max over every sample of the run. A mean can exceed the 99th percentile only
when fewer than 1% of the samples carry values far above the rest: the mean is then set by that
tail (requests that stalled), not by the typical sample, and the "1 / mean TPOT" interactivity it
gives is not the run's per-user speed. The rule reads only the row's own cells (the model is
never consulted):

    metric_mean > metric_p99   (TTFT or TPOT of one result)   ->   flag that metric's rows

Flagged metrics are not dropped: ``jalapeno validate --mlperf`` reports them in the flagged group,
as fit/data_quality.py does for InferenceX rows. Only the metrics the mean feeds are flagged
(``interactivity`` and ``tpot_s`` for TPOT, ``ttft_s`` for TTFT): the run's throughput is a count
of tokens over its duration, which a latency tail does not distort.

Shipped case (the only one of the 38 v5.1 results): GB200-NVL72 DeepSeek-R1 Server, mean TPOT
69.57 ms above its p99 64.45 ms. Transcribed as published: its ``mlperf_log_summary.txt``
(mlcommons/inference_results_v5.1 @965182b, closed/NVIDIA/results/GB200-NVL72_GB200-186GB_
aarch64x72_TRT/deepseek-r1/Server/performance/run_1) gives Mean Time to Output Token 69,572,752 ns,
median 61,287,759, p99 64,452,775, p99.9 68,224,154 and max 1,170,063,800,574 ns over 210,624
samples (``generated_query_count`` in its mlperf_log_detail.txt): that one sample alone adds
1.17e12 / 210,624 ns = 5.6 ms to the mean.

Rule 2, the submitter's rate (round 49, :data:`PEER_RATE_FLAG_ON`). A Server / Interactive result is the
throughput at the Poisson rate its submitter asked LoadGen for (``target_qps`` in its user.conf, a test setting), and
it is valid when the run's p99 TTFT and TPOT are within the rules' limits; the model's ``matched@limits`` /
``frontier@limits`` figure is the highest rate the engine keeps within those limits (fit/latency_limits.py). A valid
run is therefore a lower bound on its hardware's best valid rate, and equals it only where the submitter raised the
rate until a limit bound or throughput saturated. Where another submitter's valid run of the same benchmark and
scenario on the same system (the same system name in the results tree, so the same chassis, chips and chip count)
was scheduled at :data:`PEER_RATE_MARGIN` times this run's rate or more, the row is known, from published runs
alone, to sit below its hardware's best valid rate; its throughput is flagged (the rate its submitter chose):

    max(peer scheduled rate, same system / benchmark / scenario, VALID) >= 1.10 x the row's scheduled rate
        ->   flag that result's ``throughput_per_chip``

The rule reads only the runs' published settings (:data:`DEFAULT_PEER_RATES`, the rows' own
``mlperf_server_runs.csv``); the model is never consulted. The margin, 1.10, is stated from the data's own spread,
before any error: runs of one engine config on one system type repeat NVIDIA's rate or stay within 2.6% of it
(B200 Llama-2-70B Server: nine submitters at 364/s scheduled, Nebius 373.3/s; GB200-NVL72 x4: 182 vs 183/s; B200
Llama-3.1-405B Server 1.90 vs 1.95/s), so a shortfall of 10% is a choice, not a system difference; and the goals
judge a median within 8%, so a shortfall under 10% stays a judged row. Shipped case (the only one of the v5.1
validation rows): Google B200-SXM-180GBx8 DeepSeek-R1 Server, 4.01/s, where NVIDIA's run on the same system type
passed at 5.02/s (1.25x; both configs declare ``server_target_qps`` 5, docs/gap_large_batch_decode.md round 45).
Scope: the peer file holds the NVIDIA B200 / GB200 / GB300 / H200 systems' runs only, so the rule does not check the
AMD rows (read by hand instead: at the top of their peers' rates, docs/gap_large_batch_decode.md round 49).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

#: The metrics each latency mean feeds in the validation rows (fit/mlperf.load_mlperf's ``measured``).
FED_BY = {"TPOT": ("interactivity", "tpot_s"), "TTFT": ("ttft_s",)}

#: Rule 2 on (round 49): a Server / Interactive row scheduled :data:`PEER_RATE_MARGIN` or more below a peer's valid run
#: on the same system leaves the throughput figures for the flagged group (False: the figures before round 49, exactly)
PEER_RATE_FLAG_ON = True
#: Rule 2's margin: a peer's scheduled rate at least this multiple of the row's (stated, module docstring)
PEER_RATE_MARGIN = 1.10
#: Every v5.1 Server / Interactive run on the NVIDIA systems, every submitter (package data; rule 2's peers)
DEFAULT_PEER_RATES = Path(__file__).resolve().parents[1] / "data" / "validation" / "mlperf_peer_rates.csv"


def mlperf_tail_flags(path: str | Path | None = None) -> dict[tuple[str, str], str]:
    """Flags of the rule above: ``{(result id, validation metric): reason}``.

    The result id is the point's id in ``validate`` (the row id without its metric suffix, as
    fit/mlperf.load_mlperf keys results). Rows whose mean or p99 is missing or not a number are
    not checked.

    >>> flags = mlperf_tail_flags()
    >>> sorted(m for (_, m) in flags)
    ['interactivity', 'tpot_s']
    """
    from jalapeno.fit.mlperf import DEFAULT_MLPERF

    p = Path(path) if path else DEFAULT_MLPERF
    with p.open(newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    values: dict[str, dict[str, float]] = {}
    for r in rows:
        m = re.fullmatch(r"(.*)_(TTFT|TPOT)_(mean|p99)", r.get("id", ""))
        if not m:
            continue
        try:
            values.setdefault(m.group(1), {})[f"{m.group(2)}_{m.group(3)}"] = float(r["value"])
        except (TypeError, ValueError):
            continue
    out = {}
    for rid, v in values.items():
        for what, metrics in FED_BY.items():
            mean, p99 = v.get(f"{what}_mean"), v.get(f"{what}_p99")
            if mean is not None and p99 is not None and mean > p99:
                reason = (
                    f"mean {what} {mean:g} ms above its own p99 {p99:g} ms (as published): the mean is set by "
                    f"fewer than 1% of the samples, not the typical one (fit/mlperf_quality.py)"
                )
                out.update({(rid, metric): reason for metric in metrics})
    return out


def _run_of(source: str) -> tuple[str, str, str, str] | None:
    """(submitter, system, benchmark, scenario) of a results-tree path ``closed/<submitter>/results/<system>/
    <benchmark>/<scenario>/...``; None for any other form."""
    parts = source.strip().split("/")
    if len(parts) < 6 or parts[2] != "results":
        return None
    return parts[1], parts[3], parts[4], parts[5]


def _read_runs(path: str | Path, need: set[str]) -> list[dict]:
    """The rows of a runs CSV (``#`` lines skipped) that has the columns ``need``.

    Raises:
        SpecError: a missing file, or a file without the columns ``need``.
    """
    from jalapeno.errors import SpecError

    p = Path(path)
    if not p.is_file():
        raise SpecError(str(p), "file not found", "pass an MLPerf runs CSV (fit/mlperf_quality.py rule 2)")
    with p.open(newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    missing = need - set(rows[0] if rows else {})
    if missing:
        raise SpecError(f"{p.name}: columns", f"missing {sorted(missing)}", f"give the columns {sorted(need)}")
    return rows


def _rate(r: dict) -> float | None:
    """A run's ``scheduled_per_s`` (samples/s), None where it is not a number > 0."""
    try:
        v = float(r["scheduled_per_s"])
    except (TypeError, ValueError):
        return None
    return v if v > 0 else None


def valid_peer_rates(peers_path: str | Path | None = None) -> dict[tuple[str, str, str], list[tuple[float, str]]]:
    """The VALID runs of ``peers_path`` (default :data:`DEFAULT_PEER_RATES`) by (system, benchmark, scenario): each
    run's (scheduled rate in samples/s, submitter). Runs whose rate is not a number > 0, or whose source is not a
    results-tree path, are left out. Rule 2's peers (:func:`mlperf_rate_flags`; scripts/mlperf_server_rule49.py).

    >>> sorted(valid_peer_rates()[("B200-SXM-180GBx8_TRT", "deepseek-r1", "Server")])
    [(4.01, 'Google'), (5.02, 'NVIDIA')]

    Raises:
        SpecError: a missing file, or a file without the columns the rule reads.
    """
    out: dict[tuple[str, str, str], list[tuple[float, str]]] = {}
    for r in _read_runs(peers_path or DEFAULT_PEER_RATES, {"submitter", "result", "scheduled_per_s", "source"}):
        run, v = _run_of(r["source"]), _rate(r)
        if run is not None and v is not None and r["result"].strip().upper() == "VALID":
            out.setdefault(run[1:], []).append((v, run[0]))
    return out


def mlperf_rate_flags(
    runs_path: str | Path | None = None, peers_path: str | Path | None = None, margin: float = PEER_RATE_MARGIN
) -> dict[tuple[str, str], str]:
    """Flags of rule 2 (module docstring): ``{(result id, "throughput_per_chip"): reason}`` for every Server /
    Interactive validation row (``runs_path``: fit/mlperf_server.DEFAULT_SERVER_RUNS' format, its ``scheduled_per_s``
    and results-tree ``source``) that a VALID peer run (``peers_path``, default :data:`DEFAULT_PEER_RATES`;
    :func:`valid_peer_rates`) of the same system, benchmark and scenario by another submitter was scheduled at
    ``margin`` times its rate or more. Rows or peers whose rate is not a number > 0, or whose source is not a
    results-tree path, are not checked.

    >>> sorted(rid.split("_", 2)[1] for rid, _ in mlperf_rate_flags())
    ['Google']

    Raises:
        SpecError: a missing file, or a file without the columns the rule reads.
    """
    from jalapeno.fit.mlperf_server import DEFAULT_SERVER_RUNS

    best = valid_peer_rates(peers_path)
    out = {}
    for r in _read_runs(runs_path or DEFAULT_SERVER_RUNS, {"id", "scheduled_per_s", "source"}):
        run, v = _run_of(r["source"]), _rate(r)
        if run is None or v is None:
            continue
        peers = [(pv, who) for pv, who in best.get(run[1:], []) if who != run[0]]
        if peers and (top := max(peers))[0] >= margin * v:
            out[(r["id"], "throughput_per_chip")] = (
                f"submitter's rate: {top[1]}'s valid {run[3]} run of {run[2]} on the same system ({run[1]}) was "
                f"scheduled at {top[0]:g}/s, {top[0] / v:.2f}x this run's {v:g}/s: the row's throughput is the rate "
                f"its submitter chose, below its hardware's best valid rate, which the prediction is "
                f"(fit/mlperf_quality.py rule 2)"
            )
    return out
