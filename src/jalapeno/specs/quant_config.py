"""A checkpoint's ``quantization_config`` → the precision preset it is stored in.

Every known ``quant_method`` maps to the storage it really has; an unknown one (or a known one
with a layout no preset describes) is refused with the list, never read as BF16 (4x the bytes of
an INT4 checkpoint). Sources of each mapping:

- ``fp8``, ``fbgemm_fp8``: FP8 weights. With ``weight_block_size`` (DeepSeek-V3/R1 release: block
  128x128, fp32 scales) → ``fp8`` (block-scaled, priced by ``gemm[fp8_block]``); without it
  (per-tensor, e.g. transformers' FP8 config with ``weight_block_size`` null; ``fbgemm_fp8`` is
  per-channel: one scale per output row) → ``fp8-tensor`` (``gemm[fp8]``). KV in the model dtype
  unless the checkpoint carries KV scales (``kv_cache_scheme``) or the model is MLA (served with
  FP8 KV; TensorRT-LLM deepseek_v3 README) → ``...`` / ``...,kv=bf16``.
- ``mxfp4``: gpt-oss release (MXFP4 experts) → ``mxfp4``.
- ``compressed-tensors`` (llm-compressor): the weights' ``type``/``num_bits`` in
  ``config_groups``: float 8 → FP8 as above, block-scaled when the weights' ``strategy`` is
  ``block`` (llm-compressor's FP8_BLOCK scheme, ``block_structure`` [128, 128]), per-tensor or
  per-channel otherwise (``tensor``, ``channel``: the FP8 and FP8_DYNAMIC schemes); int 4 → INT4 weight-only: routed experts only when
  the targets name experts (Kimi K2.5's release → ``int4``), else every linear layer (``w4a16``
  / ``w4a16-g32`` by group size). Groups whose weights differ in scheme (FP8 attention beside INT4 MLPs) are
  refused: the first group's scheme priced every layer.
- ``awq`` (AutoAWQ), ``gptq`` (AutoGPTQ/GPTQModel): ``bits`` 4 → INT4 weight-only in every linear
  layer (AWQ without ``bits``/``w_bit`` is 4-bit, transformers' AwqConfig default; GPTQ without ``bits`` is
  refused: GPTQConfig has no default), BF16 math; group size 128 is both tools' default (``w4a16``;
  absent → 128), 64 → ``w4a16-g64``, 32 → ``w4a16-g32`` (the largest preset group at or below the checkpoint's; -1, GPTQ per-channel, as
  128); a group size that is not a whole number >= 1 or -1 is refused (it was read as 128).
- ``bitsandbytes``: ``load_in_4bit`` (NF4/FP4, blocksize 64 with an fp32 absmax: 4 + 32/64 = 4.5
  bits per weight, the bytes of INT4 g32 with 16-bit scales) → ``w4a16-g32``; 8-bit (LLM.int8) is
  not modelled and refused.

- ``modelopt`` (NVIDIA Model Optimizer checkpoints: nvidia/Llama-3.3-70B-Instruct-FP4 / -FP8,
  nvidia/DeepSeek-R1-0528-FP4, nvidia/MiniMax-M2.5-NVFP4): the fields as vLLM reads them
  (vllm-project/vllm @00155cde ``vllm/model_executor/layers/quantization/modelopt.py``,
  ``ModelOptQuantConfigBase.from_config``; docs/features/quantization/modelopt.md): either the
  ``hf_quant_config.json`` form nested under ``quantization`` (``quant_algo``, ``kv_cache_quant_algo``,
  ``group_size``, ``exclude_modules``) or the config.json form flat (``quant_algo``, ``kv_cache_scheme``
  ``{type: float, num_bits: 8}`` = FP8 KV, or ``kv_cache_quant_algo`` as earlier vLLM read it, ``group_size``,
  ``ignore``); ``quant_algo`` and the KV algo case-insensitive. ``quant_algo`` ``FP8`` (per-tensor weight
  scale) and ``FP8_PER_CHANNEL_PER_TOKEN`` (per-channel) → ``fp8-tensor``; ``NVFP4`` (W4A4, e2m1 with an
  e4m3 scale per 16 elements: ``group_size`` must be 16 where given) → ``nvfp4`` (every linear layer:
  the dense Llama release, ``lm_head`` excluded), but on an MoE model whose exclusion list names the
  attention (``*self_attn*``: nvidia/MiniMax-M2.5-NVFP4's ``ignore``, the DeepSeek-R1 FP4 releases'
  BF16 attention, specs/fp4_checkpoint.py) → ``fp4`` (NVFP4 experts; the preset prices attention, dense FFN
  and shared experts FP8, the approximation the catalog's DeepSeek-R1 and MiniMax FP4 rows make,
  data/engines.toml); on a dense model such an exclusion is refused (no preset keeps the attention 16-bit
  beside NVFP4 MLPs). KV: ``FP8`` → the preset's FP8 KV, ``NVFP4`` → ``,kv=nvfp4``, none → ``,kv=bf16``
  (FP8 on MLA models, as for ``fp8``). vLLM's other algos (``FP8_PB_WO``, ``W4A16_NVFP4``, ``MXFP8``,
  ``MIXED_PRECISION``) are refused as not modelled, any other as unknown, with the supported list.

A ``quantization_config`` without ``quant_method`` is refused (its keys alone do not say the
storage; an empty ``{}`` too, as transformers refuses it), and so is an FP8 ``weight_block_size``
other than two positive integers or null.

Without a ``quantization_config`` the checkpoint's ``torch_dtype`` (``dtype`` in transformers >=
4.56) is read: ``bfloat16`` and ``float16`` are 16-bit weights → ``bf16`` (FP16 is priced as BF16:
same bytes, same tensor-core rate on every catalog chip); ``float32`` → ``bf16`` too, as the
engines serve it (vLLM ``--dtype auto``: "FP16 precision for FP32 and FP16 models, and BF16
precision for BF16 models", vLLM engine-args docs; SGLang's ``--dtype auto`` alike). Absent →
``bf16`` (a named assumption: the dtype every catalog release without a quantization_config
has). Any other dtype (an 8-bit or 4-bit type without the scaling a quantization_config gives) is
refused, naming the field.
"""

