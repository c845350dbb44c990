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

from dataclasses import replace

#: Host seconds per call of TensorRT-LLM's eager prompt step (one call from Python into torch, with TensorRT-LLM's
#: Python around it). Fitted in round 26 (eager26, scripts/trt_eager_host_calls.py) on a declared split: the B200
#: TensorRT-LLM aggregated rows at C <= 8 sorted by id, even rows fit (warm DeepSeek-R1 for c, jointly with the client
#: front end on gpt-oss-120b and Llama-3.3-70B), odd rows held out; 24 µs, at the top of the 5-25 µs of host work per
#: eager PyTorch op usually quoted (J. Lin, "From PyTorch op to kernel launch", jiahuanglin.xyz lesson 18).
TRTLLM_EAGER_CALL_S = 24e-6

#: InferenceX DeepSeek-R1 B200 TensorRT-LLM scripts that set piecewise CUDA graphs, keyed (precision, release, MTP):
#: (commit and script, rule(isl, osl, conc, chips, ep, dp)); ``chips`` the script's TP (the instance), ``dp`` whether it
#: runs attention DP.
PIECEWISE_RULES = {
    ("fp4", "1.2.0rc6.post2", False): ("6eecc0e66 (2026-02-03) benchmarks/dsr1_fp4_b200_trt.sh",
                                       lambda isl, osl, c, chips, ep, dp: isl == 1024 and osl == 1024 and chips == 8
                                       and ep == 8),
    ("fp8", "1.2.0rc6.post2", False): ("ec7bafaae (2026-01-29) benchmarks/dsr1_fp8_b200_trt.sh",
                                       lambda isl, osl, c, chips, ep, dp: (isl == 1024 and osl == 1024 and c >= 64)
                                       or (isl == 1024 and osl == 8192 and 128 <= c < 256)
                                       or (isl == 8192 and osl == 1024 and c >= 64)),
    ("fp8", "1.2.0rc6.post3", True): ("5d517074c (2026-02-05) benchmarks/dsr1_fp8_b200_trt_mtp.sh",
                                      lambda isl, osl, c, chips, ep, dp: not dp and not (
                                          (isl == 1024 and osl == 1024 and c <= 4) or (isl == 1024 and osl == 8192
                                                                                      and c <= 8)
                                          or (isl == 8192 and osl == 1024 and c <= 16))),
    ("fp4", "1.2.0rc6.post3", True): ("0aae52d4c (2026-02-06) benchmarks/dsr1_fp4_b200_trt_mtp.sh",
                                      lambda isl, osl, c, chips, ep, dp: (isl == 1024 and osl == 1024 and (
                                          c in (32, 64) or (c == 128 and not dp)))
                                      or (isl == 1024 and osl == 8192 and c == 64)),
}


def piecewise_on(precision: str, release: str, mtp: bool, isl: int, osl: int, conc: float, chips: int, ep: int,
                 dp: bool) -> bool:
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


def with_prompt_graphs(dep, engine: str, model: str, precision: str, release: str, isl: int, osl: int,
                       conc: float):
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
    if dep.prefill is None and model == "deepseek-r1" and piecewise_on(precision, release, dep.mtp is not None, isl, osl, conc,
                                               lay.tp * lay.dp, lay.ep, lay.dp > 1):
        return dep, f"prompt steps as piecewise CUDA graphs ({PIECEWISE_RULES[(precision, release, dep.mtp is not None)][0]})"
    return (replace(dep, eager_prompt_call_s=TRTLLM_EAGER_CALL_S),
            f"eager prompt steps: max(host calls × {TRTLLM_EAGER_CALL_S * 1e6:g} µs, GPU) (fit/trt_prompt_graphs.py)")
