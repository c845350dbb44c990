"""Qwen3-235B-A22B-FP8 on SGLang 0.5.6.post2 (H200, aiconfigurator): what the decode excess depends on (issue 18,
round 44, h200int44; docs/gap_aic_itl.md "round 44, h200int44"). A diagnosis: nothing is fitted into data/ or
shipped.

The 24 aggregated rows (attention TP2 / TP4 with MoE TP, C = 2-9, ISL 1,000-4,000, OSL 100-2,000; 12 in the
``sglang`` fit, 12 held out) are priced 5-41% fast (round 36, h200tail36; round 43, sglrel43). For each row the
excess is gap = measured TPOT - predicted TPOT (ms; from a ``jalapeno validate --json -o CSV`` file) and the
decode's mean context is L = ISL + OSL / 2 (a fixed-length closed loop: each sequence decodes from ISL to
ISL + OSL). Three least-squares lines are fitted through the rows whose OSL is at least 500 (at OSL 100 the prompt
steps hold a large share of the TPOT, round 36's stall bound):

- ``ctx``: gap = a + b·L (a cost per step that grows with the longest sequence, whatever the batch);
- ``tokens``: gap = a + b·C·L / TP (a cost that grows with the KV tokens a rank reads: a bandwidth term);
- ``batch``: gap = a + b·C (a per-sequence cost).

The row list prints L, C, TP, the gap and each line's residual; the summary the coefficients and RMS residuals,
and the same lines on the gap-analysis harness's H100 TensorRT-LLM Qwen3-235B rows (the harness's client with
another engine).
The ``ctx`` slope is turned into a read rate: one sequence's K and V of one KV head over the 94 layers
(:func:`kv_bytes_per_token`: 2 x head_dim x 2 bytes, BF16, SGLang's ``auto`` KV dtype for a checkpoint without KV
scales) per second, set beside one SM's share of H200's HBM bandwidth (4.8e12 B/s / 132 SMs, H200 datasheet and
the GH100 SM count; :func:`serial_slope_ms`, the slope with no free value). Qwen3-235B-A22B config.json (Qwen/Qwen3-235B-A22B, in src/jalapeno/data/models): 94 layers,
64 query / 4 KV heads, head_dim 128.

Part 2 (``--refit-without-qwen3 CSV OUT``; minutes): a what-if, not a rule. The ``sglang`` stack refitted without any
Qwen3-235B point (fit/stack_fit.fit_stack, front end and burst shares included, as scripts/sglang_fit_split43.py's
``pooled`` run; ``sglang-rocm`` refitted with it as its twin), every ``sglang`` / ``sglang-rocm`` point repriced,
every other row kept from CSV; writes OUT (CSV's columns) for the goals table and prints the fitted values: how far
the Qwen3 rows pull the pooled fixed costs.

Usage: python scripts/qwen3_sglang_ctx44.py CSV   (CSV: ``jalapeno validate --json -o CSV``; seconds)
       python scripts/qwen3_sglang_ctx44.py --refit-without-qwen3 CSV OUT
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

LAYERS = 94  # Qwen3-235B-A22B config.json num_hidden_layers
HEAD_DIM = 128  # config.json head_dim
H200_HBM_BPS = 4.8e12  # NVIDIA H200 datasheet: 4.8 TB/s
H200_SMS = 132  # GH100 as shipped in H100/H200 SXM: 132 SMs
MIN_OSL = 500  # rows below this are left out of the lines (prompt steps hold much of the TPOT)


def kv_bytes_per_token(head_dim: int = HEAD_DIM, elem_bytes: int = 2) -> int:
    """Bytes of K and V of one KV head for one token in one layer (2 x head_dim x elem_bytes; BF16: 512)."""
    return 2 * head_dim * elem_bytes


def qwen3_rows(csv_path: str, system: str = "h200", framework: str = "sglang") -> pd.DataFrame:
    """A system's aggregated Qwen3-235B TPOT rows of one framework (name prefix) in a validate CSV.

    Only ``mode == "agg"`` rows: a disaggregated row's deployment names the prefill pool's attention TP first, which
    is not the TP its decode runs at. Columns: isl, osl, c, tp, meas_ms, pred_ms, gap_ms, ctx, split. Raises
    SystemExit naming the file, system and framework when it has no such row, and naming the ``mode`` column when
    the CSV lacks it.
    """
    df = pd.read_csv(csv_path)
    if "mode" not in df.columns:
        raise SystemExit(f"{csv_path}: no `mode` column; pass a `jalapeno validate --json -o` CSV")
    m = (
        df.model.str.startswith("qwen3-235b")
        & (df.system == system)
        & df.framework.str.startswith(framework)
        & (df["mode"] == "agg")
        & (df.metric == "tpot_s")
    )
    d = df[m].copy()
    if d.empty:
        raise SystemExit(
            f"{csv_path}: no {system} qwen3-235b {framework} aggregated tpot_s row; "
            "pass a `jalapeno validate --json -o` CSV"
        )
    d["tp"] = d.deployment.str.extract(r"attn TP(\d+)", expand=False).astype(int)
    out = pd.DataFrame(
        {
            "isl": d.isl.astype(int),
            "osl": d.osl.astype(int),
            "c": d.concurrency.astype(float),
            "tp": d.tp,
            "meas_ms": d.measured * 1e3,
            "pred_ms": d.predicted * 1e3,
            "split": d["split"],
        }
    )
    out["gap_ms"] = out.meas_ms - out.pred_ms
    out["ctx"] = out.isl + out.osl / 2
    return out.sort_values(["tp", "isl", "osl"]).reset_index(drop=True)


def line_fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Least-squares y = a + b·x: (a, b, RMS residual). Raises ValueError with fewer than 3 points."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.size < 3:
        raise ValueError(f"line_fit: {x.size} points; need at least 3")
    b, a = np.polyfit(x, y, 1)
    return float(a), float(b), float(np.sqrt(np.mean((y - (a + b * x)) ** 2)))


def regressors(d: pd.DataFrame) -> dict[str, np.ndarray]:
    """The three candidate x's of the module docstring: ctx (L), tokens (C·L / TP), batch (C)."""
    return {"ctx": d.ctx.to_numpy(), "tokens": (d.c * d.ctx / d.tp).to_numpy(), "batch": d.c.to_numpy()}


