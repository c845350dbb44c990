"""The decode batch sizes a serving engine captures as CUDA graphs when its launch names only the largest,
by engine and release (``Deployment.cuda_graph_batch_sizes``; serve/limits.graph_padded prices the padding).

A padding engine runs a decode-only step of n sequences per attention rank as the smallest captured size
g >= n, g - n of them dummies. Which sizes it captures is the engine's own rule, read here from the engines'
sources (no code taken from them):

- TensorRT-LLM (PyTorch backend), ``tensorrt_llm/llmapi/llm_args.py`` ``CudaGraphConfig``
  ``_generate_cuda_graph_batch_sizes(max_batch_size, enable_padding)``: with padding 1, 2, 4 and the multiples
  of 8 up to 128, then the powers of two 2^8 .. below the maximum, then the maximum itself; without padding
  1..31, 32, 64, 128, the same powers of two and the maximum (a batch not in the list then runs eagerly: not
  padded, so no sizes here). ``enable_padding`` defaults to False (the launch must say True). From
  NVIDIA/TensorRT-LLM PR #12895 (merged 2026-04-09, "Use +64 batch sizes for padding-enabled CUDA graphs")
  the padded list goes on from 128 in steps of 64 instead of powers of two; :data:`TRTLLM_STEP64_SINCE` is the
  first release taken to carry it (an ASSUMPTION: the PR postdates 1.2.0; the first release tag that contains
  it was not read). The releases the recipes run (1.1.0rc2.post2, 1.2.0rc6.post3) take the powers of two.
- SGLang, ``python/sglang/srt/server_args.py`` ``_generate_cuda_graph_batch_sizes`` (0.5.x; it moved there
  from ``cuda_graph_runner.get_batch_sizes_to_capture``): without speculative decoding 1, 2, 4, 8, 12, the
  multiples of 8 from 16 to 256, of 16 from 272 to 496, of 32 from 512; with it (EAGLE/NEXTN MTP) every size
  to 8, the even ones to 32, steps of 4 to 64, of 8 to 256, of 16 from 272; each list cut at
  ``--cuda-graph-max-bs``, which then becomes the largest listed size. SGLang always pads (unless
  ``--disable-cuda-graph-padding``, which captures every size: nothing to pad). Per attention-DP rank.
  ASSUMPTION: the 0.5.6-0.5.12 releases the recipes run use this rule (the stored 0.5.x text; later trees
  moved CUDA-graph configuration to ``model_executor/cuda_graph_config.py``, not read).
- vLLM V1, ``vllm/config/vllm.py`` ``VllmConfig._set_cudagraph_sizes``: 1, 2, 4, the multiples of 8 below 256,
  then of 16 from 256 up to the maximum capture size (``max_cudagraph_capture_size``; default
  min(2 max_num_seqs, 512)); a batch pads to the next captured size (the FULL graph of a decode-only batch).
  ASSUMPTION: the same rule for the 0.17-0.18 releases of the recipes (the stored text).
"""

from __future__ import annotations

from jalapeno.errors import SpecError
from jalapeno.specs.engine_versions import version_key

#: First TensorRT-LLM release taken to capture the +64 padded list (NVIDIA/TensorRT-LLM PR #12895, merged
#: 2026-04-09; ASSUMPTION: the first release after 1.2.x, the release that contains it was not read).
TRTLLM_STEP64_SINCE = "1.3.0rc0"

#: data/engines.toml ``engine`` names by the engine whose capture rule they run
ENGINE_FAMILY = {
    "trt": "trtllm",
    "dynamo-trt": "trtllm",
    "sglang": "sglang",
    "sglang-rocm": "sglang",
    "sglang-disagg": "sglang",
    "dynamo-sglang": "sglang",
    "vllm": "vllm",
    "vllm-rocm": "vllm",
}


