"""vLLM V0 multi-step scheduling: the lengths such an engine computes, and the share of them it delivers.

AMD's and MangoBoost's MLPerf v5.1 Llama-2-70B Offline engines run vLLM V0 with ``num_scheduler_steps`` > 1
(fit/mlperf_engines.AMD_SCHEDULER_STEPS, SubmittedEngine.scheduler_steps): every sequence is computed to the end of
its window of steps. fit/mlperf.load_mlperf serves those rows with the computed lengths (:func:`multi_step_spread`)
and counts the delivered share. Split out of fit/mlperf_engines.py (round 48) for the module budget; re-exported
there.
"""

from __future__ import annotations

import numpy as np

from jalapeno.errors import SpecError
from jalapeno.specs.workload import LengthSpread


def multi_step_spread(spread: LengthSpread, steps: int) -> tuple[LengthSpread, float]:
    """The lengths a vLLM V0 multi-step engine *computes* for ``spread`` and the share of its tokens delivered.

    With ``num_scheduler_steps`` n, V0 schedules decode in windows of n steps and checks stops only after
    a window: vLLM's multi-step output processor (``vllm/engine/output_processor/multi_step.py``,
    ``_process_seq_outputs``, v0.6-v0.9) truncates the tokens past ``max_tokens`` and past EOS, so a
    sequence keeps its slot and is computed to the window's end. Its prompt step yields the first token
    and its L - 1 decode tokens take ceil((L - 1) / n) windows: it is computed as
    L' = 1 + n·ceil((L - 1) / n) output tokens (mean waste about (n - 1) / 2 over a spread of lengths).
    Named assumption: AMD's and MangoBoost's vLLM 0.9.1 builds keep upstream's multi-step output processor.

    Args:
        spread: the delivered (ISL, OSL) pairs; each OSL rounded to whole tokens.
        steps: ``num_scheduler_steps`` (>= 1; 1 returns the lengths unchanged).

    Returns:
        (the computed spread, ISL unchanged, OSL (N,) -> L'; (mean ISL + mean OSL) / (mean ISL + mean L'),
        the share of the computed tokens a throughput in delivered tokens counts).

    Raises:
        SpecError: ``steps`` not a whole number >= 1.

    >>> s = LengthSpread("x", np.array([100.0, 100.0]), np.array([2.0, 20.0]))
    >>> c, share = multi_step_spread(s, 8)
    >>> c.osl_tokens.tolist(), round(share, 4)
    ([9.0, 25.0], 0.9487)
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise SpecError(
            "scheduler_steps",
            f"must be a whole number >= 1, got {steps!r}",
            "give the engine's num_scheduler_steps (1 without multi-step scheduling)",
        )
    osl = np.maximum(np.rint(spread.osl_tokens), 2.0)
    computed = 1.0 + steps * np.ceil((osl - 1.0) / steps)
    out = LengthSpread(spread.name, spread.isl_tokens, computed, spread.source)
    return out, (spread.mean_isl + float(osl.mean())) / (spread.mean_isl + out.mean_osl)
