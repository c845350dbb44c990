"""Sanity check of a calibration: a newer chip must not come out slower than its predecessor.

Each fitted kernel group (GEMM and routed-expert MoE, per compute format both sets fit) of a
successor and its predecessor is priced on the same shapes through the roofline pricer under
each system's fitted parameters; the check flags a group whose median time ratio
successor/predecessor exceeds ``1 + ORDERING_TOLERANCE`` in any token regime. Every successor
named here has at least its predecessor's peak FLOP/s per format and HBM bandwidth (the system
TOMLs), so a slower fit points at the tables or the fit, not at the silicon (the B300 NVFP4 fits
of aiconfigurator-core 0.12.0's tables did this before the fixes in fit/kernels.fit_gemm and
fit/kernel_tables.fill_missing_kernel_paths).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from jalapeno.cost.pricer import RooflinePricer
from jalapeno.fit.kernels import CALIBRATION_TOUCHED_RULE, gemm_table, moe_rows, moe_table
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY
from jalapeno.specs.kernel_efficiency import GEMM_KEYS
from jalapeno.specs.hardware import System

#: successor → predecessor (same board form where both exist)
PREDECESSOR = {"h200": "h100", "b200": "h200", "gb200-nvl72": "b200", "b300": "b200", "gb300-nvl72": "gb200-nvl72"}
#: allowed median slow-down of the successor in a regime before it is flagged (the spread of
#: repeated kernel benchmarks: aiconfigurator's rc20/rc23 MoE recollection differs by a median
#: 2.4-2.9% per row, systems/data/*/moe/trtllm/1.3.0rc23/reuse.yaml)
ORDERING_TOLERANCE = 0.05
#: token (GEMM row) regimes judged separately: decode, mixed, prefill
REGIMES = {"decode (m <= 64)": (1, 64), "mixed (64 < m <= 1024)": (65, 1024), "prefill (m > 1024)": (1025, 1 << 20)}
#: GEMM shapes (n, k) of the catalog models' layers (DeepSeek-V3/R1 7168 hidden / 2048 expert
#: intermediate / 18432 dense intermediate; Llama-3.3-70B 8192 / 28672)
GEMM_SHAPES = ((7168, 2048), (2048, 7168), (18432, 7168), (7168, 18432), (8192, 8192), (28672, 8192), (8192, 28672))
#: bytes per element (weights, activations) per format, as fit/kernel_tables.GEMM_DTYPES
_BYTES = {"bf16": 2.0, "fp8": 1.0, "fp8_block": 1.0, "fp4": 0.5625}
_MOE_DTYPE = {"bf16": "bfloat16", "fp8": "fp8_block", "fp4": "nvfp4"}
_M = 2 ** np.arange(0, 15)  # 1 .. 16384 rows / tokens


def _gemm_s(system: System, params: dict, fmt: str) -> tuple[np.ndarray, np.ndarray]:
    m = np.tile(_M.astype(float), len(GEMM_SHAPES))
    n = np.repeat([float(s[0]) for s in GEMM_SHAPES], len(_M))
    k = np.repeat([float(s[1]) for s in GEMM_SHAPES], len(_M))
    b = _BYTES[fmt]  # fmt: a compute format or a GEMM kernel key (fp8_block), priced at its format's peak
    eff = DEFAULT_EFFICIENCY.with_overrides(params)
    table = gemm_table(m, n, k, GEMM_KEYS.get(fmt, fmt), b, b, fmt)
    return m, RooflinePricer(system, eff).op_times(table).time_s[0]


def _moe_s(system: System, params: dict, fmt: str) -> tuple[np.ndarray, np.ndarray]:
    # DeepSeek-V3/R1's routed experts (7168 hidden, 2048 intermediate, 256 experts, top-8), EP 8
    df = pd.DataFrame(
        {
            "moe_dtype": _MOE_DTYPE[fmt],
            "num_tokens": _M,
            "hidden_size": 7168,
            "inter_size": 2048,
            "topk": 8,
            "num_experts": 256,
            "moe_tp_size": 1,
            "moe_ep_size": 8,
            "distribution": "balanced",
            "latency": 1.0,
        }
    )
    r = moe_rows(df, CALIBRATION_TOUCHED_RULE)
    eff = DEFAULT_EFFICIENCY.with_overrides(params)
    p = params.get("moe", {}).get(fmt, {})
    return r.num_tokens.to_numpy(float), RooflinePricer(system, eff).op_times(
        moe_table(r, fmt, p.get("token_passes", 0.0))
    ).time_s[0]


def ordering_check(systems: dict[str, System], params: dict[str, dict]) -> list[dict]:
    """Kernel groups where a successor's fit is slower than its predecessor's on the same shapes.

    Args:
        systems: name → System for every calibrated system.
        params: name → fitted parameter set (nested form, as calibrate_system returns).

    Returns:
        One dict per (successor, predecessor, group, regime) compared: ``newer``, ``older``,
        ``group`` (``gemm.fp4``), ``regime``, ``median_ratio`` (successor time / predecessor
        time) and ``flagged`` (ratio > 1 + ORDERING_TOLERANCE).
    """
    out = []
    for new, old in PREDECESSOR.items():
        if new not in params or old not in params:
            continue
        for kind, price in (("gemm", _gemm_s), ("moe", _moe_s)):
            fmts = set(params[new].get(kind, {})) & set(params[old].get(kind, {}))
            peaks = set(systems[new].chip.peak_flop_per_s) & set(systems[old].chip.peak_flop_per_s)
            fmts = {f for f in fmts if GEMM_KEYS.get(f, f) in peaks}  # fp8_block: at the FP8 peak
            for fmt in sorted(fmts):
                m, t_new = price(systems[new], params[new], fmt)
                _, t_old = price(systems[old], params[old], fmt)
                for regime, (lo, hi) in REGIMES.items():
                    sel = (m >= lo) & (m <= hi)
                    ratio = float(np.median(t_new[sel] / t_old[sel]))
                    out.append(
                        {
                            "newer": new,
                            "older": old,
                            "group": f"{kind}.{fmt}",
                            "regime": regime,
                            "median_ratio": ratio,
                            "flagged": ratio > 1 + ORDERING_TOLERANCE,
                        }
                    )
    return out
