"""Round 55 review (review55): plan's capex line quotes the TCO/capex term its arithmetic divides by.

Expected values by hand in each test's comments, not read off the code's output.
"""

from __future__ import annotations

import json

import pytest
from cli_runner import run

from jalapeno.analysis import plan_costs
from jalapeno.specs.power import Term


def test_capex_line_quotes_the_term_it_divides_by(monkeypatch):
    """The line printed '$46.5k / $2.21' and 'band, 1.6 to 2.8 $/h' as fixed text beside arithmetic that read
    specs/power's term: a changed term would have printed figures the arithmetic no longer used. With the term at
    2.50 $/h (band 2.0-3.0) per $46.5k, by hand: 2.50 $/chip-hour x 46,500 / 2.50 = $46,500 a chip, x 72 =
    $3,348,000 = $3.3M; band 72 x 2.50 x 46,500 / 3.0 = $2,790,000 = $2.8M to 72 x 2.50 x 46,500 / 2.0 = $4,185,000
    = $4.2M."""
    terms = dict(plan_costs.POWER_TERMS)
    terms["tco_usd_per_hour_per_capex_usd"] = Term(2.5 / 46_500, 2.0 / 46_500, 3.0 / 46_500, "$/h per $ capex", "test")
    monkeypatch.setattr(plan_costs, "POWER_TERMS", terms)
    line = plan_costs.capex_line(2.5, 72, "in the fleet")
    assert "$2.5/chip-hour x $46.5k / $2.50" in line and "costh 2.50 $/h, ~$46.5k a GPU" in line
    assert "= $46.5k per chip x 72 chips in the fleet = $3.3M" in line
    assert "(the ratio's assumed band, 2.0 to 3.0 $/h per $46.5k: $2.8M to $4.2M)" in line


def test_capex_line_at_the_shipped_term():
    """The shipped term (2.21 $/h over $46.5k, band 1.6-2.8): one GB300 NVL72 rack at 2.652 $/chip-hour, by hand
    2.652 x 46,500 / 2.21 = $55,800 a chip, x 72 = $4,017,600 = $4.0M; band 72 x 2.652 x 46,500 / 2.8 = $3,171,034
    = $3.2M to 72 x 2.652 x 46,500 / 1.6 = $5,549,310 = $5.5M."""
    line = plan_costs.capex_line(2.652, 72, "bought (whole racks)")
    assert "$2.652/chip-hour x $46.5k / $2.21 (InferenceX's GB200 TCO over capex: costh 2.21 $/h" in line
    assert "= $55.8k per chip x 72 chips bought (whole racks) = $4.0M" in line
    assert "(the ratio's assumed band, 1.6 to 2.8 $/h per $46.5k: $3.2M to $5.5M)" in line


def test_plan_on_several_systems_names_max_task_min_on_a_fixed_workload(capsys):
    """`plan -s A,B --target 1e6 --max-task-min 3` (8k1k, fixed-length) answered "an agentic plan takes one system",
    though no agentic workload was given; `plan -s A` names --max-task-min as the agentic task-time ceiling. Both now
    say the same, before any sweep."""
    base = ("plan", "-m", "gpt-oss-120b", "--target", "1e6", "--max-task-min", "3")
    for systems in ("gb200-nvl72", "gb200-nvl72,jalapeno"):
        code, out, err = run(capsys, *base, "-s", systems)
        assert code != 0 and "Traceback" not in err, err
        assert "--max-task-min: is the task-time ceiling of an agentic workload" in err, err
        assert "an agentic plan takes one system" not in err


def test_plan_on_several_systems_takes_a_set_for_one_system(capsys):
    """`plan -s jalapeno,gb300-nvl72 --set jalapeno:KEY=VALUE` was refused ("this command prices one system") and a
    plain --set changed every system without a word. As compare: NAME:KEY=VALUE sets that system only, a plain one all
    of them, said once on stderr. Jalapeño with power.allin_kw_per_chip=2.3 (twice its 1.15 kW): its row's all-in kW
    doubles and GB300's stays its own (the bought chips x 2.1 kW)."""
    base = ("plan", "-s", "jalapeno,gb300-nvl72", "-m", "gpt-oss-120b", "--target", "1e6", "--min-interactivity", "50")
    code, out, err = run(capsys, *base, "--set", "jalapeno:power.allin_kw_per_chip=2.3", "--json")
    assert code == 0, err
    rows = {r["system"].split("+")[0]: r for r in json.loads(out)["systems"]}
    jal, gb = rows["jalapeno"], rows["gb300-nvl72"]
    assert jal["power_kw"]["all-in"] == pytest.approx(jal["chips"] * 2.3)
    assert gb["power_kw"]["all-in"] == pytest.approx(gb["chips"] * 2.1)
    assert "applies to every" not in err
    code, out, err = run(capsys, *base, "--set", "power.allin_kw_per_chip=2.3", "--json")
    assert code == 0, err
    gb = {r["system"].split("+")[0]: r for r in json.loads(out)["systems"]}["gb300-nvl72"]
    assert gb["power_kw"]["all-in"] == pytest.approx(gb["chips"] * 2.3)
    assert "--set power.allin_kw_per_chip=2.3 applies to every planned system (jalapeno, gb300-nvl72)" in err
