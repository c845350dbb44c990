"""What an MLPerf validate row says in its notes: the scenario rule that priced it, the lengths it was served with,
and what is known not to be modelled (``validate --mlperf``'s notes column and its terminal lines; ux47).

A skeptic reading a row needs three things the notes did not all say: which LoadGen scenario rule priced it
(Offline has no latency limit; Server and Interactive are Poisson arrivals held to p99 TTFT and TPOT limits,
mlcommons/inference @b66003e loadgen/mlperf.conf, fit/mlperf_rules.MLPERF_RULES), which length distribution was assumed
(the MLCommons dataset's per-sample token counts, outputs scaled to the run's mean: fit/mlperf_rules.MLPERF_LENGTHS, an
assumption), and what the prediction leaves out — chiefly that a Server / Interactive run ran at the arrival rate
its submitter chose, which the model does not take: it prices the best load within the limits. The rate a run
scheduled is quoted from its LoadGen summary (data/validation/mlperf_server_runs.csv ``scheduled_per_s``) as a
figure of the run, never an input of its prediction.
"""

from __future__ import annotations

#: The LoadGen scenario rules as a note states them ({ttft} s, {tpot} ms: the benchmark's limits).
SCENARIO_RULES = {
    "Offline": "LoadGen issues every sample at once, no latency limit; throughput over the whole run",
    "Server": (
        "LoadGen issues queries as Poisson arrivals at a rate the submitter chooses; the run is valid with "
        "p99 TTFT <= {ttft:g} s and p99 TPOT <= {tpot:g} ms"
    ),
    "Interactive": (
        "Server's Poisson arrivals at a rate the submitter chooses, under the tighter limits p99 TTFT "
        "<= {ttft:g} s and p99 TPOT <= {tpot:g} ms"
    ),
}

#: Mappings priced as the best load within the scenario's limits (fit/mlperf.SERVER_MAPPINGS).
_AT_LIMITS = ("matched@limits", "frontier@limits", "frontier@tpot_limit")


def scenario_note(scenario: str, limits: tuple[float, float] | None) -> str:
    """``MLPerf <scenario> (rule ...)``: ``limits`` (p99 TTFT s, p99 TPOT s) of a Server / Interactive row
    (fit/mlperf_rules.scenario_limits), None for Offline.

    >>> scenario_note("Server", (2.0, 0.08))
    'MLPerf Server (LoadGen issues queries as Poisson arrivals at a rate the submitter chooses; the run is valid with p99 TTFT <= 2 s and p99 TPOT <= 80 ms)'
    """
    rule = SCENARIO_RULES.get(scenario, "")
    if limits is not None:
        rule = rule.format(ttft=limits[0], tpot=limits[1] * 1e3)
    return f"MLPerf {scenario}" + (f" ({rule})" if rule and "{" not in rule else "")


def lengths_note(
    bench: str, samples: int, isl: int, osl: int, from_log: bool, spread: bool, cap: int | None = None
) -> str:
    """The length distribution a row was served with: the dataset's per-sample token counts (``samples`` of them) with
    outputs scaled to the run's mean (``from_log``: its run log's, else the reference's), or the fixed means (``spread``
    False); ``cap``: the output cap of the dataset's answers (DeepSeek-R1's 20K, fit/mlperf_rules.DSR1_MAX_OUTPUT).

    >>> lengths_note("deepseek-r1", 4388, 804, 3744, True, True)[:80]
    'lengths: per-sample token counts of the MLCommons deepseek-r1 dataset (4,388 sam'
    """
    mean = f"mean ISL {isl} / OSL {osl} ({'run log' if from_log else 'reference'} output mean)"
    if not spread:
        return f"lengths: served at the fixed means, {mean}"
    capped = f" capped at {cap:,} tokens" if cap else ""
    return (
        f"lengths: per-sample token counts of the MLCommons {bench} dataset ({samples:,} samples), {mean}; "
        f"outputs are the reference answers'{capped} spread scaled to that mean, an assumption "
        "(fit/mlperf.MLPERF_LENGTHS)"
    )


