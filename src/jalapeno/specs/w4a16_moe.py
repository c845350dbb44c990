"""Weight-only INT4 (W4A16) routed experts priced by the chip's measured grouped-MoE kernel (kimiw4a16_41, round 41).

A W4A16 routed-expert op (Kimi K2.5's release: INT4 g32 weights, BF16 activations and math) is priced, on a
set whose ``moe[bf16]`` has no peak fraction or half rows of its own, by the dense BF16 GEMM's rule
(specs/efficiency.Efficiency.moe_peak / moe_half fall back to ``gemm[bf16]``: 0.765 of peak, 215 rows to half on
GB300), a rule no measured point tests for these experts (docs/model.md §11.3). What the engines run instead on
the SM100 family (B200, B300, GB200, GB300), both measured there by aiconfigurator-core 0.12.0 at Kimi K2.5's shape
(data/w4a16_moe_forms.toml, fit/w4a16_forms.py):

- SGLang: FlashInfer's trtllm-gen MXINT4 x BF16 MoE (``--moe-runner-backend flashinfer_trtllm``, sgl-project/sglang
  PR #16892, 2026-01; the default on Blackwell since PR #18136, 2026-02): tcgen05 BF16 math; fitted pf 0.32-0.36 of
  the BF16 peak, half 54-56 rows, HBM 0.60-0.62, 26-28 µs per layer (``mxint4``);
- vLLM: Marlin MoE unless ``VLLM_USE_FLASHINFER_MOE_INT4=1`` (default ``0``, vllm/envs.py;
  ``is_flashinfer_mxint4_moe_available`` needs it and ``is_device_capability_family(100)``,
  vllm/model_executor/layers/quantization/utils/flashinfer_mxint4_moe.py, vllm-project/vllm PR #32437): SM80
  ``mma.sync`` BF16 math, pf 0.09 of the BF16 peak in one form over every expert TP, 47-50 µs per layer (``marlin``;
  a vLLM pool naming ``marlin`` keeps its chip's own width-term form, cost/moe_backend.KernelMoePricer).

:func:`with_w4a16_form` gives the set of a chip in the file a ``moe["w4a16"]`` entry with its own measured form of
:data:`W4A16_KERNEL` (the fastest measured path, as a calibrated set prices: MXINT4 reaches 3.7-3.9x Marlin's peak
fraction at 0.55-0.58x its floor); cost/ops.py keys a W4A16 expert op ``w4a16`` where the set has that entry
(:func:`w4a16_key`) and specs/efficiency.Efficiency.moe_entry prices it there. :data:`W4A16_DERIVED` extends the
entry to a derived set (Jalapeño, Vera Rubin: derived from GB300, docs/model.md §11.2) as its source chip's form:
GPU kernel behaviour on a chip with its own compiler, a named assumption.

Shipped on, derived sets included (:data:`W4A16_FORM_ON`, :data:`W4A16_DERIVED`; kimion41, round 41): the forms
replace an untested rule that B200's Kimi K2.5 INT4 rows show 11-43% off (the dense BF16 rule prices them 11% too
fast at decode, 43% at prefill; docs/model.md §11.3), like for like: the measured chips take their own kernel's form
and the derived sets borrow their source chip's, as they borrow every other kernel form. No validate row moves
(0 of 4,049 held-out pairs: no measured point runs W4A16 experts on a chip with a form); what moves is ``compare``'s
Kimi K2.5 headline (GB300 9,694 → 8,543 tok/s/chip, Jalapeño / GB300 0.707 → 0.676) and the explorer's designs
(docs/explore.md §3). The forms are tested on the kernel tables (held-out token counts; B200's form on the other
three chips; figures: docs/model.md §11.3, ``scripts/w4a16_moe_form.py``).
"""

from __future__ import annotations

import math
import tomllib
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

from jalapeno.specs.efficiency import MOE_W4A16_KEY, Efficiency

#: the switch (module docstring): on, the measured chips price W4A16 experts by their own kernel's form (off: every
#: set by the dense BF16 GEMM rule, as before round 41)
W4A16_FORM_ON = True
#: with the switch on, also give a derived set (no tables of its own) its source chip's form (on: a named assumption,
#: module docstring)
W4A16_DERIVED = True
#: the kernel whose measured form a set takes (data/w4a16_moe_forms.toml ``kernel``: ``mxint4`` or ``marlin``)
W4A16_KERNEL = "mxint4"
#: the ``moe`` entry and op key of weight-only INT4 routed experts
W4A16_KEY = MOE_W4A16_KEY
#: stored formats of weight-only INT4 experts (specs/formats.py: ``int4`` g32, ``int4_g64``, ``int4_g128``)
W4A16_WEIGHTS = ("int4", "int4_g64", "int4_g128")


