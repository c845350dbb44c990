"""Median TPOT error of validated rows by mode, attention layout, ISL and sequences per attention rank.

Reads a per-point CSV of ``jalapeno validate -o FILE`` (aiconfigurator rows included: run it without
``--no-aiconfigurator``) and prints, for one model (default DeepSeek-R1) and the named frameworks
(default SGLang and TensorRT-LLM), the count and median signed TPOT error ((predicted − measured) /
measured) per (mode, attention kind, ISL band, sequences per attention rank) cell. Sequences per
attention rank: the row's concurrency over its decode instances (``D Nx(...)`` of a disaggregated
label; one instance for an aggregated one) and over the instance's attention DP width, i.e. the
sequences one attention rank holds if every user is decoding. Attention kind: ``DP`` where the decode
pool runs attention data-parallel (DP > 1), ``TP`` otherwise. Nothing is fitted or written.
Used by docs/gap_disagg_overprediction.md ("Does the decode step grow too slowly with the batch?").
Run: python scripts/aic_batch_split.py FILE [--model deepseek-r1] [--source aiconfigurator]
"""

from __future__ import annotations

import argparse
import re

import pandas as pd

#: Sequences-per-attention-rank bands (upper edges inclusive), and ISL bands, of the printed cells.
SEQ_BANDS = (0, 4, 16, 32, 64, 128, 256, 1024, 1 << 20)
ISL_BANDS = (0, 1500, 3000, 9000, 1 << 20)


def seqs_per_attention_rank(deployment: str, concurrency: float) -> tuple[float, str]:
    """Sequences one decode attention rank holds at ``concurrency`` users, and the attention kind.

    Args:
        deployment: a validation deployment label (``agg attn TP8 DP1 · ...`` or
            ``disagg P ... + D 4x(attn TP1 DP8 · ...) ...``).
        concurrency: users of the closed loop.

    Returns:
        (concurrency / decode instances / attention DP, ``"DP"`` if DP > 1 else ``"TP"``).

    Raises:
        ValueError: a label with no ``attn TPn DPm`` field, naming the label.
    """
    m = re.search(r"D (\d+)x\(attn TP(\d+) DP(\d+)", deployment)
    if m:
        inst, dp = int(m.group(1)), int(m.group(3))
    else:
        m = re.search(r"attn TP(\d+) DP(\d+)", deployment)
        if not m:
            raise ValueError(f"deployment {deployment!r}: no 'attn TPn DPm' field; pass a validation deployment label")
        inst, dp = 1, int(m.group(2))
    return concurrency / inst / dp, ("DP" if dp > 1 else "TP")


def table(frame: pd.DataFrame, model: str, source: str, frameworks: tuple[str, ...]) -> pd.DataFrame:
    """The cells (count, median TPOT error) of ``frame``'s rows of ``model``/``source``/``frameworks``."""
    a = frame[
        (frame.metric == "tpot_s") & (frame.model == model) & (frame.source == source) & frame.deployment.notna()
    ].copy()
    a = a[a.framework.astype(str).str.split().str[0].isin(frameworks)]
    split = [seqs_per_attention_rank(d, c) for d, c in zip(a.deployment, a.concurrency)]
    a["seqs_per_rank"] = pd.cut([s for s, _ in split], SEQ_BANDS)
    a["attention"] = [k for _, k in split]
    a["isl_band"] = pd.cut(a.isl, ISL_BANDS)
    return (
        a.groupby(["mode", "attention", "isl_band", "seqs_per_rank"], observed=True)
        .error.agg(n="count", median_error="median")
        .round(3)
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--model", default="deepseek-r1")
    ap.add_argument("--source", default="aiconfigurator")
    ap.add_argument("--frameworks", default="sglang,trtllm")
    args = ap.parse_args()
    t = table(pd.read_csv(args.file), args.model, args.source, tuple(args.frameworks.split(",")))
    print(t.to_string())


if __name__ == "__main__":
    main()
