"""A capacity plan's capex, its electricity slope and its measured chip-count band (``jalapeno plan``; newuser55).

A capacity planner asks three things the plan's $/hour line did not answer (round 55's new-user pass):

- **capex** (:func:`capex`): what buying the fleet's whole racks costs. The catalog prices a chip-hour (total cost
  of ownership, ``cost.usd_per_chip_hour``), not a purchase, so the capex is derived with the one published ratio
  the catalog already uses for Jalapeño's price: InferenceX's GB200 costh 2.21 $/GPU-hour over ~$46.5k capex per
  GPU (``specs/power.POWER_TERMS["tco_usd_per_hour_per_capex_usd"]``, band 1.6-2.8 $/h per $46.5k). capex per
  chip = $/chip-hour / that ratio: $46.5k for GB200 (the third-party rack price it came from), $30k for Jalapeño
  (the assumed capex its price was derived from), 1.2 x $46.5k for GB300 (InferenceX's 1.2x price rule). An
  estimate always, assuming every system's TCO is GB200's multiple of its capex (energy and operations included);
  its band is the ratio's assumed 1.6-2.8 $/h per $46.5k (no source recorded; specs/power), which for GB200 itself
  is wider than the rack price's $44-49k. Where a price was itself derived from an assumed capex by this ratio
  (Jalapeño, $30k) the ratio cancels: the line gives that assumption back, and its own range ($21k-$46k, the
  file's alternatives) is wider than the band printed.
- **electricity** (:func:`electricity`): how $/hour moves with the price of power. At the all-in provisioned draw
  (``power.allin_kw_per_chip``, facility included: an upper bound, a fleet below full load draws less) each
  +$0.01/kWh adds all-in kW x $0.01 per chip-hour; no assumption on the price inside the TCO is needed for the
  slope. The share energy would be at the catalog's assumed $0.08/kWh (``usd_per_kwh``, EIA 2024, band
  0.05-0.15) is printed beside it as that assumption.
- **how sure** (:func:`chips_band`): for a system validate measured (``analysis/measured_bands.band_of``), the
  chips and racks the same deployment needs at the ends of its measured throughput-per-chip error (p10/p90 of
  predicted/measured - 1): true rate = predicted / (1 + e), so instances = ceil(target / (instance rate /
  (1 + e))). The point's speed is held (its own error moves the point too: ``jalapeno audit`` reads both).
"""

from __future__ import annotations

import math

from jalapeno.analysis.plan_text import n_chips
from jalapeno.specs.power import GB200_CAPEX_USD_PER_GPU, POWER_TERMS

#: $/kWh step of the electricity line (one US cent)
KWH_STEP_USD = 0.01


def check_utilisation(u: float) -> None:
    """Refuse a ``--utilisation`` outside (0, 1]: the fleet's average load as a share of the plan point's rate.

    Raises:
        SpecError: naming ``--utilisation``.
    """
    from jalapeno.errors import SpecError

    if not (math.isfinite(u) and 0 < u <= 1):
        raise SpecError(
            "--utilisation",
            f"must be above 0 and at most 1 (the fleet's average load as a share of the point's rate), got {u:g}",
            "give e.g. --utilisation 0.6 (60% average load), or drop it (1: the point's rate every hour)",
        )


