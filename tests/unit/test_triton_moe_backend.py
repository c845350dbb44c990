"""TensorRT-LLM's Triton MoE on H200: gpt-oss-120b's routed experts with their measured per-layer floor.

Facts, by hand from their sources:

- SemiAnalysisAI/InferenceX benchmarks/gptoss_fp4_h200_trt.sh @e28c038f8 (and the _slurm scripts before it)
  set ``moe_config.backend: TRITON``; data/validation/aic_sweeps.toml gives the H200 gpt-oss TRT-LLM rows
  ``moe_backend = "triton"``.
- aiconfigurator-core, systems/data/h200_sxm/moe/trtllm/1.3.0rc20/moe_perf.parquet, kernel_source
  ``moe_torch_flow``, moe_dtype ``w4a16_mxfp4``, gpt-oss-120b's shape (hidden 2880, intermediate 2880,
  128 experts, top-4), MoE TP1, balanced routing, latency per layer (µs; fastest of repeated rows):

      EP     tokens:   1       4       16      256
      1               78.7   124.7   341.7   623.4
      8               72.6    80.1   124.0     -
      128             71.3    77.9    94.0     -

  and the B200 table of the same release, ``w4a8_mxfp4_mxfp8`` (TRT-LLM-gen), EP1 / EP8 at 1 token:
  25.3 / 19.4 µs. At 256 tokens every expert is read (256·4 ≥ 128): 128 experts · 3 · 2880 · 2880 elements
  · 0.53125 B (4 bits + an E8M0 scale per 32) = 1.692 GB in 0.6234 ms = 2.71 TB/s, 0.566 of H200's
  4.8 TB/s; less a ~59 µs fixed part, 1.692 GB in 0.564 ms = 3.00 TB/s, 0.625. At one token the block reads 4 experts (52.9 MB, 11 µs at 4.8 TB/s) yet takes 72-79 µs at any
  EP: about 60-70 µs per layer is fixed, against about 20 µs on Blackwell's fused block.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jalapeno.cost.moe_backend import KernelMoePricer
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.pool_backends import with_moe_backend
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.fit.kernels import moe_rows, moe_table
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.moe_backends import moe_backend_kernel

#: measured µs per layer at EP1 (module docstring)
TRITON_EP1_US = {1: 78.7, 4: 124.7, 16: 341.7, 256: 623.4}
W4A16 = {"w4a16_mxfp4": ("bf16", 0.53125, 2.0)}


def _rows(tokens, ep: int = 1) -> pd.DataFrame:
    return pd.DataFrame({"moe_dtype": "w4a16_mxfp4", "num_tokens": tokens, "hidden_size": 2880, "inter_size": 2880,
                         "topk": 4, "num_experts": 128, "moe_tp_size": 1, "moe_ep_size": ep,
                         "distribution": "balanced", "latency": 1.0})


def _triton() -> KernelMoePricer:
    p = with_moe_backend(load_pricer("h200", stack="trtllm"), "triton", load_model("gpt-oss-120b"), Layout(tp=1))
    assert isinstance(p, KernelMoePricer)
    return p


def test_triton_form_with_its_floor_reproduces_the_measured_ep1_block():
    tokens = sorted(TRITON_EP1_US)
    r = moe_rows(_rows(tokens), "balanced", W4A16).sort_values("num_tokens")
    t = _triton().op_times(moe_table(r, "bf16")).time_s[0]
    err = t / (np.array([TRITON_EP1_US[n] for n in tokens]) * 1e-6) - 1
    assert (np.abs(err) < 0.15).all()  # fit over the EP1 rows: 3% median, 9% p90 (data/moe_backend_kernels.toml)
    # the saturated block streams the weights at the fraction implied once the fixed part is taken out (0.625)
    assert moe_backend_kernel("h200", "triton")["hbm_fraction"] == pytest.approx(0.625, abs=0.03)


def test_the_floor_is_priced_for_triton_and_not_for_marlin():
    k = moe_backend_kernel("h200", "triton")
    assert k["floor_applied"] is True
    # by hand: 78.7 µs at one token less ~11-18 µs of weight reading leaves 60-68 µs fixed per layer
    assert 50e-6 < k["floor_s"] < 70e-6
    assert _triton().floor_s == k["floor_s"]
    marlin = with_moe_backend(load_pricer("h100", stack="vllm"), "marlin", load_model("gpt-oss-120b"), Layout(tp=2))
    assert marlin.floor_s is None and not moe_backend_kernel("h100", "marlin")["floor_applied"]


@pytest.mark.parametrize("tp", [1, 8])
def test_h200_triton_step_keeps_the_floor_at_every_tp(tp):
    # one decoding sequence: the routed-expert block of each of the 36 layers costs at least the floor,
    # whatever the expert-TP width (the measured floor does not shrink with EP: 72.6 µs at EP8, 71.3 at EP128)
    m, lay = load_model("gpt-oss-120b"), Layout(tp=tp)
    pr = with_moe_backend(load_pricer("h200", stack="trtllm"), "triton", m, lay)
    sc = step_cost(m, pr, lay, get_precision("mxfp4"), Batch.make(decode_seqs=np.array([1.0]), decode_ctx=1024.0))
    moe = [j for j, kind in enumerate(sc.ops.kind) if kind == "moe"]
    per_layer = float(sc.times.time_s[moe].sum()) / m.num_layers
    assert per_layer >= moe_backend_kernel("h200", "triton")["floor_s"]
    assert per_layer < 1.15 * 78.7e-6  # not above the measured EP1 block at one token (+ the fit's 15%)
    b200 = with_moe_backend(load_pricer("b200", stack="trtllm"), "trtllm", m, lay)
    sb = step_cost(m, b200, lay, get_precision("mxfp4"), Batch.make(decode_seqs=np.array([1.0]), decode_ctx=1024.0))
    # Hopper's Triton block costs more than Blackwell's TRT-LLM-gen one (78.7 vs 25.3 µs measured at EP1)
    assert float(sb.times.time_s[[j for j, kind in enumerate(sb.ops.kind) if kind == "moe"]].sum()) \
        < float(sc.times.time_s[moe].sum())


def test_shipped_triton_form_is_what_the_fit_gives():
    pytest.importorskip("aiconfigurator_core")
    from jalapeno.fit.moe_backends import fit_backend_kernels

    fitted = {(f["system"], f["backend"]): f for f in fit_backend_kernels()}[("h200", "triton")]
    shipped = moe_backend_kernel("h200", "triton")
    for key in ("peak_fraction", "half_rows", "hbm_fraction", "floor_s"):
        assert fitted[key] == pytest.approx(shipped[key], rel=1e-4)
    assert fitted["floor_applied"] is shipped["floor_applied"] is True
