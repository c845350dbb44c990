"""The lines ``jalapeno audit`` prints under its "what the chip would need" table (cli/audit_cmds.py; moved out of
it for the module budget, arch52): what the spec search moved with a spec and at what price."""

from __future__ import annotations


def _f(x) -> str:
    """A figure as audit's tables write it (cli/audit_tables._f): thousands separators from 1,000 up, else 4 digits."""
    from jalapeno.cli.audit_tables import _f as table_figure

    return table_figure(x)


#: The unit an HBM capacity key ends in (its table figures are in it).
_KEY_UNITS = (("_gib", "GiB"), ("_gb", "GB"))


def spec_search_notes(rows: list[dict], system) -> list[str]:
    """The lines under "what the chip would need" that say what its search moved with a spec and at what price
    (analysis/audit.py ``moves_with``, specs/variants.moved_together): the HBM capacity row's unit, its searched range
    and the usable capacity moved with it at the file's usable/nominal ratio (usable never above nominal; the HBM capex
    follows in $/chip-hour); that a level's bandwidth row prices its ports' link power as a variant does
    (specs/power.chip_power: 2 x B x 8 bit x serdes pJ/bit), and a level reached through its inner level's ports moves
    those ports with it (``shares_ports_with_inner``: Jalapeño's rack at 1,200 GB/s needs the tray's ports at 1,200,
    700 + 2 x 600 GB/s x 8 bit x 5 pJ/bit = 748 W, where the rack alone cost no watts). ``rows``: the audit's
    ``spec_changes``; ``system``: the audited System (its stated usable/nominal HBM). [] where no row needs a word.

    >>> from types import SimpleNamespace as N
    >>> gb300 = N(chip=N(hbm_usable_bytes=279e9, hbm_capacity_bytes=288e9))
    >>> note = spec_search_notes([{"parameter": "chip.hbm_capacity_gb", "search_range": [144, 1152],
    ...     "moves_with": {"chip.hbm_usable_gb": 1116.0}}], gb300)[0]
    >>> note.startswith("chip.hbm_capacity_gb: nominal HBM capacity in GB, searched 144-1,152 GB (0.5-4x)")
    True
    >>> "chip.hbm_usable_gb moves with it at the file's usable/nominal 279/288 GB" in note
    True
    >>> notes = spec_search_notes([{"parameter": "levels.rack.bandwidth_gb_per_s", "search_range": [300, 2400],
    ...     "moves_with": {"levels.tray.bandwidth_gb_per_s": 1200.0}}], None)
    >>> "moves levels.tray.bandwidth_gb_per_s (the ports it is reached through) with it" in notes[0]
    True
    """
    out, levels, shared = [], [], []
    for ch in rows:
        key, moved = ch["parameter"], ch.get("moves_with") or {}
        unit = next((u for end, u in _KEY_UNITS if key.endswith(end)), "")
        lo, hi = ch.get("search_range") or (None, None)
        if key.startswith("chip.hbm_capacity_"):
            usable = next(iter(moved), None)
            per = 2.0**30 if unit == "GiB" else 1e9
            with_it = (
                f"{usable} moves with it at the file's usable/nominal {_f(system.chip.hbm_usable_bytes / per)}/"
                f"{_f(system.chip.hbm_capacity_bytes / per)} {unit} (usable never above nominal)"
                if usable
                else "usable HBM is the nominal capacity (the file states no usable figure)"
            )
            out.append(
                f"{key}: nominal HBM capacity in {unit}, searched {_f(lo)}-{_f(hi)} {unit} (0.5-4x); {with_it}; "
                "its HBM capex follows in $/chip-hour (specs/power.follow_variant)"
            )
        elif key.startswith("levels.") and key.endswith(".bandwidth_gb_per_s") and ch.get("moves_metric", True):
            levels.append(key)
            shared += [
                f"{key} moves {k} (the ports it is reached through) with it" for k in moved if k.startswith("levels.")
            ]
    if levels:
        tail = (
            (
                "; " + "; ".join(shared) + " where it is faster than them, so those ports' watts are priced (the "
                "level alone would cost none)"
            )
            if shared
            else ""
        )
        out.append(
            f"{', '.join(levels)} in GB/s per chip: a faster link costs link power as a variant's does "
            f"(specs/power.py: 2 x B x 8 bit x serdes pJ/bit, in its TDP, all-in power and $/chip-hour){tail}"
        )
    return out


def borrowed_fits_line(pricer) -> str | None:
    """The line under "what the chip would need" for a chip priced with another family's kernel fits (a wholly
    derived efficiency set: Jalapeño's is GB300's, specs/calibration.derived_from): the spec values it finds rest on
    that GPU's kernel behaviour (e.g. few-row expert GEMMs priced by a row-count rule that scales with peak FLOP/s and
    not HBM bandwidth, docs/model.md §11.3), a named assumption, not the chip's measured kernels; None for a chip with
    kernel measurements of its own. Found by newuser54 (Kimi K2.5 on Jalapeño: "more HBM bandwidth never helps, BF16
    peak does" follows from GB300's W4A16 expert form).

    >>> from types import SimpleNamespace as N
    >>> jal = N(system=N(name="jalapeno"), efficiency=N(source="calibrated (derived from gb300-nvl72; set calibrated; x)"))
    >>> borrowed_fits_line(jal).startswith("jalapeno has no kernel measurements: the specs above are found with gb300-nvl72's")
    True
    >>> borrowed_fits_line(N(system=N(name="b200"), efficiency=N(source="calibrated (measured kernels; x)"))) is None
    True
    """
    from jalapeno.specs.calibration import derived_from

    donor = derived_from(pricer.efficiency.source)
    if donor is None:
        return None
    return (
        f"{pricer.system.name} has no kernel measurements: the specs above are found with {donor}'s GPU kernel fits "
        "(a named assumption, docs/model.md §11); where one binds (few-row expert GEMMs: a row-count rule that "
        "scales with peak FLOP/s, not HBM bandwidth, §11.3), the answer is that GPU kernel's, not the chip's; "
        "`--set efficiency.moe.<format>.half_rows=0` prices the experts at full tiles"
    )
