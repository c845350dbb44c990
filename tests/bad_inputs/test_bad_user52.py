"""Round 52's break pass (break52): system-file keys read laxly or without a ceiling, and Python API entry points
that crashed with a bare TypeError/AttributeError/ValueError, kept one of two systems silently, or refused a
numpy integer. Each case below fails on main 73780f93."""

from __future__ import annotations

import numpy as np
import pytest

import jalapeno as jp
from jalapeno.errors import JalapenoError


def _message(fn) -> str:
    with pytest.raises(JalapenoError) as e:
        fn()
    return str(e.value)


# ---- system files: links_per_chip ------------------------------------------------------------------------------


@pytest.mark.parametrize("links", [8, 14, 10**30])
def test_full_mesh_links_past_the_peers_are_refused(links):
    """MI300X's node is a full mesh of 8 chips: 7 peers, one link each (docs/catalog.md: full mesh chips - 1). The
    model gives a group of g chips min(g - 1, L)/L of the level's bandwidth, so L = 14 priced all 8 chips at 7/14 of
    it and L = 1e30 at 7e-30 (a TP8 step 4.5x slower), silently."""
    msg = _message(lambda: jp.load_system("mi300x", (("levels.node.links_per_chip", links),)))
    assert f"links_per_chip {links} on a full mesh of 8 chips" in msg, msg
    assert f"only 7/{links} of bandwidth_gb_per_s" in msg and "give links_per_chip = 7" in msg, msg


def test_full_mesh_one_link_a_peer_still_loads():
    """7 links on 8 chips is MI300X's own value (mi300x.toml), and fewer (not every pair joined) is allowed."""
    for links in (7, 4):
        lv = jp.load_system("mi300x", (("levels.node.links_per_chip", links),)).levels[0]
        assert lv.links_per_chip == links


def test_torus_links_past_six_are_refused():
    """A 3-D torus chip has two neighbours in each of 3 dimensions: 6 links (Jalapeño's global level). The bisection
    bound a·L/8 grows with L at a fixed per-chip bandwidth, so 12 links priced a slower all-to-all, and 1e30 a 1 MB
    all-to-all over 2,048 chips in 1.2e31 µs."""
    msg = _message(lambda: jp.load_system("jalapeno", (("levels.global.links_per_chip", 12),)))
    assert "links_per_chip 12 on a 3-D torus" in msg and "give links_per_chip = 6" in msg, msg
    assert jp.load_system("jalapeno", (("levels.global.links_per_chip", 6),)).levels[-1].links_per_chip == 6


# ---- system files: torus_dims / mesh_shape read strictly, list overrides through the API ------------------------


@pytest.mark.parametrize(
    "key, value, shown",
    [
        ("levels.global.torus_dims", ["8", "16", "16"], "levels.global.torus_dims.0: must be a whole number, got '8'"),
        ("levels.global.torus_dims", [8, 16, 16.0], "levels.global.torus_dims.2: must be a whole number, got 16.0"),
        ("die.mesh_shape", [True, 6], "die.mesh_shape.0: must be a whole number, got true"),
        ("die.mesh_shape", ["2", 3], "die.mesh_shape.0: must be a whole number, got '2'"),
    ],
)
def test_torus_dims_and_mesh_shape_are_whole_numbers(key, value, shown):
    """["8", "16", "16"] was read as the torus [8, 16, 16] and mesh_shape [true, 6] as a 1 x 6 mesh of Jalapeño's
    6 slices (pydantic's lax int), silently; every other count in the file is strict."""
    assert shown in _message(lambda: jp.load_system("jalapeno", ((key, value),)))


def test_list_and_table_overrides_through_the_api():
    """load_system(name, (("levels.global.torus_dims", [16, 8, 16]),)) raised TypeError: unhashable type: 'list'
    (the loaders cache on the overrides); a table value is read as --set reads one, its keys as dotted leaves."""
    s = jp.load_system("jalapeno", (("levels.global.torus_dims", [16, 8, 16]),))
    assert s.levels[-1].torus_dims == (16, 8, 16)
    assert jp.load_system("jalapeno", (("die.mesh_shape", [3, 2]),)).chip.die.mesh_shape == (3, 2)
    eff = jp.load_efficiency("h200", "calibrated", (("efficiency.gemm", {"bf16": {"peak_fraction": 0.7}}),))
    assert eff.gemm["bf16"].peak_fraction == 0.7
    fp8 = jp.load_system("h200", (("chip.peak_dense_tflops", {"fp8": 5000}),)).chip.peak_flop_per_s["fp8"]
    assert fp8 == 5000e12  # 5,000 TFLOPS in FLOP/s


# ---- Python API -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def llama_h200():
    model, pricer = jp.load_model("llama-3.3-70b"), jp.load_pricer("h200")
    dep = jp.Deployment(precision=jp.get_precision("fp8"), decode=jp.Pool(jp.Layout(tp=8)))
    return model, pricer, dep


