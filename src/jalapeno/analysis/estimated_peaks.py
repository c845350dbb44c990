"""Say when a compared system's figures rest on a peak its file marks as an estimate.

A compute-bound step's time scales with 1 / the peak FLOP/s of the format its heaviest GEMMs run in:
an MoE model's routed experts (a dense model's FFN). Where that format's ``chip.peak_dense_tflops``
is marked ``estimate = true`` in the system's file (Jalapeño's BF16 peak: FP8 / 2, not reported),
every compute-bound frontier point scales with an unreported number. Kimi K2.5's INT4 release is
weight-only (W4A16): its experts are dequantised and multiplied in BF16 (specs/formats.py ``int4``),
so on Jalapeño its compare answer moves 1:1 with that estimate (docs/model.md §12). ``compare`` prints
these lines on stderr. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from jalapeno.analysis.records import ComparisonRecord
from jalapeno.errors import JalapenoError
from jalapeno.specs.formats import get_precision
from jalapeno.specs.hardware import System
from jalapeno.specs.model import ModelSpec


def bound_format(model: ModelSpec, precision: str) -> str | None:
    """The format the heaviest GEMMs of ``model`` compute in under ``precision``: the routed experts'
    of an MoE model, the dense FFN's otherwise; None for a precision name that is not a preset.

    >>> from jalapeno.specs.catalog import load_model
    >>> bound_format(load_model("kimi-k2.5"), "int4"), bound_format(load_model("deepseek-r1"), "fp4")
    ('bf16', 'fp4')
    """
    try:
        prec = get_precision(precision)
    except JalapenoError:
        return None
    mod = prec.modules.get("routed_experts" if model.moe is not None else "dense_ffn")
    return None if mod is None else mod.compute


def estimated_peak_notes(rec: ComparisonRecord, systems: Mapping[str, System], model: ModelSpec) -> list[str]:
    """One line per (system, precision) whose frontier has compute-bound points and whose bound
    format's peak (:func:`bound_format`) the system's file marks as an estimate: how many points,
    their per-user speeds, the peak and its source, and how to test it."""
    out = []
    for name, fr in rec.systems.items():
        s = systems.get(name)
        if s is None:
            continue
        by_prec: dict[str, list[float]] = {}
        for p in fr.frontier:
            if p.bound == "compute":
                by_prec.setdefault(p.deployment.precision.name, []).append(p.interactivity)
        for prec, xs in by_prec.items():
            fmt = bound_format(model, prec)
            src = s.sources.get(f"chip.peak_dense_tflops.{fmt}", "")
            if fmt is None or "(estimate)" not in src or "(--set;" in src or fmt not in s.chip.peak_flop_per_s:
                continue  # no estimate, or the user's own value (--set): nothing to say
            n = sum(1 for p in fr.frontier if p.deployment.precision.name == prec)
            what = "routed experts" if model.moe is not None else "dense FFN"
            span = f"{min(xs):.0f}" if f"{min(xs):.0f}" == f"{max(xs):.0f}" else f"{min(xs):.0f}-{max(xs):.0f}"
            out.append(f"{name}: {len(xs)} of its {n} {prec} frontier points ({span} tok/s/user) "
                       f"{'is' if len(xs) == 1 else 'are'} compute-bound, and {model.name}'s {what} compute in {fmt.upper()} under {prec}, whose peak on "
                       f"{name}, {s.chip.peak_flop_per_s[fmt] / 1e12:,.0f} TFLOP/s, is an estimate ({src}): those "
                       f"points scale with it; test with --set chip.peak_dense_tflops.{fmt}=VALUE or `jalapeno audit` "
                       "(docs/model.md §12)")
    return out