from __future__ import annotations

from typing import Any

from jalapeno.errors import SpecError
from jalapeno.specs.schema_errors import json_written as _js

KNOWN_METHODS = ("fp8", "fbgemm_fp8", "mxfp4", "compressed-tensors", "awq", "gptq", "bitsandbytes", "modelopt")

#: ModelOpt ``quant_algo`` → preset (module docstring); NVFP4's depends on the model (:func:`_modelopt`)
MODELOPT_ALGOS = {"FP8": "fp8-tensor", "FP8_PER_CHANNEL_PER_TOKEN": "fp8-tensor", "NVFP4": "nvfp4"}

#: quant_algo values vLLM reads (modelopt.py QUANT_ALGOS) whose storage no preset describes
MODELOPT_UNMODELLED = ("FP8_PB_WO", "W4A16_NVFP4", "MXFP8", "MIXED_PRECISION")

#: ModelOpt KV-cache algos (vLLM KV_CACHE_QUANT_ALGOS) → the ``,kv=`` override ("" keeps the preset's FP8 KV)
MODELOPT_KV = {"FP8": "", "NVFP4": ",kv=nvfp4"}


def _modelopt(q: dict, field: str, mla: bool, moe: bool) -> str:
    """The preset of a ModelOpt ``quantization_config`` (module docstring).

    Raises:
        SpecError: a missing or unknown ``quant_algo`` (the supported list named), one vLLM reads but no preset
            stores, an NVFP4 ``group_size`` other than 16, an unknown KV algo, an exclusion list that is not a list
            of names, a dense model whose NVFP4 checkpoint keeps its attention unquantised.
    """
    nested = isinstance(q.get("quantization"), dict)
    if "quantization" in q and not nested:
        raise SpecError(
            f"{field}.quantization",
            f"must be an object (hf_quant_config.json's), got {_js(q['quantization'])}",
            'give {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", ...} as ModelOpt writes it',
        )
    c, at = (q["quantization"], f"{field}.quantization") if nested else (q, field)
    supported = ", ".join(MODELOPT_ALGOS)
    algo = c.get("quant_algo")
    if not isinstance(algo, str) or not algo.strip():
        raise SpecError(
            f"{at}.quant_algo",
            f"is {'missing' if algo is None else 'not a name: ' + _js(algo)} (a modelopt "
            "checkpoint names its algorithm)",
            f"give the checkpoint's quant_algo, one of {supported}",
        )
    algo = algo.strip().upper()
    if algo in MODELOPT_UNMODELLED:
        raise SpecError(
            f"{at}.quant_algo",
            f"ModelOpt {algo} is not modelled (no precision preset stores it)",
            f"use a checkpoint with quant_algo {supported}, or remove quantization_config and pass -p with "
            "a preset (`jalapeno models show` lists them)",
        )
    if algo not in MODELOPT_ALGOS:
        raise SpecError(f"{at}.quant_algo", f"unknown ModelOpt algorithm {algo!r}", f"use one of {supported}")
    kv_key = "kv_cache_quant_algo"
    kv = c.get(kv_key)
    if kv is None and not nested and c.get("kv_cache_scheme") is not None:
        kv_key, ks = "kv_cache_scheme", c["kv_cache_scheme"]
        fp8 = isinstance(ks, dict) and str(ks.get("type", "")).lower() == "float" and ks.get("num_bits") == 8
        if not fp8:  # vLLM reads only float 8-bit here; anything else was its BF16 KV, silently
            raise SpecError(
                f"{at}.kv_cache_scheme",
                f"only {{type: float, num_bits: 8}} (FP8 KV) is read, got {_js(ks)}",
                'write {"type": "float", "num_bits": 8} for an FP8 KV cache, or null for 16-bit KV',
            )
        kv = "FP8"
    if kv is not None and (not isinstance(kv, str) or kv.strip().upper() not in MODELOPT_KV):
        raise SpecError(
            f"{at}.{kv_key}",
            f"unknown KV-cache algorithm {_js(kv)}",
            f"use one of {', '.join(MODELOPT_KV)}, or null for a 16-bit KV cache",
        )
    kv_suffix = MODELOPT_KV[kv.strip().upper()] if kv is not None else ("" if mla else ",kv=bf16")
    if algo != "NVFP4":
        return MODELOPT_ALGOS[algo] + kv_suffix
    group = c.get("group_size")
    if group is not None and (type(group) is not int or group != 16):
        raise SpecError(
            f"{at}.group_size",
            f"NVFP4 scales every 16 elements (one e4m3 scale per 16), got {_js(group)}",
            'write "group_size": 16 (or leave it out), or pass -p with a preset',
        )
    ex_key = "exclude_modules" if nested else "ignore"
    excluded = c.get(ex_key) or []
    if not (isinstance(excluded, list) and all(isinstance(x, str) for x in excluded)):
        raise SpecError(
            f"{at}.{ex_key}",
            f"must be a list of module names or patterns, got {_js(excluded)}",
            'give a list, e.g. ["lm_head", "model.layers.*.self_attn*"] as ModelOpt writes it',
        )
    if not any("attn" in x.lower() for x in excluded):
        return "nvfp4" + kv_suffix
    if moe:
        return "fp4" + kv_suffix
    raise SpecError(
        f"{at}.{ex_key}",
        "keeps the attention unquantised beside NVFP4 MLPs on a dense model: no preset "
        "stores that (nvfp4 quantises every linear layer)",
        "pass -p nvfp4 (attention NVFP4 too: fewer bytes "
        "than the checkpoint) or -p bf16 / fp8-tensor as a bound, after removing quantization_config",
    )


