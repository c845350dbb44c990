"""Chip power from its components, power drawn under load, and cost that follow a variant.

A chip's rated power (TDP) is split into components, each priced from the chip's specs with a
sourced or named constant (:data:`POWER_TERMS`, each with a low/high band):

    P_idle    = idle_fraction · TDP                               (leakage, clocks, always drawn)
    P_hbm_bg  = stacks · hbm_stack_background_w                   (refresh, PHY standby)
    P_hbm     = W · 8 · e_hbm          (W HBM bytes/s; e_hbm pJ/bit of HBM3/3E or HBM4)
    P_link    = 2 · Σ_scale-up B_level · 8 · serdes_pj_per_bit   (both directions, own ports only)
    P_compute = TDP − the rest                                    (the remainder at full load)

so the catalog chip's components add up to its stated TDP. A *variant* (specs/variants.py) keeps
its root's idle watts and energy per FLOP and re-prices the rest from its own specs: eight HBM
stacks, more bandwidth or faster links cost watts, and its TDP, sustained power, all-in power
(Δ · PUE) and $/chip-hour (Δ HBM capex, Δ energy) follow (:func:`follow_variant`).

Power drawn at an operating point (:func:`load_power_w`) scales the dynamic terms with the
utilisation of compute (achieved FLOP/s over peak, each op at its format's peak), HBM (achieved
bytes/s over bandwidth) and scale-up links (collective bytes/s over line rate):

    P(u_c, u_m, u_l) = P_idle + P_hbm_bg + u_m · P_hbm + u_l · P_link + u_c · (TDP − P_idle − P_hbm_bg)  (≤ TDP)

The compute term is what fills the TDP (compute-bound work reaches the rated power; memory-bound
decode does not), not the TDP's remainder after HBM and links at full rate too
(:attr:`ChipPower.compute_bound_w`). Check against measurement: memory-bound decode on an H200
(u_m ≈ 0.8, u_c ≈ 0.05) gives about 252 W with the mid terms; Ma et al. measured 137-300 W for
decode on a 700 W H200 across four attention types ("The Illusion of Power Capping in LLM
Decode", arXiv 2605.11999, 2026), and no power cap triggered in decode.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from jalapeno import units
from jalapeno.errors import SpecError


@dataclass(frozen=True, slots=True)
class Term:
    """One power or cost constant with its band and source."""

    value: float
    low: float
    high: float
    unit: str
    source: str


#: GB200 capex per GPU, $: the middle of the third-party GB200 NVL72 rack price ~$3-3.5M = $44-49k/GPU
#: (AshitaOrbis/inference-margins site/engine.js notes), the denominator of ``tco_usd_per_hour_per_capex_usd``
GB200_CAPEX_USD_PER_GPU = 46_500

#: The constants of the component model; each sourced or a named assumption, with a band.
POWER_TERMS: MappingProxyType = MappingProxyType(
    {
        "idle_fraction": Term(
            0.12,
            0.08,
            0.20,
            "of TDP",
            "assumption informed by measurement: an idle H200 draws "
            "~80 W of 700 (11%) and memory-bound decode 137-300 W (Ma et al., arXiv 2605.11999, 2026)",
        ),
        "hbm3_pj_per_bit": Term(
            3.9,
            3.0,
            5.0,
            "pJ/bit",
            "Samsung: HBM3E at 3.9 pJ/bit (stated with its HBM4E target of "
            "more than twice the efficiency, 2025); band spans HBM3 to HBM3E parts",
        ),
        "hbm4_pj_per_bit": Term(
            2.8,
            2.0,
            3.9,
            "pJ/bit",
            "SK hynix: HBM4 power efficiency improved by more than 40% over "
            "HBM3E (Sept. 2025 mass-production release): 3.9 / 1.4 = 2.8; high end = no gain",
        ),
        "hbm4_min_tb_per_s_per_stack": Term(
            1.5,
            1.5,
            1.5,
            "TB/s per stack",
            "HBM3E tops out at ~1.2-1.3 TB/s per stack "
            "(9.6-9.8 Gb/s x 1024 bits); above 1.5 TB/s per stack the chip uses HBM4",
        ),
        "hbm_stack_background_w": Term(
            3.0, 1.5, 6.0, "W per stack", "assumption: refresh and PHY standby of one stack"
        ),
        "serdes_pj_per_bit": Term(
            5.0,
            3.0,
            8.0,
            "pJ/bit",
            "assumption: long-reach 112-224 Gb/s electrical SerDes of a "
            "scale-up fabric (short-reach die-to-die links are ~1 pJ/bit, optics more)",
        ),
        "pue": Term(
            1.25,
            1.1,
            1.4,
            "x",
            "assumption: the facility multiplier of the catalog's all-in estimates "
            "(data/systems/jalapeno.toml [power])",
        ),
        "hbm_usd_per_gb": Term(
            15.0,
            10.0,
            25.0,
            "$/GB",
            "assumption: HBM3E/HBM4 contract prices reported at roughly $10-25 per GB (industry press, 2024-2025)",
        ),
        "usd_per_kwh": Term(0.08, 0.05, 0.15, "$/kWh", "assumption: US industrial electricity ~0.08 $/kWh (EIA 2024)"),
        "tco_usd_per_hour_per_capex_usd": Term(
            2.21 / GB200_CAPEX_USD_PER_GPU,
            1.6 / GB200_CAPEX_USD_PER_GPU,
            2.8 / GB200_CAPEX_USD_PER_GPU,
            "$/h per $ capex",
            "InferenceX GB200 costh 2.21 $/GPU-hour (SemiAnalysisAI/InferenceX-app "
            "constants.ts, Apr 2026) over ~$46.5k capex per GPU (third-party "
            "GB200 NVL72 rack price ~$3-3.5M = $44-49k/GPU, AshitaOrbis/"
            "inference-margins site/engine.js notes), as the catalog's "
            "Jalapeño cost estimate; band 1.6-2.8 $/h per $46.5k: an assumption (no source recorded; "
            "its high end near InferenceX's neocloud-owner GB200 costh 2.75 $/h at the same capex)",
        ),
    }
)

#: System-file keys a variant may state itself; a stated one is not re-derived from components.
POWER_KEYS = ("chip.tdp_w", "chip.sustained_w", "power.allin_kw_per_chip", "cost.usd_per_chip_hour")


def term(name: str, terms=None) -> float:
    """The value of power term ``name`` (from ``terms``, a name → value mapping, else the mid)."""
    if terms is not None and name in terms:
        return float(terms[name])
    return POWER_TERMS[name].value


@dataclass(frozen=True, slots=True)
class ChipPower:
    """A chip's power components at full load (W) and what they scale with.

    Attributes:
        idle_w, hbm_background_w: drawn whatever the load.
        hbm_w: HBM access power at full bandwidth; link_w: scale-up SerDes at line rate both ways;
        compute_w: compute (tensor cores, caches, NoC) at full utilisation of peak.
        tdp_w: their sum (the stated TDP for a catalog chip).
    """

    idle_w: float
    hbm_background_w: float
    hbm_w: float
    link_w: float
    compute_w: float

    @property
    def tdp_w(self) -> float:
        """The chip's power at full load of every part: idle + HBM background + HBM + links + compute, W."""
        return self.idle_w + self.hbm_background_w + self.hbm_w + self.link_w + self.compute_w

    @property
    def compute_bound_w(self) -> float:
        """What compute-bound work draws above the always-drawn terms at full compute utilisation:
        the TDP less idle and HBM background (W). A chip's rated power is reached by dense math
        with little HBM or link traffic (memory-bound decode leaves it untouched: on a 700 W H200
        decode draws 137-300 W and a power cap never triggers, Ma et al., arXiv 2605.11999, 2026),
        so the FLOPs, not the remainder after HBM and links at full rate as well, are what fill it."""
        return self.tdp_w - self.idle_w - self.hbm_background_w

    def as_dict(self) -> dict[str, float]:
        """The power parts as JSON, W."""
        return {
            "idle_w": self.idle_w,
            "hbm_background_w": self.hbm_background_w,
            "hbm_w": self.hbm_w,
            "link_w": self.link_w,
            "compute_w": self.compute_w,
            "tdp_w": self.tdp_w,
        }


