"""InferenceX's H200 gpt-oss-120b TensorRT-LLM runs take the MoE backend their script forces (round 37, h200ix37).

Expectations by hand from the cited sources, not from the model's output:
- SemiAnalysisAI/InferenceX benchmarks/gptoss_fp4_h200_trt_slurm.sh @f6a9d0b6adf1: ``moe_config: backend: TRITON``,
  ``free_gpu_memory_fraction: 0.85``, ``--max_num_tokens 20000``, ``--max_batch_size $CONC``; the config key's
  search space is TP1/TP2/TP4/TP8 with EP = TP;
- TensorRT-LLM's gpt-oss guide: an MXFP4 checkpoint runs W4A16 on Hopper, so the experts' math is BF16 on the h200
  ``triton`` form of data/moe_backend_kernels.toml: compute time = FLOP / (BF16 peak x peak_fraction x m / (m +
  half_rows)), m the rows per touched expert;
- scripts/h200_gptoss_trt_kernels.py: one layer's MXFP4 experts 128 x 3 x 2880^2 x 0.53125 B = 1,692,057,600 B; the
  resident sequences of the aiconfigurator 1k/8k TP1 row at concurrency 64 (TTFT 26.035 s, TPOT 18.47 ms, mean OSL
  0.9 x 8192): D = 7371.8 x 0.01847 = 136.16 s, N = 64 x 136.16 / 162.19 = 53.73.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from jalapeno.cost.moe_backend import KernelMoePricer
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.pool_backends import with_moe_backend
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.engines import launch_recipe
from jalapeno.deploy.layout import Layout
from jalapeno.fit.searched import search_spaces, searched_runs
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.moe_backends import moe_backend_kernel


def _script():
    path = Path(__file__).resolve().parents[2] / "scripts" / "h200_gptoss_trt_kernels.py"
    spec = importlib.util.spec_from_file_location("h200_gptoss_trt_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_recipe_carries_the_scripts_facts():
    r = launch_recipe("h200", "gpt-oss-120b", "trt", "mxfp4")
    assert r.name == "trtllm-h200-gptoss-fp4"
    assert (r.moe_backend, r.max_tokens_per_step, r.memory_fraction, r.max_running_is_concurrency) == \
        ("triton", 20000, 0.85, True)
    assert launch_recipe("b200", "gpt-oss-120b", "trt", "mxfp4") is None  # an H200 script only


def test_validation_runs_of_the_config_key_take_triton():
    spaces = [s for s in search_spaces() if s.key == "gptoss-fp4-h200-trt" and (s.isl, s.osl) == (1024, 1024)]
    assert spaces
    runs = searched_runs("h200", "gpt-oss-120b", 1024, 1024, spaces, False, 64.0)
    assert runs and all(d.decode.moe_backend == "triton" for d, _ in runs)


def test_triton_prices_the_experts_at_bf16_math():
    m, lay = load_model("gpt-oss-120b"), Layout(tp=1)
    base = load_pricer("h200", stack="trtllm")
    tri = with_moe_backend(base, "triton", m, lay)
    assert isinstance(tri, KernelMoePricer) and tri.fmt == "bf16"
    k = moe_backend_kernel("h200", "triton")
    assert tri.floor_s == pytest.approx(k["floor_s"])  # floor_applied for (h200, triton)
    sc = step_cost(m, tri, lay, get_precision("mxfp4"), Batch.make(decode_seqs=np.array([64.0]), decode_ctx=1434.0))
    i = sc.ops.name.index("moe.experts")
    rows, flop = float(sc.ops.rows[i][0]), float(sc.ops.flop[i][0])
    eta = k["peak_fraction"] * rows / (rows + k["half_rows"])
    assert float(sc.times.compute_s[i][0]) == pytest.approx(flop / (base.system.chip.peak("bf16") * eta), rel=1e-9)
    # 64 sequences x top-4 = 256 assignments, 36 layers, 6 x 2880^2 FLOP each
    assert flop == pytest.approx(64 * 4 * 36 * 6 * 2880 * 2880, rel=1e-9)


def test_script_hand_numbers():
    s = _script()
    assert s.expert_layer_bytes() == pytest.approx(1_692_057_600.0)
    assert s.implied_resident(64, 26.035, 0.01847, 0.9 * 8192) == pytest.approx(53.73, abs=0.01)
    assert s.implied_resident(32, 0.0, 0.015, 922.0) == pytest.approx(32.0)  # no wait: every user decodes
