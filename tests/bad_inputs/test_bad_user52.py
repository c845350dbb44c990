"""Round 52's break pass (break52): system-file keys read laxly or without a ceiling, and Python API entry points
that crashed with a bare TypeError/AttributeError/ValueError, kept one of two systems silently, or refused a
numpy integer. Each case below fails on main 73780f93."""

from __future__ import annotations

import pytest

import jalapeno as jp
from jalapeno.errors import JalapenoError


def _message(fn) -> str:
    with pytest.raises(JalapenoError) as e:
        fn()
    return str(e.value)


# ---- system files: links_per_chip ------------------------------------------------------------------------------


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
