"""The cells of an InferenceX points CSV row (fit/validate.py reads the file): which values each holds.

A user's ``validate --points`` file is hostile input: a cell the loader cannot read must skip its row
with the reason (naming the column, the value and what it must hold), never be read as something else.
Before this check, ``precision = BF16`` was priced as FP8, ``spec = MTP`` as no MTP and
``disagg = yes`` as "either mode" and ``date = last spring`` as "not stated", silently; an ``isl`` or ``conc`` of ``1e12`` exhausted memory.
"""

from __future__ import annotations

import csv
import datetime
import math
import re

from pathlib import Path

from jalapeno.errors import SpecError, choice_hint
from jalapeno.specs.files import csv_rows, read_user_text
from jalapeno.specs.plausibility import MAX_CHIPS
from jalapeno.specs.workload import MAX_CONCURRENCY

#: InferenceX hardware name → catalog system
HARDWARE = {
    "GB200 NVL72": "gb200-nvl72",
    "GB300 NVL72": "gb300-nvl72",
    "B200": "b200",
    "B300": "b300",
    "H200": "h200",
    "H100": "h100",
    "MI300X": "mi300x",
    "MI325X": "mi325x",
    "MI355X": "mi355x",
}
#: InferenceX model name → catalog model (the seed models InferenceX benchmarks)
IX_MODELS = {"DeepSeek-R1-0528": "deepseek-r1", "gpt-oss-120b": "gpt-oss-120b"}
#: The shipped InferenceX points (fit/data_quality.DEFAULT_POINTS, named here without that module's pandas import)
SHIPPED_POINTS = Path(__file__).resolve().parent.parent / "data" / "validation" / "inferencex_points.csv"


def has_rows(path: Path, model: str, isl: int, osl: int) -> bool:
    """Whether the points CSV at ``path`` (the shipped one: its cells are checked by validate's tests) has a row of
    catalog ``model`` (:data:`IX_MODELS`) at ``isl``/``osl`` — a plain read, none of fit/ix_points.load_inferencex's
    checks, run matching or deployments, so that ``report`` on a model or workload InferenceX never measured (Kimi
    K2.5, 32k1k) skips that load and its imports (~1 s of a 5 s page, ux55)."""
    names = {ix for ix, m in IX_MODELS.items() if m == model}
    with open(path, newline="", encoding="utf-8") as f:
        return any(
            r.get("model", "").strip() in names
            and positive_num(r.get("isl", "")) == isl
            and positive_num(r.get("osl", "")) == osl
            for r in csv.DictReader(f)
        )


#: the columns every InferenceX points CSV must have (the shipped inferencex_points.csv has more)
POINTS_COLUMNS = ("hardware", "model", "precision", "isl", "osl", "conc", "topology", "tput_per_gpu", "tok_s_user")


def points_rows(p: Path, option: str = "--points") -> list[dict[str, str]]:
    """The rows of an InferenceX points CSV, the file's shape checked; ``option`` names the file's
    command-line option in the messages.

    Raises:
        SpecError: missing or unreadable file, a file that is not CSV (JSON content, or a .json,
            .toml, .yaml or .parquet name), no rows, a missing column or one the shipped file does not have
            (each fix lists the columns); a row that repeats an earlier one cell for cell.
    """
    shape = (
        f"a CSV file with a header row holding the columns {', '.join(POINTS_COLUMNS)} (as the shipped "
        "src/jalapeno/data/validation/inferencex_points.csv)"
    )
    text = read_user_text(p, "an InferenceX points CSV", "pass an InferenceX points CSV")
    head = text.lstrip()[:1]
    if head in ("{", "[") or p.suffix.lower() in (".json", ".jsonl", ".toml", ".yaml", ".yml", ".parquet"):
        named = p.suffix.lower() in (".json", ".jsonl", ".toml", ".yaml", ".yml", ".parquet")
        kind = p.suffix.lstrip(".").upper() if named else "JSON"  # a .toml's '[table]' is not JSON (break54)
        raise SpecError(
            f"{option} {p.name}",
            f"is {kind}, not CSV: measured InferenceX points are read from CSV only",
            f"pass {shape}",
        )
    rows = csv_rows(text, p.name)
    if not rows:
        raise SpecError(f"{option} {p.name}", "no data rows", f"pass {shape}, and at least one row")
    missing = [c for c in POINTS_COLUMNS if c not in rows[0]]
    if missing:
        raise SpecError(f"{option} {p.name}: columns", f"missing {', '.join(missing)}", f"pass {shape}")
    _refuse_unknown_columns(rows, f"{option} {p.name}")
    _refuse_repeated_rows(rows, f"{option} {p.name}")
    return rows


