"""Is the gpt-oss-120b vLLM-ROCm prompt's attention kernel the MI300X TTFT miss? (issue 18, round 54; diagnosis, nothing fitted or shipped)

Held out, InferenceX MI300X TTFT misses at 20.0 / 33.9 / -20.0 (n 4); its median is set by the gpt-oss-120b vLLM-ROCm
rows 45 / 53 (-35.8 / -29.4%, round 35). Their recipe (data/engines.toml ``vllm-mi300x-gptoss-fp4``) runs
``--attention-backend ROCM_AITER_UNIFIED_ATTN``, whose forward calls aiter's Triton ``unified_attention`` for every
causal step, prompts included (vllm-project/vllm ``vllm/v1/attention/backends/rocm_aiter_unified_attn.py``
@00e5aa02). The model prices only its decode from a gfx942 timing (data/attention_backends.toml); the prompt's
attention takes the calibrated ``attention_peak_fraction`` (0.471, derived from H200). This script reads what the
kernel is and prices the prompt's attention across the span the kernel's published timings cover.

The kernel (ROCm/aiter ``aiter/ops/triton/unified_attention.py`` @80ecc778, ``select_2d_config``): a batch holding a
prompt takes the 2D kernel (``use_2d_kernel``: any sliding window, or more programs than 4 per CU), ``BLOCK_M`` 16
query rows for ``num_queries_per_kv`` <= 16 (gpt-oss: 64 / 8 = 8), raised to 128 with 4 warps once the longest query
is >= 256 tokens, ``TILE_SIZE`` 64 (PR #5649: M128 / T64 was gfx942's default before PR #4044, 2026-07, which added
branches for heads >= 256 only). One program holds ``BLOCK_M / num_queries_per_kv`` query tokens of one KV head and
streams that head's K and V tiles, so it does ``2 * 2 * BLOCK_M * TILE * D`` FLOP per ``2 * TILE * D * kv_bytes``
bytes: ``2 * BLOCK_M / kv_bytes`` FLOP per byte (:func:`flop_per_kv_byte`).

Published timings of the kernel (:data:`PUBLISHED`; none at gpt-oss's head 64 on gfx942): ROCm/aiter PR #5664
(MI325X, FP8 KV, the ``BLOCK_M`` 16 branch later versions give heads 256 / 512, and ``BLOCK_M`` 64 after) and PR #1336
(MI350-series, gfx950, BF16, head 128). ``--variants`` prices every InferenceX MI300X / MI325X row with the two chips'
``attention_peak_fraction`` set to each value of :data:`FRACTIONS` (a copy of their calibration files in a temporary
folder, ``jalapeno validate --efficiency DIR``; nothing in the tree is written) and prints the gpt-oss rows and the
held-out goal groups. Only the gpt-oss rows move (the DeepSeek-R1 rows price MLA prompts with ``mla_prefill``).

Run: python scripts/rocm_prefill_attn54.py [--variants]
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from jalapeno.errors import SpecError

ROOT = Path(__file__).resolve().parents[1]
CALIBRATION = ROOT / "src" / "jalapeno" / "data" / "calibration"
SYSTEMS = ("mi300x", "mi325x")
#: gfx942's dense BF16 peak, TFLOP/s (AMD Instinct MI300X / MI325X data sheets: 1,307.4)
GFX942_BF16_TFLOPS = 1307.4
#: aiter select_2d_config @80ecc778: BLOCK_M for num_queries_per_kv <= 16, and once max_seqlen_q >= 256
BLOCK_M_SHORT, BLOCK_M_LONG, LONG_QUERY = 16, 128, 256
#: kernel timings: (source, chip, shape, TFLOP/s, the chip's dense BF16 peak TFLOP/s: gfx942 above, MI350X 2,307.2 from
#: its AMD data sheet; PR #1336 says "mi350")
PUBLISHED = (
    (
        "aiter PR #5664 before (BLOCK_M 16)",
        "MI325X",
        "head 256, window 1024, 8k/32k, FP8 KV",
        159.5,
        GFX942_BF16_TFLOPS,
    ),
    ("aiter PR #5664 before (BLOCK_M 16)", "MI325X", "head 512, full, 2k-32k, FP8 KV", 79.3, GFX942_BF16_TFLOPS),
    ("aiter PR #5664 after (BLOCK_M 64)", "MI325X", "head 512, full, 8k, FP8 KV", 193.0, GFX942_BF16_TFLOPS),
    ("aiter PR #5664 after (BLOCK_M 64)", "MI325X", "head 256, window 1024, 8k, FP8 KV", 265.0, GFX942_BF16_TFLOPS),
    ("aiter PR #1336", "MI350X (gfx950)", "head 128, 64/16 heads, 32k, BF16", 490.3, 2307.2),
)
#: attention_peak_fraction values priced: shipped (None), then the span of the gfx942 timings above (0.06-0.20)
FRACTIONS = (None, 0.20, 0.12, 0.06)
HELD_OUT = ("held_out", "none")
METRICS = ("throughput_per_chip", "interactivity", "ttft_s")


def flop_per_kv_byte(block_m: int, kv_bytes: float) -> float:
    """FLOP a 2D-kernel program does per byte of K / V tile it reads: ``2 * block_m / kv_bytes`` (module docstring).

    Raises SpecError for a non-positive ``block_m`` or ``kv_bytes``."""
    if block_m <= 0 or kv_bytes <= 0:
        raise SpecError(
            "block_m" if block_m <= 0 else "kv_bytes",
            f"must be > 0 (got block_m {block_m}, kv_bytes {kv_bytes})",
            "give the tile's query rows and the KV element size in bytes",
        )
    return 2.0 * block_m / kv_bytes


def prompt_block_m(num_queries_per_kv: int, max_query: int) -> int:
    """aiter's ``BLOCK_M`` for a batch whose longest query is ``max_query`` tokens (select_2d_config @80ecc778)."""
    if num_queries_per_kv < 1 or max_query < 1:
        raise SpecError(
            "num_queries_per_kv" if num_queries_per_kv < 1 else "max_query",
            f"must be >= 1 (got {num_queries_per_kv}, {max_query})",
            "give query heads per KV head and the longest query of the batch, tokens",
        )
    m = BLOCK_M_SHORT if num_queries_per_kv <= 16 else 1 << (num_queries_per_kv - 1).bit_length()
    return BLOCK_M_LONG if max_query >= LONG_QUERY else m


