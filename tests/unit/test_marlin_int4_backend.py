"""vLLM's Marlin MoE on INT4 weight-only experts (Kimi K2.5's INT4 release) on H200 and B200.

Facts, by hand from their sources:

- vllm-project/vllm vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors_moe.py runs
  compressed-tensors WNA16 experts through CompressedTensorsWNA16MarlinMoEMethod where
  ``check_moe_marlin_supports_layer`` holds (the Triton WNA16 method is the fallback); aiconfigurator-core
  0.12.0 times vLLM's ``int4_wo`` MoE with that kernel (kernel_source
  ``vllm_compressedtensorswna16marlinmoe_marlin_marlinexperts``).
- aiconfigurator-core 0.12.0, systems/data/{h200_sxm,b200_sxm}/moe/vllm/0.24.0/moe_perf.parquet, that kernel,
  moe_dtype int4_wo, Kimi K2.5's routed-expert shape (hidden 7168, intermediate 2048, 384 experts, top-8),
  EP 1, balanced routing, latency per layer (ms):

      system  moe TP   tokens:   8        64       1024     8192
      H200    1                 0.4995   2.7830   4.4741   23.3975
      H200    8                 0.1105   0.4665   0.8569    4.3369
      B200    1                 0.4278   2.3651   4.0023   21.5964
      B200    8                 0.1006   0.4076   0.7757    3.9780

  At 8192 tokens and MoE TP1 the block does 2·8192·8·3·7168·2048 = 5.77 TFLOP: 247 TFLOP/s on H200 (0.25 of
  its 989 TFLOP/s BF16 dense peak) and 267 TFLOP/s on B200 (0.12 of 2.25 PFLOP/s): Marlin's dequantise-in-
  registers BF16 math runs at about Hopper's rate on either chip, far below what the calibrated sets price
  for a BF16 grouped GEMM at prefill-sized loads.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jalapeno.cost.moe_backend import KernelMoePricer
from jalapeno.cost.expert_ops import add_routed_experts
from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.pool_backends import with_moe_backend
from jalapeno.deploy.layout import Layout
from jalapeno.fit.aic_rows import load_aiconfigurator
from jalapeno.fit.kernels import moe_rows
from jalapeno.specs.catalog import load_model
from jalapeno.specs.moe_backends import moe_backend_kernel

MARLIN_MS = {("h200", 1): {8: 0.4995, 64: 2.7830, 1024: 4.4741, 8192: 23.3975},
             ("h200", 8): {8: 0.1105, 64: 0.4665, 1024: 0.8569, 8192: 4.3369},
             ("b200", 1): {8: 0.4278, 64: 2.3651, 1024: 4.0023, 8192: 21.5964},
             ("b200", 8): {8: 0.1006, 64: 0.4076, 1024: 0.7757, 8192: 3.9780}}
INT4_WO = {"int4_wo": ("bf16", 0.5625, 2.0)}


def _ops(tokens, tp: int):
    d = pd.DataFrame({"moe_dtype": "int4_wo", "num_tokens": tokens, "hidden_size": 7168, "inter_size": 2048,
                      "topk": 8, "num_experts": 384, "moe_tp_size": tp, "moe_ep_size": 1,
                      "distribution": "balanced", "latency": 1.0})
    r = moe_rows(d, "balanced", INT4_WO).sort_values("num_tokens")
    ob = OpBuilder(len(r))  # the step's routed-expert op at expert TP ``tp`` (``split``: the width term reads it)
    h, inter = r.hidden_size.to_numpy(float), r.inter.to_numpy(float)
    add_routed_experts(ob, "moe", "bf16", r.load.to_numpy(), r.touched.to_numpy(), h, inter, 3 * h * inter,
                       r.w_b.to_numpy(), r.a_b.to_numpy(), np.zeros(len(r)), split=float(tp))
    return ob.build()[0]


def _marlin(system: str, inner) -> KernelMoePricer:
    k = moe_backend_kernel(system, "marlin")
    return KernelMoePricer(inner, k["fmt"], k["peak_fraction"], k["half_rows"], k["hbm_fraction"], "marlin",
                           "", k["floor_s"] if k["floor_applied"] else None, (k["c_elems"], k["exponent"]))


@pytest.mark.parametrize("system", ["h200", "b200"])
def test_marlin_int4_form_reproduces_kimi_rows_at_the_served_expert_tp(system):
    # Kimi K2.5's vLLM rows run MoE TP8 EP1: there the fitted form with its floor is within 11% of every row,
    # from decode-sized (8 tokens: the floor) to prefill-sized loads
    tokens = sorted(MARLIN_MS[system, 8])
    t = _marlin(system, load_pricer(system, stack="kernel")).op_times(_ops(tokens, 8)).time_s[0]
    meas = np.array([MARLIN_MS[system, 8][n] for n in tokens]) * 1e-3
    assert np.abs(t / meas - 1) == pytest.approx(0, abs=0.11)


@pytest.mark.parametrize("system", ["h200", "b200"])
def test_marlin_int4_prefill_is_far_slower_than_the_calibrated_bf16_form(system):
    # 8192 tokens at MoE TP8: the calibrated set's BF16 grouped GEMM is priced at under half the measured time
    # (what made Kimi K2.5 INT4 TTFT 33-51% low); Marlin's form is within 10% of it
    inner = load_pricer(system, stack="kernel")
    ops = _ops([8192], 8)
    meas = MARLIN_MS[system, 8][8192] * 1e-3
    assert float(inner.op_times(ops).time_s[0][0]) < 0.5 * meas
    assert float(_marlin(system, inner).op_times(ops).time_s[0][0]) == pytest.approx(meas, rel=0.10)


def test_kimi_int4_pools_take_marlin_where_its_int4_table_is_fitted():
    # H200 and the SM100 family (B300 / GB200 / GB300's own vLLM 0.24.0 tables since kimiw4a16_41); not a chip
    # without one (MI355X: aiconfigurator has no vLLM Marlin table of it)
    m, lay = load_model("kimi-k2.5"), Layout(tp=8, ep=1)
    for system in ("h200", "b200", "b300", "gb200-nvl72", "gb300-nvl72"):
        assert isinstance(with_moe_backend(load_pricer(system, stack="vllm"), "marlin", m, lay), KernelMoePricer)
    assert not isinstance(with_moe_backend(load_pricer("mi355x", stack="vllm"), "marlin", m, lay), KernelMoePricer)


def _row(backend: str, moe_quant: str, precision: str) -> dict:
    return {"id": "kimi_b200_vllm_int4_agg_1024x1024_c4_tp8_ep1_1", "silicon_data_source": "source_file=x.csv",
            "backend": backend, "backend_version": "0.15.1", "model_path": "moonshotai/Kimi-K2.5",
            "system": "b200_sxm", "precision": precision, "mode": "agg", "isl": 1024, "osl": 1024,
            "gemm_quant_mode": moe_quant, "moe_quant_mode": moe_quant, "batch_size": 4, "tp_size": 8, "pp_size": 1,
            "attention_dp_size": 1, "moe_tp_size": 8, "moe_ep_size": 1, "silicon_ttft_ms": 134.7,
            "silicon_tpot_ms": 10.0}


def test_a_vllm_int4_row_runs_its_experts_on_marlin():
    pts, _ = load_aiconfigurator(pd.DataFrame([_row("vllm", "int4_wo", "int4")]))
    (p,) = pts
    assert p.deployment.decode.moe_backend == "marlin"
    assert any("MoE backend marlin" in n for n in p.notes)
    pts, _ = load_aiconfigurator(pd.DataFrame([_row("vllm", "nvfp4", "fp4")]))
    assert pts[0].deployment.decode.moe_backend is None  # NVFP4 experts: not Marlin's


def test_shipped_int4_marlin_forms_are_what_the_fit_gives():
    pytest.importorskip("aiconfigurator_core")
    from jalapeno.fit.moe_backends import fit_backend_kernels

    for fitted in fit_backend_kernels(backends=[("h200", "marlin"), ("b200", "marlin")]):
        shipped = moe_backend_kernel(fitted["system"], "marlin")
        for key in ("peak_fraction", "half_rows", "hbm_fraction", "floor_s", "c_elems", "exponent"):
            assert fitted[key] == pytest.approx(shipped[key], rel=1e-4)
        assert shipped["floor_applied"] is True