def unmodelled_note(scenario: str, mapping: str, scheduled_per_s: float | None) -> str | None:
    """What is known not to be modelled for a row of ``mapping`` (fit/mlperf.SERVER_MAPPINGS, ``matched``,
    ``frontier_peak``): a limited row's arrival rate (``scheduled_per_s``: the queries/s its LoadGen summary
    scheduled, None where not recorded), an engine that was not read; None when nothing is known to be left out.

    >>> unmodelled_note("Server", "matched@limits", 5.02)[:72]
    'not modelled: the arrival rate the submitter chose (5.02 queries/s sched'
    """
    parts = []
    if mapping in _AT_LIMITS:
        rate = (
            f"{scheduled_per_s:.2f} queries/s scheduled for the system, its mlperf_log_summary.txt: a figure of "
            "the run, not an input"
            if scheduled_per_s
            else "not in the data"
        )
        parts.append(
            f"the arrival rate the submitter chose ({rate}): the prediction is the best load within the "
            "limits, so a run held below that load reads as an over-prediction"
        )
    if mapping in ("frontier@limits", "frontier@tpot_limit", "frontier_peak", "frontier@interactivity"):
        parts.append(
            "the submission's engine settings (not read for this row): the best swept deployment stands in"
            + (" (the frontier's peak)" if mapping == "frontier_peak" else "")
        )
    if mapping == "frontier@interactivity":
        parts.append(f"the {scenario} limits (priced at the measured interactivity instead)")
    return "not modelled: " + "; ".join(parts) if parts else None


def scheduled_rate(key: str) -> float | None:
    """The queries/s a Server / Interactive run scheduled (fit/mlperf_server.server_runs ``scheduled_per_s``), None
    where the run has no row or the cell is blank."""
    from jalapeno.fit.mlperf_server import server_runs

    v = (server_runs().get(key) or {}).get("scheduled_per_s", "")
    try:
        return float(v) if v else None
    except ValueError:
        return None


def terminal_lines(rows) -> list[str]:
    """validate --mlperf's lines under its table, from its MLPerf rows' ``(id, model)`` pairs (ids end in their
    scenario, ``..._Server``; models are catalog names): each scenario's rule with each benchmark's p99 limits
    (fit/mlperf_rules.scenario_limits), and where each row's notes say the rest; empty without MLPerf rows.

    >>> terminal_lines([("x_deepseek-r1_Server", "deepseek-r1")])[0]
    'MLPerf Server: LoadGen issues queries as Poisson arrivals at a rate the submitter chooses; p99 TTFT / TPOT limits deepseek-r1 2 s / 80 ms'
    """
    from jalapeno.fit.mlperf_rules import MLPERF_LENGTHS, scenario_limits

    bench_of = {v.model: b for b, v in MLPERF_LENGTHS.items()}
    present: dict[str, set[str]] = {}
    for i, model in rows:
        present.setdefault(str(i).rsplit("_", 1)[-1], set()).add(bench_of.get(model, ""))
    out = []
    for scenario in ("Offline", "Server", "Interactive"):
        if scenario not in present:
            continue
        lim = [
            f"{b} {v[0]:g} s / {v[1] * 1e3:g} ms"
            for b in sorted(present[scenario])
            if b and (v := scenario_limits(b, scenario))
        ]
        rule = SCENARIO_RULES[scenario].split("; the run")[0].split(", under")[0]
        out.append(f"MLPerf {scenario}: {rule}" + (f"; p99 TTFT / TPOT limits {', '.join(lim)}" if lim else ""))
    if out:
        out.append(
            "each MLPerf row's notes (--out CSV) name its rule, the lengths assumed (the dataset's per-sample "
            "counts, outputs scaled to the run's mean) and what is not modelled: a Server / Interactive run's "
            "arrival rate is its submitter's choice, the prediction its best load within the limits "
            "(fit/mlperf_notes.py)"
        )
    return out