def trtllm_batch_sizes(max_batch: int, version: str) -> tuple[int, ...]:
    """TensorRT-LLM's padded CUDA-graph batch sizes up to ``max_batch`` (``cuda_graph_config.max_batch_size``
    with ``enable_padding: true``) at release ``version`` (module docstring).

    >>> trtllm_batch_sizes(128, "1.1.0rc2.post2")[-4:], len(trtllm_batch_sizes(128, "1.1.0rc2.post2"))
    ((104, 112, 120, 128), 19)
    >>> trtllm_batch_sizes(512, "1.2.0rc6.post3")[-3:], trtllm_batch_sizes(384, "1.2.0rc6.post3")[-3:]
    ((128, 256, 512), (128, 256, 384))
    >>> trtllm_batch_sizes(384, "1.3.0")[-4:]  # PR #12895's steps of 64 after 128
    (192, 256, 320, 384)
    """
    base = [1, 2, 4] + [8 * i for i in range(1, 17)]
    if version_key(version, "engine version") >= version_key(TRTLLM_STEP64_SINCE):
        while base[-1] + 64 <= max_batch:
            base.append(base[-1] + 64)
    else:
        p = 256
        while p < max_batch:
            base.append(p)
            p *= 2
    sizes = sorted(s for s in set(base) if s <= max_batch)
    return tuple(sizes if sizes and sizes[-1] == max_batch else [*sizes, max_batch])


def sglang_batch_sizes(max_bs: int, speculative: bool) -> tuple[int, ...]:
    """SGLang's captured ``--cuda-graph-bs`` list for ``--cuda-graph-max-bs`` ``max_bs`` (module docstring).

    >>> sglang_batch_sizes(128, False)[:6], sglang_batch_sizes(128, False)[-2:]
    ((1, 2, 4, 8, 12, 16), (120, 128))
    >>> sglang_batch_sizes(160, True)[:10], sglang_batch_sizes(600, False)[-3:]
    ((1, 2, 3, 4, 5, 6, 7, 8, 10, 12), (512, 544, 576))
    """
    if speculative:
        grid = [*range(1, 9), *range(10, 33, 2), *range(40, 65, 4), *range(72, 257, 8), *range(272, max_bs + 1, 16)]
    else:
        grid = [1, 2, 4, 8, 12, *range(16, 257, 8), *range(272, 512, 16), *range(512, max_bs + 1, 32)]
    return tuple(s for s in grid if s <= max_bs)


def vllm_capture_sizes(max_size: int) -> tuple[int, ...]:
    """vLLM V1's CUDA-graph capture sizes up to ``max_cudagraph_capture_size`` ``max_size`` (module docstring).

    >>> vllm_capture_sizes(2048)[:5], vllm_capture_sizes(2048)[-2:], len(vllm_capture_sizes(512))
    ((1, 2, 4, 8, 16), (2032, 2048), 51)
    """
    return tuple(s for s in [1, 2, 4, *range(8, 256, 8), *range(256, max_size + 1, 16)] if s <= max_size)


def captured_sizes(
    engine: str, version: str, max_batch: int, speculative: bool = False, padding: bool | None = None
) -> tuple[int, ...] | None:
    """The decode batch sizes per attention rank ``engine`` (a data/engines.toml ``engine``) at release
    ``version`` captures and pads to when its launch sets the largest to ``max_batch``; ``speculative``: it
    runs MTP/EAGLE drafts (SGLang's list differs); ``padding``: the launch's padding switch (TensorRT-LLM
    ``cuda_graph_config.enable_padding``, default False; SGLang ``--disable-cuda-graph-padding`` → False; None:
    the engine's default). None where the engine does not pad or its rule is not read (ATOM, Dynamo wrappers
    whose runtime release is not the recipe's ``version`` must pass the runtime's).

    >>> captured_sizes("trt", "1.1.0rc2.post2", 128) is None  # enable_padding defaults to False
    True
    >>> captured_sizes("trt", "1.1.0rc2.post2", 128, padding=True)[-2:], captured_sizes("sglang-rocm", "0.5.9", 128)[-2:]
    ((120, 128), (120, 128))
    """
    family = ENGINE_FAMILY.get(engine)
    if family is None or not isinstance(max_batch, int) or max_batch < 1:
        return None
    if family == "trtllm":
        return trtllm_batch_sizes(max_batch, version) if padding else None
    if padding is False:  # every size captured (SGLang --disable-cuda-graph-padding) or no graphs: nothing to pad
        return None
    if family == "sglang":
        return sglang_batch_sizes(max_batch, speculative)
    return vllm_capture_sizes(max_batch)


#: how a padding engine's MoE routes its dummies (cost/batch.Batch ``pad_routing``): as independent tokens, not
#: at all (top-k ids -1), or all as one token (identical dummies)
PAD_ROUTINGS = ("routed", "masked", "one_token")

