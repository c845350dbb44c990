"""``--set KEY=VALUE`` on every command that takes a system, and the pricers built from it.

``--set chip.hbm_stacks=8`` (repeatable) applies a dotted-key override to the system and its
efficiency set exactly as a variant file's keys do (specs/variants.py). On commands that take
several systems (``compare``), ``--set NAME:KEY=VALUE`` targets one of them and a plain
``KEY=VALUE`` applies to all. The notes :func:`system_pricer` says on stderr about the system as priced (a user
file's efficiency set, a key that changes less than it reads as) are cli/system_notes.py (round 54, module budget).
"""

from __future__ import annotations

import typer

from jalapeno.cli.system_notes import (  # noqa: F401  (the notes, re-exported: they lived here)
    _NOTED,
    CAPACITY_KEYS,
    POWER_ONLY_KEYS,
    STACK_FOLLOW_KEYS,
    USABLE_KEYS,
    _base_stacks,
    note_capacity_only,
    note_efficiency,
    note_file_stacks_only,
    note_ignored_level_keys,
    note_levels_replaced,
    note_name_clash,
    note_no_band,
    note_power_only,
    note_shared_ports,
    note_stacks_only,
    note_switched_off_file,
    note_table_variant,
    note_unread_efficiency,
    switched_off_note,
    unread_tiers_note,
)
from jalapeno.errors import SpecError, choice_hint

SET_HELP = (
    "Override a system field by its dotted key, as a variant TOML does (repeatable): "
    "chip.hbm_stacks=8, chip.hbm_bandwidth_tb_per_s=20, levels.rack.bandwidth_gb_per_s=900, "
    "power.allin_kw_per_chip=1.3, efficiency.kernel_launch_s=2.5e-7."
)
SETS_HELP = SET_HELP[:-1] + "; NAME:KEY=VALUE targets one of --systems, a plain KEY=VALUE all of them."


#: The repeatable ``--set`` option of a command taking one system, and of one taking several.
SET_OPTION = typer.Option(None, "--set", help=SET_HELP)
#: ``--pricer``: how ops are priced (cost/pricer.py, cost/table_pricer.py)
PRICER_OPTION = typer.Option(
    "roofline",
    "--pricer",
    help="roofline (fitted fractions of peak; every system), "
    "table (measured kernel latencies interpolated, roofline for ops without a table; "
    "systems with aiconfigurator kernel tables, needs the calibrate extra) or auto "
    "(per system the one with the lower end-to-end error, docs/validation.md).",
)
SETS_OPTION = typer.Option(None, "--set", help=SETS_HELP)


def system_pricer(
    system: str,
    efficiency: str = "calibrated",
    sets: list[str] | None = None,
    stack: str | None = None,
    pricer: str = "roofline",
):
    """The pricer of ``system`` under ``efficiency`` with the ``--set`` overrides and the software
    stack ``stack`` (``--stack``; None: the system's own profile); ``pricer`` ``roofline``,
    ``table`` or ``auto`` (fit/table_lookup.load_any_pricer).

    Raises:
        UnknownNameError, SpecError: as ``load_pricer`` and ``parse_sets``; an unknown pricer, or
            ``table`` for a system without kernel tables.
    """
    from jalapeno.specs.system_overrides import parse_sets

    overrides = parse_sets(sets or ())
    if pricer == "roofline":  # the default: the table machinery (and its pandas import, ~0.3 s) is not needed
        from jalapeno.cost.pricer import load_pricer

        def load(which):
            return load_pricer(system, which, tuple(overrides), stack)
    else:
        from jalapeno.fit.table_lookup import load_any_pricer

        def load(which):
            return load_any_pricer(system, which, overrides, pricer, stack)

    pr = load(efficiency)
    if efficiency in ("low", "high"):
        note_no_band(pr, efficiency, load("calibrated"))
    note_efficiency(pr.system)
    note_switched_off_file(pr.system)
    note_name_clash(pr.system)
    note_table_variant(pr)
    note_power_only(overrides, pr.system)  # after the load: a refused variant gets its one error alone
    note_stacks_only(overrides, pr.system, _base_stacks(system, overrides), str(system))
    note_file_stacks_only(pr.system, overrides)
    note_capacity_only(pr.system)
    note_ignored_level_keys(pr.system)
    note_shared_ports(pr.system)
    note_levels_replaced(pr.system, overrides)  # a full [[levels]] list's dropped levels (break52)
    return pr


def check_pricer_chip_model(pricer: str, chip_model: str) -> None:
    """Refuse ``--pricer table|auto`` with a chip model other than ``flat``: the sliced and tiled
    chip models re-price every op from the roofline and would drop the table lookup.

    Raises:
        SpecError: the two options conflict.
    """
    if pricer != "roofline" and chip_model != "flat":
        raise SpecError(
            "--pricer",
            f"--pricer {pricer} prices ops from measured kernels; --chip-model {chip_model} "
            "re-prices them from the chip's structure",
            "use one of the two (--pricer roofline with --chip-model, or --chip-model flat with --pricer table)",
        )


