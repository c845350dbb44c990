"""A config.json's context length with its RoPE scaling, as vLLM derives ``max_model_len``.

vLLM's ``_get_and_verify_max_len`` (vllm/config.py, v0.7-v0.10) starts from
``max_position_embeddings`` and, when ``rope_scaling`` names a type other than ``su``,
``longrope`` or ``llama3`` (whose ``max_position_embeddings`` already is the extended length),
multiplies by ``rope_scaling.factor`` (default 1: the ``default`` type has none) — from
``original_max_position_embeddings`` for ``yarn``:

    context = original_max_position_embeddings × factor    (yarn)
    context = max_position_embeddings × factor             (linear, dynamic, ...)

So Qwen3's model card's YaRN recipe (``{"rope_type": "yarn", "factor": 4.0,
"original_max_position_embeddings": 32768}`` added to its config.json, max_position_embeddings
40,960) serves 131,072 tokens, and DeepSeek-V3's yarn (4,096 × 40) its stated 163,840. Every
shipped config's derived context equals its max_position_embeddings. A malformed ``rope_scaling``
(not an object, no type, a factor that is not a positive number, yarn without its original length, linear,
dynamic or yarn without a factor: transformers' modeling_rope_utils requires it, ``_check_received_keys``)
is refused, as vLLM refuses it, rather than ignored. Pure: no I/O.

transformers v5 renamed the field ``rope_parameters`` (same keys, plus ``rope_theta``; ``rope_type``
absent reads as ``default``, as its ``standardize_rope_params`` does), optionally nested by layer type
(``{"full_attention": {...}, "sliding_attention": {...}}``: vLLM's ``is_rope_parameters_nested``,
vllm/transformers_utils/config.py, reads a dict whose keys are all attention layer types as nested).
A config with ``rope_parameters`` is read as one with ``rope_scaling`` (it was ignored: a Qwen3
config with the model card's yarn under its v5 name served 40,960 tokens, not 131,072); both given
and disagreeing, or nested entries that give different contexts, are refused. A derived context
past :data:`~jalapeno.specs.model_plausibility.MAX_CONTEXT_TOKENS` is refused, as an absurd
``max_position_embeddings`` is (a factor of 4e6 was read as a 1.3e11-token context).
"""

from __future__ import annotations

import math

from jalapeno.errors import SpecError
from jalapeno.specs.model_plausibility import MAX_CONTEXT_TOKENS

#: rope types whose max_position_embeddings is already the extended length (vLLM leaves it as is;
#: mrope, Qwen2-VL's multimodal sections, has no factor)
UNSCALED_TYPES = ("su", "longrope", "llama3", "mrope")
#: every type read: transformers' ROPE_INIT_FUNCTIONS (modeling_rope_utils.py) and the above
KNOWN_TYPES = ("default", "linear", "dynamic", "yarn") + UNSCALED_TYPES


def rope_context(cfg: dict, src: str, max_pos: int | None) -> tuple[int | None, str]:
    """(context tokens, where it comes from) of a config with ``max_position_embeddings`` ``max_pos``.

    Args:
        cfg: the config.json object; src: its path or name, for messages.
        max_pos: its max_position_embeddings (None: absent).

    Returns:
        (tokens, source text): ``(max_pos, "max_position_embeddings")`` without scaling or when the
        scaling gives max_position_embeddings itself.

    Raises:
        SpecError: a malformed rope_scaling / rope_parameters (field named, with the fix); both given with
            different contexts; nested rope_parameters whose entries disagree and name no full_attention;
            a derived context above MAX_CONTEXT_TOKENS.

    >>> rope_context({"rope_scaling": {"rope_type": "yarn", "factor": 4.0,
    ...                                "original_max_position_embeddings": 32768}}, "q", 40960)
    (131072, 'rope_scaling yarn: original_max_position_embeddings 32,768 x factor 4')
    >>> rope_context({"rope_scaling": None}, "q", 40960)
    (40960, 'max_position_embeddings')
    >>> rope_context({"rope_parameters": {"rope_theta": 1e6}}, "q", 40960)
    (40960, 'max_position_embeddings')
    """
    rs, rp = cfg.get("rope_scaling"), cfg.get("rope_parameters")
    plain = (max_pos, "max_position_embeddings")
    got = _scaled(rs, f"{src}: rope_scaling", max_pos, False) if rs is not None else plain
    if rp is None:
        return got
    new = _parameters(rp, f"{src}: rope_parameters", max_pos)
    if rs is not None and new[0] != got[0]:  # one of the two would be ignored, silently
        raise SpecError(
            f"{src}: rope_parameters",
            f"gives a context of {new[0]} tokens and rope_scaling {got[0]} "
            "(transformers v5 renamed rope_scaling rope_parameters: one field, two values)",
            "keep one of them, or give both the checkpoint's scaling",
        )
    return new


