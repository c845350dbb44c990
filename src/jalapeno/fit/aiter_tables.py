"""Reading amd-aiter's tuned-kernel tables into the frames the kernel fits take (split from fit/amd.py, round 47,
module budget; fit/amd.py re-exports every name, and its module docstring says what each table calibrates).

Data: ``aiter/configs/*.csv`` (and ``aiter/configs/model_configs/*.csv``) of the ``amd-aiter`` package (AMD, MIT
licence), read through the installed distribution without importing it (``pip install -e ".[calibrate]"``); none of
its code is used. Each row is the best kernel aiter's tuner found for one shape on one chip, with its measured time
(``us``), keyed by the chip's compute-unit count ``cu_num`` (:data:`AITER_CU`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from jalapeno.errors import SpecError

DISTRIBUTION = "amd-aiter"
#: catalog system → aiter ``cu_num`` (compute units: MI300X/MI325X 304, MI355X 256; AMD datasheets)
AITER_CU = {"mi300x": 304, "mi325x": 304, "mi355x": 256}
#: aiter GEMM table → the dtype name calibrate.GEMM_DTYPES knows it by
GEMM_TABLES = {
    "a8w8_blockscale_tuned_gemm": "fp8_block",
    "a4w4_blockscale_tuned_gemm": "mxfp4",
    "a8w8_bpreshuffle_tuned_gemm": "fp8",
}
#: the GEMM rows (M) from which both FP8 kernels are taken as compute-bound for that ratio
PER_CHANNEL_RATIO_MIN_M = 1024
#: pre-shuffled-weight block-scale FP8 tables (``aiter/configs`` and ``aiter/configs/model_configs``):
#: where they hold a chip's rows, they replace the plain table of the same dtype (fit/amd.py's module docstring)
PRESHUFFLED_TABLES = {
    "a8w8_blockscale_bpreshuffle_tuned_gemm": "fp8_block",
    "a8w8_blockscale_bpreshuffle_tuned_gemm_dsv3": "fp8_block",
}
#: every table the AMD calibration reads
TABLES = (*GEMM_TABLES, *PRESHUFFLED_TABLES, "tuned_fmoe")
#: aiter fused-MoE quantisation → calibrate.GEMM_DTYPES name (per-token/per-tensor FP8 rows are
#: not DeepSeek's recipe and are left out)
MOE_QUANT = {"QuantType.No": "bfloat16", "QuantType.per_1x128": "fp8_block"}


def package_version() -> str:
    """Installed ``amd-aiter`` version.

    Raises:
        SpecError: the package is not installed.
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        raise SpecError(
            "amd-aiter",
            "the amd-aiter package (AMD's tuned-kernel tables) is not installed",
            'pip install -e ".[calibrate]"',
        ) from None


def read_table(name: str) -> pd.DataFrame:
    """One ``aiter/configs/<name>.csv`` table of the installed package (not imported).

    Raises:
        SpecError: package or table missing.
    """
    from importlib.metadata import distribution

    package_version()
    path = distribution(DISTRIBUTION).locate_file(f"aiter/configs/{name}.csv")
    if not path.is_file():  # per-model tables (e.g. DeepSeek-V3's shapes) live one level down
        path = distribution(DISTRIBUTION).locate_file(f"aiter/configs/model_configs/{name}.csv")
    if not path.is_file():
        raise SpecError(
            "amd-aiter",
            f"no table {name}.csv in amd-aiter {package_version()}",
            "install the version pinned in pyproject.toml's [calibrate] extra",
        )
    return pd.read_csv(path)


def gemm_frame(tables: dict[str, pd.DataFrame], cu: int) -> pd.DataFrame:
    """aiter GEMM rows of one chip in calibrate.fit_gemm's format (gemm_dtype, m, n, k, latency ms).

    A dtype whose :data:`PRESHUFFLED_TABLES` hold rows of this chip takes those (the fastest kernel
    per shape over them) instead of its :data:`GEMM_TABLES` table.
    """

    def rows(names: dict[str, str], dtype: str) -> pd.DataFrame:
        ds = [d[d.cu_num == cu] for n, t in names.items() if t == dtype and (d := tables.get(n)) is not None]
        ds = [d for d in ds if len(d)]
        if not ds:
            return pd.DataFrame()
        d = pd.concat(ds).groupby(["M", "N", "K"], as_index=False).us.min()
        return pd.DataFrame(
            {
                "gemm_dtype": dtype,
                "m": d.M.to_numpy(),
                "n": d.N.to_numpy(),
                "k": d.K.to_numpy(),
                "latency": d.us.to_numpy() / 1e3,
            }
        )

    parts = []
    for dtype in dict.fromkeys(GEMM_TABLES.values()):
        pre = rows(PRESHUFFLED_TABLES, dtype)
        parts.append(pre if len(pre) else rows(GEMM_TABLES, dtype))
    parts = [p for p in parts if len(p)]
    return (
        pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["gemm_dtype", "m", "n", "k", "latency"])
    )


def moe_frame(fmoe: pd.DataFrame, cu: int) -> pd.DataFrame:
    """aiter fused-MoE rows of one chip in calibrate.fit_moe's (moe_perf) format.

    aiter tunes one GPU holding every expert (EP 1) with ``inter_dim`` already the per-GPU slice
    of a tensor-parallel split, so moe_tp_size = moe_ep_size = 1; routing is uniform ("balanced").
    """
    d = fmoe[(fmoe.cu_num == cu) & fmoe.q_type.isin(list(MOE_QUANT))]
    return pd.DataFrame(
        {
            "moe_dtype": d.q_type.map(MOE_QUANT).to_numpy(),
            "num_tokens": d.token.to_numpy(),
            "hidden_size": d.model_dim.to_numpy(),
            "inter_size": d.inter_dim.to_numpy(),
            "topk": d.topk.to_numpy(),
            "num_experts": d.expert.to_numpy(),
            "moe_tp_size": 1,
            "moe_ep_size": 1,
            "distribution": "balanced",
            "latency": d.us.to_numpy() / 1e3,
        }
    )


def per_channel_ratio(tables: dict[str, pd.DataFrame], cu: int) -> tuple[float, int]:
    """(median throughput ratio per-channel / block-scale FP8 GEMM, shapes) on aiter's ``cu`` rows:
    the shapes (M, N, K) with M >= :data:`PER_CHANNEL_RATIO_MIN_M` timed in both
    ``a8w8_bpreshuffle_tuned_gemm`` and ``a8w8_blockscale_tuned_gemm``, time ratio block / per-channel.

    Raises:
        SpecError: no shape of ``cu`` is in both tables.
    """
    bs, pc = (tables[n] for n in ("a8w8_blockscale_tuned_gemm", "a8w8_bpreshuffle_tuned_gemm"))
    j = (
        bs[bs.cu_num == cu]
        .groupby(["M", "N", "K"], as_index=False)
        .us.min()
        .merge(
            pc[pc.cu_num == cu].groupby(["M", "N", "K"], as_index=False).us.min(),
            on=["M", "N", "K"],
            suffixes=("_bs", "_pc"),
        )
    )
    j = j[j.M >= PER_CHANNEL_RATIO_MIN_M]
    if not len(j):
        raise SpecError(
            "amd-aiter",
            f"no FP8 GEMM shape of cu_num {cu} in both the per-channel and block-scale tables",
            "install the amd-aiter version pinned in pyproject.toml's [calibrate] extra",
        )
    return float(np.median(j.us_bs / j.us_pc)), int(len(j))
