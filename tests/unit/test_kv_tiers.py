"""KV-cache tiers in the catalog (specs/kv_tiers.py): values from the cited facts, bad input named."""

from __future__ import annotations

import pytest

from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_system
from jalapeno.specs.system_load import system_from_dict
from jalapeno.specs.kv_tiers import KVTier, tier_status

GB = 1e9


def test_gb200_host_tier_from_the_grace_facts():
    # NVIDIA GB200 NVL72: 480 GB LPDDR5X per Grace, one Grace per two GPUs; 3/4 usable (assumption);
    # NVLink-C2C 900 GB/s bidirectional per Grace = 450 per direction / 2 GPUs = 225 GB/s per GPU
    s = load_system("gb200-nvl72")
    host = {t.name: t for t in s.kv_tiers}["host"]
    assert host.link == "nvlink_c2c"
    assert host.capacity_bytes == pytest.approx(480 / 2 * 0.75 * GB)
    assert host.bandwidth_bytes_per_s == pytest.approx(900 / 2 / 2 * GB)
    assert "gb200-nvl72" in s.sources["kv_tiers.host.capacity_gb_per_chip"].lower()


def test_set_reaches_a_tier_field():
    from jalapeno.specs.catalog import load_system as load

    s = load("jalapeno", (("kv_tiers.host.bandwidth_gb_per_s", 225),))
    assert {t.name: t for t in s.kv_tiers}["host"].bandwidth_bytes_per_s == pytest.approx(225 * GB)


def test_vera_rubin_host_tier_from_the_vera_facts():
    # Vera: 1.5 TB LPDDR5X, NVLink-C2C 1.8 TB/s bidirectional, one Vera per two Rubin GPUs
    host = {t.name: t for t in load_system("vera-rubin-nvl72").kv_tiers}["host"]
    assert host.capacity_bytes == pytest.approx(1500 / 2 * 0.75 * GB)
    assert host.bandwidth_bytes_per_s == pytest.approx(1800 / 2 / 2 * GB)


def test_jalapeno_host_behind_the_rack_switch_and_no_ssd():
    s = load_system("jalapeno")
    st = tier_status(s)
    assert st["ssd"] == "none"
    assert "rack_switch" in st["host"]
    # the host path is the [host] link's 50 GB/s switch port, 4.5x slower than GB200's C2C share
    host = {t.name: t for t in s.kv_tiers}["host"]
    assert host.bandwidth_bytes_per_s == pytest.approx(s.host.bandwidth_bytes_per_s)


def test_hgx_host_tier_from_the_dgx_facts():
    # DGX H100: 2 TB DDR5 for 8 GPUs, 3/4 usable; eight 3.84 TB U.2 cache drives, 90% usable
    tiers = {t.name: t for t in load_system("h100").kv_tiers}
    assert tiers["host"].capacity_bytes == pytest.approx(2000 / 8 * 0.75 * GB)
    assert tiers["ssd"].capacity_bytes == pytest.approx(3840 * 0.9 * GB)
    assert tiers["host"].link == "pcie"


def test_system_without_tiers_says_so():
    assert set(tier_status(load_system("mi355x")).values()) == {"not in the catalog"}


def test_reload_time_is_latency_plus_bytes_over_bandwidth():
    t = KVTier("host", "pcie", 1e12, 50e9, 10e-6)
    # 35,136 B/token (DeepSeek-R1 FP8 MLA) x 100,000 tokens / 50 GB/s = 70.27 ms, + 10 us
    assert t.reload_s(35_136 * 100_000) == pytest.approx(0.070272 + 10e-6)
    assert not KVTier("host", "pcie", 1e12, 0.0, 1e-6).usable
    assert not KVTier("host", "pcie", 0.0, 1e9, 1e-6).usable


BASE = {
    "schema_version": 1,
    "name": "t",
    "description": "t",
    "chip": {
        "name": "c",
        "peak_dense_tflops": {"bf16": {"value": 100, "source": "tst"}},
        "hbm_capacity_gb": {"value": 80, "source": "tst"},
        "hbm_bandwidth_tb_per_s": {"value": 3, "source": "tst"},
        "hbm_stacks": {"value": 5, "source": "tst"},
        "tdp_w": {"value": 700, "source": "tst"},
    },
    "levels": [
        {
            "name": "node",
            "chips": 8,
            "scope": "scale_up",
            "topology": "switched",
            "bandwidth_gb_per_s": {"value": 450, "source": "tst"},
            "latency_us": {"value": 1, "source": "tst"},
        }
    ],
    "power": {"allin_kw_per_chip": {"value": 1.7, "source": "tst"}},
    "cost": {"usd_per_chip_hour": {"value": 1.3, "source": "tst"}},
}
HOST = {
    "link": "pcie",
    "capacity_gb_per_chip": {"value": 100, "source": "tst"},
    "bandwidth_gb_per_s": {"value": 25, "source": "tst"},
    "latency_us": {"value": 5, "source": "tst"},
}


