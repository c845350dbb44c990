"""The TensorRT-LLM 1.3.0rc rows of aiconfigurator-core 0.12.0's sample that NVIDIA's gap-analysis harness measured
(``silicon_data_source`` naming a ``gtl_`` job or task): their raw fields, and their TPOT per decoder layer.

docs/gap_aic_itl.md (round 19, aicrows19) asks whether the 1.3.0rc1 B200 DeepSeek-R1 and H100 gpt-oss-120b rows
at 4000/1000 (interactivity +60% to +420%) are a mapping fault of fit/aic_rows.py. Table 1 prints each row's raw
fields as the package stores them: the concurrency its client ran (``silicon_concurrency``, the id's ``_c<N>_``,
which fit/aic_rows.py reads), the writer's ``batch_size`` and their ratio, the parallel sizes, TTFT, TPOT and
TPOT / decoder layers (the catalog model's ``num_layers``; blank for a model the catalog lacks). Table 2 holds
each pair of rows of one deployment (system, checkpoint, release, ISL/OSL and parallel sizes) to rule D's
within-deployment bound (fit/aic_quality.py): a decode step grows at most in proportion to its batch and does
not shrink as the batch grows, so

    ratio = (TPOT_X - C_X * TTFT_X / (OSL - 1)) / (TPOT_Y * max(1, B_X / B_Y))

(B: Little's-law decoding requests, as rule D) above :data:`jalapeno.fit.aic_quality.SIBLING_TPOT_FACTOR` is a
row that decodes slower than a row of its own deployment allows. The model is never consulted.
Run: python scripts/aic_harness_rows.py   (seconds; needs the aiconfigurator-core package: the calibrate extra)
"""

from __future__ import annotations

import math

import pandas as pd

from jalapeno.fit.aic_quality import SIBLING_TPOT_FACTOR

#: the deployment fields a pair must share (table 2)
DEPLOYMENT = ("system", "model_path", "backend_version", "isl", "osl", "tp_size", "moe_tp_size", "moe_ep_size")


def harness_rows(frame: pd.DataFrame, layers_of=None) -> pd.DataFrame:
    """The aggregated TensorRT-LLM 1.3.0rc rows of the harness (module docstring) with ``concurrency``
    (``silicon_concurrency``), ``conc_per_batch`` (concurrency / ``batch_size``), ``layers`` and
    ``tpot_per_layer_ms`` added. ``layers_of(model_path)``: decoder layers or None (default: the catalog's,
    through fit/aic_rows.AIC_MODELS)."""
    if layers_of is None:
        layers_of = _catalog_layers
    src = frame["silicon_data_source"].fillna("")
    keep = (
        src.str.contains("gtl_")
        & (frame["backend"] == "trtllm")
        & (frame["mode"] == "agg")
        & frame["backend_version"].astype(str).str.startswith("1.3.0rc")
    )
    rows = frame[keep].copy()
    rows["concurrency"] = pd.to_numeric(src[keep].str.extract(r"silicon_concurrency=(\d+)")[0])
    rows["conc_per_batch"] = rows["concurrency"] / rows["batch_size"]
    rows["layers"] = [layers_of(m) for m in rows["model_path"]]
    rows["tpot_per_layer_ms"] = [t / n if n else math.nan for t, n in zip(rows["silicon_tpot_ms"], rows["layers"])]
    return rows.sort_values(["system", "model_path", "backend_version", "isl", "tp_size", "concurrency"])


def _catalog_layers(model_path: str) -> int | None:
    from jalapeno.fit.aic_rows import AIC_MODELS
    from jalapeno.specs.catalog import load_model

    name = AIC_MODELS.get(model_path)
    return load_model(name).num_layers if name else None


def _decoding(c: float, ttft_s: float, tpot_s: float, osl: int) -> float:
    dec = (osl - 1) * tpot_s
    return c * dec / (ttft_s + dec)


def within_deployment_pairs(rows: pd.DataFrame) -> list[dict]:
    """Every ordered pair (X, Y) of rows of one deployment (:data:`DEPLOYMENT`) at different concurrencies with
    rule D's figures (module docstring): ``x``, ``y`` (row ids), ``decode_x_ms``, ``bound_ms``, ``ratio``;
    highest ratio first. Rows without a concurrency are passed over."""
    out = []
    for _, g in rows[rows["concurrency"].notna()].groupby(list(DEPLOYMENT), dropna=False):
        for _, x in g.iterrows():
            tx, px = x["silicon_ttft_ms"] / 1e3, x["silicon_tpot_ms"] / 1e3
            dx = px - x["concurrency"] * tx / (x["osl"] - 1)
            bx = _decoding(x["concurrency"], tx, px, x["osl"])
            for _, y in g.iterrows():
                if y["concurrency"] == x["concurrency"] or dx <= 0:
                    continue
                ty, py = y["silicon_ttft_ms"] / 1e3, y["silicon_tpot_ms"] / 1e3
                bound = py * max(1.0, bx / _decoding(y["concurrency"], ty, py, y["osl"]))
                out.append(
                    {"x": x["id"], "y": y["id"], "decode_x_ms": dx * 1e3, "bound_ms": bound * 1e3, "ratio": dx / bound}
                )
    return sorted(out, key=lambda q: -q["ratio"])


def main() -> None:
    from importlib.resources import files

    frame = pd.read_csv(files("aiconfigurator_core") / "systems" / "silicon_sample.csv")
    rows = harness_rows(frame)
    print("Table 1: the harness's TensorRT-LLM 1.3.0rc aggregated rows (raw fields)\n")
    print(
        "| system | checkpoint | release | ISL/OSL | C | batch_size | C / batch | tp | moe tp x ep | TTFT ms "
        "| TPOT ms | layers | TPOT / layer ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for _, r in rows.iterrows():
        per = "" if math.isnan(r["tpot_per_layer_ms"]) else f"{r['tpot_per_layer_ms']:.2f}"
        layers = "" if r["layers"] is None or r["layers"] != r["layers"] else f"{int(r['layers'])}"
        print(
            f"| {r['system']} | {r['model_path']} | {r['backend_version']} | {r['isl']}/{r['osl']} | "
            f"{r['concurrency']:g} | {r['batch_size']:g} | {r['conc_per_batch']:.1f} | {r['tp_size']:g} | "
            f"{r['moe_tp_size']:g} x {r['moe_ep_size']:g} | {r['silicon_ttft_ms']:.0f} | {r['silicon_tpot_ms']:.1f} "
            f"| {layers} | {per} |"
        )
    pairs = within_deployment_pairs(rows)
    print(f"\nTable 2: pairs of one deployment above {SIBLING_TPOT_FACTOR} (of {len(pairs)} pairs)\n")
    print("| X | Y | decode X ms | bound ms | ratio |\n|---|---|---|---|---|")
    for q in pairs:
        if q["ratio"] > SIBLING_TPOT_FACTOR:
            print(f"| {q['x']} | {q['y']} | {q['decode_x_ms']:.1f} | {q['bound_ms']:.1f} | {q['ratio']:.2f} |")


if __name__ == "__main__":
    main()
