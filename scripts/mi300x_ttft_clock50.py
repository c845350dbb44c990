"""Can MI300X's power-held clock give its slower prompt? (issue 18, round 50; diagnosis, nothing fitted or shipped)

The same-image MI300X / MI325X pairs measure median-TTFT ratios of 1.35 / 1.35 / 1.32 (rows 28/26, 35/34, 45/44) where
the model gives 1.00-1.03; held out, InferenceX MI300X TTFT misses at 20.0 / -20.0 (n 4). The sourced per-chip
candidate is the board-power clock: under AMD's max-achievable dense FP8 GEMM the 750 W MI300X holds 1,230 MHz and the
1,000 W MI325X 1,464 MHz (ROCm blog "Measuring Max-Achievable FLOPs - Part 2", 2025-02-27, Table 1;
fit/amd.SUSTAINED_CLOCK_MHZ), a ratio of 1.190, and the prompt phase is the one a power cap slows (POLCA, arXiv
2308.12908; arXiv 2605.11999 for decode not reaching the cap). Round 41 built it as ``cost/roofline.POWER_CLOCK``
(shipped off: the gfx942 block-scale tables were timed on MI300X, round 42).

Two readings (docs/gap_large_batch_decode.md, round 50 mi300xttft50):

``--bound`` (no pricing): the prompt-speed ratio each pair needs from its measured medians when a chip-independent
host time ``fixed`` (the model's front end for the row's stack) is taken out first, against the clock's 1.190.

``--variants`` (prices in this tree, ~30 s): every MI300X / MI325X TTFT row (scripts/gfx942_ttft_terms44.price_rows)
with POWER_CLOCK off and on at several ``DENSE_UTILISATION`` thresholds, down to 0 (every compute-bound op of every step
at MI300X's clock: the most any clock applied to prefill only can move a prompt), and prints the model's pair ratios
and the held-out MI300X / MI325X TTFT medians. The switches are set for the run and restored; nothing is written.

Run: python scripts/mi300x_ttft_clock50.py [--bound] [--variants]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from contextlib import contextmanager
from pathlib import Path

from jalapeno.errors import SpecError
from jalapeno.fit.amd import SUSTAINED_CLOCK_MHZ

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gfx942_ttft_terms44 import HELD_OUT, price_rows  # noqa: E402  (sibling script)

#: the most a board-power clock can slow MI300X against MI325X: the MAF median clocks, 1,464 / 1,230 = 1.190
CLOCK_RATIO = SUSTAINED_CLOCK_MHZ["mi325x"] / SUSTAINED_CLOCK_MHZ["mi300x"]
#: same-image pairs (MI300X row, MI325X row, label): DeepSeek-R1 FP8 SGLang v0.5.9 TP8 C 64 (InferenceX f267602ff),
#: gpt-oss-120b vLLM v0.17.0 TP1 C 64 (2026-03-09); every row publishes a median TTFT
PAIRS = ((28, 26, "DeepSeek-R1 8k/1k"), (35, 34, "DeepSeek-R1 1k/1k"), (45, 44, "gpt-oss-120b 8k/1k"))
#: the pairs' measured median TTFT, s (data/validation/inferencex_points.csv ttft_s) and the model's front end for
#: the rows' stack, s (serve/ttft_parts frontend_s at main ffe1337f: the sglang-rocm / vllm-rocm front end at the
#: row's ISL, the same on both chips)
MEASURED = {28: 0.6615, 26: 0.4898, 35: 0.1990, 34: 0.1476, 45: 0.4430, 44: 0.3357}
FRONT_END = {28: 0.2165, 26: 0.2165, 35: 0.1036, 34: 0.1036, 45: 0.0803, 44: 0.0803}
#: DENSE_UTILISATION thresholds priced by --variants (None: POWER_CLOCK off, as shipped; 0.25: round 41's declared
#: value; 0: every compute-bound op, the upper bound)
THRESHOLDS = (None, 0.25, 0.15, 0.10, 0.0)


def prefill_ratio_needed(slow_s: float, fast_s: float, fixed_s: float = 0.0) -> float:
    """The ratio of the chip-dependent parts of two TTFTs once a chip-independent ``fixed_s`` is taken out of both:
    (slow - fixed) / (fast - fixed). With fixed 0 it is the measured ratio itself.

    >>> round(prefill_ratio_needed(0.6615, 0.4898), 3), round(prefill_ratio_needed(0.6615, 0.4898, 0.2165), 3)
    (1.351, 1.628)

    Raises:
        SpecError: ``fast_s`` not above ``fixed_s`` (no chip-dependent time left), or a negative ``fixed_s``.
    """
    if fixed_s < 0:
        raise SpecError("fixed_s", f"{fixed_s!r} is negative", "give the chip-independent time in s, >= 0")
    if fast_s <= fixed_s:
        raise SpecError(
            "fast_s",
            f"{fast_s!r} s is not above the fixed {fixed_s!r} s",
            "give a TTFT longer than the chip-independent time it contains",
        )
    return (slow_s - fixed_s) / (fast_s - fixed_s)


@contextmanager
def power_clock(threshold: float | None):
    """cost/roofline.POWER_CLOCK on at DENSE_UTILISATION = ``threshold`` (None: off) for the block; both restored."""
    from jalapeno.cost import roofline

    saved = (roofline.POWER_CLOCK, roofline.DENSE_UTILISATION)
    try:
        roofline.POWER_CLOCK = threshold is not None
        if threshold is not None:
            roofline.DENSE_UTILISATION = threshold
        yield
    finally:
        roofline.POWER_CLOCK, roofline.DENSE_UTILISATION = saved


def summarise(rows: list[dict]) -> dict:
    """Of ``rows`` (gfx942_ttft_terms44.price_rows): the pairs' model ratios MI300X / MI325X of the TTFT statistic
    (``pairs``) and of a lone prompt's prefill step (``prompts``), and the held-out TTFT median |error| per system, %."""
    by = {int(r["id"]): r for r in rows}
    out = {"pairs": {label: by[a]["model"] / by[b]["model"] for a, b, label in PAIRS}}
    for system in ("mi300x", "mi325x"):
        errs = [abs(r["model"] / r["measured"] - 1) for r in rows if r["system"] == system and r["split"] in HELD_OUT]
        out[system] = 100 * statistics.median(errs)
    out["prompts"] = {label: by[a]["prefill_step"]["step"] / by[b]["prefill_step"]["step"] for a, b, label in PAIRS}
    return out


