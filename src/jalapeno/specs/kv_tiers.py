"""KV-cache tiers below HBM: host memory, local NVMe, a remote cache service.

A system TOML may carry a ``[kv_tiers]`` section, one sub-table per tier (``host``, ``ssd``,
``remote``), each number ``{ value, source }`` as everywhere in the catalog::

    [kv_tiers.host]
    link = "nvlink_c2c"                      # nvlink_c2c | pcie | rack_switch | nic
    capacity_gb_per_chip = { value = 240, source = "..." }
    usable_fraction = { value = 0.75, source = "assumption: ..." }
    bandwidth_gb_per_s = { value = 225, source = "..." }   # per chip, per direction
    latency_us = { value = 2, source = "..." }

``[kv_tiers] none = ["ssd", "remote"]`` says explicitly that a system has no such tier (e.g.
Jalapeño has no reported local NVMe); a tier neither given nor named in ``none`` is absent too,
and :func:`tier_status` reports it as "not in the catalog" so that the difference is visible.
HBM is always the first tier (its capacity is what the memory fit leaves for the KV cache).

Bandwidth is per chip and per direction of the path that moves a sequence's KV back into HBM
(the narrowest hop: the chip-to-chip link, the medium itself or the NIC). A tier's blocks are
reloaded before a turn's prefill, or recomputed when recomputing is faster (serve/sessions.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, model_validator

from jalapeno import units
from jalapeno.specs.sourced import Sourced, _Strict

#: Tiers below HBM in reload order (nearest first).
TIER_NAMES = ("host", "ssd", "remote")
LINKS = ("nvlink_c2c", "pcie", "rack_switch", "nic")


class TierFile(_Strict):
    """One tier of a system TOML's ``[kv_tiers]`` section."""

    link: Literal["nvlink_c2c", "pcie", "rack_switch", "nic"]
    capacity_gb_per_chip: Sourced
    usable_fraction: Sourced | None = None
    bandwidth_gb_per_s: Sourced
    latency_us: Sourced
    note: str = ""

    @model_validator(mode="after")
    def _fraction(self):
        if self.usable_fraction is not None and self.usable_fraction.value > 1:
            v = self.usable_fraction.value  # 75 was meant as a percent: name it and its fraction
            # a value just above 1 (1.2) is a share mistyped, not a percent: no "write 0.012 for 1.2%"
            raise ValueError(
                f"usable_fraction must be <= 1 (a share of the tier's capacity), got {v:g}"
                + (f": write {v / 100:g} for {v:g}%" if 2 <= v <= 100 else "")
            )
        return self


