"""A step's input checks (cost/step.step_cost and step_times run them before pricing): the arguments' types, the
memory fraction, a decoding context past the model's, context parallelism on a decoding batch, the overlap against
the layout, and the layout, MTP and precision against the model and system (:func:`_checked`, remembered for the
last :data:`_CHECKED_KEEP` passes: a fixed-concurrency solve prices each deployment nine times). Each refusal is a
:class:`~jalapeno.errors.SpecError` (or InfeasibleDeployment, deploy/layout.validate_layout) naming the argument and
the fix. Split from cost/step.py (round 55, module budget): the same checks, in the same order.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from jalapeno.cost.batch import Batch
from jalapeno.cost.pricer import Pricer, check_pricer
from jalapeno.deploy.deployment import check_memory_fraction, check_overlap_layout
from jalapeno.deploy.engine_memory import EngineMemory
from jalapeno.deploy.layout import Layout, for_model, validate_layout
from jalapeno.deploy.mtp import MTP, check_mtp
from jalapeno.errors import SpecError
from jalapeno.specs.formats import Precision
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.precision_checks import check_precision


def checked_step_inputs(
    model: ModelSpec,
    pricer: Pricer,
    layout: Layout,
    precision: Precision,
    batch: Batch,
    mtp: MTP | None,
    memory_fraction: float | None,
    overlap: str,
    engine_memory,
) -> Layout:
    """``layout`` labelled for ``model`` (deploy/layout.for_model) once every argument of a step cost passes its
    check (cost/step.step_cost's arguments; ``batch``: the batch's distinct points, (N,) arrays).

    Raises:
        SpecError: an argument of the wrong type (named: model, layout, precision, batch, mtp, engine_memory), a
            memory fraction out of range, a decoding context past the model's (ModelSpec.check_context), CP > 1
            with decoding sequences, an unknown ``overlap`` or ``tbo`` on a layout without an EP all-to-all, MTP on
            a model without an MTP module, a precision the model or chip cannot run.
        InfeasibleDeployment: the layout cannot run the model on the system.
    """
    check_pricer(pricer, "step_cost")
    check_memory_fraction(memory_fraction)
    for name, obj, kind, fix in (
        ("model", model, ModelSpec, "load_model(name)"),
        ("layout", layout, Layout, "Layout(tp=..., dp=..., ep=...)"),
        ("precision", precision, Precision, "get_precision(name)"),
        ("batch", batch, Batch, "Batch.make(decode_seqs=..., decode_ctx=...)"),
    ):
        if not isinstance(obj, kind):
            raise SpecError(
                f"step_cost: {name}", f"expected a {kind.__name__}, got {type(obj).__name__}", f"pass {fix}"
            )
    if mtp is not None and not isinstance(mtp, MTP):
        raise SpecError(
            "step_cost: mtp",
            f"expected an MTP or None, got {type(mtp).__name__}",
            "pass MTP(draft_tokens, acceptance), or None for no speculative decoding",
        )
    if engine_memory is not None and not isinstance(engine_memory, EngineMemory):  # 'vllm-0.11': AttributeError
        raise SpecError(
            "step_cost: engine_memory",
            f"expected an EngineMemory or None, got {type(engine_memory).__name__} {engine_memory!r:.40}",
            "pass deploy/engine_memory.get_engine_memory(name), or None",
        )
    decoding = batch.decode_seqs > 0
    if decoding.any():  # the check the CLI's --context makes (ModelSpec.check_context); the API skipped it (break52)
        model.check_context(
            float(batch.decode_ctx[decoding].max()),
            "batch.decode_ctx",
            fix="give decode_ctx at most the model's context, or a model with a longer context",
        )
    layout = _checked(model, pricer.system, layout, precision, mtp)
    if layout.cp > 1 and np.any(batch.decode_seqs > 0):
        raise SpecError(
            "cp",
            f"context parallelism (CP{layout.cp}) is modelled for prefill steps only, "
            "and the batch has decoding sequences",
            "give a prefill-only batch (decode_seqs = 0, e.g. --batch 0 --prefill-tokens N) or set cp = 1",
        )
    check_overlap_layout(overlap, model, layout)
    return layout


#: the last :data:`_CHECKED_KEEP` (model, system, layout, precision, mtp) :func:`_checked` passed, with the layout
#: for the model, by (ids, layout), oldest first: its checks are pure in these, and a fixed-concurrency solve
#: prices each deployment nine times, every deployment of the sweep in each pass (a few dozen: the memo holds them)
_CHECKED: OrderedDict = OrderedDict()  # the oldest leaves in O(1)
_CHECKED_KEEP = 256


def _checked(model: ModelSpec, system, layout: Layout, precision: Precision, mtp: MTP | None) -> Layout:
    """``layout`` labelled for ``model`` (its label names a dense model's FFN, a MoE model's experts) once it
    is checked to run ``model`` on ``system`` with ``precision`` and ``mtp``; a pass is remembered (the very
    same model, system, precision and MTP objects and an equal layout), a refusal raises every time."""
    key = (id(model), id(system), id(precision), id(mtp), layout)
    hit = _CHECKED.get(key)  # the entry holds its objects: live ids
    if hit is not None and hit[0] is model and hit[1] is system and hit[2] is precision and hit[3] is mtp:
        return hit[4]
    validate_layout(layout, model, system)
    out = for_model(layout, model)
    check_mtp(mtp, model)
    check_precision(precision, model, system.chip)
    _CHECKED.pop(key, None)
    _CHECKED[key] = (model, system, precision, mtp, out)
    if len(_CHECKED) > _CHECKED_KEEP:
        _CHECKED.popitem(last=False)
    return out