def _hbm_pj_per_bit(chip, terms) -> float:
    per_stack = chip.hbm_bandwidth_bytes_per_s / max(chip.hbm_stacks, 1) / units.TB
    gen = "hbm4" if per_stack > term("hbm4_min_tb_per_s_per_stack", terms) else "hbm3"
    return term(f"{gen}_pj_per_bit", terms)


def scale_up_bytes_per_s(system) -> float:
    """Per-chip scale-up bandwidth per direction over the levels with their own ports (B/s): the
    line rate the SerDes power ``P_link`` is priced at."""
    return sum(
        lv.bandwidth_bytes_per_s for lv in system.levels if lv.scope == "scale_up" and not lv.shares_ports_with_inner
    )


def _peak(chip) -> float:
    return chip.peak_flop_per_s.get("fp8", chip.peak_flop_per_s["bf16"])


def _fixed_parts(system, terms) -> tuple[float, float, float]:
    c = system.chip
    hbm_bg = c.hbm_stacks * term("hbm_stack_background_w", terms)
    hbm = c.hbm_bandwidth_bytes_per_s * 8 * _hbm_pj_per_bit(c, terms) * 1e-12
    link = 2 * scale_up_bytes_per_s(system) * 8 * term("serdes_pj_per_bit", terms) * 1e-12
    return hbm_bg, hbm, link


