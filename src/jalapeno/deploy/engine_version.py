"""Engine versions: which release of a serving engine a recipe runs, and its software stack as that
release behaves (issue 18).

The same engine changes behaviour between releases: TensorRT-LLM before 1.2.0rc3 ran the MoE
all-to-all only with more EP ranks than experts per token, so DeepSeek-R1 at EP8 gathered its
tokens (specs/efficiency.MOE_EXCHANGE_NAMES). A software-stack profile states such behaviours as
``version_rules`` (data/stacks.toml); a recipe (data/engines.toml) states the release it runs:
``engine_version`` when its ``version`` names another program (a Dynamo image and its
TensorRT-LLM runtime), else ``version`` when that is a release number. Validation prices each
measured point, and ``predict``/``simulate``/``frontier``/``compare --engine R`` each run, with the profile pinned at that release
(:func:`recipe_stack`); a recipe whose release is unknown keeps the profile's newest behaviour.
"""

from __future__ import annotations

from jalapeno.deploy.engines import Recipe, launch_recipe
from jalapeno.errors import SpecError
from jalapeno.specs.engine_versions import version_key
from jalapeno.specs.stacks import Stack, get_stack, stack_for_framework


def recipe_engine_version(recipe: Recipe | None) -> str:
    """The engine release a recipe runs (``engine_version``, else ``version`` when it is a release
    number), or "" when unknown.

    >>> from jalapeno.deploy.engines import get_recipe
    >>> recipe_engine_version(get_recipe("trtllm-h200-dsr1-fp8-mtp")), recipe_engine_version(get_recipe("dynamo-trt-dsr1-fp8"))
    ('1.1.0rc2.post2', '1.2.0rc6.post3')
    """
    if recipe is None:
        return ""
    if recipe.engine_version:
        return recipe.engine_version
    try:
        version_key(recipe.version)
    except SpecError:
        return ""  # e.g. "dynamo 0.7.0.post2 (TensorRT-LLM runtime)": the runtime's release is not stated
    return recipe.version


def recipe_stack(recipe: Recipe, system: str, stack: str | Stack | None = None) -> Stack:
    """The software-stack profile a recipe's runs take: ``stack`` (a name, optionally ``NAME@VERSION``,
    or a profile), else the profile of the recipe's engine on ``system`` (specs/stacks.stack_for_framework);
    pinned at the recipe's engine release unless the name already pins one.

    >>> from jalapeno.deploy.engines import get_recipe
    >>> recipe_stack(get_recipe("trtllm-h200-dsr1-fp8-mtp"), "h200").name
    'trtllm@1.1.0rc2.post2'

    A given profile of another engine than the recipe's is not pinned: the recipe's release is no release of
    that engine (``--engine sglang-b200-dsr1-fp4 --stack trtllm`` read SGLang 0.5.6 as a TensorRT-LLM release
    and took TensorRT-LLM's rule for releases before 1.2.0rc3, silently: break51); it keeps its newest behaviour.

    >>> recipe_stack(get_recipe("sglang-b200-dsr1-fp4"), "b200", "trtllm").name
    'trtllm'

    Raises:
        UnknownNameError: unknown stack name. SpecError: a version that is not a release number.
    """
    st = (
        stack_for_framework(recipe.engine.removesuffix("-rocm"), system, "engine")
        if stack is None
        else (get_stack(stack) if isinstance(stack, str) else stack)
    )
    if st.version or (stack is not None and engine_family(st.name) != engine_family(recipe.engine)):
        return st
    return st.at_version(recipe_engine_version(recipe))


#: the engines whose releases are numbered alike, by a word every name of theirs holds: a profile's (trtllm,
#: dynamo-trtllm, sglang-rocm, ...) and a recipe's engine (trt, dynamo-trt, mori-sglang, atom-rocm, ...)
ENGINE_FAMILIES = ("trt", "sglang", "vllm", "atom")


def engine_family(name: str) -> str:
    """The engine family of a profile or recipe engine name (:data:`ENGINE_FAMILIES`), "" for none (default,
    kernel, compiled, jalapeno: profiles of no engine, without version rules).

    >>> engine_family("dynamo-trtllm"), engine_family("mori-sglang"), engine_family("kernel")
    ('trt', 'sglang', '')
    """
    return next((f for f in ENGINE_FAMILIES if f in name), "")


def point_engine_version(
    system: str, model: str, framework: str, precision: str, serving: str, mtp: bool | None = None
) -> str:
    """The engine release that ran a measured point: its launch recipe's (deploy/engines.launch_recipe;
    ``mtp``: whether the point runs MTP, which picks between an MTP and a plain launch script as
    launch_limits does), "" when no single recipe describes the run.

    A point silent on MTP (``mtp`` None) that an MTP and a plain recipe both describe takes their release
    when the two state the same one (the two launch scripts of one image), else "".

    >>> point_engine_version("h200", "deepseek-r1", "trt", "fp8", "agg")
    '1.1.0rc2.post2'
    >>> point_engine_version("mi355x", "deepseek-r1", "sglang-disagg", "quark-mxfp4", "disagg")
    '0.5.9'
    """
    found = recipe_engine_version(launch_recipe(system, model, framework, precision, serving=serving, mtp=mtp))
    if found or mtp is not None:
        return found
    both = {
        recipe_engine_version(launch_recipe(system, model, framework, precision, serving=serving, mtp=m))
        for m in (False, True)
    }
    return both.pop() if len(both) == 1 else ""
