"""vLLM's Marlin MoE on H100: the routed experts of the runs whose launch script forces it.

Facts, by hand from their sources:

- SemiAnalysisAI/InferenceX benchmarks/gptoss_fp4_h100.sh @1fc5d73cdd31 exports
  ``VLLM_MXFP4_USE_MARLIN=1`` (and sets max-num-batched-tokens 8192, --max-num-seqs=$CONC).
- aiconfigurator's ``balanced_logits`` (collector helper; stride s = ceil(E/k), token i takes experts
  (i + j·s) mod E, j < k, when T >= s, else (i·s/T + j·s) mod E) reaches min(E, T·k) distinct experts:
  DeepSeek's 256 experts, top-8: all 256 at 32 tokens (s = 32), 16 at 2 tokens; the uniform-random
  expectation at 32 tokens is 256·(1 − (1 − 8/256)^32) = 163.3.
- aiconfigurator-core 0.12.0, systems/data/h100_sxm/moe/vllm/0.24.0/moe_perf.parquet, kernel_source
  ``vllm_compressedtensorsw4a4mxfp4moe_marlin_marlinexperts_situ_as_silu`` (moe_dtype w4a16_mxfp4),
  hidden 3584, intermediate 3072, 896 experts, top-16, EP 1, balanced, latency per layer (ms):

      moe TP   tokens:   64      256     3072     16384
      1                 5.809   5.822   15.146   75.413
      2                 2.941   3.055    7.824   38.953

  At 256 tokens every expert is touched (256·16 > 896): 896·3·3584·3072·0.53125 B = 15.72 GB read in
  5.822 ms at TP1 is 0.81 of H100's 3.35 TB/s; at 16384 tokens 2·16384·16·3·3584·3072 FLOP = 17.3 TFLOP
  in 75.4 ms is 0.23 of the 989.4 TFLOP/s BF16 dense peak: Marlin streams its 4-bit weights near the
  HBM roofline and runs its dequantised BF16 math far below the tensor-core peak.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jalapeno.cost.moe_backend import KernelMoePricer
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.pool_backends import with_moe_backend
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import Pool
from jalapeno.deploy.engines import launch_recipe
from jalapeno.deploy.recipe import _recipe
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.cost.expert_ops import add_routed_experts
from jalapeno.cost.optable import OpBuilder
from jalapeno.fit.kernels import moe_rows
from jalapeno.fit.searched import search_spaces, searched_runs, with_launch_backend
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.moe_backends import moe_backend_kernel

MARLIN_MS = {1: {64: 5.809, 256: 5.822, 3072: 15.146, 16384: 75.413},
             2: {64: 2.941, 256: 3.055, 3072: 7.824, 16384: 38.953}}
W4A16 = {"w4a16_mxfp4": ("bf16", 0.53125, 2.0)}


def _rows(tokens, tp: int, e: int = 896, k: int = 16, h: int = 3584, inter: int = 3072, ep: int = 1):
    return pd.DataFrame({"moe_dtype": "w4a16_mxfp4", "num_tokens": tokens, "hidden_size": h, "inter_size": inter,
                         "topk": k, "num_experts": e, "moe_tp_size": tp, "moe_ep_size": ep,
                         "distribution": "balanced", "latency": 1.0})


def _marlin(inner, width: bool = True) -> KernelMoePricer:
    k = moe_backend_kernel("h100", "marlin")
    return KernelMoePricer(inner, k["fmt"], k["peak_fraction"], k["half_rows"], k["hbm_fraction"], "marlin",
                           width=(k["c_elems"], k["exponent"]) if width else None)


def _split_table(r: pd.DataFrame, tp: int):
    """The routed-expert op of each ``moe_rows`` row at expert TP ``tp`` (``split``: the width term reads it)."""
    ob = OpBuilder(len(r))
    h, inter = r.hidden_size.to_numpy(float), r.inter.to_numpy(float)
    add_routed_experts(ob, "moe", "bf16", r.load.to_numpy(), r.touched.to_numpy(), h, inter, 3 * h * inter,
                       r.w_b.to_numpy(), r.a_b.to_numpy(), np.zeros(len(r)), split=float(tp))
    return ob.build()[0]


def test_balanced_tables_touch_every_expert_the_load_can_reach():
    d = pd.DataFrame({"moe_dtype": "fp8_block", "num_tokens": [2, 32, 32], "hidden_size": 7168, "inter_size": 2048,
                      "topk": 8, "num_experts": 256, "moe_tp_size": 1, "moe_ep_size": [1, 1, 8],
                      "distribution": "balanced", "latency": 1.0})
    bal = moe_rows(d, "balanced").sort_values(["num_tokens", "moe_ep_size"]).touched.to_numpy()
    assert bal == pytest.approx([16.0, 256.0, 32.0])  # min(E/ep, T·k/ep)
    uni = moe_rows(d, "uniform").sort_values(["num_tokens", "moe_ep_size"]).touched.to_numpy()
    assert uni[1] == pytest.approx(256 * (1 - (1 - 8 / 256) ** 32), rel=1e-9)
    with pytest.raises(SpecError, match="touched_rule.*unknown rule 'random'.*balanced, uniform"):
        moe_rows(d, "random")


@pytest.mark.parametrize("tp", [1, 2])
def test_marlin_form_reproduces_its_kernel_rows(tp):
    # the fitted form with its width term through the roofline against measured Marlin rows (fit error over the
    # table: 4.7% median, 22% p90): decode-sized loads (weight-bandwidth bound) and the full-tile prompt load
    # (16,384 tokens: 292.6 rows per expert, 0.23 of the BF16 peak measured) within 5%; 3,072 tokens (54.9 rows
    # per expert in one 64-row Marlin tile, vLLM's block_size_m rule) priced slow, by under 20%
    tokens = sorted(MARLIN_MS[tp])
    r = moe_rows(_rows(tokens, tp), "balanced", W4A16).sort_values("num_tokens")
    t = _marlin(load_pricer("h100", stack="kernel")).op_times(_split_table(r, tp)).time_s[0]
    err = t / (np.array([MARLIN_MS[tp][n] for n in tokens]) * 1e-3) - 1
    assert np.abs(err[[0, 1, 3]]) == pytest.approx(0, abs=0.05)
    assert 0 < err[2] < 0.2


def test_marlin_width_term_multiplies_the_compute_of_split_experts():
    # by hand: compute x 1 + ((c/w)^p - (c/I)^p)·m/(m + half_rows), w = 3072/2 per rank, I = 3072, m = 292.57 rows
    # per expert (16,384 tokens x 16 / 896); nothing at expert TP 1; the memory term untouched
    k = moe_backend_kernel("h100", "marlin")
    c, p, half = k["c_elems"], k["exponent"], k["half_rows"]
    inner = load_pricer("h100", stack="kernel")
    r = moe_rows(_rows([16384], 2), "balanced", W4A16)
    with_w = _marlin(inner).op_times(_split_table(r, 2))
    without = _marlin(inner, width=False).op_times(_split_table(r, 2))
    m = 16384 * 16 / 896
    factor = 1 + ((c / 1536) ** p - (c / 3072) ** p) * m / (m + half)
    assert float(with_w.compute_s[0][0]) == pytest.approx(float(without.compute_s[0][0]) * factor, rel=1e-9)
    assert float(with_w.memory_s[0][0]) == pytest.approx(float(without.memory_s[0][0]), rel=1e-12)
    r1 = moe_rows(_rows([16384], 1), "balanced", W4A16)
    assert float(_marlin(inner).op_times(_split_table(r1, 1)).time_s[0][0]) == pytest.approx(
        float(_marlin(inner, width=False).op_times(_split_table(r1, 1)).time_s[0][0]), rel=1e-12)
    # measured at the narrowest slices (TP16, 192 wide, 16,384 tokens: 8.308 ms, aiconfigurator h100_sxm vLLM
    # 0.24.0) the width term brings the form within 10% (30% fast without it)
    r16 = moe_rows(_rows([16384], 16), "balanced", W4A16)
    t16 = float(_marlin(inner).op_times(_split_table(r16, 16)).time_s[0][0])
    assert t16 == pytest.approx(8.308e-3, rel=0.10)


def test_marlin_prices_experts_at_bf16_math_and_near_the_weight_bandwidth():
    m, lay = load_model("gpt-oss-120b"), Layout(tp=2)
    base = load_pricer("h100", stack="vllm")
    marlin = with_moe_backend(base, "marlin", m, lay)
    assert isinstance(marlin, KernelMoePricer)
    k = moe_backend_kernel("h100", "marlin")
    chip = base.system.chip
    for tokens in (128.0, 8192.0):
        b = Batch.make(decode_seqs=np.array([64.0]), decode_ctx=1024.0, prefill_tokens=np.array([tokens - 64.0]),
                       prefill_ctx=tokens - 64.0, prefill_seqs=np.array([1.0]))
        sc = step_cost(m, marlin, lay, get_precision("mxfp4"), b)
        i = sc.ops.name.index("moe.experts")
        rows, flop = float(sc.ops.rows[i][0]), float(sc.ops.flop[i][0])
        eta = k["peak_fraction"] * rows / (rows + k["half_rows"])
        # the width term at TP2: experts 2880 / 2 = 1440 wide on each rank against gpt-oss's full 2880
        c, p = k["c_elems"], k["exponent"]
        width = 1 + ((c / 1440) ** p - (c / 2880) ** p) * rows / (rows + k["half_rows"])
        assert float(sc.times.compute_s[i][0]) == pytest.approx(flop / (chip.peak("bf16") * eta) * width, rel=1e-9)
        w = float(sc.ops.weight_bytes[i][0])
        assert float(sc.times.memory_s[i][0]) >= w / (chip.hbm_bandwidth_bytes_per_s * k["hbm_fraction"]) * (1 - 1e-9)
        ref = step_cost(m, base, lay, get_precision("mxfp4"), b)
        faster = float(sc.times.time_s[i][0]) < float(ref.times.time_s[i][0])
        # decode-sized steps: faster than the calibrated FP8 grouped GEMMs; prefill-sized: slower
        assert faster == (tokens == 128.0)
    others = [j for j, kind in enumerate(sc.ops.kind) if kind != "moe"]
    assert sc.times.time_s[others] == pytest.approx(ref.times.time_s[others])


def test_h100_gpt_oss_vllm_runs_take_the_backend_their_script_forces():
    r = launch_recipe("h100", "gpt-oss-120b", "vllm", "mxfp4")
    assert (r.moe_backend, r.token_budget, r.cuda_graph_max_batch) == ("marlin", 8192, 2048)
    spaces = [s for s in search_spaces() if s.key == "gptoss-fp4-h100-vllm" and (s.isl, s.osl) == (1024, 1024)]
    runs = searched_runs("h100", "gpt-oss-120b", 1024, 1024, spaces, False, 64.0)
    assert runs and all(d.decode.moe_backend == "marlin" for d, _ in runs)
    pool = Pool(Layout(tp=8))
    assert with_launch_backend("b200", "gpt-oss-120b", "vllm", "mxfp4", pool) is pool  # no such recipe there
    assert with_moe_backend(load_pricer("mi355x"), "marlin", load_model("gpt-oss-120b"), Layout(tp=2)).__class__ \
        is not KernelMoePricer  # not fitted on MI355X: the calibrated set


def test_a_recipe_naming_an_unknown_backend_is_refused():
    raw = {"name": "x", "engine": "vllm", "version": "0.18.0", "systems": ["h100"], "model": "gpt-oss-120b",
           "source": "s", "precision": "mxfp4", "serving": "agg", "moe_backend": "marlinn"}
    with pytest.raises(SpecError, match=r"recipe x\.moe_backend.*unknown MoE backend 'marlinn'.*marlin"):
        _recipe(raw, 0)


def test_shipped_marlin_form_is_what_the_fit_gives():
    pytest.importorskip("aiconfigurator_core")
    from jalapeno.fit.moe_backends import fit_backend_kernels

    fitted = fit_backend_kernels()[0]
    shipped = moe_backend_kernel("h100", "marlin")
    for key in ("peak_fraction", "half_rows", "hbm_fraction"):
        assert fitted[key] == pytest.approx(shipped[key], rel=1e-4)


def test_marlin_width_term_replaces_the_stacks_own():
    # review39: with a stack whose set prices TensorRT-LLM's width term (Efficiency.moe_width_term, data/moe_width.toml
    # has h100 bf16), the inner pricer applied it to the Marlin op as well: x1.15 more at TP2, 16,384 tokens. The
    # backend's own term replaces it: the op's times are the same whichever way the inner set's switch stands.
    from dataclasses import replace

    from jalapeno.cost.moe_width import width_terms

    assert "bf16" in width_terms("h100")  # the inner term exists for the kernel's format: the test can fail
    inner = load_pricer("h100", stack="kernel")
    on = replace(inner, efficiency=replace(inner.efficiency, moe_width_term=True))
    r = moe_rows(_rows([16384], 2), "balanced", W4A16)
    a, b = (_marlin(p).op_times(_split_table(r, 2)) for p in (inner, on))
    assert float(b.compute_s[0][0]) == pytest.approx(float(a.compute_s[0][0]), rel=1e-12)
    assert float(b.time_s[0][0]) == pytest.approx(float(a.time_s[0][0]), rel=1e-12)
