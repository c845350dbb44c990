"""Round 24 second new-user pass (newuser24): what a newcomer typed and what it did.

The defaults below are read by hand from the option declarations: ``step --ep`` defaults to every
chip of the instance (tp x dp, cli/step_cmd.py), ``predict``/``simulate --ep`` to 1 (MoE TP over
tp x dp). A newcomer comparing ``step --tp 4`` with ``predict --tp 4`` got two MoE layouts
(EP4 and TP4) with nothing in either help saying so.
"""

from __future__ import annotations

import pytest
from cli_runner import run

MINIMAX = ("--system", "b300", "--model", "minimax-m2.5", "-p", "fp4")


def _flat(text: str) -> str:
    """rich wraps tables and help at the terminal width (help inside box borders): borders dropped,
    whitespace joined."""
    return " ".join(text.replace("│", " ").split())


def test_step_tp_alone_is_moe_ep_over_the_instance(capsys):
    code, out, err = run(capsys, "step", *MINIMAX, "--tp", "4", "--batch", "8", "--context", "1024")
    assert code == 0, err
    assert "attn TP4 DP1 · MoE TP1 EP4" in _flat(out)


def test_predict_tp_alone_is_moe_tp(capsys):
    code, out, err = run(capsys, "predict", *MINIMAX, "--tp", "4", "-c", "8", "--isl", "1024", "--osl", "1024")
    assert code == 0, err
    assert "attn TP4 DP1 · MoE TP4 EP1" in _flat(out)


def test_step_with_ep_1_prices_predicts_layout(capsys):
    """The way the helps give to compare the same layout on both commands."""
    code, out, err = run(capsys, "step", *MINIMAX, "--tp", "4", "--ep", "1", "--batch", "8", "--context", "1024")
    assert code == 0, err
    assert "attn TP4 DP1 · MoE TP4 EP1" in _flat(out)


@pytest.mark.parametrize("cmd, says", [("step", "predict and simulate default to --ep 1"),
                                       ("predict", "`step` defaults to EP over tp*dp"),
                                       ("simulate", "`step` defaults to EP over tp*dp")])
def test_each_help_names_the_other_default(capsys, monkeypatch, cmd, says):
    monkeypatch.setenv("COLUMNS", "200")  # one help line per option row, fewer wraps inside a phrase
    code, out, err = run(capsys, cmd, "--help")
    assert code == 0, err
    assert says in _flat(out)


def test_explore_without_the_extra_leaves_no_store_behind(capsys, monkeypatch, tmp_path):
    """Without the [explore] extra, explore made ./jalapeno-results/runs before refusing on optuna;
    `results list` then showed an empty store instead of "no results store ... run explore first"."""
    import sys
    from pathlib import Path

    space = Path(__file__).resolve().parents[2] / "examples" / "explore_700w.toml"
    monkeypatch.setitem(sys.modules, "optuna", None)  # importing it fails, as when not installed
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "explore", str(space))
    assert code == 2 and "Traceback" not in err
    assert "optuna" in err and ".[explore]" in err
    assert list(tmp_path.iterdir()) == []
    code, out, err = run(capsys, "results", "list")
    assert code == 2 and "no results store" in err
