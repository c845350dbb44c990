"""Which measured points an end-to-end fit saw: the ``split`` column of ``jalapeno validate`` and its ``--held-out`` view.

Issue 18 judges accuracy on points the model has not seen. Four fits use end-to-end points (every other
constant comes from kernel tables or a stated source, docs/validation.md §Data and split):

1. the software-stack fits (fit/stack_fit.py, ``scripts/fit_stacks.py``): their declared split,
   :func:`jalapeno.fit.stack_split.split` over :func:`jalapeno.fit.stack_split.fit_pool` — per (stack, source,
   system, model, ISL, OSL, mode) group sorted by concurrency, points alternate fit / held out, starting
   with fit. This module calls those two functions; it holds no copy of the rule.
2. the default front end (0.15 s + 6.4 µs per prompt token, specs/efficiency.py; ``scripts/fit_frontend.py``):
   :func:`frontend_calibration`, the shipped InferenceX H200 SGLang points at concurrency <= 8 with a
   measured TTFT (5 points).
3. TensorRT-LLM's eager host time per call (fit/trt_prompt_graphs.TRTLLM_EAGER_CALL_S, 24 µs; round 26,
   ``scripts/trt_eager_host_calls.py``): :func:`jalapeno.fit.trt_prompt_graphs.eager_call_split`, the even
   half (by id) of the unflagged B200 TensorRT-LLM aggregated gpt-oss-120b / Llama-3.3-70B / DeepSeek-R1
   aiconfigurator rows at concurrency <= 8 with a measured and a predicted TTFT, DeepSeek-R1's only when
   measured warm (the script reads the same function).
4. sa-bench's disaggregated floor and burst share per engine (fit/client_floor.DISAGG_TERMS, round 47,
   ``scripts/aic_gb_ttft_terms47.py``): the disaggregated ``inferencex-db`` aiconfigurator TTFT rows whose
   ``split`` is ``fit`` — the stack fits' fit half — so it labels no further row ``fit``.

A point's ``split`` (:func:`split_labels`): ``fit`` if any fit used it (a front-end or eager-rate point is
``fit`` whatever its stack-fit half), ``held_out`` if it is in the stack fits' held-out half, ``none`` if no fit
drew it (MLPerf rows, MiniMax-M2.5's rows — stack_split.HELD_OUT_MODELS —, rows mapped to a search or a
frontier, best rows whose run fit/run_identity.py restated as matched (kept out of the fits), rows their source
corrected, every row of a ``--points`` file of one's own). ``--held-out`` reports the ``held_out`` and ``none``
rows (:data:`JUDGED`): the rows no fit saw.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from jalapeno.errors import SpecError
from jalapeno.fit.measured_point import MeasuredPoint

#: The ``split`` values, in the order the reports give them.
SPLITS = ("fit", "held_out", "none")
#: The splits ``validate --held-out`` judges: the rows no end-to-end fit saw.
JUDGED = ("held_out", "none")
#: Front-end calibration split (scripts/fit_frontend.py): the shipped InferenceX H200 SGLang points at
#: concurrency <= this (little queueing), with a measured TTFT.
FRONTEND_MAX_CONCURRENCY = 8
#: Sources whose points the stack fits draw from (fit/stack_split.load_points); MLPerf rows never enter a fit.
FIT_SOURCES = ("inferencex", "aiconfigurator")


def frontend_calibration(points: Sequence[MeasuredPoint]) -> list[MeasuredPoint]:
    """The points of ``points`` (the shipped InferenceX points) the default front end was fitted on
    (scripts/fit_frontend.py reads this function)."""
    return [
        p
        for p in points
        if p.system == "h200"
        and p.framework == "sglang"
        and p.mapping == "matched"
        and p.concurrency
        and p.concurrency <= FRONTEND_MAX_CONCURRENCY
        and p.measured.get("ttft_s")
    ]


def split_labels(
    points: Sequence[MeasuredPoint], shipped_inferencex: bool = True, ttft_predicted: Collection[str] | None = None
) -> dict[str, str]:
    """Point id → ``fit`` / ``held_out`` / ``none`` (module docstring) for every point of ``points``.

    ``points``: the points a validation loaded (InferenceX, aiconfigurator, MLPerf rows); the stack fits'
    split is drawn over their :func:`~jalapeno.fit.stack_split.fit_pool`, exactly as ``fit_all`` draws it (the
    groups are per source, so leaving a source out does not reshuffle another's); the eager-rate split over their
    aiconfigurator rows (fit/trt_prompt_graphs.eager_call_split, which prices its candidates: about a second). ``shipped_inferencex``:
    False when the InferenceX points are a file of the user's (``--points``): no fit saw them, so they
    are ``none`` (their ids could otherwise collide with the shipped file's). ``ttft_predicted``: the ids of
    ``points`` with a measured and a predicted TTFT when the caller has already priced them as the eager-rate
    study did (validate's defaults), so its split need not price them again; None: it prices its candidates.
    """
    from jalapeno.fit.stack_split import fit_pool, split
    from jalapeno.fit.trt_prompt_graphs import eager_call_split

    fitted = [p for p in points if p.source in FIT_SOURCES and (p.source != "inferencex" or shipped_inferencex)]
    labels = split(fit_pool(fitted))
    if shipped_inferencex:
        labels.update({p.id: "fit" for p in frontend_calibration([p for p in points if p.source == "inferencex"])})
    have = None if ttft_predicted is None else (lambda rows, ids=frozenset(ttft_predicted): ids)
    labels.update({i: "fit" for i, s in eager_call_split(points, have).items() if s == "fit"})  # aiconfigurator rows
    return {p.id: labels.get(p.id, "none") for p in points}


def check_held_out(held_out: bool, points_path: str | None, stack: str | None) -> None:
    """Refuse ``validate --held-out`` with options under which "held out" means nothing.

    Raises:
        SpecError: with ``--points`` (a file of one's own was never fitted on: every row is already
            held out) or ``--stack`` (one profile for every point: the split is of each point's own
            profile's fit, and ``default`` is fitted on nothing).
    """
    if not held_out:
        return
    if points_path is not None:
        raise SpecError(
            "--held-out",
            "cannot be combined with --points: the split is the shipped points' "
            "(no fit saw a file of your own, so every row of it is held out already)",
            "drop --held-out to judge your file's rows, or drop --points to judge the shipped points' held-out half",
        )
    if stack is not None:
        raise SpecError(
            "--held-out",
            f"cannot be combined with --stack {stack}: the split is of each point's "
            "own profile's fit (data/stack_fits.toml), not of one profile applied to every point",
            "drop --stack to judge the held-out half with each point's own profile, or drop "
            "--held-out to price every point with that profile",
        )


def split_counts(rows) -> dict[str, int]:
    """Points (distinct ids, predicted or not) per ``split`` of validation ``rows`` (a DataFrame with ``id``, ``split``)."""
    per = rows.drop_duplicates("id")["split"].value_counts() if len(rows) else {}
    return {s: int(per.get(s, 0)) for s in SPLITS}
