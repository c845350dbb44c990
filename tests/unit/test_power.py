"""Power from components, power under load and cost that follow a variant (specs/power.py,
analysis/power_cost.py). Expected values are worked by hand from the shipped specs (H200: 700 W,
4.8 TB/s HBM3E in 6 stacks, NVLink 450 GB/s per direction; Jalapeño: 700 W, 15.4 TB/s HBM4 in 6
stacks, 600 GB/s tray ports + 200 GB/s torus) and the mid power terms written out here."""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.analysis.power_cost import load_power_w_per_chip, point_utilisation
from jalapeno.specs.catalog import load_system
from jalapeno.specs.power import POWER_TERMS, chip_power, load_power_w

IDLE, HBM3, HBM4, BG, SERDES, PUE = 0.12, 3.9, 2.8, 3.0, 5.0, 1.25


def test_terms_are_the_ones_worked_here():
    t = POWER_TERMS
    assert (t["idle_fraction"].value, t["hbm3_pj_per_bit"].value, t["hbm4_pj_per_bit"].value,
            t["hbm_stack_background_w"].value, t["serdes_pj_per_bit"].value, t["pue"].value) == \
        (IDLE, HBM3, HBM4, BG, SERDES, PUE)
    for name, x in t.items():
        assert x.low <= x.value <= x.high and len(x.source) > 20, name


def test_h200_components_by_hand():
    cp = chip_power(load_system("h200"))
    hbm = 4.8e12 * 8 * HBM3 * 1e-12  # 149.76 W (0.8 TB/s per stack: HBM3E)
    link = 2 * 450e9 * 8 * SERDES * 1e-12  # 36 W; the 50 GB/s NIC is scale-out (in the all-in figure)
    assert cp.idle_w == pytest.approx(IDLE * 700)
    assert cp.hbm_background_w == pytest.approx(6 * BG)
    assert cp.hbm_w == pytest.approx(hbm)
    assert cp.link_w == pytest.approx(link)
    assert cp.compute_w == pytest.approx(700 - 84 - 18 - hbm - link)
    assert cp.tdp_w == pytest.approx(700)


def test_h200_memory_bound_decode_power_within_measurement():
    """Ma et al. (arXiv 2605.11999, 2026) measured 137-300 W for decode on a 700 W H200."""
    w = float(load_power_w(chip_power(load_system("h200")), u_compute=0.05, u_hbm=0.8))
    assert 137 <= w <= 300


def test_load_power_monotone_and_capped():
    """GB300: idle 168 + background 24 W; P(u, u) = 192 + u (250 + 1,208) reaches the 1,400 W TDP
    at u = 1,208/1,458 = 0.83, and stays there."""
    cp = chip_power(load_system("gb300-nvl72"))
    u = np.linspace(0, 1, 11)
    p = load_power_w(cp, u, u)
    assert np.all(np.diff(p) >= 0) and p[0] == pytest.approx(cp.idle_w + cp.hbm_background_w)
    assert p[8] == pytest.approx(192 + 0.8 * (8e12 * 8 * HBM3 * 1e-12 + 1400 - 192))
    assert p[9] == p[10] == pytest.approx(1400)
    assert float(load_power_w(cp, 2.0, 2.0, 2.0)) == pytest.approx(cp.tdp_w)  # clipped to TDP


def test_compute_bound_work_draws_the_rated_power():
    """The TDP is reached by compute-bound work (memory-bound decode leaves it untouched and no cap
    triggers: Ma et al., arXiv 2605.11999): H200 at full compute, HBM and links idle, draws 700 W;
    memory-bound decode (u_c 0.05, u_m 0.8) 84 + 18 + 0.8 x 149.76 + 0.05 x (700 - 84 - 18) = 251.7 W.
    Jalapeno: at full compute 700 W, where the remainder rule (compute = 189 W: 0.056 pJ per FP8
    FLOP, against H200's 412 W / 1,979 TFLOP/s = 0.21) gave 84 + 18 + 189 = 291 W."""
    h200, jal = chip_power(load_system("h200")), chip_power(load_system("jalapeno"))
    assert float(load_power_w(h200, 1.0, 0.0)) == pytest.approx(700)
    assert float(load_power_w(h200, 0.05, 0.8)) == pytest.approx(84 + 18 + 0.8 * 149.76 + 0.05 * 598)
    assert h200.compute_bound_w == pytest.approx(700 - 84 - 18)
    assert float(load_power_w(jal, 1.0, 0.0)) == pytest.approx(700)
    assert jal.compute_w == pytest.approx(189.04)  # the TDP split variants follow is unchanged


