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
import os
from importlib import resources
from pathlib import Path
from typing import Any

from jalapeno.errors import SpecError, check_output_file, require_extra

DEFAULT_STORE = "jalapeno-results"


def _require(module: str):
    return require_extra(module, "explore", "--store")


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


def check_store(store: str | Path) -> None:
    """Refuse a ``--store`` value that cannot be the store folder, before the run that fills it.

    ``--store -1`` and ``--store --json`` made folders named ``-1`` and ``--json``: a value taken
    by ``--store`` that starts with ``-`` is a mistyped option or number, refused with the way to
    name such a folder on purpose (``./-1``). An empty value stored nothing without a word.

    Raises:
        SpecError: ``store`` is empty, starts with ``-``, is an existing file or a symbolic link to nothing; pyarrow (the ``[explore]``
            extra, which writes the runs) is not installed.
    """
    s = str(store)
    if not s.strip():
        raise SpecError(
            "--store", "is empty", "give a folder path, e.g. --store jalapeno-results (or leave --store out)"
        )
    if s.startswith("-"):
        raise SpecError(
            "--store",
            f"{s!r} looks like an option or a number, not a folder (the word after --store is taken as its folder)",
            f"give a folder path, e.g. --store jalapeno-results (write ./{s} for a folder named so)",
        )
    if Path(s).exists() and not Path(s).is_dir():
        raise SpecError("--store", f"{s!r} is a file, not a folder", "give a folder path (it is created)")
    if Path(s).is_symlink() and not Path(s).exists():  # a dangling link: mkdir refused it only after the sweep
        raise SpecError(
            "--store",
            f"{s!r} is a symbolic link to {os.readlink(s)!r}, which does not exist",
            "create the folder it points to, or give another folder path",
        )
    _check_creatable(Path(s))
    _require("pyarrow")  # runs are Parquet: compare --store without it swept, then left an empty run folder


def _check_creatable(p: Path) -> None:
    """Refuse a store folder no folder can be made in, before the run: its nearest existing folder is a file
    (``--store notes.txt/runs``) or refuses a new folder (``/proc/st`` as root, a read-only disk). ``compare
    --store`` swept every system first and was refused after it (break46). A folder is made and removed to try.

    Raises:
        SpecError: ``--store``, naming the path and the reason.
    """
    import tempfile

    there = next((a for a in (p, *p.parents) if a.exists()), Path("."))
    if not there.is_dir():
        raise SpecError(
            "--store",
            f"cannot create {str(p)!r}: {str(there)!r} is a file, not a folder",
            "give a folder path (it is created)",
        )
    try:
        Path(tempfile.mkdtemp(dir=there, prefix=".jalapeno-probe-")).rmdir()
    except OSError as e:
        raise SpecError(
            "--store", f"cannot create {str(p)!r}: {e.strerror or type(e).__name__}", "give a writable folder"
        ) from None


def store_dir(store: str | Path) -> Path:
    """The store folder (created), refusing a path that is a file (:func:`check_store`).

    Raises:
        SpecError: ``store`` is refused by :func:`check_store`, or cannot be created.
    """
    check_store(store)
    p = Path(store)
    try:
        (p / "runs").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SpecError("--store", f"cannot create {str(p)!r}: {e.strerror}", "give a writable folder") from None
    return p


def refuse_output_in_store(path: str | Path, store: str | Path, option: str = "--out") -> None:
    """Refuse an output that would replace a file of the results store ``store``: its ``explore.db`` or a file under
    ``runs/`` (``results export RUN -o STORE/runs/OTHER/meta.json`` overwrote that run's meta.json with RUN's points,
    and OTHER left ``results list`` without a word; ``-o .../points.parquet`` replaced its points: break51).

    Raises:
        SpecError: naming the option, the path and the fix.
    """
    out, root = Path(path).resolve(), Path(store).resolve()
    if out == root / "explore.db" or root / "runs" in out.parents:
        raise SpecError(
            option,
            f"{str(path)!r} is inside the results store {str(store)!r} (its runs/ folder or "
            "explore.db), where writing can replace a stored run's file",
            "give the output a path outside the store's runs/ folder",
        )


def storage_url(store: str | Path, storage: str | None = None) -> str:
    """Optuna's storage: ``storage`` (any SQLAlchemy URL) or SQLite in the store folder."""
    if storage:
        return storage
    return f"sqlite:///{(store_dir(store) / 'explore.db').resolve()}"