def chip_power(system, root=None, terms=None) -> ChipPower:
    """Components of ``system``'s chip power at full load.

    Without ``root`` the components are anchored on the system's own TDP (compute = the
    remainder). With ``root`` (the catalog system a variant derives from) the idle watts and the
    compute energy per FLOP are the root's and every other term is the variant's own.

    Raises:
        SpecError: the modelled memory, link and idle power exceed the anchor's TDP (the terms do
            not fit the chip: the message names the numbers).
    """
    anchor = root or system
    a_bg, a_hbm, a_link = _fixed_parts(anchor, terms)
    idle = term("idle_fraction", terms) * anchor.chip.tdp_w
    compute_root = anchor.chip.tdp_w - idle - a_bg - a_hbm - a_link
    if compute_root <= 0:
        raise SpecError(
            f"{anchor.name}: chip.tdp_w",
            f"{anchor.chip.tdp_w:.0f} W is below its modelled idle, HBM "
            f"and link power ({idle + a_bg + a_hbm + a_link:.0f} W)",
            "check the TDP and bandwidths, or the power terms (specs/power.py)",
        )
    if root is None:
        return ChipPower(idle, a_bg, a_hbm, a_link, compute_root)
    bg, hbm, link = _fixed_parts(system, terms)
    return ChipPower(idle, bg, hbm, link, compute_root * _peak(system.chip) / _peak(anchor.chip))


def load_power_w(cp: ChipPower, u_compute, u_hbm, u_link=0.0):
    """Chip power drawn at utilisations ``u_compute`` (FLOP/s over peak), ``u_hbm`` (bytes/s over
    bandwidth), ``u_link`` (link bytes/s over line rate); arrays broadcast; each clipped to [0, 1]
    and the total to the TDP. W.

        P = P_idle + P_hbm_bg + u_m · P_hbm + u_l · P_link + u_c · P_compute_bound   (≤ TDP)

    with ``P_compute_bound`` = TDP − P_idle − P_hbm_bg (:attr:`ChipPower.compute_bound_w`): a
    compute-bound chip draws its rated power. Pricing the FLOPs at the remainder after HBM and
    links at full rate too (``compute_w``) left a chip with a large HBM share little for compute
    (Jalapeño 189 W of 700: 0.056 pJ per FP8 FLOP against H200's 0.21 and B200's 0.12), and its
    drawn power ~3.6x under its TDP at its peak throughput.

    >>> cp = ChipPower(idle_w=84, hbm_background_w=18, hbm_w=150, link_w=36, compute_w=412)
    >>> round(float(load_power_w(cp, 0.05, 0.8)), 1)  # 84 + 18 + 0.8 x 150 + 0.05 x 598
    251.9
    """
    import numpy as np

    uc, um, ul = (np.clip(np.asarray(u, dtype=float), 0.0, 1.0) for u in (u_compute, u_hbm, u_link))
    p = cp.idle_w + cp.hbm_background_w + um * cp.hbm_w + ul * cp.link_w + uc * cp.compute_bound_w
    return np.minimum(p, cp.tdp_w)


