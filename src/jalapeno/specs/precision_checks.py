"""Whether a model and a chip can run a precision (specs/formats.Precision), with one clear error each.

:func:`check_precision` refuses a preset the model lacks the modules for, a KV layout for another attention kind,
a KV or compute format the chip has no kernels or tensor cores for (unless the precision allows the documented
fallback, specs/number_formats.COMPUTE_FALLBACK) and FP4 data in a block format the chip's FP4 tensor cores do
not take; :func:`check_fallback_used` refuses a ``--compute-fallback`` that changes nothing; :func:`priced_as`
names the modules whose stored weights are narrower than their compute format. Split from specs/formats.py
(round 50, module budget), which still exports every name here (``MOVED_TO_PRECISION_CHECKS``, a module
``__getattr__``).
"""

from __future__ import annotations

from jalapeno.errors import SpecError
from jalapeno.specs.formats import _MODULE_LABELS, _WEIGHT_LABELS, ATTENTION_FORMATS, MODULES, Precision


def _present_modules(model) -> set[str]:
    present = {"attention", "embedding", "lm_head"}
    if model.num_dense_layers or model.moe is None:
        present.add("dense_ffn")
    if model.moe is not None:
        present.add("routed_experts")
        if model.moe.shared_intermediate:
            present.add("shared_experts")
    return present


def priced_as(precision: Precision, model, chip, efficiency=None) -> list[str]:
    """One line per module of ``model`` whose stored weights are narrower than the compute format the op table
    runs it at on ``chip`` (cost/ops.py: ``compute_for``), naming the efficiency rows that price it: the audit's
    ``moe.fp8`` for gpt-oss-120b's MXFP4 experts read as FP8 experts where they are W4A8 (ux50). Bits: FP4 4,
    FP8 8, BF16 16; a module whose format the chip lacks (no fallback) is left to :meth:`Precision.compute_for`.
    ``efficiency``: the priced set (specs/efficiency.Efficiency), or None. Weight-only INT4 experts are priced by
    the set's own ``moe[w4a16]`` entry where it has one (specs/w4a16_moe.w4a16_key, as cost/ops.py reads it), so
    with the set given their line names ``efficiency.moe.w4a16.*``; without it, their compute format's rows
    (``moe.bf16.*``), which no op reads then: the step footer named those while the unread-key note said
    moe[w4a16] priced them (newuser54).

    >>> from jalapeno.specs.catalog import load_model, load_system
    >>> from jalapeno.specs.formats import get_precision
    >>> priced_as(get_precision("mxfp4"), load_model("gpt-oss-120b"), load_system("b200").chip)[0].split(" (")[0]
    'routed experts: MXFP4 weights priced at FP8 compute'
    """
    out = []
    for m in (m for m in MODULES if m in _present_modules(model)):
        mp = precision.modules[m]
        if mp.compute not in chip.formats and not precision.compute_fallback:
            continue
        fmt = precision.compute_for(mp.compute, chip.formats)
        bits = {"fp4": 4, "fp8": 8, "bf16": 16}.get(fmt)
        if bits and mp.weight.element_bits < bits:
            row = f"moe.{fmt}" if m == "routed_experts" else f"gemm.{mp.weight.gemm_key(fmt)}"
            if m == "routed_experts" and efficiency is not None:
                from jalapeno.specs.w4a16_moe import w4a16_key

                row = f"moe.{w4a16_key(mp.weight.name, efficiency) or fmt}"
            out.append(
                f"{_MODULE_LABELS[m]}: {_WEIGHT_LABELS[mp.weight.name]} weights priced at {fmt.upper()} compute "
                f"(W{mp.weight.element_bits:g}A{bits}; efficiency.{row}.* are their rows; precision "
                f"{precision.name}, specs/formats.py)"
            )
    return out


def check_fallback_used(precision: Precision, model, chips) -> None:
    """``--compute-fallback`` must change something: some op of ``model`` asks for a compute
    format one of ``chips`` lacks. Otherwise it is refused, not echoed in the results' name as if
    it had applied.

    Raises:
        SpecError: the precision allows the fallback and every chip has every format it computes in.
    """
    if not precision.compute_fallback:
        return
    need = {precision.attention_compute} | {precision.modules[m].compute for m in _present_modules(model)}
    if all(need <= chip.formats for chip in chips):
        names = ", ".join(sorted({c.name for c in chips}))
        base = precision.name.replace(",fallback", "")
        raise SpecError(
            "--compute-fallback",
            f"{names} computes every op of {base} natively "
            f"({', '.join(sorted(f.upper() for f in need))}): nothing falls back",
            "drop --compute-fallback",
        )


