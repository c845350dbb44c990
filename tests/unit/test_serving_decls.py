"""predict's and frontier's shared option declarations (cli/serving_decls.py, round 54 D1): each option keeps the
flags, default and help it was declared with in both commands before they were shared (the literals below are those
declarations as round 53 wrote them in cli/predict_cmd.py and cli/frontier_cmd.py), so ``--help`` is unchanged."""

import pytest
import typer

from jalapeno.deploy.deployment import MEMORY_FRACTION_HELP
from jalapeno.specs.routing import ROUTING_HELP

#: option -> (flags, default, help) as round 53 declared them, word for word
BEFORE = {
    "--system": (["--system", "-s"], ..., "System name or TOML path."),
    "--fixed-lengths": (["--fixed-lengths"], False, "Exact ISL/OSL instead of InferenceX's [0.8L, L]."),
    "--power": (["--power"], "all-in", "Power convention: chip, sustained or all-in."),
    "--memory-fraction": (["--memory-fraction"], None, MEMORY_FRACTION_HELP),
    "--routing": (["--routing"], "uniform", ROUTING_HELP),
    "--json": (["--json"], False, "Print JSON."),
}


def _params(name: str) -> dict:
    from jalapeno.cli.app import _register, app

    _register()
    cmd = typer.main.get_command(app).commands[name]
    return {p.opts[0]: p for p in cmd.params}


@pytest.mark.parametrize("command", ["predict", "frontier"])
@pytest.mark.parametrize("option", sorted(BEFORE))
def test_each_shared_option_keeps_its_flags_default_and_help(command, option):
    flags, default, help_text = BEFORE[option]
    p = _params(command)[option]
    assert p.opts + p.secondary_opts == flags
    assert p.help == help_text
    if default is ...:  # typer's required option
        assert p.required
    else:
        assert p.default == default and not p.required


def test_the_two_commands_read_the_same_declaration():
    a, b = _params("predict"), _params("frontier")
    for option in BEFORE:
        assert (a[option].help, a[option].default, a[option].opts) == (
            b[option].help,
            b[option].default,
            b[option].opts,
        )