@pytest.mark.parametrize(
    "arg, shown",
    [
        ("wl", "serve_at_concurrency: wl: expected a Workload, got str"),
        ("dep", "serve_at_concurrency: dep: expected a Deployment, got Layout"),
        ("model", "serve_at_concurrency: model: expected a ModelSpec, got str"),
    ],
)
def test_serve_at_concurrency_names_a_wrong_argument(llama_h200, arg, shown):
    """serve_at_concurrency(m, p, dep, "1k1k", 8) raised AttributeError: 'str' object has no attribute 'mean_osl'
    (predict_point names the same arguments)."""
    from jalapeno.serve.point import serve_at_concurrency

    model, pricer, dep = llama_h200
    args = {"model": model, "pricer": pricer, "dep": dep, "wl": jp.get_workload("1k1k")}
    args[arg] = {"wl": "1k1k", "dep": jp.Layout(tp=8), "model": "llama-3.3-70b"}[arg]
    assert _message(lambda: serve_at_concurrency(concurrency=8, **args)).startswith(shown)


def test_serve_at_concurrency_refuses_a_nested_concurrency(llama_h200):
    """[[1, 2]] raised numpy's 'all the input arrays must have same number of dimensions'."""
    from jalapeno.serve.point import serve_at_concurrency

    model, pricer, dep = llama_h200
    msg = _message(lambda: serve_at_concurrency(model, pricer, dep, jp.get_workload("1k1k"), np.array([[1, 2]])))
    assert msg.startswith("concurrency: must be one number or a flat list of numbers, got an array of shape (1, 2)")


def _no_sweep(*_a, **_k):
    raise AssertionError("swept before the inputs were checked")


def test_compare_systems_refuses_two_systems_of_one_name(monkeypatch):
    """[h200, h200] compared one system (the frontiers are keyed by name), silently; the CLI refuses it
    (--systems: two systems are named 'h200')."""
    monkeypatch.setattr("jalapeno.analysis.comparison.in_workers", _no_sweep)
    p = jp.load_pricer("h200")
    msg = _message(
        lambda: jp.compare_systems(
            jp.load_model("llama-3.3-70b"), [p, p], jp.get_workload("1k1k"), jp.get_precision("fp8")
        )
    )
    assert msg.startswith("compare_systems: systems: two systems are named 'h200'"), msg


@pytest.mark.parametrize(
    "floors, shown",
    [
        ([100.0, 300.0], "compare_systems: floors: expected a mapping"),
        ({"fast": "100"}, "compare_systems: floors.fast: expected a tier name"),
    ],
)
def test_compare_systems_checks_floors_before_sweeping(monkeypatch, floors, shown):
    """floors=[100, 300] raised AttributeError: 'list' object has no attribute 'items' after every system had been
    swept."""
    monkeypatch.setattr("jalapeno.analysis.comparison.in_workers", _no_sweep)
    msg = _message(
        lambda: jp.compare_systems(
            jp.load_model("llama-3.3-70b"),
            [jp.load_pricer("h200"), jp.load_pricer("h100")],
            jp.get_workload("1k1k"),
            jp.get_precision("fp8"),
            floors=floors,
        )
    )
    assert msg.startswith(shown), msg


def test_layout_reads_numpy_integer_degrees(llama_h200):
    """Layout(tp=np.int64(8)) was refused as 'tp: must be a positive integer, got np.int64(8)' where Batch, MTP and
    plan_capacity read numpy scalars (test_good_input38); it is TP8, priced as Layout(tp=8)."""
    model, pricer, _ = llama_h200
    lay = jp.Layout(tp=np.int64(8), eplb=None)
    assert type(lay.tp) is int and lay == jp.Layout(tp=8)
    batch = jp.Batch.make(decode_seqs=8, decode_ctx=1024)
    p = jp.get_precision("fp8")
    assert (
        jp.step_cost(model, pricer, lay, p, batch).time_s()
        == jp.step_cost(model, pricer, jp.Layout(tp=8), p, batch).time_s()
    )
    assert "tp: must be a positive integer, got np.True_" in _message(
        lambda: jp.step_cost(model, pricer, jp.Layout(tp=np.bool_(True)), p, batch)
    )


# ---- design spaces ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["name", "chip.name", "levels.rack.note", "description"])
def test_design_space_refuses_a_label_parameter(tmp_path, key):
    """[params."chip.name"] choices = ["a", "b"] was searched: a label prices nothing (specs/catalog.LABEL_KEYS), so
    every trial tied along it and its importance was noise, silently."""
    from jalapeno.specs.design_space import load_design_space

    p = tmp_path / "space.toml"
    p.write_text(
        'name = "s"\nbase = "jalapeno"\n[objective]\nmetrics = ["tok_s_per_kw"]\n[[cases]]\nmodel = "deepseek-r1"\n'
        f'workload = "8k1k"\n[params."chip.hbm_stacks"]\nchoices = [4, 6]\n[params."{key}"]\nchoices = ["a", "b"]\n'
    )
    msg = _message(lambda: load_design_space(p))
    assert msg.startswith(f"space.toml: params.{key}: is a label: it prices nothing"), msg


