"""predict's and frontier's shared option declarations (cli/serving_decls.py, round 54 D1): each option keeps the
flags, default and help it was declared with in both commands before they were shared (the literals below are those
declarations as round 53 wrote them in cli/predict_cmd.py and cli/frontier_cmd.py), so ``--help`` is unchanged.
mend54: compare and simulate take the ones they declared word for word, and audit and sensitivity share their claim
options (:data:`CLAIM_BEFORE`, the literals cli/audit_cmds.py and cli/sensitivity_cmd.py declared at main 8097b232)."""

import ast
from pathlib import Path

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


#: audit's and sensitivity's --power help as cli/audit_cmds.POWER_HELP wrote it at main 8097b232, word for word
AUDIT_POWER_HELP = (
    "Power convention of per-kW metrics: chip (TDP), sustained, all-in (provisioned; the default) or load "
    "(the chip power drawn at each operating point)."
)
#: option -> (flags, default, help) as audit and sensitivity declared them before mend54, word for word
CLAIM_BEFORE = {
    "--workload": (["--workload", "-w"], None, None),  # help: cli/common.FIXED_WORKLOAD_HELP, checked below
    "--power": (["--power"], None, AUDIT_POWER_HELP),
    "--serving": (["--serving"], "both", "agg, disagg or both (default)."),
    "--json": (["--json"], False, "Print the JSON result."),
}
#: command -> the BEFORE options it declared word for word before mend54 (compare's --json, simulate's --power and
#: compare's --system are worded otherwise and stay its own)
ALSO = {
    "compare": ("--fixed-lengths", "--power", "--memory-fraction", "--routing"),
    "simulate": ("--system", "--routing", "--memory-fraction", "--json"),
}
#: command -> the module that declares it
MODULES = {
    "compare": "serving_cmds",
    "simulate": "simulate_cmd",
    "audit": "audit_cmds",
    "sensitivity": "sensitivity_cmd",
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


def _check(p, flags, default, help_text) -> None:
    assert p.opts + p.secondary_opts == flags
    if help_text is not None:
        assert p.help == help_text
    if default is ...:
        assert p.required
    else:
        assert p.default == default and not p.required


@pytest.mark.parametrize("command, option", [(c, o) for c, opts in ALSO.items() for o in opts])
def test_compare_and_simulate_keep_each_shared_options_flags_default_and_help(command, option):
    _check(_params(command)[option], *BEFORE[option])


@pytest.mark.parametrize("command", ["audit", "sensitivity"])
@pytest.mark.parametrize("option", sorted(CLAIM_BEFORE))
def test_audit_and_sensitivity_keep_each_claim_options_flags_default_and_help(command, option):
    from jalapeno.cli.common import FIXED_WORKLOAD_HELP

    flags, default, help_text = CLAIM_BEFORE[option]
    p = _params(command)[option]
    _check(p, flags, default, help_text)
    if option == "--workload":
        assert p.help == FIXED_WORKLOAD_HELP


def _inline_flags(module: str) -> set[str]:
    """The flags a module still declares with a typer.Option call of its own (not a cli/serving_decls function)."""
    src = Path(__file__).resolve().parents[2] / "src" / "jalapeno" / "cli" / f"{module}.py"
    out = set()
    for node in ast.walk(ast.parse(src.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Option":
            out |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return out


@pytest.mark.parametrize("command", sorted(MODULES))
def test_each_command_reads_the_shared_declaration_not_a_copy(command):
    """compare and simulate repeated predict's declarations, audit and sensitivity each other's (mend54): each is now
    written once, in cli/serving_decls.py, and no module declares it again."""
    shared = ALSO.get(command, tuple(CLAIM_BEFORE))
    assert not _inline_flags(MODULES[command]) & set(shared)
