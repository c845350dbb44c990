"""The sliced-chip pricer (cost/sliced.py) and the die spec (specs/die.py): issue 13's tests."""

from __future__ import annotations

import tomllib
from dataclasses import replace

import numpy as np
import pytest
from cli_runner import check_error, run
from hypothesis import given, settings
from hypothesis import strategies as st

from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost import sliced
from jalapeno.cost.sliced import SlicedPricer, chip_model_pricer, network_time, slice_summary, slice_traffic
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import _system_path, load_model
from jalapeno.specs.die import ONE_SLICE, Die
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import get_precision
from jalapeno.specs.system_load import system_from_dict

R1 = load_model("deepseek-r1")
FP8 = get_precision("fp8")
BATCH = Batch.make(decode_seqs=np.array([1.0, 16, 256, 0]), decode_ctx=8192,
                   prefill_tokens=np.array([0.0, 0, 0, 8192]), prefill_seqs=np.array([0.0, 0, 0, 1]))
LAYOUT = Layout(dp=8, ep=8)


def _step(pricer, batch=BATCH, layout=LAYOUT, model=R1, prec=FP8):
    return step_cost(model, pricer, layout, prec, batch)


def _sliced(name: str, placement: str = "", die: Die | None = None) -> SlicedPricer:
    p = load_pricer(name)
    sp = SlicedPricer(p.system, p.efficiency, placement)
    return sp.with_die(die) if die is not None else sp


def test_one_slice_chip_is_the_flat_pricer_exactly():
    for name in ("h100", "jalapeno", "b200"):
        flat = _step(load_pricer(name))
        for placement in ("local_first", "striped", "best"):
            one = _step(_sliced(name, placement, ONE_SLICE))
            np.testing.assert_array_equal(one.step_time_s, flat.step_time_s)
            assert list(one.bound) == list(flat.bound)
    # h100's catalog die is one slice
    assert load_pricer("h100").system.chip.die.slices == 1
    np.testing.assert_array_equal(_step(_sliced("h100", "striped")).step_time_s, _step(load_pricer("h100")).step_time_s)


def test_infinite_on_die_network_is_one_flat_chip_with_the_summed_resources():
    inf = Die(slices=6, topology="mesh2d", mesh_shape=(2, 3), link_bandwidth_bytes_per_s=float("inf"),
              hop_latency_s=0.0)
    flat = _step(load_pricer("jalapeno"))
    for placement in ("local_first", "striped", "best"):
        np.testing.assert_allclose(_step(_sliced("jalapeno", placement, inf)).step_time_s, flat.step_time_s,
                                   rtol=1e-12)


def test_local_first_never_slower_than_striped_and_best_never_slower_than_local_first():
    for name in ("jalapeno", "b200", "mi300x", "mi355x"):
        lo = _step(_sliced(name, "local_first")).step_time_s
        st_ = _step(_sliced(name, "striped")).step_time_s
        be = _step(_sliced(name, "best")).step_time_s
        assert np.all(lo <= st_ * (1 + 1e-12)), name
        assert np.all(be <= lo * (1 + 1e-12)), name


@settings(max_examples=40, deadline=None)
@given(link_tb=st.floats(0.01, 50), lat_ns=st.floats(0, 500), seqs=st.integers(1, 512),
       ctx=st.integers(128, 32768), placement=st.sampled_from(["local_first", "striped", "best"]))
def test_halving_on_die_bandwidth_never_speeds_anything_up(link_tb, lat_ns, seqs, ctx, placement):
    b = Batch.make(decode_seqs=np.array([float(seqs)]), decode_ctx=ctx)
    die = Die(slices=6, topology="mesh2d", mesh_shape=(2, 3), link_bandwidth_bytes_per_s=link_tb * 1e12,
              hop_latency_s=lat_ns * 1e-9)
    full = _step(_sliced("jalapeno", placement, die), batch=b).step_time_s
    half = _step(_sliced("jalapeno", placement, replace(die, link_bandwidth_bytes_per_s=link_tb * 0.5e12)),
                 batch=b).step_time_s
    assert np.all(half >= full * (1 - 1e-12))
    # and locality holds at every bandwidth
    if placement == "striped":
        local = _step(_sliced("jalapeno", "local_first", die), batch=b).step_time_s
        assert np.all(local <= full * (1 + 1e-12))