#: the kernels a form may name (module docstring: SGLang's MXINT4, vLLM's Marlin)
W4A16_KERNELS = ("mxint4", "marlin")
#: each form's priced fields (and its band's error) and the open-closed range it must lie in: fractions in (0, 1]; half rows >= 0 (rows per
#: expert); the per-layer floor in seconds, at most 1 ms (the fitted floors are 26-50 µs: a floor written in µs is
#: 10^6 too big; the same bound as ``--set efficiency.moe.*.floor_s``)
#: (lowest, whether the lowest is allowed, highest, what it is)
_FORM_RANGES = {
    "peak_fraction": (0.0, False, 1.0, "a fraction of the chip's BF16 peak in (0, 1]"),
    "half_rows": (0.0, True, math.inf, "rows per expert to half the peak fraction, >= 0"),
    "hbm_fraction": (0.0, False, 1.0, "a fraction of the HBM bandwidth in (0, 1]"),
    "floor_s": (0.0, True, 1e-3, "seconds per layer in [0, 1e-3], e.g. 2.7e-5 (27 µs)"),
    # not priced, but the audit's and sensitivity's band of the form (:func:`w4a16_band`): a missing one
    # raised KeyError there, a negative one swapped the band's ends, "0.08" was read as a number (break42)
    "held_out_median_ape": (
        0.0,
        True,
        1.0,
        "the held-out median error as a fraction in [0, 1], e.g. 0.076 (7.6%), not a percentage",
    ),
}


def parse_w4a16_forms(text: str, where: str = "data/w4a16_moe_forms.toml") -> dict:
    """(system, kernel) → the form of each ``[[form]]`` table of ``text`` (peak_fraction, half_rows, hbm_fraction,
    floor_s, and the fit's table and errors, kept as written).

    Raises:
        SpecError: malformed TOML; a form without a ``system`` name or with a ``kernel`` not in
            :data:`W4A16_KERNELS`; a priced field missing, not a number, not finite or out of its range
            (``_FORM_RANGES``); a (system, kernel) given twice (the later one was read, silently). Each names
            ``where``, the form and the field, and says to rerun scripts/fit_w4a16_forms.py (the file's writer).
    """
    from jalapeno.errors import SpecError

    regen = "rerun scripts/fit_w4a16_forms.py, which writes the file"
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(where, f"malformed TOML: {e}", regen) from None
    forms = raw.get("form", [])
    if not isinstance(forms, list):
        raise SpecError(f"{where}: form", f"must be [[form]] tables, got {type(forms).__name__}", regen)
    out: dict = {}
    for i, f in enumerate(forms):
        name = f.get("system") if isinstance(f, dict) else None
        if not isinstance(name, str) or not name:
            raise SpecError(f"{where}: form[{i}].system", f"missing or not a name: {name!r}", regen)
        at = f"{where}: form {name}/{f.get('kernel')}"
        if f.get("kernel") not in W4A16_KERNELS:
            raise SpecError(f"{at}.kernel", f"{f.get('kernel')!r} is not one of {', '.join(W4A16_KERNELS)}", regen)
        for key, (lo, lo_ok, hi, what) in _FORM_RANGES.items():
            v = f.get(key)
            if (
                isinstance(v, bool)
                or not isinstance(v, (int, float))
                or not math.isfinite(v)
                or not (lo < v <= hi or (lo_ok and v == lo))
            ):
                raise SpecError(f"{at}.{key}", f"must be {what}, got {v!r}", regen)
        if (name, f["kernel"]) in out:
            raise SpecError(at, "given twice", f"keep one form per system and kernel; {regen}")
        out[(name, f["kernel"])] = MappingProxyType(f)
    return out


@lru_cache(maxsize=1)
def w4a16_forms() -> dict:
    """(system, kernel) → the fitted form of data/w4a16_moe_forms.toml (:func:`parse_w4a16_forms`).

    Raises:
        SpecError: the file is malformed (:func:`parse_w4a16_forms`).
    """
    return parse_w4a16_forms((resources.files("jalapeno") / "data" / "w4a16_moe_forms.toml").read_text())


def w4a16_source(system: str, derived_from: str | None = None) -> str | None:
    """The chip whose measured :data:`W4A16_KERNEL` form a set of ``system`` (derived from ``derived_from``, None:
    measured) takes for its W4A16 experts, or None (switch off, a chip without the table, a derived set with
    :data:`W4A16_DERIVED` off).

    >>> w4a16_source("gb300-nvl72"), w4a16_source("jalapeno", "gb300-nvl72"), w4a16_source("h200")
    ('gb300-nvl72', 'gb300-nvl72', None)
    """
    if not W4A16_FORM_ON:
        return None
    if (system, W4A16_KERNEL) in w4a16_forms():
        return system
    if W4A16_DERIVED and derived_from is not None and (derived_from, W4A16_KERNEL) in w4a16_forms():
        return derived_from
    return None


