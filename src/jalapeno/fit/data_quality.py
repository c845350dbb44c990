"""Data quality of measured serving points: two stated rules, applied to every row of a points file.

A point that breaks a rule is not dropped: ``jalapeno validate`` reports it in a flagged group with
the reason, and states the headline figures with and without it (fit/validation_run.py). The model
is never consulted: a rule reads only the row's own cells, its sweep's and its source's word.

**Rule 1 — the closed-loop identity (Little's law).** A closed loop with C requests always in
flight completes requests at C / E2E per second, each carrying ISL + OSL tokens, so

    tput_per_gpu · GPUs = C · (ISL + OSL) / E2E,        E2E = TTFT + (OSL_mean − 1) · TPOT,

with OSL_mean the mean output length (InferenceX draws lengths uniformly in [0.8·L, L]:
``--random-range-ratio 0.8``, data/validation/README.md; mean (1 + 0.8) / 2 · L; the ratio
(ISL + OSL) / OSL is unchanged by it). The file's ``check_ratio`` column is the TTFT-free form

    check_ratio = tput_per_gpu · GPUs / (C · intvty · (ISL + OSL) / OSL)  ≈ (OSL_mean − 1) · TPOT / E2E ≤ 1

(intvty = 1 / TPOT; below 1 by the share of the request's time spent before its first token).
Where a row gives it, ``output_tput_per_gpu`` stands in for the throughput (× (ISL + OSL) / OSL).
- With TTFT measured, the expected ratio is known and the residual check_ratio / expected must lie in
  :data:`RESIDUAL_BAND`: on the 29 shipped rows that carry every cell it is 0.972-0.997 (the
  benchmark's ramp-up and drain: its 10·C requests start together and the last ones finish alone).
- Without TTFT the ratio implies one, TTFT = (1 / check_ratio − 1) · (OSL_mean − 1) · TPOT. It must be
  non-negative (check_ratio ≤ :data:`RATIO_MAX`), and it must not fall as the load rises within one
  sweep (rows of one source, system, framework, precision, MTP use, mode and ISL/OSL, ordered by
  concurrency): TTFT is the front end, the prefill and the prefill queue, and the queue only grows
  with load. A sweep's frontier may change deployment between points, so a row is flagged only when
  its TTFT (measured, else implied) exceeds :data:`SWEEP_TTFT_FACTOR` × that of the next-higher
  concurrency, each taken at its upper noise bound (+ :data:`IDENTITY_NOISE` × E2E: the residual
  spread above).
Rows without throughput, concurrency, GPU count or TPOT/interactivity are not checked (reported as
such in docs/validation.md, and counted by ``jalapeno validate``: its ``unchecked`` ids).

**Rule 2 — the source's own flag.** A row whose publication itself calls the value anomalous or
suspect (the person who ran it) is flagged with the source's words: data/validation/source_flags.toml
lists each such flag with the cells it names and where the source says so.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from jalapeno.fit.ix_cells import positive_num, shipped_columns
from jalapeno.specs.files import csv_rows, read_user_text
from jalapeno.specs.workload import INFERENCEX_RANGE_RATIO

#: Mean length as a fraction of the nominal one under InferenceX's ``--random-range-ratio``
#: (specs/workload.INFERENCEX_RANGE_RATIO: lengths uniform in [0.8·L, L]): (1 + 0.8) / 2.
MEAN_LENGTH_FRACTION = (1 + INFERENCEX_RANGE_RATIO) / 2
#: Allowed residual (check_ratio / expected ratio) where TTFT is measured: the shipped rows with
#: every cell give 0.972-0.997 (module docstring); the band is 2.5x that spread each side.
RESIDUAL_BAND = (0.90, 1.05)
#: Highest TTFT-free ratio: above 1 a request would finish faster than its own decode allows
#: (negative TTFT); 5% for the rows' rounding and the drain.
RATIO_MAX = 1.05
#: A row's TTFT may exceed the next-higher concurrency's of its sweep by at most this factor (a
#: frontier's next point may run another deployment; the queue alone only grows with load).
SWEEP_TTFT_FACTOR = 2.0
#: Noise of an implied TTFT as a fraction of E2E: the identity's observed residual spread (3%).
IDENTITY_NOISE = 0.03
#: The sources' own flags (package data).
SOURCE_FLAGS = Path(__file__).resolve().parents[1] / "data" / "validation" / "source_flags.toml"
#: The shipped InferenceX points (package data; fit/validation_run reads it as its default).
DEFAULT_POINTS = SOURCE_FLAGS.parent / "inferencex_points.csv"
#: The cells that define one sweep (rule 1, sweep test).
SWEEP_KEY = ("source", "hardware", "framework", "precision", "spec", "disagg", "isl", "osl")


@dataclass(frozen=True, slots=True)
class RowCheck:
    """The identity on one row (NaN where the cells do not allow it)."""

    id: str
    check_ratio: float
    expected_ratio: float
    residual: float
    ttft_s: float
    ttft_measured: bool
    e2e_s: float


def _num(r: dict, key: str) -> float:
    v = positive_num((r.get(key) or "").strip())
    return float("nan") if v is None else v


def _times(x: float) -> str:
    """A ratio for the flag's words: two decimals, or three significant digits from 1e4 up (a CSV cell of 1e300
    tok/s printed a 300-digit residual, break49).

    >>> _times(0.9751), _times(9.87e297)
    ('0.98', '9.87e+297')
    """
    return f"{x:.2f}" if abs(x) < 1e4 else f"{x:.3g}"


def check_row(rid: str, r: dict) -> RowCheck:
    """The closed-loop identity on one CSV row (module docstring, rule 1).

    >>> c = check_row("x", {"isl": "1024", "osl": "1024", "conc": "64", "num_gpus": "8",
    ...                     "tput_per_gpu": "678.09", "tpot_ms": "21.73", "ttft_ms": "1170.32"})
    >>> round(c.check_ratio, 3), round(c.expected_ratio, 3), round(c.residual, 3)
    (0.921, 0.945, 0.975)
    """
    isl, osl, conc, gpus = (_num(r, k) for k in ("isl", "osl", "conc", "num_gpus"))
    tput = _num(r, "tput_per_gpu")
    if np.isnan(tput):
        tput = _num(r, "output_tput_per_gpu") * (isl + osl) / osl
    tpot = _num(r, "tpot_ms") / 1e3
    if np.isnan(tpot):
        tpot = 1 / _num(r, "tok_s_user")
    ttft = _num(r, "ttft_ms") / 1e3
    decode_s = (MEAN_LENGTH_FRACTION * osl - 1) * tpot
    ratio = tput * gpus / (conc * (isl + osl) / osl / tpot)
    measured = not np.isnan(ttft)
    expected = decode_s / (ttft + decode_s) if measured else float("nan")
    if not measured and ratio > 0:
        ttft = (1 / ratio - 1) * decode_s
    return RowCheck(
        rid, float(ratio), float(expected), float(ratio / expected), float(ttft), measured, float(ttft + decode_s)
    )


def load_source_flags(path: str | Path | None = None) -> list[dict]:
    """The sources' own flags: ``[{"match": {cell: value}, "reason", "source"}, ...]``.

    Raises:
        SpecError: the file is missing, not TOML, or an entry lacks ``match``, ``reason`` or ``source``.
    """
    columns = _points_columns()
    return read_flag_entries(
        Path(path) if path else SOURCE_FLAGS,
        "source-flag file",
        columns,
        "cell",
        f"use the points CSV's column names ({', '.join(sorted(columns))})",
        'match = { hardware = "B200", conc = 64 }',
        "64",
    )


def read_flag_entries(
    p: Path, label: str, allowed, noun: str, allowed_fix: str, example: str, number: str
) -> list[dict]:
    """The ``[[flag]]`` tables of a flag file ``p``, each checked: ``match`` (a non-empty table of
    ``noun`` → string or number, every key in ``allowed``), ``reason`` and ``source`` (non-empty
    strings). Shared by rule 2 here and aiconfigurator's rule C (fit/aic_quality.py): an empty match
    would flag every row and a misspelt key none, both silently.

    Raises:
        SpecError: naming the file ("``label`` not found", not TOML), the entry and the field.
    """
    from jalapeno.errors import SpecError

    try:
        raw = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise SpecError(str(p), f"{label} not found", f"restore data/validation/{p.name}") from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(str(p), f"not valid TOML: {e}", "fix the file's syntax") from None
    flags = raw.get("flag", [])
    if not isinstance(flags, list) or not all(isinstance(f, dict) for f in flags):
        raise SpecError(
            f"{p.name}: flag",
            "must be a list of [[flag]] tables",
            "write each flag as a [[flag]] table with match, reason and source",
        )
    kind = "column of the points CSV" if noun == "cell" else "measured-point field"
    for i, f in enumerate(flags):
        where = f"{p.name} flag {i + 1}"
        missing = {"match", "reason", "source"} - set(f)
        if missing:
            raise SpecError(
                where, f"missing {sorted(missing)}", f"give match = {{{noun} = value, ...}}, reason and source"
            )
        match = f["match"]
        if not isinstance(match, dict) or not match:
            raise SpecError(
                f"{where}: match",
                f"must be a non-empty table of {noun}s, got {match!r}",
                f"name the row(s) by their {noun}s, e.g. {example}",
            )
        unknown = sorted(set(match) - set(allowed))
        if unknown:
            raise SpecError(f"{where}: match", f"names no {kind}: {', '.join(unknown)}", allowed_fix)
        for k, v in match.items():
            if isinstance(v, bool) or not isinstance(v, (str, int, float)):
                raise SpecError(
                    f"{where}: match.{k}",
                    f"must be a string or a number, got {v!r}",
                    f'give the {noun}\'s value, e.g. {k} = "..." or {k} = {number}',
                )
        for k in ("reason", "source"):
            if not isinstance(f[k], str) or not f[k].strip():
                raise SpecError(
                    f"{where}: {k}",
                    f"must be a non-empty string, got {f[k]!r}",
                    "quote the source's words (reason) and where it says so (source)",
                )
    return flags


def _points_columns() -> set[str]:
    """Column names of the shipped points CSV (data/validation/inferencex_points.csv): the cells a
    source flag may name."""
    return set(shipped_columns())


def _matches(r: dict, match: dict) -> bool:
    for k, v in match.items():
        cell = (r.get(k) or "").strip()
        if isinstance(v, (int, float)):
            if positive_num(cell) != float(v):
                return False
        elif k == "source":
            if str(v) not in cell:
                return False
        elif cell != str(v):
            return False
    return True


def quality_table(path: str | Path, flags_path: str | Path | None = None) -> pd.DataFrame:
    """Every row of an InferenceX points CSV with the identity and the verdict.

    Returns one row per CSV row: ``id`` (``<file stem>:<line>``, as fit/ix_points.load_inferencex),
    ``hardware``, ``framework``, ``precision``, ``isl``, ``osl``, ``concurrency``, ``check_ratio``,
    ``expected_ratio``, ``residual``, ``ttft_s`` (measured, else implied), ``ttft_measured``,
    ``checked`` (the cells allow rule 1) and ``flag`` (the reason, "" when the row passes).

    Raises:
        SpecError: unreadable file or source-flag file.
    """
    p = Path(path)
    rows = csv_rows(read_user_text(p, "an InferenceX points CSV", "pass an InferenceX points CSV"), p.name)
    flags = load_source_flags(flags_path)
    out = []
    for k, r in enumerate(rows, start=2):
        c = check_row(f"{p.stem}:{k}", r)
        why = []
        if np.isfinite(c.residual) and not RESIDUAL_BAND[0] <= c.residual <= RESIDUAL_BAND[1]:
            why.append(
                f"closed-loop identity: throughput is {_times(c.residual)}x what its concurrency, TTFT and "
                f"TPOT allow (allowed {RESIDUAL_BAND[0]}-{RESIDUAL_BAND[1]})"
            )
        elif np.isfinite(c.check_ratio) and not c.ttft_measured and c.check_ratio > RATIO_MAX:
            why.append(
                f"closed-loop identity: check ratio {_times(c.check_ratio)} > {RATIO_MAX} (faster than its "
                "own decode allows: GPU count or value suspect)"
            )
        for f in flags:
            if _matches(r, f["match"]):
                why.append(f"source flag: {f['reason']} ({f['source']})")
        out.append(
            {
                "id": c.id,
                **{key: (r.get(key) or "").strip() for key in SWEEP_KEY},
                "concurrency": positive_num((r.get("conc") or "").strip()),
                "check_ratio": c.check_ratio,
                "expected_ratio": c.expected_ratio,
                "residual": c.residual,
                "ttft_s": c.ttft_s,
                "ttft_measured": c.ttft_measured,
                "e2e_s": c.e2e_s,
                "checked": bool(np.isfinite(c.check_ratio)),
                "flag": "; ".join(why),
            }
        )
    df = pd.DataFrame(out)
    return _sweep_rule(df)


def _sweep_rule(df: pd.DataFrame) -> pd.DataFrame:
    """Rule 1's sweep test: a TTFT that falls by more than :data:`SWEEP_TTFT_FACTOR` as the load rises."""
    ok = df[np.isfinite(df.ttft_s) & df.concurrency.notna()]
    for _, g in ok.groupby(list(SWEEP_KEY), sort=False):
        g = g.sort_values("concurrency")
        for (i, a), (_, b) in zip(g.iterrows(), list(g.iterrows())[1:]):
            if b.concurrency <= a.concurrency:
                continue
            hi = b.ttft_s + IDENTITY_NOISE * b.e2e_s
            if a.ttft_s - IDENTITY_NOISE * a.e2e_s > SWEEP_TTFT_FACTOR * hi:
                kind = "measured" if a.ttft_measured else "implied"
                why = (
                    f"closed-loop identity: {kind} TTFT {a.ttft_s:.2f} s at concurrency {a.concurrency:g} is "
                    f"{a.ttft_s / max(b.ttft_s, 1e-9):.0f}x the {b.ttft_s:.2f} s of the same sweep at concurrency "
                    f"{b.concurrency:g} (check ratio {a.check_ratio:.3f}; TTFT only grows with load: GPU "
                    "count or value suspect)"
                )
                df.loc[i, "flag"] = "; ".join(x for x in (df.loc[i, "flag"], why) if x)
    return df


def flagged_points(path: str | Path, flags_path: str | Path | None = None) -> dict[str, str]:
    """Point id → reason for every row of ``path`` that breaks a rule (module docstring)."""
    t = quality_table(path, flags_path)
    return dict(zip(t.id[t.flag != ""], t.flag[t.flag != ""]))