def _file_entry(target: str, names: list[str]) -> str:
    """The ``--systems`` entry (a TOML path) whose file names its system ``target``: ``--set mychip:KEY=V`` with
    ``--systems my/mychip.toml`` (the tables call it mychip, and --baseline takes that name too).

    Raises:
        SpecError: no entry is, or loads as, ``target``.
    """
    from jalapeno.specs.catalog import list_systems, load_system

    catalog = list_systems()  # a catalog entry is its own name: no file to read
    files = {n: load_system(n).name for n in names if n not in catalog}
    for n, name in files.items():
        if name == target:
            return n
    shown = ", ".join(f"{n} ({files[n]})" if n in files and files[n] != n else n for n in names)
    near = choice_hint(target, list(dict.fromkeys([*names, *files.values()])))  # a file's own name too ('tiny')
    raise SpecError(
        "--set",
        f"{target!r} is not among --systems{near}",
        f"use one of {shown} before the colon, or drop NAME: to set all",
    )


def systems_pricers(
    names: list[str],
    efficiency: str = "calibrated",
    sets: list[str] | None = None,
    stack: str | None = None,
    pricer: str = "roofline",
    stacks: dict[str, str] | None = None,
) -> list:
    """Pricers of several systems; ``NAME:KEY=VALUE`` applies to the system given as NAME;
    ``stacks`` gives a system its own stack instead of ``stack`` (an engine recipe pinned per system).

    Raises:
        SpecError: a ``NAME:`` that is not among ``names``; a plain ``name=X`` given to several systems;
            as :func:`system_pricer`.
    """
    from jalapeno.cli.usage_errors import system_named

    per = per_system_sets(names, sets)
    out = []
    for n in names:
        with system_named(n, names, sets):  # a plain --set refused on one of them names it (break53)
            out.append(system_pricer(n, efficiency, per[n], (stacks or {}).get(n, stack), pricer))
    return out


def per_system_sets(names: list[str], sets: list[str] | None) -> dict[str, list[str]]:
    """The ``--set`` items each of ``names`` takes: ``NAME:KEY=VALUE`` its own (the prefix dropped), a plain
    ``KEY=VALUE`` every system's.

    Raises:
        SpecError: a ``NAME:`` that is not among ``names``; a plain ``name=X`` given to several systems.
    """
    per: dict[str, list[str]] = {n: [] for n in names}
    for item in sets or ():
        key = item.partition("=")[0]
        if ":" in key:
            target, _, rest = item.partition(":")
            if names.count(target) > 1:  # was "two systems are named 'h200+chip.tdp_w=800'" (break55)
                raise SpecError(
                    "--set",
                    f"{item!r}: --systems names {target} {names.count(target)} times, so {target + ':'!r} picks "
                    "none of them alone (it sets each)",
                    f'compare {target} with a variant of it by writing the variant as a file: base = "{target}", '
                    f'name = "{target}-variant" and the keys it changes (docs/catalog.md), then '
                    f"--systems {target},VARIANT.toml",
                )
            target = target if target in per else _file_entry(target, names)
            per[target].append(rest)
        else:
            if (
                key.strip() == "name" and len(names) > 1
            ):  # was 'two systems are named ...; give a user file its own name'
                raise SpecError(
                    "--set",
                    f"{item!r} names all {len(names)} systems alike (a plain KEY=VALUE sets every "
                    "one, and compared systems cannot share a name)",
                    f"name one of them: --set {names[0]}:{item.strip()}",
                )
            for n in names:
                per[n].append(item)
    return per


def baseline_name(baseline: str | None, names: list[str], loaded: list[str]) -> str:
    """The compared system that ``--baseline`` names, by its name in the results (``loaded``, the
    pricers' system names, in the order of ``names``, the ``--systems`` entries as typed).

    ``--baseline`` may repeat a ``--systems`` entry as typed (``--systems h100,h200 --set
    h200:chip.hbm_stacks=6 --baseline h200``: the results call it ``h200+chip.hbm_stacks=6``), give a
    compared system's name (a user file's ``name``) or another spelling of one (a path that loads
    as one of them). None: gb300-nvl72 if compared, else the last system.

    >>> baseline_name("h200", ["h100", "h200"], ["h100+chip.hbm_stacks=6", "h200+chip.hbm_stacks=6"])
    'h200+chip.hbm_stacks=6'
    >>> baseline_name(None, ["h100", "gb300-nvl72"], ["h100", "gb300-nvl72+x=1"])
    'gb300-nvl72+x=1'

    Raises:
        SpecError: ``--baseline`` is not among the compared systems (or not a system at all); a
            baseline file that does not load, as ``load_system``.
    """
    if not baseline:
        return loaded[names.index("gb300-nvl72")] if "gb300-nvl72" in names else loaded[-1]
    if baseline in names:
        return loaded[names.index(baseline)]
    if baseline in loaded:
        return baseline
    from jalapeno.errors import UnknownNameError
    from jalapeno.specs.catalog import load_system

    try:
        base = load_system(baseline).name
    except UnknownNameError:  # the systems to choose from are the compared ones, not the catalog
        base = None
    if base not in loaded:
        raise SpecError(
            "--baseline",
            f"{baseline!r} is not among --systems ({', '.join(names)})"
            f"{choice_hint(baseline, names)}",  # 'b20' beside h200,b200 named no system meant (break50)
            "name one of them (as typed in --systems), or add it to --systems",
        )
    return base
