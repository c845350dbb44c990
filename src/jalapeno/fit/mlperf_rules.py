"""The MLPerf Inference benchmarks as their rules define them: latency limits, sample counts and datasets' lengths.

What one benchmark (``llama2-70b-99``, ``deepseek-r1``, ``llama3.1-405b``) fixes for every submission, whatever ran
it: the p99 TTFT / TPOT limits a Server or Interactive result must meet and the samples each run draws
(:data:`MLPERF_RULES`, loadgen/mlperf.conf of mlcommons/inference), the scenarios LoadGen runs
(:data:`MLPERF_SCENARIOS`), the catalog model and mean lengths each benchmark is priced at (:data:`MLPERF_LENGTHS`) and
the per-sample (ISL, OSL) pairs of its dataset (:func:`benchmark_spread`, :data:`DEFAULT_LENGTHS`). fit/mlperf.py maps
the published results onto these; fit/mlperf_rows.py reads each result's own fields. Split out of fit/mlperf.py
(round 48) for the module budget; every name is re-exported there.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jalapeno.errors import SpecError
from jalapeno.specs.workload import LengthSpread

#: The benchmark datasets' request lengths, one (benchmark, isl, osl) row per sample (package
#: data): the token counts of the official MLCommons dataset files (llama2-70b
#: ``open_orca_gpt4_tokenized_llama.sampled_24576.pkl``: ``tok_input_length`` /
#: ``tok_output_length``, the GPT-4 reference answer; deepseek-r1
#: ``mlperf_deepseek_r1_dataset_4388_fp8_eval.pkl``: ``tok_input_len`` / ``tok_ref_output_len``;
#: llama3.1-405b's 8,313 samples) as extracted by openshift-psap/performance-dashboard @7cd1065
#: (mlperf-data/summaries/*.csv, mlperf-data/original/generate_dataset_summaries.py). Checked against
#: independent figures in tests/unit/test_mlperf_lengths.py: 24,576 / 4,388 / 8,313 samples (rules),
#: every OpenOrca input < 1,024 (processorca.py's filter), DeepSeek-R1's longest input 3,140 (NVIDIA's
#: ``max_input_len``), its outputs capped at 20K averaging 3,886.2 (the reference README's
#: ``mean-output-tok-len`` 3886.2274), Llama-3.1-405B's averaging 684.68 (its README).
DEFAULT_LENGTHS = Path(__file__).resolve().parents[1] / "data" / "validation" / "mlperf_lengths.csv.gz"
#: DeepSeek-R1's output cap (MLCommons "DeepSeek-R1 in MLPerf Inference v5.1": maximum output 20K;
#: NVIDIA's configs ``max_seq_len`` 3140 + 20000); the dataset's reference outputs run to 32,768
DSR1_MAX_OUTPUT = 20_000


@dataclass(frozen=True)
class BenchmarkLengths:
    """One MLPerf benchmark's catalog model, its mean lengths (tokens, the dataset's mean input and
    the reference implementation's mean output) and their source."""

    model: str
    isl: int
    osl: int
    source: str


@dataclass(frozen=True)
class BenchmarkRules:
    """One benchmark's latency limits (p99, seconds) and sample counts, from the MLPerf rules."""

    server_ttft_s: float
    server_tpot_s: float
    interactive_ttft_s: float | None
    interactive_tpot_s: float | None
    #: ``performance_sample_count_override`` = Offline ``min_query_count`` (the dataset's samples)
    samples: int
    #: mean output tokens per sample of the reference implementation's accuracy run
    reference_osl: float


#: Source of :data:`MLPERF_RULES`: mlcommons/inference @b66003e (2026-08-20), loadgen/mlperf.conf
#: (``*.Server.ttft_latency`` / ``tpot_latency`` in ms, ``performance_sample_count_override``,
#: ``Offline.min_query_count``) and the reference READMEs (language/llama2-70b/README.md "Tokens per
#: sample: 294.45"; language/deepseek-r1/README.md ``mean-output-tok-len`` 3886.2274 over 4,388
#: samples; language/llama3.1-405b/README.md ``tokens_per_sample`` 684.68).
MLPERF_RULES_SOURCE = (
    "mlcommons/inference @b66003e: loadgen/mlperf.conf (TTFT/TPOT p99 limits, sample "
    "counts) and the reference READMEs (mean output tokens per sample)"
)
MLPERF_RULES = {
    "llama2-70b-99": BenchmarkRules(2.0, 0.200, 0.450, 0.040, 24576, 294.45),
    "deepseek-r1": BenchmarkRules(2.0, 0.080, 1.5, 0.015, 4388, 3886.2274),
    "llama3.1-405b": BenchmarkRules(6.0, 0.175, 4.5, 0.080, 8313, 684.68),
}

