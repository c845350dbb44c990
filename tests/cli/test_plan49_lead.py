"""plan49: ``jalapeno plan`` leads with the fleet a capacity planner buys (newuser49, round 49).

Kimi K2.5 on Jalapeño, 1k8k, 1e6 output tok/s at >= 50 tok/s/user: the plan led with the highest throughput per
chip, 524-chip disagg instances at 912.66 tok/s/chip, so ceil(1e6 / (912.66 x 524)) = ceil(2.09) = 3 instances =
1,572 chips, while 132-chip instances at 905.8 tok/s/chip (0.8% lower) need ceil(1e6 / (905.8 x 132)) =
ceil(8.36) = 9 instances = 1,188 chips: 32% fewer chips, watts and $/hour (both per chip on one system).
"""

import json
import math
import re

from cli_runner import run

KIMI = ("plan", "-s", "jalapeno", "-m", "kimi-k2.5", "-w", "1k8k", "--target", "1e6", "--min-interactivity", "50")


def test_kimi_plan_leads_with_the_fewest_chips(cli_once):
    code, out, err, _ = cli_once(*KIMI)  # run once for the tests that read it (tests/conftest.py)
    assert code == 0, err
    flat = " ".join(out.split())
    # hand counts (module docstring): 9 x 132 = 1,188 leads; the 524-chip point is named with 3 x 524 = 1,572
    assert "(132 chips per instance)" in out.splitlines()[2]
    assert "chips: 9 x 132 = 1,188" in flat
    assert "operating point: the fewest chips that serve the target at >= 50 tok/s/user" in flat
    named = re.search(
        r"highest output throughput per chip: .*?\(524 chips per instance\).*?serves the target with "
        r"1,572 chips .*?\(\+32% chips, power and \$/hour",
        flat,
    )
    assert named, flat
    assert "this plan's point needs 1,188 chips" in flat
    # the power line follows the lead: 1,188 x 1,150 W all-in = 1,366.2 kW (jalapeno.toml: 1,150 W all-in)
    assert "1,188 x 1,150 W = 1,366.2 kW" in flat


def test_kimi_plan_json_carries_the_lead_and_the_exact_rates(cli_once):
    code, out, err, _ = cli_once(*KIMI, "--json")  # run once for this test and test_ux50's (tests/conftest.py)
    assert code == 0, err
    d = json.loads(out)
    assert d["lead"].startswith("fewest chips")
    per = d["deployment"]["chips"]
    assert (per, d["chips"]) == (132, 9 * 132)
    assert d["chips"] == math.ceil(1e6 / (d["tok_per_s_per_chip"] * per)) * per  # exact rate, by hand
    h = d["highest_rate"]
    assert h["deployment"]["chips"] == 524 and h["chips"] == math.ceil(1e6 / (h["tok_per_s_per_chip"] * 524)) * 524
    assert h["chips"] == 1572 and h["tok_per_s_per_chip"] > d["tok_per_s_per_chip"]


def test_plan_prints_throughput_per_chip_to_sensible_figures(cli_once):
    """The plan printed ``912.664 tok/s/chip`` (the decimals its products needed; ``1,155.9742`` elsewhere): one
    decimal now; its products are carried by one instance's whole tok/s (9 x 119,559 = 1,076,031 by hand)."""
    code, out, err, _ = cli_once(*KIMI)  # run once (tests/conftest.py)
    assert code == 0, err
    rates = re.findall(r"([\d,]+\.\d+) tok/s/chip", out)
    assert rates and all(len(r.split(".")[1]) == 1 for r in rates), rates
    n, inst, total = re.search(r"delivered: ([\d,]+) instances? x ([\d,]+) = ([\d,]+) tok/s", out).groups()
    assert int(n) * int(inst.replace(",", "")) == int(total.replace(",", ""))
    assert f"instances: ceil(1,000,000 / {inst}) = {n}" in out