def _fp8(q: dict, mla: bool, block: bool) -> str:
    name = "fp8" if block else "fp8-tensor"
    return name if q.get("kv_cache_scheme") or mla else f"{name},kv=bf16"


def _w4(group: Any, field: str) -> str:
    """The W4A16 preset of an INT4 checkpoint's ``group_size`` (module docstring): the preset of the
    largest group at or below it (its scale bytes are never under-counted, but below 32: group 16
    stores 5 bits per weight, priced 4.5); -1 (GPTQ per-channel: one scale per output row) as 128.

    Raises:
        SpecError: a group size that is not a whole number >= 1 or -1 (it was read as 128, silently).
    """
    if not isinstance(group, int) or isinstance(group, bool) or not (group >= 1 or group == -1):
        raise SpecError(
            field,
            f"must be a whole number of weights per scale (or -1, per channel), got {_js(group)}",
            "give the checkpoint's group size, e.g. 128 (AutoAWQ's and GPTQ's default), or -1",
        )
    if group == -1 or group >= 128:
        return "w4a16"
    return "w4a16-g64" if group >= 64 else "w4a16-g32"


#: torch_dtype values served as 16-bit weights (module docstring: float32 is served in 16 bits).
SIXTEEN_BIT_DTYPES = ("bfloat16", "float16", "float32")


