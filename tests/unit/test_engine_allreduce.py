"""The serving engine's own all-reduce priced from its measured table (cost/engine_allreduce.py).

Expected values are aiconfigurator-core 0.12.0's ``b200_sxm/comm/trtllm/1.3.0rc20/custom_allreduce_perf``
rows at 8 GPUs, read from the parquet (``message_size`` in BF16 elements, latency in ms):
131,072 el. -> 0.00793024 ms, 262,144 el. -> 0.0109443 ms, 524,288 el. -> 0.0177802 ms; 128 el. ->
0.00504 ms (the smallest measured) and 256 el. -> 0.004967 ms (faster: the floor below the smallest
size is 0.004967 ms, no message priced slower than a larger one). Between two rows the price is the
log-log interpolation: at the geometric mean of two sizes, the geometric mean of their times.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from jalapeno.cost.collectives import collective_time
from jalapeno.cost.engine_allreduce import measured_all_reduce
from jalapeno.cost.pricer import load_pricer
from jalapeno.errors import SpecError
from jalapeno.specs.efficiency import Efficiency

MB = 2 * 262_144  # bytes of 262,144 BF16 elements


def test_trtllm_stacks_take_the_measured_table_and_default_vllm_sglang_do_not():
    assert load_pricer("b200", stack="trtllm").efficiency.all_reduce_table == "trtllm"
    assert load_pricer("b200", stack="dynamo-trtllm").efficiency.all_reduce_table == "trtllm"
    assert load_pricer("b200", stack="default").efficiency.all_reduce_table == "none"
    # vLLM's and SGLang's tables were tried in round 26 and not taken (docs/collectives.md)
    assert load_pricer("b200", stack="vllm").efficiency.all_reduce_table == "none"
    assert load_pricer("b200", stack="sglang").efficiency.all_reduce_table == "none"


def test_vllm_fused_allreduce_rms_steps_take_trtllm_kernel_table():
    """vLLM's fuse_allreduce_rms runs FlashInfer's trtllm_allreduce_fusion (TensorRT-LLM's kernels) up to
    the pass's max size (cost/allreduce_rms.py: 1 MiB per rank on B200 at TP 8, 0.5 MiB on H200), vLLM's
    own all-reduce above it. aiconfigurator-core 0.12.0, 8 GPUs, bytes per rank -> ms, from
    data/collectives/engine_allreduce.toml: b200 trtllm/1.3.0rc20 262,144 -> 0.00793024, 524,288 ->
    0.0109443, 1,048,576 -> 0.0177802; b200 vllm/0.24.0 2,097,152 -> 0.0207171, 262,144 -> 0.0258032
    (above 1 MiB's 0.0171725: priced at it); h200 trtllm/1.3.0rc20 524,288 -> 0.0177795; h200
    vllm/0.24.0 1,048,576 -> 0.0140736."""
    def vllm_table(system: str, stack: str):
        p = load_pricer(system, stack=stack)
        return p.with_efficiency(replace(p.efficiency, all_reduce_table="vllm"))

    m = np.array([262_144.0, 524_288.0, 1_048_576.0, 2_097_152.0])
    fused = vllm_table("b200", "vllm+ar_rms").collective("all_reduce", 8, m)
    assert fused.time_s == pytest.approx([7.93024e-6, 10.9443e-6, 17.7802e-6, 20.7171e-6], rel=1e-5)
    assert list(fused.algorithm) == ["trtllm_measured"] * 3 + ["vllm_measured"]
    plain = vllm_table("b200", "vllm").collective("all_reduce", 8, m)
    assert plain.time_s == pytest.approx([17.1725e-6, 17.1725e-6, 17.1725e-6, 20.7171e-6], rel=1e-5)
    h = vllm_table("h200", "vllm+ar_rms").collective("all_reduce", 8, np.array([524_288.0, 1_048_576.0]))
    assert h.time_s == pytest.approx([17.7795e-6, 14.0736e-6], rel=1e-5)


def test_fusion_without_a_measured_table_keeps_the_link_model():
    p = load_pricer("b200", stack="vllm+ar_rms")
    assert p.efficiency.allreduce_rms_fusion and p.efficiency.all_reduce_table == "none"
    m = np.array([262_144.0, 1_048_576.0])
    r = p.collective("all_reduce", 8, m)
    assert r.time_s == pytest.approx(collective_time("all_reduce", 8, m, p.system, p.efficiency).time_s)


def test_measured_rows_and_log_log_interpolation():
    p = load_pricer("b200", stack="trtllm")
    m = np.array([MB, 2 * MB, math.sqrt(MB * 2 * MB), 100.0])
    r = p.collective("all_reduce", 8, m)
    expect = [10.9443e-6, 17.7802e-6, math.sqrt(10.9443e-6 * 17.7802e-6), 4.967e-6]
    assert r.time_s == pytest.approx(expect, rel=1e-4)
    assert set(r.algorithm) == {"trtllm_measured"}


def test_table_is_slower_than_the_ramp_at_mid_sizes_on_b200():
    # the point of the change (docs/gap_mtp_verify_step.md): 1.84 MB at TP8, the MTP3 verify step of
    # 128 rows x 7168 x 2 B. The TRT-LLM table brackets it between 1 MiB (17.8 us) and 2 MiB (30.4 us).
    m = np.array([128 * 7168 * 2.0])
    t_engine = load_pricer("b200", stack="trtllm").collective("all_reduce", 8, m).time_s[0]
    t_model = load_pricer("b200", stack="default").collective("all_reduce", 8, m).time_s[0]
    assert 17.78e-6 < t_engine < 30.38e-6
    assert t_model < t_engine


def test_fallbacks_to_the_link_hierarchy_model():
    p = load_pricer("b200", stack="trtllm")
    sys_, eff = p.system, p.efficiency
    big = np.array([4e9])  # beyond the largest measured size (1 GiB)
    base = collective_time("all_reduce", 8, big, sys_, eff)
    assert p.collective("all_reduce", 8, big).time_s == pytest.approx(base.time_s)
    # a group the table lacks: GB200's trays were measured at 2 and 4 GPUs only
    g = load_pricer("gb200-nvl72", stack="trtllm")
    m = np.array([MB])
    r8 = g.collective("all_reduce", 8, m)
    assert r8.algorithm[0] != "trtllm_measured"
    assert g.collective("all_reduce", 4, m).algorithm[0] == "trtllm_measured"
    # other collectives are untouched
    ag = p.collective("all_gather", 8, m)
    assert ag.time_s == pytest.approx(collective_time("all_gather", 8, m, sys_, eff).time_s)
    # spread placement: not what the table measured
    base = collective_time("all_reduce", 8, m, sys_, eff, "spread")
    assert measured_all_reduce(base, "trtllm", 8, m, sys_, "spread") is base


def test_variant_with_other_links_keeps_the_model():
    p = load_pricer("b200", stack="trtllm", overrides=(("levels.node.bandwidth_gb_per_s", 1800),))
    assert p.collective("all_reduce", 8, np.array([MB])).algorithm[0] != "trtllm_measured"
    same = load_pricer("b200", stack="trtllm", overrides=(("chip.hbm_stacks", 8),))
    assert same.collective("all_reduce", 8, np.array([MB])).algorithm[0] == "trtllm_measured"


def test_bad_engine_names_are_refused():
    # a misspelt engine is named as an unknown value (it was "must be a name, got 'vlm'": it is a name)
    with pytest.raises(SpecError, match=r"^efficiency.all_reduce_table: unknown all_reduce_table 'vlm'\. "
                                        r"Fix: use one of none, trtllm, sglang, vllm$"):
        Efficiency().with_overrides({"all_reduce_table": "vlm"})
    with pytest.raises(SpecError, match=r"^efficiency.all_reduce_table: must be a string, got 3\. Fix: use one of none"):
        Efficiency().with_overrides({"all_reduce_table": 3})
    p = load_pricer("b200")
    base = collective_time("all_reduce", 8, np.array([MB]), p.system, p.efficiency)
    with pytest.raises(SpecError, match="unknown engine 'nccl'"):
        measured_all_reduce(base, "nccl", 8, np.array([MB]), p.system)


def test_stack_file_key_is_checked():
    from jalapeno.specs.stacks import _stack

    with pytest.raises(SpecError, match=r"all_reduce_table.*use one of none, trtllm, sglang, vllm"):
        _stack({"name": "x", "label": "x", "source": "x", "all_reduce_table": "nccl"}, 0, {})
    s = _stack({"name": "x", "label": "x", "source": "x", "all_reduce_table": "sglang"}, 0, {})
    assert s.apply(replace(Efficiency())).all_reduce_table == "sglang"


def test_a_point_slower_than_a_larger_message_is_not_spread():
    """aiconfigurator-core 0.12.0 a100_sxm/comm/trtllm/1.0.0, 8 GPUs (BF16 elements -> ms): 262,144 ->
    0.0282522, 524,288 (1 MiB) -> 0.0832205, 1,048,576 (2 MiB) -> 0.0535859. The 1 MiB row is slower
    than 2 MiB: priced at 2 MiB's 53.59 us, and the sizes between 512 KiB and 1 MiB interpolate
    towards 53.59 us, not 83.2 us."""
    p = load_pricer("a100-sxm", stack="trtllm")
    kib512, mib = 2 * 262_144.0, 2 * 524_288.0
    r = p.collective("all_reduce", 8, np.array([mib, math.sqrt(kib512 * mib), kib512]))
    assert r.time_s == pytest.approx([53.5859e-6, math.sqrt(28.2522e-6 * 53.5859e-6), 28.2522e-6], rel=1e-4)
    assert set(r.algorithm) == {"trtllm_measured"}


def test_every_stored_curve_is_priced_non_decreasing():
    from jalapeno.cost.engine_allreduce import _curves

    for key, (lm, lt, _) in _curves().items():
        assert np.all(np.diff(lt) >= 0), key


def test_vllm_graph_table_on_b200():
    """aiconfigurator-core 0.12.0 b200_sxm/comm/vllm/0.24.0/custom_allreduce_perf, kernel_source
    vLLM_custom_graph, 8 GPUs (BF16 elements -> ms), read from the parquet: 65,536 (128 KiB) ->
    0.009361, 131,072 (256 KiB) -> 0.025803, 262,144 (512 KiB) -> 0.026149, 524,288 (1 MiB) -> 0.017172.
    The 256 and 512 KiB rows are slower than 1 MiB's: priced at its 17.17 us (no message slower than a
    larger one); 128 KiB as measured."""
    p = load_pricer("b200", overrides=(("efficiency.all_reduce_table", "vllm"),))
    assert p.efficiency.all_reduce_table == "vllm"
    r = p.collective("all_reduce", 8, np.array([131_072.0, 262_144.0, 524_288.0, 1_048_576.0]))
    assert r.time_s == pytest.approx([9.361e-6, 17.172e-6, 17.172e-6, 17.172e-6], rel=1e-3)
    assert set(r.algorithm) == {"vllm_measured"}
