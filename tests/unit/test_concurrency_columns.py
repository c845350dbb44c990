"""Issue 15 defect 6: the `conc.` column showed a Little's-law value where users expect the cap. Every
table now shows both, labelled: the concurrency cap (the closed-loop client's outstanding requests,
InferenceX conc) and the requests in flight (admitted to a batch, Little's law λ·(E2E − queue)).

The in-flight figure is checked against a second, independent decomposition: the decoding
sequences (the decode batch) plus the requests prefilling, λ·(TTFT − queue).
"""

from __future__ import annotations

import json

import pytest
from cli_runner import run

from jalapeno.analysis.comparison import system_frontier
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.pricer import load_pricer
from jalapeno.report.html import hover_text
from jalapeno.report.tables import frontier_table
from jalapeno.report.compare_cells import peak_load
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

R1_B200 = ["-s", "b200", "-m", "deepseek-r1", "--tp", "1", "--dp", "8", "--ep", "8", "-w", "1k1k"]


def _predict(capsys, *extra):
    code, out, err = run(capsys, "predict", *R1_B200, *extra, "--json")
    assert code == 0, err
    return json.loads(out)


def test_below_the_capacity_cap_and_in_flight_agree(capsys):
    d = _predict(capsys, "-c", "64")
    assert d["concurrency"] == pytest.approx(64, rel=1e-3)
    assert d["queue_s"] == 0 and d["in_flight"] == pytest.approx(d["concurrency"])
    # one instance: B decoding + λ·TTFT prefilling = the 64 requests
    assert d["decode_batch"] + d["request_rate_per_s"] * d["ttft_s"] == pytest.approx(64, rel=2e-3)


def test_past_the_capacity_the_excess_queues_and_in_flight_stays_below_the_cap(capsys):
    d = _predict(capsys, "-c", "20000")
    assert d["concurrency"] == 20000 and d["queue_s"] > 0 and "(queueing)" in d["limit"]
    admitted = d["decode_batch"] + d["request_rate_per_s"] * (d["ttft_s"] - d["queue_s"])
    assert d["in_flight"] == pytest.approx(admitted, rel=1e-6)
    assert d["decode_batch"] < d["in_flight"] < d["concurrency"] / 2  # most of the 20,000 wait


def test_predict_table_labels_both(capsys):
    code, out, err = run(capsys, "predict", *R1_B200, "-c", "20000")
    assert code == 0, err
    assert "concurrency cap (closed loop, InferenceX conc)" in out and "20,000 " in out
    assert "20,000.0" not in out  # a cap is a whole number of requests (user24: it printed "256.0")
    assert "in flight (admitted; Little's law" in out
    code, out, err = run(capsys, "predict", *R1_B200, "--rate", "2")
    assert code == 0, err
    assert "requests in the system (open loop" in out and "concurrency cap" not in out


@pytest.fixture(scope="module")
def capped_frontier():
    """Requested concurrencies, the largest past what an 8-GPU instance holds."""
    m = load_model("deepseek-r1")
    sf = system_frontier(m, load_pricer("b200"), get_workload("1k1k"), get_precision("fp8"),
                         SweepOptions(serving="agg", concurrency=(8.0, 64.0, 20000.0)))
    return sf.record()


def test_frontier_table_frame_and_hover(capped_frontier, capsys):
    from rich.console import Console

    con = Console(width=400, record=True)
    con.print(frontier_table(capped_frontier.frontier, "t"))
    text = con.export_text()
    assert "conc. cap" in text and "in flight" in text and "Little's law" in text
    df = capped_frontier.to_frame()
    assert {"concurrency", "in_flight"} <= set(df.columns)
    assert (df["in_flight"] <= df["concurrency"] * (1 + 1e-9)).all()
    for p in capped_frontier.frontier:
        assert f"conc. cap {p.concurrency:,.0f} · in flight {p.in_flight:,.0f}" in hover_text(p)


def test_compare_headline_shows_the_peak_load(capsys):
    from rich.console import Console

    from jalapeno.analysis.comparison import compare_systems
    from jalapeno.report.tables import comparison_tables

    m = load_model("deepseek-r1")
    res = compare_systems(m, [load_pricer("b200")], get_workload("1k1k"), get_precision("fp8"),
                          options=SweepOptions(serving="agg", concurrency=(8.0, 64.0, 20000.0)))
    rec = res.record()
    con = Console(width=400, record=True)
    con.print(comparison_tables(rec)[0])
    text = con.export_text()
    peak = max(rec.systems["b200"].frontier, key=lambda p: p.throughput_per_chip)
    assert peak.concurrency == 20000 and peak.in_flight < 20000
    assert "conc. cap / in flight at peak" in text and f"20,000 / {peak.in_flight:,.0f}" in text
    assert "in flight: requests admitted to a batch" in text


def test_peak_load_cell(capped_frontier):
    p = max(capped_frontier.frontier, key=lambda q: q.throughput_per_chip)
    assert peak_load(capped_frontier.frontier) == f"{p.concurrency:,.0f} / {p.in_flight:,.0f}"
    assert peak_load(()) == "-"


def test_the_tiers_table_says_what_its_cells_are():
    """A tiers cell reads "12,345 @ 110: <deployment>"; the caption must say which figure is which."""
    from rich.console import Console

    from jalapeno.analysis.comparison import compare_systems
    from jalapeno.report.tables import comparison_tables

    m = load_model("deepseek-r1")
    res = compare_systems(m, [load_pricer("b200")], get_workload("1k1k"), get_precision("fp8"),
                          options=SweepOptions(serving="agg", concurrency=(8.0, 64.0)))
    con = Console(width=400, record=True)
    con.print(comparison_tables(res.record())[2])
    text = con.export_text()
    assert " @ " in text
    assert "each cell: throughput per chip (tok/s) @ per-user speed (tok/s/user)" in text
