"""Link-efficiency ramps of collectives: the functional form, the shipped data, the fit and its
held-out check against published nccl-tests figures (expected values are the published ones)."""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.collectives import collective_time, size_efficiency
from jalapeno.fit.collectives import load_nccl_tests, node_system
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY


def test_size_efficiency_half_point_and_plateau():
    # eta(h) = f / 2 by definition; eta(100 h) = f / (1 + 0.01^0.5) = f / 1.1
    assert size_efficiency(np.array([4e6]), 0.8, 4e6, 0.5)[0] == pytest.approx(0.4)
    assert size_efficiency(np.array([4e8]), 0.8, 4e6, 0.5)[0] == pytest.approx(0.8 / 1.1)
    assert size_efficiency(np.array([10.0]), 0.8, 0.0, 0.5)[0] == 0.8  # no ramp


def test_shipped_points_have_sources_and_both_splits():
    df = load_nccl_tests()
    assert df.source.str.len().min() > 20
    assert set(df.role) == {"fit", "check"}
    assert (df.time_s > 0).all() and (df.busbw > 0).all()
    # a published point is never in the fit split
    assert not df[(df.role == "fit")].id.str.contains("nccl2|nccl3|alaya|mooncake|sglang").any()


def _busbw(kind, g, m, link, nvls):
    t = collective_time(kind, g, np.array([float(m)]), node_system(link, nvls, g), DEFAULT_EFFICIENCY,
                        algorithms=("in_switch",) if nvls else ("ring", "direct")).time_s[0]
    return m * (2 if kind == "all_reduce" else 1) * (g - 1) / g / t


def test_h100_plateaus_match_nccl_tests():
    """NVIDIA/nccl-tests #212: ~370 GB/s busbw ring / all-gather, ~480 GB/s NVLS all-reduce on
    8x H100 at 1-8 GB (450 GB/s per direction). Held out from the fit."""
    assert _busbw("all_gather", 8, 4 * 2**30, 450e9, False) == pytest.approx(370e9, rel=0.10)
    assert _busbw("all_reduce", 8, 4 * 2**30, 450e9, True) == pytest.approx(480e9, rel=0.10)


def test_a100_and_h800_plateaus():
    """A100 NVLink 3 (300 GB/s per direction): 230-250 GB/s busbw (Alaya NeW blog); H800 NVLS
    (200 GB/s per direction): 215 GB/s (NVIDIA/nccl #1374)."""
    assert _busbw("all_reduce", 8, 8 * 2**30, 300e9, False) == pytest.approx(240e9, rel=0.10)
    assert _busbw("all_reduce", 8, 8 * 2**30, 200e9, True) == pytest.approx(215e9, rel=0.10)


def test_small_messages_cost_more_than_the_plateau_rate():
    """A 1 MiB ring all-gather moves its bytes at well under the plateau rate (nccl-tests curves:
    ~60 GB/s busbw at 1 MiB on H100, aiconfigurator NCCL table), not at 0.79 x 450."""
    assert _busbw("all_gather", 8, 2**20, 450e9, False) < 0.5 * 0.79 * 450e9


def test_fit_reproduces_the_shipped_defaults():
    pytest.importorskip("scipy")
    from jalapeno.fit.collectives import fit_custom_allreduce, fit_link_efficiency

    p, rep = fit_link_efficiency()
    c, _ = fit_custom_allreduce()
    e = DEFAULT_EFFICIENCY
    for k, v in {**p, **c}.items():
        assert getattr(e, k) == pytest.approx(v, rel=0.03), k
    assert rep["median_ape"] < 0.05


# ---- per NVLink generation (aiconfigurator NCCL tables) -----------------------------------------

