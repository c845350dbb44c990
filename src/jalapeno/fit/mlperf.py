"""MLPerf Inference results (``published_points.csv`` format) as measured points for ``validate``.

Each row of the file is one metric of one (system, benchmark, scenario) result
(``output_tok_s_system``, ``TTFT_mean``/``p99``, ``TPOT_mean``/``p99``); a result becomes one
:class:`~jalapeno.fit.validate.MeasuredPoint`. MLPerf counts output tokens only, and its
inputs come from datasets, not fixed lengths; the lengths assumed here (:data:`MLPERF_LENGTHS`)
are stated per benchmark with where they come from. Mapping (fit/validate.py's labels):

- **Offline** (no latency bound; all samples at once): ``matched`` where the submission's engine
  config is read (:data:`MLPERF_ENGINES`: its layout and per-rank batch and token limits, every slot
  filled, over the run's samples issued at once: the drain after the last is waiting priced,
  serve/finite_run.py), else ``frontier_peak`` — the predicted frontier's highest throughput per chip.
- **Server / Interactive** (Poisson arrivals, p99 TTFT and TPOT bounds): ``matched@limits`` where the
  submission's engine config is read (:data:`MLPERF_LIMIT_ENGINES`: layout, batch and token limits; or its
  disaggregated pools, :data:`MLPERF_DISAGG_ENGINES`: the Dynamo Llama-3.1-405B row, since round 37), served at its
  best load within the same two limits (fit/latency_limits.engine_within_limits; the default since round 31,
  ``server_mapping="engine@limits"``, as Offline rows take their own engine), else ``frontier@limits`` —
  the highest predicted throughput per chip whose p99 TPOT over requests (serve/tpot_tail.poisson_tpot_s)
  is within the rules' p99 TPOT limit and whose p99 TTFT under Poisson arrivals at its own request
  rate is within the rules' p99 TTFT limit (:data:`MLPERF_RULES`; fit/latency_limits.py, serve/open_loop.py: the prefill queue's
  M/G/1 tail over the dataset's prompts). The submitters raise the load until a limit binds or
  throughput saturates: the v5.1 rows' p99 TPOT is 59-100% of the limit, median 90%, and their
  p99 TTFT up to 96% (H200 Llama-3.1-405B Server: 5.64 of 6 s). The measured TPOT and TTFT are
  results of the run, not inputs of the prediction. ``server_mapping="frontier@tpot_limit"`` keeps
  the TPOT limit alone (the mapping before the TTFT limit), ``"frontier@interactivity"`` the
  frontier at the measured 1 / mean TPOT. ``server_mapping="frontier@limits"`` prices
  every Server / Interactive row at the best swept point within the limits (the default until round 31: a search
  over layouts the submitters did not run, MLPerf median 23.5%, bias +20.0%, against 18.1% / +8.6% at the
  submissions' engines; worse at their engines: p90 45.5 -> 49.7%, the Server rows' median 8.6 -> 13.9%, and the
  GB200 x72 Llama-3.1-405B Interactive row -23% -> -53%, where the modelled 1,024-token mixed step is too slow and
  the Poisson TTFT limit binds below the measured load, docs/model.md §8.8; docs/gap_large_batch_decode.md round 31). Both limited mappings count the run as LoadGen does, to its last-issued
  query's response, over the run's own length (fit/mlperf_server.py, serve/finite_run.server_run_factor).

Measured throughput per chip = output tok/s / chips x (ISL + OSL) / OSL (the model's
``throughput_per_chip`` counts input and output tokens, InferenceX's convention; MLPerf's "tokens
per second" are the output tokens each response reports to LoadGen, ``exclude_input_from_output``
in the TensorRT-LLM submissions), with the run's own mean output tokens per sample where its log
gives it (the row's notes) and the dataset's mean input. The lengths are the benchmark datasets'
own (:data:`DEFAULT_LENGTHS`, one (ISL, OSL) pair per sample): each row is served with that spread
(:class:`~jalapeno.specs.workload.LengthSpread`, outputs scaled to the run's mean), or at the fixed
means with ``spread=False``. Results whose model is not in the catalog (Llama-3.1-405B pruned /
fine-tuned open-division variants) are skipped with the reason.

The benchmark's rules (:data:`MLPERF_RULES`, loadgen/mlperf.conf of mlcommons/inference): a Server
or Interactive result is valid only with p99 TTFT and p99 TPOT within its limits, so a row beyond
them is skipped as not a valid result. Each mapped Server / Interactive row also states its
measured running requests per chip by Little's law on the decode (output tok/s per chip x mean
TPOT): the load the run actually carried, which the frontier mapping does not bound.
"""