def utilisation_line(u: float, usd_per_mtok: float, allin_w_per_chip: float | None, tok_per_s_per_chip: float,
                     kind: str) -> str:  # fmt: skip
    """The plan's utilisation line (newuser55): its $ per M tokens assume the fleet serves at the point's rate every
    hour (U = 1); at an average load U the fleet's $/hour (bought and provisioned whole) is spread over U x the
    tokens, so $/M tok scales 1/U, and so do the energy and electricity-slope figures per M tokens (at the all-in
    provisioned draw: an upper bound, a chip below full load draws less). ``kind``: the tokens counted ("output").

    Hand check (GB200 NVL72 at 5,541.1 output tok/s/chip, $0.111/M, 2.1 kW all-in, $0.08/kWh, U = 0.5): $0.111 / 0.5
    = $0.222; one chip serves 5,541.1 x 0.5 x 3600 / 1e6 = 9.974 M tok an hour, so energy 2.1 x $0.08 = $0.168 / 9.974
    = $0.0168 per M, and +$0.01/kWh adds $0.021 / 9.974 = $0.00211 per M.

    >>> line = utilisation_line(0.5, 0.111, 2100.0, 5541.1, "output")
    >>> "$0.111 / 0.5 = $0.222" in line, "= $0.0168 per M output tok" in line, "adds $0.00211 per M" in line
    (True, True, True)
    """
    from jalapeno.analysis.power_cost import usd_text

    kind = "input + output" if kind == "total" else kind  # plan's --target-kind total counts both (newuser55)
    if u >= 1:
        return (
            f"utilisation: the $/M {kind} tok figures assume the fleet serves at the point's rate every hour (U = 1); "
            "at an average load U they scale 1/U ($/hour, capex and power are the fleet's whole), e.g. --utilisation 0.5"
        )
    line = (
        f"utilisation {u:g}: the fleet serves {u:g} x its rate on average, so $/M {kind} tok = "
        f"${usd_text(usd_per_mtok)} / {u:g} = ${usd_text(usd_per_mtok / u)} ($/hour, capex and power unchanged: the fleet's whole)"
    )
    if not allin_w_per_chip:
        return line
    mtok_per_chip_hour = tok_per_s_per_chip * u * 3600 / 1e6  # M tokens one chip serves in an hour at load u
    kw, p = allin_w_per_chip / 1e3, POWER_TERMS["usd_per_kwh"].value
    return (
        f"{line}; energy at the all-in draw (an upper bound below full load) ${kw * p:.3g}/chip-hour / "
        f"({tok_per_s_per_chip:,.1f} tok/s/chip x {u:g} x 3600 / 1e6) = ${kw * p / mtok_per_chip_hour:.3g} per M "
        f"{kind} tok, and each +$0.01/kWh adds ${kw * KWH_STEP_USD / mtok_per_chip_hour:.3g} per M {kind} tok"
    )


def capex(usd_per_chip_hour: float, chips: int) -> dict:
    """Capex of ``chips`` bought, $ (an estimate: module docstring).

    Args:
        usd_per_chip_hour: the system's $/chip-hour (TCO; > 0).
        chips: chips bought (whole racks).

    Returns:
        ``{"usd_per_chip", "usd", "usd_low", "usd_high", "ratio"}``: per chip and fleet at the ratio's value, the
        fleet at its high and low ends (a higher TCO-per-capex ratio means less capex), the ratio ($/h per $).
    """
    t = POWER_TERMS["tco_usd_per_hour_per_capex_usd"]
    per = usd_per_chip_hour / t.value
    return {
        "usd_per_chip": per,
        "usd": per * chips,
        "usd_low": usd_per_chip_hour / t.high * chips,
        "usd_high": usd_per_chip_hour / t.low * chips,
        "ratio": t.value,
    }


def _money(x: float) -> str:
    """$ with a scale word: 83.7M, 46.5k, 950."""
    for div, word in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"${x / div:,.1f}{word}"
    return f"${x:,.0f}"


def ratio_text() -> str:
    """``$46.5k / $2.21``: the capex per $/chip-hour, as the TCO/capex term gives it (GB200's capex over its costh).

    >>> ratio_text()
    '$46.5k / $2.21'
    """
    t = POWER_TERMS["tco_usd_per_hour_per_capex_usd"]
    return f"{_money(GB200_CAPEX_USD_PER_GPU)} / ${t.value * GB200_CAPEX_USD_PER_GPU:.2f}"


def capex_line(usd_per_chip_hour: float, chips: int, what: str) -> str:
    """The plan's capex line for ``chips`` (``what`` says which: "bought (whole racks)", "in the fleet"); its figures
    from the TCO/capex term (specs/power), which the arithmetic uses."""
    c = capex(usd_per_chip_hour, chips)
    t, ref = POWER_TERMS["tco_usd_per_hour_per_capex_usd"], GB200_CAPEX_USD_PER_GPU
    return (
        f"capex (estimate): ${usd_per_chip_hour:.4g}/chip-hour x {ratio_text()} (InferenceX's GB200 TCO over capex: "
        f"costh {t.value * ref:.2f} $/h, ~{_money(ref)} a GPU; specs/power tco_usd_per_hour_per_capex_usd) = "
        f"{_money(c['usd_per_chip'])} per chip x {n_chips(chips)} {what} = {_money(c['usd'])} (the ratio's assumed "
        f"band, {t.low * ref:.1f} to {t.high * ref:.1f} $/h per {_money(ref)}: {_money(c['usd_low'])} to "
        f"{_money(c['usd_high'])})"
    )