def test_aic_frame_converts_units_and_labels_the_algorithm():
    """aiconfigurator's nccl_perf: latency in ms, message in half-precision elements; NCCL picks
    NVLS for all-reduce where the switch reduces (H100), the ring where it does not (A100)."""
    import pandas as pd

    from jalapeno.fit.collectives import aic_nccl_frame
    from jalapeno.specs.catalog import load_system

    t = pd.DataFrame({"op_name": ["all_reduce", "all_gather", "alltoall", "all_reduce"],
                      "nccl_dtype": ["half", "half", "half", "int8"], "num_gpus": [8, 8, 8, 8],
                      "message_size": [1024, 2048, 1024, 1024], "latency": [0.02, 0.03, 0.04, 0.05]})
    h = aic_nccl_frame(t, load_system("h100"))
    assert list(h.collective) == ["all_reduce", "all_gather"]  # no all-to-all, no int8
    assert list(h.message_bytes) == [2048.0, 4096.0] and list(h.time_s) == pytest.approx([20e-6, 30e-6])
    assert list(h.algorithm) == ["nccl_default_nvls", "ring"] and h.link_bytes_per_s.iloc[0] == 450e9
    assert list(aic_nccl_frame(t, load_system("a100-sxm")).algorithm) == ["ring", "ring"]


def test_generation_split_is_the_declared_one():
    import pandas as pd

    from jalapeno.fit.collectives import generation_split

    mib = 2**20
    f = pd.DataFrame({"collective": ["all_gather", "all_gather", "all_reduce", "reduce_scatter", "all_gather"],
                      "message_bytes": [mib, 2 * mib, 16 * mib, 4 * mib, mib / 4]})
    # 1 MiB and 16 MiB (even powers) of fitted ops; 2 MiB odd; reduce-scatter held out; 256 KiB too small
    assert list(generation_split(f)) == [True, False, True, False, False]


def test_generation_fit_recovers_a_known_ramp():
    """Synthetic NCCL times from the published form (ring: a + passes·(g−1)/g·M/(B·f/(1+(h/M)^p)),
    passes 2 for an all-reduce; NVLS: a + M/(B·f/(1+(h/M)^p))), written out here, not via the
    package: the fit returns the parameters that made them."""
    pytest.importorskip("scipy")
    import pandas as pd

    from jalapeno.fit.collectives import fit_generation

    b, g = 900e9, 8
    ring = (0.85, 40 * 2**20, 0.55)
    nvls = (0.65, 20 * 2**20, 0.6)
    rows = []
    for e in range(20, 30):
        m = 2.0**e
        eta_r = ring[0] / (1 + (ring[1] / m) ** ring[2])
        eta_n = nvls[0] / (1 + (nvls[1] / m) ** nvls[2])
        rows += [("all_gather", "ring", m, 5e-6 + (g - 1) / g * m / (b * eta_r)),
                 ("reduce_scatter", "ring", m, 5e-6 + (g - 1) / g * m / (b * eta_r)),
                 ("all_reduce", "nccl_default_nvls", m, 8e-6 + m / (b * eta_n))]
    df = pd.DataFrame(rows, columns=["collective", "algorithm", "message_bytes", "time_s"]).assign(
        system="x", gpus=g, link_bytes_per_s=b)
    p, rep = fit_generation({"x": df})
    assert p["link_fraction"] == pytest.approx(0.85, rel=0.02)
    assert p["link_half_bytes"] == pytest.approx(40 * 2**20, rel=0.05)
    assert p["in_switch_fraction"] == pytest.approx(0.65, rel=0.02)
    assert rep["rows"] == 10 and rep["held_out"]["x"]["rows"] == 20  # 5 even sizes x 2 ops fit
    assert rep["held_out"]["x"]["median_ape"] < 0.01


def test_shipped_sets_carry_their_nvlink_generations_ramp():
    """Systems of one NVLink generation share one ramp; Vera Rubin and Jalapeño borrow NVLink 5's
    (through GB300's set, a named assumption); each measured set reports its held-out error."""
    from jalapeno.fit.collectives import NVLINK_GENERATION
    from jalapeno.specs.calibration import load_calibration

    keys = ("link_fraction", "link_half_bytes", "link_shape", "in_switch_fraction")
    ramp = {n: tuple(load_calibration(n)["parameters"][k] for k in keys) for n in
            (*NVLINK_GENERATION, "vera-rubin-nvl72", "jalapeno")}
    assert ramp["h100"] == ramp["h200"] != ramp["b200"]
    assert ramp["b200"] == ramp["b300"] == ramp["gb200-nvl72"] == ramp["gb300-nvl72"] == ramp["jalapeno"] \
        == ramp["vera-rubin-nvl72"]
    for n, gen in NVLINK_GENERATION.items():
        rep = load_calibration(n)["report"]["nccl"]
        assert rep["nvlink_generation"] == gen and rep["held_out_rows"] >= 40
        # the gap: an H100-fitted ramp ran 25-31% fast on Blackwell; now within 10%
        assert abs(rep["bias_ge_1mib"]) < 0.10 and rep["held_out_median_ape"] < 0.20, n


