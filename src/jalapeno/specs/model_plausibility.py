"""Plausible sizes of a model config.json: a typo (an extra six zeros) is an error, not a model.

A Hugging Face ``config.json`` field that is a positive integer but absurd (``hidden_size``
1,000,000,000,000, ``vocab_size`` 10^12) used to be read as given: ``jalapeno models show``
listed a model of 8.6e21 parameters, and a command that priced it failed later with "the weights
do not fit ... shard wider", which points at the deployment, not at the file. Each field below has
an upper bound about 16x (or more) past the largest released decoder that sets it, so any real or
hypothetical decoder fits and a slip of a factor 1,000 does not. Lower bounds are the type checks
of :mod:`jalapeno.specs.model_config` (positive integers).

Largest released values (each bound's source; the shipped catalog's span in ``data/models``):

- ``hidden_size``: 20,480 (Megatron-Turing NLG 530B, Smith et al. 2022 Table 1); catalog 2,880
  (gpt-oss-120b) to 16,384 (Llama-3.1-405B). Bound 262,144.
- ``vocab_size``: 262,208 (Gemma 3 config.json); catalog 32,000 to 201,088 (gpt-oss). Bound 4,194,304.
- attention heads (``num_attention_heads``, ``num_key_value_heads``, ``index_n_heads``): 128
  (DeepSeek-V3, Llama-3.1-405B). Bound 4,096.
- per-head widths (``head_dim``, ``qk_nope_head_dim``, ``qk_rope_head_dim``, ``v_head_dim``,
  ``index_head_dim``, ``rotary_dim``): 256 (Gemma). Bound 4,096.
- MLA ranks (``kv_lora_rank``, ``q_lora_rank``): 1,536 (DeepSeek-V3 q_lora_rank). Bound 262,144,
  as ``hidden_size`` (a rank above the width compresses nothing, but the width bound is the slip check).
- FFN widths (``intermediate_size``, ``moe_intermediate_size``, ``shared_intermediate_size``):
  53,248 (Llama-3.1-405B). Bound 1,048,576.
- routed experts (``n_routed_experts``, ``num_local_experts``, ``num_experts``): 512
  (Qwen3-Next-80B-A3B config.json); catalog 8 (Mixtral) to 384 (Kimi K2.5). Bound 16,384;
  ``n_shared_experts`` the same.
- context (``max_position_embeddings``, ``sliding_window``, ``index_topk``): 10,485,760 tokens
  (Llama 4 Scout config.json, the longest released context). Bound :data:`MAX_CONTEXT_TOKENS`.
- MTP modules (``num_nextn_predict_layers``, ``num_mtp_modules``): 1 (DeepSeek-V3), 3 (MiniMax-M2.5
  config). Bound 64.

``num_hidden_layers`` keeps its own bound (:data:`jalapeno.specs.model_config.MAX_LAYERS`).
"""

from __future__ import annotations

from jalapeno.errors import SpecError
from jalapeno.specs.schema_errors import json_written as _js

#: Longest sequence (input + output tokens) accepted anywhere: 2**27 = 134,217,728 tokens, ~13x
#: the longest released context (Llama 4 Scout, max_position_embeddings 10,485,760). Also bounds
#: --isl/--osl, --context and trace lengths for a model whose config gives no context length.
MAX_CONTEXT_TOKENS = 2**27

_WIDTH, _HEADS, _HEAD_DIM, _FFN, _EXPERTS = 262_144, 4096, 4096, 1_048_576, 16_384