def test_bytes_read_locally_plus_remotely_equal_the_op_table():
    p = _sliced("jalapeno")
    sc = _step(p)
    for placement in ("local_first", "striped", "best"):
        tr = slice_traffic(sc.ops, p.die, placement)
        np.testing.assert_allclose(tr.hbm_local_bytes + tr.hbm_remote_bytes, sc.ops.bytes, rtol=1e-12)
        if placement == "local_first":
            assert np.all(tr.hbm_remote_bytes == 0)
        if placement == "striped":  # 5/6 of every byte lives on another slice's stack
            np.testing.assert_allclose(tr.hbm_remote_bytes, sc.ops.bytes * 5 / 6, rtol=1e-12)


def test_byte_check_catches_a_placement_that_loses_bytes(monkeypatch):
    """mend53: byte_check was total − remote + remote − total, 0 whatever the placement did.

    Planted: a local_first that reads only 90% of each op's bytes from its own stacks. At point 0 the
    check must then be −10% of the op table's bytes (summed over ops); the honest placements give 0.
    """
    p = _sliced("jalapeno", "local_first")
    sc = _step(p)
    tol = 1e-6 * float(sc.ops.bytes[:, 0].sum())
    for placement in ("local_first", "striped", "best"):
        q = _sliced("jalapeno", placement)
        assert slice_summary(sc.ops, sc.times, q, 0)["byte_check"] == pytest.approx(0.0, abs=tol)
    honest = sliced._traffic_of

    def leaky(ops, s, how):
        local, remote, exch = honest(ops, s, how)
        return 0.9 * local, remote, exch

    monkeypatch.setattr(sliced, "_traffic_of", leaky)
    lost = -0.1 * float(sc.ops.bytes[:, 0].sum())  # local_first reads every byte locally: 10% of them vanish
    assert slice_summary(sc.ops, sc.times, p, 0)["byte_check"] == pytest.approx(lost, rel=1e-9)


def test_two_slice_example_by_hand():
    """One GEMM op on a 2-slice chip, numbers worked by hand (docs/chip.md §3).

    W = 1 GB of weights, A = 10 MB of activations, 1e12 FLOP in fp8; slices joined by one link of
    1 TB/s per direction, 200 ns hop latency, one kernel.
    striped: remote reads (S−1)/S·(W + A) = 505 MB; exchange (S−1)·A − (S−1)/S·A = 5 MB; N = 510 MB.
      port: N/S / 1 TB/s = 255 µs; bisection: N·S/(4(S−1)) / 1 TB/s = 255 µs; + 1 hop = 255.2 µs.
    local_first: N = (S−1)·A = 10 MB → 5 µs + 0.2 µs = 5.2 µs.
    """
    ob = OpBuilder(1)
    ob.op("g", "gemm", "fp8", flop=1e12, weight=1e9, act=1e7, rows=1e6)
    ops, _ = ob.build()
    die = Die(slices=2, topology="pair", link_bandwidth_bytes_per_s=1e12, hop_latency_s=200e-9)
    st_ = slice_traffic(ops, die, "striped")
    assert st_.hbm_remote_bytes[0, 0] == pytest.approx(505e6)
    assert st_.exchange_bytes[0, 0] == pytest.approx(5e6)
    assert st_.network_s[0, 0] == pytest.approx(255.2e-6)
    lf = slice_traffic(ops, die, "local_first")
    assert lf.network_s[0, 0] == pytest.approx(5.2e-6)
    # best: a row split would move W (1 GB), so the column split (local_first) stays
    assert slice_traffic(ops, die, "best").split[0, 0] == "local_first"
    # the op time is the roofline over compute, HBM and the network (+ launches)
    p = load_pricer("b200")
    eff = Efficiency()
    sp = SlicedPricer(p.system, eff, "striped").with_die(die)
    t = sp.op_times(ops)
    flat = load_pricer("b200").with_efficiency(eff).op_times(ops)
    expect = max(flat.compute_s[0, 0], flat.memory_s[0, 0], 255.2e-6) + flat.overhead_s[0, 0]
    assert t.time_s[0, 0] == pytest.approx(expect)


def test_network_time_formula_for_a_ring():
    """8-slice ring, 1 TB/s links: port 2 TB/s, bisection 2 links = 2 TB/s, diameter 4.

    N = 8 GB: port N/8/2e12 = 0.5 ms; bisection N·8/(4·7)/2e12 = 1.1429 ms (binds); + 4 hops x 100 ns.
    """
    die = Die(slices=8, topology="ring", link_bandwidth_bytes_per_s=1e12, hop_latency_s=100e-9)
    t = network_time(die, np.array([[8e9]]), np.array([1.0]))
    assert t[0, 0] == pytest.approx(8e9 * 8 / 28 / 2e12 + 4e-7)


