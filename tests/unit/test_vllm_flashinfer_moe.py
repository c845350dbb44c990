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
from jalapeno.cost.pool_backends import with_moe_backend
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


def test_shipped_sweeps_name_it_where_the_scripts_set_no_moe_variable():
    named = {(s.model, s.system, s.version, s.precision, s.measured) for s in load_sweeps()
             if s.moe_backend == "flashinfer_trtllm"}
    m, k = "minimax-m2.5", "kimi-k2.5"
    assert named == {(m, "b200", "0.19.0", "fp8", "2026-04-03"), (m, "b200", "0.19.0", "fp8", "2026-04-08"),
                     (m, "b200", "0.19.0", "fp8", "2026-04-22"), (m, "b300", "0.19.0", "fp8", "2026-04-17"),
                     (m, "b300", "0.19.0", "fp8", "2026-04-21"),
                     # NVFP4 (round 24): the v0.19.0 scripts set no MoE variable; vLLM's NVFP4 oracle picks it
                     (m, "b200", "0.19.0", "fp4", "2026-04-08"), (m, "b200", "0.19.0", "fp4", "2026-04-22"),
                     (m, "b300", "0.19.0", "fp4", "2026-04-17"), (m, "b300", "0.19.0", "fp4", "2026-04-21"),
                     # Kimi K2.5 NVFP4 (round 24, kimifi24): kimik2.5_fp4_b200.sh @a58dedd5a, @79a42e20a, @6c3acebfa
                     # (v0.17.0, whose NVFP4 oracle already tries FLASHINFER_TRTLLM first) and kimik2.5_fp4_b300.sh
                     # @f34a83b25 (v0.19.0) set none either
                     (k, "b200", "0.17.0", "fp4", "2026-03-11"), (k, "b200", "0.17.0", "fp4", "2026-03-27"),
                     (k, "b200", "0.17.0", "fp4", "2026-04-20"), (k, "b300", "0.19.0", "fp4", "2026-04-20")}


def _kimi_row(rid: str, system: str, version: str, stamp: str, tp: float, ep: float, tpot_ms: float) -> dict:
    # the fields of aiconfigurator-core 0.12.0's silicon_sample.csv Kimi K2.5 NVFP4 vLLM rows (e.g.
    # 2026_03_25_kimi_k2_5_b200_sxm_vllm_fp4_agg_1024x1024_c8_tp4_0_ep4_0_567)
    return {"id": rid, "silicon_data_source": stamp, "backend": "vllm", "backend_version": version,
            "model_path": "moonshotai/Kimi-K2.5", "system": system, "precision": "fp4", "mode": "agg", "isl": 1024,
            "osl": 1024, "gemm_quant_mode": "nvfp4", "moe_quant_mode": "nvfp4", "batch_size": 8.0, "tp_size": tp,
            "pp_size": 1.0, "attention_dp_size": 1.0, "moe_tp_size": tp / ep, "moe_ep_size": ep,
            "silicon_ttft_ms": 18.0 * tpot_ms, "silicon_tpot_ms": tpot_ms}  # distinct runs: no repeat merge


def test_kimi_nvfp4_rows_of_identified_scripts_run_flashinfer_the_unidentified_do_not():
    rows = [_kimi_row("a_agg_1024x1024_c8_tp4_0_ep4_0_1", "b200_sxm", "0.17.0",
                      "source_file=2026-03-25.csv; measured=2026-03-11T16:59:40Z; image=vllm/vllm-openai:v0.17.0", 4, 4, 10.6),
            _kimi_row("b_agg_1024x1024_c8_cfg2", "b200_sxm", "0.17.0",
                      "db-dump/2026-04-27; measured=2026-04-20T00:00:00.000Z; vllm/vllm-openai:v0.17.0", 4, 1, 9.9),
            _kimi_row("c_agg_1024x1024_c8_cfg3", "b300_sxm", "0.19.0",
                      "db-dump/2026-04-27; measured=2026-04-20T00:00:00.000Z; vllm/vllm-openai:v0.19.0-cu130", 4, 1, 9.1),
            # PR run of 2026-04-03 whose script is not in the InferenceX history: no sweep entry
            _kimi_row("d_agg_1024x1024_c8_tp4_0_ep4_0_4", "b300_sxm", "0.17.0",
                      "source_file=2026-03-25.csv; measured=2026-04-03T16:53:21Z; wip=True", 4, 4, 9.4)]
    b200_862, b200_1047, b300_1100, b300_pr = load_aiconfigurator(pd.DataFrame(rows))[0]
    for p in (b200_862, b200_1047, b300_1100):
        assert p.deployment.decode.moe_backend == "flashinfer_trtllm"
        assert "MoE backend flashinfer_trtllm" in "; ".join(p.notes)
    assert b300_pr.deployment.decode.moe_backend is None
    # only @6c3acebfa (PR #1047) passes --kv-cache-dtype fp8 and --max-num-batched-tokens $((ISL * 2)); no entry
    # names --gpu-memory-utilization 0.90 (the default memory fraction already stands for it)
    assert b200_1047.deployment.precision.kv_cache.name == "fp8" and b200_1047.deployment.max_tokens_per_step == 2048
    assert b200_862.deployment.max_tokens_per_step is None
    assert {p.deployment.memory_fraction for p in (b200_862, b200_1047, b300_1100)} == {None}


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


# MiniMax-M2.5 at MoE TP8 on B200: the table measures the NVFP4 kernel at TP8 EP1 but the FP8 one only at
# EP8 (ms per layer, balanced, vllm 0.24.0 moe_perf):
#     tokens              4       64      1024
#     NVFP4 TP8 EP1   0.0213  0.0705   0.1166
#     FP8   TP1 EP8   0.0353  0.1032   0.1697
# The FP8 experts keep the EP8 reading they had before the NVFP4 curves shipped (each format looks for its own
# expert-TP row, then its own EP row), not the calibrated set.
TP8_MS = {"fp4": (1, {4: 0.0213, 64: 0.0705, 1024: 0.1166}), "fp8": (8, {4: 0.0353, 64: 0.1032, 1024: 0.1697})}


