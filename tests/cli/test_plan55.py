"""plan55: plan's frictions from round 55's new-user pass (newuser55), each checked by hand.

- One instance is one: ``plan -s h100 -m llama-3.3-70b -w 1k1k --target 1000`` needs ceil(1,000 / 4,912) = 1 instance
  of 2 chips in 1 node of 8; it printed "delivered: 1 instances" and "2 chips, 1 nodes".
"""

import re

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