def read_rate(slope_ms_per_token: float, layers: int = LAYERS) -> float:
    """Bytes/s one (sequence, KV head) is read at if the ``ctx`` slope (ms a step per context token) is that read."""
    return kv_bytes_per_token() * layers / (slope_ms_per_token * 1e-3)


def serial_slope_ms(layers: int = LAYERS, hbm_bps: float = H200_HBM_BPS, sms: int = H200_SMS) -> float:
    """ms a step per context token if each (sequence, KV head) is read by one SM at its share of HBM (no free value).

    layers x :func:`kv_bytes_per_token` / (hbm_bps / sms); H200, Qwen3: 94 x 512 / 36.4e9 s = 1.32 us a token.
    """
    return layers * kv_bytes_per_token() / (hbm_bps / sms) * 1e3


def main(csv_path: str) -> None:
    """Print the row table and the three lines (module docstring)."""
    d = qwen3_rows(csv_path)
    fit = d[d.osl >= MIN_OSL]
    lines = {k: line_fit(x, fit.gap_ms.to_numpy()) for k, x in regressors(fit).items()}
    allx = regressors(d)
    print("tp | C | isl/osl | L | meas / pred ms | gap ms | resid ctx / tokens / batch | split")
    for i, r in d.iterrows():
        res = [r.gap_ms - (a + b * allx[k][i]) for k, (a, b, _) in lines.items()]
        print(
            f"{r.tp} | {r.c:g} | {r.isl}/{r.osl} | {r.ctx:g} | {r.meas_ms:.2f} / {r.pred_ms:.2f} | {r.gap_ms:.2f} | "
            + " / ".join(f"{v:+.2f}" for v in res)
            + f" | {r.split}"
        )
    print(f"lines through the {len(fit)} rows with OSL >= {MIN_OSL}: gap = a + b x")
    for k, (a, b, rms) in lines.items():
        print(f"  {k}: a {a:.2f} ms, b {b:.3g} ms per unit, RMS {rms:.2f} ms")
    a, b, _ = lines["ctx"]
    rate = read_rate(b)
    print(
        f"ctx slope {b * 1e3:.2f} us a step per context token = {b * 1e6 / LAYERS:.1f} ns per token per layer; "
        f"read as one (sequence, KV head) of {kv_bytes_per_token()} B/token/layer: {rate / 1e9:.0f} GB/s "
        f"(one SM's share of H200 HBM: {H200_HBM_BPS / H200_SMS / 1e9:.0f} GB/s)"
    )
    print(f"slope with no free value (one SM's share a pair, 94 layers): {serial_slope_ms() * 1e3:.2f} us a token")
    twin = qwen3_rows(csv_path, "h100", "trtllm")
    twin = twin[twin.osl >= MIN_OSL]
    print(
        f"same harness, H100 TensorRT-LLM ({len(twin)} rows, OSL >= {MIN_OSL}, C {twin.c.min():g}-{twin.c.max():g}): "
        f"median gap {twin.gap_ms.median():+.2f} ms; RMS of the lines ctx / tokens / batch "
        + " / ".join(f"{line_fit(x, twin.gap_ms.to_numpy())[2]:.2f}" for x in regressors(twin).values())
        + " ms"
    )


