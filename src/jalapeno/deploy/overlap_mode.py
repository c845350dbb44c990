"""Compute/communication overlap of a deployment: the modes, their checks, and the mode each pool runs.

Split from deploy/deployment.py (round 42, module budget); deploy/deployment.py re-exports every name.
"""

from __future__ import annotations

from jalapeno.deploy.layout import Layout
from jalapeno.deploy.sharding import has_ep_all_to_all
from jalapeno.errors import SpecError, choice_hint


#: Compute/communication overlap modes: ``none`` (serial step) and ``tbo`` (two-batch overlap).
OVERLAP_MODES = ("none", "tbo")


def check_overlap(overlap: str) -> None:
    """Refuse an unknown overlap mode.

    Raises:
        SpecError: ``overlap`` is not one of :data:`OVERLAP_MODES`.
    """
    if overlap not in OVERLAP_MODES:
        raise SpecError(
            "overlap",
            f"unknown overlap mode {overlap!r}{choice_hint(overlap, OVERLAP_MODES)}",
            f"use one of {', '.join(OVERLAP_MODES)} (--overlap none|tbo)",
        )


def check_overlap_layout(overlap: str, model, layout: Layout) -> None:
    """Two-batch overlap needs a MoE all-to-all to hide (attention DP with EP > 1).

    Raises:
        SpecError: unknown mode, or ``tbo`` on a layout without an EP all-to-all.
    """
    check_overlap(overlap)
    if overlap == "tbo" and not has_ep_all_to_all(model, layout):
        raise SpecError(
            "overlap",
            f"two-batch overlap hides the MoE dispatch/combine all-to-all, which "
            f"{model.name} on {layout.label} does not have",
            "use attention DP with expert parallelism (e.g. --dp 8 --ep 8) or --overlap none",
        )


def pool_overlap(overlap: str, model, layout: Layout) -> str:
    """The overlap a pool of ``layout`` runs under the deployment's ``overlap``: ``tbo`` only where the
    layout has an EP all-to-all to hide (a TP-only prefill pool beside a DEP decode pool runs serially,
    as SGLang's two-batch overlap needs the DeepEP dispatcher), else ``none``."""
    return "tbo" if overlap == "tbo" and has_ep_all_to_all(model, layout) else "none"
