"""The LoadGen Server run of an MLPerf Server / Interactive row: how long it lasts, from its own log.

LoadGen reports a Server run's ``Completed samples per second`` (and tokens) over the time its
last-issued query completes (loadgen/results.cc, loadgen/loadgen.cc), so a run's length sets how
much of it that last latency takes (serve/finite_run.server_run_factor). The length follows from
the run's settings: ``effective_min_duration_ms`` and ``effective_min_query_count`` of its
``mlperf_log_detail.txt`` (submitters raise both above loadgen/mlperf.conf's 600 s and 100: NVIDIA's
DeepSeek-R1 runs 26,328 queries, six copies of the dataset; its Llama-2-70B Server 2,400 s), read into
:data:`DEFAULT_SERVER_RUNS`; the request count then follows from the arrival rate
(serve/finite_run.ServerRun.queries).
"""

from __future__ import annotations

import csv
from pathlib import Path

from jalapeno.errors import SpecError
from jalapeno.serve.finite_run import ServerRun

#: The v5.1 Server / Interactive rows' LoadGen run settings (package data; each row names its log)
DEFAULT_SERVER_RUNS = Path(__file__).resolve().parents[1] / "data" / "validation" / "mlperf_server_runs.csv"

_RUNS: dict[str, dict] = {}


def server_runs(path: str | Path | None = None) -> dict[str, dict]:
    """The rows of a Server run settings CSV (:data:`DEFAULT_SERVER_RUNS` format), keyed by result id.

    Raises:
        SpecError: a missing file or column.
    """
    p = Path(path or DEFAULT_SERVER_RUNS)
    if str(p) not in _RUNS:
        if not p.is_file():
            raise SpecError(
                str(p), "file not found", "pass the Server run settings CSV (id,min_duration_s,min_query_count,...)"
            )
        with p.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
        if not rows:
            raise SpecError(
                p.name, "no rows", "give one row per Server / Interactive result (mlperf_server_runs.csv format)"
            )
        missing = {"id", "min_duration_s", "min_query_count", "source"} - set(rows[0])
        if missing:
            raise SpecError(f"{p.name}: columns", f"missing {sorted(missing)}", "use the mlperf_server_runs.csv format")
        _RUNS[str(p)] = {r["id"]: r for r in rows}
    return _RUNS[str(p)]


def server_run(key: str, samples: int, path: str | Path | None = None) -> ServerRun:
    """The LoadGen Server run of result ``key`` over a dataset of ``samples``: its ``min_duration_s`` and
    ``min_query_count`` where :func:`server_runs` has the row, else loadgen/mlperf.conf's defaults
    (600 s; LoadGen's min_query_count 100).

    >>> r = server_run("mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server", 4388)
    >>> r.min_duration_s, r.min_query_count, r.queries(5.02)
    (600.0, 26328, 26328)

    Raises:
        SpecError: as :func:`server_runs`.
    """
    runs = server_runs(path)
    r = runs.get(key)
    if r is None:
        return ServerRun(samples)
    where = f"{Path(path or DEFAULT_SERVER_RUNS).name}: {key}"
    try:
        dur, count = float(r["min_duration_s"] or "nan"), float(r["min_query_count"] or "nan")
        if not count.is_integer():
            raise ValueError
        return ServerRun(
            samples, dur, int(count), f"inference_results_v5.1 @965182b {r['source']}mlperf_log_detail.txt"
        )
    except (ValueError, TypeError, OverflowError, SpecError) as e:
        field = e.field if isinstance(e, SpecError) else "min_duration_s / min_query_count"
        raise SpecError(
            f"{where}.{field}",
            f"{r.get('min_duration_s')!r} s, {r.get('min_query_count')!r} queries",
            "give the log's effective_min_duration_ms / 1000 (> 0) and effective_min_query_count (a whole number >= 1)",
        ) from None
