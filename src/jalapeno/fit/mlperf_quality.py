"""Data quality of the MLPerf results: a mean latency above its own p99 (one stated rule).

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
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

#: The metrics each latency mean feeds in the validation rows (fit/mlperf.load_mlperf's ``measured``).
FED_BY = {"TPOT": ("interactivity", "tpot_s"), "TTFT": ("ttft_s",)}


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
                reason = (f"mean {what} {mean:g} ms above its own p99 {p99:g} ms (as published): the mean is set by "
                          f"fewer than 1% of the samples, not the typical one (fit/mlperf_quality.py)")
                out.update({(rid, metric): reason for metric in metrics})
    return out
