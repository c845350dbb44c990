"""The table-lookup pricer (cost/table_pricer.py, fit/table_lookup.py) and leave-one-system-out
bands (fit/loso.py, fit/calibrate.band_values) — issue 18.

Expected values are computed by hand: a plane in log coordinates is reproduced exactly by
bilinear interpolation; a constant correction doubles an op's time. Tests reading the kernel
tables skip without the ``[calibrate]`` extra.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from cli_runner import check_error, run

from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import Pricer, RooflinePricer
from jalapeno.cost.table_pricer import KernelSurface, TablePricer
from jalapeno.errors import SpecError
from jalapeno.fit import calibrate as cal
from jalapeno.fit.loso import LOSO_DONOR, load_loso, loso_set
from jalapeno.specs.calibration import load_calibration
from jalapeno.specs.catalog import load_system
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY, flatten_params


def _plane(x, y):
    return 0.1 * x - 0.05 * y


def _plane_surface() -> KernelSurface:
    # points at the cell centres of a 0.5-step grid starting at (10, 20): 10.25, 10.75, ...
    xs, ys = np.meshgrid(10.25 + 0.5 * np.arange(8), 20.25 + 0.5 * np.arange(6), indexing="ij")
    return KernelSurface.from_points(2.0 ** xs.ravel(), 2.0 ** ys.ravel(), _plane(xs, ys).ravel())


def test_surface_reproduces_a_plane_between_cell_centres():
    s = _plane_surface()
    got = s.log_ratio(np.array([2.0 ** 11.6, 2.0 ** 12.0]), np.array([2.0 ** 21.3, 2.0 ** 22.0]))
    assert got == pytest.approx([0.1 * 11.6 - 0.05 * 21.3, 0.1 * 12.0 - 0.05 * 22.0])


def test_surface_keeps_the_edge_value_beyond_the_table():
    s = _plane_surface()
    # x beyond the last centre (13.75), y below the first (20.25): clamped to that corner
    assert s.log_ratio(np.array([2.0 ** 30]), np.array([2.0 ** 5]))[0] == pytest.approx(_plane(13.75, 20.25))


def test_surface_cell_value_is_the_median_and_holes_take_their_neighbours_mean():
    # three cells along x; the middle one is empty; the first holds three rows (median 1.0)
    x = 2.0 ** np.array([10.1, 10.2, 10.3, 11.1])
    y = np.full(4, 2.0 ** 20.1)
    s = KernelSurface.from_points(x, y, np.array([0.0, 1.0, 5.0, 3.0]))
    assert s.values[:, 0] == pytest.approx([1.0, 2.0, 3.0])
    assert s.rows == 4


def test_surface_without_a_usable_point_is_refused():
    with pytest.raises(SpecError, match="no measured row with positive FLOP"):
        KernelSurface.from_points(np.array([0.0]), np.array([1.0]), np.array([0.1]))


def _ops():
    ob = OpBuilder(3)
    ob.gemm("proj", "bf16", np.array([0.0, 64.0, 4096.0]), 7168.0, 2048.0, 2.0, 2.0, count=61)
    ob.op("norm", "memory", "bf16", act=np.array([1e6, 2e6, 3e6]))
    return ob.build()[0]


def test_table_pricer_scales_ops_with_a_table_and_leaves_the_rest():
    system = load_system("b200")
    flat = KernelSurface.from_points(np.array([1e9, 2e9]), np.array([1e7, 2e7]), np.full(2, math.log(2.0)))
    tp = TablePricer(system, DEFAULT_EFFICIENCY, {("gemm", "bf16"): flat})
    rp = RooflinePricer(system, DEFAULT_EFFICIENCY)
    ops = _ops()
    t, r = tp.op_times(ops), rp.op_times(ops)
    assert t.time_s[0, 1:] == pytest.approx(2.0 * r.time_s[0, 1:])  # measured 2x the roofline
    assert t.time_s[0, 0] == 0.0  # no rows: the GEMM does not run
    assert t.time_s[1] == pytest.approx(r.time_s[1])  # no table for memory ops
    assert isinstance(tp, Pricer) and isinstance(tp.with_efficiency(DEFAULT_EFFICIENCY), TablePricer)


def test_table_pricer_refuses_a_bad_surface_key():
    with pytest.raises(SpecError, match=r"not an \(op kind, format\) pair"):
        TablePricer(load_system("b200"), DEFAULT_EFFICIENCY, {"gemm": None})


def test_table_pricer_for_a_system_without_tables_names_the_fix():
    from jalapeno.fit.table_lookup import load_any_pricer

    with pytest.raises(SpecError, match="no measured kernel tables for mi300x") as e:
        load_any_pricer("mi300x", pricer="table")
    assert "--pricer roofline" in str(e.value)
    with pytest.raises(SpecError, match="unknown pricer 'exact'"):
        load_any_pricer("b200", pricer="exact")


def test_table_pricer_for_a_system_file_says_it_has_no_tables(capsys, tmp_path):
    """A copy of a catalog system under its own name was refused as 'unknown system 'my-a100' ... or a
    file path', though the user had given a file path."""
    from importlib import resources

    text = (resources.files("jalapeno") / "data" / "systems" / "a100-sxm.toml").read_text()
    p = tmp_path / "mine.toml"
    p.write_text(text.replace('name = "a100-sxm"', 'name = "my-a100"', 1))
    check_error(*run(capsys, "predict", "-s", str(p), "-m", "qwen3-32b", "--tp", "2", "-c", "4", "--pricer", "table"),
                "--pricer", f"no measured kernel tables for my-a100 ({p})", "--pricer roofline")


