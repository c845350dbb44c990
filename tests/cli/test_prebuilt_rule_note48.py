"""Round 48 (review48b): the sglang profiles' version rule ``disagg_prebuilt = skip`` (before 0.5.10rc0, mi355x48) is
priced only with serve/prebuilt_skip.PREBUILT_SKIP_ON (shipped off; serve/disagg._prebuilt_token_time reads the
switch first). ``predict --engine sglang-b200-dsr1-fp4`` (image v0.5.6, an aggregated recipe) listed the rule as a
cost the model charged, with no word of the switch; it is now a cli/common.SWITCHED_RULE_FIELDS entry, so
``predict --engine``, ``--stack sglang@VERSION`` and ``--set efficiency.disagg_prebuilt`` say NOT CHARGED while the
switch is off, and the rule reads as charged again with it on."""

from __future__ import annotations

import json

from cli_runner import run

from jalapeno.cli import system_notes
from jalapeno.cli.engine_opts import engine_rules
from jalapeno.serve import prebuilt_skip

ARGS = ("predict", "-s", "b200", "-m", "deepseek-r1", "-c", "16")


def _rule(stack: str) -> dict:
    return {r["field"]: r for r in engine_rules(object(), stack)}["disagg_prebuilt"]


def test_the_prebuilt_rule_is_not_charged_with_its_switch_off():
    # sglang 0.5.9 is the last release with the skipping flow (data/stacks.toml: before 0.5.10rc0)
    rule = _rule("sglang@0.5.9")
    assert rule["value"] == "skip"
    assert rule["charged"] is False
    assert "NOT CHARGED: jalapeno.serve.prebuilt_skip.PREBUILT_SKIP_ON is off" in rule["span"]
    assert "disagg_prebuilt" not in {r["field"] for r in engine_rules(object(), "sglang@0.5.10rc0")}


def test_the_prebuilt_rule_is_charged_with_its_switch_on(monkeypatch):
    monkeypatch.setattr(prebuilt_skip, "PREBUILT_SKIP_ON", True)
    rule = _rule("sglang-rocm@0.5.9")
    assert rule["charged"] is True
    assert "NOT CHARGED" not in rule["span"]


def test_predict_engine_says_not_charged(capsys, monkeypatch):
    monkeypatch.setattr(system_notes, "_NOTED", set())
    code, out, err = run(capsys, *ARGS, "--engine", "sglang-b200-dsr1-fp4", "--json")
    assert code == 0, err
    rules = {r["field"]: r for r in json.loads(out[out.index("{") :])["version_rules"]}
    assert rules["disagg_prebuilt"]["charged"] is False  # the recipe's image is v0.5.6 (< 0.5.10rc0)


def test_stack_version_and_set_say_not_charged(capsys, monkeypatch):
    monkeypatch.setattr(system_notes, "_NOTED", set())
    code, _, err = run(capsys, *ARGS, "--stack", "sglang@0.5.9", "--set", "efficiency.disagg_prebuilt=skip")
    assert code == 0, err
    flat = " ".join(err.split())
    assert "disagg_prebuilt = skip (NOT CHARGED: its switch is off; sglang < 0.5.10rc0)" in flat
    assert (
        "--set efficiency.disagg_prebuilt is not charged: its switch serve/prebuilt_skip.PREBUILT_SKIP_ON is off"
        in flat
    )
