"""The results store: every run of ``explore`` (and of ``compare``/``frontier`` with ``--store``)
kept in one folder, as files a database reads.

Layout of a store folder (default ``jalapeno-results/``)::

    explore.db                    Optuna's RDB storage (SQLite) of every study: resumable
    runs/<run>/meta.json          kind, name, command settings, package / catalog / calibration versions
    runs/<run>/trials.parquet     explore: one row per finished trial (parameters, scores, case metrics,
                                  constraints' quantities, state, reason)
    runs/<run>/points.parquet     compare / frontier: one row per frontier point
    runs/<run>/extra.json         explore: parameter importances; compare: the full record

Parquet (pyarrow) for the tables and DuckDB for queries (``results list|show|export``): every
listing and table is a SQL query over these files, so another tool can read them as they are.
The catalog and calibration versions are SHA-256 digests of the shipped system and calibration
files, so a stored run says which data priced it.
"""

from __future__ import annotations

import hashlib
import json
import math
from importlib import resources
from pathlib import Path
from typing import Any

from jalapeno.errors import SpecError

DEFAULT_STORE = "jalapeno-results"


def _require(module: str):
    try:
        return __import__(module)
    except ImportError:
        raise SpecError("--store", f"needs the {module} package, which is not installed",
                        'install the extra: pip install -e ".[explore]"') from None


def data_versions() -> dict[str, str]:
    """Package version and SHA-256 digests (12 hex) of the shipped systems and calibration sets."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    try:
        out["package"] = version("jalapeno")
    except PackageNotFoundError:
        out["package"] = "unknown"
    root = resources.files("jalapeno") / "data"
    for name in ("systems", "calibration"):
        h = hashlib.sha256()
        for f in sorted((root / name).iterdir(), key=lambda p: p.name):
            if f.name.endswith(".toml"):
                h.update(f.name.encode())
                h.update(f.read_bytes())
        out[name] = h.hexdigest()[:12]
    return out


def store_dir(store: str | Path) -> Path:
    """The store folder (created), refusing a path that is a file.

    Raises:
        SpecError: ``store`` exists and is not a folder, or cannot be created.
    """
    p = Path(store)
    if p.exists() and not p.is_dir():
        raise SpecError("--store", f"{str(p)!r} is a file, not a folder", "give a folder path (it is created)")
    try:
        (p / "runs").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SpecError("--store", f"cannot create {str(p)!r}: {e.strerror}", "give a writable folder") from None
    return p


def storage_url(store: str | Path, storage: str | None = None) -> str:
    """Optuna's storage: ``storage`` (any SQLAlchemy URL) or SQLite in the store folder."""
    if storage:
        return storage
    return f"sqlite:///{(store_dir(store) / 'explore.db').resolve()}"


def new_run_dir(store: str | Path, kind: str, name: str, fixed: bool = False) -> Path:
    """``runs/<kind>-<name>`` (explore: fixed, resumed in place) or the next free ``-<n>`` suffix."""
    base = store_dir(store) / "runs"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in f"{kind}-{name}")
    if fixed:
        d = base / safe
        d.mkdir(exist_ok=True)
        return d
    n = 1
    while (base / f"{safe}-{n}").exists():
        n += 1
    d = base / f"{safe}-{n}"
    d.mkdir()
    return d


def _clean(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def write_json(path: Path, obj: Any) -> None:
    """Deterministic JSON (sorted keys, NaN/inf as null)."""
    path.write_text(json.dumps(_clean(obj), indent=1, sort_keys=True) + "\n")


def write_table(path: Path, rows: list[dict]) -> None:
    """Rows → Parquet (pandas + pyarrow), columns in the order first seen."""
    pd = _require("pandas")
    _require("pyarrow")
    pd.DataFrame(rows).to_parquet(path, index=False)


def trial_rows(study) -> list[dict]:
    """One flat row per finished trial of an Optuna study (from its stored user attributes)."""
    from jalapeno.analysis.search import ATTR_RESULT

    rows = []
    for t in study.get_trials(deepcopy=False):
        res = t.user_attrs.get(ATTR_RESULT)
        if res is None or t.state.name not in ("COMPLETE", "PRUNED"):
            continue
        row = {"trial": t.number, "state": t.state.name, "reason": res["reason"], "system": res["system"],
               "chip_power_w": res["chip_power_w"], "allin_kw": res["allin_kw"],
               "usd_per_chip_hour": res["usd_per_chip_hour"]}
        row.update({f"param:{k}": v for k, v in sorted(res["params"].items())})
        row.update({f"score:{k}": v for k, v in sorted(res["scores"].items())})
        for c in res["cases"]:
            row.update({f"case:{c['model']}/{c['workload']}:{k}": v for k, v in sorted(c["metrics"].items())})
        rows.append(row)
    return rows


def query(sql: str, **params) -> list[dict]:
    """Run a DuckDB query; rows as dicts."""
    duckdb = _require("duckdb")
    con = duckdb.connect()
    try:
        cur = con.execute(sql, params or None)
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]
    finally:
        con.close()


def list_runs(store: str | Path) -> list[dict]:
    """Every run in the store: run, kind, name, created, versions (a DuckDB query over meta.json).

    Raises:
        SpecError: no store at ``store``.
    """
    p = Path(store)
    if not (p / "runs").is_dir():
        raise SpecError("--store", f"no results store at {str(p)!r}", "run explore (or compare --store) first")
    if not any((p / "runs").glob("*/meta.json")):
        return []
    glob = str((p / "runs" / "*" / "meta.json").resolve())
    return query(f"SELECT run, kind, name, CAST(created AS VARCHAR) AS created, versions FROM read_json_auto('{glob}') ORDER BY run")


def run_dir(store: str | Path, run: str) -> Path:
    """The folder of ``run``.

    Raises:
        SpecError: unknown run (with the known ones).
    """
    d = Path(store) / "runs" / run
    if not (d / "meta.json").is_file():
        known = sorted(x.name for x in (Path(store) / "runs").glob("*") if (x / "meta.json").is_file()) \
            if (Path(store) / "runs").is_dir() else []
        raise SpecError("RUN", f"no run {run!r} in {str(store)!r}",
                        f"use one of: {', '.join(known)}" if known else "run explore (or compare --store) first")
    return d


def read_meta(d: Path) -> dict:
    return json.loads((d / "meta.json").read_text())


def read_table(d: Path) -> list[dict]:
    """The run's table (trials or points) through DuckDB, in stored order."""
    f = d / ("trials.parquet" if (d / "trials.parquet").is_file() else "points.parquet")
    return query(f"SELECT * FROM read_parquet('{f.resolve()}')")