def follow_variant(system, root, stated: set[str], terms=None):
    """``system`` with its TDP, sustained power, all-in power and $/chip-hour following its
    components, relative to ``root`` (the catalog system it derives from); a key in ``stated``
    (:data:`POWER_KEYS` the variant gives itself) is kept as given.

    ΔP = TDP(variant components) − TDP(root); sustained scales with TDP; all-in += ΔP · PUE;
    $/chip-hour += Δ(HBM GB) · $/GB · TCO-per-capex + ΔP_all-in · $/kWh. Each changed number's
    source says how it was derived. Returns ``system`` unchanged when nothing moved.

    Raises:
        SpecError: as :func:`chip_power`.
    """
    cp = chip_power(system, root, terms)
    d_w = cp.tdp_w - root.chip.tdp_w
    d_gb = (system.chip.hbm_capacity_bytes - root.chip.hbm_capacity_bytes) / units.GB
    if abs(d_w) < 1e-9 and abs(d_gb) < 1e-9:
        return system
    src = dict(system.sources)
    how = (
        f"follows the variant's components (specs/power.py): {root.name} {root.chip.tdp_w:.0f} W "
        f"{'+' if d_w >= 0 else '-'} {abs(d_w):.1f} W (HBM {cp.hbm_w:.0f} W, HBM background "
        f"{cp.hbm_background_w:.0f} W, links {cp.link_w:.0f} W, compute {cp.compute_w:.0f} W)"
    )
    chip = system.chip
    if "chip.tdp_w" not in stated:
        chip = replace(chip, tdp_w=chip.tdp_w + d_w)
        src["chip.tdp_w"] = how
    if "chip.sustained_w" not in stated and chip.sustained_w is not None:
        chip = replace(chip, sustained_w=chip.sustained_w * chip.tdp_w / system.chip.tdp_w)
        src["chip.sustained_w"] = "scaled with the TDP; " + how
    allin = system.allin_power_w_per_chip
    if "power.allin_kw_per_chip" not in stated:
        allin += (chip.tdp_w - system.chip.tdp_w) * term("pue", terms)
        src["power.allin_kw_per_chip"] = f"+ chip power change x PUE {term('pue', terms):g}; " + how
    usd = system.usd_per_chip_hour
    if "cost.usd_per_chip_hour" not in stated:
        usd += d_gb * term("hbm_usd_per_gb", terms) * term("tco_usd_per_hour_per_capex_usd", terms) + (
            allin - system.allin_power_w_per_chip
        ) / 1000 * term("usd_per_kwh", terms)
        src["cost.usd_per_chip_hour"] = (
            f"+ HBM capex {d_gb:+.0f} GB x {term('hbm_usd_per_gb', terms):g} $/GB over "
            f"the TCO/capex ratio + energy at {term('usd_per_kwh', terms):g} $/kWh"
        )
    for k in POWER_KEYS:  # a figure that follows an estimate stays one (plan called a variant's $/h a price)
        if src.get(k) != system.sources.get(k) and "(estimate)" in system.sources.get(k, ""):
            src[k] += " (estimate)"
    return replace(
        system, chip=chip, allin_power_w_per_chip=allin, usd_per_chip_hour=usd, sources=MappingProxyType(src)
    )
