"""Say when a compared system's figures rest on a peak its file marks as an estimate.

A compute-bound step's time scales with 1 / the peak FLOP/s of the formats its heaviest work runs in:
an MoE model's routed experts (a dense model's FFN) and the attention math over the context (scores
and softmax·V, ``Precision.attention_compute``). Where such a format's ``chip.peak_dense_tflops`` is
marked ``estimate = true`` in the system's file (Jalapeño's BF16 peak: FP8 / 2, not reported), every
compute-bound frontier point scales with an unreported number. Kimi K2.5's INT4 release is
weight-only (W4A16): its experts are dequantised and multiplied in BF16 (specs/formats.py ``int4``),
so on Jalapeño its compare answer moves 1:1 with that estimate (docs/model.md §12). DeepSeek-R1's FP8
release runs its MLA math in BF16: at 8K/1K the MLA decode is the largest op of Jalapeño's decode
step (38 of 71 ms at DP16, batch 4,096) and the FP8 frontier moves 5-10% for a 20% change of that
estimate (docs/audit.md §6), which the experts' format alone (FP8, reported) did not say.
``compare`` prints these lines on stderr. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from jalapeno.analysis.records import ComparisonRecord
from jalapeno.errors import JalapenoError
from jalapeno.specs.formats import Precision, get_precision
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


def compute_formats(model: ModelSpec, precision: str | Precision) -> list[tuple[str, str]]:
    """What a compute-bound step of ``model`` scales with under ``precision`` (a preset name or a
    Precision, --attention-dtype included): (what computes, format) for the heaviest GEMMs
    (:func:`bound_format`) and for the attention math (``Precision.attention_compute``), one entry
    per format, the GEMMs' first; [] for a name that is not a preset.

    >>> from jalapeno.specs.catalog import load_model
    >>> compute_formats(load_model("deepseek-r1"), "fp8")
    [('routed experts compute', 'fp8'), ('attention math (scores, softmax·V) computes', 'bf16')]
    >>> compute_formats(load_model("deepseek-r1"), "fp4")
    [('routed experts compute', 'fp4'), ('attention math (scores, softmax·V) computes', 'fp8')]
    """
    if isinstance(precision, str):
        try:
            precision = get_precision(precision)
        except JalapenoError:
            return []
    moe = model.moe is not None
    mod = precision.modules.get("routed_experts" if moe else "dense_ffn")
    out = [] if mod is None else [("routed experts compute" if moe else "dense FFN computes", mod.compute)]
    if all(f != precision.attention_compute for _, f in out):
        out.append(("attention math (scores, softmax·V) computes", precision.attention_compute))
    return out


def estimated_peak_notes(rec: ComparisonRecord, systems: Mapping[str, System], model: ModelSpec) -> list[str]:
    """One line per (system, precision, format) whose frontier has compute-bound points and where a
    format those points scale with (:func:`compute_formats`: the heaviest GEMMs' and the attention
    math's) has a peak the system's file marks as an estimate: how many points, their per-user
    speeds, the peak and its source, and how to test it."""
    out = []
    for name, fr in rec.systems.items():
        s = systems.get(name)
        if s is None:
            continue
        by_prec: dict[str, list[float]] = {}
        precs: dict[str, Precision] = {}
        for p in fr.frontier:
            if p.bound == "compute":
                by_prec.setdefault(p.deployment.precision.name, []).append(p.interactivity)
                precs[p.deployment.precision.name] = p.deployment.precision
        for prec, xs in by_prec.items():
            n = sum(1 for p in fr.frontier if p.deployment.precision.name == prec)
            span = f"{min(xs):.0f}" if f"{min(xs):.0f}" == f"{max(xs):.0f}" else f"{min(xs):.0f}-{max(xs):.0f}"
            for what, fmt in compute_formats(model, precs[prec]):
                src = s.sources.get(f"chip.peak_dense_tflops.{fmt}", "")
                if "(estimate)" not in src or "(--set;" in src or fmt not in s.chip.peak_flop_per_s:
                    continue  # no estimate, or the user's own value (--set): nothing to say
                out.append(f"{name}: {len(xs)} of its {n} {prec} frontier points ({span} tok/s/user) "
                           f"{'is' if len(xs) == 1 else 'are'} compute-bound, and {model.name}'s {what} in {fmt.upper()} under {prec}, whose peak on "
                           f"{name}, {s.chip.peak_flop_per_s[fmt] / 1e12:,.0f} TFLOP/s, is an estimate ({src}): those "
                           f"points scale with it; test with --set chip.peak_dense_tflops.{fmt}=VALUE or `jalapeno audit` "
                           "(docs/model.md §12)")
    return out
