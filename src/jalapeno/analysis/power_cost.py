"""Power, energy and cost per token under labelled power conventions (DESIGN.md §3).

    tok/s per kW = throughput_per_chip / (P_chip / 1000)
    J/token      = P_chip / throughput_per_chip
    $/M tokens   = ($/chip-hour) / (throughput_per_chip · 3600 / 10^6)

P_chip is one of: ``chip`` (the chip's TDP), ``sustained`` (sustained power under load where the
catalog has it, else TDP, labelled so), ``all-in`` (provisioned power per chip incl. host,
network and facility; InferenceX's convention). Throughput counts input + output tokens, as
InferenceX's tok/s/MW and $/M tokens do.
"""

from __future__ import annotations

import numpy as np

from jalapeno.errors import UnknownNameError
from jalapeno.specs.hardware import System

CONVENTIONS = ("chip", "sustained", "all-in")


def power_w_per_chip(system: System, convention: str) -> tuple[float, str]:
    """Power per chip under ``convention`` and a label saying what it is.

    Raises:
        UnknownNameError: unknown convention.
    """
    c = system.chip
    if convention == "chip":
        return c.tdp_w, "chip TDP"
    if convention == "sustained":
        if c.sustained_w is None:
            return c.tdp_w, "chip TDP (no sustained figure published)"
        return c.sustained_w, "chip sustained"
    if convention == "all-in":
        return system.allin_power_w_per_chip, "all-in provisioned"
    raise UnknownNameError("power", f"unknown power convention {convention!r}",
                           f"use one of {', '.join(CONVENTIONS)}")


def energy_and_cost(throughput_per_chip, system: System, convention: str) -> dict[str, np.ndarray]:
    """tok/s/kW, J/token and $/M tokens for throughputs (N,) tok/s per chip (input + output)."""
    t = np.asarray(throughput_per_chip, dtype=float)
    p, _ = power_w_per_chip(system, convention)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "power_w_per_chip": np.full(t.shape, p),
            "tok_s_per_kw": t / (p / 1000.0),
            "j_per_token": np.where(t > 0, p / t, np.inf),
            "usd_per_mtok": np.where(t > 0, system.usd_per_chip_hour / (t * 3600 / 1e6), np.inf),
        }
