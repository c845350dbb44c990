"""Why a system's $/chip-hour is an estimate, in a few words read from its own file: the ``source`` of its
``cost.usd_per_chip_hour`` (``estimate = true``), so a cost line says what the figure rests on instead of
"X publishes no price" for every estimated system (A100 and MI350X have published list prices; their files
estimate the TCO figure InferenceX does not give). Likewise where each per-chip power figure a comparison prints comes
from (:func:`power_basis`: all-in, chip TDP, sustained, each with its file field and source; followup52). Pure text;
computes no figure."""

from __future__ import annotations

#: the labels a catalog source opens with (data/systems/*.toml), dropped before the first clause is read
_LABELS = ("estimate:", "assumption:")
#: what a source says when the chip has no published price at all (data/systems/jalapeno.toml)
_NO_PRICE = "no published price"
#: how specs/power.follow_variant opens the source of a figure it moves from the base's (``+ HBM capex ...``)
_FOLLOWED = "+ "


def first_clause(source: str) -> str:
    """The first clause of a price source: its label (``estimate:``, ``assumption:``) and the ``(estimate)``
    mark specs/hardware.py appends dropped, cut at the first ``;`` or bracketed detail (`` (``).

    >>> first_clause("assumption: as MI355X (InferenceX constants.ts, 1.48 $/GPU-hr); no MI350X TCO figure (estimate)")
    'as MI355X'
    >>> first_clause("")
    ''
    """
    s = source.strip().removesuffix("(estimate)").strip()
    for label in _LABELS:
        if s.lower().startswith(label):
            s = s[len(label) :].strip()
    for cut in (";", " ("):
        s = s.split(cut, 1)[0]
    return s.strip().rstrip(".,")


def estimate_reason(system: str, source: str) -> str:
    """What an estimated $/chip-hour of ``system`` rests on, worded from its file's ``source`` text:
    "``system`` publishes no price" where the source says the chip has none (``no published price``), then the
    source's first clause (:func:`first_clause`); a ``--set`` variant's followed price (specs/power.follow_variant:
    ``+ <change>``) as "the base's estimated price + <change>"; the bare "publishes no price" where no source is given.

    >>> estimate_reason("jalapeno", "estimate: assumed all-in capex $30k per chip (no published price) x ratio")
    'jalapeno publishes no price; assumed all-in capex $30k per chip'
    >>> estimate_reason("a100-sxm", "assumption: no InferenceX TCO figure for A100; about 0.85x H100's 1.30 $/h")
    'no InferenceX TCO figure for A100'
    >>> estimate_reason("j+chip.hbm_stacks=8", "+ HBM capex +64 GB x 15 $/GB over the TCO/capex ratio (estimate)")
    "the base's estimated price + HBM capex +64 GB x 15 $/GB over the TCO/capex ratio"
    >>> estimate_reason("x", "")
    'x publishes no price'
    """
    clause = first_clause(source)
    if not clause:
        return f"{system} publishes no price"
    if clause.startswith(_FOLLOWED):
        return f"the base's estimated price {clause}"
    return f"{system} publishes no price; {clause}" if _NO_PRICE in source.lower() else clause


#: the JSON field that says what a $ figure rests on, one name in every command that prints one (compare, plan,
#: predict, simulate, agentic compare, frontier, explore, hardware show): :func:`basis_text`
BASIS_FIELD = "price_basis"
#: how specs/system_overrides opens the source of a ``--set`` value (``override KEY = VALUE (--set; ...)``)
_OVERRIDE = "override "