def _with(tiers):
    return dict(BASE, kv_tiers=tiers)


def test_good_tier_table_loads():
    s = system_from_dict(_with({"host": HOST, "none": ["ssd"]}))
    assert [t.name for t in s.kv_tiers] == ["host"] and s.kv_tiers_absent == ("ssd",)


@pytest.mark.parametrize(
    "tiers, words",
    [
        ({"hots": HOST}, ["kv_tiers.hots", "write host"]),  # the near key: hots -> host (break55)
        (
            {"host": dict(HOST, bandwidth_gb_per_s={"value": -1, "source": "tst"})},
            ["bandwidth_gb_per_s", "must be positive", "got -1"],
        ),
        ({"host": dict(HOST, usable_fraction={"value": 1.5, "source": "tst"})}, ["usable_fraction must be <= 1"]),
        ({"host": dict(HOST, link="usb")}, ["kv_tiers.host.link"]),
        ({"host": dict(HOST, latency_us=3)}, ["latency_us", "value = <number>"]),
        ({"host": HOST, "none": ["host"]}, ["both described and listed in none"]),
    ],
)
def test_bad_tier_tables_name_the_field(tiers, words):
    with pytest.raises(SpecError) as e:
        system_from_dict(_with(tiers))
    msg = str(e.value)
    for w in words:
        assert w in msg, (w, msg)


def test_tiers_over_one_link_share_its_bandwidth(monkeypatch):
    """Two tiers behind one link (Jalapeño's host and remote both through the rack switch, jalapeno.toml) computed
    their link load alone (ux54). DeepSeek-R1 on gb200-nvl72 at its KV cap with the coding agent at 5 s think time
    (spills past HBM, tests/unit/test_sessions.py): a 1 GB host tier and the remote tier, both at 50 GB/s. Over two
    links the utilisation is the busier tier's own; over one link it is their summed traffic over 50 GB/s, more;
    the switch off gives the old figure exactly."""
    import dataclasses

    from jalapeno.cost.pricer import RooflinePricer, load_pricer
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.serve.sessions import sessions_by_batch
    from jalapeno.specs import kv_tiers as kt
    from jalapeno.specs.agentic import AGENTIC_PRESETS
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision

    model, dep = load_model("deepseek-r1"), Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)))
    spec = dataclasses.replace(AGENTIC_PRESETS["coding-agent"], think_s=5.0)
    pr = load_pricer("gb200-nvl72")
    t = {x.name: x for x in pr.system.kv_tiers}
    host = dataclasses.replace(t["host"], capacity_bytes=1 * GB, bandwidth_bytes_per_s=50 * GB, link="nic")
    remote = dataclasses.replace(t["remote"], bandwidth_bytes_per_s=50 * GB)

    def rho(link: str) -> float:
        tiers = (dataclasses.replace(host, link=link), remote)
        p = RooflinePricer(dataclasses.replace(pr.system, kv_tiers=tiers), pr.efficiency)
        return float(sessions_by_batch(model, p, dep, spec, [1e6]).link_utilisation[0])

    apart, shared = rho("nvlink_c2c"), rho("nic")
    assert 0 < apart < shared  # both tiers reload: the one link carries both
    monkeypatch.setattr(kt, "SHARED_LINK_ON", False)
    assert rho("nic") == apart  # off: each tier alone, as before


def test_shared_link_reads_the_widest_bandwidth_and_keeps_a_tiers_own_medium():
    """Tiers of unequal bandwidth on one link (review54: every other check used two equal ones, so the rule's
    'widest' and its max with the tier's own utilisation could change unseen). By hand: host 1 GB/s over 50 GB/s
    (ρ 0.02), an NVMe tier 0.5 GB/s over its own 5 GB/s drive (ρ 0.1), both through one 'nic': the link carries
    (1 + 0.5) GB/s over the widest 50 GB/s = 0.03; the host tier reads 0.03, the NVMe tier keeps its drive's 0.1."""
    import numpy as np

    from jalapeno.specs.kv_tiers import shared_link_utilisation

    got = shared_link_utilisation(np.array([[0.02, 0.1]]), [50 * GB, 5 * GB], ["nic", "nic"])
    assert got == pytest.approx(np.array([[0.03, 0.1]]))
    # a third tier on another link stays its own (0.4), and the two on 'nic' are as above
    got = shared_link_utilisation(np.array([[0.02, 0.4, 0.1]]), [50 * GB, 10 * GB, 5 * GB], ["nic", "pcie", "nic"])
    assert got == pytest.approx(np.array([[0.03, 0.4, 0.1]]))
