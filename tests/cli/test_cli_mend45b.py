"""mend45's leftovers, each with the text it asserts: the report page's and agentic compare's $ cells carry the
estimate mark (the catalog's ``estimate = true`` on ``cost.usd_per_chip_hour``), the cost line's estimate note is
worded from each system file's own price source, and agentic tables' ``[at frontier end]`` names its side."""

from __future__ import annotations

import re

import pytest
from rich.console import Console

from jalapeno.analysis.comparison import compare_systems
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


@pytest.mark.parametrize(
    ("name", "basis"),
    [  # the first clause of each file's cost.usd_per_chip_hour source, read off data/systems/NAME.toml by hand
        ("a100-sxm", "no InferenceX TCO figure for A100"),
        ("mi350x", "as MI355X"),
        ("vera-rubin-nvl72", "InferenceX's own rule for a new generation without a price"),
        ("jalapeno", "jalapeno publishes no price; assumed all-in capex $30k per chip"),  # "(no published price)"
    ],
)
def test_an_estimated_price_is_worded_from_its_own_file(name, basis):
    """Every estimated price said 'X publishes no price': false of A100 and MI350X (list-priced chips whose files
    estimate the TCO figure InferenceX does not give) and of Vera Rubin (priced by InferenceX's generation rule)."""
    from jalapeno.report.cell_notes import price_note

    want = f" (an estimate: {basis}; `jalapeno hardware show {name}`, cost.usd_per_chip_hour)"
    assert price_note(load_system(name)) == want
    assert price_note(load_system("h200")) == ""  # h200.toml's price is no estimate


def test_plan_words_a_non_jalapeno_estimate_from_its_file(capsys):
    from cli_runner import run

    code, out, err = run(capsys, "plan", "--system", "mi350x", "-m", "llama-3.3-70b", "-w", "1k1k", "--chips", "64")
    assert code == 0, err
    text = " ".join(out.split())
    assert "$1.48/chip-hour (an estimate: as MI355X; `jalapeno hardware show mi350x`, cost.usd_per_chip_hour)" in text
    assert "publishes no price" not in text


@pytest.fixture(scope="module")
def page():
    """The report page's tables of Jalapeño (estimate = true) against B200 (a published TCO figure)."""
    from jalapeno.report.cell_notes import estimated_prices
    from jalapeno.report.page import tables_html

    pr = [load_pricer("jalapeno"), load_pricer("b200")]
    res = compare_systems(
        load_model("deepseek-r1"),
        pr,
        get_workload("1k1k"),
        get_precision("fp8"),
        baseline="b200",
        options=SweepOptions(serving="agg", concurrency=(4.0, 64.0, 512.0)),
        floors={"fast": 100.0},
    )
    return tables_html(res.record(), estimated_prices(p.system for p in pr))


def _rows(html: str, table: str) -> dict[str, str]:
    body = html.split(f'class="{table}"', 1)[1].split("</table>", 1)[0]
    return {re.search(r"<td>([^<]*)</td>", r).group(1): r for r in body.split("<tr>") if "<td>" in r}


def test_the_report_page_marks_estimated_dollar_cells(page):
    head = _rows(page, "headline")
    assert re.search(r"<td>[\d.]+ est\.</td>", head["jalapeno"]) and " est." not in head["b200"]
    tiers = _rows(page, "tiers")
    assert "/M tok est.)" in tiers["jalapeno"] and " est." not in tiers["b200"]
    assert "est.: at an estimated $/chip-hour (jalapeno; the catalog marks it estimate = true" in page
    assert "Per $ of jalapeno: at an estimated $/chip-hour" in page


def test_the_report_page_without_estimates_has_no_mark(page):
    from jalapeno.report.page import tables_html

    pr = [load_pricer("h200"), load_pricer("b200")]
    res = compare_systems(
        load_model("deepseek-r1"),
        pr,
        get_workload("1k1k"),
        get_precision("fp8"),
        baseline="b200",
        options=SweepOptions(serving="agg", concurrency=(4.0, 64.0)),
        floors={"fast": 100.0},
    )
    assert "est." not in tables_html(res.record(), ())


