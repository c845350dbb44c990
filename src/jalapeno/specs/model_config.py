"""Reading a Hugging Face ``config.json`` into a :class:`~jalapeno.specs.model.ModelSpec`.

Every field is checked (type, range) and a bad one raises one :class:`SpecError` naming it;
architectures outside :data:`~jalapeno.specs.model.SUPPORTED_MODEL_TYPES` are refused. The typed field readers
and the per-family field checks are specs/config_fields.py; reading the file from disk is specs/model_file.py
(both split from here in round 52; their names stay importable from here).
"""

from __future__ import annotations

from jalapeno.errors import SpecError, UnsupportedModelError
from jalapeno.moved import moved_names
from jalapeno.specs.config_fields import (
    V3_DEFAULTS,
    V3_TYPES,
    _check_indexer_fields,
    _flag,
    _minimax_attention,
    _minimax_mtp,
    _opt_int,
    _opt_pos,
    _req,
    _topk_method,
)
from jalapeno.specs.model import (
    _GQA_MOE_TYPES,
    _MLA_TYPES,
    SUPPORTED_MODEL_TYPES,
    AttentionSpec,
    ModelSpec,
    MoESpec,
)
from jalapeno.specs.model_plausibility import check_expert_groups, check_model_sizes, check_text_config_agrees
from jalapeno.specs.quant_config import (
    checkpoint_precision,
    precision_origin,
    quant_key,
    with_compression_config,
)
from jalapeno.specs.rope_context import rope_context
from jalapeno.specs.schema_errors import json_written as _js

#: Names that moved out of this module in round 52 (module budget), importable from here as before.
MOVED_TO_CONFIG_FIELDS = ("TOPK_METHODS", "_INDEXER_FIELDS")
MOVED_TO_MODEL_FILE = ("load_model_file", "file_model_name")
__getattr__ = moved_names(
    __name__,
    {"jalapeno.specs.config_fields": MOVED_TO_CONFIG_FIELDS, "jalapeno.specs.model_file": MOVED_TO_MODEL_FILE},
)

#: Hugging Face Qwen2Config / Qwen3Config / Qwen3MoeConfig default ``max_window_layers`` (a config
#: without the key): with ``use_sliding_window``, layers 0..27 attend in full, the rest slide.
QWEN_MAX_WINDOW_LAYERS = 28

#: Largest layer count accepted (the biggest public decoders have ~100-200 layers).
MAX_LAYERS = 4096

#: Hugging Face GptOssConfig defaults for a config.json without the keys (huggingface/transformers
#: src/transformers/models/gpt_oss/configuration_gpt_oss.py @02b8f42b): ``sliding_window: int | None = 128``;
#: ``layer_types`` None -> ``"sliding_attention" if bool((i + 1) % 2) else "full_attention"`` (layers 0, 2, ...
#: slide); ``attention_bias: bool = True``. The shipped gpt-oss-120b.json states all three, the same values.
GPT_OSS_SLIDING_WINDOW = 128


def model_from_config(cfg: dict, name: str, source: str = "") -> ModelSpec:
    """Build a :class:`ModelSpec` from a parsed config.json dict.

    Raises:
        UnsupportedModelError: the ``model_type`` is not a decoder jalapeno models.
        SpecError: a required field is missing, not a positive integer, or of the wrong type.
    """
    try:
        return _model_from_config(cfg, name, source)
    except (TypeError, ValueError, AttributeError, OverflowError) as e:
        raise SpecError(
            source or name,
            f"a field has the wrong type or value ({e})",
            "compare the file with the model's Hugging Face config.json",
        ) from None