def test_cli_pricer_errors(capsys):
    check_error(*run(capsys, "step", "-s", "mi300x", "-m", "llama-3.3-70b", "--tp", "8", "-b", "8",
                     "--pricer", "table"), "--pricer", "no measured kernel tables for mi300x", "--pricer roofline")
    check_error(*run(capsys, "step", "-s", "b200", "-m", "llama-3.3-70b", "--tp", "8", "-b", "8",
                     "--pricer", "exact"), "--pricer", "unknown pricer 'exact'", "roofline, table, auto")


def test_table_pricer_on_measured_tables_reproduces_a_measured_gemm():
    pytest.importorskip("aiconfigurator_core")
    pytest.importorskip("pyarrow")
    from jalapeno.fit.kernel_tables import load_table
    from jalapeno.fit.kernels import gemm_table
    from jalapeno.fit.table_lookup import load_table_pricer, serving_time, standalone_floors

    tp = load_table_pricer("b200")
    assert {("gemm", "bf16"), ("gemm", "fp8"), ("gemm", "fp4"), ("moe", "fp4")} <= set(tp.surfaces)
    df, _ = load_table("b200_sxm", "gemm", "gemm_perf")
    row = df[(df.gemm_dtype == "bfloat16") & (df.m == 4096) & (df.n == 8192) & (df.k == 8192)].latency.min()
    tab = gemm_table(np.array([4096.0]), np.array([8192.0]), np.array([8192.0]), "bf16", 2.0, 2.0)
    times = tp.op_times(tab)
    roof = RooflinePricer(tp.system, tp.efficiency).op_times(tab)
    want = serving_time(np.array([row * 1e-3]), standalone_floors("b200")[("gemm", "bf16")], roof)[0]
    assert times.time_s[0, 0] == pytest.approx(want, rel=0.1)  # a grid cell's median, not the row itself


# ---- leave-one-system-out -----------------------------------------------------------------------

def test_band_values_move_every_term_by_the_error():
    mid = {"hbm_fraction": 0.8, "gemm.fp8.peak_fraction": 0.6, "collective_launch_s": 2e-6,
           "gemm.bf16.half_rows": 100.0, "moe.fp4.token_passes": 4.0, "link_fraction": 0.9}
    low, high = cal.band_values(mid, 0.25)
    assert low == pytest.approx({"hbm_fraction": 0.64, "gemm.fp8.peak_fraction": 0.48, "collective_launch_s": 2.5e-6,
                                 "gemm.bf16.half_rows": 125.0, "moe.fp4.token_passes": 5.0, "link_fraction": 0.72})
    assert high == pytest.approx({"hbm_fraction": 1.0, "gemm.fp8.peak_fraction": 0.75, "collective_launch_s": 1.6e-6,
                                  "gemm.bf16.half_rows": 80.0, "moe.fp4.token_passes": 3.2, "link_fraction": 1.0})


def test_loso_donors_are_another_chip():
    family = {"h100": "hopper", "h200": "hopper", "b200": "blackwell", "gb200-nvl72": "blackwell",
              "b300": "blackwell-ultra", "gb300-nvl72": "blackwell-ultra"}
    assert set(LOSO_DONOR) == set(family)
    for held, donor in LOSO_DONOR.items():
        assert family[donor] != family[held], held
    with pytest.raises(SpecError, match="no leave-one-out donor for jalapeno"):  # what it borrows: test_loso_withheld.py
        loso_set("jalapeno")


def test_shipped_loso_results_cover_every_system_with_tables():
    d = load_loso()
    assert set(d["systems"]) == set(LOSO_DONOR)
    loso = sorted(v["loso_median_ape"] for v in d["systems"].values())
    assert d["band_error"] == pytest.approx(float(np.median(loso)), rel=1e-5)  # 6 significant digits each
    for n, v in d["systems"].items():
        assert v["donor"] == LOSO_DONOR[n] and v["preferred_pricer"] in ("roofline", "table")


@pytest.mark.parametrize("name", ["jalapeno", "vera-rubin-nvl72"])
def test_derived_band_is_the_loso_error(name):
    c = load_calibration(name)
    err = load_loso()["band_error"]
    assert c["provenance"]["band_error"] == pytest.approx(err)
    low, high = cal.band_values(flatten_params(c["parameters"]), err)
    assert flatten_params(c["low"]) == pytest.approx(low)
    assert flatten_params(c["high"]) == pytest.approx(high)


def test_auto_pricer_follows_the_shipped_end_to_end_errors():
    import tomllib
    from importlib import resources

    from jalapeno.fit.table_lookup import resolve_pricer

    d = tomllib.loads((resources.files("jalapeno") / "data" / "validation" / "loso_error.toml").read_text())
    for name, v in d["systems"].items():
        lower = "table" if v["table_median_ape"] < v["roofline_median_ape"] else "roofline"
        assert resolve_pricer(name, "auto") == lower == v["preferred_pricer"], name
    assert resolve_pricer("mi300x", "auto") == "roofline"  # no tables
    assert resolve_pricer("h200", "table") == "table"


def test_cli_table_pricer_and_a_chip_model_conflict(capsys):
    check_error(*run(capsys, "step", "-s", "b200", "-m", "llama-3.3-70b", "--tp", "8", "-b", "8",
                     "--pricer", "table", "--chip-model", "sliced"), "--pricer", "--chip-model sliced",
                "use one of the two")

