"""SGLang's Triton fused MoE on Hopper as an engine MoE backend (issue 18, round 53, h200form53; shipped off).

SGLang runs 128x128-block FP8 routed experts on Hopper (compute capability 9.0: H100, H200) through its Triton
``fused_moe`` kernel when the launch names no other MoE runner (``--moe-runner-backend auto``, no DeepEP / FlashInfer
MoE flag): the kernel and the per-device configuration files whose H200 tables SGLang serves unchanged from 0.5.9 to
0.5.14 (sgl-project/sglang wheels, ``layers/moe/fused_moe_triton/`` and ``moe_runner/triton_utils/configs/``;
docs/gap_aic_itl.md, rounds 48, 50 and 53). The model prices those experts, without this rule, by the chip's calibrated
set, whose FP8 MoE form is fitted on TensorRT-LLM's CUTLASS tables (fit/kernel_tables.BACKEND).

:func:`with_sglang_triton_moe_backend` gives the pools of an SGLang run on Hopper with FP8 routed experts, and no MoE
backend of their own, the backend ``sglang_triton``: its fitted form (fit/moe_backends.KERNEL_BACKENDS: fit/kernels
.fit_moe on aiconfigurator-core's SGLang ``sglang_fused_moe_triton`` rows, the rows timed faster than their weights'
stream at HBM peak excluded, fit/moe_backends.PEAK_CHECKED), priced by cost/moe_backend.KernelMoePricer with its
per-layer floor. Read for the aiconfigurator rows (fit/aic_rows.py) and the InferenceX points matched to an SGLang
launch recipe (fit/searched.with_launch_backend), behind :data:`SGLANG_TRITON_MOE_ON`.

Shipped **off**: on, the held-out figures of the rows it touches get worse (docs/gap_aic_itl.md, "round 53,
h200form53", gives on/off).
"""

from __future__ import annotations

from dataclasses import replace

from jalapeno.deploy.deployment import Deployment

#: the switch: give SGLang's Hopper FP8 MoE pools the ``sglang_triton`` backend (off: the calibrated set prices them)
SGLANG_TRITON_MOE_ON = False
#: catalog systems with compute capability 9.0 whose tables measure the kernel (fit/moe_backends.KERNEL_BACKENDS)
HOPPER_SYSTEMS = frozenset({"h100", "h200"})
#: the backend name (specs/moe_backends.MOE_BACKENDS)
SGLANG_TRITON = "sglang_triton"


def sglang_triton_applies(engine: str, system: str, weight_format: str, on: bool | None = None) -> bool:
    """Whether an ``engine`` run on catalog ``system`` with routed-expert weights in ``weight_format`` takes
    :data:`SGLANG_TRITON` (``on``: the switch; None: :data:`SGLANG_TRITON_MOE_ON`).

    >>> [sglang_triton_applies(e, s, "fp8", on=True) for e, s in (("sglang", "h200"), ("sglang", "b200"), ("vllm", "h200"))]
    [True, False, False]
    >>> sglang_triton_applies("sglang", "h200", "fp8", on=False), sglang_triton_applies("sglang", "h100", "fp4", on=True)
    (False, False)
    """
    return (
        bool(SGLANG_TRITON_MOE_ON if on is None else on)
        and engine.strip().lower().split(" ")[0] == "sglang"
        and system in HOPPER_SYSTEMS
        and weight_format == "fp8"
    )


def with_sglang_triton_moe_backend(
    dep: Deployment, engine: str, system: str, on: bool | None = None
) -> tuple[Deployment, str]:
    """(deployment, note): the pools of an SGLang run on Hopper whose routed experts are FP8 and that name no MoE
    backend of their own given :data:`SGLANG_TRITON` (:func:`sglang_triton_applies`); ``dep`` and "" otherwise.

    >>> from jalapeno.deploy.deployment import Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> d = Deployment(get_precision("fp8"), Pool(Layout(tp=8)))
    >>> with_sglang_triton_moe_backend(d, "sglang", "h200", on=True)[0].decode.moe_backend
    'sglang_triton'
    >>> with_sglang_triton_moe_backend(d, "sglang", "h200", on=False)[0].decode.moe_backend is None
    True
    """
    if not sglang_triton_applies(engine, system, dep.precision.modules["routed_experts"].weight.name, on):
        return dep, ""
    pools = {
        field: replace(getattr(dep, field), moe_backend=SGLANG_TRITON)
        for field in ("decode", "prefill")
        if getattr(dep, field) is not None and getattr(dep, field).moe_backend is None
    }
    if not pools:
        return dep, ""
    return replace(dep, **pools), (
        f"MoE backend {SGLANG_TRITON}: SGLang runs FP8 routed experts on its Triton fused MoE on Hopper "
        "(deploy/sglang_triton_moe.py)"
    )