def test_a_slow_network_binds_the_step():
    slow = Die(slices=6, topology="mesh2d", mesh_shape=(2, 3), link_bandwidth_bytes_per_s=20e9, hop_latency_s=50e-9)
    sc = _step(_sliced("jalapeno", "striped", slow))
    assert "on_die_network" in set(sc.bound)
    assert sc.attribution_s["on_die_network"].max() > 0


def _die_table(**over) -> dict:
    d = {"slices": {"value": 4, "source": "test"}, "topology": "mesh2d", "mesh_shape": [2, 2],
         "link_bandwidth_tb_per_s": {"value": 1.0, "source": "test"}, "hop_latency_ns": {"value": 100, "source": "test"}}
    d.update(over)
    return d


def _with_die(die: dict) -> dict:
    data = tomllib.loads(_system_path("mi300x")[1].read_text())
    data["die"] = die
    return data


@pytest.mark.parametrize("die, words", [
    (_die_table(mesh_shape=[2, 3]), ["die.mesh_shape", "holds 6 slices", "rows x columns"]),
    (_die_table(slices={"value": 3, "source": "test"}, topology="ring", mesh_shape=None),
     ["die.slices", "whole hbm stacks", "multiple"]),
    (_die_table(link_bandwidth_tb_per_s=None), ["link_bandwidth_tb_per_s"]),
    (_die_table(topology="torus"), ["die", "topology"]),
    (_die_table(link_bandwidth_tb_per_s={"value": 1.0, "source": "test", "low": 2.0, "high": 1.5}), ["low <= high"]),
])
def test_malformed_die_tables_name_the_field(die, words):
    die = {k: v for k, v in die.items() if v is not None}
    with pytest.raises(SpecError) as e:
        system_from_dict(_with_die(die), "mi300x.toml")
    msg = str(e.value).lower()
    for w in words:
        assert w.lower() in msg, (w, msg)


def test_catalog_dies_and_their_sources():
    for name, slices in (("jalapeno", 6), ("b200", 2), ("gb300-nvl72", 2), ("mi300x", 4), ("mi355x", 2),
                         ("vera-rubin-nvl72", 2), ("h200", 1)):
        s = load_pricer(name).system
        assert s.chip.die.slices == slices
        assert any(k.startswith("die.") for k in s.sources), name
    assert load_pricer("jalapeno").system.chip.die.placement == "local_first"
    assert load_pricer("b200").system.chip.die.placement == "striped"


def test_chip_model_pricer_refuses_a_placement_without_the_sliced_model():
    with pytest.raises(SpecError, match="--placement"):
        chip_model_pricer(load_pricer("b200"), "flat", "striped")
    with pytest.raises(SpecError, match="--chip-model"):
        chip_model_pricer(load_pricer("b200"), "tiles")


def test_cli_step_slices(capsys):
    code, out, err = run(capsys, "step", "--system", "jalapeno", "--dp", "8", "--ep", "8", "--batch", "64",
                         "--slices")
    assert code == 0, err
    assert "6 slices, placement local_first, mesh2d" in out and "(sum)" in out and "on_die_network" in out
    code, out, err = run(capsys, "step", "--system", "b200", "--dp", "8", "--ep", "8", "--batch", "64", "--slices",
                         "--placement", "sideways")
    check_error(code, out, err, "--placement", "local_first")
    code, out, err = run(capsys, "frontier", "--system", "b200", "--placement", "striped")
    check_error(code, out, err, "--placement", "--chip-model sliced")


def test_die_keys_are_variant_keys(capsys):
    """--set reaches the [die] table: a 0.1 TB/s on-die link makes striped decode network-bound,
    and 8 HBM stacks give 8 slices (one per stack when slices is left out, as for Jalapeño)."""
    import json

    code, out, err = run(capsys, "step", "--system", "jalapeno", "--dp", "8", "--ep", "8", "--batch", "64",
                         "--slices", "--placement", "striped", "--set", "die.link_bandwidth_tb_per_s=0.1", "--json")
    assert code == 0, err
    assert json.loads(out)["bound"] == "on_die_network"
    code, out, err = run(capsys, "step", "--system", "jalapeno", "--dp", "8", "--ep", "8", "--batch", "64",
                         "--slices", "--set", "chip.hbm_stacks=8", "--json")
    assert code == 0, err
    assert json.loads(out)["slices"]["slices"] == 8


