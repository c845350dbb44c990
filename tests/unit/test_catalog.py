"""The shipped hardware catalog: every system loads, every number is sourced, spot values match
the public spec-sheet facts each file cites, and a user file loads by path."""

from __future__ import annotations

import re
import tomllib
from importlib import resources

import pytest

from jalapeno.specs.catalog import list_systems, load_system

EXPECTED = ["jalapeno", "gb200-nvl72", "gb300-nvl72", "vera-rubin-nvl72", "b200", "b300",
            "h100", "h200", "mi300x", "mi325x", "mi355x"]

# Keys whose values are plain numbers by design (counts, shapes, efficiency overrides), not sourced.
PLAIN_NUMERIC = {"schema_version", "chips", "links_per_chip", "torus_dims", "mesh_shape", "low", "high"}

GB, TB, GiB, MiB = 1e9, 1e12, 2.0**30, 2.0**20


def _raw(name: str) -> dict:
    text = (resources.files("jalapeno") / "data" / "systems" / f"{name}.toml").read_text()
    return tomllib.loads(text)


def _walk(obj, path=""):
    """Yield (path, node) for every dict and leaf in a parsed TOML tree."""
    yield path, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, f"{path}.{k}" if path else k)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _walk(v, f"{path}[{i}]")


def test_catalog_lists_all_systems():
    assert set(EXPECTED) <= set(list_systems())


@pytest.mark.parametrize("name", EXPECTED)
def test_system_loads(name):
    s = load_system(name)
    assert s.name == name
    assert s.chip.peak("bf16") > 0
    assert s.levels and s.allin_power_w_per_chip > 0 and s.usd_per_chip_hour > 0


@pytest.mark.parametrize("name", EXPECTED)
def test_every_number_has_a_source(name):
    data = _raw(name)
    n_sourced = 0
    for path, node in _walk(data):
        if isinstance(node, dict) and "value" in node:
            n_sourced += 1
            src = node.get("source")
            assert isinstance(src, str) and src.strip(), f"{name}: {path} has no source"
            if path.endswith("compute_capability"):  # a CUDA "major.minor" string (NVIDIA's CUDA GPUs table)
                assert re.fullmatch(r"\d+\.\d", str(node["value"])), f"{name}: {path}.value is not 'major.minor'"
                continue
            assert isinstance(node["value"], (int, float)), f"{name}: {path}.value is not a number"
    assert n_sourced >= 10
    # No bare number outside a sourced table, except counts/shapes and efficiency overrides.
    for path, node in _walk(data):
        if isinstance(node, (int, float)) and not isinstance(node, bool):
            parts = path.replace("[", ".").replace("]", "").split(".")
            leaf_keys = [p for p in parts if not p.isdigit()]
            ok = (leaf_keys[-1] == "value" or leaf_keys[-1] in PLAIN_NUMERIC
                  or leaf_keys[0] == "efficiency")
            assert ok, f"{name}: bare number at {path}; write it as {{ value = ..., source = ... }}"


@pytest.mark.parametrize("name", EXPECTED)
def test_sources_reach_the_system(name):
    s = load_system(name)
    for key in ("chip.peak_dense_tflops.bf16", "chip.hbm_bandwidth_tb_per_s", "chip.tdp_w",
                "power.allin_kw_per_chip", "cost.usd_per_chip_hour"):
        assert s.sources[key].strip()
    for lv in s.levels:
        assert s.sources[f"levels[{lv.name}].bandwidth_gb_per_s"].strip()
        assert s.sources[f"levels[{lv.name}].latency_us"].strip()


@pytest.mark.parametrize("name", EXPECTED)
def test_usable_hbm_at_most_nominal(name):
    c = load_system(name).chip
    assert 0 < c.hbm_usable_bytes <= c.hbm_capacity_bytes


@pytest.mark.parametrize("name", EXPECTED)
def test_levels_grow_and_bandwidth_falls_outward(name):
    s = load_system(name)
    chips = [lv.chips for lv in s.levels]
    assert chips == sorted(set(chips))
    for inner, outer in zip(s.levels, s.levels[1:]):
        assert outer.bandwidth_bytes_per_s <= inner.bandwidth_bytes_per_s


