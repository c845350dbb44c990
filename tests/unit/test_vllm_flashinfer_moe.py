"""vLLM's FlashInfer TRT-LLM-gen FP8 MoE (``flashinfer_trtllm``) on B200/B300: MiniMax-M2.5's routed experts.

Expected values by hand from aiconfigurator-core 0.12.0's vLLM ``moe_perf`` tables
(systems/data/{b200_sxm,b300_sxm}/moe/vllm/0.24.0/moe_perf.parquet), MiniMax-M2.5's routed-expert shape
(hidden 3072, intermediate 1536, 256 experts, top-8), ``fp8_block``, balanced routing, MoE TP1 (expert TP
rows further down),
kernel_source ``vllm_fp8moe_flashinfer_trtllm_trtllmfp8expertsmonolithic`` (the kernel vLLM selects when
the collector builds its FusedMoE layer), ms per layer:

    tokens            4       64      1024
    B200  EP2     0.0637  0.2859   0.3581
    B300  EP2     0.0607  0.2872   0.3575
    B200  EP4     0.0456  0.1630   0.2558

Cross-check by hand (a physical bound, not an input): at 64 balanced tokens on EP2 the 64 x 8 / 2 = 256
assignments reach each of the rank's 128 experts twice, so the layer reads all of its routed weights,
128 x 3 x 3072 x 1536 x 1 B = 1.812 GB (FP8, block scales aside); in 0.2859 ms that is 6.34 TB/s, 0.79 of
B200's 8 TB/s, under the HBM roofline.

Launch scripts read by hand (SemiAnalysisAI/InferenceX benchmarks/single_node/): minimaxm2.5_fp8_b200.sh
@bddbf4031 and @41ed82dc1, minimaxm2.5_fp8_b300.sh @340d7854c and @0c2467c15 (v0.19.0) export no
VLLM_USE_FLASHINFER_MOE_FP8 / VLLM_MOE_USE_DEEP_GEMM; @f342df18e and @0f78cf4eb (v0.17.0) export both = 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jalapeno.cost.moe_backend import MeasuredMoePricer
from jalapeno.cost.pricer import with_moe_backend
from jalapeno.deploy.deployment import Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.aic_sweeps import load_sweeps
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import load_aiconfigurator
from jalapeno.specs.catalog import load_model

TABLE_MS = {("b200", 2): {4: 0.0637, 64: 0.2859, 1024: 0.3581},
            ("b300", 2): {4: 0.0607, 64: 0.2872, 1024: 0.3575},
            ("b200", 4): {4: 0.0456, 64: 0.1630, 1024: 0.2558}}


@pytest.fixture(scope="module")
def minimax():
    return load_model("minimax-m2.5")


def _fp8(p):
    """The FP8 curve of a flashinfer_trtllm pricer (it also carries the NVFP4 one: one wrapper per format)."""
    assert isinstance(p, MeasuredMoePricer)
    return p.curves()["fp8", ""]


@pytest.mark.parametrize("system, ep", sorted(TABLE_MS))
def test_curve_is_the_measured_flashinfer_kernel(minimax, system, ep):
    p = with_moe_backend(load_any_pricer(system, "calibrated"), "flashinfer_trtllm", minimax, Layout(tp=ep, ep=ep))
    c = _fp8(p)
    assert c.experts_on_rank == 256 / ep and "vllm 0.24.0" in c.label
    tokens = np.array(list(TABLE_MS[system, ep]), dtype=float)
    got_ms = c(tokens * 8 / ep) * 1e3  # balanced load of the busiest rank: tokens x top-k / EP
    np.testing.assert_allclose(got_ms, list(TABLE_MS[system, ep].values()), atol=1e-4)


def test_measured_kernel_is_under_the_hbm_roofline(minimax):
    p = with_moe_backend(load_any_pricer("b200", "calibrated"), "flashinfer_trtllm", minimax, Layout(tp=2, ep=2))
    t = float(_fp8(p)(np.array([64 * 8 / 2]))[0])
    weights_b = 128 * 3 * 3072 * 1536 * 1.0
    assert 6.2e12 < weights_b / t < 8e12  # 6.34 TB/s measured, B200's HBM 8 TB/s


# Expert TP (MoE TP = attention TP, no --enable-expert-parallel): the same tables measure it, and it is slower
# than the EP row of as many ranks at the same weight bytes per rank (each expert's slice is t times narrower),
# ms per layer, same kernel_source, balanced, MoE EP1:
#     tokens            4       64      512
#     B200  TP4     0.0476  0.1625   0.2405      (EP4: 0.0456 0.1630 0.1924)
#     B300  TP4     0.0454  0.1635   0.2331      (EP4: 0.0419 0.1630 0.1913)
#     B300  TP2     0.0622  0.2857   0.3874      (EP2: 0.0607 0.2872 0.3208)
TP_TABLE_MS = {("b200", 4): {4: 0.0476, 64: 0.1625, 512: 0.2405},
               ("b300", 4): {4: 0.0454, 64: 0.1635, 512: 0.2331},
               ("b300", 2): {4: 0.0622, 64: 0.2857, 512: 0.3874}}


@pytest.mark.parametrize("system, tp", sorted(TP_TABLE_MS))
def test_expert_tp_reads_its_own_measured_row(minimax, system, tp):
    p = with_moe_backend(load_any_pricer(system, "calibrated"), "flashinfer_trtllm", minimax, Layout(tp=tp))
    c = _fp8(p)
    assert c.width_split == 1 and c.inter == 1536 / tp
    assert c.experts_on_rank == 256  # a rank of MoE TP t EP1 holds a slice of every expert
    tokens = np.array(list(TP_TABLE_MS[system, tp]), dtype=float)
    got_ms = c(tokens * 8) * 1e3  # the rank takes every token's top-8 assignments
    np.testing.assert_allclose(got_ms, list(TP_TABLE_MS[system, tp].values()), atol=1e-4)


def test_expert_tp_at_decode_is_slower_than_the_ep_reading(minimax):
    # at 512 tokens the B300 TP4 row is 1.22x the EP4 row (0.2331 / 0.1913 ms): pricing TP4 as EP4 was too fast
    pr = load_any_pricer("b300", "calibrated")
    tp4 = with_moe_backend(pr, "flashinfer_trtllm", minimax, Layout(tp=4))
    ep4 = with_moe_backend(pr, "flashinfer_trtllm", minimax, Layout(tp=4, ep=4))
    assert _fp8(tp4)(np.array([512.0 * 8]))[0] / _fp8(ep4)(np.array([512.0 * 8 / 4]))[0] == pytest.approx(
        0.2331 / 0.1913, rel=2e-3)


def test_chips_without_vllm_tables_keep_the_calibrated_pricer(minimax):
    h200 = load_any_pricer("h200", "calibrated")
    assert with_moe_backend(h200, "flashinfer_trtllm", minimax, Layout(tp=2, ep=2)) is h200


def _row(rid: str, system: str, version: str, measured: str) -> dict:
    return {"id": rid, "silicon_data_source": f"db-dump/2026-04-27; measured={measured}T00:00:00.000Z",
            "backend": "vllm", "backend_version": version, "model_path": "MiniMaxAI/MiniMax-M2.5", "system": system,
            "precision": "fp8", "mode": "agg", "isl": 1024, "osl": 1024, "gemm_quant_mode": "fp8",
            "moe_quant_mode": "fp8", "batch_size": 8, "tp_size": 2.0, "pp_size": 1.0, "attention_dp_size": 1.0,
            "moe_tp_size": 2.0, "moe_ep_size": 1.0, "silicon_ttft_ms": 90.0, "silicon_tpot_ms": 10.0}


def test_v019_fp8_rows_run_flashinfer_v017_rows_do_not():
    rows = [_row("a_agg_1024x1024_c8_cfg1", "b200_sxm", "0.19.0", "2026-04-22"),
            _row("b_agg_1024x1024_c8_cfg2", "b300_sxm", "0.19.0", "2026-04-17"),
            _row("c_agg_1024x1024_c8_cfg3", "b200_sxm", "0.17.0", "2026-03-11")]
    b200, b300, old = load_aiconfigurator(pd.DataFrame(rows))[0]
    for p in (b200, b300):
        assert p.deployment.decode.moe_backend == "flashinfer_trtllm"
        assert "MoE backend flashinfer_trtllm" in "; ".join(p.notes)
    assert old.deployment.decode.moe_backend is None


def test_shipped_sweeps_name_it_on_the_v019_scripts_only():
    named = {(s.system, s.version, s.precision, s.measured) for s in load_sweeps()
             if s.moe_backend == "flashinfer_trtllm"}
    assert named == {("b200", "0.19.0", "fp8", "2026-04-03"), ("b200", "0.19.0", "fp8", "2026-04-08"),
                     ("b200", "0.19.0", "fp8", "2026-04-22"), ("b300", "0.19.0", "fp8", "2026-04-17"),
                     ("b300", "0.19.0", "fp8", "2026-04-21"),
                     # NVFP4 (round 24): the v0.19.0 scripts set no MoE variable; vLLM's NVFP4 oracle picks it
                     ("b200", "0.19.0", "fp4", "2026-04-08"), ("b200", "0.19.0", "fp4", "2026-04-22"),
                     ("b300", "0.19.0", "fp4", "2026-04-17"), ("b300", "0.19.0", "fp4", "2026-04-21")}


# NVFP4 experts (round 24): the same tables, kernel_source
# vllm_compressedtensorsw4a4nvfp4moe_flashinfer_trtllm_trtllmnvfp4expertsmonolithic, dtype nvfp4, balanced, ms per
# layer at MiniMax-M2.5's shape (by hand from the tables):
#     tokens            4       64      1024          (512)
#     B200  EP2     0.0353  0.1627   0.1829
#     B300  EP2     0.0334  0.1647   0.1848
#     B300  TP4     0.0242  0.0992             0.1324
NVFP4_MS = {("b200", 2, 1): {4: 0.0353, 64: 0.1627, 1024: 0.1829},
            ("b300", 2, 1): {4: 0.0334, 64: 0.1647, 1024: 0.1848},
            ("b300", 1, 4): {4: 0.0242, 64: 0.0992, 512: 0.1324}}


@pytest.mark.parametrize("system, ep, moe_tp", sorted(NVFP4_MS))
def test_nvfp4_experts_read_the_measured_nvfp4_curve(minimax, system, ep, moe_tp):
    lay = Layout(tp=max(ep, moe_tp), ep=ep)
    assert lay.moe_tp == moe_tp
    p = with_moe_backend(load_any_pricer(system, "calibrated"), "flashinfer_trtllm", minimax, lay)
    c = p.curves()["fp4", ""]
    assert "vllm 0.24.0" in c.label and c.inter == 1536 / moe_tp and c.width_split == 1
    tokens = np.array(list(NVFP4_MS[system, ep, moe_tp]), dtype=float)
    np.testing.assert_allclose(c(tokens * 8 / ep) * 1e3, list(NVFP4_MS[system, ep, moe_tp].values()), atol=1e-4)


def test_each_format_prices_its_own_ops(minimax):
    # one backend, two kernels: an FP8 deployment's experts cost the FP8 curve, an NVFP4 one's the NVFP4 curve
    from jalapeno.cost.step import Batch, step_cost
    from jalapeno.specs.formats import get_precision

    from dataclasses import replace

    pr = load_any_pricer("b300", "calibrated")
    pr = pr.with_efficiency(replace(pr.efficiency, moe_load_skew=0.0))  # the mean rank's load, no binomial tail
    lay = Layout(tp=2, ep=2)
    p = with_moe_backend(pr, "flashinfer_trtllm", minimax, lay)
    for prec, fmt in (("fp8", "fp8"), ("fp4", "fp4")):
        sc = step_cost(minimax, p, lay, get_precision(prec), Batch.make(decode_seqs=np.array([64.0]), decode_ctx=1024.0))
        got = sc.times.time_s[sc.ops.name.index("moe.experts"), 0] / 62  # every MiniMax layer is MoE
        want = p.curves()[fmt, ""].routed(np.array([64.0 * 8 / 2]), np.array([128.0 * (1 - (1 - 8 / 256) ** 64)]))
        assert got == pytest.approx(float(want[0]), rel=1e-6)


def test_the_rows_release_measures_the_same_nvfp4_kernel_within_a_few_percent():
    # aiconfigurator's vLLM 0.19.0 B200 table (the MiniMax NVFP4 rows' release) names the kernel
    # vllm_flashinfer_trtllm_moe_fp4; at MiniMax's shape its median latency over the table's token counts is within
    # 2-8% of the 0.24.0 curve at the layouts the rows serve (TP1-TP8, EP1-EP8)
    from pathlib import Path

    aiconfigurator_core = pytest.importorskip("aiconfigurator_core")
    base = Path(aiconfigurator_core.__file__).parent / "systems" / "data" / "b200_sxm" / "moe" / "vllm"
    t = {}
    for v in ("0.19.0", "0.24.0"):
        d = pd.read_parquet(base / v / "moe_perf.parquet")
        d = d[(d.moe_dtype == "nvfp4") & (d.hidden_size == 3072) & (d.inter_size == 1536) & (d.distribution == "balanced")]
        t[v] = d.groupby(["moe_tp_size", "moe_ep_size", "num_tokens"]).latency.min()
    assert set(pd.read_parquet(base / "0.19.0" / "moe_perf.parquet").query("moe_dtype == 'nvfp4'").kernel_source) == {
        "vllm_flashinfer_trtllm_moe_fp4"}
    ratio = (t["0.19.0"] / t["0.24.0"]).dropna().groupby(level=[0, 1]).median()
    for lay in [(1, 1), (1, 2), (1, 4), (1, 8), (2, 1), (4, 1), (8, 1)]:
        assert 0.98 < ratio[lay] < 1.08, lay


def test_a_misspelt_backend_is_refused_naming_the_field():
    with pytest.raises(SpecError, match="moe_backend.*unknown MoE backend 'flashinfer-trtllm'.*flashinfer_trtllm"):
        Pool(Layout(tp=2, ep=2), 1, "flashinfer-trtllm")
