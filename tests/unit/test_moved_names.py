"""Names moved by a module split stay importable from the module they left, but no module in ``src`` imports them
through it (round 51, code51: after round 50's splits ~30 src modules still did, e.g. serve/point's
``from jalapeno.cost.pricer import with_pool_backends``). The old module's ``__getattr__`` is jalapeno/moved.py's
``moved_names`` (cost/pricer, specs/formats, specs/hardware, serve/sim/simulation; specs/model_config, round 52) or
a plain re-export (the splits in :data:`REEXPORTS`)."""

import ast
import importlib
import warnings
from pathlib import Path

import pytest

from jalapeno.moved import MOVED, moved_names

PKG = Path(__file__).resolve().parents[2] / "src" / "jalapeno"

#: The modules whose ``__getattr__`` is moved_names (importing them fills MOVED).
SHIMS = (
    "jalapeno.cost.pricer",
    "jalapeno.specs.formats",
    "jalapeno.specs.hardware",
    "jalapeno.serve.sim.simulation",
    "jalapeno.specs.model_config",
    "jalapeno.deploy.memory_fit",  # round 53
)

#: Round 50's splits whose old module re-exports the moved names with a plain import: old module -> new module
#: (or a tuple of the new modules, where one module was split two ways).
REEXPORTS = {
    "jalapeno.specs.efficiency": "jalapeno.specs.kernel_lookup",
    "jalapeno.fit.mlperf_engines": "jalapeno.fit.submitted_engine",
    "jalapeno.fit.aic_rows": "jalapeno.fit.aic_row_engine",
    "jalapeno.report.tables": "jalapeno.report.compare_cells",
    "jalapeno.serve.point": "jalapeno.serve.idle_start",
    "jalapeno.serve.sim.simulation": "jalapeno.serve.sim.instances",
    "jalapeno.specs.model_config": "jalapeno.specs.config_fields",  # round 52
    "jalapeno.serve.sim.scheduler": "jalapeno.serve.sim.lookahead",
    "jalapeno.serve.sim.trace": "jalapeno.serve.sim.trace_cells",  # round 53
    "jalapeno.report.page": "jalapeno.report.page_data",
    "jalapeno.fit.collectives": "jalapeno.fit.ep_all_to_all",
    "jalapeno.fit.validate": "jalapeno.fit.ix_points",
    "jalapeno.cost.step": "jalapeno.cost.step_bounds",
    "jalapeno.cost.ops": ("jalapeno.cost.expert_ops", "jalapeno.cost.gemm_allreduce"),
    "jalapeno.serve.analytic": ("jalapeno.serve.serving_points", "jalapeno.serve.agg_batch_cap"),
    "jalapeno.cli.engine_opts": ("jalapeno.cli.as_deployed", "jalapeno.cli.engine_memory_opts"),
    "jalapeno.cli.serving_opts": ("jalapeno.cli.pool_opts", "jalapeno.cli.number_lists"),  # round 55: number_lists
    "jalapeno.analysis.records": "jalapeno.analysis.bound_words",
    "jalapeno.fit.moe_backends": "jalapeno.fit.vllm_moe_curves",
    "jalapeno.specs.design_space": "jalapeno.specs.design_space_keys",
    "jalapeno.cli.common": "jalapeno.cli.out_paths",  # round 54
    "jalapeno.cli.system_opts": "jalapeno.cli.system_notes",
    "jalapeno.cli.audit_cmds": "jalapeno.cli.audit_tables",
    "jalapeno.cli.simulate_cmd": "jalapeno.cli.simulate_lines",
    "jalapeno.cli.serving_cmds": "jalapeno.cli.compare_lines",
    "jalapeno.analysis.capacity": "jalapeno.analysis.plan_inputs",
}


def _path(module: str) -> Path:
    return PKG.parent / (module.replace(".", "/") + ".py")


def _defined(tree: ast.Module) -> set[str]:
    out = set()
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.Assign):
            out |= {t.id for t in n.targets if isinstance(t, ast.Name)}
    return out


def moved_table() -> dict[str, dict[str, str]]:
    """old module -> {moved name: new module}: the shims' registry and the names each old module of
    :data:`REEXPORTS` imports from its new one (and the new one defines)."""
    for m in SHIMS:
        importlib.import_module(m)
    table = {m: dict(MOVED[m]) for m in SHIMS}
    for old, news in REEXPORTS.items():
        for new in (news,) if isinstance(news, str) else news:  # an old module split two ways: a tuple (round 53)
            defined = _defined(ast.parse(_path(new).read_text()))
            for n in ast.parse(_path(old).read_text()).body:
                if isinstance(n, ast.ImportFrom) and n.module == new:
                    table.setdefault(old, {}).update({a.name: new for a in n.names if a.name in defined})
    return table


def through_old_home(source: str, module: str, table: dict[str, dict[str, str]]) -> list[str]:
    """Each import in ``source`` (the text of ``module``) of a moved name through the module it left, as
    ``line: from OLD import NAME (now NEW)``; imports inside functions count. The old module itself is exempt."""
    found = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.ImportFrom) and n.module in table and n.module != module:
            for a in n.names:
                new = table[n.module].get(a.name)
                if new:
                    found.append(f"{n.lineno}: from {n.module} import {a.name} (now {new})")
    return found


