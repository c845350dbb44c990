"""Kimi K2.5 against DeepSeek-R1 at the same decode layout and batch, and the GB200 rows' decode batch (issue 18).

docs/gap_aic_itl.md (Kimi section, round 24) asks whether Kimi K2.5's aiconfigurator TPOT excess is a Kimi
term or one that DeepSeek-R1 shares where it runs the same way. Every Kimi K2.5 row runs attention
tensor-parallel (attention DP 1); about a third of DeepSeek-R1's run attention data-parallel (DEP), where the model
is fast, so their per-system medians compare different layouts. This script prints, from the model as
`jalapeno validate` runs it (fit/validate: the row's deployment, stack and workload; serve/point.serve_at_concurrency),
with no model change and nothing fitted:

1. *Same layout, same batch.* Per (system, decode layout, decode-batch band, model, engine): the rows (aggregated and
   disaggregated, attention DP 1 only, MTP rows left out: a step emits more than one token), the median signed TPOT
   error (predicted / measured − 1) and the median excess, predicted − measured TPOT in ms; the decode batch is the
   model's (sequences per decode instance). Only cells where Kimi K2.5 has rows are printed.
2. *The GB200 disaggregated Kimi rows' decode batch.* The decoding requests per decode instance by Little's law on
   the measured TTFT and TPOT (fit/aic_bounds._decoding_batch, as rules D and E count them) against the model's,
   and the model's TPOT at each (the decode-only step at the Little's-law batch, serve/limits.decode_step_s): rows
   whose measured TTFT runs to seconds decode fewer requests than the concurrency over the instances.

Reads aiconfigurator-core's ``systems/silicon_sample.csv`` (pip install -e ".[calibrate]"); flagged rows
(fit/aic_quality.py) are left out as validate's figures leave them out.
Run: python scripts/aic_kimi_layout_match.py   (about 30 s)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: upper edges of the decode-batch bands of table 1 (sequences per decode instance), last band open
BANDS = (2.0, 6.0, 12.0, 24.0, 48.0, 100.0)
#: the models compared
MODELS = ("kimi-k2.5", "deepseek-r1")


def batch_band(batch: float) -> str:
    """Label of the decode-batch band ``batch`` falls in (:data:`BANDS`; a lower edge is exclusive).

    >>> [batch_band(b) for b in (1, 2, 2.5, 48, 101)]
    ['<=2', '<=2', '2-6', '24-48', '>100']
    """
    lo = 0.0
    for hi in BANDS:
        if batch <= hi:
            return f"<={hi:g}" if lo == 0 else f"{lo:g}-{hi:g}"
        lo = hi
    return f">{BANDS[-1]:g}"


def engine_family(framework: str) -> str:
    """The engine of a row's ``framework`` without its release ("vllm 0.17.0" → "vllm").

    >>> engine_family("trtllm 1.1.0-dev.2"), engine_family("sglang")
    ('trtllm', 'sglang')
    """
    return framework.split()[0] if framework else ""


def layout_label(layout, workers: int) -> str:
    """Decode layout as TP/MoE-TP/EP and instances, e.g. ``TP8 EP8 x4``."""
    moe = f"EP{layout.ep}" if layout.ep > 1 else f"MoE-TP{layout.moe_tp}"
    return f"TP{layout.tp} {moe}" + (f" x{workers}" if workers > 1 else "")


def _points():
    """The compared models' matched aiconfigurator points with a TPOT that validate's TPOT figures keep (not
    flagged by fit/aic_quality.py rule C, D or E, judged over every aiconfigurator point as validate does)."""
    from jalapeno.fit.aic_quality import aic_decode_flags, aic_source_flags
    from jalapeno.fit.validate import load_aiconfigurator

    every = load_aiconfigurator()[0]
    flagged = {**aic_decode_flags(every), **aic_source_flags(every)}
    return [
        p
        for p in every
        if p.model in MODELS
        and p.mapping == "matched"
        and p.deployment is not None
        and p.measured.get("tpot_s")
        and not flagged.get(p.id)
    ]


def _decode_tpot_s(model, pricer, dep, wl, batch: float) -> float:
    """The model's decode-only TPOT at ``batch`` sequences per decode instance, s."""
    from jalapeno.serve.limits import decode_step_s
    from jalapeno.serve.open_loop import decode_pool_step

    sc = decode_pool_step(model, pricer, dep, wl.decode_ctx, [batch])  # as served: pool backends, graph padding
    return float(decode_step_s(sc, pricer.efficiency, dep, np.array([batch]), dep.decode.layout)[0])


