"""Round 44 (mend44, break44's leftover): a system file whose ``[efficiency]`` sets a field a shipped-off switch
gates (``prompt_step_s_per_token``; cost/step.PROMPT_TOKEN_STEP_ON ships off) is told the field is not charged, as
``--set efficiency.prompt_step_s_per_token`` is (cli/common.SWITCHED_RULE_FIELDS). Before, the file was priced
exactly as without the field and said nothing."""

from __future__ import annotations

import json

import pytest
from cli_runner import run

from jalapeno.cli import system_notes

ARGS = ("predict", "-m", "llama-3.3-70b", "-c", "16", "--json")
NOTE = (
    "efficiency.prompt_step_s_per_token is not charged: its switch cost/step.PROMPT_TOKEN_STEP_ON is off "
    "(shipped off), so the what-if changes nothing"
)


def _predict(capsys, monkeypatch, system, *extra):
    monkeypatch.setattr(system_notes, "_NOTED", set())  # the notes are said once per run (cli/system_notes.forget_notes)
    code, out, err = run(capsys, *ARGS, "-s", str(system), *extra)
    assert code == 0, err
    return json.loads(out[out.index("{") :]), err


def _write(path, text):
    path.write_text(text)
    return path


@pytest.fixture
def variant(tmp_path):
    # 1 ms a prompt token would add about 1 s to a 1,000-token prompt's step, were it charged
    return _write(
        tmp_path / "ps.toml", 'base = "h200"\nname = "h200-ps"\n[efficiency]\nprompt_step_s_per_token = 1e-3\n'
    )


def test_a_variant_file_setting_a_switched_off_field_is_told(capsys, monkeypatch, variant):
    base, err = _predict(capsys, monkeypatch, "h200")
    assert "not charged" not in err
    got, err = _predict(capsys, monkeypatch, variant)
    assert got["ttft_s"] == base["ttft_s"]  # not charged: the switch is off
    assert f"note: ps.toml: {NOTE}" in err


def test_the_field_in_a_base_file_or_as_a_quoted_key_is_told(capsys, monkeypatch, tmp_path, variant):
    child = _write(tmp_path / "child.toml", f'base = "{variant}"\nname = "h200-ps-child"\n')
    _, err = _predict(capsys, monkeypatch, child)
    assert f"note: child.toml: {NOTE}" in err
    quoted = _write(
        tmp_path / "q.toml", 'base = "h200"\nname = "h200-q"\n"efficiency.prompt_step_s_per_token" = 1e-3\n'
    )
    _, err = _predict(capsys, monkeypatch, quoted)
    assert f"note: q.toml: {NOTE}" in err


def test_a_charged_field_or_the_same_set_on_the_command_line_gets_no_file_note(capsys, monkeypatch, tmp_path, variant):
    charged = _write(tmp_path / "kl.toml", 'base = "h200"\nname = "h200-kl"\n[efficiency]\nkernel_launch_s = 1e-6\n')
    _, err = _predict(capsys, monkeypatch, charged)
    assert "not charged" not in err
    # --set replaces the file's value: the --set note alone, once (5e-4: within break50's 1e-3 s/token ceiling)
    _, err = _predict(capsys, monkeypatch, variant, "--set", "efficiency.prompt_step_s_per_token=5e-4")
    assert err.count("not charged") == 1 and f"note: --set {NOTE}" in err
