"""Whose front end a software stack's points are priced with: the front-end fields, the benchmark clients that fit
an entry of their own, and the twins (one client under two names, one server program on two platforms) that lend
theirs (docs/stacks.md, rounds 30-31).

The stack fits (fit/stack_fit.py steps 2 and 4) fit :data:`FRONT_END` on InferenceX's own points
(:data:`FRONTEND_SOURCES`, the profile's own front end) and on each client of :data:`CLIENT_SOURCES` (that client's
entry, specs/stacks.Stack.for_client); where a profile fits none of its own, :func:`same_client_front_end` and
:func:`server_front_end` say what its InferenceX points take instead. Split out of fit/stack_fit.py (round 48) for
the module budget; every name is re-exported there.
"""

from __future__ import annotations

from jalapeno.specs.stacks import Stack

#: The front-end group, fitted by fit/stack_fit.fit_stack when asked (``front_end=True``; its ``fit_all``
#: asks). It was left out while the InferenceX TTFT at concurrency >= 8 was under-predicted by the
#: unmodelled closed-loop prefill queue (issue 18 part 6a), which the single global front end
#: partly absorbed; with the queue, the idle start and the scheduler's poll modelled
#: (serve/queueing.py) the low-load fit lowers the InferenceX TTFT median (docs/stacks.md).
FRONT_END = ("request_overhead_s", "prompt_overhead_s_per_token")
#: Sources whose TTFT the profile's own front end is fitted on: the front end is the engine's and
#: the benchmark client's (InferenceX's serving benchmark, utils/bench_serving).
FRONTEND_SOURCES = ("inferencex",)
#: Benchmark clients whose TTFT fits a client entry of their own (``clients.<client>``; a point's
#: client is ``MeasuredPoint.timed_by``). ``aiconfigurator``: the rows of NVIDIA's own gap-analysis runs
#: (through a Dynamo front end; its eval runner drives genai-perf in concurrency mode: aiconfigurator
#: ``eval/benchmarks/genai_perf_runner.py``, streaming chat completions, 10·C counted and 2·C warm-up
#: requests, fixed lengths). ``inferencex-db``: the rows aiconfigurator exported from InferenceX's results
#: database (fit/aic_rows.INFERENCEX_EXPORTS: InferenceX's serving benchmark, lengths in [0.8 L, L], the
#: run's mean TTFT), fitted apart from InferenceX's own points (whose front end is the profile's) because
#: their runs carry no launch recipe where data/engines.toml has none, and the fit must not move
#: InferenceX's own figures.
CLIENT_SOURCES = ("aiconfigurator", "inferencex-db")


#: Clients that are one benchmark program under two names: InferenceX's own points (``MeasuredPoint.timed_by``
#: ``inferencex``) and the rows aiconfigurator exported from InferenceX's results database (``inferencex-db``) are both
#: timed by InferenceX's serving benchmark (utils/bench_serving/benchmark_serving.py, one script for every engine:
#: SemiAnalysisAI/InferenceX benchmarks/benchmark_lib.sh run_benchmark_serving). Round 30 (ixttft30, docs/stacks.md).
SAME_CLIENT = {"inferencex": "inferencex-db"}


def same_client_front_end(values: dict, clients: dict) -> dict[str, dict[str, float]]:
    """Client entries a profile takes from its twin client's fitted front end (:data:`SAME_CLIENT`): where the
    profile's own front end (fitted on InferenceX's points, ``values``) is not fitted and its ``inferencex-db``
    entry in ``clients`` has both :data:`FRONT_END` fields, InferenceX's own points take those two (the same
    client on the same engine; the burst shares stay the profile's: the exports' runs bunch differently,
    docs/gap_aic_ttft.md). Never a median across engines: the median over the engines' entries (0.025 s + 6.875 µs per
    prompt token) worsened SGLang-ROCm's and Dynamo + TRT-LLM's InferenceX TTFT (docs/stacks.md, round 30); a ROCm
    profile running another profile's server program takes that program's front end instead (:data:`SAME_SERVER`,
    round 31).

    >>> same_client_front_end({}, {"inferencex-db": {"request_overhead_s": 0.025, "prompt_overhead_s_per_token": 7.5e-6,
    ...                                               "agg_burst_fraction": 0.1}})
    {'inferencex': {'request_overhead_s': 0.025, 'prompt_overhead_s_per_token': 7.5e-06}}
    >>> same_client_front_end({"request_overhead_s": 0.09}, {"inferencex-db": {"request_overhead_s": 0.1,
    ...                                                                       "prompt_overhead_s_per_token": 1e-6}})
    {}
    """
    if any(f in values for f in FRONT_END):
        return {}
    out = {}
    for client, twin in SAME_CLIENT.items():
        entry = clients.get(twin, {})
        if all(f in entry for f in FRONT_END):
            out[client] = {f: entry[f] for f in FRONT_END}
    return out


#: Profiles that run another fitted profile's serving front end (round 31, ixttft31; docs/stacks.md): where such a
#: profile fits no front end of its own and has no ``inferencex`` entry, InferenceX's own points on it take the front
#: end InferenceX's own points get on the twin (:func:`server_front_end`). ``sglang-rocm``: the SGLang server itself on
#: ROCm (one code base, sgl-project/sglang python/sglang/srt/entrypoints/http_server.py with its TokenizerManager and
#: detokenizer processes; InferenceX runs the lmsysorg/sglang ROCm images) -> SGLang's front end fitted on InferenceX's
#: own SGLang points. ``atom-rocm``: ATOM's OpenAI server has vLLM V1's front-end shape: FastAPI with the HF tokenizer
#: in the API process (ROCm/ATOM atom/entrypoints/openai_server.py, which InferenceX's gptoss_fp4_mi355x_atom.sh
#: launches), each request pickled over a ZMQ ROUTER socket to an engine-core process, outputs back over a ZMQ PULL
#: socket on an output thread (atom/model_engine/engine_core_mgr.py CoreManager @5ab8d5bc, EngineCoreRequestType
#: ADD / STREAM: vLLM V1's vllm/v1/engine/core_client.py MPClient) -> vLLM's (its exports' entry, :data:`SAME_CLIENT`).
#: Assumption: one program's host-side cost is the same on the MI3xx hosts as on the NVIDIA ones.
SAME_SERVER = {"sglang-rocm": "sglang", "atom-rocm": "vllm"}


def server_front_end(twin: Stack | None) -> dict[str, float]:
    """The front end (:data:`FRONT_END`, s and s per prompt token) InferenceX's own points get on ``twin`` (its
    ``inferencex`` client entry, else its own fitted front end); {} when it has neither (the efficiency set's global
    constant is no engine's own front end).

    >>> server_front_end(Stack("x", "x", "x", request_overhead_s=0.0875, prompt_overhead_s_per_token=1.6875e-5))
    {'request_overhead_s': 0.0875, 'prompt_overhead_s_per_token': 1.6875e-05}
    >>> server_front_end(Stack("x", "x", "x", clients={"inferencex": {"request_overhead_s": 0.025,
    ...                                                               "prompt_overhead_s_per_token": 6.875e-6}}))
    {'request_overhead_s': 0.025, 'prompt_overhead_s_per_token': 6.875e-06}
    >>> server_front_end(Stack("x", "x", "x")), server_front_end(None)
    ({}, {})
    """
    if twin is None:
        return {}
    st = twin.for_client(FRONTEND_SOURCES[0])
    vals = {f: getattr(st, f) for f in FRONT_END}
    return {f: float(v) for f, v in vals.items()} if all(v is not None for v in vals.values()) else {}