def _dtype_key(cfg: dict) -> str:
    return "torch_dtype" if "torch_dtype" in cfg else "dtype"


def _norm_dtype(d: Any) -> Any:
    return d.strip().lower().removeprefix("torch.") if isinstance(d, str) else d


def _check_dtype_keys(cfg: dict, src: str) -> None:
    """Refuse ``torch_dtype`` and ``dtype`` (transformers >= 4.56's name for it) that disagree:
    ``torch_dtype`` was read and ``dtype`` ignored, silently (``"dtype": "int8"`` beside
    ``"torch_dtype": "bfloat16"`` priced 16-bit weights)."""
    if cfg.get("torch_dtype") is None or cfg.get("dtype") is None:
        return
    if _norm_dtype(cfg["torch_dtype"]) != _norm_dtype(cfg["dtype"]):
        raise SpecError(
            f"{src}: dtype",
            f"{cfg['dtype']!r} disagrees with torch_dtype {cfg['torch_dtype']!r} "
            "(transformers names the same field dtype since 4.56)",
            "keep one of them, or give both the checkpoint's dtype",
        )


def _check_dtype(cfg: dict, src: str) -> None:
    """Refuse a ``torch_dtype`` that is not a 16/32-bit float (its scaling would be guessed)."""
    key = _dtype_key(cfg)
    d = cfg.get(key)
    if d is None:
        return
    if not isinstance(d, str) or d.strip().lower().removeprefix("torch.") not in SIXTEEN_BIT_DTYPES:
        raise SpecError(
            f"{src}: {key}",
            f"{d!r} without a quantization_config is not modelled (the weights' scaling cannot be read)",
            f"use one of {', '.join(SIXTEEN_BIT_DTYPES)}, or add the checkpoint's quantization_config",
        )