def check_precision(precision: Precision, model, chip) -> None:
    """Refuse a precision that the model or chip cannot run, with one clear error.

    Args:
        model: a :class:`~jalapeno.specs.model.ModelSpec`.
        chip: a :class:`~jalapeno.specs.hardware.Chip` (its ``name`` and ``formats``).

    Raises:
        SpecError: the preset is defined by modules the model lacks (``-p fp4`` on a dense
            model); a KV layout for another attention kind (``fp8_ds_mla`` on GQA); a KV format
            or compute format the chip has no kernels/tensor cores for, unless the precision
            allows the documented fallback.
    """
    present = _present_modules(model)
    missing = [m for m in precision.requires if m not in present]
    if missing:
        raise SpecError(
            "--precision",
            f"preset {precision.name} is defined by its {_MODULE_LABELS[missing[0]]}, which "
            f"{model.name} does not have (a dense model); it would silently equal another preset",
            "use -p nvfp4 (NVIDIA's NVFP4 dense checkpoints) or -p w4a4-mxfp4 (AMD's MXFP4 ones) for FP4 in "
            "every linear layer, -p fp8 or -p bf16",
        )
    kv = precision.kv_cache
    if kv.mla_only and model.attention.kind != "mla":
        raise SpecError(
            "--kv-dtype",
            f"{kv.name} is a layout of MLA latents; {model.name} uses {model.attention.kind.upper()} attention",
            "use --kv-dtype fp8 or bf16",
        )
    formats = chip.formats
    _check_fp4_blocks(precision, present, chip)
    if kv.needs and kv.needs not in formats:
        raise SpecError(
            "--kv-dtype",
            f"{kv.name} KV cache exists only in kernels for chips with "
            f"{kv.needs.upper()} tensor cores; {chip.name} has none",
            "use --kv-dtype fp8 or bf16",
        )
    if precision.attention_compute not in ATTENTION_FORMATS:
        raise SpecError(
            "--attention-dtype",
            f"unknown attention math format {precision.attention_compute!r}",
            f"use one of {', '.join(ATTENTION_FORMATS)}",
        )
    precision.compute_for(precision.attention_compute, formats, f"the attention math on {chip.name}")
    for m in MODULES:
        if m in present:
            precision.compute_for(precision.modules[m].compute, formats, f"the {_MODULE_LABELS[m]} on {chip.name}")


#: FP4 block-scaled formats and what a chip's FP4 tensor cores must consume to run them natively
_FP4_BLOCKS = ("mxfp4", "nvfp4")


def _check_fp4_blocks(precision: Precision, present: set[str], chip) -> None:
    """Refuse FP4 data in a block format the chip's FP4 tensor cores do not consume.

    A chip that states ``fp4_block_formats`` (specs/hardware.Chip: CDNA 4 takes MXFP4 only) cannot
    run NVFP4 weights or KV as FP4 math: the scales differ (E4M3 per 16 elements against E8M0 per
    32), so the op would not be the one the preset names. No silent substitution.

    Raises:
        SpecError: a module's weights or the KV cache are in a block format the chip lacks.
    """
    runs = getattr(chip, "runs_fp4_block", None)
    if runs is None:
        return
    used = [(f"the {_MODULE_LABELS[m]}", precision.modules[m].weight.name) for m in MODULES if m in present]
    used.append(("the KV cache", precision.kv_cache.name))
    for what, fmt in used:
        if fmt in _FP4_BLOCKS and not runs(fmt):
            have = ", ".join(sorted(f.upper() for f in chip.fp4_block_formats))
            kv = what == "the KV cache"
            raise SpecError(
                "--kv-dtype" if kv else "--precision",
                f"{precision.name} stores {what} in "
                f"{fmt.upper()}, which {chip.name}'s FP4 tensor cores do not take (they take {have})",
                "use --kv-dtype fp8 or bf16"
                if kv
                else "use -p quark-mxfp4 for AMD's MXFP4 DeepSeek checkpoints, -p mxfp4 for gpt-oss, or -p fp8",
            )
