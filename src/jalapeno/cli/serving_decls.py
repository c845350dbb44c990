"""The typer declarations of the options several serving commands take, written once: each function returns a fresh
``typer.Option`` with the option's default, flags and help, as cli/common.model_option and cli/engine_opts.engine_option
do for theirs. Their parsing and checks stay in cli/serving_opts.py. Written in round 54 (code54) for ``predict`` and
``frontier`` (cli/predict_cmd.py, cli/frontier_cmd.py), which repeated these declarations word for word since frontier
left cli/serving_cmds.py (round 52); ``compare`` and ``simulate`` take the ones they declared word for word too, and
``audit`` and ``sensitivity`` (cli/audit_cmds.py, cli/sensitivity_cmd.py) share the claim options below (mend54)."""

from __future__ import annotations

import typer

from jalapeno.cli.common import FIXED_WORKLOAD_HELP
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


# ---- audit's and sensitivity's claim options (one claim's context: analysis/claims.py) ----------------------

#: ``--power`` of audit and sensitivity: per-kW metrics read at a convention, ``load`` among them (default: all-in)
CLAIM_POWER_HELP = (
    "Power convention of per-kW metrics: chip (TDP), sustained, all-in (provisioned; the default) or load "
    "(the chip power drawn at each operating point)."
)


def claim_workload_option():
    """``--workload`` / ``-w`` of a claim: a fixed-length workload name (cli/common.FIXED_WORKLOAD_HELP)."""
    return typer.Option(None, "--workload", "-w", help=FIXED_WORKLOAD_HELP)


def claim_power_option():
    """``--power`` of a claim (:data:`CLAIM_POWER_HELP`); None: the claim file's or all-in."""
    return typer.Option(None, "--power", help=CLAIM_POWER_HELP)


def claim_serving_option():
    """``--serving`` of a claim: agg, disagg or both (default)."""
    return typer.Option("both", "--serving", help="agg, disagg or both (default).")


def claim_json_option():
    """``--json`` of audit and sensitivity: print the JSON result."""
    return typer.Option(False, "--json", help="Print the JSON result.")
