"""Round 25 new-user pass and break-it (newuser25): what a newcomer typed and what it did."""

from __future__ import annotations

import pytest
from cli_runner import run


@pytest.mark.parametrize("tiers, says", [("fast=0", "fast=0: a task-time ceiling must be a finite number of minutes > 0"),
                                         ("fast=-1", "the ceiling -1 is not a finite number >= 0")])
def test_agentic_tier_ceiling_zero_is_refused(capsys, tiers, says):
    """`compare -w agentic:coding-agent --tiers fast=0` divided 60 / 0 (ZeroDivisionError traceback);
    agentic tiers are task-time ceilings in minutes, so the words say ceiling, not floor."""
    code, out, err = run(capsys, "compare", "-w", "agentic:coding-agent", "-s", "jalapeno", "--tiers", tiers)
    assert code == 2
    assert "Traceback" not in err + out
    assert "--tiers" in err and says in err


def test_compare_agentic_api_refuses_a_zero_ceiling():
    import jalapeno as jp
    from jalapeno.analysis.agentic import compare_agentic
    from jalapeno.errors import SpecError
    from jalapeno.specs.agentic import get_agentic

    m = jp.load_model("deepseek-r1")
    with pytest.raises(SpecError, match="task-time ceiling"):
        compare_agentic(m, [jp.load_pricer("jalapeno")], get_agentic("coding-agent"),
                        {"jalapeno": ["fp8"]}, tier_ceilings_min={"fast": 0.0})


def test_plan_above_the_max_prints_a_maximum_below_the_floor(capsys):
    """compare prints Jalapeño's max tok/s/user on DeepSeek-R1 8K/1K as 139.5; `plan --min-interactivity
    139.5` then said 'reaches at most 139.5 tok/s/user ..., below 139.5'. The maximum now carries the
    decimals that show it below the floor asked."""
    import re

    code, out, err = run(capsys, "plan", "--system", "jalapeno", "--target", "1e6", "--min-interactivity", "139.5")
    assert code == 2, out
    m = re.search(r"reaches at most ([0-9.]+) tok/s/user on this workload, below 139.5", err)
    assert m, err
    assert float(m.group(1)) < 139.5 and m.group(1) != "139.5"