#: The shipped points file, whose header lists every column a points CSV may hold
SHIPPED_POINTS = Path(__file__).parents[1] / "data" / "validation" / "inferencex_points.csv"


def shipped_columns() -> tuple[str, ...]:
    """The columns of the shipped InferenceX points CSV (its header, in order): every column the loader or the
    data-quality rule reads, and the free-text ``notes`` and ``source``."""
    with SHIPPED_POINTS.open(newline="") as fh:
        return tuple(c.strip() for c in next(csv.reader(fh)))


def _refuse_unknown_columns(rows: list[dict[str, str]], where: str) -> None:
    """Refuse a column the shipped file does not have: its cells were dropped unread, so a misspelt optional column
    (``ttft_msec``, ``point type``, ``framwork``) left its metric unjudged or its row read another way, with no word
    (break45). An unnamed column (a trailing comma in the header) passes while its cells are blank.

    Raises:
        SpecError: naming the column (and the near miss, if one) and the columns the file may hold.
    """
    known = shipped_columns()
    for c in rows[0]:
        if c in known or (not c and not any((r.get(c) or "").strip() for r in rows)):
            continue
        name = repr(c) if c else "an unnamed column (a header cell left empty)"
        raise SpecError(
            f"{where}: columns",
            f"{name} is not a column of the points format{choice_hint(c, known)}: its cells would be dropped unread",
            f"rename it to one of {', '.join(known)} (the shipped inferencex_points.csv), or drop it "
            "(free text goes in notes)",
        )


def _refuse_repeated_rows(rows: list[dict[str, str]], where: str) -> None:
    """Refuse a row equal, cell for cell (spaces around a cell ignored), to an earlier one: a line pasted twice
    was predicted and counted twice, weighting its error double in every median, with no word (break44). Rows of
    one deployment measured again (another date, run or source cell) differ and are kept.

    Raises:
        SpecError: naming both rows as ``NAME:LINE`` (the header is line 1, as validate's point ids).
    """
    seen: dict[tuple, int] = {}
    for line, r in enumerate(rows, start=2):
        cells = tuple((c, str(v or "").strip()) for c, v in r.items())
        if cells in seen:
            raise SpecError(
                f"{where}: line {line}",
                f"repeats line {seen[cells]} cell for cell (the point would be predicted and counted twice)",
                "drop one of the two lines",
            )
        seen[cells] = line


#: Cells that, when given, must hold a positive finite number (conc: a closed-loop concurrency in [1, 1e6];
#: num_gpus: a whole GPU count). num_gpus and output_tput_per_gpu are read by the data-quality rule
#: (fit/data_quality.py); before they were checked here a zero or negative GPU count left the row
#: unchecked by that rule and counted as clean, silently.
CHECKED_CELLS = ("conc", "num_gpus", "tput_per_gpu", "output_tput_per_gpu", "tok_s_user", "tpot_ms", "ttft_ms")

#: The precision cells the loader reads (first word, a trailing ``?`` = "not stated"; fit/searched.ix_precision)
PRECISIONS = ("FP4", "FP8")

#: ``disagg`` cell: ``1`` disaggregated, ``0`` aggregated, blank not stated
DISAGG = ("", "0", "1")

#: ``point_type`` cell, as the shipped file writes it (blank: not stated). Only ``max_throughput_per_gpu`` (a
#: best-configuration row) changes how the row is read (fit/validate.py); a misspelt one was read as a frontier
#: point, silently.
POINT_TYPES = ("", "frontier", "max_throughput_per_gpu", "sweep_point", "throughput_only", "experimental_sweep")

