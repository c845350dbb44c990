"""Physical bounds and monotonicity of the step cost (DESIGN.md §5 rule 2, STYLE.md §7).

- no op faster than its FLOPs at the peak of its format, nor than its bytes at HBM bandwidth;
- no collective faster than its bytes over the link bandwidth;
- more HBM bandwidth never slower; more sequences or longer context never a shorter step;
- memory fit monotone in the number of resident sequences;
- at a batch that touches every expert, routed-expert bytes read = routed-expert bytes resident.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jalapeno.cost.collectives import collective_time
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.memory_fit import memory_fit, weight_elems_per_chip
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_efficiency, load_model, load_system
from jalapeno.specs.formats import get_precision

# (model, system, layout, precision): MLA, MLA+DSA, GQA with sinks/sliding, dense with PP,
# attention DP + EP, a hierarchical torus system and a chip without FP4.
DEPLOYMENTS = [
    ("deepseek-r1", "gb200-nvl72", Layout(tp=8, dp=8, ep=64), "fp4"),
    ("deepseek-r1", "h200", Layout(tp=8), "fp8"),
    ("deepseek-v3.2", "b200", Layout(tp=8, ep=8), "fp8"),
    ("kimi-k2.5", "gb300-nvl72", Layout(tp=1, dp=16, ep=16), "int4"),
    ("gpt-oss-120b", "h100", Layout(tp=2), "mxfp4"),
    ("llama-3.3-70b", "mi300x", Layout(tp=4, pp=2), "bf16"),
    ("qwen3-235b-a22b", "jalapeno", Layout(tp=4, dp=4, ep=16), "fp8"),
    ("deepseek-r1", "jalapeno", Layout(tp=8, dp=32, ep=256), "fp4"),
]

PROPS = settings(max_examples=25, deadline=None)

deployments = st.sampled_from(DEPLOYMENTS)
seqs = st.integers(min_value=1, max_value=4096)
ctxs = st.integers(min_value=1, max_value=131_072)
prefill = st.integers(min_value=0, max_value=16_384)


def _cost(dep, batch, system=None):
    model, sys_name, layout, prec = dep
    m = load_model(model)
    # step_cost refuses a decode context past the model's (api52): the strategies reach 131,072 tokens, past
    # Qwen3-235B-A22B's 40,960, so each model takes them up to its own context
    batch = dataclasses.replace(batch, decode_ctx=np.minimum(batch.decode_ctx, m.max_context))
    return step_cost(m, system or load_pricer(sys_name), layout, get_precision(prec), batch)


# ---- roofline bounds per op ----------------------------------------------------------------

@PROPS
@given(dep=deployments, b=seqs, ctx=ctxs, p=prefill, pctx=st.integers(0, 32_768))
def test_no_op_faster_than_its_rooflines(dep, b, ctx, p, pctx):
    system = load_pricer(dep[1])
    chip = system.system.chip
    sc = _cost(dep, Batch.make(decode_seqs=b, decode_ctx=ctx, prefill_tokens=p, prefill_ctx=pctx))
    t = sc.times.time_s[:, 0]
    for j, fmt in enumerate(sc.ops.fmt):
        flop_floor = sc.ops.flop[j, 0] / chip.peak(fmt)
        byte_floor = sc.ops.bytes[j, 0] / chip.hbm_bandwidth_bytes_per_s
        assert t[j] >= flop_floor * (1 - 1e-12), (sc.ops.name[j], t[j], flop_floor)
        assert t[j] >= byte_floor * (1 - 1e-12), (sc.ops.name[j], t[j], byte_floor)
    # the whole step is at least its total FLOPs at the fastest format and its bytes at W
    fastest = max(chip.peak(f) for f in chip.formats)
    step = float(sc.step_time_s[0])
    assert step >= sc.ops.flop[:, 0].sum() / fastest
    assert step >= sc.ops.bytes[:, 0].sum() / chip.hbm_bandwidth_bytes_per_s


# ---- collective bound --------------------------------------------------------------------

SYSTEMS = ["h100", "gb200-nvl72", "mi300x", "jalapeno", "vera-rubin-nvl72"]
GROUPS = [2, 3, 4, 8, 16, 64, 72, 128, 256, 1024, 2048]


def _link_floor_bw(system, group: int) -> float:
    """Fastest per-chip bandwidth a group of ``group`` chips can use: its own level, plus the
    level below it when the group spans several inner domains (they run concurrently)."""
    outer = system.level_for_group(group)
    i = system.levels.index(outer)
    bw = outer.bandwidth_bytes_per_s
    if i > 0 and system.levels[i - 1].chips > 1:
        bw += system.levels[i - 1].bandwidth_bytes_per_s
    return bw


@settings(max_examples=40, deadline=None)
@given(sys_name=st.sampled_from(SYSTEMS), group=st.sampled_from(GROUPS),
       kind=st.sampled_from(["all_reduce", "all_gather", "all_to_all"]),
       msg=st.floats(min_value=1.0, max_value=1e10))
def test_no_collective_faster_than_link_bandwidth(sys_name, group, kind, msg):
    system = load_system(sys_name)
    if group > system.max_chips:
        return
    t = float(collective_time(kind, group, np.array([msg]), system, load_efficiency(sys_name)).time_s[0])
    floor = msg * (group - 1) / group / _link_floor_bw(system, group)
    assert t >= floor * (1 - 1e-12), (sys_name, group, kind, msg, t, floor)


@pytest.mark.parametrize("sys_name", SYSTEMS)
@pytest.mark.parametrize("kind", ["all_reduce", "all_gather", "all_to_all"])
def test_collective_bound_on_a_grid(sys_name, kind):
    system = load_system(sys_name)
    msgs = np.logspace(0, 10, 41)
    for g in GROUPS:
        if g > system.max_chips:
            continue
        t = collective_time(kind, g, msgs, system, load_efficiency(sys_name)).time_s
        floor = msgs * (g - 1) / g / _link_floor_bw(system, g)
        assert np.all(t >= floor * (1 - 1e-12)), (sys_name, kind, g)


TORUS_ONLY = '''
schema_version = 1
name = "torus-box"
description = "a TPU-like system whose only level is a 3-D torus"

[chip]
name = "T1"
peak_dense_tflops.bf16 = { value = 1000, source = "test" }
hbm_capacity_gb = { value = 100, source = "test" }
hbm_bandwidth_tb_per_s = { value = 4.0, source = "test" }
hbm_stacks = { value = 4, source = "test" }
tdp_w = { value = 700, source = "test" }

[[levels]]
name = "torus"
chips = 64
scope = "scale_up"
topology = "torus3d"
torus_dims = [4, 4, 4]
links_per_chip = 6
bandwidth_gb_per_s = { value = 100, source = "test: total injection bandwidth over the 6 links" }
latency_us = { value = 1.0, source = "test" }

[power]
allin_kw_per_chip = { value = 1.5, source = "test" }

[cost]
usd_per_chip_hour = { value = 1.0, source = "test" }
'''


def test_torus_all_to_all_not_faster_than_injection_bandwidth(tmp_path):
    p = tmp_path / "torus-box.toml"
    p.write_text(TORUS_ONLY)
    system = load_system(str(p))
    msgs = np.logspace(3, 10, 15)
    for g in (2, 3, 4, 8, 16, 64):
        t = collective_time("all_to_all", g, msgs, system, load_efficiency(str(p))).time_s
        # everything but its own share leaves the chip through its links (B = 100 GB/s total)
        floor = msgs * (g - 1) / g / 100e9
        assert np.all(t >= floor * (1 - 1e-12)), (g, t / floor)


# ---- monotonicity ------------------------------------------------------------------------

@PROPS
@given(dep=deployments, b=seqs, ctx=ctxs, factor=st.floats(min_value=1.0, max_value=4.0))
def test_more_hbm_bandwidth_never_slower(dep, b, ctx, factor):
    base = load_pricer(dep[1])
    chip = dataclasses.replace(base.system.chip,
                               hbm_bandwidth_bytes_per_s=base.system.chip.hbm_bandwidth_bytes_per_s * factor)
    faster = base.__class__(dataclasses.replace(base.system, chip=chip), base.efficiency)
    batch = Batch.make(decode_seqs=b, decode_ctx=ctx)
    t0 = float(_cost(dep, batch).step_time_s[0])
    t1 = float(_cost(dep, batch, system=faster).step_time_s[0])
    assert t1 <= t0 * (1 + 1e-12)


@PROPS
@given(dep=deployments, b=st.lists(seqs, min_size=2, max_size=6), ctx=ctxs, p=prefill)
def test_more_decode_sequences_never_shorter(dep, b, ctx, p):
    b = sorted(b)
    sc = _cost(dep, Batch.make(decode_seqs=b, decode_ctx=ctx, prefill_tokens=p))
    t = sc.step_time_s
    assert np.all(np.diff(t) >= -1e-12 * t[:-1]), (b, t)
    assert np.all(np.diff(sc.interval_s) >= -1e-12 * sc.interval_s[:-1])


@PROPS
@given(dep=deployments, b=seqs, ctx=st.lists(ctxs, min_size=2, max_size=6))
def test_longer_context_never_shorter(dep, b, ctx):
    ctx = sorted(ctx)
    sc = _cost(dep, Batch.make(decode_seqs=b, decode_ctx=ctx))
    t = sc.step_time_s
    assert np.all(np.diff(t) >= -1e-12 * t[:-1]), (ctx, t)


@PROPS
@given(dep=deployments, b=st.lists(st.integers(1, 200_000), min_size=2, max_size=8),
       ctx=st.integers(1, 131_072))
def test_memory_fit_monotone_in_sequences(dep, b, ctx):
    b = np.array(sorted(b), dtype=float)
    model, sys_name, layout, prec = dep
    fit = memory_fit(load_model(model), load_system(sys_name), layout, get_precision(prec),
                     b, np.full_like(b, ctx), b, load_efficiency(sys_name))
    fits = fit.fits.astype(int)
    # once a count does not fit, no larger count fits
    assert np.all(np.diff(fits) <= 0), (b, fits)
    # the same through the step cost
    sc = _cost(dep, Batch.make(decode_seqs=b, decode_ctx=ctx))
    assert np.all(np.diff(sc.feasible.astype(int)) <= 0)


# ---- consistency of routed-expert bytes at a huge batch --------------------------------------

MOE_DEPLOYMENTS = [
    ("deepseek-r1", "gb200-nvl72", Layout(tp=8, dp=8, ep=64), "fp4"),
    ("deepseek-r1", "gb200-nvl72", Layout(tp=8), "fp8"),
    ("deepseek-r1", "gb200-nvl72", Layout(tp=4, dp=2, ep=8, pp=2), "fp8"),
    ("kimi-k2.5", "gb300-nvl72", Layout(tp=1, dp=16, ep=16), "int4"),
    ("gpt-oss-120b", "h100", Layout(tp=2), "mxfp4"),
    ("gpt-oss-120b", "b200", Layout(tp=1, dp=8, ep=8), "mxfp4"),
    ("qwen3-235b-a22b", "jalapeno", Layout(tp=4, dp=4, ep=16), "fp8"),
]


@pytest.mark.parametrize("dep", MOE_DEPLOYMENTS, ids=lambda d: f"{d[0]}-{d[2].label}-{d[3]}")
def test_huge_batch_reads_every_resident_expert(dep):
    model, sys_name, layout, prec = dep
    m, p = load_model(model), get_precision(prec)
    sc = _cost(dep, Batch.make(decode_seqs=65_536, decode_ctx=16))
    j = sc.ops.name.index("moe.experts")
    read = float(sc.ops.weight_bytes[j, 0])
    resident = weight_elems_per_chip(m, layout)["routed_experts"] * p.weight_bytes("routed_experts")
    assert read == pytest.approx(resident, rel=0.01)
    # and never more than what is resident, at any batch
    sc2 = _cost(dep, Batch.make(decode_seqs=[1, 16, 256, 4096, 1_000_000], decode_ctx=16))
    assert np.all(sc2.ops.weight_bytes[j] <= resident * (1 + 1e-9))
