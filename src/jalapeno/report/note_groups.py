"""The report page's price and power basis notes, one line each with the systems named on it (ux55).

``jalapeno report`` wrote one ``price basis of NAME: ...`` and one ``power basis of NAME: ...`` note per system
(analysis/price_reason.basis_lines / power_basis_lines, compare's terminal lines), each ending with the same pointer
(``its source(s) in full: `jalapeno hardware show NAME```) and repeating a clause wherever two figures or two systems
share it: GB200 and GB300 the same InferenceX all-in 2,100 W and the same "no sustained figure published", Jalapeño's
TDP and sustained power the same assumption. :func:`grouped_basis_lines` keeps every fact and writes each distinct one
once: the pointer once in the line's head, the figures that share a source joined (``chip TDP 700 W (chip.tdp_w) and
sustained 550 W (chip.sustained_w): assumed: ...``), the systems that share a figure named together
(``gb200-nvl72, gb300-nvl72: all-in 2,100 W ...``). compare's terminal keeps its per-system lines.
"""

from __future__ import annotations

import re
import shlex

#: A basis part ``<figure> (<file key>): <source>`` (analysis/price_reason.power_basis; figure_source cuts the
#: source at its first ``;``, so a part holds none)
_PART = re.compile(r"^(?P<what>.+? \([\w.]+\)): (?P<why>.+)$")
#: Between two system groups of one line (a price basis may hold a ``;`` of its own)
GROUP_SEP = " · "


def _plain(system) -> bool:
    """Whether ``system``'s ``hardware show`` pointer is the plain ``jalapeno hardware show NAME`` the line's head
    names (a ``--set`` variant's carries its sets, a variant file's its file name: those keep their own pointer)."""
    from jalapeno.specs.catalog import hardware_show_command

    return hardware_show_command(system) == f"jalapeno hardware show {shlex.quote(system.name)}"


def _groups(per_system: dict[str, list[str]]) -> list[tuple[list[str], list[str]]]:
    """[(systems, parts)] from {system: its parts}: each distinct part once, under the systems that have it; the
    groups by their first system's place in the given order, those several systems share before its own, parts in
    each system's order."""
    owners: dict[str, list[str]] = {}
    for name, parts in per_system.items():
        for p in parts:
            owners.setdefault(p, []).append(name)
    out: dict[tuple[str, ...], list[str]] = {}
    for name, parts in per_system.items():
        for p in parts:
            out.setdefault(tuple(owners[p]), [])
            if p not in out[tuple(owners[p])]:
                out[tuple(owners[p])].append(p)
    first = {n: i for i, n in enumerate(per_system)}
    # the groups of the first system first, the widest of them first (what the most systems share), then in order
    keys = sorted(out, key=lambda k: (first[k[0]], -len(k)))
    return [(list(k), out[k]) for k in keys]


def _joined_by_source(parts: list[str]) -> list[str]:
    """One system's power parts with the figures that share a source written once:
    ``chip TDP 700 W (chip.tdp_w): assumed: X`` and ``sustained 550 W (chip.sustained_w): assumed: X`` →
    ``chip TDP 700 W (chip.tdp_w) and sustained 550 W (chip.sustained_w): assumed: X``."""
    groups: dict[str, list[str]] = {}  # source -> the figures that cite it; a part of another form: as it is
    for p in parts:
        m = _PART.match(p)
        if m is None:
            groups.setdefault(p, [])
        else:
            groups.setdefault(m["why"], []).append(m["what"])
    return [f"{' and '.join(what)}: {why}" if what else why for why, what in groups.items()]


def grouped_basis_lines(systems) -> list[str]:
    """The price and power basis of several systems (``systems``: :class:`~jalapeno.specs.hardware.System`, in the
    table's order), one line each, every fact of analysis/price_reason.basis_lines and power_basis_lines kept: the
    ``hardware show`` pointer once in the head (a system whose pointer is not the plain one keeps its own), each
    distinct clause once with the systems that share it. One system: the per-system lines as they are.

    >>> from jalapeno.specs.catalog import load_system
    >>> price, power = grouped_basis_lines([load_system("gb200-nvl72"), load_system("gb300-nvl72")])
    >>> power.split("NAME`): ", 1)[1].startswith("gb200-nvl72, gb300-nvl72: all-in 2,100 W (power.allin_kw_per_chip)")
    True
    """
    from jalapeno.analysis.price_reason import basis_lines, power_basis, power_basis_lines, system_basis

    systems = list(systems)
    if len(systems) < 2:
        return basis_lines(systems) + power_basis_lines(systems)
    price: dict[str, list[str]] = {}
    power: dict[str, list[str]] = {}
    for s in systems:
        body = system_basis(s)
        tail = f"; its source in full: `jalapeno hardware show {shlex.quote(s.name)}`, cost.usd_per_chip_hour"
        price[s.name] = [body[: -len(tail)] if _plain(s) and body.endswith(tail) else body]
        body = power_basis(s)
        tail = f"; its sources in full: `jalapeno hardware show {shlex.quote(s.name)}`"
        cut = _plain(s) and body.endswith(tail)
        parts = (body[: -len(tail)] if cut else body).split("; ")
        power[s.name] = _joined_by_source(parts if cut else parts[:-1]) + ([] if cut else [parts[-1]])
    return [
        "price basis ($/chip-hour, cost.usd_per_chip_hour; each source in full: `jalapeno hardware show NAME`): "
        + GROUP_SEP.join(f"{', '.join(n)}: {'; '.join(p)}" for n, p in _groups(price)),
        "power basis (W per chip; each source in full: `jalapeno hardware show NAME`): "
        + GROUP_SEP.join(f"{', '.join(n)}: {'; '.join(p)}" for n, p in _groups(power)),
    ]