def basis_text(name: str, source: str, estimate: bool, user_file: bool = False, show: str = "") -> str:
    """One line for a reader: what the $/chip-hour of the system ``hardware show`` knows as ``name`` rests on,
    from its file's ``cost.usd_per_chip_hour`` ``source`` and ``estimate`` flag: ``published: <source up to its
    first ;>`` (a figure the file cites, e.g. InferenceX's TCO table, with its bracketed detail), ``estimated:
    <why>`` (:func:`estimate_reason`), ``derived: the base's published price + <change>`` (a ``--set`` variant's
    followed price, specs/power.follow_variant), ``given: <override>`` (``--set cost.usd_per_chip_hour``: the line says
    it was set on the command line, as ``hardware show`` without the ``--set`` shows the catalog's figure), ``given in
    the system file: <source>`` (``user_file``: the figure is a user file's own, where "published" told a price the
    user wrote, source "assumption", as cited: newuser51), then where the full source is: ``show``, the ``hardware
    show`` command that shows the system as priced (specs/catalog.hardware_show_command: with a ``--set`` variant's
    options, so it shows the set figure, ux54); ``""``: ``jalapeno hardware show NAME``. The JSON outputs carry it as
    :data:`BASIS_FIELD`.

    >>> basis_text("gb200-nvl72", "InferenceX constants.ts costh (hyperscaler owner, 4-year life)", False)
    'published: InferenceX constants.ts costh (hyperscaler owner, 4-year life); its source in full: `jalapeno hardware show gb200-nvl72`, cost.usd_per_chip_hour'
    >>> basis_text("mi350x", "assumption: as MI355X (InferenceX constants.ts, 1.48 $/GPU-hr) (estimate)", True)[:23]
    'estimated: as MI355X; i'
    >>> basis_text("gb200-nvl72", "+ HBM capex -64 GB x 15 $/GB over the TCO/capex ratio", False)[:64]
    "derived: the base's published price + HBM capex -64 GB x 15 $/GB"
    >>> basis_text("h200", "override cost.usd_per_chip_hour = 3 (--set; was 1.41: InferenceX)", False,
    ...            show="jalapeno hardware show h200 --set cost.usd_per_chip_hour=3")
    'given: override cost.usd_per_chip_hour = 3; set on the command line (--set); its source in full: `jalapeno hardware show h200 --set cost.usd_per_chip_hour=3`, cost.usd_per_chip_hour'
    >>> basis_text("my.toml", "assumption", False, user_file=True)[:38]
    'given in the system file: assumption; '
    """
    clause = first_clause(source)
    show = show or f"jalapeno hardware show {name}"
    if clause.startswith(_OVERRIDE):  # `show` carries the --set, so it shows this price, not the catalog's (ux54)
        why = f"given: {clause}; set on the command line (--set)"
    elif estimate:
        why = f"estimated: {estimate_reason(name, source)}"
    elif clause.startswith(_FOLLOWED):
        why = f"derived: the base's published price {clause}"
    elif user_file:
        why = (
            f"given in the system file: {source.split(';', 1)[0].strip().rstrip('.,')}" if clause else "no source given"
        )
    else:  # a cited figure keeps its bracketed detail (whose table, which owner): only the first ';' part
        why = f"published: {source.split(';', 1)[0].strip().rstrip('.,')}" if clause else "no source given"
    return f"{why}; its source in full: `{show}`, cost.usd_per_chip_hour"


def system_basis(system) -> str:
    """:func:`basis_text` of a :class:`~jalapeno.specs.hardware.System` (a ``--set`` variant named by its catalog
    file, specs/catalog.hardware_show_name; estimated where analysis/capacity.is_price_estimate says so)."""
    from jalapeno.analysis.capacity import is_price_estimate
    from jalapeno.specs.catalog import hardware_show_command, hardware_show_name

    name = hardware_show_name(system)
    return basis_text(
        name,
        system.sources.get("cost.usd_per_chip_hour", ""),
        is_price_estimate(system),
        user_file=_user_price(system, name),
        show=hardware_show_command(system),
    )


def _user_price(system, name: str, key: str = "cost.usd_per_chip_hour") -> bool:
    """Whether ``system``'s figure ``key`` (its $/chip-hour by default) is a user file's own: a file that is no
    catalog system nor rooted in one (no ``base`` chain to the catalog), or a variant file that states ``key`` itself
    (a ``--set`` one reads ``given:`` already)."""
    from jalapeno.specs.catalog import list_systems

    if name in list_systems():
        return False
    o = system.origin
    if o is None:
        return bool(system.path)
    root_is_catalog = o.root is not None and o.root in list_systems()
    return not root_is_catalog or any(k == key for k, _ in o.overrides)


def basis_lines(systems) -> list[str]:
    """The lines under a table of $ figures: ``price basis: <basis>`` for one system, ``price basis of NAME:
    <basis>`` each for several (``systems``: :class:`~jalapeno.specs.hardware.System`, in the table's order)."""
    systems = list(systems)
    if len(systems) == 1:
        return [f"price basis: {system_basis(systems[0])}"]
    return [f"price basis of {s.name}: {system_basis(s)}" for s in systems]


#: the JSON field that says where each per-chip power figure comes from (compare --json, per system): :func:`power_basis`
POWER_BASIS_FIELD = "power_basis"
#: how specs/system_load marks an ``estimate = true`` figure's source
_ESTIMATE_MARK = " (estimate)"
#: how specs/power.follow_variant opens the source of a variant's TDP and sustained power that follow its components
_VARIANT = ("follows the variant's components", "scaled with the TDP")
#: the per-chip power figures a comparison prints (analysis/power_cost.CONVENTIONS: the all-in figure of the tables
#: and the rack line, the chip's TDP and its sustained power of the per-kW-by-convention line), each with its
#: system-file field
POWER_FIELDS = (("all-in", "power.allin_kw_per_chip"), ("chip TDP", "chip.tdp_w"), ("sustained", "chip.sustained_w"))