#: field -> (bound, what the largest released decoder sets, for the message)
MODEL_BOUNDS: dict[str, tuple[int, str]] = {
    "hidden_size": (_WIDTH, "20,480 (Megatron-Turing NLG 530B); Llama-3.1-405B 16,384"),
    "vocab_size": (4_194_304, "262,208 (Gemma 3); gpt-oss 201,088"),
    "num_attention_heads": (_HEADS, "128 (DeepSeek-V3, Llama-3.1-405B)"),
    "num_key_value_heads": (_HEADS, "128 (DeepSeek-V3)"),
    "index_n_heads": (_HEADS, "64 (DeepSeek-V3.2)"),
    "head_dim": (_HEAD_DIM, "256 (Gemma)"),
    "qk_nope_head_dim": (_HEAD_DIM, "128 (DeepSeek-V3)"),
    "qk_rope_head_dim": (_HEAD_DIM, "64 (DeepSeek-V3)"),
    "v_head_dim": (_HEAD_DIM, "128 (DeepSeek-V3)"),
    "index_head_dim": (_HEAD_DIM, "128 (DeepSeek-V3.2)"),
    "rotary_dim": (_HEAD_DIM, "64 (MiniMax-M2.5)"),
    "kv_lora_rank": (_WIDTH, "512 (DeepSeek-V3)"),
    "q_lora_rank": (_WIDTH, "1,536 (DeepSeek-V3)"),
    "intermediate_size": (_FFN, "53,248 (Llama-3.1-405B)"),
    "moe_intermediate_size": (_FFN, "2,048 (Kimi K2.5)"),
    "shared_intermediate_size": (_FFN, "0 (MiniMax-M2.5)"),
    "n_routed_experts": (_EXPERTS, "512 (Qwen3-Next); DeepSeek-V3 256"),
    "num_local_experts": (_EXPERTS, "512 (Qwen3-Next); Mixtral 8"),
    "num_experts": (_EXPERTS, "512 (Qwen3-Next)"),
    "n_shared_experts": (_EXPERTS, "2 (DeepSeek-V2); DeepSeek-V3 1"),
    "max_position_embeddings": (MAX_CONTEXT_TOKENS, "10,485,760 (Llama 4 Scout)"),
    "sliding_window": (MAX_CONTEXT_TOKENS, "32,768 (QwQ-32B); gpt-oss 128"),
    "index_topk": (MAX_CONTEXT_TOKENS, "2,048 (DeepSeek-V3.2)"),
    "num_nextn_predict_layers": (64, "1 (DeepSeek-V3)"),
    "num_mtp_modules": (64, "3 (MiniMax-M2.5)"),
}


def check_model_sizes(cfg: dict, src: str) -> None:
    """Refuse a config.json integer field above its plausible bound (:data:`MODEL_BOUNDS`).

    Only well-typed values are judged (an int, not a bool): wrong types and non-positive values
    are :mod:`jalapeno.specs.model_config`'s errors, with their own messages.

    Args:
        cfg: the parsed config.json object.
        src: the file (or model name) for the message.

    Raises:
        SpecError: naming ``<src>: <field>``, the value, the bound and the largest released value.

    >>> check_model_sizes({"hidden_size": 7168}, "m.json")
    >>> check_model_sizes({"hidden_size": 10**12}, "m.json")
    Traceback (most recent call last):
    ...
    jalapeno.errors.SpecError: m.json: hidden_size: 1,000,000,000,000 is beyond any decoder (at most 262,144 accepted; the largest released is 20,480 (Megatron-Turing NLG 530B); Llama-3.1-405B 16,384). Fix: check the value against the model's Hugging Face config.json (a slip of extra zeros?)
    """
    for key, (hi, largest) in MODEL_BOUNDS.items():
        v = cfg.get(key)
        if isinstance(v, int) and not isinstance(v, bool) and v > hi:
            raise SpecError(
                f"{src}: {key}",
                f"{v:,} is beyond any decoder (at most {hi:,} accepted; the largest released is {largest})",
                "check the value against the model's Hugging Face config.json (a slip of extra zeros?)",
            )


#: keys a text_config may give otherwise than its wrapper without changing the model priced (names, token ids, dtype)
_NOT_SHAPES = frozenset(
    {
        "model_type",
        "architectures",
        "_name_or_path",
        "auto_map",
        "transformers_version",
        "torch_dtype",
        "dtype",
        "bos_token_id",
        "eos_token_id",
        "pad_token_id",
    }
)


