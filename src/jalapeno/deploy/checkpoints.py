"""Released checkpoints of the recipes' models (``[checkpoints]`` in data/engines.toml): which precision presets a
model ships in, and which one a chip serves (a substitute checkpoint where the chip cannot run a preset).
"""

from __future__ import annotations

from jalapeno.deploy.engines import _data
from jalapeno.errors import SpecError


def released_precisions(model: str, default: str) -> tuple[str, ...]:
    """Precision presets the model has released checkpoints in (``[checkpoints]``; else its default)."""
    ck = _data()[1].get(model)
    return tuple(p for p, _, _ in ck) if ck else (default,)


def checkpoint_for(model: str, preset: str, system: str) -> str:
    """The preset ``system`` serves ``model``'s ``preset`` checkpoint as: ``preset``, or the checkpoint
    released as its substitute (``[checkpoints]``' third field) where the chip cannot run it.

    >>> checkpoint_for("deepseek-r1", "fp4", "mi355x"), checkpoint_for("deepseek-r1", "fp4", "b200")
    ('quark-mxfp4', 'fp4')
    """
    from jalapeno.specs.catalog import load_model, load_system
    from jalapeno.specs.precision_checks import check_precision
    from jalapeno.specs.formats import get_precision

    subs = [p for p, _, sub in _data()[1].get(model, ()) if sub == preset]
    if not subs:
        return preset
    try:
        check_precision(get_precision(preset), load_model(model), load_system(system).chip)
    except SpecError:
        return subs[0]
    return preset


def available_precisions(model: str, default: str, chip_formats, model_spec=None, chip=None) -> tuple[str, ...]:
    """Released precisions the chip computes natively: every module's compute format supported.

    FP8 needs fp8 math (Hopper and later, CDNA3 and later), FP4 fp4 math (Blackwell, CDNA4);
    a preset whose formats the chip lacks would run upcast, which no deployment does. With
    ``model_spec`` and ``chip``, presets the model itself cannot run (specs/precision_checks.check_precision)
    are dropped too. A checkpoint released as a substitute (``[checkpoints]``' third field) is
    offered only where the preset it stands in for is not: MI355X serves DeepSeek-R1 FP4 from
    AMD's MXFP4 checkpoint, B200 from NVIDIA's NVFP4 one.
    """
    from jalapeno.specs.precision_checks import check_precision
    from jalapeno.specs.formats import get_precision

    fmts = set(chip_formats)
    out = []
    substitutes = {p: sub for p, _, sub in _data()[1].get(model, ()) if sub}
    for name in sorted(released_precisions(model, default), key=lambda n: n in substitutes):
        if substitutes.get(name) in out:  # the chip runs the checkpoint this one stands in for
            continue
        prec = get_precision(name)
        need = {m.compute for m in prec.modules.values()} - {"bf16"}
        if not need <= fmts:
            continue
        if model_spec is not None and chip is not None:
            try:
                check_precision(prec, model_spec, chip)
            except SpecError:
                continue
        out.append(name)
    return tuple(out) or (default,)