@pytest.mark.parametrize("fmt", sorted(TP8_MS))
def test_expert_tp_falls_back_to_the_ep_row_format_by_format(minimax, fmt):
    p = with_moe_backend(load_any_pricer("b200", "calibrated"), "flashinfer_trtllm", minimax, Layout(tp=8))
    split, want = TP8_MS[fmt]
    c = p.curves()[fmt, ""]
    assert c.width_split == split and c.inter == 1536 / 8 and c.experts_on_rank == 256 / split
    tokens = np.array(list(want), dtype=float)
    np.testing.assert_allclose(c(tokens * 8 / split) * 1e3, list(want.values()), atol=1e-4)


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


# Kimi K2.5's routed experts (hidden 7168, intermediate 2048, 384 experts, top-8) in the same 0.24.0 tables, NVFP4,
# balanced, MoE EP1 (the TP4 / TP8 layouts its vLLM runs use), ms per layer (by hand from the tables):
#     tokens            4       16       64
#     B200  TP4     0.0510  0.1401   0.3605
#     B200  TP8     0.0341  0.0919   0.2189
#     B300  TP4     0.0509  0.1423   0.3685
#     B300  TP8     0.0319  0.0910   0.2176
# Cross-check by hand (a physical bound): at 64 tokens on TP4 the 512 assignments reach 384 x (1 - (1 - 8/384)^64) =
# 284 experts, each rank reading 3 x 7168 x 512 x 0.5625 B (NVFP4, E4M3 scale per 16) = 6.19 MB of each: 1.76 GB in
# 0.3605 ms, 4.9 TB/s, under B200's 8 TB/s.
KIMI_TP_MS = {("b200", 4): {4: 0.0510, 16: 0.1401, 64: 0.3605}, ("b200", 8): {4: 0.0341, 16: 0.0919, 64: 0.2189},
              ("b300", 4): {4: 0.0509, 16: 0.1423, 64: 0.3685}, ("b300", 8): {4: 0.0319, 16: 0.0910, 64: 0.2176}}


@pytest.mark.parametrize("system, tp", sorted(KIMI_TP_MS))
def test_kimi_expert_tp_reads_the_measured_nvfp4_curve(system, tp):
    kimi = load_model("kimi-k2.5")
    p = with_moe_backend(load_any_pricer(system, "calibrated"), "flashinfer_trtllm", kimi, Layout(tp=tp))
    c = p.curves()["fp4", ""]
    assert "vllm 0.24.0" in c.label and c.inter == 2048 / tp and c.experts_on_rank == 384 and c.width_split == 1
    tokens = np.array(list(KIMI_TP_MS[system, tp]), dtype=float)
    np.testing.assert_allclose(c(tokens * 8) * 1e3, list(KIMI_TP_MS[system, tp].values()), atol=1e-4)


# aiconfigurator's vLLM 0.19.0 B200 table (the release of the MiniMax NVFP4 rows and of the B300 Kimi rows; the B200
# Kimi rows' 0.17.0 has no table) names the kernel vllm_flashinfer_trtllm_moe_fp4; at each model's shape its median
# latency over the table's token counts is within a few percent of the 0.24.0 curve at the layouts the rows serve
# (moe_tp, moe_ep): MiniMax-M2.5 (3072 x 1536, 256 experts) 2-8% at TP1-TP8 / EP1-EP8, Kimi K2.5 (7168 x 2048, 384
# experts) 3% at MoE TP4, TP8 and EP4 (as the PR #862 / #926 fields say)
RELEASE_CROSS_CHECK = [((3072, 1536, 256), [(1, 1), (1, 2), (1, 4), (1, 8), (2, 1), (4, 1), (8, 1)], (0.98, 1.08)),
                       ((7168, 2048, 384), [(4, 1), (8, 1), (1, 4)], (0.97, 1.03))]


@pytest.mark.parametrize("shape, layouts, band", RELEASE_CROSS_CHECK)
def test_the_rows_release_measures_the_same_nvfp4_kernel_within_a_few_percent(shape, layouts, band):
    from pathlib import Path

    aiconfigurator_core = pytest.importorskip("aiconfigurator_core")
    base = Path(aiconfigurator_core.__file__).parent / "systems" / "data" / "b200_sxm" / "moe" / "vllm"
    hidden, inter, experts = shape
    t = {}
    for v in ("0.19.0", "0.24.0"):
        d = pd.read_parquet(base / v / "moe_perf.parquet")
        if v == "0.19.0":
            assert set(d[d.moe_dtype == "nvfp4"].kernel_source) == {"vllm_flashinfer_trtllm_moe_fp4"}
        d = d[(d.moe_dtype == "nvfp4") & (d.hidden_size == hidden) & (d.inter_size == inter)
              & (d.num_experts == experts) & (d.distribution == "balanced")]
        t[v] = d.groupby(["moe_tp_size", "moe_ep_size", "num_tokens"]).latency.min()
    ratio = (t["0.19.0"] / t["0.24.0"]).dropna().groupby(level=[0, 1]).median()
    for lay in layouts:
        assert band[0] < ratio[lay] < band[1], lay


def test_a_misspelt_backend_is_refused_naming_the_field():
    with pytest.raises(SpecError, match="moe_backend.*unknown MoE backend 'flashinfer-trtllm'.*flashinfer_trtllm"):
        Pool(Layout(tp=2, ep=2), 1, "flashinfer-trtllm")