def bought_text(packaging) -> str:
    """What a plan's capex counts: the whole outermost boxes bought ("bought (whole racks)"), else the chips."""
    return f"bought (whole {packaging[-1][0]}s)" if packaging else "bought"


def money_lines(usd_per_chip_hour: float, power_w: dict, chips: int, what: str) -> list[str]:
    """The plan's capex and electricity lines (``power_w``: the plan's convention -> (W per chip, label, fleet W))."""
    e = electricity_line((power_w.get("all-in") or (None,))[0], usd_per_chip_hour)
    return [capex_line(usd_per_chip_hour, chips, what)] + ([e] if e else [])


def money_dict(usd_per_chip_hour: float, power_w: dict, chips: int) -> dict:
    """``--json``'s ``capex`` and ``electricity`` (:func:`capex`, :func:`electricity`)."""
    return {
        "capex": {**capex(usd_per_chip_hour, chips), "chips": chips, "estimate": True},
        "electricity": electricity((power_w.get("all-in") or (None,))[0], usd_per_chip_hour),
    }


def electricity(allin_w_per_chip: float | None, usd_per_chip_hour: float) -> dict | None:
    """How $/chip-hour moves with the electricity price at the all-in provisioned draw (module docstring).

    Returns:
        ``{"usd_per_chip_hour_per_cent_kwh", "share_per_cent_kwh", "assumed_usd_per_kwh", "energy_usd_per_chip_hour",
        "energy_share"}``, or None without an all-in figure.
    """
    if not allin_w_per_chip:
        return None
    kw = allin_w_per_chip / 1e3
    p = POWER_TERMS["usd_per_kwh"].value
    return {
        "usd_per_chip_hour_per_cent_kwh": kw * KWH_STEP_USD,
        "share_per_cent_kwh": kw * KWH_STEP_USD / usd_per_chip_hour,
        "assumed_usd_per_kwh": p,
        "energy_usd_per_chip_hour": kw * p,
        "energy_share": kw * p / usd_per_chip_hour,
    }


def electricity_line(allin_w_per_chip: float | None, usd_per_chip_hour: float) -> str | None:
    """The plan's electricity line (None without an all-in figure)."""
    e = electricity(allin_w_per_chip, usd_per_chip_hour)
    if e is None:
        return None
    kw = allin_w_per_chip / 1e3
    return (
        f"electricity: each +$0.01/kWh adds {kw:.3g} kW all-in x $0.01 = ${e['usd_per_chip_hour_per_cent_kwh']:.4g}"
        f"/chip-hour ({e['share_per_cent_kwh'] * 100:+.2g}% on $/hour and $/M tok; at the all-in provisioned draw, "
        f"an upper bound below full load); at ${e['assumed_usd_per_kwh']:.2f}/kWh (an assumption: US industrial, "
        f"EIA 2024) energy is ${e['energy_usd_per_chip_hour']:.3g} of the ${usd_per_chip_hour:.4g}/chip-hour "
        f"({e['energy_share'] * 100:.2g}%)"
    )


def chips_band(cp, band) -> dict | None:
    """The chips and outermost boxes (racks) plan ``cp``'s deployment needs at the ends of the measured
    throughput-per-chip error ``band`` (a ``measured_bands.SystemBand``; module docstring). None for a ``--users``
    plan (its instances hold users: an error moves their speed, not the count) or without a throughput band.

    Returns:
        ``{"q_lo", "q_hi", "n", "source", "low": {"instances", "chips", "boxes"}, "high": {...}, "box"}``: ``low`` at
        the favourable end (the measurement above the prediction: fewer chips), ``high`` at the other.
    """
    from jalapeno.analysis.packing import instance_groups, packed_boxes

    mb = None if band is None else band.get("throughput_per_chip")
    if mb is None or cp.users is not None:
        return None
    per_inst = cp.tok_per_s_per_chip * cp.chips_per_instance
    box = cp.packaging[-1] if cp.packaging else None

    def end(q: float) -> dict:
        n = math.ceil(cp.target_tok_per_s / (per_inst / (1 + q)))
        boxes = None if box is None else packed_boxes(instance_groups(cp.point.deployment, n), box[1])
        return {"instances": n, "chips": n * cp.chips_per_instance, "boxes": boxes}

    return {
        "q_lo": mb.q_lo,
        "q_hi": mb.q_hi,
        "n": mb.n,
        "source": mb.source,
        "low": end(mb.q_lo),
        "high": end(mb.q_hi),
        "box": None if box is None else box[0],
    }