def test_nvlink5_plateau_is_faster_in_bytes_but_a_smaller_share_than_nvlink4():
    """At 8 GiB the NVLink 5 ramp gives B200 more bus bandwidth than H100 (900 vs 450 GB/s links)
    but reaches its plateau later (half size 84 vs 20 MB): at 1 MiB a smaller share of its link."""
    from jalapeno.cost.pricer import load_pricer

    def busbw(system, m):
        p = load_pricer(system)
        t = p.collective("all_gather", 8, np.array([m])).time_s[0] - p.efficiency.collective_launch_s
        return m * 7 / 8 / t

    assert busbw("b200", 8 * 2**30) > 1.5 * busbw("h100", 8 * 2**30)
    assert busbw("b200", 2**20) / 900e9 < busbw("h100", 2**20) / 450e9


# ---- MoE all-to-all on TensorRT-LLM's measured NVLink kernels (GB200) -------------------------------

def test_all_to_all_latency_adds_once_per_call_on_every_level():
    from jalapeno.specs.catalog import load_system

    gb = load_system("gb200-nvl72")  # rack: 72 chips, 900 GB/s, 1 us hop; cluster: NICs
    eff = DEFAULT_EFFICIENCY.with_overrides({"all_to_all_fraction": 0.85, "all_to_all_latency_s": 20e-6,
                                             "collective_launch_s": 3e-6})
    m = 16384 * 8 * 7168 * 2.0  # the combine of 16,384 decode rows, top-8, BF16
    # by hand: 1 us hop + 20 us + 3 us launch + 31/32 · M / (900 GB/s · 0.85)
    want = 1e-6 + 20e-6 + 3e-6 + 31 / 32 * m / (900e9 * 0.85)
    assert collective_time("all_to_all", 32, [m], gb, eff).time_s[0] == pytest.approx(want, rel=1e-9)
    base = eff.with_overrides({"all_to_all_latency_s": 0.0})
    # a group spread over the NICs runs the same kernel: its latency is added once there too (else a small
    # exchange would be faster spread than packed: 5 us NIC hop + 3 us against 1 + 20 + 3 us)
    assert (collective_time("all_to_all", 144, [m], gb, eff, placement="spread").time_s[0]
            == pytest.approx(collective_time("all_to_all", 144, [m], gb, base, placement="spread").time_s[0] + 20e-6))
    small = [1e4]
    assert (collective_time("all_to_all", 8, small, gb, eff).time_s[0]
            <= collective_time("all_to_all", 8, small, gb, eff, placement="spread").time_s[0])
    # all-reduce is untouched
    assert (collective_time("all_reduce", 8, [1e6], gb, eff).time_s[0]
            == collective_time("all_reduce", 8, [1e6], gb, base).time_s[0])


def test_all_to_all_latency_is_checked():
    from jalapeno.errors import SpecError

    with pytest.raises(SpecError, match="all_to_all_latency_s.*must be >= 0"):
        DEFAULT_EFFICIENCY.with_overrides({"all_to_all_latency_s": -1e-6})
    with pytest.raises(SpecError, match="all_to_all_latency_s.*beyond"):
        DEFAULT_EFFICIENCY.with_overrides({"all_to_all_latency_s": 20.0})