def new_run_dir(store: str | Path, kind: str, name: str, fixed: bool = False) -> Path:
    """``runs/<kind>-<name>`` (explore: fixed, resumed in place) or the next free ``-<n>`` suffix, taken atomically
    (a run storing into the same store at the same moment takes the next one)."""
    base = store_dir(store) / "runs"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in f"{kind}-{name}")
    if fixed:
        d = base / safe
        d.mkdir(exist_ok=True)
        return d
    n = 1
    while True:  # mkdir is the test: two runs storing at once both saw '-1' free, and the second's mkdir raised
        d = base / f"{safe}-{n}"  # FileExistsError, a traceback after its whole sweep (break52)
        try:
            d.mkdir()
            return d
        except FileExistsError:
            n += 1


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
        row = {
            "trial": t.number,
            "state": t.state.name,
            "reason": res["reason"],
            "system": res["system"],
            "chip_power_w": res["chip_power_w"],
            "allin_kw": res["allin_kw"],
            "usd_per_chip_hour": res["usd_per_chip_hour"],
        }
        row.update({f"param:{k}": v for k, v in sorted(res["params"].items())})
        row.update({f"score:{k}": v for k, v in sorted(res["scores"].items())})
        for c in res["cases"]:
            row.update({f"case:{c['model']}/{c['workload']}:{k}": v for k, v in sorted(c["metrics"].items())})
        rows.append(row)
    return rows


def query(sql: str, **params) -> list[dict]:
    """Run a DuckDB query (paths passed as ``$name`` parameters, never pasted into the SQL); rows
    as dicts."""
    duckdb = _require("duckdb")
    con = duckdb.connect()
    try:
        cur = con.execute(sql, params or None)
        if cur.description is None:
            return []
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]
    finally:
        con.close()


def _readable_meta(f: Path) -> dict | None:
    try:
        d = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return d if isinstance(d, dict) and {"run", "kind", "name"} <= set(d) else None


def _no_store(p: Path) -> None:
    """Refuse a --store folder that holds no runs, naming where a relative one was looked for (the folder is
    read from the current directory: a run written elsewhere was reported as 'no run NAME')."""
    where = "" if p.is_absolute() else f" ({p.resolve()}: a relative --store is read from the current directory)"
    raise SpecError(
        "--store",
        f"no results store at {str(p)!r}{where}",
        "run explore (or compare --store) first, or give --store the folder a run wrote",
    )


def list_runs(store: str | Path) -> list[dict]:
    """Every run in the store: run, kind, name, created (DuckDB over each readable meta.json; an
    unreadable one is skipped with a note on stderr).

    Raises:
        SpecError: no store at ``store``.
    """
    p = Path(store)
    if not (p / "runs").is_dir():
        _no_store(p)
    import sys

    files, bad = [], []
    for d in sorted(x for x in (p / "runs").iterdir() if x.is_dir()):
        meta = d / "meta.json"
        if meta.is_file():
            (files if _readable_meta(meta) is not None else bad).append(meta)
    for f in bad:
        print(f"note: {f} is unreadable or not a run's meta file; skipped", file=sys.stderr)
    if not files:
        return []
    rows = []
    for f in files:  # one file per query: a list of files unions their schemas, which may differ
        r = query(
            "SELECT run, kind, name, CAST(created AS VARCHAR) AS created FROM read_json_auto($f)", f=str(f.resolve())
        )[0]
        r["run"] = f.parent.name  # the folder is the run's name (what results show takes)
        rows.append(r)
    return rows


def run_dir(store: str | Path, run: str) -> Path:
    """The folder of ``run``: its folder name (``explore-700w``), or the name ``results list`` shows beside it
    (``700w``, the explore file's ``name``) where exactly one run has it.

    Raises:
        SpecError: unknown run (with the known ones), or a name more than one run has (with their folders).
    """
    d = Path(store) / "runs" / run
    if not (Path(store) / "runs").is_dir():
        _no_store(Path(store))
    if "/" in run or "\\" in run or run in ("", ".", "..") or not (d / "meta.json").is_file():
        known = (
            sorted(x.name for x in (Path(store) / "runs").glob("*") if (x / "meta.json").is_file())
            if (Path(store) / "runs").is_dir()
            else []
        )
        by_name = [k for k in known if _meta_name(Path(store) / "runs" / k) == run]  # results list's name column
        if len(by_name) == 1:
            return Path(store) / "runs" / by_name[0]
        if by_name:  # compare --store twice: two runs of one name (results list shows both beside it)
            raise SpecError(
                "RUN",
                f"{run!r} names {len(by_name)} runs in {str(store)!r} ({', '.join(by_name)})",
                f"give one by its folder name (results list's run column): {' or '.join(by_name)}",
            )
        raise SpecError(
            "RUN",
            f"no run {run!r} in {str(store)!r}",
            f"use one of: {', '.join(known)}" if known else "run explore (or compare --store) first",
        )
    return d


