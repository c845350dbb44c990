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
A disaggregated point's prefill pool counts too when it is compute-bound (``prefill_bound``; ``bound``
is the decode step's), in the formats of the prefill step's wide GEMMs (:func:`prefill_compute_formats`),
weighted by its share of the point's chips: at 8K/1K under FP4 Vera Rubin's decode steps are
HBM-bound but 16 of its 21 frontier points have a compute-bound prefill pool running the MLA math in
FP8, an inferred peak (bound31). ``compare`` prints these lines on stderr. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from jalapeno.analysis.records import ComparisonRecord
from jalapeno.errors import JalapenoError
from jalapeno.specs.catalog import hardware_show_name
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


#: the modules other than the heaviest GEMMs whose GEMMs a prefill step runs compute-bound, in the
#: words the note uses (a prefill step carries thousands of tokens: every projection is a wide GEMM)
_PREFILL_MODULES = {"attention": "attention projections", "shared_experts": "shared experts", "dense_ffn": "dense FFN"}


def prefill_compute_formats(model: ModelSpec, precision: str | Precision) -> list[tuple[str, str]]:
    """What a compute-bound prefill step of ``model`` scales with under ``precision``: the
    :func:`compute_formats` entries, then one entry per further format the attention projections,
    shared experts or dense FFN compute in. A prefill step's GEMMs carry thousands of tokens, so
    its projections are compute-bound too (``jalapeno step -s jalapeno --batch 0 --prefill-tokens
    16384``, DeepSeek-R1 FP8 DEP8: MLA prefill math 718 ms in BF16, o_proj 114 ms, q_b_proj 37 ms,
    shared experts 41 ms and routed experts 51 ms in FP8, of 1,014 ms compute). With every preset in
    the catalog the projections share a listed format; they add one when ``--attention-dtype``
    moves the attention math off it (``fp4`` with BF16 attention math: projections in FP8).

    >>> from jalapeno.specs.catalog import load_model
    >>> from jalapeno.specs.formats import get_precision
    >>> [f for _, f in prefill_compute_formats(load_model("deepseek-r1"), "fp8")]
    ['fp8', 'bf16']
    >>> prefill_compute_formats(load_model("deepseek-r1"), get_precision("fp4").with_options(attention="bf16"))[2]
    ('attention projections, shared experts, dense FFN compute', 'fp8')
    """
    if isinstance(precision, str):
        try:
            precision = get_precision(precision)
        except JalapenoError:
            return []
    out = compute_formats(model, precision)
    extra: dict[str, list[str]] = {}
    for mod, words in _PREFILL_MODULES.items():
        m = precision.modules.get(mod)
        if m is not None and all(f != m.compute for _, f in out):
            extra.setdefault(m.compute, []).append(words)
    return out + [(", ".join(w) + " compute", f) for f, w in extra.items()]


def _first_clause(source: str) -> str:
    """A peak's source, cut at its first ``;`` or `` (``: what the value is and where it comes from, short
    enough for a note (the whole text is `jalapeno hardware show NAME`'s).

    >>> _first_clause("inferred: keynote, 18 Mar 2025 (NVL144: 1.2 EF): 1.2 EF / 72 = 16.7 PF; no per-GPU figure")
    'inferred: keynote, 18 Mar 2025'
    >>> _first_clause("assumption: FP8 / 2 as on every chip; not reported")
    'assumption: FP8 / 2 as on every chip'
    """
    cut = min((i for i in (source.find("; "), source.find(" (")) if i > 0), default=len(source))
    return source[:cut].rstrip(" :,")


