"""A ROCm profile's InferenceX front end from its engine's own published low-load median TTFTs (issue 18, round 40).

``sglang-rocm`` fits no front end on its own validation rows (too few at low load: fit/stack_fit.py) and borrowed, until
round 40, the front end its twin server program (fit/stack_front_ends.SAME_SERVER: SGLang) has on InferenceX's own CUDA
points: 0.0875 s + 17.5 µs per prompt token, fitted on H200/B200 **mean** TTFTs at C <= 4, which carry a share of the
one-off first-wave stall (docs/model.md §8.7 (10); docs/gap_aic_ttft.md rounds 39 and 40). On gfx942 that borrowed
front end alone is 104 ms at the 1k workload, against a measured **median** TTFT of 115 ms at C = 4.

The fit (:func:`median_front_end`): SemiAnalysisAI/InferenceX issue #890 (Klaud-Cold 2026-03-08; runs 22811630847
and 22811631118) published the median TTFT of one gfx942 SGLang run at two loads (:data:`ISSUE_890_MEDIANS`:
``dsr1-fp8-mi325x-sglang``, image ``lmsysorg/sglang:v0.5.9-rocm700-mi30x``, TP8 EP1, 1k/1k, InferenceX's client). The
profile's deployment of that recipe (:data:`RECIPE_ROW`'s deployment, at the issue's release :data:`RELEASE`) is priced
at each load with no front end (``request_overhead_s`` = ``prompt_overhead_s_per_token`` = 0); the room each median
leaves is the measured median − the model's p50 (a median carries no first-wave stall, so the room is the front end
alone, whatever the stall). One ISL does not identify the per-prompt-token part: named assumption, the twin's
front end keeps its shape (the same server program's request and per-token parts, in the twin's ratio) and takes
the level k = mean over the loads of room / (twin's front end at the issue's mean prompt), k >= 0.

Built and shipped OFF (:data:`MEDIAN_FRONT_ON`; round 40, rocmfront40, docs/gap_aic_ttft.md): it fixes the v0.5.9 median
rows and breaks the v0.5.19 mean rows and MI300X, and the fidelity guard breaches.

Split: the issue's two medians are the fit; they are not validation rows (the recipe row lends its deployment only,
never its measurement). Every validation row of the profile is held out from this fit. The ``first_wave_stall_s`` fit
(scripts/first_wave_stall.py) reads the model's own mean − median, which a front end moves by nothing (it adds to
both), so it stays consistent; it runs after this one in scripts/recalibrate.py.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

import numpy as np

from jalapeno.specs.workload import INFERENCEX_RANGE_RATIO, Workload

#: SemiAnalysisAI/InferenceX issue #890 (Klaud-Cold comment 2026-03-08): concurrency -> (mean, median, p99) TTFT in s,
#: MI325X TP8 DeepSeek-R1 FP8 1k/1k, SGLang v0.5.9-rocm700-mi30x, InferenceX's client. The one copy of these figures:
#: scripts/first_wave_stall.py (the stall, from mean − median) and scripts/ix_mi3xx_fixed39.py read them here.
ISSUE_890_TTFT = {4: (0.2909, 0.1149, 1.3054), 8: (0.4181, 0.1188, 2.6116)}
#: the issue's medians (s) by concurrency, the fit's data
ISSUE_890_MEDIANS = {c: median for c, (_, median, _) in ISSUE_890_TTFT.items()}
#: the validation row whose deployment (recipe flags, layout, engine) the issue's runs share: MI325X DeepSeek-R1 FP8
#: SGLang TP8 1k/1k, image v0.5.9 (its measurement is not read)
RECIPE_ROW = "inferencex_points:34"
#: the engine release the issue ran (its image tag)
RELEASE = "0.5.9"
#: the issue's workload: 1k/1k with InferenceX's length range
ISSUE_WORKLOAD = Workload("1k/1k", 1024, 1024, INFERENCEX_RANGE_RATIO)
#: profiles whose InferenceX front end is fitted here: profile -> (recipe row, release, {C: median TTFT s})
MEDIAN_FRONT = {"sglang-rocm": (RECIPE_ROW, RELEASE, ISSUE_890_MEDIANS)}
#: Built and shipped OFF (round 40, rocmfront40; docs/gap_aic_ttft.md): with ``admission_lag_steps = 1`` on
#: ``sglang-rocm`` the fit gives 3.71 ms + 0.743 µs per prompt token (rooms 5.3 / 3.5 ms) and the v0.5.9 median rows
#: 26/34 come right (+20.5 / +40.8% -> -7.8 / +7.4%), but the MI325X v0.5.19 8k/1k mean rows 76-80 lose the front end
#: their mean carried (77/79 -13.3 / -5.2% -> -31.3 / -17.4%) and MI300X's 28/35 go -10.7 / +7.8% -> -31.2 / -15.2%: held
#: out MI300X TTFT 20.0 -> 30.3%, all InferenceX TTFT 15.4 / -11.4 -> 15.7 / -15.2%, and the fidelity guard breaches
#: (overall TTFT 14.5% > 13.0%, MI325X 22.3% > 15.0%). True: fit_stacks takes the medians' level (then also set the
#: lag in data/stacks.toml and rerun scripts/first_wave_stall.py).
MEDIAN_FRONT_ON = False
#: the front-end fields (fit/stack_front_ends.FRONT_END) and the client whose entry they are
FIELDS, CLIENT = ("request_overhead_s", "prompt_overhead_s_per_token"), "inferencex"


def front_end_at(entry: dict, mean_isl: float) -> float:
    """An entry's front end (s) at ``mean_isl`` prompt tokens: request_overhead_s + prompt_overhead_s_per_token x ISL.

    >>> round(front_end_at({"request_overhead_s": 0.0875, "prompt_overhead_s_per_token": 1.75e-5}, 921.6), 5)
    0.10363
    """
    return float(entry["request_overhead_s"]) + float(entry["prompt_overhead_s_per_token"]) * float(mean_isl)


def scaled_entry(twin: dict, rooms: list[float], mean_isl: float) -> dict[str, float]:
    """The twin's front end ``twin`` (s, s per token) scaled to the mean of ``rooms`` (s) at ``mean_isl`` tokens.

    Raises ValueError when ``rooms`` is empty or the twin's front end is not positive there.

    >>> e = scaled_entry({"request_overhead_s": 0.1, "prompt_overhead_s_per_token": 1e-4}, [0.02, 0.04], 1000.0)
    >>> round(e["request_overhead_s"], 6), round(e["prompt_overhead_s_per_token"], 9)
    (0.015, 1.5e-05)
    >>> scaled_entry({"request_overhead_s": 0.1, "prompt_overhead_s_per_token": 0.0}, [-0.01], 1000.0)
    {'request_overhead_s': 0.0, 'prompt_overhead_s_per_token': 0.0}
    """
    base = front_end_at(twin, mean_isl)
    if not rooms or base <= 0:
        raise ValueError(
            f"median front end: need rooms (got {rooms}) and a positive twin front end (got {base} s); "
            "check MEDIAN_FRONT and the twin profile's inferencex entry"
        )
    k = max(0.0, float(np.mean(rooms)) / base)
    return {f: k * float(twin[f]) for f in FIELDS}


def rooms(stack, point, release: str, medians: dict) -> list[float]:
    """Per load of ``medians`` ({C: median TTFT s}): the median − the model's p50 (s) of ``point``'s deployment served
    with ``stack`` at ``release`` (the profile's own admission lag, no first-wave stall on a median) and no front end."""
    from jalapeno.fit.entries import with_stack_mtp
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model

    zero = MappingProxyType({f: 0.0 for f in FIELDS})
    st = replace(stack.at_version(release), clients=MappingProxyType({**stack.clients, CLIENT: zero})).for_client(
        CLIENT
    )
    pricer = load_any_pricer(point.system, "calibrated", pricer="roofline", stack=st)
    cs = sorted(medians)
    res = serve_at_concurrency(
        load_model(point.model),
        pricer,
        with_stack_mtp(point.deployment, st, point.model),
        ISSUE_WORKLOAD,
        [float(c) for c in cs],
    )
    return [medians[c] - float(res.ttft_p50_s[i]) for i, c in enumerate(cs)]


def recipe_point(row: str, withheld_systems: frozenset = frozenset()):
    """The shipped InferenceX point ``row`` (its deployment is what this fit reads), or None when it is absent, has no
    deployment or is of a withheld system (a leave-one-system-out refit, fit/loso.py)."""
    from jalapeno.fit.ix_points import load_inferencex
    from jalapeno.fit.validation_run import DEFAULT_POINTS

    p = next((q for q in load_inferencex(DEFAULT_POINTS)[0] if q.id == row), None)
    return None if p is None or p.deployment is None or p.system in withheld_systems else p


def median_front_end(name: str, stack, twin_front: dict, withheld_systems: frozenset = frozenset()) -> dict[str, float]:
    """Profile ``name``'s InferenceX front end {request_overhead_s s, prompt_overhead_s_per_token s/token} fitted on its
    published medians (module docstring; three significant digits), or ``twin_front`` unchanged where the fit is off
    (:data:`MEDIAN_FRONT_ON`), ``name`` has none (:data:`MEDIAN_FRONT`), the twin has no front end, or the recipe row is
    withheld (:func:`recipe_point`). Raises ValueError as :func:`scaled_entry`."""
    if not MEDIAN_FRONT_ON or name not in MEDIAN_FRONT or not twin_front:
        return dict(twin_front)
    row, release, medians = MEDIAN_FRONT[name]
    point = recipe_point(row, withheld_systems)
    if point is None:
        return dict(twin_front)
    got = scaled_entry(twin_front, rooms(stack, point, release, medians), ISSUE_WORKLOAD.mean_isl)
    return {f: float(f"{v:.3g}") for f, v in got.items()}
