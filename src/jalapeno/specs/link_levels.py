"""The order rules of a system's link levels (``[[levels]]``, innermost first; specs/system_file.SystemFile).

1. Chip counts grow from the innermost level to the outermost: a level's domain holds the one inside it.
2. Names are unique: ``--set levels.NAME.*`` and the tables would reach only the first of two.
3. Every ``scale_up`` level comes before the first ``scale_out`` one: a load/store scale-up fabric (NVLink,
   Jalapeño's 3-D links) is reached before any NIC. A scale-up level outside a scale-out one would let a
   collective take the NIC level's chips at the fabric's bandwidth (System.level_for_group picks the innermost
   level holding the group).
4. A ``scale_up`` level holds whole copies of the ``scale_up`` level inside it (a rack of whole trays: 128 chips of
   8-chip trays, not 100): a collective over the outer domain spans whole inner domains, which the level pricing
   assumes. Scale-out levels are exempt: a cluster of 8,192 chips need not be whole 72-chip racks (the last
   rack part-filled is a deployment's business, not the fabric's).
5. The innermost level does not set ``shares_ports_with_inner``: no level lies inside it to share ports with. Set
   there, its scale-up ports dropped out of the link power (specs/power.scale_up_bytes_per_s sums the levels with
   their own ports): Jalapeño's TDP read 652 W in place of 700 W, with no word (break45).
"""

from __future__ import annotations

from collections.abc import Sequence


def check_level_order(levels: Sequence) -> None:
    """Raise ValueError (its message names the levels and the fix) when ``levels`` (objects with ``name``,
    ``chips``, ``scope``, innermost first) break a rule of the module docstring.

    >>> from types import SimpleNamespace as L
    >>> check_level_order([L(name="rack", chips=72, scope="scale_up"), L(name="dc", chips=8192, scope="scale_out")])
    >>> check_level_order([L(name="tray", chips=8, scope="scale_up"), L(name="rack", chips=100, scope="scale_up")])
    Traceback (most recent call last):
    ...
    ValueError: levels: the scale_up level 'rack' (100 chips) is not a whole number of 'tray' domains (8 chips each); \
set its chips to a multiple of 8 (e.g. 96 or 104), or make it scope = "scale_out"
    >>> check_level_order([L(name="rack", chips=72, scope="scale_out"), L(name="dc", chips=8192, scope="scale_up")])
    Traceback (most recent call last):
    ...
    ValueError: levels: the scale_up level 'dc' (8192 chips) lies outside the scale_out level 'rack' (72 chips); \
scale-up levels come first, innermost to outermost, then scale-out ones: reorder them, or make the outer fabric \
scope = "scale_out"
    >>> check_level_order([L(name="tray", chips=8, scope="scale_up", shares_ports_with_inner=True)])
    Traceback (most recent call last):
    ...
    ValueError: levels: the innermost level 'tray' sets shares_ports_with_inner = true, but no level lies inside it \
to share ports with (its ports would drop out of the link power); remove it there (it belongs on an outer level \
reached through the same ports)
    """
    sizes = [lv.chips for lv in levels]
    if any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise ValueError(f"levels: must grow in chips from innermost to outermost, got {sizes}")
    scopes = [lv.scope for lv in levels]
    if "scale_out" in scopes and "scale_up" in scopes[scopes.index("scale_out") :]:
        first_out = scopes.index("scale_out")
        out = levels[first_out]
        up = next(lv for lv in levels[first_out:] if lv.scope == "scale_up")
        raise ValueError(
            f"levels: the scale_up level {up.name!r} ({up.chips} chips) lies outside the scale_out "
            f"level {out.name!r} ({out.chips} chips); scale-up levels come first, innermost to "
            "outermost, then scale-out ones: reorder them, or make the outer fabric scope = "
            '"scale_out"'
        )
    ups = [lv for lv in levels if lv.scope == "scale_up"]
    for inner, outer in zip(ups, ups[1:]):
        if outer.chips % inner.chips:
            lo, hi = outer.chips // inner.chips * inner.chips, -(-outer.chips // inner.chips) * inner.chips
            raise ValueError(
                f"levels: the scale_up level {outer.name!r} ({outer.chips} chips) is not a whole number of "
                f"{inner.name!r} domains ({inner.chips} chips each); set its chips to a multiple of "
                f'{inner.chips} (e.g. {lo or hi} or {hi}), or make it scope = "scale_out"'
            )
    if levels and getattr(levels[0], "shares_ports_with_inner", False):
        raise ValueError(
            f"levels: the innermost level {levels[0].name!r} sets shares_ports_with_inner = true, but no "
            "level lies inside it to share ports with (its ports would drop out of the link power); "
            "remove it there (it belongs on an outer level reached through the same ports)"
        )
    names = [lv.name for lv in levels]
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise ValueError(f"levels: two link levels are named {twice!r} ({', '.join(names)})")
