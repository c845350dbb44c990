"""Qwen3-235B-A22B-FP8 on SGLang 0.5.6.post2 (H200, aiconfigurator): how many pieces FA3 splits each decode
attention into under the launch the rows' harness ran (issue 18, round 45, qwen3attn45; docs/gap_aic_itl.md
"round 45, qwen3attn45"). A diagnosis: nothing is fitted into data/ or shipped.

Round 44 (scripts/qwen3_sglang_ctx44.py) found these 24 rows carry an excess TPOT of 0.56 ms + 1.37 µs per token of
the decode's mean context L = ISL + OSL / 2, whatever the batch or the TP: the signature of a decode attention that
gives each (sequence, KV head) one CTA with no split along the sequence. This script prices what the engine's
sources say runs instead. The facts it rests on (read at the releases the rows name):

- Backend: SGLang 0.5.6.post2 (PyPI wheel) ``server_args._handle_attention_backend_compatibility`` picks ``fa3``
  on Hopper for an MHA model whose architecture is in ``utils/common.is_fa3_default_architecture``
  (``Qwen3MoeForCausalLM`` is) when no backend is named; aiconfigurator's generator names none for SGLang
  (ai-dynamo/aiconfigurator @952e768cf, 2026-01-24, ``generator/rule_plugin/sglang.rule`` and
  ``backend_templates/sglang/cli_args.0.5.6.post2.j2``: no ``--attention-backend``, no
  ``--enable-deterministic-inference``).
- Split request: ``layers/attention/flashattention_backend.py`` passes ``num_splits = 0`` (FA3's heuristic; 1 only
  under ``--enable-deterministic-inference``); sgl-kernel 0.3.19 (the release's pin) ``flash_attn_with_kvcache``
  passes no ``max_seqlen_k`` and no scheduler metadata.
- KV dtype: aiconfigurator's ``sdk/task.py`` ``_get_quant_mode`` (same commit) defaults ``kvcache_quant_mode`` to
  ``fp8`` on SM90, which ``sglang.rule`` launches as ``--kv-cache-dtype fp8_e4m3``; the model prices these rows
  with an FP8 KV cache too. SGLang then casts the query to e4m3 (``is_e4m3``): 1 byte an element.
- Shapes: page size 1 (SGLang's default; the generator sets none), so FA3 reads the paged KV without TMA
  (``get_pagedkv_tma``: page_size % kBlockN != 0); ``tile_size_fwd_sm90`` for head dim 128, paged without TMA:
  kBlockM 128, kBlockN 160 (e4m3) or 128 (BF16). One decode query with 16 query heads a KV head packed
  (PackGQA) fills one m-block. Under CUDA graphs the page table is ``max_context_len`` wide (40,960 for
  Qwen3-235B, config.json max_position_embeddings), so the static split bound sees seqlen_k = 40,960.
- FA3 (sgl-project/sgl-attn, branch ``sgl-kernel``, ``hopper/flash_api.cpp`` ``get_num_splits`` /
  ``hopper/heuristics.h`` ``num_splits_heuristic`` / ``hopper/flash_prepare_scheduler.cu``): with variable
  lengths and batch <= 992 the split is dynamic. A static bound from the occupancy heuristic with the batch taken
  as 1 (:func:`static_splits`), then per sequence, on the device, ceil(n_blocks / blocks_per_sm) capped by that
  bound, where blocks_per_sm = ceil(total_blocks x 1.1 x h_k / num_SMs) (:func:`dynamic_splits`).

:func:`row_table` prints, per row, the static bound, the dynamic split at the decode's mean context, the CTAs a
layer launches, and the context term a split decode would add beside the unsplit one round 44 read (one SM's share
of HBM a CTA: 4.8e12 B/s / 132). Reading the round-44 slope as FP8 KV (256 B a token, a KV head, a layer) gives
17.6 GB/s a (sequence, KV head), half of one SM's share; round 44's 35 GB/s match assumed BF16 KV.
:func:`within_slopes` fits the gap's slope in L inside each (TP, ISL, C) group, where only OSL moves L.

Usage: python scripts/qwen3_fa3_splits45.py CSV   (CSV: ``jalapeno validate --json -o CSV``; seconds)
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from qwen3_sglang_ctx44 import H200_HBM_BPS, H200_SMS, HEAD_DIM, LAYERS, line_fit, qwen3_rows  # noqa: E402

Q_HEADS, KV_HEADS = 64, 4  # Qwen3-235B-A22B config.json num_attention_heads / num_key_value_heads
CONTEXT_LEN = 40960  # config.json max_position_embeddings: SGLang's default context length, the graph page table
MAX_SPLITS = 128  # FA3 get_num_splits passes 128 as the heuristic's cap
KBLOCK_M = 128  # tile_size_fwd_sm90, head dim 128 (both dtypes)
KBLOCK_N = {1: 160, 2: 128}  # tile_size_fwd_sm90, head dim 128, paged KV without TMA: e4m3 160, BF16 128
EFF_KEEP = 0.85  # num_splits_heuristic: the smallest split within 85% of the best wave efficiency
FILL_SHARE = 0.8  # num_splits_heuristic: no split once the m-blocks fill 80% of the SMs
DYN_MARGIN = 1.1  # prepare_varlen_num_blocks_kernel: 10% margin on the blocks a SM gets


def static_splits(h_k: int, seqlen_k: int, elem_bytes: int, num_sms: int = H200_SMS) -> int:
    """FA3's static split bound for one decode query a sequence with the batch taken as 1 (dynamic split).

    h_k: KV heads a rank; seqlen_k: the page table's width in tokens; elem_bytes: 1 (e4m3) or 2 (BF16).
    Returns the split count (>= 1). Raises ValueError naming the argument when one is not positive.
    """
    for name, v in (("h_k", h_k), ("seqlen_k", seqlen_k), ("elem_bytes", elem_bytes), ("num_sms", num_sms)):
        if v <= 0:
            raise ValueError(f"static_splits: {name} = {v}; must be positive")
    m_blocks = math.ceil((Q_HEADS // KV_HEADS) / KBLOCK_M)  # PackGQA: 16 query heads of one KV head, one query
    n_blocks = math.ceil(seqlen_k / KBLOCK_N[elem_bytes])
    total = h_k * m_blocks
    if total >= FILL_SHARE * num_sms or n_blocks <= 4:
        return 1
    cap = min(MAX_SPLITS, num_sms, n_blocks)
    waves = total * np.arange(1, cap + 1) / num_sms
    eff = waves / np.ceil(waves)
    return int(np.argmax(eff >= EFF_KEEP * eff.max())) + 1


def dynamic_splits(ctx: np.ndarray, h_k: int, bound: int, elem_bytes: int, num_sms: int = H200_SMS) -> np.ndarray:
    """FA3's per-sequence split on the device: ceil(n_blocks / blocks_per_sm) capped by ``bound``, at least 1.

    ctx: (batch,) KV lengths in tokens. Returns (batch,) ints. blocks_per_sm = ceil(sum(n_blocks) x 1.1 x h_k /
    num_sms) (one m-block a sequence). Raises ValueError on an empty batch.
    """
    ctx = np.asarray(ctx, dtype=np.int64)
    if ctx.size == 0:
        raise ValueError("dynamic_splits: empty batch; pass at least one context length")
    n_blocks = -(-ctx // KBLOCK_N[elem_bytes])
    per_sm = max(1, math.ceil(n_blocks.sum() * DYN_MARGIN * h_k / num_sms))
    return np.clip(-(-n_blocks // per_sm), 1, bound)


def row_table(d: pd.DataFrame, elem_bytes: int = 1) -> pd.DataFrame:
    """Per row of :func:`qwen3_sglang_ctx44.qwen3_rows`: h_k, static bound, dynamic split at L, CTAs a layer, and
    the context term a step (ms) unsplit and split: L x bytes(token, KV head) x 94 layers / (HBM / SMs) / splits.
    """
    rate = H200_HBM_BPS / H200_SMS
    tok_bytes = 2 * HEAD_DIM * elem_bytes
    rows = []
    for r in d.itertuples():
        h_k = KV_HEADS // r.tp
        bound = static_splits(h_k, CONTEXT_LEN, elem_bytes)
        c = int(round(r.c))
        split = int(dynamic_splits(np.full(c, int(r.ctx)), h_k, bound, elem_bytes)[0])
        unsplit_ms = r.ctx * tok_bytes * LAYERS / rate * 1e3
        rows.append((r.tp, c, r.isl, r.osl, int(r.ctx), r.gap_ms, h_k, bound, split, c * h_k * split,
                     unsplit_ms, unsplit_ms / split))  # fmt: skip
    cols = ["tp", "c", "isl", "osl", "ctx", "gap_ms", "h_k", "static", "split", "ctas", "unsplit_ms", "split_ms"]
    return pd.DataFrame(rows, columns=cols)


def within_slopes(d: pd.DataFrame, min_osl: int = 500) -> pd.DataFrame:
    """The gap's slope in L (µs a token) inside each (tp, isl, c) group of rows with OSL >= ``min_osl``: L moves
    only with OSL there, so the batch and the TP are held. Columns: tp, isl, c, n, slope_us, kv_rate_gbps (the
    rank's KV bytes a token of L, C x h_k x 256 B x 94 layers, FP8, over the slope). Groups of one row are left out.
    """
    rows = []
    for (tp, isl, c), g in d[d.osl >= min_osl].groupby(["tp", "isl", "c"]):
        if len(g) < 2:
            continue
        slope_ms = float(np.polyfit(g.ctx.to_numpy(float), g.gap_ms.to_numpy(float), 1)[0])
        kv = c * (KV_HEADS // tp) * 2 * HEAD_DIM * 1 * LAYERS
        rows.append((tp, isl, int(round(c)), len(g), slope_ms * 1e3, kv / (slope_ms * 1e-3) / 1e9))
    return pd.DataFrame(rows, columns=["tp", "isl", "c", "n", "slope_us", "kv_rate_gbps"])


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.split("Usage:")[1].strip(), file=sys.stderr)
        return 2
    d = qwen3_rows(argv[1])
    t = row_table(d)
    print("tp | C | isl/osl | L | gap ms | h_k | static | split at L | CTAs a layer | ctx term unsplit / split ms")
    for r in t.itertuples():
        print(f"{r.tp} | {r.c} | {r.isl}/{r.osl} | {r.ctx} | {r.gap_ms:.2f} | {r.h_k} | {r.static} | {r.split} | "
              f"{r.ctas} | {r.unsplit_ms:.2f} / {r.split_ms:.3f}")  # fmt: skip
    print("slope in L inside each (tp, isl, c) group (OSL >= 500): tp | isl | C | n | us a token | rank KV GB/s")
    for r in within_slopes(d).itertuples():
        print(f"{r.tp} | {r.isl} | {r.c} | {r.n} | {r.slope_us:.2f} | {r.kv_rate_gbps:.0f}")
    keep = d.osl >= 500
    a, b, rms = line_fit(d.ctx[keep], d.gap_ms[keep])
    for eb, name in ((1, "FP8 e4m3"), (2, "BF16")):
        bps = 2 * HEAD_DIM * eb * LAYERS / (b * 1e-3)
        print(f"ctx slope {b * 1e3:.2f} us a token read as {name} KV: {bps / 1e9:.1f} GB/s a (sequence, KV head); "
              f"one SM's share {H200_HBM_BPS / H200_SMS / 1e9:.1f} GB/s")  # fmt: skip
    print(f"split range over the rows: {t.split.min()}-{t.split.max()} (static bound {sorted(set(t.static))}); "
          f"split context term {t.split_ms.min():.3f}-{t.split_ms.max():.3f} ms against gaps "
          f"{t.gap_ms.min():.2f}-{t.gap_ms.max():.2f} ms (line a {a:.2f} ms, RMS {rms:.2f} ms)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
