"""Round 55 review (review55): plan's capex line quotes the TCO/capex term its arithmetic divides by.

Expected values by hand in each test's comments, not read off the code's output.
"""

from __future__ import annotations


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
