"""Is the aiconfigurator GB300 TensorRT-LLM TPOT bias a release gap or a checkpoint-format term? (issue 18, round 47)

Round 45 (tep45) read the +5% GB300 / +5.3% GB200 1.2.0rc6 TPOT over-prediction as a TensorRT-LLM release gap
(1.1.0rc2 -> 1.2.0rc6 runs the same GB200 FP4 TP8 decode step 7-8% faster than the model says). GB300 has only
1.2.0rc6 rows, so a release rule fitted elsewhere would be the only way to move it. This script splits the
aiconfigurator DeepSeek-R1 TensorRT-LLM TPOT rows finer: by system, checkpoint format (fp4 / fp8), mode, the
*decode* pool's attention layout (``TPn`` attention tensor parallel, ``DPn`` attention data parallel; the
``+ D`` part of a disaggregated row's deployment, not its prefill pool), MTP, and release (``.postN`` dropped).
Where one (system, release, mode, decode layout) holds both formats, the format difference is not a release
difference.

Table: n, median residual (model - measured, ms), median signed error (%), median measured TPOT (ms), and the
held-out half's median signed error and n.

``--what-if`` (needs the package's aiconfigurator-core data, about a minute) adds two tables the doc quotes
(docs/gap_aic_itl.md, round 47): 3. the FP4 DeepSeek-R1 TensorRT-LLM rows on B200 / GB200 / GB300 re-served with
their decode pool's ``moe_backend`` set to ``trtllm`` (the measured TRT-LLM-gen curve, data/moe_backends.toml) and to
``cutlass``, median signed TPOT error per (system, mode, decode layout, release) against the shipped pricing; 4. the
decode-TP8 disaggregated rows at one sequence a rank (decode batch <= 1.5): measured and modelled TPOT (ms) by format.

Input: a validate CSV (``jalapeno validate --json -o X.csv``; the doc's figures are main d3e3fcc's, round 47).
Nothing is fitted or written; predictions do not move.
Run: python scripts/trt_fp4_fp8_split47.py X.csv [--what-if]   (seconds; a minute with --what-if)
"""

from __future__ import annotations

import argparse
import re

import pandas as pd

#: the decode pool's attention layout in a deployment label (``attn TP8 DP1``)
_ATTN = re.compile(r"attn TP(\d+) DP(\d+)")
#: the validate CSV columns :func:`split_table` reads
COLUMNS = (
    "source",
    "metric",
    "stack",
    "model",
    "system",
    "precision",
    "mode",
    "deployment",
    "measured",
    "predicted",
    "split",
)


def decode_attention(deployment: str) -> str:
    """``TPn`` (attention tensor parallel, n > 1) or ``DPn`` (attention TP 1, n data-parallel ranks) of the decode
    pool named in a deployment label: the part after ``+ D`` for a disaggregated row, else the whole label; ""
    when no ``attn TPa DPb`` is found.

    >>> decode_attention("disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 4x(attn TP8 DP1 · MoE TP1 EP8) [fp4]")
    'TP8'
    >>> decode_attention("agg 1x(attn TP1 DP8 · MoE TP1 EP8)"), decode_attention("agg TP8")
    ('DP8', '')
    """
    part = deployment.split("+ D", 1)[1] if "+ D" in deployment else deployment
    m = _ATTN.search(part)
    if not m:
        return ""
    tp, dp = int(m.group(1)), int(m.group(2))
    return f"TP{tp}" if tp > 1 else f"DP{dp}"