def with_compression_config(cfg: dict) -> dict:
    """``cfg`` with its ``compression_config`` read as the ``quantization_config`` where that is absent or null.

    compressed-tensors checkpoints of 2024 wrote their table under ``compression_config``; vLLM reads it where
    ``quantization_config`` is absent (vllm/config.py ``ModelConfig._parse_quant_hf_config``, v0.6.4.post1, and
    ``get_quant_config`` in model_loader/weight_utils.py; SGLang's ``configs/model_config.py`` copies it). It was
    ignored here: an FP8 checkpoint so written was priced with 16-bit weights, silently (break50). With both keys,
    ``quantization_config`` is read, as vLLM does. Between the two vLLM reads a ``text_config``'s own
    ``quantization_config`` (get_quant_config: "some vision model may keep quantization_config in their
    text_config"), read here in that order too. The key stays in place, so :func:`quant_key` names it.

    >>> with_compression_config({"compression_config": {"quant_method": "fp8"}})["quantization_config"]
    {'quant_method': 'fp8'}
    >>> with_compression_config({"quantization_config": None})
    {'quantization_config': None}
    """
    if cfg.get("quantization_config") is not None:
        return cfg
    tc = cfg.get("text_config")
    if isinstance(tc, dict) and tc.get("quantization_config") is not None:  # vLLM's second place (see above)
        return {**cfg, "quantization_config": tc["quantization_config"]}
    if cfg.get("compression_config") is not None:
        return {**cfg, "quantization_config": cfg["compression_config"]}
    return cfg


def quant_key(cfg: dict) -> str:
    """The config.json key the quantization table was read from (``quantization_config``,
    ``text_config.quantization_config`` or ``compression_config``).

    >>> quant_key(with_compression_config({"compression_config": {"quant_method": "fp8"}}))
    'compression_config'
    """
    q, tc = cfg.get("quantization_config"), cfg.get("text_config")
    if q is not None and isinstance(tc, dict) and q is tc.get("quantization_config"):
        return "text_config.quantization_config"
    return "compression_config" if q is not None and q is cfg.get("compression_config") else "quantization_config"


def precision_origin(cfg: dict) -> str:
    """Where a config.json's released precision was read from, for ``models show``.

    >>> precision_origin({"torch_dtype": "bfloat16"})
    'config.json torch_dtype bfloat16 (no quantization_config)'
    >>> precision_origin({"quantization_config": {"quant_method": "fp8"}, "torch_dtype": "bfloat16"})
    'config.json quantization_config (quant_method fp8)'
    """
    q = cfg.get("quantization_config") or {}
    method = str(q.get("quant_method", "")).strip().lower() if isinstance(q, dict) else ""
    if method:
        return f"config.json {quant_key(cfg)} (quant_method {method})"
    d = cfg.get(_dtype_key(cfg))
    if d is None:
        return "assumed bf16: config.json has no quantization_config and no torch_dtype"
    d = str(d).strip().lower().removeprefix("torch.")
    served = (
        ""
        if d == "bfloat16"
        else (
            ", served in 16 bits as engines' --dtype auto does"
            if d == "float32"
            else ", priced as bf16: same bytes and tensor-core rate"
        )
    )
    return f"config.json {_dtype_key(cfg)} {d} (no quantization_config{served})"