def test_agentic_plan_leads_with_the_fewest_chips(capsys):
    """The agentic plan took the most tasks/h per chip (GB300, DeepSeek-R1, coding-agent, <= 30 min per task: an
    8-chip instance at 84.6 tasks/h/chip, so 1,000 tasks/h needs ceil(1000 / (84.6 x 8)) = ceil(1.48) = 2 instances =
    16 chips); a 2-chip instance of fewer tasks/h per chip finishes it in fewer. Counts by hand from --json's rates.
    Since round 55 (serve/turn_arrivals.TURN_ARRIVALS_ON: fewer prompt chunks a prefill step on attention-DP instances)
    the most tasks/h per chip is a 4-chip DP2 instance at 77.6: ceil(1000 / (77.6 x 4)) = ceil(3.22) = 4 instances =
    16 chips, against 14 for the 2-chip plan (74.55: ceil(1000 / 149.1) = 7 instances)."""
    args = (
        "plan",
        "-s",
        "gb300-nvl72",
        "-m",
        "deepseek-r1",
        "-w",
        "agentic:coding-agent",
        "--target",
        "1000",
        "--target-kind",
        "tasks",
        "--max-task-min",
        "30",
    )
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    d = json.loads(out)
    cpi, tph = d["chips_per_instance"], d["tasks_per_hour_per_chip"]
    assert d["lead"].startswith("fewest chips") and d["chips"] == math.ceil(1000 / (tph * cpi)) * cpi
    h = d["highest_rate"]
    hr = h["point"]["tasks_per_hour_per_chip"]
    assert h["chips_per_instance"] == 4 and h["chips"] == math.ceil(1000 / (hr * 4)) * 4 == 16
    assert hr > tph and d["chips"] < h["chips"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "operating point: the fewest chips that finish the target with mean task time <= 30 min" in flat
    assert re.search(r"most tasks/h per chip: .*\(4 chips per instance\).*finishes the target with 16 chips", flat)


def test_audit_claim_table_figures_carry_the_claims_unit(capsys):
    """audit's predicted and physical-limit cells carried no unit: a ratio read ``1.212``, not ``1.212x`` (newuser49)."""
    code, out, err = run(
        capsys,
        "audit",
        "--system",
        "jalapeno",
        "--baseline",
        "gb200-nvl72",
        "--claim",
        "peak_throughput_per_chip_ratio=1.5",
    )
    assert code == 0, err
    row = next(ln for ln in out.splitlines() if any(v in ln for v in ("HOLDS", "PLAUSIBLE", "REQUIRES", "IMPOSSIBLE")))
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert re.fullmatch(r"[\d.]+x", cells[0]) and re.fullmatch(r"[\d.]+x", cells[2]), cells
    code, out, err = run(capsys, "audit", "--system", "jalapeno", "--claim", "peak_throughput_per_chip=5000")
    assert code == 0, err
    row = next(ln for ln in out.splitlines() if any(v in ln for v in ("HOLDS", "PLAUSIBLE", "REQUIRES", "IMPOSSIBLE")))
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells[0].endswith(" tok/s/chip") and cells[2].endswith(" tok/s/chip"), cells


def test_compare_states_each_systems_power_per_chip(capsys):
    """compare reports tok/s/kW but not the watts it divides by, so a variant's extra power (``--set
    chip.hbm_bandwidth_tb_per_s=20`` adds ~129 W all-in on Jalapeño) moved tok/s/kW unseen (newuser49). The power
    line now gives W per chip: Jalapeño 1,150 W all-in (data/systems/jalapeno.toml), GB200 2,100 W (InferenceX's
    all-in figure, gb200-nvl72.toml)."""
    code, out, err = run(capsys, "compare", "--systems", "jalapeno,gb200-nvl72")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "jalapeno all-in provisioned, 1,150 W per chip; gb200-nvl72 all-in provisioned, 2,100 W per chip" in flat
    code, out, err = run(
        capsys, "compare", "--systems", "jalapeno,gb200-nvl72", "--set", "jalapeno:chip.hbm_bandwidth_tb_per_s=20"
    )
    assert code == 0, err
    flat = " ".join(out.split())
    w = re.search(r"jalapeno\+chip\.hbm_bandwidth_tb_per_s=20 all-in provisioned, ([\d,]+) W per chip", flat)
    assert w and int(w[1].replace(",", "")) > 1150, flat[-2000:]


def test_fleet_plan_prints_its_rate_to_sensible_figures(capsys):
    """``plan --chips`` printed ``980 chips x 1,173.552 output tok/s/chip``: the rate now prints 1,173.6 and the product
    is carried by one instance's tok/s (GB200, 1,000 chips at >= 50: 5 x 196-chip instances; 5 x 230,016.2 =
    1,150,081 by hand)."""
    code, out, err = run(capsys, "plan", "-s", "gb200-nvl72", "--chips", "1000", "--min-interactivity", "50")
    assert code == 0, err
    rates = re.findall(r"([\d,]+\.\d+) tok/s/chip", out)
    assert rates and all(len(r.split(".")[1]) == 1 for r in rates), rates
    n, inst, total = re.search(
        r"delivered: ([\d,]+) instances? x ([\d,.]+) output tok/s \(.*?\) = ([\d,]+)", out
    ).groups()
    assert round(int(n) * float(inst.replace(",", ""))) == int(total.replace(",", ""))