#: ``ttft_stat`` cell, by its first word (the shipped file writes ``mean``, ``median``, ``median (dashboard)``,
#: ``unspecified (likely mean)``; blank: not stated). A row whose cell starts with ``median`` is compared with the
#: predicted p50 TTFT, any other with the mean (fit/validate.py): ``Median`` or ``p50`` was read as a mean, silently.
TTFT_STATS = ("mean", "median", "unspecified")
# ``tpot_stat`` takes the same words; every row's TPOT is compared with the predicted mean (a decode step's time
# varies little across a run), so the cell is checked, not read: a ``p99`` TPOT is no mean

#: ``date`` cell: blank, ``YYYY-MM-DD`` or ``<=YYYY-MM-DD`` (the run's date, or a bound on it), then any note
DATE_CELL = re.compile(r"\s*(<=)?\s*(\d{4}-\d{2}-\d{2})(?!\d)")


def positive_num(s: str) -> float | None:
    """A positive finite number, else None (missing, garbage, zero or negative measurements)."""
    try:
        v = float(s)
    except (TypeError, ValueError, OverflowError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def bad_cell(r: dict) -> str | None:
    """Why a row's given measurement, concurrency, precision, ``spec``, ``disagg``, ``point_type``, ``ttft_stat``,
    ``tpot_stat`` or ``date`` cell is unusable (None when every given cell is).

    A blank measurement is "not measured"; a cell that is present but zero, negative, not finite or
    not a number is a broken row, skipped with this reason rather than read as missing.

    >>> bad_cell({"precision": "BF16"})
    "precision 'BF16' is not FP4 or FP8 (the formats the InferenceX rows of the catalog's models use)"
    >>> bad_cell({"precision": "FP4 (NVFP4)", "spec": "unspecified (may be MTP)", "disagg": "1"}) is None
    True
    """
    for key in CHECKED_CELLS:
        raw = (r.get(key) or "").strip()
        if not raw:
            continue
        v = positive_num(raw)
        if key == "conc" and v is not None and 1 <= v <= MAX_CONCURRENCY and v != int(v):  # 4.5 was priced
            return f"conc {raw!r} is not a whole number of requests in flight (a closed loop holds whole requests)"
        if v is None or (key == "conc" and not 1 <= v <= MAX_CONCURRENCY) or (key == "num_gpus" and v != int(v)):
            need = (
                f"a closed-loop concurrency in [1, {MAX_CONCURRENCY:,}] (specs/workload.py)"
                if key == "conc"
                else "a whole number of GPUs >= 1"
                if key == "num_gpus"
                else "a positive finite number"
            )
            return f"{key} {raw!r} is not {need}"
        if key == "num_gpus" and v > MAX_CHIPS:  # 1e20 GPUs was priced, then flagged at a 1.2e19x identity residual
            return f"num_gpus {raw!r} is above the {MAX_CHIPS:,}-GPU plausibility bound (specs/plausibility.py)"
    tput, out = (positive_num((r.get(k) or "").strip()) for k in ("tput_per_gpu", "output_tput_per_gpu"))
    if tput and out and out > tput:  # 1e9 beside an in+out 98.83 was taken, silently
        return (
            f"output_tput_per_gpu {r['output_tput_per_gpu'].strip()!r} exceeds tput_per_gpu "
            f"{r['tput_per_gpu'].strip()!r}: the output tokens are part of the input + output throughput"
        )
    prec = (r.get("precision") or "").strip()
    if (prec.rstrip("?").split() or [""])[0].upper() not in PRECISIONS:
        return f"precision {prec!r} is not FP4 or FP8 (the formats the InferenceX rows of the catalog's models use)"
    spec = (r.get("spec") or "").strip()
    if spec not in ("", "mtp", "none") and not spec.startswith("unspecified"):
        return f"spec {spec!r} is not mtp, none, unspecified or blank"
    disagg = (r.get("disagg") or "").strip()
    if disagg not in DISAGG:
        return f"disagg {disagg!r} is not 1 (disaggregated), 0 (aggregated) or blank"
    kind = r.get("point_type") or ""
    if kind not in POINT_TYPES:  # exact: fit/validate.py compares the cell as written
        return (
            f"point_type {kind!r} is not one of {', '.join(POINT_TYPES[1:])} or blank"
            f"{choice_hint(kind, POINT_TYPES[1:])}"
        )
    stat = (r.get("ttft_stat") or "").strip()
    word = re.split(r"[\s(]", stat, maxsplit=1)[0]
    if stat and word not in TTFT_STATS:
        return (
            f"ttft_stat {stat!r} is not mean, median or unspecified (optionally followed by a note) or blank: "
            f"it says whether the predicted mean or p50 TTFT is compared{choice_hint(word, TTFT_STATS)}"
        )
    stat = (r.get("tpot_stat") or "").strip()  # 'p99' was compared with the predicted mean TPOT, silently
    word = re.split(r"[\s(]", stat, maxsplit=1)[0]
    if stat and word not in TTFT_STATS:
        return (
            f"tpot_stat {stat!r} is not mean, median or unspecified (optionally followed by a note) or blank: "
            f"the predicted TPOT compared with it is a mean{choice_hint(word, TTFT_STATS)}"
        )
    date = (r.get("date") or "").strip()
    m = DATE_CELL.match(date)
    if date and not (m and _iso(m.group(2))):
        return f"date {date!r} is not YYYY-MM-DD, <=YYYY-MM-DD or blank (it selects the benchmark's search space)"
    return None


def _iso(text: str) -> bool:
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def context_overrun(model: str, isl: int, osl: int) -> str | None:
    """Why ``isl + osl`` cannot run on catalog ``model`` (longer than its ``max_position_embeddings``), else None.

    >>> context_overrun("deepseek-r1", 10**12, 1024)
    "isl + osl = 1000000001024 tokens exceed deepseek-r1's context of 163840 tokens (max_position_embeddings)"
    """
    from jalapeno.specs.catalog import load_model

    ctx = load_model(model).max_context
    if ctx and isl + osl > ctx:
        return f"isl + osl = {isl + osl} tokens exceed {model}'s context of {ctx} tokens (max_position_embeddings)"
    return None


#: The engine's own release images, by the InferenceX ``framework`` cell: an image of one of these
#: repositories runs the engine release its tag names (``lmsysorg/sglang:v0.5.12-cu130`` is SGLang 0.5.12;
#: the ROCm tags ``v0.5.19-rocm700-mi30x`` too). A runtime image of another program (Dynamo's
#: ``ai-dynamo/tensorrtllm-runtime:0.8.1.post3``) names that program's release, not the engine's: not read.
ENGINE_IMAGES = {
    "sglang": ("lmsysorg/sglang",),
    "vllm": ("vllm/vllm-openai",),
    "trt": ("nvcr.io/nvidia/tensorrt-llm/release",),
}
#: The engine's name as the sources write it in a row's notes ("SGLang v0.5.7"), by framework cell
ENGINE_NAMES = {"sglang": "SGLang", "vllm": "vLLM", "trt": "TensorRT-LLM"}
_RELEASE = r"v?(\d+(?:\.\d+)+(?:(?:a|b|rc)\d+)?(?:\.post\d+)?)"


def stated_release(framework: str, notes: str) -> str:
    """The engine release a row's ``notes`` cell states for its ``framework`` cell, "" when it states none.

    Read from an image of the engine's own repository (:data:`ENGINE_IMAGES`) or from the engine's
    name followed by a release (:data:`ENGINE_NAMES`); validation then prices the row with its stack
    at that release (fit/validate.point_release) rather than at the release of the recipe that
    describes the configuration (two sweeps of one configuration ran different releases: the H200
    SGLang DeepSeek-R1 FP8 rows of 2026-03-05 ran 0.5.7, those of 2026-05-17 ran 0.5.12).

    >>> stated_release("sglang", "image lmsysorg/sglang:v0.5.12-cu130;")
    '0.5.12'
    >>> stated_release("sglang", "SGLang v0.5.7; e2el is mean;")
    '0.5.7'
    >>> stated_release("dynamo-trt", "image nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post3")
    ''
    """
    fw = (framework or "").strip()
    text = notes or ""
    for repo in ENGINE_IMAGES.get(fw, ()):
        m = re.search(re.escape(repo) + ":" + _RELEASE + r"(?![\w.])", text)
        if m:
            return m.group(1)
    name = ENGINE_NAMES.get(fw)
    m = re.search(re.escape(name) + r"\s+" + _RELEASE + r"(?![\w.])", text) if name else None
    return m.group(1) if m else ""
