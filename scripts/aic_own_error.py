"""Measure aiconfigurator's OWN prediction error on the measured rows of its silicon_sample.csv.

What it does
------------
aiconfigurator-core ships ``aiconfigurator_core/systems/silicon_sample.csv``: measured end-to-end
TTFT / TPOT of real deployments (backend, system, model, quantization, ISL/OSL, concurrency,
parallelism; for disaggregated rows also the prefill/decode pools and their worker counts).
This script asks aiconfigurator's own estimator to predict a deterministic, stratified sample
of those rows and reports its error, so our validation report can quote it beside ours.

1. Reads the CSV from the installed ``aiconfigurator_core`` package (``importlib.resources``).
2. Keeps the models DeepSeek-R1/V3 (deepseek-ai/DeepSeek-R1, deepseek-ai/DeepSeek-V3,
   nvidia/DeepSeek-R1-NVFP4), openai/gpt-oss-120b, moonshotai/Kimi-K2.5,
   Qwen/Qwen3-235B-A22B-FP8 and meta-llama/Llama-3.1-70B on h100_sxm, h200_sxm, b200_sxm,
   b300_sxm, gb200 and gb300; every ``agg`` row, and ``disagg`` rows only where both
   ``prefill_num_workers`` and ``decode_num_workers`` are given.
3. Draws ``--n`` rows (default 150, seed ``--seed`` = 0), stratified by (system, model, mode):
   one row per group first, the rest allocated proportionally to group size (largest remainder).
4. Predicts every sampled row with aiconfigurator's single-point estimator
   ``aiconfigurator.cli.api.cli_estimate`` -- the programmatic form of
   ``aiconfigurator cli estimate`` -- in a worker process, with a per-row wall-clock limit
   (``--timeout``, default 20 s). A row whose estimate fails only because the SILICON perf database
   lacks a table is retried once with ``database_mode="HYBRID"`` (silicon where available, else
   aiconfigurator's SOL x empirical-factor fill-in); ``--no-hybrid-fallback`` turns that off.
   Rows that still raise or overrun are kept with the reason in ``status``.
5. Writes a CSV (``--out``, default /tmp/aic_own_error.csv) with the columns
   id, system, model_path, mode, measured_ttft_ms, measured_tpot_ms, aic_ttft_ms, aic_tpot_ms, status
   followed by diagnostic columns (backend, versions, ISL/OSL, concurrency, the batch sizes passed,
   per-row wall time, any aiconfigurator warning, the SILICON error of HYBRID rows), and prints the
   median absolute percentage error and median signed percentage error (bias,
   ``(aic - measured) / measured``) of TPOT and TTFT over the predicted rows, overall and per mode
   (and per system): first for rows predicted with aiconfigurator's default SILICON database
   (``status == "ok"``), then including the HYBRID fallback rows (``status == "ok_hybrid"``).
   Other ``status`` values: ``error: <exception>`` or ``timeout: ...``.

What is passed to aiconfigurator
--------------------------------
``cli_estimate(model_path, system, mode=..., backend_name=row.backend, backend_version=None,
database_mode="SILICON", isl, osl, gemm_quant_mode, moe_quant_mode, ...)`` with:

* agg rows: ``tp_size, pp_size, attention_dp_size`` (blank -> 1), ``moe_tp_size, moe_ep_size``
  (blank -> None, aiconfigurator infers the missing one) and ``batch_size`` = the row's
  concurrency (``_c<N>_`` in its id) divided by the number of replicas aiconfigurator multiplies
  by (``attention_dp_size * pp_size``: its agg model reports concurrency = batch * pp * dp),
  rounded and at least 1. Rows whose id carries no concurrency use the CSV ``batch_size``.
  ``ctx_tokens`` is left at the estimator's default (= ISL).
* disagg rows: ``prefill_*`` / ``decode_*`` tp, pp, attention dp, moe tp, moe ep, batch size and
  num_workers exactly as the CSV gives them (its batch sizes are per worker / per attention-DP
  rank, which is what aiconfigurator's static prefill/decode model takes).
* ``backend_version=None``: aiconfigurator 0.12 only serves its queryable database versions
  (``systems/query_versions.yaml``: trtllm 1.3.0rc20, sglang 0.5.14, vllm 0.24.0 by default),
  so the row's own framework version (often older) is not used; the version actually used is
  written in ``aic_db_version``.
* model path: aiconfigurator cannot fetch configs offline, so two CSV paths are mapped to bundled
  configs of the same architecture (``MODEL_ALIASES``): meta-llama/Llama-3.1-70B ->
  meta-llama/Meta-Llama-3.1-70B, nvidia/DeepSeek-R1-NVFP4 -> deepseek-ai/DeepSeek-R1 (its NVFP4
  comes from the row's explicit quant labels).
* quantization (``--quant``, written in ``aic_quant`` as gemm/moe, ``auto`` = inferred): the CSV
  labels are coarse precision names ("fp8" for DeepSeek's block-scaled FP8 checkpoint, "nvfp4"
  for gpt-oss's MXFP4 one, "int4_wo" GEMMs for Kimi-K2.5 whose INT4 is only in the experts), and
  aiconfigurator has no perf data for several of them taken literally. ``checkpoint`` (default)
  passes None for GEMM and MoE where the label only names the served checkpoint's own precision
  (DeepSeek-R1/V3 and Qwen3-235B-FP8 "fp8", every gpt-oss row, Kimi-K2.5 "int4_wo"), so
  aiconfigurator infers the modes from the checkpoint config, as it does for a user who gives none;
  other labels (NVFP4 DeepSeek / Kimi rows, Llama FP8 / NVFP4) are passed as written. ``csv``
  passes every label verbatim.
* MTP / speculative decoding is not modelled (``nextn=0``): the CSV has no column for it.
* kvcache / fmha / comm quantization are left to aiconfigurator's defaults for the model.

Requirements
------------
``aiconfigurator-core`` (installed in the project venv) holds the data and the engine; the
estimator entry point lives in the upper ``aiconfigurator`` distribution of the SAME version,
which is not a dependency of this project. Install it outside the venv and point ``--aic-path``
(or ``AIC_PATH``) at it, e.g.::

    pip install --target /tmp/aic_upper --no-deps aiconfigurator==0.12.0 jinja2 markupsafe \\
        'plotext<6' prettytable wcwidth tqdm munch matplotlib contourpy cycler fonttools \\
        kiwisolver pillow pyparsing

(``--no-deps`` keeps numpy/pandas/aiconfigurator-core from being installed a second time; the
listed packages are the ones its import chain needs beyond the venv.)

Run
---
::

    . .venv/bin/activate      # the project's venv (see README)
    python scripts/aic_own_error.py --aic-path /tmp/aic_upper --n 10          # quick check
    nohup python scripts/aic_own_error.py --aic-path /tmp/aic_upper > /tmp/aic_own_error.log 2>&1 &

Rows take about 3-6 s each on one core (the first row for a system/backend also loads its perf
database), so the default n=150 runs in roughly 12 minutes; ``--jobs N`` runs N worker processes.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.resources
import math
import multiprocessing as mp
import os
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

MODELS = (
    "deepseek-ai/DeepSeek-R1",
    "deepseek-ai/DeepSeek-V3",
    "nvidia/DeepSeek-R1-NVFP4",
    "openai/gpt-oss-120b",
    "moonshotai/Kimi-K2.5",
    "Qwen/Qwen3-235B-A22B-FP8",
    "meta-llama/Llama-3.1-70B",
)
SYSTEMS = ("h100_sxm", "h200_sxm", "b200_sxm", "b300_sxm", "gb200", "gb300")
# CSV model path -> the path of a config bundled in aiconfigurator_core/model_configs (same architecture;
# the quantization comes from the row's explicit labels).
MODEL_ALIASES = {
    "meta-llama/Llama-3.1-70B": "meta-llama/Meta-Llama-3.1-70B",
    "nvidia/DeepSeek-R1-NVFP4": "deepseek-ai/DeepSeek-R1",
}
OUT_COLUMNS = [
    "id",
    "system",
    "model_path",
    "mode",
    "measured_ttft_ms",
    "measured_tpot_ms",
    "aic_ttft_ms",
    "aic_tpot_ms",
    "status",
    # diagnostics
    "backend",
    "row_backend_version",
    "aic_model_path",
    "aic_quant",
    "aic_db_version",
    "isl",
    "osl",
    "concurrency",
    "aic_batch_size",
    "aic_prefill_batch_size",
    "aic_decode_batch_size",
    "wall_s",
    "aic_warning",
    "silicon_error",
]


# --------------------------------------------------------------------------- data


def load_silicon_sample() -> pd.DataFrame:
    """The silicon_sample.csv that ships inside the installed aiconfigurator_core package."""
    res = importlib.resources.files("aiconfigurator_core") / "systems" / "silicon_sample.csv"
    with importlib.resources.as_file(res) as path:
        return pd.read_csv(path)


def concurrency_from_id(row_id: str) -> int | None:
    m = re.search(r"_c(\d+)_", row_id)
    return int(m.group(1)) if m else None


def select_rows(df: pd.DataFrame) -> pd.DataFrame:
    keep = df["model_path"].isin(MODELS) & df["system"].isin(SYSTEMS)
    agg = df["mode"] == "agg"
    disagg = (df["mode"] == "disagg") & df["prefill_num_workers"].notna() & df["decode_num_workers"].notna()
    out = df[keep & (agg | disagg)].copy()
    out["concurrency"] = out["id"].map(concurrency_from_id)
    return out.reset_index(drop=True)


def stratified_sample(df: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """n rows: one per (system, model, mode) group, the rest proportional to group size."""
    keys = ["system", "model_path", "mode"]
    groups = {k: g.sort_values("id") for k, g in df.groupby(keys, sort=True)}
    sizes = {k: len(g) for k, g in groups.items()}
    n = min(n, len(df))
    if n < len(groups):
        # too few rows for every group: take n groups (deterministically shuffled), one row each
        rng = np.random.default_rng(seed)
        chosen = [list(groups)[i] for i in sorted(rng.permutation(len(groups))[:n])]
        alloc = {k: (1 if k in chosen else 0) for k in groups}
    else:
        alloc = {k: 1 for k in groups}
        rest = n - len(groups)
        spare = {k: sizes[k] - 1 for k in groups}
        total_spare = sum(spare.values())
        if rest > 0 and total_spare > 0:
            quota = {k: rest * spare[k] / total_spare for k in groups}
            for k in groups:
                alloc[k] += min(spare[k], math.floor(quota[k]))
            left = n - sum(alloc.values())
            order = sorted(groups, key=lambda k: (-(quota[k] - math.floor(quota[k])), k))
            while left > 0:
                progressed = False
                for k in order:
                    if left and alloc[k] < sizes[k]:
                        alloc[k] += 1
                        left -= 1
                        progressed = True
                if not progressed:
                    break
    parts = [g.sample(n=alloc[k], random_state=seed) for k, g in groups.items() if alloc[k] > 0]
    return pd.concat(parts).sort_values(keys + ["id"]).reset_index(drop=True)


# --------------------------------------------------------------------------- estimator call


def _int(v, default=None):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return default
    return round(float(v))


def _str(v):
    if v is None or (isinstance(v, float) and math.isnan(v)) or v == "":
        return None
    return str(v)


def aic_model_path(model_path: str) -> str:
    """The model path aiconfigurator has a bundled config for (it cannot download one offline)."""
    return MODEL_ALIASES.get(model_path, model_path)


def quant_modes(row: dict, policy: str) -> tuple[str | None, str | None, str]:
    """(gemm_quant_mode, moe_quant_mode, how) to pass for a row.

    ``csv``: the CSV labels verbatim. ``checkpoint``: where a label only names the precision family
    of the checkpoint that was served, pass None so aiconfigurator infers the checkpoint's own modes
    (DeepSeek-R1/V3 and Qwen3-235B-FP8 "fp8" -> block-scaled fp8; gpt-oss -> bf16 GEMM + MXFP4
    experts; Kimi-K2.5 "int4_wo" -> its INT4 experts); explicit other precisions (NVFP4 rows, Llama
    FP8/NVFP4) are passed as labelled.
    """
    gemm, moe = _str(row["gemm_quant_mode"]), _str(row["moe_quant_mode"])
    if policy == "csv":
        return gemm, moe, "csv"
    model = row["model_path"]
    if model == "openai/gpt-oss-120b":
        return None, None, "checkpoint"
    if model in ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-235B-A22B-FP8") and gemm in (
        "fp8",
        "fp8_block",
    ):
        return None, None, "checkpoint"
    if model == "moonshotai/Kimi-K2.5" and moe == "int4_wo":
        return None, None, "checkpoint"
    return gemm, moe, "csv"


def build_kwargs(row: dict, quant_policy: str = "checkpoint") -> dict:
    """Keyword arguments for aiconfigurator.cli.api.cli_estimate for one CSV row."""
    gemm, moe, _ = quant_modes(row, quant_policy)
    kw = {
        "model_path": aic_model_path(row["model_path"]),
        "system_name": row["system"],
        "mode": row["mode"],
        "backend_name": row["backend"],
        "backend_version": None,
        "database_mode": "SILICON",
        "isl": _int(row["isl"]),
        "osl": _int(row["osl"]),
        "gemm_quant_mode": gemm,
        "moe_quant_mode": moe,
    }
    if row["mode"] == "agg":
        tp, pp, dp = _int(row["tp_size"], 1), _int(row["pp_size"], 1), _int(row["attention_dp_size"], 1)
        conc = _int(row.get("concurrency"))
        batch = max(1, round(conc / (dp * pp))) if conc else _int(row["batch_size"])
        kw.update(
            tp_size=tp,
            pp_size=pp,
            attention_dp_size=dp,
            moe_tp_size=_int(row["moe_tp_size"]),
            moe_ep_size=_int(row["moe_ep_size"]),
            batch_size=batch,
        )
    else:
        for side in ("prefill", "decode"):
            kw.update(
                {
                    f"{side}_tp_size": _int(row[f"{side}_tp_size"], 1),
                    f"{side}_pp_size": _int(row[f"{side}_pp_size"], 1),
                    f"{side}_attention_dp_size": _int(row[f"{side}_attention_dp_size"], 1),
                    f"{side}_moe_tp_size": _int(row[f"{side}_moe_tp_size"]),
                    f"{side}_moe_ep_size": _int(row[f"{side}_moe_ep_size"]),
                    f"{side}_batch_size": _int(row[f"{side}_batch_size"], 1),
                    f"{side}_num_workers": _int(row[f"{side}_num_workers"]),
                }
            )
    return kw


def _worker(conn, aic_path: str | None) -> None:
    """Worker process: import aiconfigurator once, then answer (kwargs) -> result dicts."""
    import logging
    import warnings

    if aic_path:
        sys.path.insert(0, aic_path)
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    try:
        from aiconfigurator.cli.api import cli_estimate
    except Exception as exc:  # noqa: BLE001
        conn.send({"fatal": f"cannot import aiconfigurator.cli.api: {type(exc).__name__}: {exc}"})
        return
    conn.send({"ready": True})
    while True:
        kw = conn.recv()
        if kw is None:
            return
        t0 = time.perf_counter()
        try:
            r = cli_estimate(**kw)
            out = {
                "ttft": float(r.ttft),
                "tpot": float(r.tpot),
                "version": r.backend_version,
                "warning": getattr(r, "kv_cache_warning", None) or "",
            }
        except Exception as exc:  # noqa: BLE001
            msg = f"{type(exc).__name__}: {exc}".replace("\n", " ")
            out = {"error": msg[:300]}
        out["wall_s"] = time.perf_counter() - t0
        conn.send(out)


class Worker:
    """One estimator process with a per-call time limit (killed and restarted on overrun)."""

    def __init__(self, aic_path: str | None):
        self.aic_path = aic_path
        self._start()

    def _start(self) -> None:
        ctx = mp.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, self.aic_path), daemon=True)
        self.proc.start()
        child.close()
        if not self.conn.poll(120):
            raise RuntimeError("estimator worker did not start")
        msg = self.conn.recv()
        if "fatal" in msg:
            raise SystemExit(msg["fatal"] + "  (install the upper 'aiconfigurator' package; see --help)")
        self.busy_since: float | None = None

    def submit(self, kw: dict) -> None:
        self.conn.send(kw)
        self.busy_since = time.perf_counter()

    def poll(self, timeout_s: float) -> dict | None:
        """The result if ready; a timeout record (and a fresh process) if over the limit; else None."""
        if self.conn.poll(0):
            self.busy_since = None
            return self.conn.recv()
        if not self.proc.is_alive():
            self.busy_since = None
            self._start()
            return {"error": "worker process died"}
        elapsed = time.perf_counter() - self.busy_since
        if elapsed > timeout_s:
            self.proc.kill()
            self.proc.join()
            self._start()
            return {"timeout": True, "wall_s": elapsed}
        return None

    def close(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()


def _missing_data(res: dict) -> bool:
    return "error" in res and res["error"].startswith("PerfDataNotAvailableError")


def run_rows(
    rows: list[dict], jobs: int, timeout_s: float, aic_path: str | None, quant: str, hybrid_fallback: bool
) -> list[dict]:
    """Predict every row; returns per row {'silicon': result, 'hybrid': result or None}.

    A result is {'ttft', 'tpot', 'version', 'warning', 'wall_s'}, {'error', 'wall_s'} or
    {'timeout', 'wall_s'}. Each attempt has its own time limit.
    """
    workers = [Worker(aic_path) for _ in range(max(1, jobs))]
    pending: list[tuple[int, str]] = [(i, "SILICON") for i in range(len(rows))]
    results: list[dict] = [{"silicon": None, "hybrid": None} for _ in rows]
    assigned: dict[int, tuple[int, str]] = {}
    t_start = time.perf_counter()
    done = 0
    try:
        while pending or assigned:
            for wi, w in enumerate(workers):
                if wi not in assigned and pending:
                    i, db_mode = pending.pop(0)
                    kw = build_kwargs(rows[i], quant)
                    kw["database_mode"] = db_mode
                    w.submit(kw)
                    assigned[wi] = (i, db_mode)
            time.sleep(0.05)
            for wi, w in enumerate(workers):
                if wi not in assigned:
                    continue
                res = w.poll(timeout_s)
                if res is None:
                    continue
                i, db_mode = assigned.pop(wi)
                results[i]["silicon" if db_mode == "SILICON" else "hybrid"] = res
                state = "timeout" if res.get("timeout") else ("error" if "error" in res else "ok")
                retry = db_mode == "SILICON" and hybrid_fallback and _missing_data(res)
                if retry:
                    pending.insert(0, (i, "HYBRID"))
                else:
                    done += 1
                print(
                    f"[{done}/{len(rows)} {time.perf_counter() - t_start:6.0f}s] {db_mode:7s} {state:7s} "
                    f"{res.get('wall_s', 0):5.1f}s {rows[i]['id']}" + ("  -> retry HYBRID" if retry else ""),
                    flush=True,
                )
    finally:
        for w in workers:
            w.close()
    return results


# --------------------------------------------------------------------------- report


def _status(res: dict | None, timeout_s: float) -> str:
    if res is None:
        return "error: not run"
    if res.get("timeout"):
        return f"timeout: exceeded {timeout_s:g} s"
    if "error" in res:
        return "error: " + res["error"]
    if not (res["ttft"] > 0 and res["tpot"] > 0 and math.isfinite(res["ttft"]) and math.isfinite(res["tpot"])):
        return "error: non-positive prediction"
    return "ok"


def result_frame(rows: list[dict], results: list[dict], timeout_s: float, quant: str) -> pd.DataFrame:
    out = []
    for row, res in zip(rows, results):
        kw = build_kwargs(row, quant)
        status = _status(res["silicon"], timeout_s)
        used, silicon_error = res["silicon"], ""
        if status != "ok" and res["hybrid"] is not None:
            silicon_error = status
            status = _status(res["hybrid"], timeout_s)
            status = "ok_hybrid" if status == "ok" else status + " (HYBRID retry; SILICON: " + silicon_error + ")"
            used = res["hybrid"]
        good = status.startswith("ok")
        out.append(
            {
                "id": row["id"],
                "system": row["system"],
                "model_path": row["model_path"],
                "mode": row["mode"],
                "measured_ttft_ms": row["silicon_ttft_ms"],
                "measured_tpot_ms": row["silicon_tpot_ms"],
                "aic_ttft_ms": used.get("ttft") if good else np.nan,
                "aic_tpot_ms": used.get("tpot") if good else np.nan,
                "status": status,
                "backend": row["backend"],
                "row_backend_version": row["backend_version"],
                "aic_model_path": kw["model_path"],
                "aic_quant": f"{kw['gemm_quant_mode'] or 'auto'}/{kw['moe_quant_mode'] or 'auto'}",
                "aic_db_version": used.get("version", ""),
                "isl": row["isl"],
                "osl": row["osl"],
                "concurrency": row.get("concurrency"),
                "aic_batch_size": kw.get("batch_size"),
                "aic_prefill_batch_size": kw.get("prefill_batch_size"),
                "aic_decode_batch_size": kw.get("decode_batch_size"),
                "wall_s": round(sum(float(r.get("wall_s", 0.0)) for r in res.values() if r), 2),
                "aic_warning": used.get("warning", ""),
                "silicon_error": silicon_error,
            }
        )
    return pd.DataFrame(out, columns=OUT_COLUMNS)


def error_table(df: pd.DataFrame) -> pd.DataFrame:
    """Signed percentage errors (aic - measured) / measured of the predicted rows."""
    ok = df[df["status"].str.startswith("ok")].copy()
    for m in ("tpot", "ttft"):
        ok[f"{m}_err"] = (ok[f"aic_{m}_ms"] - ok[f"measured_{m}_ms"]) / ok[f"measured_{m}_ms"] * 100.0
    return ok


def summarize(df: pd.DataFrame) -> str:
    def line(label: str, part: pd.DataFrame) -> str:
        if part.empty:
            return f"  {label:<20s} n=  0"
        return (
            f"  {label:<20s} n={len(part):3d}  "
            f"TPOT median|err| {part['tpot_err'].abs().median():6.1f}%  bias {part['tpot_err'].median():+6.1f}%   "
            f"TTFT median|err| {part['ttft_err'].abs().median():6.1f}%  bias {part['ttft_err'].median():+6.1f}%"
        )

    def block(title: str, ok: pd.DataFrame) -> list[str]:
        out = [title, line("overall", ok)]
        out += [line(f"mode={k}", g) for k, g in ok.groupby("mode")]
        out += [line(f"system={k}", g) for k, g in ok.groupby("system")]
        return out

    err = error_table(df)
    n_fail = int(df["status"].str.startswith("error").sum())
    n_to = int(df["status"].str.startswith("timeout").sum())
    n_ok, n_hyb = int((df["status"] == "ok").sum()), int((df["status"] == "ok_hybrid").sum())
    header = (
        f"rows sampled {len(df)}: predicted with SILICON data {n_ok}, only with HYBRID fallback {n_hyb}, "
        f"failed {n_fail}, timed out {n_to}"
    )
    lines = [header]
    lines += block("aiconfigurator default (database_mode=SILICON), status == ok:", err[err["status"] == "ok"])
    if (err["status"] == "ok_hybrid").any():
        lines += block("SILICON + HYBRID fallback, status in (ok, ok_hybrid):", err)
    bad = df[~df["status"].str.startswith("ok")]
    if not bad.empty:
        lines.append("not predicted:")
        reasons = bad["status"].str.slice(0, 150).value_counts()
        lines += [f"  {c:3d} x {r}" for r, c in reasons.items()]
    hyb = df[df["status"] == "ok_hybrid"]
    if not hyb.empty:
        lines.append("SILICON gaps filled by HYBRID:")
        reasons = hyb["silicon_error"].str.slice(0, 150).value_counts()
        lines += [f"  {c:3d} x {r}" for r, c in reasons.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", type=int, default=150, help="rows to sample (default 150)")
    ap.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    ap.add_argument("--out", default="/tmp/aic_own_error.csv", help="output CSV (default /tmp/aic_own_error.csv)")
    ap.add_argument("--timeout", type=float, default=20.0, help="per-row wall-clock limit in s (default 20)")
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="estimator worker processes (default 1; more only pays with idle cores, and "
        "CPU contention inflates the per-row times the --timeout limit is checked against)",
    )
    ap.add_argument(
        "--no-hybrid-fallback",
        dest="hybrid_fallback",
        action="store_false",
        help="do not retry rows whose SILICON estimate lacks perf data with database_mode=HYBRID",
    )
    ap.add_argument(
        "--quant",
        choices=("checkpoint", "csv"),
        default="checkpoint",
        help="quantization passed: 'checkpoint' (default) lets aiconfigurator infer the served "
        "checkpoint's modes where the CSV label only names its precision family; 'csv' passes "
        "the CSV labels verbatim",
    )
    ap.add_argument(
        "--aic-path",
        default=os.environ.get("AIC_PATH"),
        help="directory holding the upper 'aiconfigurator' package, put first on sys.path "
        "(default: $AIC_PATH, else the normal import path)",
    )
    args = ap.parse_args(argv)

    core_version = importlib.metadata.version("aiconfigurator-core")
    sample_all = select_rows(load_silicon_sample())
    sample = stratified_sample(sample_all, args.n, args.seed)
    print(
        f"aiconfigurator-core {core_version}; eligible rows {len(sample_all)} "
        f"(agg {int((sample_all['mode'] == 'agg').sum())}, disagg {int((sample_all['mode'] == 'disagg').sum())}); "
        f"sampled {len(sample)} in {sample.groupby(['system', 'model_path', 'mode']).ngroups} groups",
        flush=True,
    )

    rows = sample.to_dict("records")
    t0 = time.perf_counter()
    results = run_rows(rows, args.jobs, args.timeout, args.aic_path, args.quant, args.hybrid_fallback)
    wall = time.perf_counter() - t0

    df = result_frame(rows, results, args.timeout, args.quant)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out, index=False)
    print(
        f"\nwrote {args.out}; {len(df)} rows in {wall:.0f} s wall with {args.jobs} job(s), "
        f"median {df['wall_s'].median():.1f} s per row"
    )
    print(summarize(df))


if __name__ == "__main__":
    main()