def estimated_peak_notes(rec: ComparisonRecord, systems: Mapping[str, System], model: ModelSpec) -> list[str]:
    """One line per (system, precision, format) whose frontier has compute-bound work in that format
    on a peak the system's file marks as an estimate: how many points, their per-user speeds, the
    peak and its source, and how to test it. Formats of one system and precision whose points are the
    same share one line, naming each peak (Vera Rubin: FP8 and BF16, both estimates).

    A point's compute-bound work: its decode step when ``bound`` is compute (:func:`compute_formats`:
    the heaviest GEMMs' and the attention math's formats) and, when disaggregated, its prefill pool
    when ``prefill_bound`` is compute (:func:`prefill_compute_formats`). Where a prefill pool counts,
    the line also says how many points count by which pool and their chip-weighted number:
    Σ over the points of the share of their chips that runs such a step, the decode pool's
    1 − ``prefill_chip_share`` (1 aggregated) and the prefill pool's ``prefill_chip_share``."""
    out = []
    for name, fr in rec.systems.items():
        s = systems.get(name)
        if s is None:
            continue
        by_prec: dict[str, list] = {}
        for p in fr.frontier:
            by_prec.setdefault(p.deployment.precision.name, []).append(p)
        for prec, pts in by_prec.items():
            precision = pts[0].deployment.precision
            dec_fmts = {f for _, f in compute_formats(model, precision)}
            groups: dict[tuple, list[tuple[str, str, str]]] = {}  # one line per set of points: formats merged
            for what, fmt in prefill_compute_formats(model, precision):
                src = s.sources.get(f"chip.peak_dense_tflops.{fmt}", "")
                if "(estimate)" not in src or "(--set;" in src or fmt not in s.chip.peak_flop_per_s:
                    continue  # no estimate, or the user's own value (--set): nothing to say
                dec = [p.bound == "compute" and fmt in dec_fmts for p in pts]
                pre = [p.prefill_bound == "compute" for p in pts]
                xs = [p.interactivity for p, d, q in zip(pts, dec, pre) if d or q]
                if not xs:
                    continue
                lo, hi = f"{min(xs):.0f}", f"{max(xs):.0f}"
                span = lo if lo == hi else f"{lo}-{hi}"
                how = ""
                if any(pre):
                    w = sum(
                        (1.0 - p.prefill_chip_share) * d + p.prefill_chip_share * q for p, d, q in zip(pts, dec, pre)
                    )
                    how = (
                        f" ({sum(dec)} in the decode step, {sum(pre)} in the prefill pool; weighted by the share "
                        f"of their chips that runs those steps, {w:.1f} of {len(pts)})"
                    )
                head = (
                    f"{name}: {len(xs)} of its {len(pts)} {prec} frontier points ({span} tok/s/user) "
                    f"{'is' if len(xs) == 1 else 'are'} compute-bound{how}"
                )
                groups.setdefault((tuple(xs), head), []).append((what, fmt, src))
            for (_, head), fs in groups.items():
                out.append(_note_line(name, head, fs, model, s, prec))
    return out


def _note_line(name: str, head: str, fs: list[tuple[str, str, str]], model: ModelSpec, s: System, prec: str) -> str:
    """One note for the formats whose estimated peaks the same points rest on: Vera Rubin's gpt-oss-120b points
    printed two 500-character notes, word for word alike but for 'routed experts ... FP8' and 'attention math
    ... BF16', one per format; they now read as one line naming both peaks."""
    tf = [f"{s.chip.peak_flop_per_s[f] / 1e12:,.0f}" for _, f, _ in fs]
    where = f"the whole source: `jalapeno hardware show {hardware_show_name(s)}`"
    if len(fs) == 1:
        ((what, fmt, src),) = fs
        return (
            f"{head}, and {model.name}'s {what} in {fmt.upper()} under {prec}, whose peak on {name}, "
            f"{tf[0]} TFLOP/s, is an estimate ({_first_clause(src)}; {where}): those points scale with it; test "
            f"with --set chip.peak_dense_tflops.{fmt}=VALUE or `jalapeno audit` (docs/model.md §12)"
        )
    works = " and ".join(f"{what} in {fmt.upper()}" for what, fmt, _ in fs)
    peaks = " and ".join(f"{fmt.upper()} {t} TFLOP/s ({_first_clause(src)})" for (_, fmt, src), t in zip(fs, tf))
    sets = ", ".join(f"--set chip.peak_dense_tflops.{fmt}=VALUE" for _, fmt, _ in fs)
    return (
        f"{head}, and {model.name}'s {works} under {prec}, whose peaks on {name}, {peaks}, are estimates "
        f"({where}): those points scale with them; test with {sets} or `jalapeno audit` (docs/model.md §12)"
    )