_LEN_SRC = (
    "dataset lengths (DEFAULT_LENGTHS: the MLCommons dataset's token counts, per sample); mean "
    "input {isl:.1f} tokens, {n:,} samples; {out}"
)
#: Per benchmark: the catalog model and the mean input / output lengths (rounded; the rows are
#: served with the whole spread, :func:`benchmark_spread`).
MLPERF_LENGTHS = {
    "llama2-70b-99": BenchmarkLengths(
        "llama-2-70b",
        222,
        round(MLPERF_RULES["llama2-70b-99"].reference_osl),
        _LEN_SRC.format(
            isl=222.33,
            n=24576,
            out="outputs: Llama-2's reference mean 294.45 per sample (README), or the "
            "run's own log value; their spread is the dataset's GPT-4 reference answers' (mean 218.9) "
            "scaled to that mean, an ASSUMPTION checked on Llama-2's own outputs for 630 samples (the "
            "v5.1 TEST06 logs, scripts/mlperf_test06_lengths.py): correlation 0.63, CV 0.56 vs the "
            "reference's 0.75, decode context 430 vs 445 tokens",
        ),
    ),
    "deepseek-r1": BenchmarkLengths(
        "deepseek-r1",
        804,
        round(MLPERF_RULES["deepseek-r1"].reference_osl),
        _LEN_SRC.format(
            isl=803.79,
            n=4388,
            out="outputs: the reference outputs capped at 20K (mean 3,886.2, the "
            "README's accuracy-run figure), scaled to each run's own mean (3,676-3,828) where its log gives "
            "one (the runs' own outputs for 199 samples, TEST06 logs: correlation 0.92 with the "
            "reference, CV 1.11 vs 1.15); TensorRT-LLM tech blog 10 states the same 803-token mean input",
        ),
    ),
    "llama3.1-405b": BenchmarkLengths(
        "llama-3.1-405b",
        9429,
        round(MLPERF_RULES["llama3.1-405b"].reference_osl),
        _LEN_SRC.format(
            isl=9428.64,
            n=8313,
            out="outputs: the reference answers (mean 684.68, the README's "
            "tokens_per_sample), scaled to each run's own mean (646-656)",
        ),
    ),
}


def benchmark_spread(bench: str, path: str | Path | None = None) -> LengthSpread:
    """The (ISL, OSL) pairs of benchmark ``bench``'s dataset as a
    :class:`~jalapeno.specs.workload.LengthSpread` (DeepSeek-R1's outputs capped at
    :data:`DSR1_MAX_OUTPUT`).

    >>> s = benchmark_spread("deepseek-r1")
    >>> round(s.mean_isl, 2), round(s.mean_osl, 1), round(s.decode_ctx)
    (803.79, 3886.2, 4980)

    Raises:
        SpecError: missing file, or a benchmark with no lengths in it.
    """
    table = _length_table(str(path or DEFAULT_LENGTHS))
    if bench not in table:
        raise SpecError("benchmark", f"no dataset lengths for {bench!r}", f"use one of {', '.join(table)}")
    isl, osl = table[bench]
    if bench == "deepseek-r1":
        osl = np.minimum(osl, DSR1_MAX_OUTPUT)
    return LengthSpread(f"mlperf:{bench}", isl, osl, MLPERF_LENGTHS[bench].source if bench in MLPERF_LENGTHS else "")


_TABLES: dict[str, dict] = {}


def _length_table(path: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    if path not in _TABLES:
        import gzip

        p = Path(path)
        if not p.is_file():
            raise SpecError(str(p), "file not found", "pass the MLPerf dataset lengths (benchmark,isl,osl CSV, gzip)")
        with gzip.open(p, "rt", newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        cols: dict[str, list] = {}
        for r in rows:
            cols.setdefault(r["benchmark"], []).append((float(r["isl"]), float(r["osl"])))
        _TABLES[path] = {b: tuple(np.array(c) for c in zip(*v)) for b, v in cols.items()}
    return _TABLES[path]


def scenario_limits(bench: str, scenario: str) -> tuple[float, float] | None:
    """(p99 TTFT, p99 TPOT) limits in seconds of ``bench`` in ``scenario`` (``Server`` or
    ``Interactive``); None for Offline (no latency bound) or a benchmark without rules here."""
    r = MLPERF_RULES.get(bench)
    if r is None or scenario not in ("Server", "Interactive"):
        return None
    if scenario == "Server":
        return r.server_ttft_s, r.server_tpot_s
    return (r.interactive_ttft_s, r.interactive_tpot_s) if r.interactive_ttft_s else None


#: the MLPerf Inference scenarios a result's ``concurrency_or_batch`` column names
MLPERF_SCENARIOS = ("Offline", "Server", "Interactive")
