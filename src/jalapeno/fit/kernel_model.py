"""A measured kernel priced by the step pricer under trial efficiency parameters: the shared pieces of the
kernel fits (fit/kernels.py GEMM and collectives, fit/moe_kernels.py, fit/attention_kernels.py,
fit/mla_kernels.py, fit/moe_backend_width.py).

One op table of one row (N points) priced by cost/pricer.RooflinePricer under the documented defaults with a
fit's trial values (:func:`fit_efficiency`, :func:`priced_s`), so every fitted parameter means exactly what the
step cost uses; the logistic map of a bounded fit variable (:func:`_sig`) and the error summary of a fit
(:func:`_ape`). Split from fit/kernels.py in round 49 (module line budget); fit/kernels.py re-exports them.
"""

from __future__ import annotations

import math

import numpy as np

from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import RooflinePricer
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY, Efficiency, unchecked_replace
from jalapeno.specs.hardware import System


def _sig(v: float) -> float:
    """Logistic map of an unconstrained fit variable onto a fraction in (0, 1)."""
    return 1 / (1 + math.exp(-v))


def _ape(pred, meas) -> dict:
    e = np.abs(np.asarray(pred) / np.asarray(meas) - 1)
    return {"median_ape": float(np.median(e)), "p90_ape": float(np.percentile(e, 90)), "n": int(e.size)}


def kernel_params(kind: str, fmt: str, **values) -> dict:
    """Efficiency parameters of one kernel group ``kind[fmt]`` (gemm | moe) as dotted keys
    (``gemm.fp8.peak_fraction``; specs/efficiency.nest_params gives the TOML form); any of
    peak_fraction, half_rows, hbm_fraction, token_passes, k_block_s."""
    return {f"{kind}.{fmt}.{k}": float(v) for k, v in values.items() if v is not None}


def fit_efficiency(overrides: dict) -> Efficiency:
    """The documented defaults with trial parameter values (scalars by name, kernel parameters as
    dotted ``kind.fmt.field`` keys). Not range-checked: an optimiser's trial points may stray past
    the sanity ceilings of ``Efficiency.with_overrides`` before converging."""
    eff = DEFAULT_EFFICIENCY
    for k, v in overrides.items():
        if "." in k:
            kind, fmt, name = k.split(".")
            eff = unchecked_replace(eff, **{kind: eff.kernel_table(kind, fmt, **{name: v})})
        else:
            eff = unchecked_replace(eff, **{k: v})
    return eff


def priced_s(system: System, table, overrides: dict) -> np.ndarray:
    """Time of the single op of ``table`` (an OpTable of one row, N points) on ``system`` under the
    documented defaults with ``overrides`` — through the same pricer that prices a step."""
    return RooflinePricer(system, fit_efficiency(overrides)).op_times(table).time_s[0]


def _single_op(n: int, kind: str, **work):
    """An op table of one BF16 op of ``kind`` over ``n`` points (``work``: flop / kv / act arrays)."""
    ob = OpBuilder(n)
    ob.op(kind, kind, "bf16", **work)
    return ob.build()[0]