def _parameters(rp, field: str, max_pos: int | None) -> tuple[int | None, str]:
    """The context of a ``rope_parameters`` (flat, or nested by layer type: every value an object)."""
    if not (isinstance(rp, dict) and rp and all(isinstance(v, dict) for v in rp.values())):
        return _scaled(rp, field, max_pos, True)
    got = {k: _scaled(v, f"{field}.{k}", max_pos, True) for k, v in rp.items()}
    if "full_attention" in got:  # a sliding layer sees at most its window: the full layers bound the context
        return got["full_attention"]
    if len({g[0] for g in got.values()}) > 1:
        shown = ", ".join(f"{k} {g[0]}" for k, g in got.items())
        raise SpecError(
            field,
            f"its layer types give different contexts ({shown}) and none is full_attention",
            'give the full-attention layers\' parameters under "full_attention"',
        )
    return next(iter(got.values()))


def _scaled(rs, field: str, max_pos: int | None, default_type: bool) -> tuple[int | None, str]:
    """The context of one rope scaling object (``default_type``: an absent rope_type is ``default``)."""
    plain = (max_pos, "max_position_embeddings")
    name = field.rsplit(": ", 1)[-1]
    if not isinstance(rs, dict):
        raise SpecError(
            field,
            f"must be an object or null, got {rs!r}",
            'give the checkpoint\'s object, e.g. {"rope_type": "yarn", "factor": 4.0, '
            '"original_max_position_embeddings": 32768}, or null',
        )
    kind = rs.get("rope_type", rs.get("type", "default" if default_type else None))
    if not isinstance(kind, str) or not kind.strip():
        raise SpecError(
            f"{field}.rope_type",
            f"is missing or not a name (got {kind!r}); the scaling cannot be read",
            'add "rope_type": "yarn" (or linear, dynamic, llama3, longrope, default)',
        )
    kind = kind.strip().lower()
    if kind not in KNOWN_TYPES:  # 'wibble' multiplied the context by its factor
        raise SpecError(
            f"{field}.rope_type",
            f"unknown type {kind!r}: how it extends the context cannot be read",
            f"use one of {', '.join(KNOWN_TYPES)}, or remove {name} (null)",
        )
    if kind in ("linear", "dynamic", "yarn") and "factor" not in rs:  # yarn read as factor 1: 4,096 tokens, silently
        raise SpecError(
            f"{field}.factor",
            f"is missing: {kind} scaling extends the context by it (transformers' "
            "modeling_rope_utils requires it: a config without it does not load)",
            'give the checkpoint\'s factor, e.g. "factor": 4.0, or remove ' + name + " (null)",
        )
    factor = rs.get("factor", 1.0)
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not (math.isfinite(factor) and factor > 0):
        raise SpecError(
            f"{field}.factor",
            f"must be a positive number, got {factor!r}",
            'write the context-extension factor as a number, e.g. "factor": 4.0',
        )
    if kind in UNSCALED_TYPES or kind == "default":
        return plain
    base, base_name = max_pos, "max_position_embeddings"
    if kind == "yarn":
        base, base_name = rs.get("original_max_position_embeddings"), "original_max_position_embeddings"
        if isinstance(base, bool) or not isinstance(base, int) or base < 1:
            raise SpecError(
                f"{field}.original_max_position_embeddings",
                f"must be a positive integer for yarn scaling, got {base!r}",
                "give the pre-training context, e.g. 32768 (Qwen3) or 4096 (DeepSeek-V3)",
            )
    if base is None:
        return plain
    if base * factor > MAX_CONTEXT_TOKENS:  # an extra few zeros in the factor read as a 1e11-token context
        raise SpecError(
            f"{field}.factor",
            f"{base_name} {base:,} x factor {factor:g} = {base * factor:.3g} tokens is "
            f"beyond any decoder (at most {MAX_CONTEXT_TOKENS:,} accepted; the longest released "
            "context is 10,485,760, Llama 4 Scout)",
            "check the factor and the original length against the model's Hugging Face config.json",
        )
    tokens = int(base * factor)
    if tokens == max_pos:  # the stated length (every shipped config)
        return plain
    return tokens, f"{name} {kind}: {base_name} {base:,} x factor {factor:g}"