def with_attention_fraction(text: str, fraction: float) -> str:
    """A calibration file's text with its first ``attention_peak_fraction`` (the ``[parameters]`` value; ``[low]`` /
    ``[high]`` keep theirs) set to ``fraction``. Raises SpecError if the file has none or the fraction is not in (0, 1]."""
    if not 0.0 < fraction <= 1.0:
        raise SpecError("attention_peak_fraction", f"must be in (0, 1] (got {fraction})", "give a fraction of peak")
    new, n = re.subn(r"(?m)^attention_peak_fraction = .*$", f"attention_peak_fraction = {fraction}", text, count=1)
    if n != 1:
        raise SpecError(
            "attention_peak_fraction",
            "no attention_peak_fraction line in the calibration file",
            "pass a calibration file",
        )
    return new


def goal_groups(rows: list[dict]) -> dict[tuple[str, str], tuple[int, float, float, float]]:
    """(system, metric) -> (n, median |error|, p90 |error|, median error) over held-out, unflagged InferenceX rows,
    as the issue's goals read them (p90: linear interpolation, numpy's default)."""
    out = {}
    for system in SYSTEMS:
        for metric in METRICS:
            e = sorted(
                float(r["error"])
                for r in rows
                if r["source"] == "inferencex"
                and r["system"] == system
                and r["metric"] == metric
                and r["split"] in HELD_OUT
                and not r.get("quality")
                and r["error"] not in ("", None)
            )
            if not e:
                continue
            a = sorted(abs(x) for x in e)
            pos = 0.9 * (len(a) - 1)
            lo = int(pos)
            p90 = a[lo] + (a[min(lo + 1, len(a) - 1)] - a[lo]) * (pos - lo)
            out[(system, metric)] = (len(e), statistics.median(a), p90, statistics.median(e))
    return out