from __future__ import annotations

import csv
import re
from dataclasses import replace
from pathlib import Path

from jalapeno.errors import SpecError, check_bool
from jalapeno.fit.amd_clock_caps import clock_cap_of
from jalapeno.fit.measured_point import MeasuredPoint
from jalapeno.fit.mlperf_disagg import MLPERF_DISAGG_ENGINES, submitted_disagg_deployment
from jalapeno.fit.mlperf_engines import (  # noqa: F401  (the submitted engines, re-exported: split for the module budget)
    DSR1_EAGER_PROMPT_CALL_S,
    DSR1_GRAPHS,
    DSR1_HARNESS_STEP_S,
    DSR1_GRAPHS_GB200,
    LLAMA_TRT_HARNESS_STEP_S,
    MLPERF_ENGINES,
    MLPERF_FP8_CONTEXT_FMHA,
    MLPERF_GEMM_ALLREDUCE,
    MLPERF_LIMIT_ENGINES,
    MLPERF_ROUND_ROBIN_SCENARIOS,
    limit_engine,
    with_declared_attention_math,
)
from jalapeno.fit.submitted_engine import SubmittedEngine, submitted_deployment  # noqa: F401 (re-exported)
from jalapeno.fit.mlperf_multi_step import multi_step_spread
from jalapeno.fit.mlperf_rows import (  # noqa: F401  (a row's own fields, re-exported)
    _PRECISION,
    MLPERF_AGGREGATED,
    MLPERF_ENGINE_OF,
    MLPERF_HARDWARE,
    MLPERF_SKIPPED,
    MLPERF_TRTLLM_RELEASE,
    _check_result_fields,
    _harness_step_s,
    _num,
    _result_key,
    serving_of,
)
from jalapeno.fit.mlperf_rules import (  # noqa: F401  (the benchmarks' rules and lengths, re-exported)
    DEFAULT_LENGTHS,
    DSR1_MAX_OUTPUT,
    MLPERF_LENGTHS,
    MLPERF_RULES,
    MLPERF_RULES_SOURCE,
    MLPERF_SCENARIOS,
    BenchmarkLengths,
    BenchmarkRules,
    benchmark_spread,
    scenario_limits,
)
from jalapeno.fit.skipped import with_systems
from jalapeno.specs.workload import Workload

#: The shipped MLPerf Inference v5.1 rows (package data, each with its source).
DEFAULT_MLPERF = Path(__file__).resolve().parents[1] / "data" / "validation" / "mlperf_points.csv"


def running_per_chip(output_tok_s_per_chip: float, tpot_mean_s: float) -> float:
    """Requests decoding at once per chip, by Little's law on the decode: each running request
    emits one token per TPOT, so running = output tok/s x mean TPOT (tok/s x s = requests).

    >>> round(running_per_chip(18592.24 / 8, 0.066461232), 1)  # NVIDIA B200 DeepSeek-R1 Server
    154.5
    """
    return output_tok_s_per_chip * tpot_mean_s


#: Mappings a Server / Interactive result may take (:func:`load_mlperf` ``server_mapping``).
#: ``engine@limits``: the submission's own engine (:data:`MLPERF_LIMIT_ENGINES`) within the limits where
#: it is read (mapping ``matched@limits``), else ``frontier@limits``.
SERVER_MAPPINGS = ("engine@limits", "frontier@limits", "frontier@tpot_limit", "frontier@interactivity")


