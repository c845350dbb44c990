"""A design space's keys checked against its base system (``jalapeno explore``): :func:`check_keys` loads the base
system, each case's model and precision, refuses a KV-tier or label parameter, and builds the variants a search
would draw at the edges — the first design (:func:`probe_values`), every choice, each range's high end and a
fractional value inside a continuous range — naming the key at fault. Split from specs/design_space.py (round 53,
line budget), whose ``design_space_from_dict`` runs it after the schema; it re-exports ``probe_values``.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from jalapeno.errors import SpecError

if TYPE_CHECKING:
    from jalapeno.specs.design_space import DesignSpace, Param


def probe_values(space: DesignSpace) -> dict[str, object]:
    """One value per parameter (the first choice or the low end), for checking keys."""
    return {
        k: (p.choices[0] if p.choices is not None else (int(p.low) if p.integer else p.low))
        for k, p in space.params.items()
    }


def check_keys(space: DesignSpace, where: str) -> None:
    """Check a validated design space against its base system: ``base``, each case's model and precision load, no
    parameter is a KV tier or a label, and the first design (:func:`probe_values`), each choice and each range's high
    end (and a fractional value inside a continuous range, :func:`_fraction_inside`) are valid variants.

    Raises:
        SpecError (or the loader's JalapenoError): the field at fault, named with ``where`` (the file's name).
    """
    from jalapeno.errors import JalapenoError
    from jalapeno.specs.catalog import LABEL_KEYS, load_model, load_system
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.variants import with_overrides

    def named(field: str, load, arg):  # a bad name is named with the file and its key, not as a bare option
        try:
            return load(arg)
        except JalapenoError as e:
            raise type(e)(f"{where}: {field}", e.problem, e.fix) from None

    base = named("base", load_system, space.base)
    tier = next((k for k in (*space.params, *space.derived) if k.split(".", 1)[0] == "kv_tiers"), None)
    if tier is not None:  # a searched dimension no score reads: it ran, its importance noise (break47)
        raise SpecError(
            f"{where}: {'derived' if tier in space.derived else 'params'}.{tier}",
            "no case reads the KV "
            "tiers below HBM: they hold reused prefixes, and a design search's fixed-length workloads "
            "share none",
            f"drop it; the tiers matter to agentic workloads (jalapeno compare -w "
            f"agentic:coding-agent --set {tier}=VALUE)",
        )
    label = next((k for k in space.params if k.rsplit(".", 1)[-1] in LABEL_KEYS), None)
    if label is not None:  # 'name' or 'chip.name' with two choices was searched: the trials tied, silently (break52)
        raise SpecError(
            f"{where}: params.{label}",
            "is a label: it prices nothing (specs/catalog.LABEL_KEYS), so every trial would score alike along it",
            "drop it; search the numbers that price the chip",
        )
    for i, c in enumerate(space.cases):
        named(f"cases.{i}.model", load_model, c.model)
        if c.precision is not None:
            named(f"cases.{i}.precision", get_precision, c.precision)
    probe = probe_values(space)
    try:
        overrides = space.overrides(probe)
    except ValueError as e:
        keyed = re.match(r"derived '([^']+)': (.*)", str(e), re.S)  # was 'derived: derived 'chip.x': ...'
        loc, problem = (f"derived.{keyed[1]}", keyed[2]) if keyed else ("derived", str(e))
        raise SpecError(f"{where}: {loc}", problem, "fix the expression (numbers, {param}, + - * /)") from None
    try:
        with_overrides(base, overrides, where=f"{where}: params")
    except SpecError as whole:
        # the key the whole failed on (a plausibility range writes a level as levels[rack].x): named first, before
        # trying keys alone, where a derived key fails without its partner (hbm_capacity without hbm_usable)
        failed = re.sub(r"\[([^\]]+)\]", r".\1", whole.field)
        for key, _ in overrides:  # a key the system does not have: named as is (alone, another key could fail first)
            if failed.endswith(f": {key}"):
                table = "derived" if key in space.derived else "params"
                raise SpecError(f"{where}: {table}.{key}", whole.problem, whole.fix) from None
        for key, value in overrides:  # name the key at fault where one alone is
            try:
                with_overrides(base, [(key, value)], where=f"{where}: params")
            except SpecError as e:
                table = "derived" if key in space.derived else "params"
                raise SpecError(f"{where}: {table}.{key}", e.problem, e.fix) from None
        raise SpecError(
            f"{where}: params",
            f"the first design (each parameter at its low end or first choice) is invalid: {whole.problem}",
            whole.fix,
        ) from None
    for key, p in space.params.items():  # every choice, and the high end of a range, with the others as probed
        for value in p.choices[1:] if p.choices is not None else [int(p.high) if p.integer else p.high]:
            try:
                with_overrides(base, space.overrides({**probe, key: value}), where=f"{where}: params")
            except (SpecError, ValueError) as e:
                problem = e.problem if isinstance(e, SpecError) else str(e)
                raise SpecError(
                    f"{where}: params.{key}",
                    f"the value {value!r} is invalid: {problem}",
                    "drop it from the choices or the range, or fix it",
                ) from None
        frac = _fraction_inside(p)
        if frac is None:
            continue
        try:  # a range on a whole-number key (chip.hbm_stacks, efficiency.admission_lag_steps) drew 4.5 and pruned
            with_overrides(base, space.overrides({**probe, key: frac}), where=f"{where}: params")  # every such trial
        except (SpecError, ValueError) as e:
            problem = e.problem if isinstance(e, SpecError) else str(e)
            raise SpecError(
                f"{where}: params.{key}",
                f"the value {frac!r} inside the range is invalid: {problem} "
                "(each trial drawing such a value would be pruned)",
                "add integer = true for a whole-number key, or give choices = [...]",
            ) from None


def _fraction_inside(p: Param) -> float | None:
    """A value with a fractional part a continuous range ``p`` can draw (its low end's whole part + 0.5), or None:
    choices, an integer range, a range stepped from a whole low by a whole step, or no such value inside.

    >>> from jalapeno.specs.design_space import Param
    >>> _fraction_inside(Param(low=4, high=8)), _fraction_inside(Param(low=4, high=8, integer=True))
    (4.5, None)
    >>> _fraction_inside(Param(low=300, high=1200, step=50)), _fraction_inside(Param(low=2.5e-7, high=4e-6, log=True))
    (None, None)
    """
    if p.choices is not None or p.integer:
        return None
    if p.step is not None and p.step == int(p.step) and p.low == int(p.low):
        return None
    v = math.floor(p.low) + 0.5
    return v if p.low <= v <= p.high else None
