"""TensorRT-LLM's prompt-step graph mode per measured row, and the engine's host seconds per call of an eager step.

TensorRT-LLM's PyTorch executor replays CUDA graphs for generation-only batches; a step that carries a prompt runs
eagerly unless the launch script turns on piecewise CUDA graphs (``torch_compile_config.enable_piecewise_cuda_graph``;
``torch_compile_config`` is unset by default, so prompt steps are eager: TensorRT-LLM
docs/source/features/torch_compile_and_piecewise_cuda_graph.md, piecewise graphs "primarily benefit host-bound
iterations in the context phase"). An eager prompt step costs max(host calls × :data:`TRTLLM_EAGER_CALL_S`, GPU)
(cost/host_calls.py, serve/limits.prompt_floor_s; docs/gap_aic_ttft.md, round 26).

The InferenceX DeepSeek-R1 B200 scripts of 2026-01/02 turn piecewise graphs on for some (ISL, OSL, CONC, layout) cells
only (:data:`PIECEWISE_RULES`, read at the commits named there; ``git log -S enable_piecewise_cuda_graph --
benchmarks``: first at ec7bafaae); every other TensorRT-LLM script of the rows (every H200 one, every gpt-oss-120b and
Llama-3.3-70B one, every earlier DeepSeek-R1 one) sets none: eager, the engine's default.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace

#: Host seconds per call of TensorRT-LLM's eager prompt step (one call from Python into torch, with TensorRT-LLM's
#: Python around it). Fitted in round 26 (eager26, scripts/trt_eager_host_calls.py) on a declared split: the B200
#: TensorRT-LLM aggregated rows at C <= 8 sorted by id, even rows fit (warm DeepSeek-R1 for c, jointly with the client
#: front end on gpt-oss-120b and Llama-3.3-70B), odd rows held out; 24 µs, at the top of the 5-25 µs of host work per
#: eager PyTorch op usually quoted (J. Lin, "From PyTorch op to kernel launch", jiahuanglin.xyz lesson 18).
TRTLLM_EAGER_CALL_S = 24e-6

#: The rows :data:`TRTLLM_EAGER_CALL_S` was fitted on (:func:`eager_call_split`): aiconfigurator rows of this system,
#: aggregated, TensorRT-LLM, of these models (scripts/trt_eager_context_floor.frame, round 26).
EAGER_FIT_SYSTEM = "b200"
EAGER_FIT_MODELS = ("gpt-oss-120b", "llama-3.3-70b", "deepseek-r1")
#: The model whose warm rows scored the rate (the others' rows fitted the client front end inside it).
EAGER_FIT_SCORED_MODEL = "deepseek-r1"
#: Low load: the split's rows run at concurrency <= this (the burst and the steady queue are a few ms).
EAGER_FIT_MAX_CONCURRENCY = 8

#: InferenceX DeepSeek-R1 B200 TensorRT-LLM scripts that set piecewise CUDA graphs, keyed (precision, release, MTP):
#: (commit and script, rule(isl, osl, conc, chips, ep, dp)); ``chips`` the script's TP (the instance), ``dp`` whether it
#: runs attention DP.
PIECEWISE_RULES = {
    ("fp4", "1.2.0rc6.post2", False): (
        "6eecc0e66 (2026-02-03) benchmarks/dsr1_fp4_b200_trt.sh",
        lambda isl, osl, c, chips, ep, dp: isl == 1024 and osl == 1024 and chips == 8 and ep == 8,
    ),
    ("fp8", "1.2.0rc6.post2", False): (
        "ec7bafaae (2026-01-29) benchmarks/dsr1_fp8_b200_trt.sh",
        lambda isl, osl, c, chips, ep, dp: (
            (isl == 1024 and osl == 1024 and c >= 64)
            or (isl == 1024 and osl == 8192 and 128 <= c < 256)
            or (isl == 8192 and osl == 1024 and c >= 64)
        ),
    ),
    ("fp8", "1.2.0rc6.post3", True): (
        "5d517074c (2026-02-05) benchmarks/dsr1_fp8_b200_trt_mtp.sh",
        lambda isl, osl, c, chips, ep, dp: (
            not dp
            and not (
                (isl == 1024 and osl == 1024 and c <= 4)
                or (isl == 1024 and osl == 8192 and c <= 8)
                or (isl == 8192 and osl == 1024 and c <= 16)
            )
        ),
    ),
    ("fp4", "1.2.0rc6.post3", True): (
        "0aae52d4c (2026-02-06) benchmarks/dsr1_fp4_b200_trt_mtp.sh",
        lambda isl, osl, c, chips, ep, dp: (
            (isl == 1024 and osl == 1024 and (c in (32, 64) or (c == 128 and not dp)))
            or (isl == 1024 and osl == 8192 and c == 64)
        ),
    ),
}


def piecewise_on(
    precision: str, release: str, mtp: bool, isl: int, osl: int, conc: float, chips: int, ep: int, dp: bool
) -> bool:
    """Whether the launch script of a B200 DeepSeek-R1 TensorRT-LLM row ran piecewise CUDA graphs
    (:data:`PIECEWISE_RULES`); False for a (precision, release, MTP) no rule covers.

    >>> piecewise_on("fp4", "1.2.0rc6.post2", False, 1024, 1024, 64, 8, 8, False)
    True
    >>> piecewise_on("fp4", "1.2.0rc6.post2", False, 1024, 8192, 64, 8, 8, False)
    False
    >>> piecewise_on("fp8", "1.2.0rc6.post3", True, 1024, 1024, 8, 8, 1, False), piecewise_on("fp8", "1.1.0rc2", True, 1024, 1024, 8, 8, 1, False)
    (True, False)
    """
    rule = PIECEWISE_RULES.get((precision, release, bool(mtp)))
    return bool(rule and rule[1](int(isl), int(osl), float(conc), int(chips), int(ep), bool(dp)))


def with_prompt_graphs(dep, engine: str, model: str, precision: str, release: str, isl: int, osl: int, conc: float):
    """(deployment, note) of a measured TensorRT-LLM row: ``eager_prompt_call_s`` = :data:`TRTLLM_EAGER_CALL_S` unless
    its script ran piecewise CUDA graphs (:func:`piecewise_on`, aggregated DeepSeek-R1 only); a disaggregated row's
    prefill workers run the engine's default (eager); unchanged for another engine.

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> d = Deployment(get_precision("fp4"), Pool(Layout(tp=8, ep=8)))
    >>> with_prompt_graphs(d, "trtllm", "deepseek-r1", "fp4", "1.2.0rc6.post2", 1024, 1024, 64)[0].eager_prompt_call_s
    0.0
    >>> with_prompt_graphs(d, "trtllm", "deepseek-r1", "fp4", "1.2.0rc6.post2", 1024, 8192, 64)[0].eager_prompt_call_s
    2.4e-05
    >>> with_prompt_graphs(d, "sglang", "deepseek-r1", "fp4", "0.5.6", 1024, 8192, 64)[0].eager_prompt_call_s
    0.0
    """
    if dep is None or engine.split()[0] != "trtllm":
        return dep, ""
    lay = dep.decode.layout
    if (
        dep.prefill is None
        and model == "deepseek-r1"
        and piecewise_on(precision, release, dep.mtp is not None, isl, osl, conc, lay.tp * lay.dp, lay.ep, lay.dp > 1)
    ):
        return (
            dep,
            f"prompt steps as piecewise CUDA graphs ({PIECEWISE_RULES[(precision, release, dep.mtp is not None)][0]})",
        )
    return (
        replace(dep, eager_prompt_call_s=TRTLLM_EAGER_CALL_S),
        f"eager prompt steps: max(host calls × {TRTLLM_EAGER_CALL_S * 1e6:g} µs, GPU) (fit/trt_prompt_graphs.py)",
    )


def eager_fit_rows(points: Sequence) -> list:
    """The points of ``points`` (fit/validate.MeasuredPoint) the eager call-rate study prices, at any concurrency:
    aiconfigurator rows of :data:`EAGER_FIT_SYSTEM`, aggregated, TensorRT-LLM, of :data:`EAGER_FIT_MODELS`, not
    flagged by fit/aic_quality.py (TTFT rules A, B, F over every aiconfigurator point of ``points``; rule C)."""
    sel = [
        p
        for p in points
        if p.source == "aiconfigurator"
        and p.system == EAGER_FIT_SYSTEM
        and p.mode == "agg"
        and p.framework.split()[0] == "trtllm"
        and p.model in EAGER_FIT_MODELS
    ]
    if not sel:
        return []
    from jalapeno.fit.aic_quality import aic_source_flags, aic_ttft_flags

    aic = [p for p in points if p.source == "aiconfigurator"]
    flagged = set(aic_ttft_flags(aic)) | set(aic_source_flags(aic))
    return [p for p in sel if p.id not in flagged]


def _ttft_predicted(points: Sequence) -> set[str]:
    """Ids of ``points`` with a measured and a predicted TTFT (fit/validate.predict_points' defaults, the roofline
    pricer and each point's own stack: what scripts/aic_ttft_split.predict_parts calls ``full``)."""
    from jalapeno.fit.validate import predict_points

    rows = predict_points(list(points))
    t = rows[rows.metric == "ttft_s"].dropna(subset=["measured", "predicted"]) if len(rows) else rows
    return set(t.id) if len(t) else set()


def eager_call_split(
    points: Sequence,
    predicted: Callable[[Sequence], Collection[str]] | None = None,
    dates: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Point id → ``fit`` / ``held_out`` / ``none``: the declared split :data:`TRTLLM_EAGER_CALL_S` was fitted on
    (round 26, scripts/trt_eager_host_calls.py; scripts/trt_eager_context_floor.py's what-if reads it too), for the
    rows of the split only (a row outside it is absent).

    The rows: :func:`eager_fit_rows` at concurrency <= :data:`EAGER_FIT_MAX_CONCURRENCY` with a measured and a
    predicted TTFT (``predicted(rows)`` → their ids; default: fit/validate.predict_points as the scripts price them),
    sorted by id; the even ones (0, 2, ... in that order) are the fit half, the odd ones ``held_out``. An even row
    is ``fit`` if it took part: an :data:`EAGER_FIT_SCORED_MODEL` row measured warm (its ``measured=`` date, from
    ``dates`` — default fit/client_warmup.aic_row_dates —, on or after client_warmup.WARMUP_FROM; such rows scored
    the rate) or a row of another model (those fitted the client front end inside the rate); an even cold or
    undated DeepSeek-R1 row took no part: ``none``.

    A worked set of rows, labelled by hand: tests/unit/test_eager_call_split.py.
    """
    low = [p for p in eager_fit_rows(points) if p.concurrency and p.concurrency <= EAGER_FIT_MAX_CONCURRENCY]
    if not low:
        return {}
    from jalapeno.fit.client_warmup import WARMUP_FROM, aic_row_dates

    have = set((predicted or _ttft_predicted)(low))
    dates = aic_row_dates() if dates is None else dates
    out = {}
    for i, p in enumerate(sorted((p for p in low if p.id in have), key=lambda q: q.id)):
        took_part = p.model != EAGER_FIT_SCORED_MODEL or dates.get(p.id, "") >= WARMUP_FROM
        out[p.id] = "held_out" if i % 2 else "fit" if took_part else "none"
    return out