def checkpoint_precision(cfg: dict, src: str, mla: bool, moe: bool = False) -> str:
    """The precision preset of a config.json's checkpoint (``bf16`` without a quantization_config,
    where ``torch_dtype`` is a 16/32-bit float or absent).

    Args:
        cfg: the parsed config.json.
        src: the file, for the message.
        mla: the model uses MLA attention (its FP8 checkpoints are served with FP8 KV).
        moe: the model has routed experts (a ModelOpt NVFP4 checkpoint with BF16 attention reads as ``fp4``).

    Raises:
        SpecError: an unknown ``quant_method``, or a known one whose bit width no preset stores
            (the field ``quantization_config.quant_method`` / ``.bits`` named, with the list); a
            ``torch_dtype`` other than bfloat16/float16/float32 without a quantization_config;
            ``torch_dtype`` and ``dtype`` that disagree (field ``dtype``).
    """
    _check_dtype_keys(cfg, src)
    q = cfg.get("quantization_config")
    field = f"{src}: {quant_key(cfg)}"
    if q == {}:  # was read as no quantization_config: 16-bit weights (transformers refuses it: no quant_method)
        raise SpecError(
            field,
            "is empty ({}): it names no quant_method, so the weights' storage is unknown",
            "give the checkpoint's quantization_config (its quant_method and fields), or remove "
            "it (or write null) for 16-bit weights",
        )
    q = q or {}
    method = str(q.get("quant_method", "")).strip().lower()
    if not method and q:  # {"bits": 4, ...} without its method was read as BF16 weights (4x INT4's bytes)
        raise SpecError(
            f"{field}.quant_method",
            f"is missing (the table gives {', '.join(map(str, q))})",
            f"add the checkpoint's quant_method (one of {', '.join(KNOWN_METHODS)}), or remove "
            "quantization_config for 16-bit weights",
        )
    if not method:
        _check_dtype(cfg, src)
        return "bf16"
    if method in ("fp8", "fbgemm_fp8"):
        block = q.get("weight_block_size")
        if block is not None and not (
            isinstance(block, list)
            and len(block) == 2
            and all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in block)
        ):
            raise SpecError(
                f"{field}.weight_block_size",
                f"must be two positive integers or null, got {_js(block)}",
                "give the block shape, e.g. [128, 128] (DeepSeek-V3), or null for per-tensor scales",
            )
        return _fp8(q, mla, method == "fp8" and bool(block))
    if method == "mxfp4":
        return "mxfp4"
    if method == "modelopt":
        return _modelopt(q, field, mla, moe)
    if method in ("awq", "gptq"):
        if method == "gptq" and "bits" not in q:  # transformers' GPTQConfig takes bits with no default
            raise SpecError(
                f"{field}.bits",
                "a gptq quantization_config without bits (GPTQConfig has no default: "
                "2, 3, 4 and 8 are all written by GPTQ tools)",
                'add the checkpoint\'s "bits": 4 (only 4-bit is modelled), or pass -p with a preset',
            )
        # AutoAWQ / transformers' AwqConfig: bits defaults to 4 (older AutoAWQ files write w_bit)
        bits_key = "bits" if "bits" in q else "w_bit"
        bits = q.get("bits", q.get("w_bit", 4))
        if type(bits) is not int:  # "4" printed '4-bit weights are not modelled (4-bit only)'
            raise SpecError(
                f"{field}.{bits_key}",
                f"must be a whole number of bits, got {_js(bits)}",
                f'write "{bits_key}": 4 (a whole number: not a string, no decimal point)',
            )
        if bits != 4:
            raise SpecError(
                f"{field}.{bits_key}",
                f"{method} with {bits}-bit weights is not modelled (4-bit only)",
                "use a 4-bit checkpoint or pass -p with a preset (`jalapeno models show` lists them)",
            )
        key = "group_size" if "group_size" in q else "q_group_size"
        return _w4(q.get(key, 128), f"{field}.{key}")
    if method == "bitsandbytes":
        flags = {k: q.get(k, False) for k in ("load_in_4bit", "load_in_8bit")}
        for k, v in flags.items():
            if type(v) is not bool:  # "false" is truthy: it read as a 4-bit checkpoint
                raise SpecError(f"{field}.{k}", f"must be true or false, got {_js(v)}", f'write "{k}": true or false')
        if all(flags.values()):  # transformers' BitsAndBytesConfig refuses the pair too
            raise SpecError(
                f"{field}.load_in_4bit",
                "and load_in_8bit are both true: a checkpoint is one or the other",
                "keep the one the checkpoint was saved with (only load_in_4bit is modelled)",
            )
        if flags["load_in_4bit"]:
            return "w4a16-g32"
        if not flags["load_in_8bit"]:
            raise SpecError(
                f"{field}.load_in_4bit",
                "a bitsandbytes quantization_config with neither load_in_4bit nor load_in_8bit true names no storage",
                'set "load_in_4bit": true for a 4-bit '
                "(NF4/FP4) checkpoint, or remove quantization_config for 16-bit weights",
            )
        raise SpecError(
            f"{field}.load_in_8bit",
            "bitsandbytes 8-bit (LLM.int8) weights are not modelled",
            "use a 4-bit (load_in_4bit) or FP8 checkpoint, or pass -p with a preset",
        )
    if method == "compressed-tensors":
        groups = q.get("config_groups") or {}
        if not isinstance(groups, dict):  # 'int' object has no attribute 'values', naming no field
            raise SpecError(
                f"{field}.config_groups",
                f"must be an object of named groups, got {_js(groups)}",
                'give {"group_0": {"targets": [...], "weights": {...}}} as llm-compressor writes it',
            )
        for name, g in groups.items():
            t = g.get("targets") if isinstance(g, dict) else None
            if t is not None and not (isinstance(t, list) and all(isinstance(x, str) for x in t)):
                # a string was read letter by letter ('re:.*experts' matched no 'expert'); a number raised TypeError
                raise SpecError(
                    f"{field}.config_groups.{name}.targets",
                    f"must be a list of module names, got {_js(t)}",
                    'give a list, e.g. ["Linear"] or ["re:.*mlp.experts.*"] as llm-compressor writes it',
                )
        schemes = {
            n: g["weights"] for n, g in groups.items() if isinstance(g, dict) and isinstance(g.get("weights"), dict)
        }
        shown = {
            n: tuple(str(w.get(k)).lower() for k in ("type", "num_bits", "strategy", "group_size"))
            for n, w in schemes.items()
        }
        if len(set(shown.values())) > 1:  # the first group's scheme priced every layer, silently (break49)
            kinds = "; ".join(
                f"{n}: {w.get('type')} {w.get('num_bits')}-bit" + (f" {w['strategy']}" if w.get("strategy") else "")
                for n, w in schemes.items()
            )
            raise SpecError(
                f"{field}.config_groups",
                f"the groups store their weights in different schemes ({kinds}); one preset prices every layer in one",
                "remove quantization_config and pass -p with the preset "
                "nearest the checkpoint (`jalapeno models show` lists them)",
            )
        w = next(iter(schemes.values()), None)
        if not isinstance(w, dict):
            raise SpecError(
                f"{field}.config_groups",
                "compressed-tensors without a weights scheme",
                "give config_groups.<group>.weights {type, num_bits} as llm-compressor writes it",
            )
        for k in ("type", "num_bits"):  # a missing one printed 'float None-bit weights are not modelled'
            if w.get(k) is None:
                raise SpecError(
                    f"{field}.config_groups.weights.{k}",
                    "is missing, so the weights' storage is unknown",
                    "give the checkpoint's weights {type, num_bits} as llm-compressor writes it, e.g. "
                    '"type": "float", "num_bits": 8 (FP8) or "int", 4 (INT4)',
                )
        kind, bits = str(w.get("type", "")).lower(), w.get("num_bits")
        if kind == "float" and bits == 8:
            return _fp8(q, mla, str(w.get("strategy", "")).lower() == "block")
        if kind == "int" and bits == 4:
            targets = " ".join(
                str(t) for g in groups.values() if isinstance(g, dict) for t in g.get("targets", []) or []
            ).lower()
            if "expert" in targets and "linear" not in targets:
                return "int4"
            g = w.get("group_size")  # null with the per-channel strategy (one scale per output row)
            g = -1 if g is None and str(w.get("strategy", "")).lower() == "channel" else g
            return _w4(g, f"{field}.config_groups.weights.group_size")
        raise SpecError(
            f"{field}.config_groups",
            f"compressed-tensors {kind or '?'} {bits}-bit weights are not modelled (FP8 and INT4 are)",
            "pass -p with a preset (`jalapeno models show` lists them)",
        )
    raise SpecError(
        f"{field}.quant_method",
        f"unknown quantization method {method!r} (its storage cannot be "
        "guessed: reading it as BF16 would be 4x the bytes of INT4)",
        f"use a checkpoint quantised with one of {', '.join(KNOWN_METHODS)}, or remove "
        "quantization_config and pass -p with a preset",
    )
