"""The routed experts' per-rank width term: MoE TP k runs each expert k times narrower.

The calibrated routed-expert form (cost/roofline.py, fitted by fit/kernels.fit_moe with every row
priced at full width) sees FLOPs and bytes only. At MoE TP k the grouped GEMMs run the same tokens
over experts of width w = I/k: the down projection's K loop is only w long and gate/up are 2w wide,
so each output tile's fixed cost (prologue, epilogue, scale loads) is spread over fewer MACs. Per
system and compute format, data/moe_width.toml holds (c, p) of the overhead per MAC (c/w)^p,
fitted by scripts/fit_moe_width.py (fit/moe_width.py) on aiconfigurator's moe_perf latency ratios
(MoE TP k, EP 1)/(MoE TP 1, EP k) at >= 4096 tokens (same FLOPs and bytes per rank), every shape
but DeepSeek's fitted, DeepSeek's held out. The compute time of an op of kind ``moe`` split ``k``
ways is multiplied by :func:`width_factor`: 1 at MoE TP 1 (named assumption: the calibrated form prices the
full-width kernel, which prefill11 found within 3% on DeepSeek at EP8, docs/model.md §12). The
memory (decode) term is unchanged.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

import numpy as np


@lru_cache(maxsize=1)
def _terms() -> MappingProxyType:
    with resources.files("jalapeno.data").joinpath("moe_width.toml").open("rb") as f:
        raw = tomllib.load(f)
    return MappingProxyType(
        {(e["system"], e["fmt"]): (float(e["c_elems"]), float(e["exponent"])) for e in raw.get("width", [])}
    )


def width_terms(system: str) -> MappingProxyType:
    """{compute format: (c, p)} of ``system`` (a catalog name); empty when not fitted."""
    return MappingProxyType({f: v for (s, f), v in _terms().items() if s == system})


def width_factor(width, split, rows, half: float, c: float, p: float) -> np.ndarray:
    """Compute-time multiplier of a routed-expert op whose per-rank expert width is ``width``
    (elements) at MoE TP ``split`` with ``rows`` rows per expert: 1 + ((c/w)^p − (c/I)^p)·m/(m + half),
    I = width·split, ``half`` the form's moe[fmt].half_rows. The form's compute time is
    F/(P·eta_f)·(1 + half/m); the width adds (c/w)^p per MAC beside the row penalty, relative to
    the full-width kernel the form was calibrated on, so it fades where the row penalty dominates
    (decode: few rows per expert). Arrays broadcast.

    >>> round(float(width_factor(256.0, 8, 1e12, 64.0, 512.0, 1.0)), 3)  # 1 + 2 − 0.25
    2.75
    >>> round(float(width_factor(256.0, 8, 64.0, 64.0, 512.0, 1.0)), 3)  # 1 + 1.75/2
    1.875
    >>> float(width_factor(2048.0, 1, 100.0, 64.0, 512.0, 1.0))
    1.0
    """
    w = np.asarray(width, dtype=float)
    full = w * np.asarray(split, dtype=float)
    m = np.asarray(rows, dtype=float)
    return 1.0 + ((c / w) ** p - (c / full) ** p) * m / (m + half)