# ---- spot values, computed from the spec-sheet facts ---------------------------------------

def test_h100_spot_values():
    s = load_system("h100")
    assert s.chip.peak("fp8") == pytest.approx(1979e12)
    assert s.chip.peak("bf16") == pytest.approx(989e12)
    assert s.chip.hbm_capacity_bytes == pytest.approx(80 * GB)
    assert s.chip.hbm_usable_bytes == pytest.approx(80 * GB)  # no usable figure: = nominal
    assert s.chip.hbm_bandwidth_bytes_per_s == pytest.approx(3.35 * TB)
    assert s.chip.sram_bytes == pytest.approx(50 * MiB)
    assert s.chip.tdp_w == pytest.approx(700)
    assert "fp4" not in s.chip.formats
    assert s.allin_power_w_per_chip == pytest.approx(1730)
    assert s.usd_per_chip_hour == pytest.approx(1.30)
    node, cluster = s.levels
    assert (node.chips, node.scope, node.topology) == (8, "scale_up", "switched")
    assert node.bandwidth_bytes_per_s == pytest.approx(900e9 / 2)  # NVLink 4: 900 GB/s bidirectional
    assert node.in_network_reduction
    assert (cluster.chips, cluster.scope, cluster.topology) == (8192, "scale_out", "fat_tree")
    assert cluster.bandwidth_bytes_per_s == pytest.approx(400e9 / 8)  # ConnectX-7 400 Gb/s
    assert node.latency_s == pytest.approx(1e-6) and cluster.latency_s == pytest.approx(5e-6)


def test_gb300_spot_values():
    s = load_system("gb300-nvl72")
    assert s.chip.peak("fp4") == pytest.approx(15e15)
    assert s.chip.peak("fp8") == pytest.approx(5e15)
    assert s.chip.hbm_capacity_bytes == pytest.approx(288 * GB)
    assert s.chip.hbm_usable_bytes == pytest.approx(279 * GB)
    assert s.chip.tdp_w == pytest.approx(1400)
    assert s.levels[0].chips == 72
    assert s.levels[0].bandwidth_bytes_per_s == pytest.approx(1.8e12 / 2)
    assert s.levels[1].bandwidth_bytes_per_s == pytest.approx(800e9 / 8)  # ConnectX-8
    assert s.allin_power_w_per_chip == pytest.approx(2100)
    assert s.usd_per_chip_hour == pytest.approx(2.652)


def test_gb200_and_blackwell_hgx_spot_values():
    assert load_system("gb200-nvl72").chip.hbm_usable_bytes == pytest.approx(186 * GB)
    b200 = load_system("b200")
    assert b200.chip.peak("fp4") == pytest.approx(9e15)
    assert b200.chip.hbm_usable_bytes == pytest.approx(180 * GB)
    assert b200.levels[0].bandwidth_bytes_per_s == pytest.approx(900e9)
    assert b200.levels[1].bandwidth_bytes_per_s == pytest.approx(50e9)
    assert b200.chip.tdp_w == pytest.approx(1000)
    b300 = load_system("b300")
    assert b300.chip.hbm_usable_bytes == pytest.approx(270 * GB)
    assert b300.chip.tdp_w == pytest.approx(1100)
    assert b300.levels[1].bandwidth_bytes_per_s == pytest.approx(100e9)
    assert b300.usd_per_chip_hour == pytest.approx(2.34)


def test_vera_rubin_spot_values():
    s = load_system("vera-rubin-nvl72")
    assert s.chip.peak("fp4") == pytest.approx(35e15)  # NVFP4 training (dense); 50 PF is inference
    assert s.chip.peak("fp8") == pytest.approx(1.2e18 / 72, rel=0.01)
    assert s.chip.hbm_capacity_bytes == pytest.approx(288 * GB)
    assert s.chip.hbm_bandwidth_bytes_per_s == pytest.approx(22 * TB)
    assert s.levels[0].bandwidth_bytes_per_s == pytest.approx(3.6e12 / 2)
    assert not s.vendor_verified
    for key in ("chip.peak_dense_tflops.fp8", "chip.peak_dense_tflops.bf16", "chip.tdp_w",
                "power.allin_kw_per_chip", "cost.usd_per_chip_hour"):
        assert "(estimate)" in s.sources[key]


