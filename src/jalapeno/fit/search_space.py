"""The layouts a benchmark searched (issue 18): a ``best@concurrency`` point (fit/validate.py) is the
best of its recipe's ``search_space`` (data/engines.toml), not of every layout a sweep enumerates.

InferenceX's MI300X/MI325X SGLang DeepSeek-R1 FP8 runs searched TP8 only (amd-master.yaml); a
sweep over DP attention and EP layouts credited their max-throughput points with layouts the runs
never tried.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from jalapeno.fit.measured_point import MeasuredPoint


def searched_layouts(p: MeasuredPoint, stack) -> tuple[tuple[int, int, int], ...]:
    """The aggregated layouts (tp, dp, ep) the benchmark searched for a point: its system's
    deployed recipe's ``search_space`` (data/engines.toml) when that recipe serves the point's
    model and precision on the point's engine (``stack``), else () (not stated: every layout).

    >>> class _S: name = "sglang-rocm"
    >>> from jalapeno.fit.measured_point import MeasuredPoint
    >>> pt = MeasuredPoint("x", "x", "mi325x", "deepseek-r1", "fp8", "sglang", 8192, 1024, 64, None, {}, "")
    >>> searched_layouts(pt, _S())
    ((8, 1, 1),)
    """
    from jalapeno.deploy.engines import deployed_recipe

    rec = deployed_recipe(p.system, p.model)
    if rec is None or rec.precision != p.precision or rec.engine != stack.name:
        return ()
    return rec.search_space


def searched_mask(res, layouts: tuple[tuple[int, int, int], ...]) -> np.ndarray:
    """Per point of a sweep result: its deployment's layout is one of ``layouts`` (all True when
    none are given), pipeline-parallel layouts excluded from a stated search space."""
    if not layouts:
        return np.ones(len(res.dep_index), dtype=bool)
    keep = np.array(
        [
            (d.decode.layout.tp, d.decode.layout.dp, d.decode.layout.ep) in layouts and d.decode.layout.pp == 1
            for d in res.deployments
        ]
    )
    return keep[res.dep_index]