def test_design_space_range_is_a_whole_number_of_steps(tmp_path):
    """low 300, high 1200, step 7: 900 / 7 = 128.57 steps, so Optuna cut high to 300 + 128 x 7 = 1,196 with a
    Python warning the search did not show; the file is refused, naming both whole-step highs (1,196 and 1,203)."""
    from jalapeno.specs.design_space import load_design_space

    p = tmp_path / "space.toml"
    p.write_text(
        'name = "s"\nbase = "jalapeno"\n[objective]\nmetrics = ["tok_s_per_kw"]\n[[cases]]\nmodel = "deepseek-r1"\n'
        'workload = "8k1k"\n[params."levels.rack.bandwidth_gb_per_s"]\nlow = 300\nhigh = 1200\nstep = 7\n'
    )
    msg = _message(lambda: load_design_space(p))
    assert "params.levels.rack.bandwidth_gb_per_s: high - low = 900 is not a whole number of steps of 7" in msg, msg
    assert "give high = 1196 or 1203" in msg
    p.write_text(p.read_text().replace("step = 7", "step = 50"))  # 18 steps (examples/explore_700w.toml)
    assert load_design_space(p).params["levels.rack.bandwidth_gb_per_s"].step == 50


# ---- results store ----------------------------------------------------------------------------------------------


def test_two_runs_storing_at_once_take_two_folders(tmp_path, monkeypatch):
    """Two compare --store runs into one store both probed runs/compare-x-1 free; the second's mkdir raised
    FileExistsError (a traceback after its sweep). The race is played here by creating the folder, as the other run
    would, between the probe and the mkdir: the run takes compare-x-2."""
    import pathlib

    from jalapeno.analysis import results_store as rs

    real_mkdir, raced = pathlib.Path.mkdir, []

    def racing_mkdir(self, *a, **k):
        if self.name == "compare-x-1" and not raced:  # the other run wins the first free name
            raced.append(True)
            real_mkdir(self, *a, **k)
        return real_mkdir(self, *a, **k)

    (tmp_path / "runs").mkdir()
    monkeypatch.setattr(pathlib.Path, "mkdir", racing_mkdir)
    d = rs.new_run_dir(tmp_path, "compare", "x")
    assert raced and d.name == "compare-x-2" and d.is_dir()


def test_compute_dies_within_the_plausible_range():
    """die.compute_dies (MI300X: 8 XCDs) is shown by hardware show and priced by nothing: 1e30 was shown as a 31-digit
    die count. It takes the plausibility range 1-1,024 every other count of the file has its own of."""
    msg = _message(lambda: jp.load_system("mi300x", (("die.compute_dies", 2000),)))
    assert "die.compute_dies: 2000 dies is outside the plausible range 1-1024 dies" in msg, msg
    assert jp.load_system("mi300x").chip.die.compute_dies == 8


def test_variant_levels_entry_changing_one_field_names_the_dotted_key(tmp_path):
    """A variant of h200 with [[levels]] name = "node" and only a new bandwidth was refused as 'levels.node.chips: is
    missing. Fix: add levels.node.chips' - and with every key added, the list replaced h200's two levels (node,
    cluster), dropping the cluster level silently. The refusal now says the list replaces the base's levels and names
    the dotted key; the dotted key changes that one field and keeps both levels."""
    bw = '{ value = 900, source = "test" }'
    p = tmp_path / "v.toml"
    p.write_text(f'base = "h200"\nname = "v"\n[[levels]]\nname = "node"\nbandwidth_gb_per_s = {bw}\n')
    msg = _message(lambda: jp.load_system(str(p)))
    assert msg.startswith(
        "v.toml: levels: [[levels]] replaces all of h200's levels (node, cluster), and its entry 'node' gives no chips"
    ), msg
    assert "write levels.node.bandwidth_gb_per_s = ... (no [[levels]])" in msg
    p.write_text(f'base = "h200"\nname = "v"\nlevels.node.bandwidth_gb_per_s = {bw}\n')
    s = jp.load_system(str(p))
    assert [lv.name for lv in s.levels] == ["node", "cluster"] and s.levels[0].bandwidth_bytes_per_s == 900e9


@pytest.mark.parametrize(
    "key, listed",
    [
        ("kv_tiers.none.0", "kv_tiers.none"),
        ("kv_tiers.none.ssd", "kv_tiers.none"),
        ("chip.fp4_block_formats.formats.0", "chip.fp4_block_formats.formats"),
    ],
)
def test_set_into_a_list_of_values_names_the_list(key, listed):
    """--set kv_tiers.none.0=host was read as a link level: 'names a link level, not one of its fields. Fix: write
    e.g. kv_tiers.none.0.bandwidth_gb_per_s=<value>' (a key that does not exist), and chip.fp4_block_formats.formats.0
    'no link level named '0'. Fix: use one of  (or an index 0--1)'. Such a list is given whole."""
    msg = _message(lambda: jp.load_system("jalapeno", ((key, "host"),)))
    assert msg.startswith(f"--set: {key}: {listed} is a list of values: its items are not set one by one"), msg
    assert f"write the whole list, e.g. {listed}=[...]" in msg and "link level" not in msg