def split_table(rows: pd.DataFrame, model: str = "deepseek-r1") -> pd.DataFrame:
    """One row per (system, precision, mode, decode attention layout, MTP, release) of ``rows``' aiconfigurator
    TensorRT-LLM ``model`` TPOT rows (a validate CSV as a frame: source, metric, stack, model, system, precision,
    mode, deployment, measured, predicted, split). Columns n, resid_ms (median model - measured, ms), err_pct
    (median signed error, %), meas_ms (median measured TPOT, ms), ho_err_pct / ho_n (the held-out half's).

    Raises:
        KeyError: ``rows`` lacks a column named above (pass a ``jalapeno validate --json -o X.csv`` file).
    """
    missing = [c for c in COLUMNS if c not in rows.columns]
    if missing:
        raise KeyError(f"validate CSV lacks {', '.join(missing)}: pass a `jalapeno validate --json -o X.csv` file")
    r = rows[
        (rows.source == "aiconfigurator")
        & (rows.metric == "tpot_s")
        & rows["stack"].str.startswith("trtllm@")
        & (rows.model == model)
    ].copy()
    r["release"] = r["stack"].str.split("@").str[1].str.replace(r"\.post\d+$", "", regex=True)
    r["decode"] = r.deployment.map(decode_attention)
    r["mtp"] = r.deployment.str.contains("MTP")
    r["resid_ms"] = (r.predicted - r.measured) * 1e3
    r["err_pct"] = (r.predicted / r.measured - 1) * 100
    r["meas_ms"] = r.measured * 1e3
    keys = ["system", "precision", "mode", "decode", "mtp", "release"]
    g = r.groupby(keys)
    out = g.agg(
        n=("err_pct", "size"),
        resid_ms=("resid_ms", "median"),
        err_pct=("err_pct", "median"),
        meas_ms=("meas_ms", "median"),
    )
    ho = r[r["split"] == "held_out"].groupby(keys).err_pct.agg(["median", "size"])
    out["ho_err_pct"] = ho["median"]
    out["ho_n"] = ho["size"].reindex(out.index).fillna(0).astype(int)
    return out.reset_index()


def format_pairs(t: pd.DataFrame) -> pd.DataFrame:
    """The (system, mode, decode, mtp, release) groups of :func:`split_table` that hold both fp4 and fp8 rows, one
    line each: each format's n and median signed error (%) and the fp4 - fp8 difference (points)."""
    keys = ["system", "mode", "decode", "mtp", "release"]
    w = t.pivot_table(index=keys, columns="precision", values=["n", "err_pct"], aggfunc="first").dropna()
    w.columns = [f"{a}_{b}" for a, b in w.columns]
    w["fp4_minus_fp8"] = w.err_pct_fp4 - w.err_pct_fp8
    return w.reset_index()


def served_trt_rows(systems):
    """The aiconfigurator DeepSeek-R1 TensorRT-LLM rows with a decode pool and a measured TPOT on ``systems``, each
    as validation serves a matched row: yields ``(point, stack, pricer, workload, deployment)`` with the point's stack
    (fit/validate.point_stack), its MTP (with_stack_mtp) and the roofline calibrated pricer. Shared with
    scripts/fp8_act_quant47.py."""
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload, with_stack_mtp

    for p in load_aiconfigurator()[0]:
        d = p.deployment.decode
        if p.model != "deepseek-r1" or "trtllm" not in p.framework or d is None or p.system not in systems:
            continue
        if not p.measured.get("tpot_s"):
            continue
        st = point_stack(p)
        pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
        yield p, st, pricer, point_workload(p), with_stack_mtp(p.deployment, st, p.model)


def tpot_error_row(p, st, tpot_s: float, setting: str) -> dict:
    """One what-if table row for a row ``p`` of :func:`served_trt_rows` served at ``tpot_s`` (s) under ``setting``:
    id, system, precision, mode, decode (TP n, else DP n), release (the stack's version without ``.post``),
    meas_ms and ``setting``: the signed TPOT error in %. Shared by scripts/fp8_act_quant47.py and
    scripts/fp4_linears49.py."""
    d, meas = p.deployment.decode, p.measured["tpot_s"]
    return {
        "id": p.id,
        "system": p.system,
        "precision": p.precision,
        "mode": p.mode,
        "decode": f"TP{d.layout.tp}" if d.layout.tp > 1 else f"DP{d.layout.dp}",
        "release": (st.version or "").split(".post")[0],
        "meas_ms": meas * 1e3,
        setting: (tpot_s / meas - 1) * 100,
    }


