"""``--as-deployed`` (compare, report): each system with an engine recipe runs as deployed, the others as stated.

:func:`deployed_recipes` finds each catalog system's recipe for the model and workload (deploy/engines.deployed_recipe;
a user file named like a catalog system is not deployed with its recipe) and pins its precision;
:func:`refuse_with_as_deployed` refuses the options a recipe would override; :func:`mtp_unlike` is the sentence that
says where a recipe runs MTP and a system priced as stated does not (per-user speeds not like for like). Split from
cli/engine_opts.py (round 53, module budget).
"""

from __future__ import annotations

from jalapeno.errors import SpecError


AS_DEPLOYED_HELP = (
    "Systems with an engine recipe run as deployed (its precision, MTP, serving, limits); the others as stated."
)


def refuse_with_as_deployed(given: dict[str, object]) -> None:
    """``--as-deployed`` lets each system's recipe set these options: refuse the ones given (not None).

    Raises:
        SpecError: field ``--as-deployed``, naming the options to drop.
    """
    names = [opt for opt, v in given.items() if v is not None]
    if names:
        raise SpecError(
            "--as-deployed",
            f"{', '.join(names)} would be overridden by each system's engine recipe",
            f"drop {', '.join(names)} (recipes set them), or drop --as-deployed to state them",
        )


def deployed_recipes(
    pricers, model: str, workload: str | None, isl: int | None, osl: int | None, precisions: dict[str, list[str]] | None
) -> dict:
    """System name → the engine recipe it is deployed with for this model and workload (``--as-deployed``;
    systems without one are left out). Where ``precisions`` is given, each such system's entry becomes
    the recipe's precision (in place), as the recipe pins it."""
    from jalapeno.cli.engine_opts import _preset_name
    from jalapeno.deploy.engines import deployed_recipe
    from jalapeno.specs.catalog import is_catalog_system

    out = {}
    for p in pricers:  # a user file named like a catalog system is not deployed with its recipe
        r = deployed_recipe(p.system.name, model) if is_catalog_system(p.system) else None
        if r is not None:
            out[p.system.name] = r.for_workload(_preset_name(workload, isl, osl), p.system.name)
            if precisions is not None:
                precisions[p.system.name] = [r.precision]
    return out


def mtp_unlike(recipes: dict, stated: list[str]) -> str:
    """The sentence after compare --as-deployed's recipe line where a recipe runs MTP and a system without a
    recipe runs as stated, without it: Jalapeño's max 138.9 tok/s/user read 0.43x GB300's as-deployed 321.4
    (MTP up to 3 drafts); with --mtp 3 --mtp-acceptance 0.75 it reads 326.1. '' where nothing differs.

    The suggested --mtp-acceptance is the one the recipes are priced at (Recipe.mtp_for: the engine profile's
    fitted acceptance where data/stack_fits.toml has one, 0.8 for dynamo-trtllm on DeepSeek-R1; the recipe's assumed
    one otherwise): it read the recipe's assumed 0.75 beside deployments labelled MTP3@0.8 (newuser49).

    >>> from types import SimpleNamespace as N
    >>> r = N(mtp_draft_by_seqs_per_rank=((71.0, 3), (float("inf"), 1)), mtp_for=lambda k: N(acceptance=0.8))
    >>> mtp_unlike({"gb300-nvl72": r}, ["jalapeno"])[:81]
    '. The recipes of gb300-nvl72 run MTP (speculative decoding, up to 3 draft tokens)'
    >>> mtp_unlike({"gb300-nvl72": r}, ["jalapeno"])[-48:]
    '--mtp 3 --mtp-acceptance 0.8` prices it with MTP'
    >>> mtp_unlike({"gb300-nvl72": r}, []), mtp_unlike({"b200": N(mtp_draft_by_seqs_per_rank=None)}, ["jalapeno"])
    ('', '')
    """
    mtp = {n: r for n, r in recipes.items() if getattr(r, "mtp_draft_by_seqs_per_rank", None)}
    if not mtp or not stated:
        return ""
    k = max(d for r in mtp.values() for _, d in r.mtp_draft_by_seqs_per_rank)
    acc = [r.mtp_for(k).acceptance for r in mtp.values() if k in (d for _, d in r.mtp_draft_by_seqs_per_rank)]
    a = f"{min(acc):g}" if acc else "A"
    return (
        f". The recipes of {', '.join(mtp)} run MTP (speculative decoding, up to {k} draft tokens); "
        f"{', '.join(stated)} {'runs' if len(stated) == 1 else 'run'} without it, so per-user speeds and the "
        f"ratios at them are not like for like: `jalapeno compare -s {','.join(stated)} --mtp {k} "
        f"--mtp-acceptance {a}` prices {'it' if len(stated) == 1 else 'them'} with MTP"
    )
