"""plan55: plan's frictions from round 55's new-user pass (newuser55), each checked by hand.

- One instance is one: ``plan -s h100 -m llama-3.3-70b -w 1k1k --target 1000`` needs ceil(1,000 / 4,912) = 1 instance
  of 2 chips in 1 node of 8; it printed "delivered: 1 instances" and "2 chips, 1 nodes".
- The agentic plan prints the fixed-length plan's lines: packaging as ``racks: ceil(152 / 72) = 3`` (it printed
  ``racks: 3 of 72 chips``), per kW, provisioned, basis and a 'how sure' line.
"""

import json
import math
import re

import pytest
from cli_runner import run

ONE = ("plan", "-s", "h100", "-m", "llama-3.3-70b", "-w", "1k1k", "--target", "1000")


def test_one_instance_and_one_node_are_singular(capsys):
    code, out, err = run(capsys, *ONE)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "instances: ceil(1,000 / " in flat and ") = 1 " in flat  # one instance serves 1,000 tok/s
    assert re.search(r"delivered: 1 instance x [\d,]+ = ", flat), flat
    assert "1 instances" not in flat
    assert "1 nodes" not in flat  # the how-sure line: 2 chips, 1 node
    assert "2 chips, 1 node to 2 chips, 1 node (this plan: 2 chips, 1 node)" in flat


def test_one_agentic_instance_is_singular(capsys):
    # 100 tasks/h on GB200 coding-agent: one 4-chip instance finishes ~152 tasks/h, so ceil(100 / 152.2) = 1
    code, out, err = run(
        capsys, "plan", "-s", "gb200-nvl72", "-m", "llama-3.3-70b", "-w", "agentic:coding-agent", "--target", "100",
        "--target-kind", "tasks",
    )  # fmt: skip
    assert code == 0, err
    flat = " ".join(out.split())
    assert re.search(r"delivered: 1 instance x [\d,.]+ = [\d,.]+ tasks/h", flat), flat


AGENT = ("-m", "llama-3.3-70b", "-w", "agentic:coding-agent", "--target", "10000", "--target-kind", "tasks")


def test_agentic_plan_prints_the_fixed_length_plans_lines(capsys):
    code, out, err = run(capsys, "plan", "-s", "gb200-nvl72", *AGENT, "--max-task-min", "10")
    assert code == 0, err
    flat = " ".join(out.split())
    # 38 instances x 4 chips = 152 chips; 152 / 72 = 2.11 -> 3 racks (4-chip groups tile a 72-chip rack)
    assert "chips: 38 x 4 = 152" in flat and "racks: ceil(152 / 72) = 3" in flat
    assert "of 72 chips" not in flat
    # 3 racks x 72 = 216 chips bought, 216 - 152 = 64 idle; 216 x $2.21 = $477.36/hour; 216 x 2.1 kW = 453.6 kW
    assert (
        "provisioned (whole racks): 3 x 72 = 216 chips, 64 idle; cost 216 x $2.21 = $477.36/hour; "
        "all-in power 216 x 2,100 W = 453.6 kW"
    ) in flat
    assert "basis: the power, cost and per-kW lines count the 152 chips in use" in flat
    # 66.57 tasks/h/chip x 14,000 output tokens / 3600 s = 258.9 output tok/s/chip; / 2.10 kW all-in = 123.3 per kW
    assert "per kW (output tokens): 258.9 tok/s/chip / 2.10 kW all-in = 123.3 tok/s per kW" in flat
    assert "how sure: this plan prices the calibrated efficiencies only" in flat
    assert "--efficiency low and --efficiency high" in flat


def test_agentic_how_sure_on_a_measured_system(capsys):
    code, out, err = run(capsys, "plan", "-s", "h200", *AGENT, "--max-task-min", "10")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "nodes: ceil(344 / 8) = 43" in flat  # 43 instances x 8 chips, 8-GPU nodes full: no provisioned line
    assert "provisioned (" not in flat and "the same 344 chips (43 nodes full)" in flat
    per_inst = float(re.search(r"one instance: ([\d,.]+) tasks/h", flat)[1].replace(",", ""))
    lo, hi = (
        float(x) / 100 for x in re.search(r"p10 ([-+\d.]+)%, p90 ([-+\d.]+)% of predicted/measured", flat).groups()
    )
    # instances at an error e: ceil(10,000 / (instance tasks/h / (1 + e))); each 8 chips in one node
    n_lo, n_hi = (math.ceil(10000 / (per_inst / (1 + e))) for e in (lo, hi))
    assert n_lo < 43 < n_hi
    want = f"finishes the target with {n_lo * 8:,} chips, {n_lo} nodes to {n_hi * 8:,} chips, {n_hi} nodes"
    assert want + " (this plan: 344 chips, 43 nodes)" in flat, flat