#: How each engine family's MoE router treats its CUDA-graph padding dummies (cost/batch.Batch ``pad_routing``):
#:
#: - TensorRT-LLM: ``one_token``. The padding dummy is one generation request repeated
#:   (``cuda_graph_runner._get_padded_batch``), made by ``KVCacheManager.add_dummy_requests`` with
#:   ``input_tokens=[1] * token_num`` (token_num = 1 + draft tokens; "Using 1 instead of 0 prevents NaN during
#:   warmup in e.g. Deepseek"): every dummy is token 1 at the same position over the same one-token KV, so its
#:   hidden state, and hence its top-k experts, are the same in every dummy (and every rank) of the step.
#: - SGLang: ``masked`` under MoE expert parallelism. ``cuda_graph_runner.replay_prepare`` sets
#:   ``num_token_non_padded`` to the real tokens and ``layers/moe/topk.py`` ``_mask_topk_ids_padded_region`` sets
#:   the padded rows' top-k ids to -1, which the MoE kernels and DeepEP skip; it is on when
#:   ``get_moe_expert_parallel_world_size() > 1`` (``forward_batch_info.enable_num_token_non_padded``). At MoE
#:   EP = 1 the padded rows keep stale input ids (replay copies only the real rows) and route as tokens:
#:   cost/ops.py reads ``masked`` as ``routed`` there.
#: - vLLM: ``routed``. Padding rows were "handled the same way as real tokens" (vllm-project/vllm PR #46428,
#:   2026-06-23, which added ``VLLM_MOE_SKIP_PADDING``, default off; later default on, with grouped top-k
#:   routers still routing padded rows per PR #50759). ASSUMPTION: the 0.17-0.18 releases the recipes run
#:   predate it; their padded rows hold stale input ids, taken as independent tokens.
PAD_ROUTING = {"trtllm": "one_token", "sglang": "masked", "vllm": "routed"}


def pad_routing(engine: str) -> str:
    """``engine``'s (a data/engines.toml ``engine``) padding-dummy routing (:data:`PAD_ROUTING`; ``routed``
    where the engine's family is not read).

    >>> pad_routing("trt"), pad_routing("sglang-rocm"), pad_routing("vllm"), pad_routing("atom")
    ('one_token', 'masked', 'routed', 'routed')
    """
    return PAD_ROUTING.get(ENGINE_FAMILY.get(engine, ""), "routed")


def check_padding(value, where: str) -> bool | None:
    """A recipe's ``cuda_graph_padding`` (true / false / absent), returned as it is.

    Raises:
        SpecError: anything but a bool or None, naming ``where``.
    """
    if value is not None and not isinstance(value, bool):
        raise SpecError(
            where,
            f"{value!r} is not true or false",
            "write cuda_graph_padding = true (the launch sets enable_padding) or false",
        )
    return value


def check_graph_sizes(dep) -> None:
    """Normalise a Deployment's ``cuda_graph_batch_sizes`` to a sorted tuple of distinct sizes and default
    ``cuda_graph_max_batch`` to their largest (TRT-LLM's CudaGraphConfig does both; it rejects a
    ``max_batch_size`` other than ``max(batch_sizes)``).

    Raises:
        SpecError: an unknown ``cuda_graph_pad_routing``; an empty list, a size that is not a positive
            integer, or a ceiling that differs from the largest size.
    """
    if dep.cuda_graph_pad_routing not in PAD_ROUTINGS:
        raise SpecError(
            "cuda_graph_pad_routing",
            f"{dep.cuda_graph_pad_routing!r} is not one of {', '.join(PAD_ROUTINGS)}",
            "give routed, masked (SGLang, MoE EP > 1) or one_token (TensorRT-LLM)",
        )
    sizes = dep.cuda_graph_batch_sizes
    if sizes is None:
        return
    if (
        isinstance(sizes, (str, bytes))
        or not hasattr(sizes, "__iter__")
        or not len(sizes)
        or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in sizes)
    ):
        raise SpecError(
            "cuda_graph_batch_sizes",
            f"must be a non-empty list of positive integers, got {sizes!r}",
            "give the engine's captured decode batch sizes per rank, e.g. [128, 256, 384, 512]",
        )
    sizes = tuple(sorted(set(sizes)))
    if dep.cuda_graph_max_batch is not None and dep.cuda_graph_max_batch != sizes[-1]:
        raise SpecError(
            "cuda_graph_max_batch",
            f"{dep.cuda_graph_max_batch} differs from the largest captured size {sizes[-1]} of cuda_graph_batch_sizes",
            "leave cuda_graph_max_batch unset or make it the largest of cuda_graph_batch_sizes",
        )
    object.__setattr__(dep, "cuda_graph_batch_sizes", sizes)
    object.__setattr__(dep, "cuda_graph_max_batch", sizes[-1])