def _validate(fraction: float | None, out_csv: Path) -> list[dict]:
    cmd = [sys.executable, "-m", "jalapeno", "validate", "-s", ",".join(SYSTEMS), "--no-aiconfigurator", "--json"]
    with tempfile.TemporaryDirectory() as tmp:
        if fraction is not None:
            for s in SYSTEMS:
                text = (CALIBRATION / f"{s}.toml").read_text()
                (Path(tmp) / f"{s}.toml").write_text(with_attention_fraction(text, fraction))
            cmd += ["--efficiency", tmp]
        subprocess.run([*cmd, "-o", str(out_csv)], check=True, capture_output=True, env=os.environ.copy())
    with open(out_csv) as f:
        return list(csv.DictReader(f))


def variants() -> None:
    """Price the rows at each fraction and print the gpt-oss rows and the goal groups (module docstring)."""
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fr in FRACTIONS:
            runs[fr] = _validate(fr, Path(tmp) / f"{fr}.csv")
    base = {(r["id"], r["metric"]): r for r in runs[None]}
    print(
        "| row | system | ISL | metric | measured | "
        + " | ".join(f"error % at {f or 'shipped'}" for f in FRACTIONS)
        + " |"
    )
    print("|---|---|---|---|---|" + "---|" * len(FRACTIONS))
    for key, r in base.items():
        if r["source"] == "inferencex" and r["model"] == "gpt-oss-120b" and r["metric"] in METRICS:
            errs = []
            for fr in FRACTIONS:
                other = {(x["id"], x["metric"]): x for x in runs[fr]}[key]
                errs.append(f"{100 * float(other['error']):+.1f}")
            print(
                f"| {key[0].split(':')[-1]} | {r['system']} | {r['isl']} | {key[1]} | {r['measured']} | {' | '.join(errs)} |"
            )
    for fr in FRACTIONS[1:]:
        moved = {
            (x["model"], x["framework"])
            for x in runs[fr]
            if (x["id"], x["metric"]) in base and x["predicted"] != base[(x["id"], x["metric"])]["predicted"]
        }
        print(f"rows that move at {fr}: {sorted(moved)}")
    print("\n| system | metric | " + " | ".join(f"n, med / p90 / bias % at {f or 'shipped'}" for f in FRACTIONS) + " |")
    print("|---|---|" + "---|" * len(FRACTIONS))
    groups = {fr: goal_groups(runs[fr]) for fr in FRACTIONS}
    for key in groups[None]:
        cells = [
            "{} {:.1f} / {:.1f} / {:+.1f}".format(g[0], 100 * g[1], 100 * g[2], 100 * g[3])
            for g in (groups[f][key] for f in FRACTIONS)
        ]
        print(f"| {key[0]} | {key[1]} | {' | '.join(cells)} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", action="store_true", help="price the MI300X / MI325X rows at each fraction (~40 s)")
    a = ap.parse_args()
    print(
        f"gpt-oss prompt: BLOCK_M {prompt_block_m(8, 8192)} (8k), {prompt_block_m(8, 1024)} (1k), "
        f"{prompt_block_m(8, 128)} (a 128-token chunk); FLOP per K/V byte at BF16 KV: "
        f"{flop_per_kv_byte(prompt_block_m(8, 8192), 2):g} / {flop_per_kv_byte(BLOCK_M_SHORT, 2):g}"
    )
    print("| source | chip | shape | TFLOP/s | of dense BF16 peak |\n|---|---|---|---|---|")
    for src, chip, shape, tf, peak in PUBLISHED:
        print(f"| {src} | {chip} | {shape} | {tf:g} | {tf / peak:.3f} |")
    if a.variants:
        variants()


if __name__ == "__main__":
    main()