def _model_from_config(cfg: dict, name: str, source: str = "") -> ModelSpec:
    src = source or name
    if not isinstance(cfg, dict):
        raise SpecError(src, "config.json must hold a JSON object", "pass a Hugging Face config.json")
    mt = cfg.get("model_type")
    inner = next((k for k, v in cfg.items() if isinstance(v, dict) and "model_type" in v), None)
    if mt is None and inner is not None:  # {"config": {...}}: was 'model_type is missing' (break55)
        raise UnsupportedModelError(
            f"{src}: model_type",
            f'is missing at the top level, and the object under "{inner}" has one: the config is wrapped',
            f'save the "{inner}" object alone as the config.json (its keys at the top level)',
        )
    if mt is None:  # was 'must be a string, got None': the key is absent, not mistyped
        raise UnsupportedModelError(
            f"{src}: model_type",
            "is missing: a Hugging Face config.json names its architecture in model_type",
            f'pass the model\'s config.json (it has "model_type", one of {", ".join(sorted(SUPPORTED_MODEL_TYPES))})',
        )
    if not isinstance(mt, str):
        raise UnsupportedModelError(
            f"{src}: model_type",
            f"must be a string, got {_js(mt)}",
            f"use one of {', '.join(sorted(SUPPORTED_MODEL_TYPES))}",
        )
    cfg = with_compression_config(cfg)
    q = cfg.get("quantization_config")
    if q is not None and not isinstance(q, dict):
        key = quant_key(cfg)
        raise SpecError(f"{src}: {key}", "must be an object", "remove it or give the HF object")
    tc = cfg.get("text_config")
    if tc is not None and not isinstance(tc, dict):  # "text_config": "x" was passed over, silently (break54)
        raise SpecError(
            f"{src}: text_config",
            f"must be an object of the text model's fields, got {_js(tc)}",
            "remove it (a text-only config.json needs none) or give the HF object",
        )
    if isinstance(cfg.get("vision_config"), dict) and mt in SUPPORTED_MODEL_TYPES:
        # a vision tower beside a text decoder was dropped silently: its weights were not counted
        raise UnsupportedModelError(
            f"{src}: vision_config",
            f"a vision encoder is not modelled ({mt!r} is priced as a text decoder)",
            "remove vision_config to price the text decoder alone (text-only requests; the encoder's "
            "weights are then left out of the memory fit)",
        )
    check_text_config_agrees(cfg, src, mt in SUPPORTED_MODEL_TYPES)
    tmt = cfg["text_config"].get("model_type") if isinstance(cfg.get("text_config"), dict) else None
    if mt not in SUPPORTED_MODEL_TYPES and isinstance(tmt, str) and tmt not in SUPPORTED_MODEL_TYPES:
        # Llama 4: 'pass the text_config as its own config.json' led to a second refusal, of 'llama4_text'
        raise UnsupportedModelError(
            f"{src}: text_config.model_type",
            f"{mt!r} is a multimodal wrapper whose text backbone {tmt!r} is not "
            "supported either (only dense/MoE decoders with GQA, MHA or MLA)",
            f"use a model whose text backbone's model_type is one of {', '.join(sorted(SUPPORTED_MODEL_TYPES))}",
        )
    if "text_config" in cfg and mt not in SUPPORTED_MODEL_TYPES:
        raise UnsupportedModelError(
            f"{src}: model_type",
            f"{mt!r} is a multimodal wrapper",
            "pass the text backbone's config (the text_config object) as its own config.json",
        )
    if mt not in SUPPORTED_MODEL_TYPES:
        raise UnsupportedModelError(
            f"{src}: model_type",
            f"architecture {mt!r} is not supported (only dense/MoE decoders with GQA, MHA or MLA)",
            f"use a config with model_type one of {', '.join(sorted(SUPPORTED_MODEL_TYPES))}",
        )
    check_model_sizes(cfg, src)  # an extra six zeros is refused here, not priced as a model that cannot fit
    h = _req(cfg, "hidden_size", src)
    layers = _req(cfg, "num_hidden_layers", src)
    if layers > MAX_LAYERS:
        raise SpecError(
            f"{src}: num_hidden_layers",
            f"{layers} layers is beyond any decoder ({MAX_LAYERS} max)",
            "check the layer count",
        )
    vocab = _req(cfg, "vocab_size", src)
    heads = _req(cfg, "num_attention_heads", src)
    kv_heads = _opt_pos(cfg, "num_key_value_heads", src) or heads
    if heads % kv_heads:
        raise SpecError(
            f"{src}: num_key_value_heads",
            f"{kv_heads} does not divide num_attention_heads={heads}",
            "use a KV head count that divides the query head count",
        )

    # ---- attention ----
    if mt in _MLA_TYPES:
        attn = AttentionSpec(
            kind="mla",
            num_heads=heads,
            num_kv_heads=heads,
            # null = no query compression (DeepSeek-V2-Lite); 0 was read the same way, silently
            q_lora_rank=_opt_int(cfg, "q_lora_rank", src, 0, 1, ", or null for no query compression"),
            kv_lora_rank=_req(cfg, "kv_lora_rank", src),
            qk_nope_dim=_req(cfg, "qk_nope_head_dim", src),
            qk_rope_dim=_req(cfg, "qk_rope_head_dim", src),
            v_head_dim=_req(cfg, "v_head_dim", src),
            index_heads=_opt_int(cfg, "index_n_heads", src),
            index_head_dim=_opt_int(cfg, "index_head_dim", src),
            index_topk=_opt_int(cfg, "index_topk", src),
        )
        if mt == "deepseek_v32" and not attn.index_topk:
            raise SpecError(
                f"{src}: index_topk",
                "DeepSeek-V3.2 needs its DSA indexer fields",
                "add index_n_heads, index_head_dim and index_topk",
            )
        _check_indexer_fields(cfg, src)
    else:
        head_dim = _opt_pos(cfg, "head_dim", src)
        if head_dim is None and h % heads:
            raise SpecError(
                f"{src}: head_dim",
                f"missing, and hidden_size={h} is not a multiple of num_attention_heads={heads} to derive it from",
                'add "head_dim" to the config.json',
            )
        head_dim = head_dim or h // heads
        windows: tuple[int, ...] = ()
        lt = cfg.get("layer_types")
        sw = cfg.get("sliding_window", GPT_OSS_SLIDING_WINDOW if mt == "gpt_oss" else None)  # a null: no window
        if sw is not None and (isinstance(sw, bool) or not isinstance(sw, int) or sw < 1):
            raise SpecError(
                f"{src}: sliding_window",
                f"must be a positive integer or null, got {_js(sw)}",
                "give the window length in tokens",
            )
        if lt is not None:
            if not isinstance(lt, list) or len(lt) != layers:
                raise SpecError(
                    f"{src}: layer_types",
                    f"must list one type per layer ({layers})",
                    "give num_hidden_layers entries of full_attention/sliding_attention",
                )
            bad = [t for t in lt if t not in ("full_attention", "sliding_attention")]
            if bad:
                raise SpecError(
                    f"{src}: layer_types", f"unknown layer type {bad[0]!r}", "use full_attention or sliding_attention"
                )
            if "sliding_attention" in lt and not sw:
                raise SpecError(
                    f"{src}: sliding_window",
                    "sliding layers need a window",
                    "set sliding_window to the window length in tokens",
                )
            windows = tuple(int(sw) if t == "sliding_attention" else 0 for t in lt)
        elif mt == "gpt_oss" and sw:  # no layer_types: every layer was priced in full attention, unlike Hugging Face
            windows = tuple(int(sw) if (i + 1) % 2 else 0 for i in range(layers))
        # Mistral and Mixtral apply a non-null sliding_window to every layer (Hugging Face
        # MixtralAttention passes config.sliding_window, "main diff with Llama"; a Mixtral config
        # carrying Mistral-7B's 4096 ran with full attention here); Qwen2/3 only with use_sliding_window
        elif sw and _flag(cfg, "use_sliding_window", src, mt in ("mistral", "mixtral")):
            # Qwen2/Qwen3 slide only layers i >= max_window_layers (Hugging Face Qwen2Config/Qwen3Config
            # layer_types, default 28); every layer was windowed here, a short KV read for the rest
            first = (
                0
                if mt in ("mistral", "mixtral")
                else _opt_int(cfg, "max_window_layers", src, QWEN_MAX_WINDOW_LAYERS, 0)
            )
            if first < layers:
                windows = tuple(int(sw) if i >= first else 0 for i in range(layers))
        qk_norm, qk_norm_tp, rotary_dim = mt in ("qwen3", "qwen3_moe"), False, 0
        if mt == "minimax_m2":
            qk_norm, qk_norm_tp, rotary_dim = _minimax_attention(cfg, src, layers, head_dim)
        attn = AttentionSpec(
            kind="gqa" if kv_heads < heads else "mha",
            num_heads=heads,
            num_kv_heads=kv_heads,
            head_dim=head_dim,
            bias=_flag(cfg, "attention_bias", src, mt in ("qwen2", "gpt_oss")),
            sinks=mt == "gpt_oss",
            qk_norm=qk_norm,
            qk_norm_tp=qk_norm_tp,
            rotary_dim=rotary_dim,
            windows=windows,
        )

    # ---- FFN / MoE ----
    moe: MoESpec | None = None
    dense_inter = _opt_int(cfg, "intermediate_size", src)
    dense_layers: tuple[int, ...] = tuple(range(layers))
    for keys in (
        ("n_routed_experts", "num_local_experts", "num_experts"),
        ("num_experts_per_tok", "experts_per_token"),
    ):
        given = {k: cfg[k] for k in keys if cfg.get(k) is not None}
        if len(set(map(repr, given.values()))) > 1:  # the first was used and the other ignored, silently
            shown = ", ".join(f"{k} = {v!r}" for k, v in given.items())
            raise SpecError(
                f"{src}: {next(iter(given))}",
                f"the config gives different values: {shown}",
                "give one of them, or the same value in each",
            )
    n_exp = cfg.get("n_routed_experts") or cfg.get("num_local_experts") or cfg.get("num_experts")
    zero = next((k for k in ("n_routed_experts", "num_local_experts", "num_experts") if cfg.get(k) == 0), None)
    top_key = "num_experts_per_tok" if "num_experts_per_tok" in cfg else "experts_per_token"
    if not n_exp and zero and cfg.get(top_key):  # ran as a dense model of the same layers, silently
        raise SpecError(
            f"{src}: {zero}",
            f"0 experts with {top_key} = {cfg[top_key]!r}",
            f"give the routed-expert count (>= {top_key}), or null for a dense model",
        )
    if not n_exp and cfg.get(top_key) and mt in _MLA_TYPES:
        # a DeepSeek config without its expert count ran as a dense model, silently (Hugging Face's
        # DeepseekV3Config defaults an absent n_routed_experts to 256: neither is assumed here)
        raise SpecError(
            f"{src}: n_routed_experts",
            f"missing, while {top_key} = {cfg[top_key]!r} routes tokens to experts",
            f'add "n_routed_experts" (DeepSeek-V3: 256), or remove {top_key} for a dense model',
        )
    if n_exp:
        src_key = (
            "n_routed_experts"
            if "n_routed_experts" in cfg
            else "num_local_experts"
            if "num_local_experts" in cfg
            else "num_experts"
        )
        n_exp = _req(cfg, src_key, src)
        # neither key: name Hugging Face's num_experts_per_tok (every MoE config class has it; gpt-oss's
        # experts_per_token was named, for a DeepSeek config that never has it)
        top_k = _req(
            cfg,
            "experts_per_token"
            if "experts_per_token" in cfg and "num_experts_per_tok" not in cfg
            else "num_experts_per_tok",
            src,
        )
        if top_k > n_exp:
            raise SpecError(
                f"{src}: num_experts_per_tok",
                f"top-k {top_k} exceeds {n_exp} experts",
                "set num_experts_per_tok <= the number of experts",
            )
        check_expert_groups(cfg, src, n_exp, top_k)  # DeepSeek's grouped gate (break52)
        if mt in ("gpt_oss", "mixtral", "minimax_m2"):  # intermediate_size is the expert's
            expert_inter = _req(cfg, "intermediate_size", src)
            dense_inter = 0
        else:
            expert_inter = _req(cfg, "moe_intermediate_size", src)
        missing = next((k for k in V3_DEFAULTS if k not in cfg), None) if mt in V3_TYPES else None
        if missing:  # priced with 0 (every layer MoE, no shared expert), silently; Hugging Face fills in V3's
            raise SpecError(
                f"{src}: {missing}",
                f"is missing (Hugging Face's DeepseekV3Config would fill in DeepSeek-V3's "
                f"{V3_DEFAULTS[missing]}; it is not guessed here)",
                f'add "{missing}" from the model\'s config.json (DeepSeek-V3: {V3_DEFAULTS[missing]})',
            )
        n_shared = _opt_int(cfg, "n_shared_experts", src)
        if mt == "minimax_m2" and _opt_int(cfg, "shared_intermediate_size", src):
            raise SpecError(
                f"{src}: shared_intermediate_size",
                "a MiniMax-M2 shared expert is not modelled (every released MiniMax-M2/M2.5 config has 0)",
                "set shared_intermediate_size to 0",
            )
        shared_inter = n_shared * expert_inter
        if mt in _MLA_TYPES:
            first_dense = _opt_int(cfg, "first_k_dense_replace", src)
            if first_dense >= layers:  # every layer dense: the experts were counted in no layer
                raise SpecError(
                    f"{src}: first_k_dense_replace",
                    f"{first_dense} leaves none of the {layers} layers MoE",
                    f"give fewer than num_hidden_layers = {layers} (DeepSeek-V3: 3)",
                )
            freq = _opt_int(cfg, "moe_layer_freq", src, 1, 1)  # 0 was read as 1 (Hugging Face divides by it)
            # MoE where layer_idx >= first_k_dense_replace and layer_idx % moe_layer_freq == 0 (DeepSeek's Hugging Face
            # modeling_deepseek.py DeepseekV2/V3DecoderLayer, and vLLM's and SGLang's deepseek_v2 alike): the count
            # from first_k_dense_replace, (i - first) % freq, put the MoE layers one off for an odd first (break49)
            dense_layers = tuple(i for i in range(layers) if i < first_dense or i % freq)
            if len(dense_layers) == layers:  # moe_layer_freq 1e15: the experts were counted in no layer
                raise SpecError(
                    f"{src}: moe_layer_freq",
                    f"{freq} leaves none of the {layers} layers MoE (a layer "
                    f"is MoE when its index >= first_k_dense_replace = {first_dense} is a multiple of it)",
                    "give the checkpoint's moe_layer_freq (DeepSeek-V2/V3: 1)",
                )
            if dense_layers:
                dense_inter = _req(cfg, "intermediate_size", src)
        elif mt == "qwen3_moe":
            only = cfg.get("mlp_only_layers") or []
            if not isinstance(only, list):
                raise SpecError(f"{src}: mlp_only_layers", "must be a list of layer indices", "give a JSON list")
            bad = next((i for i in only if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < layers), None)
            if bad is not None:  # an index past the last layer (or not a number) was ignored: the layer stayed MoE
                raise SpecError(
                    f"{src}: mlp_only_layers",
                    f"{bad!r} is not a layer index (0 to {layers - 1})",
                    f"list indices of the {layers} layers (num_hidden_layers), counted from 0",
                )
            step = _opt_int(cfg, "decoder_sparse_step", src, 1, 1)  # 0 was read as 1 (Hugging Face divides by it)
            dense_layers = tuple(i for i in range(layers) if i in only or (i + 1) % step)
            if len(dense_layers) == layers:  # every layer dense: the experts were counted in no layer
                raise SpecError(
                    f"{src}: {'decoder_sparse_step' if step > layers else 'mlp_only_layers'}",
                    f"leaves none of the {layers} layers MoE (decoder_sparse_step = {step}, "
                    f"mlp_only_layers = {len(only)} layers)",
                    "give a decoder_sparse_step <= num_hidden_layers and fewer mlp_only_layers (Qwen3-MoE: 1 and [])",
                )
        else:
            dense_layers = ()
        # MiniMax-M2 use_routing_bias: sigmoid scores with a per-expert correction bias added for
        # the top-k choice (e_score_correction_bias), DeepSeek-V3's noaux_tc scheme
        bias_corrected = _topk_method(cfg, src, mt) == "noaux_tc" or (
            mt == "minimax_m2" and _flag(cfg, "use_routing_bias", src, False)
        )
        moe = MoESpec(
            num_experts=n_exp,
            top_k=top_k,
            num_shared=n_shared,
            expert_intermediate=expert_inter,
            shared_intermediate=shared_inter,
            expert_bias=mt == "gpt_oss",
            router_bias=mt == "gpt_oss" or bias_corrected,
            aux_loss_free=bias_corrected,
            router_fp32=mt == "minimax_m2",
        )
    elif mt in _GQA_MOE_TYPES:
        raise SpecError(
            f"{src}: num_experts",
            f"model_type {mt} is MoE but no expert count found",
            "add num_experts / num_local_experts to the config",
        )
    else:
        dense_inter = _req(cfg, "intermediate_size", src)
    ctx = rope_context(
        cfg,
        src,
        _opt_int(cfg, "max_position_embeddings", src, None, 1, ", or remove it (then no context check is made)"),
    )
    return ModelSpec(
        name=name,
        model_type=mt,
        hidden_size=h,
        num_layers=layers,
        vocab_size=vocab,
        attention=attn,
        dense_intermediate=dense_inter,
        dense_layers=dense_layers,
        moe=moe,
        mtp_layers=_minimax_mtp(cfg, src) if mt == "minimax_m2" else _opt_int(cfg, "num_nextn_predict_layers", src),
        tie_embeddings=_flag(cfg, "tie_word_embeddings", src, False),
        default_precision=checkpoint_precision(cfg, src, mt in _MLA_TYPES, moe=moe is not None),
        # absent: unknown, no context check; an explicit 0 is refused, not read as absent
        max_context=ctx[0] or 0,
        context_from=ctx[1],
        source=source,
        precision_from=precision_origin(cfg),
    )