# ---- tile-level mapping (cost/tiles.py) --------------------------------------------------------

def test_one_row_gemm_on_h100_by_hand():
    """m = 1, k = 7168, n = 2048, BF16 on H100 (132 SMs, wgmma M = 64, 228 KiB):
    a 64-row tile wastes 63/64 of its rows; the best tiling fills 128 of 132 SMs in one wave
    (e.g. 8 column tiles of 256 x split-K 16) → η = 1/64 · 128/132."""
    from jalapeno.cost.tiles import gemm_tiles

    t = gemm_tiles(1.0, 7168.0, 2048.0, load_pricer("h100").system.chip, 2.0)
    assert float(t.eta) == pytest.approx(1 / 64 * 128 / 132)
    assert float(t.tile_m) == 64


def test_full_waves_of_full_tiles_reach_the_whole_machine():
    """132 row tiles of 64 x 64 (m = 64·132, n = 64, k = 256: no split-K) fill H100 once: η = 1."""
    from jalapeno.cost.tiles import gemm_tiles

    t = gemm_tiles(64.0 * 132, 256.0, 64.0, load_pricer("h100").system.chip, 2.0)
    assert float(t.eta) == pytest.approx(1.0)
    # 133 row tiles: two waves of 64-row tiles, or one wave of 67 128-row tiles (the last half
    # empty) — both spend 132 x 2 tile-times of 64 x 64 on 133 useful ones: 8512·64 / (2·132·64·64)
    t2 = gemm_tiles(64.0 * 133, 256.0, 64.0, load_pricer("h100").system.chip, 2.0)
    assert float(t2.eta) == pytest.approx(8512 / 16896)


def test_blackwell_tile_is_128_rows_and_amd_16():
    from jalapeno.cost.tiles import gemm_tiles

    assert float(gemm_tiles(1.0, 7168.0, 2048.0, load_pricer("b200").system.chip, 1.0).eta) <= 1 / 128
    assert float(gemm_tiles(16.0, 7168.0, 2048.0, load_pricer("mi300x").system.chip, 2.0).eta) > 0.5


def test_tile_model_refuses_a_chip_without_sm_counts(capsys):
    from jalapeno.cost.tiles import TiledPricer

    p = load_pricer("jalapeno")
    with pytest.raises(SpecError, match="compute_units"):
        TiledPricer(p.system, p.efficiency)
    check_error(*run(capsys, "step", "--system", "jalapeno", "--tiles"), "--tiles", "compute_units")
    code, out, err = run(capsys, "step", "--system", "b200", "--dp", "8", "--ep", "8", "--batch", "64", "--tiles")
    assert code == 0 and "GEMM tile mapping" in out and "moe.experts" in out
    code, out, err = run(capsys, "step", "--system", "b200", "--dp", "8", "--ep", "8", "--chip-model", "tiled", "--json")
    assert code == 0, err


def test_tiled_pricer_only_changes_gemm_compute():
    from jalapeno.cost.tiles import TiledPricer

    p = load_pricer("h100")
    sc = _step(p, layout=Layout(tp=8), model=load_model("llama-3.3-70b"))
    flat, tiled = p.op_times(sc.ops), TiledPricer(p.system, p.efficiency).op_times(sc.ops)
    gemm = np.array([k in ("gemm", "moe") for k in sc.ops.kind])
    np.testing.assert_array_equal(flat.memory_s, tiled.memory_s)
    np.testing.assert_array_equal(flat.compute_s[~gemm], tiled.compute_s[~gemm])
    assert not np.allclose(flat.compute_s[gemm], tiled.compute_s[gemm])


def test_break_it_chip_model_cases(capsys):
    check_error(*run(capsys, "step", "--system", "b200", "--dp", "8", "--ep", "8", "--batch", "64", "--slices",
                     "--chip-model", "tiled"), "--slices", "--chip-model")
    check_error(*run(capsys, "step", "--system", "jalapeno", "--set", "die.link_bandwidth_tb_per_s=0.001"),
                "--set", "die.link_bandwidth_tb_per_s", "--chip-model sliced")
    # an empty step is refused as such (before the tile model could say it "holds no tile")
    check_error(*run(capsys, "step", "--system", "h100", "--model", "llama-3.3-70b", "--tp", "8", "--dp", "1",
                     "--ep", "1", "--batch", "0", "--prefill-tokens", "0", "--tiles"), "--batch", "no tokens")
