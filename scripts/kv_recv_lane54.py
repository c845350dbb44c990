"""TensorRT-LLM disaggregated rows: the KV hand-off each decode rank receives, and what one serial receive lane would need (round 54, nv54).

Diagnosis only: nothing is fitted into the package, nothing written (docs/gap_disagg_overprediction.md, "Rows 41
and 29 priced at their measured batch", the round-54 note on H3).

Why: TensorRT-LLM's cache transceiver pre-allocates one receive buffer per rank unless
``TRTLLM_REQUEST_KV_CACHE_CONCURRENT`` is set, and ``CacheTransBufferManager::assignBufferIndex`` waits while it is
taken (NVIDIA/TensorRT-LLM ``cpp/tensorrt_llm/batch_manager/cacheTransBuffer.cpp``, stored version @012f8ad2), so a
decode rank takes in one request's KV at a time. The InferenceX / srt-slurm launches of these rows set none of the
concurrency variables. Round 37 (pfq37) compared the KV hand-off per *sending* prefill worker; this compares it per
*receiving* decode rank.

Input: a ``jalapeno validate --json -o FILE.csv`` (every row). Rows: measured TensorRT-LLM disaggregated rows
(``stack`` names trtllm, mode ``disagg``) of DeepSeek-R1 and gpt-oss-120b with a concurrency, a TTFT and a TPOT.

Per row: request rate λ = C / (TTFT + (OSL − 1) · TPOT) from the measured cells (Little's law on the closed
loop); receiving ranks = decode workers × the decode pool's attention-DP size (each request's KV lands on one
attention-DP rank); bytes a request = the model's KV bytes of an ISL-token prompt at one byte an element (the
recipes store FP8 KV), from ``ModelSpec.kv_bytes_per_token`` (DeepSeek-R1: 61 × (512 + 64) = 35,136 B a token;
gpt-oss-120b: 36 layers × 8 KV heads × 64 × 2 = 36,864 B, the 18 sliding-window layers counted at their 128
tokens); demand = λ / ranks × bytes (GB/s a receiving rank).

Bounds (the pair): a one-at-a-time lane of rate B (GB/s) and per-request cost L (ms) that holds the ``--held``
row (its per-rank service at least S_h = 1000 / λ_h: L + b_h / B >= S_h) and frees the ``--free`` row (L + b_f / B
< S_f) has B between b_f / S_f (L = 0) and (b_h − b_f) / (S_h − S_f), and L < S_f. Then each row's least lane
utilisation λ_r · (L + b_r / B) / 1000 over every (B, L) the pair allows (a linear objective on that polygon in
(L, 1/B): its minimum sits at one of the three vertices), as the test of one shared lane against the other rows.

Run: python scripts/kv_recv_lane54.py VALIDATE_CSV [--held ID] [--free ID] [--top N]   (about 1 s)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from jalapeno.specs.catalog import load_model  # noqa: E402

MODELS = ("deepseek-r1", "gpt-oss-120b")
HELD = "inferencex_points:41"  # GB200 gpt-oss-120b Dynamo-TRT 8k/1k C 512: 131 users before their first token
FREE = "inferencex_points:47"  # the same recipe and decode layout at 1k/1k C 2,048, TTFT 0.22 s
_DECODE = re.compile(r"D (\d+)x\(attn TP(\d+) DP(\d+)")


def receiving_ranks(deployment: str) -> int | None:
    """Decode workers × attention-DP ranks of a disaggregated deployment string, or None if not one.

    >>> receiving_ranks("disagg P 2x(attn TP1 DP1 · MoE TP1 EP1) + D 1x(attn TP1 DP2 · MoE TP1 EP2) [mxfp4]")
    2
    >>> receiving_ranks("disagg P 1x(attn TP1 DP2 · MoE TP1 EP2) + D 4x(attn TP8 DP1 · MoE TP1 EP8) [fp4]")
    4
    """
    m = _DECODE.search(deployment or "")
    if not m:
        return None
    workers, _tp, dp = (int(x) for x in m.groups())
    return workers * dp


def prompt_kv_bytes(model: str, isl: int) -> float:
    """KV bytes of one ISL-token prompt at one byte an element (FP8 KV), over every layer."""
    return load_model(model).kv_bytes_per_token(1.0, isl) * isl


def table(csv: str) -> pd.DataFrame:
    """One line per TensorRT-LLM disaggregated row: λ, ranks, MB a request, GB/s a receiving rank, TTFT error."""
    df = pd.read_csv(csv)
    df = df[(df["mode"] == "disagg") & df["stack"].astype(str).str.contains("trtllm") & df["model"].isin(MODELS)]
    df = df[df["quality"].isna()] if "quality" in df else df
    out = []
    for (src, rid), g in df.groupby(["source", "id"]):
        cells = g.set_index("metric")
        if not {"ttft_s", "tpot_s"} <= set(cells.index):
            continue
        r = g.iloc[0]
        ranks = receiving_ranks(r["deployment"])
        conc = float(r["concurrency"]) if pd.notna(r["concurrency"]) else 0.0
        if not ranks or conc <= 0:
            continue
        ttft, tpot = float(cells.loc["ttft_s", "measured"]), float(cells.loc["tpot_s", "measured"])
        lam = conc / (ttft + (int(r["osl"]) - 1) * tpot)
        mb = prompt_kv_bytes(r["model"], int(r["isl"])) / 1e6
        out.append(
            {
                "source": src,
                "id": rid,
                "system": r["system"],
                "model": r["model"],
                "isl_osl": f"{int(r['isl'])}/{int(r['osl'])}",
                "conc": int(conc),
                "ranks": ranks,
                "req_s_rank": lam / ranks,
                "mb_req": mb,
                "gb_s_rank": lam / ranks * mb / 1e3,
                "ttft_err": float(cells.loc["ttft_s", "error"]),
                "split": r.get("split", ""),
            }
        )
    if not out:
        return pd.DataFrame()
    return pd.DataFrame(out).sort_values("gb_s_rank", ascending=False, ignore_index=True)


def lane_bounds(t: pd.DataFrame, held: str, free: str) -> dict:
    """Rate B (GB/s) and per-request cost L (ms) of one serial lane that holds ``held`` and frees ``free``.

    Service S = 1000 / λ_rank ms; held: L + b_h / B >= S_h; free: L + b_f / B < S_f (b in MB, so MB / (GB/s) = ms).
    """
    h, f = t.set_index("id").loc[held], t.set_index("id").loc[free]
    s_h, s_f = 1000 / h["req_s_rank"], 1000 / f["req_s_rank"]
    b_max = (h["mb_req"] - f["mb_req"]) / (s_h - s_f) if s_h > s_f else float("inf")
    return {
        "b_min": f["mb_req"] / s_f,
        "b_max": b_max,
        "l_max_ms": s_f,
        "s_held_ms": s_h,
        "s_free_ms": s_f,
        # vertices (L ms, 1/B ms per MB) of {L >= 0, L + b_h/B >= S_h, L + b_f/B <= S_f}
        "vertices": [
            (0.0, s_h / h["mb_req"]),
            (s_f - f["mb_req"] / b_max, 1 / b_max),
            (0.0, s_f / f["mb_req"]),
        ],
    }


def least_use(req_s_rank: float, mb_req: float, bounds: dict) -> float:
    """Least utilisation λ · (L + b / B) of a row's receive lane over the (B, L) the pair allows.

    >>> b = {"vertices": [(0.0, 0.5), (10.0, 0.4), (0.0, 1.0)]}  # 1/B in ms per MB
    >>> least_use(5.0, 100.0, b)  # 5/s x min(50, 50, 100) ms = 0.25
    0.25
    """
    return req_s_rank * min(l_ms + mb_req * x for l_ms, x in bounds["vertices"]) / 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--held", default=HELD)
    ap.add_argument("--free", default=FREE)
    ap.add_argument("--top", type=int, default=8)
    a = ap.parse_args(argv)
    t = table(a.csv)
    if t.empty:
        print("no measured TensorRT-LLM disaggregated rows with TTFT and TPOT in", a.csv)
        return 1
    b = lane_bounds(t, a.held, a.free)
    print(f"{len(t)} TensorRT-LLM disaggregated rows; per receiving decode rank, highest demand first:")
    for _, r in t.head(a.top).iterrows():
        util = least_use(r["req_s_rank"], r["mb_req"], b)
        print(
            f"  {r['gb_s_rank']:5.2f} GB/s  {r['id']:<58} {r['system']:<12} {r['model']:<13} {r['isl_osl']:>9} "
            f"C {r['conc']:>5}  {r['ranks']:>2} ranks  {r['req_s_rank']:5.1f} req/s  {r['mb_req']:6.1f} MB  "
            f"TTFT err {100 * r['ttft_err']:+6.1f}%  lane use >= {util:4.2f}"
        )
    print(
        f"one serial lane holding {a.held} and freeing {a.free}: B {b['b_min']:.2f}-{b['b_max']:.2f} GB/s, "
        f"L < {b['l_max_ms']:.1f} ms (service {b['s_held_ms']:.1f} / {b['s_free_ms']:.1f} ms a request)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