class TiersFile(_Strict):
    """The ``[kv_tiers]`` section: one optional table per tier and the tiers declared absent."""

    host: TierFile | None = None
    ssd: TierFile | None = None
    remote: TierFile | None = None
    none: list[Literal["host", "ssd", "remote"]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _none_disjoint(self):
        both = [n for n in self.none if getattr(self, n) is not None]
        if both:
            raise ValueError(f"tier {both[0]!r} is both described and listed in none")
        return self


@dataclass(frozen=True, slots=True)
class KVTier:
    """One KV-cache tier below HBM (SI units, per chip).

    Attributes:
        name: ``host``, ``ssd`` or ``remote``.
        link: the reload path (``nvlink_c2c``, ``pcie``, ``rack_switch``, ``nic``).
        capacity_bytes: KV bytes this tier holds per chip (capacity × usable fraction).
        bandwidth_bytes_per_s: reload bandwidth per chip, one direction (0 = unusable).
        latency_s: fixed latency of one reload (a turn's blocks move as one batch of transfers).
    """

    name: str
    link: str
    capacity_bytes: float
    bandwidth_bytes_per_s: float
    latency_s: float

    @property
    def usable(self) -> bool:
        """A tier with no capacity or no bandwidth is never used."""
        return self.capacity_bytes > 0 and self.bandwidth_bytes_per_s > 0

    def reload_s(self, nbytes) -> Any:
        """Time to move ``nbytes`` (per chip; scalar or array) back into HBM: latency + bytes/bandwidth."""
        return self.latency_s + nbytes / self.bandwidth_bytes_per_s


def parse_kv_tiers(f: TiersFile | None) -> tuple[tuple[KVTier, ...], tuple[str, ...]]:
    """A validated ``[kv_tiers]`` table (the system schema checked it, naming any bad field)
    → (tiers nearest first, in SI per chip, names declared absent)."""
    if f is None:
        return (), ()
    tiers = []
    for name in TIER_NAMES:
        t: TierFile | None = getattr(f, name)
        if t is None:
            continue
        frac = t.usable_fraction.value if t.usable_fraction else 1.0
        tiers.append(
            KVTier(
                name,
                t.link,
                t.capacity_gb_per_chip.value * units.GB * frac,
                t.bandwidth_gb_per_s.value * units.GB,
                t.latency_us.value * units.US,
            )
        )
    return tuple(tiers), tuple(f.none)


#: Tiers that name the same ``link`` share it (ux54): their reload traffic is summed against one bandwidth, the
#: widest of those tiers' (the link carries at least that; a narrower tier's own medium, e.g. one NVMe drive, stays
#: checked by its own utilisation). Before, each tier's utilisation read its own traffic alone. Off gives the old
#: figures exactly; validate prices no tier, so no held-out or MLPerf figure moves either way.
SHARED_LINK_ON = True


def shared_link_utilisation(rho, bandwidths, links):
    """Each tier's reload-link utilisation with the tiers that share its link (:data:`SHARED_LINK_ON`): ``rho``
    (n, T), tier t's own, its traffic r_t over its bandwidth B_t (serve/sessions.py); ``bandwidths`` (T,) B/s per
    chip; ``links`` (T,) link names. For tier t on link L, max(ρ_t, Σ_{u on L} r_u / max_{u on L} B_u): an M/D/1
    wait at the shared hop sees every tier's traffic. Returns an (n, T) array (``rho`` itself when off or no two
    tiers share a link).

    Hand check (Jalapeño: host and remote both over the rack switch at 50 GB/s a chip, jalapeno.toml): host
    traffic 1 GB/s (ρ 0.02) and remote 0.5 GB/s (ρ 0.01) load the one link (1 + 0.5) / 50 = 0.03 each.

    >>> import numpy as np
    >>> shared_link_utilisation(np.array([[0.02, 0.01]]), [50e9, 50e9], ["rack_switch", "rack_switch"])
    array([[0.03, 0.03]])
    >>> shared_link_utilisation(np.array([[0.02, 0.01]]), [50e9, 50e9], ["nvlink_c2c", "nic"])
    array([[0.02, 0.01]])
    """
    import numpy as np

    links = list(links)
    if not SHARED_LINK_ON or len(set(links)) == len(links):
        return rho
    bw = np.asarray(bandwidths, dtype=float)
    same = np.array([[a == b for b in links] for a in links], dtype=float)  # (T, T): u shares t's link
    link_bw = (same * bw[None, :]).max(axis=1)  # (T,): the widest tier's bandwidth on t's link
    return np.maximum(rho, (rho * bw[None, :]) @ same.T / link_bw[None, :])


def tier_status(system) -> dict[str, str]:
    """Per lower tier of ``system``: ``"<capacity> GB/chip over <link> at <bw> GB/s"``, ``"none"``
    (declared absent) or ``"not in the catalog"``."""
    out = {}
    have = {t.name: t for t in system.kv_tiers}
    for name in TIER_NAMES:
        if name in have:
            t = have[name]
            out[name] = (
                f"{t.capacity_bytes / units.GB:,.0f} GB/chip over {t.link} at "  # 3,456 as hardware show's
                f"{t.bandwidth_bytes_per_s / units.GB:,.0f} GB/s"
            )  # other figures (was 3456 GB/chip)
        elif name in system.kv_tiers_absent:
            out[name] = "none"
        else:
            out[name] = "not in the catalog"
    return out
