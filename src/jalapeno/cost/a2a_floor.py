"""The measured per-call floor of TensorRT-LLM's NVLink one-sided MoE all-to-all (shipped OFF: :data:`A2A_FLOOR_ON`).

The link-hierarchy model prices one MoE dispatch or combine as a line in its bytes (cost/collectives.py,
``alpha + all_to_all_latency_s + (g-1)/g · M/B``, one latency for every EP size, fitted at the carried
``all_to_all_fraction`` 0.45: fit/calibrate.py). TensorRT-LLM's own kernel, timed by aiconfigurator-core on
GB200 (``comm/trtllm/1.3.0rc10/trtllm_alltoall_perf``, whose rows name TensorRT-LLM 1.2.0rc6 — the release of the
InferenceX GB200 Dynamo-TRT rows, 1.2.0rc6.post2; ``NVLinkOneSided``: the path its CuTe-DSL and CUTLASS MoE backends
take under attention DP, cost/host_calls.ADP_MOE_A2A_EXTRA), has a fixed time that grows with
the EP size — dispatch + combine at one token a rank 29.0 / 32.0 / 43.6 / 46.1 / 53.4 us at EP 2 / 4 / 8 /
16 / 32 — which the one-latency line prices at ~38 us at every EP size. At EP32 and 16 tokens a rank
(InferenceX GB200 row 7's decode step, DEP32 MTP3) the kernel measures 58.0 us and the line 44.0 us.

Where the switch is on, a pool whose software stack runs TensorRT-LLM's NVLink all-to-all
(``Efficiency.moe_exchange`` ``nvlink_all_to_all*``) prices each scale-up all-to-all call at

    t = max(t_line, floor(g)),   floor(g) = interp(log2 g; log2 ep_i, floor_i)   (clamped at both ends)

``floor_i`` the measured per-call floor at EP ep_i (data/collectives/a2a_floor.toml, written by
scripts/fit_a2a_floor.py: mean of dispatch and combine at one token a rank). GB300-NVL72 has no table of its own and
carries GB200-NVL72's (fit/kernel_tables.A2A_FABRIC_SIBLING: the same NVLink 5 fabric; the file's ``table`` names it). The floor binds only where
the line is below it (small messages at EP >= 8); every large message keeps the line's price.
ASSUMPTION (named): beyond the largest measured EP size the floor stays at the largest's (a kernel that
signals every peer waits no less on more of them). On a derived efficiency set (cost/pricer.measured_here),
a system the file does not list, a variant whose link levels differ from the catalog system's, or a
``spread`` placement, the line stands.

Why OFF (round 44, mnnvl44; docs/gap_disagg_overprediction.md "MNNVL all-to-all floor"): it moves 6 of
6,920 validated points; InferenceX GB200 row 7 TPOT −14.7% → −11.9% (throughput +19.4% → +15.7%), but the
held-out aiconfigurator GB300 interactivity bias −4.8% → −5.3% (a new goal miss: |bias| <= 5%), so it ships
off with its figures.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

import numpy as np

from jalapeno.cost.collectives import CollectiveTime
from jalapeno.errors import SpecError
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.hardware import System

#: Price TensorRT-LLM's NVLink all-to-all no faster than its measured per-call floor (module docstring: OFF).
A2A_FLOOR_ON = False


@lru_cache(maxsize=1)
def _floors() -> MappingProxyType:
    raw = tomllib.loads((resources.files("jalapeno") / "data" / "collectives" / "a2a_floor.toml").read_text())
    out = {}
    for f in raw.get("floor", []):
        ep, t = np.asarray(f["ep"], dtype=float), np.asarray(f["floor_us"], dtype=float) * 1e-6
        if f["system"] in out or len(ep) < 2 or len(ep) != len(t) or np.any(np.diff(ep) <= 0) or np.any(t <= 0):
            raise SpecError(
                "a2a_floor.toml",
                f"floor of {f['system']!r}: duplicated, unsorted or non-positive",
                "rerun scripts/fit_a2a_floor.py",
            )
        out[f["system"]] = (np.log2(ep), t)
    return MappingProxyType(out)


def a2a_floor_s(system: str, group: int) -> float | None:
    """The measured per-call floor (s) of TensorRT-LLM's one-sided all-to-all over ``group`` ranks on the
    catalog system ``system`` (log2-linear between measured EP sizes, clamped at both ends); None where the
    system has no measured floor.

    >>> round(a2a_floor_s("gb200-nvl72", 32) * 1e6, 1)  # (20.9 + 32.4) / 2 us at one token a rank
    26.7
    >>> a2a_floor_s("h200", 8) is None
    True
    """
    f = _floors().get(system)
    return None if f is None else float(np.interp(np.log2(max(int(group), 1)), *f))


def floored_all_to_all(
    base: CollectiveTime, group: int, system: System, eff: Efficiency, placement: str = "packed"
) -> CollectiveTime:
    """``base`` (the link-hierarchy price of one MoE all-to-all call, (N,) seconds) raised to the measured
    floor where the module's rule applies (module docstring), else ``base`` unchanged.

    Args:
        base: cost/collectives.collective_time of the call; group: its EP ranks; system, eff: the pricer's.
        placement: ``packed`` or ``spread`` (spread: ``base``).
    """
    from jalapeno.cost.pricer import measured_here

    if (
        not A2A_FLOOR_ON
        or not eff.moe_exchange.startswith("nvlink_all_to_all")
        or group <= 1
        or placement != "packed"
        or base.scope != "scale_up"
        or not measured_here(eff)
    ):
        return base
    root = system.origin.root if system.origin is not None and system.origin.root else system.name
    floor = a2a_floor_s(root, group)
    if (
        floor is None
        or (root != system.name or system.origin is not None and system.origin.overrides)
        and _catalog_levels(root) != system.levels
    ):
        return base
    return CollectiveTime(
        np.maximum(np.asarray(base.time_s, dtype=float), floor), base.algorithm, base.level, base.scope
    )


@lru_cache(maxsize=16)
def _catalog_levels(name: str):
    """The link levels of the catalog system ``name`` (a variant with other levels keeps the line)."""
    from jalapeno.specs.catalog import load_system

    return load_system(name).levels