#: Rows of aiconfigurator-core 0.12.0 systems/data/gb200/comm/trtllm/1.3.0rc10/trtllm_alltoall_perf.parquet
#: (TensorRT-LLM 1.2.0rc6, NVLinkOneSided, NVFP4, hidden 7168, top-8, 256 experts, balanced):
#: (EP, tokens per rank, dispatch ms, combine ms)
_A2A_ROWS = [(8, 1, 0.0183, 0.0253), (8, 64, 0.0189, 0.0307), (8, 512, 0.0434, 0.1045), (8, 4096, 0.1946, 0.6609),
             (8, 16384, 0.7108, 2.4878), (16, 1, 0.0195, 0.0266), (16, 64, 0.0202, 0.0322), (16, 512, 0.0467, 0.1174),
             (16, 4096, 0.2114, 0.7053), (16, 16384, 0.7747, 2.6719), (32, 1, 0.0209, 0.0324),
             (32, 64, 0.0219, 0.0398), (32, 512, 0.0491, 0.1252), (32, 4096, 0.2252, 0.7396),
             (32, 16384, 0.8217, 2.7824), (2, 16384, 0.1981, 0.3690)]


def _a2a_table():
    import pandas as pd

    rows = []
    for ep, n, d, c in _A2A_ROWS:
        for op, lat in (("alltoall_dispatch", d), ("alltoall_combine", c)):
            rows.append({"op_name": op, "kernel_source": "NVLinkOneSided", "moe_dtype": "nvfp4", "num_tokens": n,
                         "hidden_size": 7168, "topk": 8, "num_experts": 256, "moe_ep_size": ep, "latency": lat})
    return pd.DataFrame(rows)


def test_ep_all_to_all_fit_matches_the_table_by_hand():
    pytest.importorskip("scipy")
    from jalapeno.fit.ep_all_to_all import fit_ep_all_to_all, judge_ep_all_to_all
    from jalapeno.specs.catalog import load_system

    gb = load_system("gb200-nvl72")
    eff = DEFAULT_EFFICIENCY.with_overrides({"collective_launch_s": 2.69e-6, "all_to_all_fraction": 0.45})
    params, rep = fit_ep_all_to_all(_a2a_table(), gb, eff)
    # by hand, bandwidth from the 16,384-row layers less two calls' 1-row latency, bytes 7/8 and 31/32 of
    # 16384·8·7168·(1 + 2): EP8 2.466e9 B / (3198.6 − 43.6) us = 782 GB/s = 0.87 of 900; EP32 2.730e9 /
    # (3604.1 − 53.3) us = 769 GB/s = 0.85
    assert 0.80 < params["all_to_all_fraction"] < 0.90
    # per call, from the 1-row layers: EP8 43.6/2 = 21.8 us, EP32 53.3/2 = 26.7 us, less 1 us hop and
    # 2.69 us launch: 18.1-23.0 us
    assert 15e-6 < params["all_to_all_latency_s"] < 25e-6
    assert rep["ep16"]["role"] == "held_out" and rep["ep16"]["median_ape"] < 0.08
    assert rep["ep2"]["role"] == "outside_form"
    # the model sends top-8 copies per decode row, the one-sided kernel one per destination rank: at EP2
    # 4 off-rank copies against ~1, so the model is far slower there (reported, not fitted)
    assert rep["ep2"]["bias"] > 0.5
    judged = judge_ep_all_to_all(_a2a_table(), gb, eff)
    # the constant 0.45 with no kernel latency: 16,384 rows at EP32 by hand 2·(1 + 2.69) us +
    # 2.730e9 B / (900 GB/s · 0.45) = 6.75 ms against 3.60 ms measured (+87%); 1 row 2·3.69 us +
    # 0.2 us = 7.6 us against 53.3 us (−86%)
    assert judged["shipped"]["ep32"]["median_ape"] > 0.5
    assert "role" not in judged["shipped"]["ep32"]
    assert judged["fit"]["all_to_all_fraction"] == pytest.approx(params["all_to_all_fraction"])


