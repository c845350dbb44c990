"""The typer declarations of the options ``predict`` and ``frontier`` both take (cli/predict_cmd.py,
cli/frontier_cmd.py), written once: each function returns a fresh ``typer.Option`` with the option's default, flags
and help, as cli/common.model_option and cli/engine_opts.engine_option do for theirs. Their parsing and checks stay
in cli/serving_opts.py. Written in round 54 (code54): the two commands repeated these declarations word for word
since frontier left cli/serving_cmds.py (round 52)."""

from __future__ import annotations

import typer

from jalapeno.deploy.deployment import MEMORY_FRACTION_HELP
from jalapeno.specs.routing import ROUTING_HELP


def system_option():
    """``--system`` / ``-s`` (required): a catalog system name or a system TOML path."""
    return typer.Option(..., "--system", "-s", help="System name or TOML path.")


def fixed_lengths_option():
    """``--fixed-lengths``: exact ISL/OSL instead of InferenceX's lengths drawn from [0.8L, L]."""
    return typer.Option(False, "--fixed-lengths", help="Exact ISL/OSL instead of InferenceX's [0.8L, L].")


def power_option():
    """``--power``: the power convention of the per-kW figures (default all-in; analysis/power_cost.py)."""
    return typer.Option("all-in", "--power", help="Power convention: chip, sustained or all-in.")


def memory_fraction_option():
    """``--memory-fraction``: the engine's share of HBM for weights and KV cache (deploy/deployment.py)."""
    return typer.Option(None, "--memory-fraction", help=MEMORY_FRACTION_HELP)


def routing_option():
    """``--routing``: how tokens pick experts (default uniform; specs/routing.py)."""
    return typer.Option("uniform", "--routing", help=ROUTING_HELP)


def json_option():
    """``--json``: print the result as JSON instead of tables."""
    return typer.Option(False, "--json", help="Print JSON.")
