"""The measured kernel tables calibration reads: aiconfigurator-core's per-kernel latency tables.

Read through the installed ``aiconfigurator-core`` package (Apache-2.0, NVIDIA; ``pip install -e
".[calibrate]"``): only its data files, none of its code. Which table version is read, and the
dtype names of its GEMM and MoE tables, live here.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

from jalapeno.errors import SpecError
from jalapeno.specs.engine_versions import version_key

#: catalog system → aiconfigurator system folder
AIC_SYSTEM_DIRS = {
    "a100-sxm": "a100_sxm",
    "h100": "h100_sxm",
    "h200": "h200_sxm",
    "b200": "b200_sxm",
    "b300": "b300_sxm",
    "gb200-nvl72": "gb200",
    "gb300-nvl72": "gb300",
}
#: aiconfigurator GEMM dtype → (our compute format, weight bytes/elem, activation bytes/elem)
#: (NVFP4: 16-element blocks with an FP8 scale, 0.5625 B/elem; MXFP4: 32-element blocks with an
#: E8M0 scale, 0.53125 B/elem — AMD's aiter tables). ``fp8`` is TensorRT-LLM's per-tensor FP8 GEMM
#: (and aiter's per-token x per-channel one), ``fp8_block`` the 1x128 / 128x128 block-scale GEMM;
#: each fits its own entry (:data:`GEMM_DTYPE_KEYS`). The 128x128 blocks' fp32 scales add 32 bits
#: per 16,384 weights (specs/formats.py): under 0.03% of the bytes, not counted here.
GEMM_DTYPES = {
    "bfloat16": ("bf16", 2.0, 2.0),
    "fp8": ("fp8", 1.0, 1.0),
    "fp8_block": ("fp8", 1.0, 1.0),
    "nvfp4": ("fp4", 0.5625, 0.5625),
    "mxfp4": ("fp4", 0.53125, 0.53125),
}
#: MoE table dtypes the ``moe[fmt]`` entries are fitted on (keyed by compute format): the GEMM
#: dtypes less per-tensor ``fp8`` — FP8 routed experts are block-scaled in the checkpoints the
#: catalog serves (DeepSeek-V3/R1, Qwen3-235B-A22B-FP8), so ``moe[fp8]`` stays the ``fp8_block`` kernels'
MOE_DTYPES = {k: v for k, v in GEMM_DTYPES.items() if k != "fp8"}
#: GEMM dtypes fitted under a GEMM kernel key finer than their compute format
#: (specs/kernel_efficiency.GEMM_KEYS); every other dtype fits the entry of its compute format
GEMM_DTYPE_KEYS = {"fp8_block": "fp8_block"}


def gemm_key(dtype: str) -> str:
    """The efficiency entry a table's GEMM dtype fits (``gemm[key]``).

    >>> gemm_key("fp8_block"), gemm_key("fp8"), gemm_key("nvfp4")
    ('fp8_block', 'fp8', 'fp4')
    """
    return GEMM_DTYPE_KEYS.get(dtype, GEMM_DTYPES[dtype][0])


BACKEND = "trtllm"
#: The backend version aiconfigurator-core 0.12.0 marks "current" (systems/query_versions.yaml);
#: tables are read from it when present, else from the newest version that has them.
PINNED_VERSION = "1.3.0rc20"


def _root():
    try:
        return resources.files("aiconfigurator_core") / "systems"
    except ModuleNotFoundError:
        raise SpecError(
            "aiconfigurator", "the aiconfigurator-core package is not installed", 'pip install -e ".[calibrate]"'
        ) from None


def package_version() -> str:
    """The installed aiconfigurator-core version.

    Raises:
        importlib.metadata.PackageNotFoundError: the package is not installed (the ``aic`` extra).
    """
    from importlib.metadata import version

    return version("aiconfigurator-core")


def _version_dir(system_dir: str, family: str, name: str, backend: str = BACKEND) -> tuple[str, object]:
    base = _root() / "data" / system_dir / family / backend
    if not base.is_dir():
        raise SpecError("aiconfigurator", f"no {family} tables for {system_dir}", "check the package version")
    versions = sorted((p.name for p in base.iterdir() if p.is_dir()), key=_vkey)
    if PINNED_VERSION in versions:
        versions.append(PINNED_VERSION)  # tried first
    for v in reversed(versions):  # newest version that has this table
        d = base / v
        if (d / f"{name}.parquet").is_file():
            return v, d
    raise SpecError("aiconfigurator", f"no {name} table for {system_dir}", "check the package version")


def _vkey(v: str) -> tuple:
    """Sort key of a table's version folder: a release number by specs/engine_versions.version_key
    (``1.3.0rc20`` before ``1.3.0``); a name that is not one (``0.1.dev19262``) before every
    release, by name, so the newest release is always read first."""
    try:
        return (1, version_key(v), "")
    except SpecError:
        return (0, (), v)


def load_nccl_table(system_dir: str) -> tuple[pd.DataFrame | None, str | None]:
    """The newest NCCL version folder of ``system_dir`` whose ``nccl_perf`` table has all-reduce rows
    (latency in ms, message size in elements), and its version; (None, None) without one."""
    d = _root() / "data" / system_dir / "comm" / "nccl"
    versions = sorted((p.name for p in d.iterdir() if p.is_dir()), key=_vkey) if d.is_dir() else []
    for v in reversed(versions):
        cand = pd.read_parquet(d / v / "nccl_perf.parquet")
        if "all_reduce" in set(cand.op_name):
            return cand, v
    return None, None


#: Where a table lives in a checkout of github.com/ai-dynamo/aiconfigurator (the source tree the
#: package is built from; it holds tables a released package may not ship)
REPO_DATA = ("aic-core", "src", "aiconfigurator_core", "systems", "data")


def load_repo_table(repo: str, system_dir: str, family: str, name: str, backend: str, version: str) -> pd.DataFrame:
    """One kernel table (latency in ms) read from an aiconfigurator source checkout ``repo`` (a
    folder; :data:`REPO_DATA` below it), for tables the installed package lacks.

    Raises:
        SpecError: the table is not in that checkout.
    """
    from pathlib import Path

    f = Path(repo).joinpath(*REPO_DATA, system_dir, family, backend, version, f"{name}.parquet")
    if not f.is_file():
        raise SpecError(
            "aic_repo",
            f"no {f.relative_to(repo) if f.is_relative_to(repo) else f} in {repo}",
            "pass a checkout of github.com/ai-dynamo/aiconfigurator that has it (e.g. commit 095f58a51)",
        )
    return pd.read_parquet(f)


def load_table(system_dir: str, family: str, name: str, backend: str = BACKEND) -> tuple[pd.DataFrame, str]:
    """One kernel table (latency in ms) and the version of ``backend`` (an aiconfigurator backend
    folder: ``trtllm``, ``vllm``, ``sglang``) it came from."""
    v, d = _version_dir(system_dir, family, name, backend)
    return pd.read_parquet(d / f"{name}.parquet"), v


#: Architecture siblings: a system's tables and the predecessor of the same board form whose
#: tables stand in for a kernel path missing from them (Blackwell Ultra SM103 ← Blackwell SM100).
#: aiconfigurator-core 0.12.0's B300/GB300 ``moe_perf`` (TRT-LLM 1.3.0rc20) has no
#: ``moe_torch_flow_min_latency`` rows (the TRT-LLM-gen low-latency NVFP4 MoE path), which is the
#: fastest NVFP4 path on 66% of B200/GB200 configurations; without it the B300 fit reads only the
#: CUTLASS path and comes out slower than B200 (docs/validation.md, "FP4 on Blackwell Ultra").
KERNEL_PATH_SIBLING = {"b300_sxm": "b200_sxm", "gb300": "gb200"}

#: Fabric siblings: a system whose scale-up fabric is another's, so the MoE all-to-all kernel's fixed time
#: per call (``all_to_all_latency_s``, fitted on TensorRT-LLM's measured ``trtllm_alltoall_perf``) measured
#: on the sibling stands for its own where its tables lack that table. GB300 NVL72 and GB200 NVL72 share the
#: NVLink 5 switch trays (72 GPUs, 1.8 TB/s per GPU); aiconfigurator-core 0.12.0 ships the table for GB200
#: only, and the all-to-all kernels it times on both run at the same speed: SGLang 0.5.12's DeepEP
#: low-latency dispatch + combine (``comm/sglang/0.5.12/wideep_deepep_ll_perf``, 176 matched rows, 1-1024
#: tokens) GB300 / GB200 median 0.989 (p10 0.971, p90 1.002), TensorRT-LLM 1.3.0rc11's DeepEP kernels
#: (``comm/trtllm/1.3.0rc11/moe_a2a_perf``, 704 matched rows) median 0.981 (docs/gap_aic_itl.md, round 27,
#: gbitl27; tests/unit/test_a2a_fabric_sibling.py recomputes both).
A2A_FABRIC_SIBLING = {"gb300": "gb200"}


def fill_missing_kernel_paths(
    df: pd.DataFrame, sibling: pd.DataFrame, keys: list[str], dtype_col: str, sibling_name: str
) -> tuple[pd.DataFrame, dict]:
    """``df`` with the kernel paths (``kernel_source``) its sibling's table has and it lacks.

    For each dtype and each kernel source present in ``sibling`` but absent from ``df``: the
    reference source is the one both tables have that shares the most configurations (``keys``)
    with the missing one on the sibling; the imputed latency of a configuration is this chip's
    reference latency times the sibling's measured ratio missing/reference on the same
    configuration (fastest kernel per configuration on both sides). Assumption (named): a kernel
    path's relative speed over another carries over between architecture siblings (same tensor
    core instruction set, same HBM bandwidth: B200 → B300 both 8 TB/s).

    Returns:
        (table with imputed rows appended, their ``kernel_source`` suffixed ``"(imputed from
        <sibling>)"``; report {dtype: {source: {"reference": ..., "rows": n}}}).
    """
    cols = [*keys, "kernel_source"]
    a = df.groupby(cols, as_index=False).latency.min()
    b = sibling.groupby(cols, as_index=False).latency.min()
    added, report = [], {}
    for dt, bd in b.groupby(dtype_col):
        ad = a[a[dtype_col] == dt]
        have, need = set(ad.kernel_source), set(bd.kernel_source)
        for src in sorted(need - have):
            miss = bd[bd.kernel_source == src].drop(columns="kernel_source")
            best, ref = None, None
            for r in sorted(have & need):
                j = miss.merge(
                    bd[bd.kernel_source == r].drop(columns="kernel_source"), on=keys, suffixes=("", "_ref")
                ).merge(ad[ad.kernel_source == r].drop(columns="kernel_source"), on=keys, suffixes=("", "_own"))
                if best is None or len(j) > len(best):
                    best, ref = j, r
            if best is None or best.empty:
                continue
            imp = best[keys].assign(
                kernel_source=f"{src} (imputed from {sibling_name})",
                latency=best.latency_own * best.latency / best.latency_ref,
            )
            added.append(imp)
            report.setdefault(str(dt), {})[src] = {"reference": ref, "rows": int(len(imp))}
    if not added:
        return df, report
    return pd.concat([df, *added], ignore_index=True), report


def load_a2a_table(system_dir: str, withheld: frozenset = frozenset()) -> tuple[pd.DataFrame, str]:
    """TensorRT-LLM's measured NVLink MoE all-to-all (``comm/trtllm/<v>/trtllm_alltoall_perf``) of
    ``system_dir``, else of its :data:`A2A_FABRIC_SIBLING` unless that sibling's folder is in ``withheld``
    (a leave-one-system-out refit, fit/loso.py); the version names the sibling's folder then
    (``"gb200 1.3.0rc10"``).

    Raises:
        SpecError: neither the system nor a (not withheld) fabric sibling has the table.
    """
    try:
        return load_table(system_dir, "comm", "trtllm_alltoall_perf")
    except SpecError:
        if A2A_FABRIC_SIBLING.get(system_dir) in (None, *withheld):
            raise
    sib = A2A_FABRIC_SIBLING[system_dir]
    frame, v = load_table(sib, "comm", "trtllm_alltoall_perf")
    return frame, f"{sib} {v}"