def w4a16_band(system: str, derived_from: str | None = None) -> tuple[float, str] | None:
    """(error, label) of the W4A16 form a set of ``system`` takes (:func:`w4a16_source`): ``error`` is the form's
    median absolute error on its own table's held-out rows (a fraction; the declared split of fit/w4a16_forms.py:
    odd powers of two of tokens held out, data/w4a16_moe_forms.toml ``held_out_median_ape``), ``label`` says so for
    the audit and sensitivity; None where the set has no form.

    >>> w4a16_band("jalapeno", "gb300-nvl72")[1]
    "W4A16 form's held-out error ±8.9% (gb300-nvl72 mxint4: odd powers of two of tokens; data/w4a16_moe_forms.toml)"
    """
    src = w4a16_source(system, derived_from)
    if src is None:
        return None
    e = float(w4a16_forms()[(src, W4A16_KERNEL)]["held_out_median_ape"])
    label = (
        f"W4A16 form's held-out error ±{100 * e:.1f}% ({src} {W4A16_KERNEL}: odd powers of two of tokens; "
        "data/w4a16_moe_forms.toml)"
    )
    return e, label


def band_form(form: dict, which: str, error: float) -> dict:
    """The form's (peak_fraction, half_rows, hbm_fraction, floor_s) at the ``which`` end (``low``: slow, ``high``:
    fast; anything else: the form itself) of a band of ``error`` (a fraction), as fit/calibrate.band_values moves a
    derived set: fractions divided (low) or multiplied (high, capped at 1) by 1 + error, half rows and the floor
    multiplied (low) or divided (high), so the experts' compute, stream and floor terms each move by about 1 + error.

    >>> band_form({"peak_fraction": 0.5, "half_rows": 50.0, "hbm_fraction": 0.95, "floor_s": 2e-5}, "high", 0.1)
    {'peak_fraction': 0.55, 'half_rows': 45.45454545454545, 'hbm_fraction': 1.0, 'floor_s': 1.8181818181818182e-05}
    """
    f = 1.0 + error
    v = {k: form[k] for k in ("peak_fraction", "half_rows", "hbm_fraction", "floor_s")}
    if which == "low":
        return {k: x / f if k.endswith("_fraction") else x * f for k, x in v.items()}
    if which == "high":
        return {k: min(x * f, 1.0) if k.endswith("_fraction") else x / f for k, x in v.items()}
    return v


def with_w4a16_form(
    eff: Efficiency, system: str, derived_from: str | None = None, which: str = "calibrated"
) -> Efficiency:
    """``eff`` with ``moe["w4a16"]`` set to :func:`w4a16_source`'s measured form (peak_fraction, half_rows,
    hbm_fraction, floor_s), or ``eff`` itself where there is none. A derived set's (``derived_from`` given) ``low``
    and ``high`` sets take the form at the ends of its own held-out error (:func:`w4a16_band`, :func:`band_form`; a
    measured chip's sets have no band, as specs/calibration's measured sets have none).

    Raises:
        SpecError: :data:`W4A16_KERNEL` names no kernel of data/w4a16_moe_forms.toml.
    """
    if W4A16_FORM_ON and W4A16_KERNEL not in {k for _, k in w4a16_forms()}:
        from jalapeno.errors import SpecError

        raise SpecError(
            "w4a16_moe.W4A16_KERNEL",
            f"{W4A16_KERNEL!r} is no kernel of data/w4a16_moe_forms.toml",
            f"use one of {', '.join(sorted({k for _, k in w4a16_forms()}))}",
        )
    src = w4a16_source(system, derived_from)
    if src is None:
        return eff
    f = w4a16_forms()[(src, W4A16_KERNEL)]
    band = w4a16_band(system, derived_from) if derived_from is not None else None
    return eff.with_kernel("moe", W4A16_KEY, **band_form(f, which if band else "calibrated", band[0] if band else 0.0))


def w4a16_key(stored: str, eff: Efficiency) -> str:
    """The op key of routed experts stored in ``stored`` under ``eff``: :data:`W4A16_KEY` for weight-only INT4
    experts where ``eff`` has that ``moe`` entry, else "" (priced by their compute format).

    >>> w4a16_key("int4", Efficiency()), w4a16_key("int4", Efficiency().with_kernel("moe", "w4a16", half_rows=19.0))
    ('', 'w4a16')
    """
    return W4A16_KEY if stored in W4A16_WEIGHTS and W4A16_KEY in eff.moe else ""
