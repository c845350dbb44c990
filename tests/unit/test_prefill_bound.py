"""A disaggregated point names its prefill pool's bound and chip share beside the decode step's bound
(bound31). ``bound`` stays the decode step's; ``prefill_bound`` is the bound of the prefill pool's full
token-budget step (serve/disagg.PrefillPerf.bound) and ``prefill_chip_share`` its chips over the point's:
3 prefill workers of TP4 (12 chips) beside 1 decode worker of DEP8 (8 chips) hold 12 / 20 = 0.6 of the
chips. An aggregated point has ``""`` and 0."""

from __future__ import annotations

import json
from types import SimpleNamespace as N

import pytest
from cli_runner import run

import jalapeno as jp
from jalapeno.analysis.bound_words import bound_cell, bound_text
from jalapeno.report.tables import PREFILL_BOUND_CAPTION, frontier_table
from jalapeno.serve.disagg import pool_prefill_perf


@pytest.fixture(scope="module")
def points():
    m, pr, prec = jp.load_model("deepseek-r1"), jp.load_pricer("jalapeno"), jp.get_precision("fp8")
    wl = jp.get_workload("8k1k")
    dis = jp.Deployment(prec, jp.Pool(jp.Layout(dp=8, ep=8)), prefill=jp.Pool(jp.Layout(tp=4, ep=4), 3))
    agg = jp.Deployment(prec, jp.Pool(jp.Layout(dp=8, ep=8)))
    return (m, pr, wl, dis, jp.predict_point(m, pr, dis, wl, 256), jp.predict_point(m, pr, agg, wl, 256))


def test_a_disaggregated_point_carries_its_prefill_pools_bound_and_share(points):
    m, pr, wl, dis, p, a = points
    assert p.chips == 20 and p.prefill_chip_share == pytest.approx(12 / 20)
    assert p.prefill_bound == pool_prefill_perf(m, pr, dis, wl).bound
    # Jalapeño at 8k/1k: the prefill pools of its FP8 frontier are compute-bound (docs/audit.md §6)
    assert p.prefill_bound == "compute"
    assert p.as_dict()["prefill_bound"] == "compute" and p.as_dict()["prefill_chip_share"] == pytest.approx(0.6)
    assert (a.prefill_bound, a.prefill_chip_share) == ("", 0.0)


def test_the_bound_reads_in_the_fields_words(points):
    *_, p, a = points
    assert repr(a).endswith(f"{a.bound}-bound)")
    assert bound_text(p) == f"prefill compute-bound on 60% of the chips, decode {p.bound}-bound"
    assert repr(p).endswith(f"prefill compute-bound on 60% of the chips, decode {p.bound}-bound)")
    assert bound_cell("hbm_bandwidth", "compute", 0.6) == "decode hbm_bandwidth; prefill compute (60% of chips)"
    assert bound_cell("compute") == "compute"


def test_frontier_and_point_tables_show_the_prefill_pool(points):
    *_, p, a = points
    from rich.console import Console

    con = Console(width=400, record=True)
    con.print(frontier_table([a, p], "t"))
    text = con.export_text()
    assert f"decode {p.bound}; prefill compute (60% of chips)" in text
    assert PREFILL_BOUND_CAPTION.split(":")[0] in text
    con = Console(width=400, record=True)
    con.print(frontier_table([a], "t"))
    assert "prefill" not in con.export_text()
    from jalapeno.report.point_table import point_table

    con = Console(width=400, record=True)
    con.print(point_table(p, "t"))
    text = con.export_text()
    assert "prefill pool's bound" in text and "on 60% of the chips" in text


def test_predict_prints_and_writes_the_prefill_pool(capsys):
    args = ("predict", "-s", "jalapeno", "-m", "deepseek-r1", "-p", "fp8", "-w", "8k1k", "-c", "256",
            "--prefill", "tp=4,ep=4,workers=3", "--decode", "dp=8,ep=8,workers=1")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["prefill_bound"] == "compute" and d["prefill_chip_share"] == pytest.approx(0.6)
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "prefill pool's bound" in out and "60% of the chips" in out


def test_compare_headline_takes_the_share_from_the_points_arrays():
    """The headline's ``prefill_chip_share_at_*`` (analysis/system_frontier._share) reads the sweep's arrays by index with
    the point's rule: 3 TP4 prefill workers beside 1 DEP8 decode worker, 12 of 20 chips; an aggregated point 0 of 8.
    (Was a SimpleNamespace passed to bound_cell, which the test above already checks: it could not fail on the
    headline.)"""
    import numpy as np

    from jalapeno.analysis.system_frontier import _share

    p = N(prefill_chips=np.array([12.0, 0.0]), chips=np.array([20.0, 8.0]))
    assert (_share(p, 0), _share(p, 1)) == (pytest.approx(0.6), 0.0)
