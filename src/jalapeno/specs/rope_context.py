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
(not an object, no type, a factor that is not a positive number, yarn without its original length)
is refused, as vLLM refuses it, rather than ignored. Pure: no I/O.
"""

from __future__ import annotations

import math

from jalapeno.errors import SpecError

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
        SpecError: a malformed rope_scaling (field named, with the fix).

    >>> rope_context({"rope_scaling": {"rope_type": "yarn", "factor": 4.0,
    ...                                "original_max_position_embeddings": 32768}}, "q", 40960)
    (131072, 'rope_scaling yarn: original_max_position_embeddings 32,768 x factor 4')
    >>> rope_context({"rope_scaling": None}, "q", 40960)
    (40960, 'max_position_embeddings')
    """
    rs = cfg.get("rope_scaling")
    plain = (max_pos, "max_position_embeddings")
    if rs is None:
        return plain
    field = f"{src}: rope_scaling"
    if not isinstance(rs, dict):
        raise SpecError(field, f"must be an object or null, got {rs!r}",
                        "give the checkpoint's object, e.g. {\"rope_type\": \"yarn\", \"factor\": 4.0, "
                        "\"original_max_position_embeddings\": 32768}, or null")
    kind = rs.get("rope_type", rs.get("type"))
    if not isinstance(kind, str) or not kind.strip():
        raise SpecError(f"{field}.rope_type", f"is missing or not a name (got {kind!r}); the scaling cannot be read",
                        "add \"rope_type\": \"yarn\" (or linear, dynamic, llama3, longrope, default)")
    kind = kind.strip().lower()
    if kind not in KNOWN_TYPES:  # 'wibble' multiplied the context by its factor
        raise SpecError(f"{field}.rope_type", f"unknown type {kind!r}: how it extends the context cannot be read",
                        f"use one of {', '.join(KNOWN_TYPES)}, or remove rope_scaling (null)")
    factor = rs.get("factor", 1.0)
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not (math.isfinite(factor) and factor > 0):
        raise SpecError(f"{field}.factor", f"must be a positive number, got {factor!r}",
                        "write the context-extension factor as a number, e.g. \"factor\": 4.0")
    if kind in UNSCALED_TYPES or kind == "default":
        return plain
    base, base_name = max_pos, "max_position_embeddings"
    if kind == "yarn":
        base, base_name = rs.get("original_max_position_embeddings"), "original_max_position_embeddings"
        if isinstance(base, bool) or not isinstance(base, int) or base < 1:
            raise SpecError(f"{field}.original_max_position_embeddings",
                            f"must be a positive integer for yarn scaling, got {base!r}",
                            "give the pre-training context, e.g. 32768 (Qwen3) or 4096 (DeepSeek-V3)")
    if base is None or int(base * factor) == max_pos:  # the stated length (every shipped config)
        return plain
    return int(base * factor), f"rope_scaling {kind}: {base_name} {base:,} x factor {factor:g}"
