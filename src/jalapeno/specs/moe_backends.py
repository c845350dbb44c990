"""MoE kernel backends: per-system routed-expert parameters of one engine MoE backend.

A serving engine may run its MoE layers through one of several kernel paths, chosen by its launch
config, not autotuned (TensorRT-LLM ``moe_config.backend``: ``CUTLASS``, ``TRTLLM`` (TRT-LLM-gen),
``CUTEDSL``, ...). A chip's calibrated efficiency set prices the fastest measured path per
configuration; ``data/moe_backends.toml`` (written by scripts/fit_moe_backends.py from the measured
rows of one path only, fit/moe_backends.py) holds the measured per-layer latency of one backend
on one system at the routed-expert shapes of the catalog's MoE models. A pool whose recipe names a
backend (``Pool.moe_backend``, data/engines.toml) has its routed experts priced by them
(cost/pool_backends.with_moe_backend, cost/moe_backend.py); a backend or shape with no measurement on the
system (``deepgemm`` on B200/GB200; B300/GB300; a user's system) keeps the calibrated set. ``cutedsl`` curves are
SGLang's FlashInfer CuTe-DSL rows (fit/moe_backends.py). docs/model.md §8.6.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

from jalapeno.errors import SpecError

#: backend names a recipe may give (TensorRT-LLM ``moe_config.backend``, lower case; ``marlin``: vLLM's
#: Marlin MoE, ``VLLM_MXFP4_USE_MARLIN=1``; ``flashinfer_trtllm``: vLLM's FlashInfer TRT-LLM-gen FP8 block-scale and
#: NVFP4 MoE, ``--moe-backend flashinfer_trtllm``, measured by vLLM's own tables: fit/vllm_moe_curves.VLLM_TABLES,
#: VLLM_NVFP4_TABLES; ``sglang_triton``: SGLang's Triton fused MoE on Hopper, a fitted form,
#: fit/moe_backends.KERNEL_BACKENDS, given by deploy/sglang_triton_moe.py)
MOE_BACKENDS: tuple[str, ...] = (
    "trtllm",
    "cutlass",
    "cutedsl",
    "deepgemm",
    "wideep",
    "triton",
    "vanilla",
    "marlin",
    "flashinfer_trtllm",
    "sglang_triton",
)
#: Backends whose routed experts run another backend's kernels, priced by that one's measurements.
#: TensorRT-LLM's ``WIDEEP`` (``WideEPMoE``) computes its experts with the CUTLASS fused-MoE op
#: (``torch.ops.trtllm.fused_moe`` through ``NVFP4CutlassFusedMoEMethod`` /
#: ``DeepSeekFP8BlockScalesFusedMoEMethod``, as ``CUTLASS`` does) on the tokens its exchange brings
#: (all-gathered at EP <= top-k or without MNNVL, else its all-to-all; priced apart, cost/moe_exchange.py):
#: NVIDIA/TensorRT-LLM tensorrt_llm/_torch/modules/fused_moe/fused_moe_wide_ep.py (``_get_quant_method``,
#: ``forward_chunk``).
KERNELS_OF = {"wideep": "cutlass"}
#: backends whose pooled per-layer floor a chip without tables prices (fit/floor_transfer.py): those whose floor the measured systems price
#: (fit/moe_backends.FLOOR_APPLIED) and which are measured on more than one generation. vLLM's Marlin MoE is
#: not: its priced floor is measured on H200 and B200 in INT4 only (H100's MXFP4 Marlin floor is not priced).
FLOOR_TRANSFERRED = ("triton",)


def check_moe_backend(value, field: str = "moe_backend") -> None:
    """Refuse an unknown backend name.

    Raises:
        SpecError: ``value`` is not None and not one of :data:`MOE_BACKENDS`.
    """
    if value is not None and value not in MOE_BACKENDS:
        raise SpecError(
            field,
            f"unknown MoE backend {value!r}",
            f"use one of {', '.join(MOE_BACKENDS)} (TensorRT-LLM moe_config.backend, lower case, or "
            "marlin / flashinfer_trtllm: vLLM's Marlin / FlashInfer TRT-LLM MoE)",
        )


@lru_cache(maxsize=1)
def _data() -> MappingProxyType:
    raw = tomllib.loads((resources.files("jalapeno") / "data" / "moe_backends.toml").read_text())
    curves = {}
    for c in raw.get("curve", []):
        key = (c["system"], c["backend"], c["hidden"], c["inter"], c["experts"], c["top_k"], c["moe_tp"], c["ep"])
        kind = (c["fmt"], c.get("weights", ""))
        got = curves.setdefault(key, {})
        if kind in got:  # one kernel per backend, layout and format
            raise SpecError("moe_backends.toml", f"two curves for {key} in {kind}", "rerun scripts/fit_moe_backends.py")
        got[kind] = (
            c["fmt"],
            c.get("weights", ""),
            tuple(c["tokens"]),
            tuple(v * 1e-3 for v in c["latency_ms"]),
            f"{c['system']} {c['backend']} {c['table']}",
        )
    return MappingProxyType(
        {"curves": MappingProxyType({k: tuple(v.values()) for k, v in curves.items()}), "report": raw.get("report", {})}
    )


def moe_backend_curves(
    system: str, backend: str, hidden: int, inter: int, experts: int, top_k: int, moe_tp: int, ep: int
) -> tuple[tuple[str, str, tuple[float, ...], tuple[float, ...], str], ...]:
    """Every measured curve of ``backend``'s routed-expert block (its kernels' backend's, :data:`KERNELS_OF`) on
    ``system`` at one shape (``inter``: the full expert intermediate size; ``moe_tp``: tensor parallelism inside each
    expert), one per kernel format, each (compute format, stored weight format where it names kernels of its own
    ("mxfp4"; "" otherwise), tokens of the EP group, measured latency per layer in s, label); () when not measured.
    One backend name may run several formats (vLLM's ``flashinfer_trtllm``: FP8 block-scale and NVFP4 experts); a
    routed-expert op is priced by the curve of its own format (cost/moe_backend.MeasuredMoePricer).

    Raises:
        SpecError: an unknown backend name.
    """
    check_moe_backend(backend)
    backend = KERNELS_OF.get(backend, backend)
    return _data()["curves"].get(
        (system, backend, int(hidden), int(inter), int(experts), int(top_k), int(moe_tp), int(ep)), ()
    )


def moe_backend_report(system: str, backend: str) -> dict:
    """What the shipped curves of one backend on one system were read from ({} if none)."""
    return dict(_data()["report"].get(system, {}).get(backend, {}))


@lru_cache(maxsize=1)
def _kernels() -> MappingProxyType:
    raw = tomllib.loads((resources.files("jalapeno") / "data" / "moe_backend_kernels.toml").read_text())
    return MappingProxyType({(k["system"], k["backend"]): MappingProxyType(dict(k)) for k in raw.get("kernel", [])})


def moe_backend_kernel(system: str, backend: str) -> MappingProxyType | None:
    """The fitted routed-expert form of ``backend`` on ``system`` (data/moe_backend_kernels.toml:
    fmt, peak_fraction, half_rows, hbm_fraction, floor_s, table, errors), or None when not fitted.

    Raises:
        SpecError: an unknown backend name.
    """
    check_moe_backend(backend)
    return _kernels().get((system, KERNELS_OF.get(backend, backend)))


@lru_cache(maxsize=1)
def _floors() -> tuple:
    raw = tomllib.loads((resources.files("jalapeno") / "data" / "moe_backend_floors.toml").read_text())
    return tuple((f["backend"], f["system"], float(f["floor_s"])) for f in raw.get("floor", []))


def pooled_backend_floor(backend: str, exclude=frozenset()) -> float | None:
    """The per-layer floor (s) a chip without kernel tables prices for ``backend``'s routed experts: the median of
    the backend's fitted floor over the measured systems of data/moe_backend_floors.toml not in ``exclude`` (the
    chip and its same-silicon twin), for the backends of FLOOR_TRANSFERRED; None for any other
    backend or when no system is left (fit/floor_transfer.py).

    >>> round(pooled_backend_floor("triton", frozenset({"h100", "h200"})) * 1e6, 2)  # median of the four Blackwell
    41.28
    >>> pooled_backend_floor("marlin") is None
    True

    Raises:
        SpecError: an unknown backend name.
    """
    from statistics import median

    check_moe_backend(backend)
    vals = [f for b, s, f in _floors() if b == backend and s not in exclude]
    return float(median(vals)) if backend in FLOOR_TRANSFERRED and vals else None