def chips_band_line(cp, band, model: str) -> str | None:
    """The plan's 'how sure' figure for a measured system: chips and racks at the measured error's ends."""
    b = chips_band(cp, band)
    if b is None:
        return None

    def boxes_text(n: int) -> str:  # "1 node", "3 racks" (newuser55: "1 nodes")
        return f"{n:,} {b['box']}" + ("" if n == 1 else "s")

    def text(e: dict) -> str:
        return n_chips(e["chips"]) + ("" if e["boxes"] is None else f", {boxes_text(e['boxes'])}")

    boxes = "" if cp.packaging is None or not cp.packaging else f", {boxes_text(cp.packaging[-1][2])}"
    return (
        f"how sure (measured): validate's throughput-per-chip error on {cp.system} ({model}; p10 {b['q_lo'] * 100:+.1f}%"
        f", p90 {b['q_hi'] * 100:+.1f}% of predicted/measured - 1, n {b['n']}, {b['source']}): the same deployment "
        f"serves the target with {text(b['low'])} to {text(b['high'])} (this plan: {cp.chips:,} chips{boxes}); the "
        "point's speed held (its own error moves it too: the audit below)"
    )


def agentic_sure_line(plan, band, system: str, efficiency: str = "calibrated") -> str:
    """The agentic plan's 'how sure' line (newuser55: it had none). ``jalapeno audit`` prices fixed-length workloads
    only and validate measured no agentic one, so the line names what there is: the efficiency band's ends, by
    rerunning the plan with ``--efficiency low`` / ``high``; and, for a ``--target`` plan on a system validate
    measured (``band``: a ``measured_bands.SystemBand``), the chips and outermost boxes the same deployment needs
    at the ends of its fixed-length throughput-per-chip error (p10/p90 of predicted/measured - 1), an assumption
    that the error carries to agent turns: instances = ceil(target / (instance tasks/h / (1 + e))), as
    :func:`chips_band`.

    Hand check (GB200 NVL72, 4-chip instances at 66.57 tasks/h/chip, 10,000 tasks/h; an error of +10%):
    ceil(10,000 / (266.28 / 1.1)) = ceil(41.31) = 42 instances = 168 chips, 3 racks of 72.
    """
    from jalapeno.analysis.packing import packed_boxes

    priced = "the calibrated efficiencies" if efficiency == "calibrated" else f"the efficiency set {efficiency}"
    line = (
        f"how sure: this plan prices {priced} only; `jalapeno audit` prices fixed-length workloads and validate "
        "measured no agentic one: rerun this plan with --efficiency low and --efficiency high for the efficiency "
        "band's ends"
    )
    mb = None if band is None else band.get("throughput_per_chip")
    if mb is None or plan.target_tasks_per_hour is None:
        return line
    per_inst = plan.point["tasks_per_hour_per_chip"] * plan.chips_per_instance
    box = plan.packaging[-1] if plan.packaging else None

    def end(q: float) -> str:
        n = math.ceil(plan.target_tasks_per_hour / (per_inst / (1 + q)))
        if box is None:
            return n_chips(n * plan.chips_per_instance)
        b = packed_boxes({g: c * n for g, c in plan.groups}, box[1])
        return f"{n_chips(n * plan.chips_per_instance)}, {b:,} {box[0]}" + ("" if b == 1 else "s")

    this = n_chips(plan.chips) + ("" if box is None else f", {box[2]:,} {box[0]}" + ("" if box[2] == 1 else "s"))
    return (
        f"{line}; an assumption, that validate's fixed-length throughput-per-chip error on {system} (p10 "
        f"{mb.q_lo * 100:+.1f}%, p90 {mb.q_hi * 100:+.1f}% of predicted/measured - 1, n {mb.n}) carries to agent "
        f"turns: the same deployment finishes the target with {end(mb.q_lo)} to {end(mb.q_hi)} (this plan: {this})"
    )