def test_utilisation_counts_each_format_at_its_peak_and_the_links():
    """DeepSeek-R1 FP8 decode on H200 (DP8 EP8, 64 sequences per rank): the BF16 attention FLOPs
    count at the 989 TFLOP/s BF16 peak, the FP8 ones at 1,979, and the step's all-to-all bytes
    against NVLink's 450 GB/s per direction."""
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.cost.step import Batch, step_cost
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    m, pr, wl = load_model("deepseek-r1"), load_pricer("h200"), get_workload("8k1k")
    lay, prec = Layout(tp=1, dp=8, ep=8), get_precision("fp8")
    dep = Deployment(prec, Pool(lay))
    b, tau = np.array([512.0]), np.array([0.1])
    u_c, u_m, u_l = point_utilisation(m, pr, dep, wl, b, tau, np.array([1000.0]))
    isl, osl = wl.mean_isl, wl.mean_osl
    # the prompts spread one per attention-DP rank (8): the mean chip's share, as the utilisation counts it
    sc = step_cost(m, pr, lay, prec, Batch.make(decode_seqs=b, decode_ctx=isl + osl / 2,
                                                prefill_tokens=b * isl / (osl - 1), prefill_seqs=8))
    fl = {f: sum(float(x[0]) for x, g in zip(sc.ops.flop, sc.ops.fmt) if g == f) for f in set(sc.ops.fmt)}
    assert set(fl) <= {"fp8", "bf16"} and fl.get("bf16", 0) > 0
    assert u_c[0] == pytest.approx((fl.get("fp8", 0) / 1979e12 + fl["bf16"] / 989e12) / 0.1, rel=1e-3)
    coll = sum(float(x[0]) * c for x, c in zip(sc.collectives.bytes, sc.collectives.calls))
    assert coll > 0 and u_l[0] == pytest.approx(min(1.0, coll / (0.1 * 450e9)), rel=1e-6)
    assert 0 < u_m[0] <= 1


def test_eight_stacks_cost_their_background_power():
    base, v = load_system("jalapeno"), load_system("jalapeno", (("chip.hbm_stacks", 8),))
    d = 2 * BG  # same bandwidth, two more stacks idling
    assert v.chip.tdp_w == pytest.approx(700 + d)
    assert v.chip.sustained_w == pytest.approx(550 * (700 + d) / 700)
    assert v.allin_power_w_per_chip == pytest.approx(base.allin_power_w_per_chip + d * PUE)
    assert v.usd_per_chip_hour == pytest.approx(base.usd_per_chip_hour + d * PUE / 1000 * 0.08)
    assert "specs/power.py" in v.sources["chip.tdp_w"]


def test_more_bandwidth_and_compute_cost_watts():
    v = load_system("h200", (("chip.hbm_bandwidth_tb_per_s", 6.0),))  # 1.0 TB/s per stack: still HBM3E
    assert v.chip.tdp_w == pytest.approx(700 + 1.2e12 * 8 * HBM3 * 1e-12)
    hbm_j = 15.4e12 * 8 * HBM4 * 1e-12
    compute = 700 - IDLE * 700 - 6 * BG - hbm_j - 2 * 800e9 * 8 * SERDES * 1e-12  # 189.04 W
    v = load_system("jalapeno", (("chip.peak_dense_tflops.fp8", 6800),))
    assert v.chip.tdp_w == pytest.approx(700 + compute)  # same energy per FLOP, twice the FLOP/s
    v = load_system("jalapeno", (("levels.global.bandwidth_gb_per_s", 400),))
    assert v.chip.tdp_w == pytest.approx(700 + 2 * 200e9 * 8 * SERDES * 1e-12)


def test_stated_values_are_kept_and_capacity_costs_capex():
    v = load_system("jalapeno", (("chip.hbm_stacks", 8), ("chip.tdp_w", 800)))
    assert v.chip.tdp_w == 800  # the variant says so
    v = load_system("jalapeno", (("chip.hbm_capacity_gib", 288),))
    d_gb = 72 * 2**30 / 1e9
    assert v.chip.tdp_w == 700
    assert v.usd_per_chip_hour == pytest.approx(1.43 + d_gb * 15.0 * 2.21 / 46_500)


def test_unchanged_and_efficiency_only_variants_keep_power():
    for over in ((), (("efficiency.kernel_launch_s", 1e-7),)):
        v = load_system("jalapeno", over)
        assert (v.chip.tdp_w, v.allin_power_w_per_chip, v.usd_per_chip_hour) == (700, 1150, 1.43)


def test_operating_point_power_grows_with_load():
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    m, pr, wl = load_model("deepseek-r1"), load_pricer("gb300-nvl72"), get_workload("8k1k")
    dep = Deployment(get_precision("fp8"), Pool(Layout(tp=1, dp=8, ep=8)))
    b = np.array([8.0, 512.0])
    tau = np.array([0.02, 0.06])
    tput = np.array([300.0, 9000.0])
    u_c, u_m, u_l = point_utilisation(m, pr, dep, wl, b, tau, tput)
    assert np.all((0 <= u_c) & (u_c <= 1) & (0 <= u_m) & (u_m <= 1) & (0 <= u_l) & (u_l <= 1))
    assert u_c[1] > u_c[0]
    w = load_power_w_per_chip(m, pr, dep, wl, b, tau, tput)
    assert w[0] < w[1] <= 1400
    dis = Deployment(get_precision("fp8"), Pool(Layout(tp=1, dp=8, ep=8)),
                     prefill=Pool(Layout(tp=4, ep=4), workers=2))  # 8 prefill + 8 decode chips
    u_c, u_m, u_l = point_utilisation(m, pr, dis, wl, b, tau, tput)
    assert np.all((0 <= u_c) & (u_c <= 1)) and np.all(u_m <= 0.5) and np.all(u_l <= 0.5)  # prefill: no streaming