def test_amd_spot_values():
    m = load_system("mi355x")
    assert m.chip.hbm_bandwidth_bytes_per_s == pytest.approx(8e12)
    assert m.chip.hbm_capacity_bytes == pytest.approx(288 * GB)
    assert m.chip.peak("fp4") == pytest.approx(10066e12)
    assert m.chip.tdp_w == pytest.approx(1400)
    for name, bw in (("mi300x", 448e9), ("mi325x", 448e9), ("mi355x", 7 * 153.6e9 / 2)):
        node = load_system(name).levels[0]
        assert (node.chips, node.topology, node.links_per_chip) == (8, "full_mesh", 7)
        assert not node.in_network_reduction
        assert node.bandwidth_bytes_per_s == pytest.approx(bw, rel=0.001)
    assert load_system("mi300x").chip.tdp_w == pytest.approx(750)
    assert load_system("mi325x").chip.tdp_w == pytest.approx(1000)
    assert load_system("mi325x").allin_power_w_per_chip == pytest.approx(2180)


def test_jalapeno_spot_values():
    s = load_system("jalapeno")
    assert s.chip.hbm_usable_bytes == 216 * 2**30
    assert s.chip.hbm_capacity_bytes == 216 * 2**30
    assert s.chip.peak("fp8") == pytest.approx(3.4e15)
    assert s.chip.peak("fp4") == pytest.approx(13.4e15)
    assert s.chip.hbm_bandwidth_bytes_per_s == pytest.approx(15.4e12)
    assert s.chip.hbm_stacks == 6
    assert s.chip.sustained_w == pytest.approx(550)
    assert [lv.chips for lv in s.levels] == [8, 128, 2048]
    assert [lv.bandwidth_bytes_per_s for lv in s.levels] == pytest.approx([600e9, 600e9, 200e9])
    assert s.levels[-1].topology == "torus3d"
    assert s.levels[-1].torus_dims == (8, 16, 16)
    assert s.max_chips == 2048 and s.scale_up_chips == 2048


@pytest.mark.parametrize("name", ["h100", "h200", "b200", "b300", "gb200-nvl72", "gb300-nvl72",
                                  "mi300x", "mi325x", "mi355x"])
def test_allin_and_cost_match_inferencex_constants(name):
    # SemiAnalysis InferenceX-app packages/app/src/lib/constants.ts GPU_SPECS (commit 77ca49a, Apr 2026):
    # all-in kW/GPU, costh $/GPU-h.
    table = {"h100": (1.73, 1.30), "h200": (1.73, 1.41), "b200": (2.17, 1.95), "b300": (2.17, 2.34),
             "gb200-nvl72": (2.10, 2.21), "gb300-nvl72": (2.10, 2.652), "mi300x": (1.79, 1.12),
             "mi325x": (2.18, 1.28), "mi355x": (2.65, 1.48)}
    kw, usd = table[name]
    s = load_system(name)
    assert s.allin_power_w_per_chip == pytest.approx(kw * 1e3)
    assert s.usd_per_chip_hour == pytest.approx(usd)


def test_user_toml_loads_by_path(tmp_path):
    text = (resources.files("jalapeno") / "data" / "systems" / "h100.toml").read_text()
    assert 'name = "h100"' in text
    path = tmp_path / "my-h100.toml"
    path.write_text(text.replace('name = "h100"', 'name = "my-h100"', 1))
    s = load_system(str(path))
    assert s.name == "my-h100"
    assert s.path == str(path)
    assert s.chip.peak("fp8") == pytest.approx(1979e12)
    assert s == load_system(str(path))
