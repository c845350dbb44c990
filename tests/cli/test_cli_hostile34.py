"""Round 34's hostile pass (ux34): inputs that ran where they should have been refused, each refusal naming its
field and fix."""

from __future__ import annotations

import pytest
from cli_runner import check_error, run


@pytest.mark.parametrize("cmd", [["audit", "--claim", "max_interactivity=10"],
                                 ["sensitivity", "--metric", "max_interactivity"]])
def test_audit_and_sensitivity_refuse_a_workload_past_the_models_context(capsys, cmd):
    """128k1k is 131,072 + 1,024 tokens; llama-3.1-405b's context is 131,072 (max_position_embeddings in its
    config.json), so plan and compare refuse it; audit priced it (PLAUSIBLE at 9.3 tok/s/user) and sensitivity too."""
    check_error(*run(capsys, cmd[0], "--system", "a100-sxm", "-m", "llama-3.1-405b", "-p", "bf16", "-w", "128k1k",
                     *cmd[1:]), "--workload", "exceed llama-3.1-405b's context of 131072 tokens")


def test_plan_chips_says_one_chip_in_the_singular(capsys):
    """A 1-chip fleet (below b200's smallest DeepSeek-R1 instance) read '1 chips hold no instance'."""
    check_error(*run(capsys, "plan", "--system", "b200", "-w", "1k1k", "--chips", "1"), "--chips",
                "1 chip holds no instance of b200")