def test_no_src_module_imports_a_moved_name_through_its_old_module():
    table = moved_table()
    bad = {}
    for p in sorted(PKG.rglob("*.py")):
        module = ".".join(p.relative_to(PKG.parent).with_suffix("").parts).removesuffix(".__init__")
        hits = through_old_home(p.read_text(), module, table)
        if hits:
            bad[str(p.relative_to(PKG.parent))] = hits
    assert not bad, f"import these from their new module: {bad}"


#: Files outside ``src`` that import a moved name through its old module on purpose: the test of that path.
OLD_PATH_TESTS = {"tests/bad_inputs/test_good_input38.py"}


def test_no_script_benchmark_or_test_imports_a_moved_name_through_its_old_module():
    """round 52 (code52): scripts/adp_prefill_twins51.py still imported with_pool_backends from cost/pricer."""
    table = moved_table()
    root = PKG.parents[1]
    bad = {}
    for folder in ("scripts", "benchmarks", "tests"):
        for p in sorted((root / folder).rglob("*.py")):
            rel = str(p.relative_to(root))
            hits = [] if rel in OLD_PATH_TESTS else through_old_home(p.read_text(), "", table)
            if hits:
                bad[rel] = hits
    assert not bad, f"import these from their new module: {bad}"


def test_the_walk_finds_an_import_through_an_old_module():
    table = moved_table()
    src = "def f():\n    from jalapeno.cost.pricer import Pricer, with_pool_backends\n"
    assert through_old_home(src, "jalapeno.serve.point", table) == [
        "2: from jalapeno.cost.pricer import with_pool_backends (now jalapeno.cost.pool_backends)"
    ]
    src = "from jalapeno.report.tables import band_text, frontier_table\n"  # plain re-export: band_text moved
    assert through_old_home(src, "jalapeno.cli.compare_cmd", table) == [
        "1: from jalapeno.report.tables import band_text (now jalapeno.report.compare_cells)"
    ]
    # the old module imports its own moved names back: not a finding
    src = "from jalapeno.serve.idle_start import _agg_idle_start\n"
    assert through_old_home(src, "jalapeno.serve.point", table) == []


def test_the_public_api_names_each_name_where_it_lives():
    """jalapeno.simulate resolved through serve/sim/simulation's shim until round 51."""
    import jalapeno

    table = moved_table()
    through = {n: m for n, m in jalapeno._API.items() if n in table.get(m, {})}
    assert not through, f"point jalapeno/__init__._API at the new modules: {through}"
    assert jalapeno._API["simulate"] == "jalapeno.serve.sim.run"


@pytest.mark.parametrize(
    "old, name, new",
    [
        ("jalapeno.cost.pricer", "with_pool_backends", "jalapeno.cost.pool_backends"),
        ("jalapeno.cost.pricer", "_root_chip_pricer", "jalapeno.cost.pool_backends"),
        ("jalapeno.specs.formats", "check_precision", "jalapeno.specs.precision_checks"),
        ("jalapeno.specs.hardware", "system_from_dict", "jalapeno.specs.system_load"),
        ("jalapeno.serve.sim.simulation", "simulate", "jalapeno.serve.sim.run"),
        ("jalapeno.specs.model_config", "load_model_file", "jalapeno.specs.model_file"),  # round 52
        ("jalapeno.specs.model_config", "file_model_name", "jalapeno.specs.model_file"),
        ("jalapeno.specs.model_config", "TOPK_METHODS", "jalapeno.specs.config_fields"),
        ("jalapeno.deploy.memory_fit", "decode_batch_cap", "jalapeno.deploy.kv_capacity"),  # round 53
    ],
)
def test_a_moved_name_still_imports_from_its_old_module_without_a_warning(old, name, new):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = getattr(importlib.import_module(old), name)
    assert got is getattr(importlib.import_module(new), name)
    assert MOVED[old][name] == new


def test_every_registered_name_resolves_to_its_new_module():
    for old in SHIMS:
        mod = importlib.import_module(old)
        for name, new in MOVED[old].items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                assert getattr(mod, name) is getattr(importlib.import_module(new), name), f"{old}.{name}"


def test_moved_names_warns_for_a_deprecated_move_and_refuses_an_unknown_name():
    ga = moved_names(
        "jalapeno.test_old", {"jalapeno.units": ("GB",)}, deprecated={"jalapeno.units": (("GiB",), "round 9")}
    )
    assert ga("GB") == 1e9  # jalapeno/units.py: GB = 1e9
    with pytest.warns(DeprecationWarning, match=r"jalapeno\.test_old\.GiB moved to jalapeno\.units\.GiB \(round 9\)"):
        assert ga("GiB") == 2**30
    with pytest.raises(AttributeError, match="module 'jalapeno.test_old' has no attribute 'TiB'"):
        ga("TiB")
    MOVED.pop("jalapeno.test_old")