def _synthetic_a2a_table(latency_s: float, fraction: float):
    """A ``trtllm_alltoall_perf``-shaped table whose rows follow the switched all-to-all by hand:
    per call 1 us NVSwitch hop + 2.69 us launch + ``latency_s`` + (g-1)/g of the message over
    900 GB/s x ``fraction``; messages top-8 copies of each row at 7168 elements, 1 B dispatch
    (NVFP4) and 2 B combine. Both calls' times are put on the dispatch row, combine 0."""
    import pandas as pd

    rows = []
    for ep in (8, 16, 32):
        for n in (1, 16, 128, 1024, 8192):
            fixed = 1e-6 + 2.69e-6 + latency_s
            bytes_ = n * 8 * 7168 * (1 + 2)
            t = 2 * fixed + (ep - 1) / ep * bytes_ / (900e9 * fraction)
            for op, lat in (("alltoall_dispatch", t * 1e3), ("alltoall_combine", 0.0)):
                rows.append({"op_name": op, "kernel_source": "NVLinkOneSided", "moe_dtype": "nvfp4", "num_tokens": n,
                             "hidden_size": 7168, "topk": 8, "num_experts": 256, "moe_ep_size": ep, "latency": lat})
    return pd.DataFrame(rows)


def test_ep_all_to_all_latency_fit_at_a_fixed_fraction_recovers_a_known_latency():
    pytest.importorskip("scipy")
    from jalapeno.fit.ep_all_to_all import fit_ep_all_to_all, judge_ep_all_to_all
    from jalapeno.specs.catalog import load_system

    gb = load_system("gb200-nvl72")
    eff = DEFAULT_EFFICIENCY.with_overrides({"collective_launch_s": 2.69e-6, "all_to_all_fraction": 0.45})
    table = _synthetic_a2a_table(12e-6, 0.45)
    params, rep = fit_ep_all_to_all(table, gb, eff, fix_fraction=True)
    assert params["all_to_all_fraction"] == 0.45  # kept, not fitted
    assert params["all_to_all_latency_s"] == pytest.approx(12e-6, rel=1e-3)
    assert rep["ep16"]["role"] == "held_out" and rep["ep16"]["median_ape"] < 1e-3
    # a table measured at another bandwidth share: the latency alone cannot fit it, the joint fit can
    joint, _ = fit_ep_all_to_all(_synthetic_a2a_table(12e-6, 0.85), gb, eff)
    assert joint["all_to_all_fraction"] == pytest.approx(0.85, rel=1e-3)
    assert joint["all_to_all_latency_s"] == pytest.approx(12e-6, rel=1e-2)
    judged = judge_ep_all_to_all(table, gb, eff)
    assert judged["latency_fit"]["all_to_all_latency_s"] == pytest.approx(12e-6, rel=1e-3)


def test_ep_all_to_all_latency_fit_on_the_measured_rows():
    pytest.importorskip("scipy")
    from jalapeno.fit.ep_all_to_all import fit_ep_all_to_all
    from jalapeno.specs.catalog import load_system

    gb = load_system("gb200-nvl72")
    eff = DEFAULT_EFFICIENCY.with_overrides({"collective_launch_s": 2.69e-6, "all_to_all_fraction": 0.45})
    params, _ = fit_ep_all_to_all(_a2a_table(), gb, eff, fix_fraction=True)
    # by hand: the 1-row layers alone give 18.1-23.0 us per call (test above); at 0.45 the 4,096- and
    # 16,384-row layers are priced 1.9x the measurement already (16,384 rows at EP32: 6.75 ms against
    # 3.60), so the log least squares takes a latency below the 1-row figure — and above the 64-row
    # 64-row layers' time less their bytes: EP8 (49.6 us - 64·8·7168·3·7/8 B / 405 GB/s) / 2 - 3.69 us
    # = (49.6 - 23.8) / 2 - 3.69 = 9.2 us
    assert 9.2e-6 < params["all_to_all_latency_s"] < 18.1e-6
    assert params["all_to_all_fraction"] == 0.45


def test_shipped_gb200_all_to_all_latency_is_its_kernel_fit():
    from jalapeno.specs.calibration import base_efficiency, load_calibration

    cal = load_calibration("gb200-nvl72")
    lat = cal["report"]["all_to_all"]["latency_fit"]
    eff = base_efficiency("gb200-nvl72")
    assert eff.all_to_all_latency_s == pytest.approx(lat["all_to_all_latency_s"])
    assert eff.all_to_all_fraction == lat["all_to_all_fraction"] == 0.45
    # sets without a measured all-to-all keep no kernel latency
    assert base_efficiency("b200").all_to_all_latency_s == 0.0
