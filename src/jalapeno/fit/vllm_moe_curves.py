"""vLLM's own MoE kernels as measured curves: FlashInfer's TensorRT-LLM-gen FP8 block-scale and NVFP4 experts,
read from aiconfigurator's vLLM ``moe_perf`` tables (B200, B300; vLLM 0.24.0) at the catalog models' routed-expert
shapes, one curve per (shape, expert TP, EP) at every expert TP the tables measure.

:data:`VLLM_TABLES` (FP8 block scale) and :data:`VLLM_NVFP4_TABLES` (NVFP4): (system, backend) → the table, its
dtype, the kernel's compute format and the ``kernel_source`` labels; :data:`VLLM_MOE_TP`: the expert-TP sizes read;
:func:`vllm_curves`: one system's curves and report, which fit/moe_backends.measured_curves adds to the other
backends' (scripts/fit_moe_backends.py writes them to data/moe_backends.toml). Split from fit/moe_backends.py
(round 53, line budget), which re-exports every name; the balanced-row reader stays there
(``_balanced_curves``, shared with the TensorRT-LLM curves).
"""

from __future__ import annotations

from jalapeno.fit.kernel_tables import load_table

#: vLLM's own FP8 MoE kernels, measured by aiconfigurator's vLLM collector, which builds vLLM's ``FusedMoE``
#: layer with the model's routing and lets vLLM pick the backend as it does when serving, recording the pick
#: in ``kernel_source`` (``vllm_<method>_<backend>_<experts>``: ai-dynamo/aiconfigurator
#: collector/vllm/collect_moe.py @095f58a51). (system, backend) → (aiconfigurator system folder, table dtype,
#: the kernel's compute format, kernel sources). ``flashinfer_trtllm``: FlashInfer's build of the TensorRT-LLM-gen
#: FP8 block-scale MoE (``TrtLlmFp8ExpertsMonolithic``, ``...Modular`` where the routing is not fused), vLLM's
#: ``--moe-backend flashinfer_trtllm`` and its FP8 MoE oracle's first choice on Blackwell when no variable or
#: flag names another (vllm-project/vllm vllm/model_executor/layers/fused_moe/oracle/fp8.py
#: ``_get_priority_backends``: FLASHINFER_TRTLLM before FLASHINFER_CUTLASS, DEEPGEMM, TRITON; Hopper's block-FP8
#: override does not apply to SM100). Read from the newest vLLM table (0.24.0 on both chips); B300's is its own
#: measurement. Assumption (named): the releases served in the rows priced with it (0.19.0) ran the same
#: FlashInfer kernels at the same speed (aiconfigurator's 0.19.0 B200 table measures only vLLM's Triton
#: ``fused_moe``, not the backend the server selects).
VLLM_TABLES: dict[tuple[str, str], tuple[str, str, str, tuple[str, ...]]] = {
    (name, "flashinfer_trtllm"): (
        sdir,
        "fp8_block",
        "fp8",
        (
            "vllm_fp8moe_flashinfer_trtllm_trtllmfp8expertsmonolithic",
            "vllm_fp8moe_flashinfer_trtllm_trtllmfp8expertsmodular",
        ),
    )
    for name, sdir in (("b200", "b200_sxm"), ("b300", "b300_sxm"))
}
#: vLLM's NVFP4 MoE kernels, the same way (round 24): vLLM's NVFP4 MoE oracle tries FLASHINFER_TRTLLM first
#: (vllm-project/vllm vllm/model_executor/layers/fused_moe/oracle/nvfp4.py ``select_nvfp4_moe_backend``:
#: FLASHINFER_TRTLLM, FLASHINFER_CUTEDSL, FLASHINFER_CUTLASS, VLLM_CUTLASS, MARLIN; one oracle for ModelOpt and
#: compressed-tensors NVFP4), and the collector recorded FlashInfer's TRT-LLM-gen NVFP4 experts
#: (``TrtLlmNvFp4ExpertsMonolithic``, ``...Modular``) at every catalog shape of the B200/B300 0.24.0 tables. The
#: table's rows are a compressed-tensors checkpoint's; a ModelOpt NVFP4 checkpoint (nvidia/MiniMax-M2.5-NVFP4)
#: runs the same kernels on the same NVFP4 group-16 layout (named assumption). Cross-check: aiconfigurator's
#: vLLM 0.19.0 B200 table, the release the MiniMax-M2.5 NVFP4 rows ran, measures ``vllm_flashinfer_trtllm_moe_fp4``
#: 1.6-7.4% slower than the 0.24.0 curve at MiniMax's shape (median per layout, TP1-TP8 and EP1-EP8;
#: tests/unit/test_vllm_flashinfer_moe.py). (system, backend) → as :data:`VLLM_TABLES`; written under the
#: report's ``nvfp4`` part.
VLLM_NVFP4_TABLES: dict[tuple[str, str], tuple[str, str, str, tuple[str, ...]]] = {
    (name, "flashinfer_trtllm"): (
        sdir,
        "nvfp4",
        "fp4",
        (
            "vllm_compressedtensorsw4a4nvfp4moe_flashinfer_trtllm_trtllmnvfp4expertsmonolithic",
            "vllm_compressedtensorsw4a4nvfp4moe_flashinfer_trtllm_trtllmnvfp4expertsmodular",
        ),
    )
    for name, sdir in (("b200", "b200_sxm"), ("b300", "b300_sxm"))
}
#: expert-TP sizes of the vLLM curves: every size the vLLM tables measure. vLLM's recipes do run expert TP
#: (MiniMax-M2.5 at TP2/TP4 without ``--enable-expert-parallel``: MoE TP = attention TP), and a TP-t rank runs
#: every expert t times narrower, which these kernels pay for at decode sizes: at MiniMax-M2.5's shape (3072 x
#: 1536, 256 experts, top-8) the B300 FP8 table measures TP4 0.233 ms against EP4 0.191 ms at 512 tokens
#: (1.22x, same weight bytes per rank), TP2 0.387 against EP2 0.321 ms (1.21x). Read from the EP-(t·ep) row
#: instead (cost/moe_backend.py, "Expert TP read as expert parallelism"), those layouts were priced too fast.
VLLM_MOE_TP = (1, 2, 4, 8)


def vllm_curves(name: str, backend: str, shapes, tables=None) -> tuple[list[dict], dict]:
    """(curves, report) of vLLM's ``backend`` kernels on system ``name`` (``tables``: :data:`VLLM_TABLES`, the
    default, or :data:`VLLM_NVFP4_TABLES`) at ``shapes``:
    the balanced-routing rows of the newest vLLM ``moe_perf`` table, one curve per (shape, expert TP, EP) at every
    expert TP the table measures (:data:`VLLM_MOE_TP`; cost/moe_backend.py reads a layout's own expert-TP curve
    before the EP-row reading), fastest of repeated rows.

    Raises:
        SpecError: the package lacks the table (``pip install -e ".[calibrate]"``).
    """
    from jalapeno.fit.moe_backends import (
        _balanced_curves,
        _balanced_result,
    )  # at call time: moe_backends imports this module

    sdir, dtype, fmt, sources = (VLLM_TABLES if tables is None else tables)[name, backend]
    df, version = load_table(sdir, "moe", "moe_perf", backend="vllm")
    table = f"aiconfigurator {sdir} vllm {version} moe_perf"
    got = _balanced_curves(df, sources, dtype, shapes, moe_tp=VLLM_MOE_TP)
    return _balanced_result(got, name, backend, fmt, table, dtype, sources)
