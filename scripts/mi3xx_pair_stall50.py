"""MI300X against MI325X on one image, with the prompts' stall taken out of the TPOT: how much of the measured 1.14-1.15
TPOT ratio is decode, and which per-chip term would give it (mi325x50; docs/gap_large_batch_decode.md, round 50).

Round 40 (scripts/gfx942_pair_law40.py) read the same-image TPOT pairs as decode steps: T_MI300X = 1.130 x T_MI325X +
0.8 ms, the HBM ratio 6.0 / 5.3 = 1.132 with no room for chip-independent time. But a measured TPOT is the decode step
plus the stall of the prompts prefilled while a user decodes (serve/point; tpot_split.py's "stall" column), and the
pairs' median TTFTs differ by 1.32-1.35x (rows 26/28, 34/35, 44/45), where the model prices both chips' prompts alike
(TTFT ratio 1.00). This script splits each pair three ways and asks, for each, what per-chip term the decode step
would need.

The model's decode-only step on each chip (tpot_split._decode_only: serve/open_loop.decode_pool_step at the served
decode batch and the workload's decode context) splits exactly into time that scales with the HBM ratio h and time
priced alike on both chips (:func:`hbm_split`): with POWER_CLOCK and GFX942_TABLE_CLOCK off (as shipped) the two gfx942
sets share every fraction, so S_MI300X - S_MI325X = (h - 1) H and F = S_MI325X - H.

Readings of the measured TPOTs (decode step implied on each chip):

- ``whole``: the whole TPOT is decode (round 40).
- ``equal_stall``: TPOT less the model's stall, the same on both chips (the model's prompt price is the same on both).
- ``ttft_stall``: TPOT less the model's stall scaled by the row's measured / modelled TTFT (:func:`stall_at_ttft`):
  a prompt that takes 1.35x longer to its first token on MI300X stalls the decoding users 1.35x longer. A diagnosis
  only: it reads each row's own measured TTFT, so it can never be a prediction.

For each reading and pair: the chip-independent time the pair allows (gfx942_pair_law40.fixed_time_allowed), the
MI325X / MI300X achieved-HBM-fraction ratio e that would give the implied ratio with the model's F unchanged
(:func:`hbm_efficiency_needed`), and the clock ratio c on the model's F with H at h (:func:`clock_needed`); the
bound on c is AMD's max-achievable clock ratio 1,464 / 1,230 = 1.190 (fit/amd.SUSTAINED_CLOCK_MHZ). ``--rows`` prints
instead the HBM-scaled share of the model's decode step for MI325X's held-out rows, each priced at its own
deployment on both chips' sets; ``--experts`` the gpt-oss-120b routed experts' price against the time the measured
TPOT implies (tpot_split.py --moe) and the HBM fraction each reads as (:func:`hbm_fraction_implied`).

Nothing is fitted and no prediction moves.

Run: python scripts/mi3xx_pair_stall50.py [--rows | --experts]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jalapeno.errors import SpecError
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.specs.catalog import load_system

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gfx942_pair_law40 import CLOCK_RATIO, HBM_RATIO, fixed_time_allowed  # noqa: E402  (sibling scripts)
from tpot_split import _decode_only  # noqa: E402
from _served_point import served_point  # noqa: E402

#: same-image MI325X / MI300X pairs (inferencex_points row ids): DeepSeek-R1 FP8 SGLang v0.5.9 TP8 C 64 8k/1k and
#: 1k/1k (InferenceX f267602ff, PR #816, 2026-02-27), gpt-oss-120b vLLM v0.17.0 TP1 C 64 8k/1k (2026-03-09)
PAIRS = ((26, 28, "DeepSeek-R1 8k/1k"), (34, 35, "DeepSeek-R1 1k/1k"), (44, 45, "gpt-oss-120b 8k/1k"))
#: MI325X's held-out InferenceX rows (base split; goals issue 18)
MI325X_ROWS = (26, 34, 44, 51, 77, 79)
#: gpt-oss-120b vLLM-ROCm C 64 rows: MI325X TP1 8k (44), MI300X TP1 8k (45), MI325X TP2 1k (51), MI300X TP1 1k (53)
GPTOSS_ROWS = (44, 45, 51, 53)
READINGS = ("whole", "equal_stall", "ttft_stall")


def hbm_split(s_325: float, s_300: float, h: float = HBM_RATIO) -> tuple[float, float]:
    """(H, F) of MI325X's modelled step s_325 (any time unit): H the part that scales by ``h`` to MI300X's s_300, F the
    part priced alike, s_300 = h H + F, s_325 = H + F.

    Raises:
        SpecError: ``h`` is 1 (the split is undetermined).
    """
    if h == 1.0:
        raise SpecError("h", "an HBM ratio of 1 leaves the split undetermined", "pass the chips' HBM ratio (> 1)")
    hbm = (s_300 - s_325) / (h - 1.0)
    return hbm, s_325 - hbm


def stall_at_ttft(stall: float, ttft_measured: float, ttft_model: float) -> float:
    """The modelled prompt stall scaled by the row's measured / modelled TTFT (same unit as ``stall``).

    Raises:
        SpecError: a TTFT is not positive.
    """
    if ttft_measured <= 0 or ttft_model <= 0:
        raise SpecError("ttft", f"measured {ttft_measured}, model {ttft_model}", "pass positive TTFTs")
    return stall * ttft_measured / ttft_model


def hbm_efficiency_needed(ratio: float, hbm: float, fixed: float, h: float = HBM_RATIO) -> float:
    """The MI325X / MI300X achieved-HBM-fraction ratio e that makes (h e H + F) / (H + F) equal ``ratio`` with F
    unchanged: e = (ratio (H + F) - F) / (h H).

    Raises:
        SpecError: ``hbm`` is not positive (no HBM-scaled time to scale).
    """
    if hbm <= 0:
        raise SpecError("hbm", f"HBM-scaled time {hbm}", "the step has no HBM-scaled part; no efficiency can move it")
    return (ratio * (hbm + fixed) - fixed) / (h * hbm)


def clock_needed(ratio: float, hbm: float, fixed: float, h: float = HBM_RATIO) -> float:
    """The MI325X / MI300X clock ratio c on the chip-independent F that makes (h H + c F) / (H + F) equal ``ratio``:
    c = (ratio (H + F) - h H) / F.

    Raises:
        SpecError: ``fixed`` is not positive.
    """
    if fixed <= 0:
        raise SpecError("fixed", f"chip-independent time {fixed}", "the step has no such part; no clock can move it")
    return (ratio * (hbm + fixed) - h * hbm) / fixed


def hbm_fraction_implied(weight_bytes: float, seconds: float, bandwidth: float) -> float:
    """The fraction of ``bandwidth`` (bytes/s) at which ``weight_bytes`` streamed in ``seconds``.

    Raises:
        SpecError: ``seconds`` or ``bandwidth`` is not positive.
    """
    if seconds <= 0 or bandwidth <= 0:
        raise SpecError("seconds", f"time {seconds}, bandwidth {bandwidth}", "pass a positive time and bandwidth")
    return weight_bytes / (seconds * bandwidth)


def implied_step(reading: str, tpot: float, stall: float, ttft_measured: float, ttft_model: float) -> float:
    """The decode step a measured TPOT implies under ``reading`` (module docstring), same unit as ``tpot``.

    Raises:
        SpecError: an unknown reading.
    """
    if reading == "whole":
        return tpot
    if reading == "equal_stall":
        return tpot - stall
    if reading == "ttft_stall":
        return tpot - stall_at_ttft(stall, ttft_measured, ttft_model)
    raise SpecError("reading", f"unknown {reading!r}", f"use one of {', '.join(READINGS)}")


def _points() -> dict[int, object]:
    pts, _ = load_inferencex(DEFAULT_POINTS)
    return {int(p.id.split(":")[1]): p for p in pts if p.id.startswith("inferencex_points:")}


def served(p, system: str | None = None) -> dict[str, float]:
    """Point ``p`` served at its concurrency on ``system`` (default its own), s: decode-only step, TPOT, stall, TTFT."""
    model, pricer, dep, wl, run = served_point(p, system=system)
    step, _ = _decode_only(model, pricer, dep, wl, float(run.decode_batch[0]))
    tpot = float(run.tpot_s[0])
    ttft = float((run.ttft_p50_s if p.ttft_median else run.ttft_s)[0])
    return {"step": step, "tpot": tpot, "stall": tpot - step, "ttft": ttft}


def pair_table() -> None:
    pts = _points()
    print(f"HBM ratio h = {HBM_RATIO:.3f}; max-achievable clock ratio {CLOCK_RATIO:.3f}. Times in ms.\n")
    print(
        "| pair | TPOT meas 325 / 300 | TTFT meas 325 / 300 (ratio) | model step 325 / 300 (ratio) | model H / F | "
        "model stall 325 / 300 | model TTFT 325 / 300 |"
    )
    print("|---|---|---|---|---|---|---|")
    rows = []
    for a, b, label in PAIRS:
        pa, pb = pts[a], pts[b]
        ma, mb = served(pa), served(pb)
        hbm, fixed = hbm_split(ma["step"], mb["step"])
        rows.append((label, pa, pb, ma, mb, hbm, fixed))
        ta, tb = pa.measured["ttft_s"], pb.measured["ttft_s"]
        print(
            f"| {label} ({a}/{b}) | {pa.measured['tpot_s'] * 1e3:.1f} / {pb.measured['tpot_s'] * 1e3:.1f} | "
            f"{ta * 1e3:.0f} / {tb * 1e3:.0f} ({tb / ta:.3f}) | {ma['step'] * 1e3:.1f} / {mb['step'] * 1e3:.1f} "
            f"({mb['step'] / ma['step']:.3f}) | {hbm * 1e3:.1f} / {fixed * 1e3:.1f} ({hbm / ma['step']:.0%} HBM) | "
            f"{ma['stall'] * 1e3:.1f} / {mb['stall'] * 1e3:.1f} | {ma['ttft'] * 1e3:.0f} / {mb['ttft'] * 1e3:.0f} |"
        )
    print(
        "\n| pair | reading | implied step 325 / 300 | ratio (model) | chip-independent time allowed | "
        "HBM-fraction ratio e needed | clock ratio c on F needed |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, pa, pb, ma, mb, hbm, fixed in rows:
        for reading in READINGS:
            sa = implied_step(reading, pa.measured["tpot_s"], ma["stall"], pa.measured["ttft_s"], ma["ttft"])
            sb = implied_step(reading, pb.measured["tpot_s"], mb["stall"], pb.measured["ttft_s"], mb["ttft"])
            r = sb / sa
            print(
                f"| {label} | {reading} | {sa * 1e3:.1f} / {sb * 1e3:.1f} | {r:.3f} ({mb['step'] / ma['step']:.3f}) | "
                f"{fixed_time_allowed(sa, sb) * 1e3:+.1f} (model {fixed * 1e3:.1f}) | "
                f"{hbm_efficiency_needed(r, hbm, fixed):.3f} | {clock_needed(r, hbm, fixed):.3f} |"
            )


def rows_table() -> None:
    pts = _points()
    print("MI325X held-out rows, each at its own deployment on both chips' sets (ms):\n")
    print("| row | model | ISL | C | TPOT meas | TPOT model | step 325 | step 300 | H (share) | F | stall |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in MI325X_ROWS:
        p = pts[n]
        ma, mb = served(p), served(p, "mi300x")
        hbm, fixed = hbm_split(ma["step"], mb["step"])
        print(
            f"| {n} | {p.model} | {p.isl} | {int(p.concurrency)} | {p.measured['tpot_s'] * 1e3:.1f} | "
            f"{ma['tpot'] * 1e3:.1f} | {ma['step'] * 1e3:.1f} | {mb['step'] * 1e3:.1f} | {hbm * 1e3:.1f} "
            f"({hbm / ma['step']:.0%}) | {fixed * 1e3:.1f} | {ma['stall'] * 1e3:.1f} |"
        )


def expert_rates() -> None:
    """The routed experts of the gpt-oss-120b rows: the model's price (compute and HBM sides), the time the measured
    TPOT implies were every other op and the stall right (tpot_split.py --moe), and the HBM fraction each implies."""
    pts = _points()
    print("gpt-oss-120b routed experts, one decode step (ms; fractions of the chip's datasheet HBM):\n")
    print(
        "| row | chip | TP | ISL | expert GB a rank | model compute / HBM side (bound) | model HBM fraction | "
        "implied ms | implied HBM fraction |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for n in GPTOSS_ROWS:
        p = pts[n]
        model, pricer, dep, wl, run = served_point(p)
        batch = float(run.decode_batch[0])
        step, moe = _decode_only(model, pricer, dep, wl, batch)
        sc = decode_pool_step(model, pricer, dep, wl.decode_ctx, [batch])
        rows = [r for r in sc.op_rows(0) if r["op"] == "moe.experts"]
        gb = sum(r["weight_bytes"] for r in rows)
        comp, mem = sum(r["compute_s"] for r in rows), sum(r["memory_s"] for r in rows)
        bw = load_system(p.system).chip.hbm_bandwidth_bytes_per_s
        implied = p.measured["tpot_s"] - (float(run.tpot_s[0]) - step) - (step - moe)
        print(
            f"| {n} | {p.system} | {dep.decode.layout.tp} | {p.isl} | {gb / 1e9:.1f} | {comp * 1e3:.1f} / "
            f"{mem * 1e3:.1f} ({'compute' if comp >= mem else 'HBM'}) | {hbm_fraction_implied(gb, mem, bw):.3f} | "
            f"{implied * 1e3:.1f} | {hbm_fraction_implied(gb, implied, bw):.3f} |"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", action="store_true", help="the HBM-scaled share of MI325X's held-out rows instead")
    ap.add_argument("--experts", action="store_true", help="the gpt-oss-120b routed experts' rates instead")
    args = ap.parse_args()
    if args.rows:
        rows_table()
    elif args.experts:
        expert_rates()
    else:
        pair_table()