def rows() -> pd.DataFrame:
    """One row per matched attention-DP-1 point without MTP: model and Little's-law decode batch, TPOT measured and
    modelled (s), and for disaggregated points the model's decode-only TPOT at the Little's-law batch."""
    from jalapeno.fit.aic_bounds import _decoding_batch
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import point_stack, point_workload, with_stack_mtp
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model

    out = []
    for p in _points():
        st = point_stack(p)
        dep = with_stack_mtp(p.deployment, st, p.model)
        lay = dep.decode.layout
        if lay.dp != 1 or dep.mtp:
            continue
        model, wl = load_model(p.model), point_workload(p)
        pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
        run = serve_at_concurrency(model, pricer, dep, wl, [p.concurrency])
        workers = dep.decode.workers if dep.prefill is not None else 1
        little = _decoding_batch(p, workers) if p.measured.get("ttft_s") else float("nan")
        at_little = (
            _decode_tpot_s(model, pricer, dep, wl, little)
            if dep.prefill is not None and np.isfinite(little)
            else float("nan")
        )
        out.append(
            {
                "model": p.model,
                "system": p.system,
                "mode": p.mode,
                "engine": engine_family(p.framework),
                "layout": layout_label(lay, workers),
                "isl": p.isl,
                "concurrency": p.concurrency,
                "batch": float(run.decode_batch[0]),
                "batch_little": little,
                "ttft_meas_s": p.measured.get("ttft_s", float("nan")),
                "tpot_meas_s": p.measured["tpot_s"],
                "tpot_model_s": float(run.tpot_s[0]),
                "tpot_at_little_s": at_little,
            }
        )
    df = pd.DataFrame(out)
    labels = [batch_band(b) for b in (*BANDS, BANDS[-1] + 1)]
    df["band"] = pd.Categorical(df.batch.map(batch_band), categories=labels, ordered=True)
    df["error"] = df.tpot_model_s / df.tpot_meas_s - 1
    df["excess_ms"] = (df.tpot_model_s - df.tpot_meas_s) * 1e3
    return df


def same_layout_table(df: pd.DataFrame) -> pd.DataFrame:
    """Table 1: n, median signed TPOT error and median excess (ms) per system, decode layout, batch band, model and
    engine, in the cells where Kimi K2.5 has rows."""
    g = (
        df.groupby(["system", "layout", "band", "model", "engine"], observed=True)
        .agg(n=("error", "size"), error=("error", "median"), excess_ms=("excess_ms", "median"))
        .reset_index()
    )
    kimi = g[g.model == "kimi-k2.5"][["system", "layout", "band"]].drop_duplicates()
    return g.merge(kimi, on=["system", "layout", "band"])


def main() -> None:
    pd.set_option("display.width", 250)
    pd.set_option("display.max_rows", 500)
    df = rows()
    t = same_layout_table(df)
    t["error"] = (100 * t.error).round(1)
    print(
        "== 1. TPOT at the same decode layout and batch band (attention DP 1, no MTP): median signed error %, "
        "median excess ms"
    )
    print(t.round(2).to_string(index=False))
    d = df[(df.model == "kimi-k2.5") & (df.system == "gb200-nvl72")].copy()
    d["error_at_little"] = d.tpot_at_little_s / d.tpot_meas_s - 1
    print(
        "\n== 2. GB200 disaggregated Kimi K2.5 rows: decode batch per instance, model and Little's law on the "
        "measured TTFT/TPOT; TPOT error at each"
    )
    cols = [
        "engine",
        "layout",
        "isl",
        "concurrency",
        "ttft_meas_s",
        "batch",
        "batch_little",
        "tpot_meas_s",
        "error",
        "error_at_little",
    ]
    d[["tpot_meas_s", "ttft_meas_s"]] = d[["tpot_meas_s", "ttft_meas_s"]] * 1e3
    d = d.rename(columns={"tpot_meas_s": "tpot_meas_ms", "ttft_meas_s": "ttft_meas_ms"})
    cols = [c.replace("_meas_s", "_meas_ms") for c in cols]
    print(d.sort_values(["engine", "layout", "isl", "concurrency"])[cols].round(3).to_string(index=False))
    print("\nmedian signed TPOT error by engine, at the model's batch / at the Little's-law batch:")
    print(d.groupby("engine")[["error", "error_at_little"]].median().round(3).to_string())


if __name__ == "__main__":
    main()
