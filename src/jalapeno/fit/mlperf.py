"""MLPerf Inference results (``published_points.csv`` format) as measured points for ``validate``.

Each row of the file is one metric of one (system, benchmark, scenario) result
(``output_tok_s_system``, ``TTFT_mean``/``p99``, ``TPOT_mean``/``p99``); a result becomes one
:class:`~jalapeno.fit.validate.MeasuredPoint`. MLPerf counts output tokens only, and its
inputs come from datasets, not fixed lengths; the lengths assumed here (:data:`MLPERF_LENGTHS`)
are stated per benchmark with where they come from. Mapping (fit/validate.py's labels):

- **Offline** (no latency bound; all samples at once): ``frontier_peak`` — the predicted
  frontier's highest throughput per chip.
- **Server / Interactive** (Poisson arrivals, p99 TTFT and TPOT bounds): ``frontier@interactivity``
  — the predicted frontier's throughput per chip at the measured interactivity 1 / mean TPOT.

Measured throughput per chip = output tok/s / chips x (ISL + OSL) / OSL (the model's
``throughput_per_chip`` counts input and output tokens, InferenceX's convention), with the run's
own mean output tokens per sample where its log gives it (the row's notes) and the assumed mean
input length. Results whose model is not in the catalog (Llama-3.1-405B pruned/finetuned open-
division variants) or whose input lengths are not known well enough are skipped with the reason.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path

from jalapeno.errors import SpecError
from jalapeno.fit.validate import MeasuredPoint

#: The shipped MLPerf Inference v5.1 rows (package data, each with its source).
DEFAULT_MLPERF = Path(__file__).resolve().parents[1] / "data" / "validation" / "mlperf_points.csv"

MLPERF_HARDWARE = {"B200-SXM-180GB": "b200", "GB200 NVL72": "gb200-nvl72", "H200-SXM-141GB": "h200",
                   "MI300X 192GB": "mi300x", "MI325X 256GB": "mi325x", "MI355X 288GB": "mi355x"}


@dataclass(frozen=True)
class BenchmarkLengths:
    """Mean lengths assumed for one MLPerf benchmark (tokens) and their source."""

    model: str
    isl: int
    osl: int
    source: str


#: Per benchmark: the catalog model and the mean input / output lengths assumed.
MLPERF_LENGTHS = {
    "llama2-70b-99": BenchmarkLengths(
        "llama-2-70b", 300, 294,
        "MLPerf Inference rules (inference_rules.adoc, Llama2 row): OpenOrca, 24,576 samples, "
        "max_seq_len 1,024, reference output 294.45 tokens per sample; the mean input is an "
        "ASSUMPTION (300 tokens: prompts are capped at 1,024 and no published mean was found); the "
        "run's own mean output per sample (its log summary) replaces 294 where the row gives it"),
    "deepseek-r1": BenchmarkLengths(
        "deepseek-r1", 800, 3700,
        "MLCommons 'DeepSeek-R1 in MLPerf Inference v5.1' (2025-09): reasoning prompts (math, "
        "science, code), outputs up to 20K tokens; mean output ~3,700 from the runs' logs (the rows' "
        "notes, 3,676-3,744); the mean input is an ASSUMPTION (800 tokens; short prompts, and at "
        "OSL ~3,700 the input is ~18% of the tokens)"),
}
#: Benchmarks left out, with the reason.
MLPERF_SKIPPED = {
    "llama3.1-405b": "the mean input of its long-context dataset (LongBench, RULER, GovReport, up to "
                     "~20K tokens) is not sourced, and it dominates the work: not mapped",
    "llama3_1-405b_pruned": "open-division pruned model: not the catalog's Llama-3.1-405B",
    "llama3_1-405b_finetuned": "open-division fine-tuned variant (and the same unsourced input lengths)",
}
_PRECISION = {("llama-2-70b", "weights fp8"): "fp8", ("llama-2-70b", "weights fp4"): "nvfp4",
              ("llama-2-70b", "weights mxfp4"): "w4a4-mxfp4", ("deepseek-r1", "weights fp8"): "fp8",
              ("deepseek-r1", "weights fp4"): "fp4"}


def _result_key(rid: str) -> str:
    return re.sub(r"_(tput|TTFT_mean|TTFT_p99|TPOT_mean|TPOT_p99)$", "", rid)


def load_mlperf(path: str | Path | None = None) -> tuple[list[MeasuredPoint], list[tuple[str, str]]]:
    """MLPerf results of a ``published_points.csv``-format file as measured points, and the skipped
    results (id, reason).

    Raises:
        SpecError: missing file or a missing column.
    """
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
        res["metrics"][r["metric"]] = r["value"]
        if r["metric"] == "output_tok_s_system":
            res["row"], res["notes"] = r, r["notes"]
    points, skipped = [], []
    for key, res in results.items():
        r = res["row"]
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
            skipped.append((key, "precision, throughput or chip count missing"))
            continue
        m = re.search(r"mean output tok/sample ~(\d+)", res["notes"])
        osl = int(m.group(1)) if m else lengths.osl
        isl = lengths.isl
        scenario = r["concurrency_or_batch"].strip()
        tpot = _num(res["metrics"].get("TPOT_mean"))
        ttft = _num(res["metrics"].get("TTFT_mean"))
        meas = {"throughput_per_chip": out_tps / chips * (isl + osl) / osl,
                "interactivity": 1e3 / tpot if tpot else None, "tpot_s": tpot / 1e3 if tpot else None,
                "ttft_s": ttft / 1e3 if ttft else None}
        if scenario == "Offline":
            mapping = "frontier_peak"
        elif meas["interactivity"]:
            mapping = "frontier@interactivity"
        else:
            skipped.append((key, f"{scenario} result without a mean TPOT"))
            continue
        notes = [(f"MLPerf {scenario}; lengths ISL {isl} / OSL {osl} ({'run log' if m else 'assumed'} output); "
                  f"{lengths.source.split(';')[0]}")]
        points.append(MeasuredPoint("mlperf", key, system, lengths.model, prec, r.get("framework", ""), isl, osl,
                                    None, None, meas, mapping, True, notes))
    return points, skipped


def _num(s) -> float | None:
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None