def _meta_name(d: Path) -> str | None:
    """The ``name`` a run's meta.json gives it (None where it is unreadable: :func:`run_dir` names the folders)."""
    try:
        name = json.loads((d / "meta.json").read_text()).get("name")
    except (OSError, ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None


def _corrupt(d: Path, name: str, why: str) -> SpecError:
    return SpecError(
        f"RUN {d.name}", f"{name} is unreadable or corrupt ({why})", f"re-run it, or delete {d} and run again"
    )


def read_meta(d: Path) -> dict:
    """A run's meta.json, checked.

    Raises:
        SpecError: missing, unreadable or not a run's meta file.
    """
    meta = _readable_meta(d / "meta.json")
    if meta is None:
        raise _corrupt(d, "meta.json", "not a JSON object with run, kind and name")
    if meta["kind"] not in ("explore", "compare", "frontier"):
        raise _corrupt(d, "meta.json", f"unknown kind {meta['kind']!r}")
    return meta


def read_json(d: Path, name: str) -> dict:
    """A run's JSON side file (extra.json), checked.

    Raises:
        SpecError: missing or unreadable.
    """
    try:
        out = json.loads((d / name).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _corrupt(d, name, type(e).__name__) from None
    if not isinstance(out, dict):
        raise _corrupt(d, name, "not a JSON object")
    return out


def table_file(d: Path, meta: dict) -> Path:
    """The table file of a stored run in folder ``d``: ``trials.parquet`` for an explore run, else ``points.parquet``."""
    return d / ("trials.parquet" if meta["kind"] == "explore" else "points.parquet")


def read_table(d: Path, meta: dict | None = None, need: tuple[str, ...] = ()) -> list[dict]:
    """The run's table (trials or points) through DuckDB, in stored order; a frontier run's
    points with the unit-suffixed column names (analysis/records.FRAME_UNITS; older runs renamed
    on read).

    Raises:
        SpecError: the file is missing or corrupt, or lacks a column in ``need``.
    """
    meta = meta or read_meta(d)
    f = table_file(d, meta)
    duckdb = _require("duckdb")
    try:
        rows = query("SELECT * FROM read_parquet($f)", f=str(f.resolve()))
    except (duckdb.Error, OSError) as e:
        raise _corrupt(d, f.name, type(e).__name__) from None
    if meta["kind"] != "explore":  # a frontier run stored before its columns carried units
        from jalapeno.analysis.records import FRAME_UNITS

        for r in rows:
            for old, new in FRAME_UNITS.items():
                if old in r and new not in r:
                    r[new] = r.pop(old)
    missing = [c for c in need if rows and c not in rows[0]]
    if missing:
        raise _corrupt(d, f.name, f"no column {missing[0]!r} for a {meta['kind']} run")
    return rows


def export(d: Path, out: str) -> None:
    """Copy a run's table to ``out`` (.csv, .json, .parquet) with DuckDB.

    Raises:
        SpecError: an unknown suffix, an unwritable path, or a corrupt table.
    """
    meta = read_meta(d)
    f = table_file(d, meta)
    suffix = Path(out).suffix.lower()
    fmt = {".csv": "CSV, HEADER", ".json": "JSON, ARRAY true", ".parquet": "PARQUET"}.get(suffix)
    if fmt is None:
        raise SpecError("--out", f"unknown file type {suffix or '(none)'!r}", "end the path in .csv, .json or .parquet")
    target = Path(out)
    check_output_file(out, "--out")
    read_table(d, meta)  # a corrupt table is named as such, not as an output error
    duckdb = _require("duckdb")
    lit = str(target.resolve()).replace("'", "''")
    try:
        query(f"COPY (SELECT * FROM read_parquet($f)) TO '{lit}' (FORMAT {fmt})", f=str(f.resolve()))
    except (duckdb.Error, OSError) as e:
        raise SpecError("--out", f"cannot write {out!r} ({type(e).__name__})", "give a writable file path") from None