def bound() -> None:
    print(
        f"clock ratio (MAF, {SUSTAINED_CLOCK_MHZ['mi325x']:.0f} / {SUSTAINED_CLOCK_MHZ['mi300x']:.0f} MHz): "
        f"{CLOCK_RATIO:.3f}"
    )
    print("| pair | measured MI300X / MI325X s | ratio | front end s | prompt ratio needed after the front end |")
    print("|---|---|---|---|---|")
    for a, b, label in PAIRS:
        print(
            f"| {label} ({a}/{b}) | {MEASURED[a]:.4f} / {MEASURED[b]:.4f} | {prefill_ratio_needed(MEASURED[a], MEASURED[b]):.3f}"
            f" | {FRONT_END[a]:.4f} | {prefill_ratio_needed(MEASURED[a], MEASURED[b], FRONT_END[a]):.3f} |"
        )


def variants() -> None:
    print(
        "| POWER_CLOCK threshold | "
        + " | ".join(f"{p[2]} model TTFT (lone prompt) ratio" for p in PAIRS)
        + " | held-out TTFT median MI300X / MI325X % |"
    )
    print("|---" * (len(PAIRS) + 2) + "|")
    for t in THRESHOLDS:
        with power_clock(t):
            s = summarise(price_rows())
        name = "off (shipped)" if t is None else f"on, {t:g}"
        print(
            f"| {name} | "
            + " | ".join(f"{s['pairs'][p[2]]:.3f} ({s['prompts'][p[2]]:.3f})" for p in PAIRS)
            + f" | {s['mi300x']:.1f} / {s['mi325x']:.1f} |"
        )
    print(
        "measured pair ratios: "
        + ", ".join(f"{prefill_ratio_needed(MEASURED[a], MEASURED[b]):.3f}" for a, b, _ in PAIRS)
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bound", action="store_true", help="the prompt ratio each pair needs (no pricing)")
    ap.add_argument("--variants", action="store_true", help="price the rows at each POWER_CLOCK threshold")
    a = ap.parse_args()
    if not (a.bound or a.variants):
        ap.error("give --bound and/or --variants")
    if a.bound:
        bound()
    if a.variants:
        variants()


if __name__ == "__main__":
    main()