def check_text_config_agrees(cfg: dict, src: str, supported: bool) -> None:
    """Refuse a config of a supported ``model_type`` (``supported``) whose ``text_config`` gives a field
    the top level gives otherwise. The top level is read here; vLLM reads the nested one (``get_hf_text_config``:
    transformers' ``get_text_config`` returns ``text_config`` where there is one), so the two would price
    different models: a llama config with a 4,096-wide text_config beside its 8,192-wide top level was priced
    at 8,192, silently (break50). Keys that agree, that only one side gives (or gives as null), and the names,
    token ids and dtype (:data:`_NOT_SHAPES`) pass.

    >>> check_text_config_agrees({"hidden_size": 8, "text_config": {"hidden_size": 8}}, "c.json", True)

    Raises:
        SpecError: field ``text_config.<key>``, naming both values.
    """
    tc = cfg.get("text_config")
    if not supported or not isinstance(tc, dict):
        return
    for k, v in tc.items():
        if k in cfg and k not in _NOT_SHAPES and v is not None and cfg[k] != v:
            raise SpecError(
                f"{src}: text_config.{k}",
                f"is {_js(v)} and the top-level {k} {_js(cfg[k])}: the top "
                "level is read here, the nested text_config by vLLM (transformers' get_text_config)",
                "give the text model's fields once: drop text_config, or pass it as its own config.json",
            )


def check_expert_groups(cfg: dict, src: str, n_exp: int, top_k: int) -> None:
    """Refuse a grouped gate (DeepSeek-V3's ``n_group`` / ``topk_group``) that no engine can run. The gate splits the
    ``n_exp`` routed experts into ``n_group`` equal groups, keeps the ``topk_group`` best groups and picks the token's
    ``top_k`` experts inside them (DeepSeek-V3 ``MoEGate``: ``scores.view(tokens, n_group, -1)``, ``topk(group_scores,
    k=topk_group)``; vLLM's ``grouped_topk`` the same): the experts must divide into the groups, at most ``n_group``
    groups can be kept, and the kept groups must hold ``top_k`` experts. Nothing in jalapeno prices the grouping (the
    routed experts' load is priced over all experts, cost/routing.py), so a config breaking one of these was read as
    given, silently (break52). Absent or null keys are not checked (a config without a grouped gate).

    Raises:
        SpecError: a group count that is not a positive integer, ``topk_group > n_group``, experts that do not
            divide into ``n_group`` groups, or kept groups holding fewer than ``top_k`` experts.
    """
    groups = {k: cfg.get(k) for k in ("n_group", "topk_group") if cfg.get(k) is not None}
    for k, v in groups.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise SpecError(
                f"{src}: {k}",
                f"must be a positive integer, got {_js(v)}",
                f"give {k} as a whole number of expert groups (DeepSeek-V3: n_group 8, topk_group 4)",
            )
    ng, tg = groups.get("n_group"), groups.get("topk_group")
    if ng is None:
        return
    if tg is not None and tg > ng:
        raise SpecError(
            f"{src}: topk_group",
            f"{tg} groups kept of n_group {ng}: the gate keeps topk_group of its n_group expert groups",
            f"set topk_group <= n_group {ng} (DeepSeek-V3: 4 of 8)",
        )
    if n_exp % ng:
        raise SpecError(
            f"{src}: n_group",
            f"{n_exp} routed experts do not split into {ng} equal groups",
            f"give an n_group that divides n_routed_experts {n_exp} (DeepSeek-V3: 256 experts in 8 groups)",
        )
    if tg is not None and top_k > tg * (n_exp // ng):
        raise SpecError(
            f"{src}: topk_group",
            f"{tg} kept group(s) of {n_exp // ng} experts hold fewer than the "
            f"{top_k} experts a token is routed to (num_experts_per_tok)",
            f"keep at least {-(-top_k // (n_exp // ng))} groups (topk_group), or route to fewer experts",
        )
