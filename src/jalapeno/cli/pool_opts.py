"""``--prefill`` / ``--decode`` (predict, simulate, compare): a pool written as ``key=value`` items, parsed and checked.

:func:`parse_pool` reads ``"tp=4,ep=4,dp=1,pp=1,cp=1,eplb=32,workers=2,dp_dispatch=random"`` into a
deploy/deployment.Pool; :func:`check_pool` validates its layout for a model on a system (deploy/layout.validate_layout,
check_eplb), naming the pool option and writing the fix as pool keys. Each error is a SpecError (or
InfeasibleDeployment) naming the option and the key. Split from cli/serving_opts.py (round 53, module budget).
"""

from __future__ import annotations

import re

from jalapeno.cli.engine_opts import check_dispatch_ranks
from jalapeno.errors import SpecError


def check_pool(pool, option: str, model, system) -> None:
    """Validate a parsed pool's layout for ``model`` on ``system``, naming the pool option in the error.

    Raises:
        InfeasibleDeployment / SpecError: as deploy/layout.validate_layout and check_eplb, with the
            field ``<option> <key>`` and a fix written as pool keys (``eplb=8``, not ``--eplb 8``); ``cp=`` above 1
            on ``--decode`` (context parallelism is priced for prefill workers only, deploy/deployment.py).
    """
    from jalapeno.deploy.layout import check_eplb, validate_layout
    from jalapeno.errors import JalapenoError

    if option == "--decode" and pool.layout.cp > 1:  # was field 'cp', a name the command does not have (break47)
        raise SpecError(
            "--decode cp",
            f"context parallelism (CP{pool.layout.cp}) on the decode pool: CP is modelled "
            "for prefill workers only (decode context parallelism is not modelled)",
            'drop cp= from --decode; put it in the prefill pool only, e.g. --prefill "tp=8,cp=4,workers=1"',
        )
    try:
        validate_layout(pool.layout, model, system)
        if pool.layout.eplb is not None:
            check_eplb(pool.layout, model)
    except JalapenoError as e:
        fix = re.sub(r"--(tp|dp|ep|pp|cp|eplb) ", r"\1=", e.fix)
        raise type(e)(f"{option} {e.field}", e.problem, fix) from None


def parse_pool(text: str, option: str):
    """Parse ``"tp=4,ep=4,dp=1,pp=1,cp=1,eplb=32,workers=2"`` into a Pool (``cp``: context
    parallelism; ``eplb``: redundant experts; ``dp_dispatch=random`` or ``refill``: requests on random DP
    ranks, Layout.dp_dispatch).

    Raises:
        SpecError: unknown key or a non-integer value (names the option and the key); ``dp_dispatch``
            other than balanced on ``--prefill`` (not priced there).
    """
    from jalapeno.deploy.deployment import Pool
    from jalapeno.deploy.layout import Layout

    vals = {"tp": 1, "dp": 1, "ep": 1, "pp": 1, "cp": 1, "eplb": None, "workers": 1, "dp_dispatch": "balanced"}
    parts = [p.strip() for p in text.split(",")]
    if not any(parts):
        raise SpecError(option, "empty pool", f'describe it, e.g. {option} "tp=4,ep=4,workers=1"')
    if not all(parts[:-1]):  # "tp=4,,ep=4" was read as "tp=4,ep=4": a typo (a dropped key) passed
        raise SpecError(
            option,
            f"{text!r} has an empty item between commas",
            f'write one key=value per item, e.g. {option} "tp=4,ep=4,workers=1"',
        )
    parts = [p for p in parts if p]
    seen = set()
    for part in parts:
        key, _, val = part.partition("=")
        key = key.strip().lower()
        if key not in vals:
            raise SpecError(
                option, f"unknown key {key!r}", "use tp=, dp=, ep=, pp=, cp=, eplb=, dp_dispatch= and workers="
            )
        if key in seen:
            raise SpecError(f"{option} {key}", "given twice", f"write {key}= once")
        seen.add(key)
        if key == "dp_dispatch":  # a name, checked with the layout (deploy/layout.validate_layout)
            vals[key] = val.strip().lower()
            continue
        try:
            vals[key] = int(val)
        except ValueError:
            raise SpecError(f"{option} {key}", f"{val!r} is not an integer", f"write {key}=<integer>") from None
    check_dispatch_ranks(option, vals["dp"], vals["dp_dispatch"])
    workers = vals.pop("workers")
    if workers < 1:
        raise SpecError(f"{option} workers", "must be >= 1", "write workers=<positive integer>")
    return Pool(Layout(**vals), workers)