def settings_medians(argv: list[str], settings) -> tuple[pd.DataFrame, list[str]]:
    """Run ``argv --setting NAME`` (a script printing :func:`tpot_error_row` rows as CSV) once per setting,
    each in its own interpreter (the serving path keeps per-process state), merge the rows on ``id`` and
    return (the median signed TPOT error (%) per group and setting, with ``n`` rows a group; the group keys
    system, mode, decode, release, precision). Shared by scripts/fp8_act_quant47.py and scripts/fp4_linears49.py."""
    import io
    import subprocess
    import sys

    w = None
    for name in settings:
        run = subprocess.run([sys.executable, *argv, "--setting", name], capture_output=True, text=True, check=True)
        one = pd.read_csv(io.StringIO(run.stdout))
        w = one if w is None else w.merge(one[["id", name]], on="id")
    keys = ["system", "mode", "decode", "release", "precision"]
    return w.groupby(keys).agg(n=("shipped", "size"), **{c: (c, "median") for c in settings}).reset_index(), keys


def backend_what_if(systems=("b200", "gb200-nvl72", "gb300-nvl72")) -> pd.DataFrame:
    """One row per aiconfigurator DeepSeek-R1 TensorRT-LLM row with a decode pool and a measured TPOT on ``systems``:
    system, precision, mode, decode (:func:`decode_attention` form), release, batch (decode sequences a rank),
    meas_ms, model_ms, and ``e_none`` / ``e_trtllm`` / ``e_cutlass``: signed TPOT error (%) as shipped and with the
    decode pool's ``moe_backend`` replaced (FP4 rows only; NaN for others). Served as validation serves a matched
    row (serve/point.serve_at_concurrency with the point's stack, its MTP and the roofline calibrated pricer)."""
    from dataclasses import replace

    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model

    model, out = load_model("deepseek-r1"), []
    for p, st, pricer, wl, dep in served_trt_rows(systems):
        d = p.deployment.decode
        meas = p.measured["tpot_s"]
        run = serve_at_concurrency(model, pricer, dep, wl, [p.concurrency])
        rec = {
            "system": p.system,
            "precision": p.precision,
            "mode": p.mode,
            "release": st.version or "",
            "decode": f"TP{d.layout.tp}" if d.layout.tp > 1 else f"DP{d.layout.dp}",
            "batch": float(run.decode_batch[0]),
            "meas_ms": meas * 1e3,
            "model_ms": float(run.tpot_s[0]) * 1e3,
        }
        rec["e_none"] = (rec["model_ms"] / rec["meas_ms"] - 1) * 100
        for be in ("trtllm", "cutlass"):
            e = float("nan")
            if p.precision == "fp4":
                alt = replace(dep, decode=replace(d, moe_backend=be))
                e = (float(serve_at_concurrency(model, pricer, alt, wl, [p.concurrency]).tpot_s[0]) / meas - 1) * 100
            rec[f"e_{be}"] = e
        out.append(rec)
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="a validate CSV (jalapeno validate --json -o X.csv)")
    ap.add_argument("--model", default="deepseek-r1")
    ap.add_argument("--what-if", action="store_true", help="also tables 3-4 (serves the rows; about a minute)")
    a = ap.parse_args()
    t = split_table(pd.read_csv(a.csv), a.model)
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.float_format", "{:.2f}".format):
        print("Table 1. TPOT by system, format, mode, decode attention layout, MTP, release\n")
        print(t.to_string(index=False))
        print("\nTable 2. Groups holding both formats: fp4 - fp8 median signed error (points)\n")
        print(format_pairs(t).to_string(index=False))
        if not a.what_if:
            return
        w = backend_what_if()
        keys = ["system", "mode", "decode", "release"]
        fp4 = w[w.precision == "fp4"].groupby(keys)
        print(
            "\nTable 3. FP4 rows: median signed TPOT error (%) as shipped and with the decode pool's MoE backend set\n"
        )
        print(
            fp4.agg(
                n=("e_none", "size"),
                shipped=("e_none", "median"),
                trtllm=("e_trtllm", "median"),
                cutlass=("e_cutlass", "median"),
            )
            .reset_index()
            .to_string(index=False)
        )
        one = w[(w["mode"] == "disagg") & (w.decode == "TP8") & (w.batch <= 1.5)]
        print("\nTable 4. Disaggregated decode TP8 at one sequence a rank: TPOT (ms) by format\n")
        print(
            one.sort_values(keys + ["precision"])[keys + ["precision", "batch", "meas_ms", "model_ms"]].to_string(
                index=False
            )
        )


if __name__ == "__main__":
    main()
