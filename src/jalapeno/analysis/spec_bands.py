"""The estimated specs in compare's and report's ``--bands`` and in audit's band (ux55; audit since bands55).

A derived system's band (cost/pricer.band_pricers: its calibration's low/high efficiency sets with its software
stack's band) left out the specs its own file marks ``estimate = true``: Jalapeño's BF16 peak (1,700 TFLOP/s, "FP8 / 2
as on every NVIDIA and AMD chip"), its usable HBM and tray bandwidth, Vera Rubin's FP8 peak (inferred from a keynote),
every assumed link latency. sensitivity and audit move each across its band (analysis/uncertain.estimated_specs: the
file's stated ``low``/``high``, else ±20%, latencies 0.5-2x; usable HBM at most the nominal capacity); here the low end
of the band takes every such spec a step reads at its slower end and the high end at its faster end, with the
efficiency sets' low and high, so the band holds both what the model does not know about the kernels and what the
catalog does not know about the chip.

Left out, each said elsewhere: ``power.*``, ``chip.tdp_w``, ``chip.sustained_w`` and ``cost.*`` (a per-kW or $ figure's basis line and ``est.`` mark say
they are estimates; the ratios' per-kW scale is the stated figure, and each band end keeps the stated watts and
$/chip-hour, :func:`stated_power`, so audit's per-kW band is compare's), ``kv_tiers.*`` (read by agentic workloads' KV
tiers only) and ``die.*`` (read by the sliced chip model only). A system banded by its measured error (validate's
p10/p90, analysis/measured_bands.py: no efficiency band) keeps that band: its measured points were priced with its
estimated specs, so their error holds them already.
"""

from __future__ import annotations

from jalapeno.analysis.uncertain import Parameter, apply, estimated_specs

#: Switch: the estimated specs move with a derived system's efficiency band in compare's and report's --bands and in
#: audit's band (analysis/audit.audit_claim, hence audit --claims and plan's "how sure" pointer). ON since bands55 (ux55
#: shipped it off until audit took them): Jalapeño vs GB300 DeepSeek-R1 8K/1K FP8 all-in per-kW ratio band
#: 0.934-1.489 -> 0.836-1.618 (docs/audit.md §3.1), and §5's chip-power peak_tok_s_per_kw_ratio=1.7 turns from
#: REQUIRES to plausible (band 1.023-1.631 -> 0.915-1.773). No validate figure reads a band: no prediction moves.
ESTIMATED_SPEC_BANDS_ON = True
#: estimated-spec keys no step of compare's sweep reads (module docstring)
NOT_IN_BAND = ("power.", "cost.", "chip.tdp_w", "chip.sustained_w", "kv_tiers.", "die.")
#: key endings of the estimated specs where a smaller value is faster (a latency); any other is faster larger
#: (peaks, bandwidths, capacities)
SMALLER_IS_FASTER = ("latency_us", "_ns")


def banded_specs(pricer, band: dict) -> list[Parameter]:
    """The estimated specs of ``pricer``'s system that its ``band`` (cost/pricer.band_pricers) moves: none where the
    band has no efficiency width (a measured system: its measured error band) or :data:`ESTIMATED_SPEC_BANDS_ON` is
    off, else each ``estimate = true`` spec a
    step reads (not :data:`NOT_IN_BAND`)."""
    from jalapeno.analysis.measured_bands import same_set

    if not ESTIMATED_SPEC_BANDS_ON or all(same_set(band[w], pricer) for w in ("low", "high")):
        return []
    return [p for p in estimated_specs(pricer.system) if not p.key.startswith(NOT_IN_BAND) and p.low < p.high]


def slow_fast(p: Parameter) -> tuple[float, float]:
    """(slower, faster) end of an estimated spec's band: a latency's high end is the slower one.

    >>> slow_fast(Parameter("levels.rack.latency_us", 2.0, 1.0, 4.0, None, 0.2, 20.0, "spec", ""))
    (4.0, 1.0)
    >>> slow_fast(Parameter("chip.peak_dense_tflops.bf16", 1700.0, 1360.0, 2040.0, None, 170.0, 17000.0, "spec", ""))
    (1360.0, 2040.0)
    """
    return (p.high, p.low) if p.key.endswith(SMALLER_IS_FASTER) else (p.low, p.high)


def stated_power(system) -> dict:
    """The watts and $/chip-hour ``system`` states (or its catalog derives), as ``--set`` keys: a band end keeps them
    (bands55). Under ``--set`` a slower tray would cost fewer link watts (specs/power.py), so the low end would
    read a better tok/s per kW than its specs justify and the per-kW headline band would not be the per-kW ratio
    band, which scales both ends by the stated watts (analysis/ratio_bands.band_ratios); the power and cost
    estimates are not band ends (module docstring).

    >>> from jalapeno.specs.catalog import load_system
    >>> stated_power(load_system("jalapeno"))
    {'chip.tdp_w': 700.0, 'chip.sustained_w': 550.0, 'power.allin_kw_per_chip': 1.15, 'cost.usd_per_chip_hour': 1.43}
    """
    out = {"chip.tdp_w": system.chip.tdp_w, "chip.sustained_w": system.chip.sustained_w}
    out["power.allin_kw_per_chip"] = system.allin_power_w_per_chip / 1e3 if system.allin_power_w_per_chip else None
    out["cost.usd_per_chip_hour"] = system.usd_per_chip_hour
    return {k: v for k, v in out.items() if v is not None}


def with_estimated_specs(pricer, band: dict) -> dict:
    """``band`` ({"low", "calibrated", "high"} pricers of ``pricer``) with :func:`banded_specs` applied: each at its
    slower end on the low pricer and its faster end on the high one (analysis/uncertain.apply: the system rebuilt
    through its file form, every schema check), each end keeping the system's stated watts and $/chip-hour
    (:func:`stated_power`); ``band`` as it is where no spec is banded.

    Raises:
        SpecError: a band end the schema refuses (none of the catalog's: usable HBM is capped at the nominal).
    """
    specs = banded_specs(pricer, band)
    if not specs:
        return band
    ends = {p.key: slow_fast(p) for p in specs}
    keep = stated_power(pricer.system)
    return {
        **band,
        "low": apply(band["low"], {**{k: v[0] for k, v in ends.items()}, **keep})[0],
        "high": apply(band["high"], {**{k: v[1] for k, v in ends.items()}, **keep})[0],
    }


def spec_band_line(pricers) -> str | None:
    """The line under a banded comparison naming, per system, the estimated specs its band holds with their ends
    (``pricers``: the compared pricers, in order); None where no system's band holds one."""
    from jalapeno.analysis.explore_full import figure_text
    from jalapeno.analysis.sensitivity import unit_of
    from jalapeno.cost.pricer import band_pricers

    parts = []
    for pr in pricers:
        specs = banded_specs(pr, band_pricers(pr))
        if specs:
            parts.append(
                f"{pr.system.name}: "
                + ", ".join(
                    f"{p.key} {figure_text(p.low)} to {figure_text(p.high)} {unit_of(p.key)}".rstrip() for p in specs
                )
            )
    if not parts:
        return None
    return (
        "estimated specs in the band (the catalog's estimate = true, each at its slower end in the low end and its "
        "faster end in the high one, with the efficiency sets': the file's stated band, else ±20%, latencies 0.5-2x; "
        "their power and $/chip-hour estimates are not in it, marked est. and named in the basis lines): "
        + "; ".join(parts)
    )