def _agentic(iso: list[dict]) -> dict:
    """A two-system agentic comparison dict: rubin (peak 200 tasks/h/chip) against gb300 (peak 100)."""
    pt = {
        "tasks_per_hour_per_kw": 1.0,
        "usd_per_task": 0.5,
        "task_time_s": 600.0,
        "task_time_p90_s": 660.0,
        "bound": "compute",
        "kv_bound": "",
        "kv_tier": "hbm",
        "kv_tier_share": 1.0,
        "deployment": "agg",
        "ttft_first_turn_s": 1.0,
        "ttft_mean_s": 1.0,
        "ttft_last_turn_s": 1.0,
        "tpot_s": 0.01,
        "hit_rate": 0.9,
        "reload_s_per_task": 0.0,
    }
    tier = {
        "batch": {
            "status": "ok",
            "ceiling_min": None,
            "tasks_per_hour_per_chip": 2.0,
            "task_time_s": 600.0,
            "deployment": "agg",
            "tasks_per_hour_per_kw": 1.0,
            "usd_per_task": 0.25,
        }
    }
    sys_ = {
        n: {
            "peak": pt | {"tasks_per_hour_per_chip": pk},
            "fastest": pt | {"tasks_per_hour_per_chip": 1.0},
            "kv_tiers": {},
            "tiers": tier,
        }
        for n, pk in (("rubin", 200.0), ("gb300", 100.0))
    }
    ratio = {
        "peak_tasks_per_hour_per_chip": 2.0,
        "peak_tasks_per_hour_per_kw": 1.0,
        "peak_tasks_per_usd": 1.0,
        "fastest_task_time": 1.0,
        "iso_task_time": iso,
    }
    return {
        "model": "m",
        "convention": "all-in",
        "baseline": "gb300",
        "systems": sys_,
        "workload": {"agentic": "coding-agent", "turns": 2, "final_context_tokens": 1000, "think_s": 2.0},
        "ratios": {"rubin": ratio, "gb300": ratio},
    }


def _text(d: dict, estimated=()) -> str:
    from jalapeno.report.agentic_tables import agentic_tables

    con = Console(width=400, record=True, markup=False)
    for t in agentic_tables(d, estimated):
        con.print(t)
    return con.export_text()


def _cell(ratio, status, base_status, y, y_base):
    return {
        "task_time_min": 5.0,
        "ratio": ratio,
        "at_frontier_end": True,
        "status": status,
        "baseline_status": base_status,
        "tasks_per_hour_per_chip": y,
        "baseline_tasks_per_hour_per_chip": y_base,
    }


def test_agentic_frontier_end_flag_names_its_side():
    """Agentic's '[at frontier end]' did not say whose end, where compare's names this, baseline or both. Tails by
    analysis/ratio_bands.TAIL_FRACTION = 0.1 of each peak: rubin 50 of 200 is not in its tail, gb300 5 of 100 is."""
    iso = [
        _cell(10.0, "interpolated", "interpolated", 50.0, 5.0),  # gb300's tail: baseline
        _cell(1.0, "at_frontier_end", "interpolated", 50.0, 50.0),  # rubin's end: this
        _cell(2.0, "at_frontier_end", "at_frontier_end", 10.0, 5.0),
    ]  # both ends
    for r in iso:
        r["task_time_min"] = {10.0: 5.0, 1.0: 10.0, 2.0: 20.0}[r["ratio"]]
    rows = {ln.split("│")[1].strip(): ln for ln in _text(_agentic(iso)).splitlines() if ln.count("│") > 3}
    rubin = " ".join(rows["rubin"].split())
    assert "10.00x [at frontier end: baseline]" in rubin and "1.00x [at frontier end: this]" in rubin
    assert "2.00x [at frontier end: both]" in rubin
    # on the baseline's own row a baseline-side end reads baseline, as compare's (report/cell_notes.end_flag)
    assert "10.00x [at frontier end: baseline]" in " ".join(rows["gb300"].split())
    flat = " ".join(_text(_agentic(iso)).split())
    assert "[at frontier end: who]: within 10% of a frontier's last point" in flat and "[at frontier end]" not in flat


def test_agentic_marks_estimated_dollar_per_task():
    d = _agentic([_cell(1.5, "interpolated", "interpolated", 50.0, 50.0) | {"at_frontier_end": False}])
    text = _text(d, {"rubin"})
    rows = [ln for ln in text.splitlines() if ln.count("│") > 2]
    rubin = [ln for ln in rows if ln.split("│")[1].strip() == "rubin"]
    gb300 = [ln for ln in rows if ln.split("│")[1].strip() == "gb300"]
    # headline's $/task at peak and the batch tier's $/task (usd_text: three figures)
    assert "│ 0.500 est. " in rubin[0] and "$0.250/task est.): agg" in rubin[-1]
    assert not any(" est." in ln for ln in gb300)
    flat = " ".join(text.split())
    assert "est.: at an estimated $/chip-hour (rubin; the catalog marks it estimate = true" in flat
    assert "per $ of rubin: at an estimated $/chip-hour" in flat
    assert " est." not in _text(d)