def load_mlperf(
    path: str | Path | None = None,
    spread: bool = True,
    lengths_path: str | Path | None = None,
    server_mapping: str = "engine@limits",
    declared_fusion: bool = True,
    serving: str = "stated",
    multi_step: bool = True,
) -> tuple[list[MeasuredPoint], list[tuple[str, str]]]:
    """MLPerf results of a ``published_points.csv``-format file as measured points, and the skipped
    results (id, reason). ``spread``: serve each row with its dataset's length spread (outputs
    scaled to the run's mean), else at the fixed mean lengths. ``lengths_path``: the dataset lengths
    file (default :data:`DEFAULT_LENGTHS`). ``server_mapping``: how Server / Interactive results
    map (:data:`SERVER_MAPPINGS`; default the submission's engine where read, else the best swept point,
    within the rules' TPOT and Poisson TTFT limits). ``declared_fusion`` (default on): price the rows whose
    engine build declares the fused GEMM + all-reduce (:data:`MLPERF_GEMM_ALLREDUCE`) with it; False prices every row
    unfused (the default until round 30: while the frontier mappings could pick disaggregated layouts the runs did not
    have, the fused best-of-every-layout frontier overshot; since round 26 they keep the runs' aggregated mode,
    docs/model.md §6.3). ``serving``: the deployments a frontier mapping may pick:
    ``stated`` (default) the serving mode the submission ran (:func:`serving_of`: aggregated for the TensorRT-LLM and
    AMD vLLM harnesses), ``any`` aggregated and disaggregated alike (the mapping before round 26). ``multi_step``
    (default on, with ``spread``): the Offline engines that run vLLM V0 multi-step scheduling
    (SubmittedEngine.scheduler_steps) are served with the lengths they compute, each output run to its window's
    end, and their throughput counts the delivered share (fit/mlperf_multi_step.multi_step_spread).

    Raises:
        SpecError: missing file, a missing column, an unknown ``server_mapping`` or ``serving``, a non-bool
            ``declared_fusion`` or ``multi_step``, two rows of one result and metric, or a result whose scenario,
            chip count or run-log output mean is malformed (:func:`_check_result_fields`).
    """
    from jalapeno.fit.mlperf_notes import lengths_note, scenario_note, scheduled_rate, unmodelled_note
    from jalapeno.fit.mlperf_server import server_run
    from jalapeno.specs.catalog import load_model, load_system

    check_bool(
        "declared_fusion", declared_fusion, "pass True to price the rows' declared gemm_allreduce_plugin, else False"
    )
    check_bool("multi_step", multi_step, "pass True to price V0 multi-step windows, else False")
    if serving not in ("stated", "any"):
        raise SpecError("serving", f"unknown {serving!r}", "use 'stated' (the submission's serving mode) or 'any'")
    if server_mapping not in SERVER_MAPPINGS:
        raise SpecError(
            "server_mapping", f"unknown mapping {server_mapping!r}", f"use one of {', '.join(SERVER_MAPPINGS)}"
        )
    p = Path(path) if path else DEFAULT_MLPERF
    if not p.is_file():
        raise SpecError(str(p), "file not found", "pass an MLPerf points CSV (published_points.csv format)")
    with p.open(newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    need = {"id", "hardware", "num_chips", "model", "precision", "concurrency_or_batch", "metric", "value", "notes"}
    missing = need - set(rows[0] if rows else {})
    if missing:
        raise SpecError(f"{p.name}: columns", f"missing {sorted(missing)}", "use the published_points.csv format")
    results: dict[str, dict] = {}
    for r in rows:
        res = results.setdefault(_result_key(r["id"]), {"row": r, "metrics": {}, "notes": ""})
        if r["metric"] in res["metrics"]:  # the later row was read, silently
            raise SpecError(
                f"{p.name}: {r['id']}",
                f"a second {r['metric']} row of result {_result_key(r['id'])}",
                "keep one row per result and metric",
            )
        res["metrics"][r["metric"]] = r["value"]
        if r["metric"] == "output_tok_s_system":
            res["row"], res["notes"] = r, r["notes"]
    points, skipped = [], []
    # each skip with its system (fit/skipped.py: validate --systems lists only its own)
    system_of = {key: MLPERF_HARDWARE.get(res["row"]["hardware"].strip()) for key, res in results.items()}
    for key, res in results.items():
        r = res["row"]
        _check_result_fields(r, res["notes"], f"{p.name}: {key}")
        bench = r["model"].strip()
        if bench in MLPERF_SKIPPED:
            skipped.append((key, MLPERF_SKIPPED[bench]))
            continue
        lengths = MLPERF_LENGTHS.get(bench)
        system = MLPERF_HARDWARE.get(r["hardware"].strip())
        if lengths is None or system is None:
            skipped.append((key, f"benchmark/hardware {bench!r}/{r['hardware']!r} not mapped"))
            continue
        prec = _PRECISION.get((lengths.model, r["precision"].strip()))
        out_tps = _num(res["metrics"].get("output_tok_s_system"))
        chips = _num(r["num_chips"])
        if prec is None or out_tps is None or chips is None:
            what = (
                [f"precision {r['precision']!r} not mapped for {lengths.model}"] * (prec is None)
                + [f"output_tok_s_system {res['metrics'].get('output_tok_s_system')!r} not a number > 0"]
                * (out_tps is None)
                + [f"num_chips {r['num_chips']!r} not a number > 0"] * (chips is None)
            )
            skipped.append((key, "; ".join(what)))  # was "precision, throughput or chip count missing", unnamed
            continue
        fw = r.get("framework", "").strip()
        engine = MLPERF_ENGINE_OF.get(fw, fw)
        prec, math_note = with_declared_attention_math(prec, key) if engine == "trt" else (prec, "")
        m = re.search(r"mean output tok/sample ~(\d+)", res["notes"])
        base = benchmark_spread(bench, lengths_path)
        # the dataset's outputs scaled to the run's own mean (its log), else to the reference run's
        spr = base.with_mean_osl(int(m.group(1)) if m else MLPERF_RULES[bench].reference_osl)
        isl, osl = round(spr.mean_isl), round(spr.mean_osl)
        wl = Workload(f"mlperf:{bench}{'' if spread else ' (fixed)'}", isl, osl, 1.0, spread=spr if spread else None)
        scenario = r["concurrency_or_batch"].strip()
        tpot = _num(res["metrics"].get("TPOT_mean"))
        ttft = _num(res["metrics"].get("TTFT_mean"))
        limits = scenario_limits(bench, scenario)
        p99 = (_num(res["metrics"].get("TTFT_p99")), _num(res["metrics"].get("TPOT_p99")))
        if limits and any(v is not None and v / 1e3 > lim * (1 + 1e-9) for v, lim in zip(p99, limits)):
            skipped.append(
                (
                    key,
                    f"{scenario} p99 TTFT/TPOT {p99[0]}/{p99[1]} ms beyond the benchmark's limits "
                    f"{limits[0] * 1e3:g}/{limits[1] * 1e3:g} ms: not a valid result",
                )
            )
            continue
        meas = {
            "throughput_per_chip": out_tps / chips * (spr.mean_isl + spr.mean_osl) / spr.mean_osl,
            "interactivity": 1e3 / tpot if tpot else None,
            "tpot_s": tpot / 1e3 if tpot else None,
            "ttft_s": ttft / 1e3 if ttft else None,
        }
        dep, conc, share = None, None, 1.0
        if scenario == "Offline" and key in MLPERF_ENGINES:
            dep, conc = submitted_deployment(
                MLPERF_ENGINES[key], prec, int(chips), load_model(lengths.model), load_system(system)
            )
            mapping = "matched"
            if spread and multi_step and MLPERF_ENGINES[key].scheduler_steps > 1:  # V0 multi-step: computed lengths
                computed, share = multi_step_spread(spr, MLPERF_ENGINES[key].scheduler_steps)
                wl = Workload(wl.name, isl, osl, 1.0, spread=computed)
        elif scenario == "Offline":
            mapping = "frontier_peak"
        elif server_mapping == "engine@limits" and limits and (eng := limit_engine(key)) is not None:
            dep, conc = submitted_deployment(eng, prec, int(chips))  # NVIDIA's configs; AMD's under its switch
            mapping = "matched@limits"
        elif server_mapping == "engine@limits" and limits and key in MLPERF_DISAGG_ENGINES:
            dep, conc = submitted_disagg_deployment(MLPERF_DISAGG_ENGINES[key], prec, int(chips))
            mapping = "matched@limits"
        elif server_mapping in ("engine@limits", "frontier@limits", "frontier@tpot_limit") and limits:
            mapping = "frontier@limits" if server_mapping == "engine@limits" else server_mapping
        elif meas["interactivity"]:
            mapping = "frontier@interactivity"
        else:
            skipped.append((key, f"{scenario} result without a mean TPOT"))
            continue
        # the LoadGen run the row is counted over: NVIDIA's harness deals Interactive queries round-robin
        run = (
            replace(
                server_run(key, MLPERF_RULES[bench].samples),
                round_robin=(key in MLPERF_LIMIT_ENGINES and scenario in MLPERF_ROUND_ROBIN_SCENARIOS),
            )
            if mapping in _SERVER_RUN and spread
            else None
        )
        notes = [
            f"{scenario_note(scenario, limits)}; "  # the rule that priced it and the lengths (fit/mlperf_notes)
            + lengths_note(
                bench,
                MLPERF_RULES[bench].samples,
                isl,
                osl,
                bool(m),
                spread,
                DSR1_MAX_OUTPUT if bench == "deepseek-r1" else None,
            )
        ]
        if tpot and scenario != "Offline":
            notes.append(
                f"running ~{running_per_chip(out_tps / chips, tpot / 1e3):.0f} requests per chip (Little's "
                "law: output tok/s x mean TPOT)"
                + (
                    f"; its mean TPOT {tpot:g} ms is above its own p99 {p99[1]:g} "
                    "ms, set by a tail of stalled requests (fit/mlperf_quality.py)"
                    if p99[1] and tpot > p99[1]
                    else ""
                )
            )
        if dep is not None and mapping == "matched":
            notes.append(
                f"submitted engine ({MLPERF_ENGINES[key].source}): {int(conc)} in flight"
                + (f"; a run of {MLPERF_ENGINES[key].queries:,} samples with its drain" if spread else "")
                + (
                    f"; V0 multi-step ({MLPERF_ENGINES[key].scheduler_steps} steps a window): computed to each "
                    f"window's end, {share:.3f} of the computed tokens delivered"
                    if share < 1
                    else ""
                )
            )
        elif dep is not None:
            src = (limit_engine(key) or MLPERF_DISAGG_ENGINES[key]).source
            # the arrivals the p99s are priced under (fit/latency_limits.engine_within_limits reads the run's flag)
            from jalapeno.fit.latency_limits import dealt_instances

            k = dealt_instances(dep, run)
            arr = (
                f"the harness's round-robin over its {k} instances (each every {k}th query: Erlang gaps, "
                "serve/open_loop)"
                if k > 1
                else "Poisson arrivals"
            )
            notes.append(
                f"submitted {'deployment' if dep.prefill else 'engine'} ({src}) at its best load within the "
                f"rules' limits (p99 TPOT <= {limits[1] * 1e3:g} ms, p99 TTFT <= {limits[0]:g} s under {arr}; "
                f"at most {int(conc)} in flight)"
            )
        if mapping == "frontier@tpot_limit":
            notes.append(f"best predicted point with mean TPOT <= the rules' p99 limit {limits[1] * 1e3:g} ms")
        elif mapping == "frontier@limits":
            notes.append(
                f"best predicted point with Poisson p99 TPOT <= the rules' limit {limits[1] * 1e3:g} ms and "
                f"Poisson p99 TTFT <= {limits[0]:g} s"
            )
        if mapping in _SERVER_RUN and spread:
            notes.append(
                "counted as LoadGen counts the run: to its last-issued query's response (fit/mlperf_server.py)"
            )
        notes += [math_note] if math_note else []
        if (left := unmodelled_note(scenario, mapping, scheduled_rate(key))) is not None:
            notes.append(left)
        fused = declared_fusion and key in MLPERF_GEMM_ALLREDUCE
        if fused:
            notes.append(
                "engine built with gemm_allreduce_plugin (its config): o_proj and down GEMMs fused with "
                "their TP all-reduce"
            )
        points.append(
            MeasuredPoint(
                "mlperf",
                key,
                system,
                lengths.model,
                prec,
                engine,
                isl,
                osl,
                conc,
                dep,
                meas,
                mapping,
                True,
                notes,
                workload=wl,
                engine_version=MLPERF_TRTLLM_RELEASE if engine == "trt" else "",
                tpot_limit_s=limits[1] if mapping in _LIMITED else None,
                ttft_limit_s=limits[0] if mapping in ("frontier@limits", "matched@limits") else None,
                gemm_allreduce_fusion=fused,
                queries=MLPERF_ENGINES[key].queries if mapping == "matched" and spread else 0,
                delivered_share=share,
                server_run=run,
                chips=int(chips),
                serving=serving_of(key, fw) if serving == "stated" else "both",
                eager_prompt_call_s=DSR1_EAGER_PROMPT_CALL_S
                if engine == "trt" and lengths.model == "deepseek-r1"
                else 0.0,
                harness_step_s=_harness_step_s(key, engine, lengths.model, system),
                clock_cap=clock_cap_of(key, system, scenario),
            )
        )
    return points, with_systems(skipped, system_of)


_LIMITED = ("frontier@limits", "frontier@tpot_limit", "matched@limits")
#: Mappings priced as a LoadGen Server run, counted to its last response (fit/latency_limits.server_run_factors)
_SERVER_RUN = ("frontier@limits", "matched@limits")