def refit_without_qwen3(csv_path: str, out_path: str) -> None:
    """Part 2 (module docstring): refit ``sglang`` without Qwen3-235B points, reprice, write OUT."""
    from jalapeno.fit.aic_quality import aic_decode_flags, aic_ttft_flags
    from jalapeno.fit.stack_fit import fit_stack, load_points, server_front_end, split
    from jalapeno.fit.validate import load_aiconfigurator, point_stack, predict_points
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validation_run import DEFAULT_POINTS
    from jalapeno.specs.stacks import build_stacks, stack_for_framework

    base = pd.read_csv(csv_path)
    pts = load_points()
    kw = dict(
        front_end=True, ttft_flagged=frozenset(aic_ttft_flags(pts)), tpot_flagged=frozenset(aic_decode_flags(pts))
    )
    keep = [p for p in pts if not p.model.startswith("qwen3-235b")]
    cuda = fit_stack("sglang", keep, split(pts), build_stacks({})["sglang"], **kw)
    twin = build_stacks({"sglang": cuda})
    rocm = fit_stack(
        "sglang-rocm", pts, split(pts), twin["sglang-rocm"], server_front=server_front_end(twin["sglang"]), **kw
    )
    fits = {"sglang": cuda, "sglang-rocm": rocm}
    for name, f in fits.items():
        print(f"{name}: values {f['values']} clients {f['clients']}")
    every = load_inferencex(DEFAULT_POINTS)[0] + load_aiconfigurator()[0]
    mine = [p for p in every if stack_for_framework(p.framework, p.system).name in fits]
    stacks = build_stacks(fits)
    new = predict_points(mine, stack_of=lambda p: point_stack(p, stacks)).set_index(["id", "metric"])
    out = base.set_index(["id", "metric"])
    hit = out.index.intersection(new.index)
    out.loc[hit, ["predicted", "error"]] = new.loc[hit, ["predicted", "error"]]
    out.reset_index().to_csv(out_path, index=False)
    print(f"wrote {out_path}: {len(hit)} (id, metric) rows repriced")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--refit-without-qwen3":
        refit_without_qwen3(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 2:
        main(sys.argv[1])
    else:
        sys.exit(__doc__)