def figure_source(source: str, user_file: bool = False) -> str:
    """How one power figure's file ``source`` reads in a basis line: ``given: <override>`` (``--set``), ``derived:
    the base's figure <change>`` (a variant's followed figure, specs/power.follow_variant), ``estimated: <clause>``
    (an ``estimate = true`` figure: the ``(estimate)`` mark), ``assumed: <clause>`` (a named assumption, the source
    opening ``assumption:``), ``derived: <clause>`` (opening ``derived:``), ``given in the system file: <clause>``
    (``user_file``), else ``published: <clause>``; the clause: the source without its label, up to its first ``;``
    or ``: `` (the detail is in ``jalapeno hardware show``); ``no source given`` for an empty source.

    >>> figure_source("MLPerf v5.1 hw_notes 'GB300 TGP 1400W'; Verda: 100.8 kW max GPU TDP per rack")
    "published: MLPerf v5.1 hw_notes 'GB300 TGP 1400W'"
    >>> figure_source("estimate from components: chip 700 W + tray overhead 10% (70 W) = 1.15 kW (estimate)")
    'estimated: estimate from components'
    >>> figure_source("assumption: taken as publicly reported for the chip: 700 W rated")
    'assumed: taken as publicly reported for the chip'
    >>> figure_source("+ chip power change x PUE 1.25; HBM +64 GB")
    "derived: the base's figure + chip power change x PUE 1.25"
    >>> figure_source("third-party (a spec table): ~1,800 W, not official (estimate); other sources: up to ~2,300 W")
    'estimated: third-party (a spec table)'
    >>> figure_source("scaled with the TDP; follows the variant's components (specs/power.py): jalapeno 700 W + 6 W")
    'derived: scaled with the TDP'
    >>> figure_source("override chip.tdp_w = 900 (--set; was 700: MLPerf)")
    'given: override chip.tdp_w = 900'
    >>> figure_source("")
    'no source given'
    """
    estimate = _ESTIMATE_MARK in source  # specs/system_load's mark (alternatives may follow it)
    s = source.replace(_ESTIMATE_MARK, "").strip()
    if not s:
        return "no source given"
    if s.startswith(_OVERRIDE):
        return f"given: {first_clause(s)}"
    label = next((lb for lb in (*_LABELS, "derived:") if s.lower().startswith(lb)), "")
    clause = s[len(label) :].strip()
    for cut in (";", ": "):
        clause = clause.split(cut, 1)[0]
    clause = clause.strip().rstrip(".,")
    if clause.startswith(_FOLLOWED):  # an estimated base's followed figure stays an estimate (follow_variant)
        return (
            f"estimated: the base's estimated figure {clause}" if estimate else f"derived: the base's figure {clause}"
        )
    if clause.startswith(_VARIANT):
        return f"derived: {clause}"
    if estimate or label == "estimate:":
        return f"estimated: {clause}"
    if label == "assumption:":
        return f"assumed: {clause}"
    if label == "derived:":
        return f"derived: {clause}"
    return f"given in the system file: {clause}" if user_file else f"published: {clause}"


def power_basis(system) -> str:
    """Where each per-chip power figure of ``system`` (a :class:`~jalapeno.specs.hardware.System`) that a
    comparison prints comes from (:data:`POWER_FIELDS`): ``all-in 1,150 W (power.allin_kw_per_chip): estimated:
    estimate from components; chip TDP 700 W (chip.tdp_w): assumed: ...; sustained 550 W (chip.sustained_w): ...;
    its sources in full: `jalapeno hardware show jalapeno``` (:func:`figure_source` of each field's source; a chip
    without a sustained figure: ``sustained: the chip TDP (no sustained figure published)``, as
    analysis/power_cost reads it). The pointer is :func:`~jalapeno.specs.catalog.hardware_show_command`: after
    ``--set chip.tdp_w=1000`` it carries the ``--set``, so the command shows the set 1,000 W, not the catalog's (ux54)."""
    from jalapeno.specs.catalog import hardware_show_command, hardware_show_name

    name = hardware_show_name(system)
    watts = {
        "all-in": system.allin_power_w_per_chip,
        "chip TDP": system.chip.tdp_w,
        "sustained": system.chip.sustained_w,
    }
    parts = []
    for label, key in POWER_FIELDS:
        if watts[label] is None:
            parts.append(f"{label}: the chip TDP (no sustained figure published)")
            continue
        why = figure_source(system.sources.get(key, ""), _user_price(system, name, key))
        parts.append(f"{label} {watts[label]:,.0f} W ({key}): {why}")
    return "; ".join(parts) + f"; its sources in full: `{hardware_show_command(system)}`"


def power_basis_lines(systems) -> list[str]:
    """The lines under a comparison that prints per-chip watts: ``power basis: <basis>`` for one system, ``power
    basis of NAME: <basis>`` each for several (:func:`power_basis`; ``systems`` in the table's order), as
    :func:`basis_lines` for the $/chip-hour."""
    systems = list(systems)
    if len(systems) == 1:
        return [f"power basis: {power_basis(systems[0])}"]
    return [f"power basis of {s.name}: {power_basis(s)}" for s in systems]
