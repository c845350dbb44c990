"""``jalapeno.step_cost``, the public API's step cost: cost/step.step_cost with the CLI ``step``'s refusal of a
step that has no tokens (cost/batch.refuse_no_tokens).

The checks live here, not in cost/step.step_cost, because the simulator (serve/sim/step_time.py), the sweeps and
the fits call that one on their hot paths with batches whose points may hold no work; a user who asks for the cost of
an empty step gets an error naming the argument instead of a price of launch and collective latency alone.
"""

from __future__ import annotations

from jalapeno.cost.batch import Batch, refuse_no_tokens
from jalapeno.cost.step import StepCost
from jalapeno.cost.step import step_cost as _step_cost


def step_cost(
    model, pricer, layout, precision, batch, mtp=None, memory_fraction=None, overlap="none", engine_memory=None
) -> StepCost:
    """:func:`jalapeno.cost.step.step_cost` (the same arguments, values and errors), refusing an empty step first.

    Raises:
        SpecError: ``batch`` has a point with no decoding sequence and no prompt token (field ``batch``); every
            error of cost/step.step_cost.
    """
    if isinstance(batch, Batch):
        refuse_no_tokens(
            batch.decode_seqs,
            batch.prefill_tokens,
            "batch",
            "give Batch.make(decode_seqs=N, decode_ctx=C) (decoding sequences) and/or prefill_tokens=N at every point",
        )
    return _step_cost(model, pricer, layout, precision, batch, mtp, memory_fraction, overlap, engine_memory)
