"""One MLPerf engine under each scenario's rules: the order Offline >= Server >= Interactive, and where it breaks.

The MLPerf scenarios of one benchmark differ only in their latency rules (fit/mlperf_rules.MLPERF_RULES,
loadgen/mlperf.conf of the v5.1 submissions, e.g. ``llama2-70b.Server`` p99 TTFT 2,000 ms / TPOT 200 ms,
``llama2-70b-interactive`` 450 / 40 ms): Offline has none, Interactive's are tighter than Server's on both p99s. For one
engine the loads a tighter rule admits are a subset of those a looser one admits, so its best steady throughput within
them can only be lower or equal: Interactive <= Server <= unbounded (the engine's best steady state over every load up
to its slots, which an Offline run's submitter may pick). :func:`scenario_ladder` prices one Server / Interactive row's
engine under the three (fit/latency_limits.engine_within_limits), at the steady state or counted as LoadGen counts the
row's Server run.

What the order does not cover is LoadGen's counting: an Offline run ends with its last response (the drain of its
longest outputs, serve/finite_run.drain_factor), a Server run with its last-ISSUED query's response
(loadgen/results.cc: ``Completed tokens per second`` = tokens / ``final_query_all_samples_done_time``), so the
outputs still running then are counted without their time. With DeepSeek-R1's outputs (up to 20K tokens) the Offline
drain costs 24% where the Server run's last query costs 8%: a Server figure above its Offline one is allowed by that
counting whenever the latency limits admit most of the Offline load (docs/gap_large_batch_decode.md, round 42).
"""

from __future__ import annotations

from jalapeno.errors import SpecError

#: No latency limit (s): the engine's unbounded best load (every p99 passes)
UNBOUNDED_S = float("inf")


def priced_point(pt, *, system: str | None = None, stack=None):
    """(model, pricer, deployment, workload) of a measured ``pt`` (fit/validate.MeasuredPoint: an MLPerf or InferenceX
    row) as validate prices it (fit/validate.predict_points): its stack's profile, the roofline pricer with the kernels
    calibrated, and its harness step term added to ``efficiency.step_overhead_s`` (fit/mlperf_engines.DSR1_HARNESS_STEP_S;
    0 on every InferenceX row). ``system`` (a catalog name) prices the row's deployment on another chip's calibrated
    set, ``stack`` (a specs/stack profile) under another profile; None (the default): the row's own.

    Raises:
        SpecError: a point without a declared deployment (a ``frontier`` mapping).
    """
    from jalapeno.fit.entries import with_stack_mtp
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.measured_point import point_stack, point_workload, with_clock_cap, with_harness_step
    from jalapeno.specs.catalog import load_model

    if pt.deployment is None:
        raise SpecError(
            f"{pt.id}.deployment",
            "no declared engine (a frontier mapping)",
            "pass a row mapped matched or matched@limits (fit/mlperf.MLPERF_ENGINES / MLPERF_LIMIT_ENGINES)",
        )
    st = point_stack(pt) if stack is None else stack
    pricer = load_any_pricer(system or pt.system, "calibrated", pricer="roofline", stack=st)
    pricer = with_clock_cap(with_harness_step(pricer, pt.harness_step_s), pt.clock_cap)
    return load_model(pt.model), pricer, with_stack_mtp(pt.deployment, st, pt.model), point_workload(pt)


def benchmark_of(pt) -> str:
    """The MLPerf benchmark (a fit/mlperf_rules.MLPERF_RULES key) of MLPerf row ``pt``: the one whose catalog model it
    serves.

    Raises:
        SpecError: a model no benchmark serves.
    """
    from jalapeno.fit.mlperf_rules import MLPERF_LENGTHS

    for bench, lengths in MLPERF_LENGTHS.items():
        if lengths.model == pt.model:
            return bench
    raise SpecError(
        f"{pt.id}.model", f"{pt.model!r} is no MLPerf benchmark's model", "pass a row of fit/mlperf.load_mlperf"
    )


def scenario_ladder(pt, counted: bool = False) -> dict[str, float]:
    """Best throughput per chip (tok/s) of a Server / Interactive row ``pt``'s declared engine (mapping
    ``matched@limits``) under its benchmark's three rules (fit/mlperf_rules.MLPERF_RULES): ``interactive`` and
    ``server`` (p99 TTFT and TPOT) and ``unbounded`` (:data:`UNBOUNDED_S`), each by
    fit/latency_limits.engine_within_limits over the engine's loads up to its slots (``pt.concurrency``). ``counted``:
    each load counted as LoadGen counts the row's Server run (``pt.server_run``), else the steady state. The keys
    ``*_load`` give each best load (requests in flight, whole deployment). A benchmark without Interactive rules has no
    ``interactive`` keys.

    Raises:
        SpecError: a row not mapped ``matched@limits``, one :func:`benchmark_of` cannot place, or ``counted`` on a
            row without a Server run.
    """
    from jalapeno.fit.latency_limits import engine_within_limits
    from jalapeno.fit.mlperf_rules import MLPERF_RULES

    if pt.mapping != "matched@limits":
        raise SpecError(
            f"{pt.id}.mapping",
            f"is {pt.mapping!r}, not 'matched@limits': the ladder prices the row's declared engine up to its slots",
            "pass a Server / Interactive row at its declared engine (mapping matched@limits)",
        )
    if counted and pt.server_run is None:  # counted=True read as the steady state without a word
        raise SpecError(
            f"{pt.id}.server_run",
            "is None: counted=True needs the row's Server run (its queries and issue times) to count as LoadGen does",
            "pass a row of fit/mlperf.load_mlperf (every matched@limits row has one), or counted=False",
        )
    r = MLPERF_RULES[benchmark_of(pt)]
    rules = ([("interactive", (r.interactive_ttft_s, r.interactive_tpot_s))] if r.interactive_ttft_s else []) + [
        ("server", (r.server_ttft_s, r.server_tpot_s)),
        ("unbounded", (UNBOUNDED_S, UNBOUNDED_S)),
    ]
    model, pricer, dep, wl = priced_point(pt)
    run = pt.server_run if counted else None
    out = {}
    for name, (ttft, tpot) in rules:
        res = engine_within_limits(model, pricer, dep, wl, pt.concurrency, tpot, ttft, run)
        out[name], out[f"{name}_load"] = res["throughput_per_chip"], res["concurrency"]
    return out
