"""The routed experts' weight-streaming fraction of a chip without MoE kernel tables: pooled, not borrowed.

A chip with no MoE kernel measurements (Jalapeño, Vera Rubin, each system left out by fit/loso.py) prices its
routed-expert block by the roofline under a borrowed efficiency set (fit/calibrate.derived_set). At decode that
block streams the experts' weights from HBM, so its time is set by ``moe[fmt].hbm_fraction`` (specs/efficiency.py:
achieved HBM fraction of the grouped GEMMs plus the permute/finalize kernels around them, fitted per compute
format on aiconfigurator ``moe_perf``). The fitted value is a fact about one chip's kernels in one format, and it
does not carry over to another chip: the Blackwell sets fit FP8 MoE at 0.54-0.56 of HBM (TensorRT-LLM 1.3.0rc20's
FP8 MoE path there) where the Hopper sets, the same format, fit 0.70-0.74, and both fit BF16 and FP4 at
0.72-0.81 (data/calibration/*.toml ``[parameters.moe.*]``). Which formats' kernels are mature on a chip is known
only from its own tables, so a chip without them takes the value its format's kernels reach on measured chips
*in general*: the median over the measured systems (:data:`MOE_POOL`, those with MoE tables) and every format
each fitted, of ``moe[fmt].hbm_fraction`` — every ``moe[fmt]`` entry of the borrowed set gets that one value;
the other MoE fields (token passes, peak fraction, half rows: the compute-bound and activation terms) stay the
borrowed set's. No parameter is fitted here: a median of shipped fits.

Measured (leave-one-system-out, scripts/moe_transfer_loso.py; the pool without the left-out system and its
same-silicon twin, each donor refitted with their tables withheld): see docs/validation.md "Pricers: roofline vs
table lookup, and leave-one-system-out" and docs/model.md §11.2. Chips pooled: :data:`MOE_POOL`; chips that take the pooled value: every leave-one-out set
(fit/loso.loso_set) and the derived NVIDIA-like sets :data:`POOLED_MOE_SYSTEMS` (the AMD sets keep their own
aiter fused-MoE fits, fit/amd.py).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

import numpy as np

from jalapeno.errors import SpecError

#: measured systems whose MoE kernel tables (aiconfigurator moe_perf) set the pool: the six NVIDIA systems of
#: fit/loso.LOSO_DONOR (A100's set has no MoE fit)
MOE_POOL = ("h100", "h200", "b200", "gb200-nvl72", "b300", "gb300-nvl72")
#: derived sets (fit/calibrate.DERIVED_FROM) whose routed experts take the pooled value: the chips with no
#: kernel tables of any kind
POOLED_MOE_SYSTEMS = ("jalapeno", "vera-rubin-nvl72")


def pooled_moe_hbm(sets: Mapping[str, dict]) -> float:
    """Median of ``moe[fmt].hbm_fraction`` over the given parameter sets (system → nested ``parameters``) and
    every format each fitted (dimensionless, fraction of the HBM peak).

    >>> pooled_moe_hbm({"a": {"moe": {"bf16": {"hbm_fraction": 0.8}, "fp8": {"hbm_fraction": 0.5}}},
    ...                 "b": {"moe": {"fp4": {"hbm_fraction": 0.7}}}})
    0.7

    Raises:
        SpecError: no set has a fitted MoE HBM fraction.
    """
    vals = [
        e["hbm_fraction"] for p in sets.values() for e in p.get("moe", {}).values() if e.get("hbm_fraction") is not None
    ]
    if not vals:
        raise SpecError(
            "moe.hbm_fraction",
            f"none fitted in {', '.join(sets) or 'no set'}",
            f"calibrate one of {', '.join(MOE_POOL)} first (jalapeno calibrate)",
        )
    return float(np.median(vals))


def with_pooled_moe(params: dict, sets: Mapping[str, dict]) -> dict:
    """A copy of nested ``params`` with every ``moe[fmt].hbm_fraction`` set to :func:`pooled_moe_hbm` of ``sets``
    (formats without an entry still inherit ``moe[bf16]``'s, specs/efficiency.Efficiency.moe_hbm).

    >>> with_pooled_moe({"moe": {"fp8": {"hbm_fraction": 0.5, "token_passes": 3.0}}},
    ...                 {"a": {"moe": {"bf16": {"hbm_fraction": 0.8}}}})["moe"]
    {'fp8': {'hbm_fraction': 0.8, 'token_passes': 3.0}}
    """
    out = copy.deepcopy(params)
    v = pooled_moe_hbm(sets)
    for entry in out.get("moe", {}).values():
        entry["hbm_fraction"] = v
    return out
