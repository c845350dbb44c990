"""Comma-separated lists of numbers and tier floors on the serving commands' command line: ``--at`` / ``-c`` style
``a,b,c`` lists (:func:`_floats`, ``--at``'s own refusal of 0: :func:`check_at_speeds`) and ``--tiers name=number,...``
(:func:`_floors`). Parsing only; each error is a :class:`~jalapeno.errors.SpecError` naming the option and the fix.
Split from cli/serving_opts.py (round 55, module budget), which re-exports the three names.
"""

from __future__ import annotations

import math

from jalapeno.cli.common import list_items
from jalapeno.errors import SpecError


def _floats(text: str, option: str, what: str = "numbers", example: str = "10,50,100", check=None) -> list[float]:
    """Positive finite numbers from ``a,b,c`` (``what`` and ``example`` word the error; ``check``, when
    given, refuses the values first with its own words).

    Raises:
        SpecError: no value (``''``, ``','``), not numbers, one not positive and finite, or one given twice.
    """
    try:
        vals = [float(v) for v in list_items(text, option, example, numbers=True)]
    except ValueError:
        raise SpecError(
            option, f"{text!r} is not a comma-separated list of {what}", f"write e.g. {option} {example}"
        ) from None
    if not vals:  # `frontier -c ''` ran the default grid without a word (round 26)
        raise SpecError(option, f"names no value ({text!r})", f"write e.g. {option} {example}, or leave it out")
    if check is not None:
        check(vals)
    if not vals or any(not (v > 0 and math.isfinite(v)) for v in vals):
        bad = next((v for v in vals if not (v > 0 and math.isfinite(v))), None)
        raise SpecError(
            option,
            f"needs positive {'values' if what == 'numbers' else what}" + (f", got {bad:g}" if bad is not None else ""),
            f"write e.g. {option} {example}",
        )
    twice = sorted({v for v in vals if vals.count(v) > 1})
    if twice:  # --at 10,10 printed the same ratio column twice
        raise SpecError(option, f"{twice[0]:g} is given twice", f"list each value once, e.g. {option} {example}")
    return vals


def check_at_speeds(vals: list[float]) -> None:
    """Refuse 0 in ``--at`` as what it would mean: the peak, which the ratios table's peak row gives; ``--tiers
    NAME=0`` (a floor of 0 tok/s/user, docs/metrics.md) reads that same point. ``--at 0`` was refused as 'needs
    positive values' while ``--tiers fast=0`` ran (followup51).

    Raises:
        SpecError: a value of 0 (negative and non-finite ones :func:`_floats` refuses after this).
    """
    if 0 in vals:
        raise SpecError(
            "--at",
            "0 tok/s/user is the peak: the ratios table's peak row gives it (a tier floor of 0, "
            "--tiers NAME=0, reads the same point)",
            "give speeds above 0, e.g. --at 35,60,100, and read the peak row",
        )


def _floors(text: str, unit: str = "value", example: str = "fast=100,ultra_fast=300") -> dict[str, float]:
    """``name=number,...`` tier thresholds (``unit`` and ``example`` word the error).

    Raises:
        SpecError: no tier at all (``--tiers ''`` dropped the tier table silently), a part that is
            not name=number, a tier with no name or named twice, two tiers of one value (as ``--at 50,50`` is
            refused), the reserved name ``batch``, a value that is negative or not finite (refused later as
            ``floors.NAME``, a name the CLI lacks).
    """
    items = list_items(text, "--tiers", example)
    if not items:  # '' and ',' (which ran without the tier table, round 26)
        raise SpecError("--tiers", "names no tier (an empty list)", f"write e.g. --tiers {example}, or leave it out")
    out = {}
    for part in items:
        name, _, val = part.partition("=")
        try:
            v = float(val)
        except ValueError:
            raise SpecError("--tiers", f"{part!r} is not name={unit}", f"write e.g. --tiers {example}") from None
        if not name.strip():
            raise SpecError("--tiers", f"{part!r} names no tier", f"write e.g. --tiers {example}")
        if unit == "minutes" and not (math.isfinite(v) and v > 0):  # the agentic ceiling: one rule, one message
            # (this said '>= 0' and analysis/agentic then refused the 0 it let through, in other words; ux47)
            raise SpecError(
                "--tiers",
                f"{part}: a task-time ceiling must be a finite number of minutes > 0",
                f"write e.g. --tiers {example} (minutes per agent task)",
            )
        if not (math.isfinite(v) and v >= 0):  # was named 'floors.fast', a field the user never typed
            raise SpecError(
                "--tiers",
                f"{part!r}: the floor {v:g} is not a finite number >= 0 (0: the peak)",
                f"write e.g. --tiers {example}",
            )
        if name.strip() in out:  # fast=100,fast=200 kept the last floor, silently
            raise SpecError(
                "--tiers", f"tier {name.strip()!r} is given twice", f"name each tier once, e.g. --tiers {example}"
            )
        same = next((k for k, w in out.items() if w == v), None)
        if same is not None:  # a=5,b=5 ran two rows of one point while --at 50,50 was refused (break54)
            raise SpecError(
                "--tiers",
                f"{v:g} is given twice (tiers {same!r} and {name.strip()!r})",
                f"give each tier its own floor, e.g. --tiers {example}",
            )
        if name.strip() == "batch":  # was refused later as 'floors', a name the command does not have
            raise SpecError(
                "--tiers",
                "'batch' is the reserved name of the frontier's first point",
                f"name the tier otherwise, e.g. --tiers {example}",
            )
        out[name.strip()] = v
    return out