# --utilisation (newuser55 friction 2): $/M tok assumed the fleet runs at the point's rate every hour
GB200 = (
    "plan",
    "-s",
    "gb200-nvl72",
    "-m",
    "llama-3.3-70b",
    "-w",
    "1k1k",
    "--target",
    "1e6",
    "--min-interactivity",
    "50",
)


def test_utilisation_scales_dollars_per_mtok_by_hand(capsys):
    code, out, err = run(capsys, *GB200, "--utilisation", "0.5")
    assert code == 0, err
    flat = " ".join(out.split())
    # 5,541.1 output tok/s/chip at $2.21/chip-hour: 2.21 / (5,541.1 x 3600 / 1e6) = $0.1108/M at U = 1 (the cost line
    # prints $0.111); at U = 0.5 the fleet's $/hour buys half the tokens: 0.1108 / 0.5 = $0.2216 -> $0.222
    assert "cost per M output tokens: $2.21 / (5,541.1 tok/s/chip x 3600 s / 1e6) = $0.111" in flat
    assert (
        "utilisation 0.5: the fleet serves 0.5 x its rate on average, so $/M output tok = $0.111 / 0.5 = $0.222" in flat
    )
    # energy: 2.1 kW all-in x $0.08/kWh = $0.168/chip-hour over 5,541.1 x 0.5 x 3600 / 1e6 = 9.974 M tok = $0.0168/M;
    # +$0.01/kWh: 2.1 x 0.01 = $0.021 / 9.974 = $0.00211/M
    assert "$0.168/chip-hour / (5,541.1 tok/s/chip x 0.5 x 3600 / 1e6) = $0.0168 per M output tok" in flat
    assert "each +$0.01/kWh adds $0.00211 per M output tok" in flat
    # the $/hour is the fleet's, whatever the load: 187 x $2.21 = $413.27
    assert "cost: 187 x $2.21/chip-hour = $413.27/hour" in flat


def test_utilisation_default_says_its_basis(capsys):
    code, out, err = run(capsys, *GB200)
    assert code == 0, err
    flat = " ".join(out.split())
    assert (
        "utilisation: the $/M output tok figures assume the fleet serves at the point's rate every hour (U = 1)" in flat
    )
    assert "scale 1/U" in flat


def test_utilisation_json_and_agentic(capsys):
    code, out, err = run(capsys, *GB200, "--utilisation", "0.25", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["utilisation"] == 0.25
    assert d["usd_per_mtok_at_utilisation"] == pytest.approx(2.21 / (d["tok_per_s_per_chip"] * 3600 / 1e6) / 0.25)
    code, out, err = run(capsys, "plan", "-s", "gb200-nvl72", *AGENT, "--utilisation", "0.25")
    assert code == 0, err
    flat = " ".join(out.split())
    # the agentic plan's $/M output tok, x 1/0.25 = x 4
    per_m = float(re.search(r"per M output tokens \$2\.21 / \(.*?\) = \$([\d.]+)", flat)[1])
    shown = float(re.search(r"utilisation 0\.25: .*? = \$[\d.]+ / 0\.25 = \$([\d.]+)", flat)[1])
    assert shown == pytest.approx(per_m * 4, rel=0.01)


@pytest.mark.parametrize("u", ["0", "-0.5", "1.5", "nan"])
def test_utilisation_out_of_range_is_refused(capsys, u):
    code, out, err = run(capsys, *GB200, "--utilisation", u)
    assert code != 0
    assert "--utilisation" in err and "at most 1" in err and "Traceback" not in err


# which tokens a $/M counts (newuser55 friction 3): compare's input + output, plan's the target's kind (output)
def test_dollars_per_mtok_basis_is_labelled_in_compare_and_plan(capsys):
    code, out, err = run(capsys, *GB200, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["usd_per_mtok_basis"] == "output tokens"
    # $2.21 / (output tok/s/chip x 3600 / 1e6): the output-token basis, by hand from the plan's own rate
    assert d["usd_per_mtok"] == pytest.approx(2.21 / (d["tok_per_s_per_chip"] * 3600 / 1e6))
    code, out, err = run(capsys, *GB200[:-2], "--target-kind", "total", "--json")
    assert code == 0, err
    assert json.loads(out)["usd_per_mtok_basis"] == "input + output tokens"
    cmp = ("compare", "-s", "gb200-nvl72", "-m", "llama-3.3-70b", "-w", "1k1k")
    code, out, err = run(capsys, *cmp, "--json")
    assert code == 0, err
    s = json.loads(out)["systems"]["gb200-nvl72"]
    assert s["usd_per_mtok_basis"] == "input + output tokens"
    h = s["headline"]  # $2.21 / (in+out tok/s/chip at peak x 3600 / 1e6)
    assert h["usd_per_mtok_at_peak"] == pytest.approx(2.21 / (h["peak_throughput_per_chip"] * 3600 / 1e6))
    code, out, err = run(capsys, *cmp)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "tok/s/kW and $/M tok (input + output)" in flat  # the tiers table's title
