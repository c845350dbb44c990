"""Why a system's $/chip-hour is an estimate, in a few words read from its own file: the ``source`` of its
``cost.usd_per_chip_hour`` (``estimate = true``), so a cost line says what the figure rests on instead of
"X publishes no price" for every estimated system (A100 and MI350X have published list prices; their files
estimate the TCO figure InferenceX does not give). Pure text; computes no figure."""

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
