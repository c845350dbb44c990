"""Best of the published recipe entries a measured "best configuration" point could have run.

InferenceX's ``max_throughput_per_gpu`` rows are the highest throughput per GPU the benchmark
measured at one concurrency, over the entries of its search space that ran it. When several
``[[identified]]`` entries (data/engines.toml, deploy/engines.identified_candidates) ran the
point's concurrency, the point is validated ``best_entry@concurrency``: each entry is served at
that concurrency (serve/point.py, with the point's engine profile) and the highest throughput per
chip is the prediction — the same maximum the measurement took, over the same deployments, rather
than the model's own frontier (which searches layouts the benchmark never ran).

A point silent on MTP follows the search-space rule (fit/searched.searched_mapping): the entries
without MTP where any ran its concurrency, the MTP entries only where none without did
(:func:`silent_mtp_entries`). So a silent row's candidates do not depend on which path maps it.
"""

from __future__ import annotations

from dataclasses import replace

from jalapeno.cost.pricer import Pricer
from jalapeno.deploy.deployment import MTP, Deployment
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload


def best_entry(
    model: ModelSpec, pricer: Pricer, deployments: tuple[Deployment, ...], wl: Workload, concurrency: float
) -> dict:
    """The highest predicted throughput per chip over ``deployments`` at ``concurrency``.

    Returns a prediction dict (fit/validate.predict_points): ``throughput_per_chip``, ``feasible``,
    ``reason`` and ``entry`` (the winning deployment's label); infeasible when no entry is.
    """
    best = {"feasible": False, "reason": "no published entry is feasible"}
    for dep in deployments:
        r = serve_at_concurrency(model, pricer, dep, wl, [concurrency])
        tp = float(r.throughput_per_chip[0])
        if bool(r.feasible[0]) and tp > best.get("throughput_per_chip", 0.0):
            best = {"throughput_per_chip": tp, "feasible": True, "reason": "", "entry": dep.label}
    return best


def silent_mtp_entries(entries: tuple, uses_mtp: bool | None) -> tuple:
    """The entries a point may have run given its stated MTP use (``uses_mtp``: True, False, None = silent).

    ``entries`` are published recipe entries (deploy/identified.IdentifiedConfig, ``mtp_draft`` > 0
    when run with MTP) that ran the point's concurrency. A point that states its MTP use keeps them
    all (deploy/engines.identified_candidates already filtered by it); a silent one keeps the entries
    without MTP where any ran, else every entry — the rule the search-space mapping applies to a
    silent row (fit/searched.searched_mapping, "MTP assumed"), so both paths read one row alike.

    >>> from types import SimpleNamespace as E
    >>> [e.name for e in silent_mtp_entries((E(name="a", mtp_draft=3), E(name="b", mtp_draft=0)), None)]
    ['b']
    >>> [e.name for e in silent_mtp_entries((E(name="a", mtp_draft=3), E(name="c", mtp_draft=1)), None)]
    ['a', 'c']
    >>> len(silent_mtp_entries((E(name="a", mtp_draft=3), E(name="b", mtp_draft=0)), True))
    2
    """
    if uses_mtp is not None:
        return tuple(entries)
    without = tuple(e for e in entries if not e.mtp_draft)
    return without or tuple(entries)


def entry_candidates(
    system: str, model: str, framework: str, precision: str, isl: int, osl: int, concurrency: float | None, spec: str
) -> tuple[tuple[Deployment, ...], str]:
    """(deployments, note) of a best-configuration row that several published entries ran at its
    concurrency (``best_entry@concurrency``), else ((), ""): deploy/engines.identified_candidates
    with the row's stated MTP use (``spec``: its ``spec`` cell, ``mtp`` / ``none`` / other = silent),
    a silent row's narrowed by :func:`silent_mtp_entries`."""
    from jalapeno.deploy.engines import identified_candidates

    stated = {"mtp": True, "none": False}.get(spec)
    ran = identified_candidates(system, model, framework, precision, isl, osl, concurrency, stated)
    kept = silent_mtp_entries(tuple(ran), stated)
    if len(ran) < 2 or not kept:
        return (), ""
    return tuple(c.deployment() for c in kept), (
        f"best of the {len(kept)} published entries that ran concurrency {concurrency:g}"
        + (
            f" (of {len(ran)}: silent on MTP, the entries without MTP, as the search-space rule)"
            if len(kept) < len(ran)
            else ""
        )
    )


def with_stack_mtp(dep: Deployment | None, stack, model: str) -> Deployment | None:
    """``dep`` with its MTP acceptance replaced by the engine profile's (``stack``, specs/stacks.Stack)
    for ``model``, when it gives one; ``dep`` itself otherwise (also re-exported by fit/validate.py)."""
    if dep is None or dep.mtp is None:
        return dep
    a = stack.acceptance(model, dep.mtp.draft_tokens)
    if a is None or a == dep.mtp.acceptance:
        return dep
    return replace(dep, mtp=MTP(dep.mtp.draft_tokens, a))


def stack_mtp_note(dep: Deployment | None, stack, model: str) -> str:
    """A validate record's note when the engine profile's MTP acceptance replaces the one ``dep`` states (the record
    is labelled and priced with the profile's, :func:`with_stack_mtp`); "" when nothing is replaced.

    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.deploy.deployment import Pool
    >>> from jalapeno.specs.formats import get_precision
    >>> from jalapeno.specs.stacks import get_stack
    >>> d = Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)), mtp=MTP(1, 0.85))
    >>> stack_mtp_note(d, get_stack("trtllm"), "deepseek-r1")
    'MTP acceptance 0.675 (the trtllm profile, data/stack_fits.toml) priced in place of the stated 0.85'
    >>> stack_mtp_note(d, get_stack("default"), "deepseek-r1")
    ''
    """
    priced = with_stack_mtp(dep, stack, model)
    if dep is None or priced is dep:
        return ""
    return (
        f"MTP acceptance {priced.mtp.acceptance:g} (the {stack.name} profile, data/stack_fits.toml) priced in place "
        f"of the stated {dep.mtp.acceptance:g}"
    )
