"""The engine release an aiconfigurator row's own label states (issue 18, round 32, relabel32).

aiconfigurator-core's ``silicon_sample.csv`` writes each row's ``backend_version``; the loader keeps it in the point's
framework label "ENGINE RELEASE" (fit/aic_rows.py; a blank cell is fit/aic_sweeps.UNSTATED_RELEASE). That cell is the
run's own metadata, so fit/validate.point_release prices a row at it (:func:`label_release`) before any launch recipe's
release (deploy/engine_version.point_engine_version: today's recipe, which may name another image: "sglang 0.5.9"
rows of H200 priced at the recipe's 0.5.7). Two kinds of label do not state the engine's release:

* a Dynamo runtime's: a TensorRT-LLM row run in an ``nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:TAG`` image writes
  ``backend_version`` = TAG, Dynamo's release (``trtllm 0.8.1.post2``; every such tag in the sample is a key of
  :data:`DYNAMO_RUNTIME_TRTLLM`, tests/unit/test_aic_label_release.py, and so is the same label on the rows of those
  campaigns that name no image; TensorRT-LLM's own numbers never included 0.5.1-rc0.pre3, 0.7.0.post2, 0.8.1 or
  1.1.0-dev, and its 0.5.0-0.8.0 of 2023-24 predate the models these rows serve): the row takes the TensorRT-LLM
  release that runtime ships (NVIDIA Dynamo's support matrix);
* a tag that is not a release number (``gpt-oss-dev``, ``nightly-dev``, ``glm5-hopper``): "" (the caller falls back
  to the launch recipe, as before).

The version rules compare releases with specs/engine_versions.version_key, so a label is taken only where that parses it.
"""

from __future__ import annotations

from jalapeno.errors import SpecError
from jalapeno.fit.aic_sweeps import release_stated
from jalapeno.specs.engine_versions import version_key

#: Dynamo TensorRT-LLM runtime image tag (aiconfigurator's ``backend_version`` for those rows) -> the TensorRT-LLM
#: release it ships, and where that is stated (round 27, tprank27: scripts/trt_rank_cost_by_release.py). A range keeps
#: its lower end.
DYNAMO_RUNTIME_TRTLLM: dict[str, tuple[str, str]] = {
    "0.5.1-rc0.pre3": (
        "1.1.0rc2.post2",
        "ai-dynamo/dynamo recipes/gpt-oss-120b README (stored version): 'TensorRT-LLM "
        "1.1.0rc2.post2 (uses image nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.5.1-rc0.pre3)'; the "
        "support matrix starts at v0.6.0 (1.1.0rc5): a 1.1.0 release candidate either way",
    ),
    "0.7.0.post2": (
        "1.2.0rc3",
        "Dynamo support matrix: v0.7.0.post1 and v0.7.1 ship 1.2.0rc3 (v0.7.0: 1.2.0rc2); "
        "post2 not listed, taken as its neighbours",
    ),
    "0.8.1.post1": ("1.2.0rc6.post1", "Dynamo support matrix (Backend Dependencies): v0.8.1.post1 -> 1.2.0rc6.post1"),
    "0.8.1.post2": ("1.2.0rc6.post2", "Dynamo support matrix: v0.8.1.post2 -> 1.2.0rc6.post2"),
    "0.8.1.post3": ("1.2.0rc6.post3", "Dynamo support matrix: v0.8.1.post3 -> 1.2.0rc6.post3"),
    "1.1.0-dev.2": (
        "1.3.0rc5.post1",
        "a Dynamo platform preview between v1.0.0 (TensorRT-LLM 1.3.0rc5.post1) and v1.1.1 "
        "(1.3.0rc11) per the support matrices; its own pin is not listed: 1.3.0rc5.post1-1.3.0rc11",
    ),
}


def label_release(framework: str) -> str:
    """The engine release an aiconfigurator framework label "ENGINE RELEASE" states, as the version rules compare it:
    the label's release when it is a release number; for a TensorRT-LLM label naming a Dynamo runtime, the TensorRT-LLM
    release that runtime ships (:data:`DYNAMO_RUNTIME_TRTLLM`); "" when the label is silent ("ENGINE unstated") or names
    no release number (a dev or nightly tag).

    >>> [label_release(f) for f in ("sglang 0.5.9", "trtllm 1.0.0rc3", "trtllm 0.8.1.post2", "trtllm 0.5.1-rc0.pre3")]
    ['0.5.9', '1.0.0rc3', '1.2.0rc6.post2', '1.1.0rc2.post2']
    >>> [label_release(f) for f in ("trtllm gpt-oss-dev", "sglang nightly-dev", "vllm unstated", "vllm")]
    ['', '', '', '']
    """
    if not release_stated(framework):
        return ""
    engine, release = framework.split()[0].lower(), framework.split()[-1]
    if engine in ("trtllm", "trt") and release in DYNAMO_RUNTIME_TRTLLM:
        return DYNAMO_RUNTIME_TRTLLM[release][0]
    try:
        version_key(release)
    except SpecError:
        return ""
    return release
