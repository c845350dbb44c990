"""Typed readers of Hugging Face ``config.json`` fields, and the checks of the fields one model family adds.

:mod:`jalapeno.specs.model_config` builds a :class:`~jalapeno.specs.model.ModelSpec` from these: a required
positive integer (``_req``), an optional integer (``_opt_int``, ``_opt_pos``) or flag (``_flag``), each refused
with one :class:`~jalapeno.errors.SpecError` naming the field; and per family, MiniMax-M2's attention and MTP
fields, the DeepSeek gate's ``topk_method`` and DeepSeek-V3.2's DSA indexer fields. Split from model_config.py
(round 52, module budget); the names stay importable from there.
"""

from __future__ import annotations

from typing import Any

from jalapeno.errors import SpecError, choice_hint
from jalapeno.specs.model import _MLA_TYPES
from jalapeno.specs.schema_errors import json_written as _js

# ---- field readers -----------------------------------------------------------------------


def _req(cfg: dict, key: str, src: str, kind: type = int) -> Any:
    if key not in cfg or cfg[key] is None:
        raise SpecError(
            f"{src}: {key}",
            "missing required field",
            f'add "{key}" to the config.json (see the model\'s Hugging Face config)',
        )
    v = cfg[key]
    if kind is int:
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise SpecError(
                f"{src}: {key}", f"must be a positive integer, got {_js(v)}", f'set "{key}" to a positive integer'
            )
    return v


def _opt_int(
    cfg: dict, key: str, src: str, default: int | None = 0, minimum: int = 0, removed: str = " or remove it"
) -> int | None:
    """An integer >= ``minimum``, or ``default`` when the key is absent or null."""
    v = cfg.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        kind = "non-negative" if minimum == 0 else "positive"
        raise SpecError(
            f"{src}: {key}", f"must be a {kind} integer, got {_js(v)}", f'set "{key}" to a {kind} integer{removed}'
        )
    return v


def _opt_pos(cfg: dict, key: str, src: str) -> int | None:
    """A positive integer, or None when the key is absent or null (Hugging Face: "derive it");
    an explicit 0 is refused, not read as absent (``num_key_value_heads: 0`` once priced as MHA)."""
    return _opt_int(cfg, key, src, None, 1, ", or remove it (null) to derive it")


def _flag(cfg: dict, key: str, src: str, default: bool) -> bool:
    v = cfg.get(key, default)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise SpecError(f"{src}: {key}", f"must be true or false, got {_js(v)}", f'write "{key}": true or false')
    return v


# ---- per-family fields ------------------------------------------------------------------

#: MLA model types whose config class is DeepseekV3Config, and the defaults it gives a config.json without the
#: keys (huggingface/transformers src/transformers/models/deepseek_v3/configuration_deepseek_v3.py @001f85b3:
#: ``n_shared_experts=1``, ``first_k_dense_replace=3``): an absent key is refused, as n_routed_experts is.
V3_TYPES = ("deepseek_v3", "deepseek_v32", "kimi_k2")
V3_DEFAULTS = {"first_k_dense_replace": 3, "n_shared_experts": 1}

#: The top-k methods of DeepSeek's MoE gate (the Hugging Face remote code, modeling_deepseek.py ``MoEGate``:
#: DeepSeek-V2's ``greedy`` and ``group_limited_greedy``; DeepSeek-V3's ``noaux_tc``, the auxiliary-loss-free
#: choice with a per-expert correction bias, which its configuration_deepseek.py defaults to and Kimi K2 keeps).
TOPK_METHODS = ("greedy", "group_limited_greedy", "noaux_tc")


def _minimax_attention(cfg: dict, src: str, layers: int, head_dim: int) -> tuple[bool, bool, int]:
    """(qk_norm, qk_norm_tp, rotary_dim) of a MiniMax-M2 config; what no spec field prices is refused.

    ``attn_type_list`` (MiniMax-01 lineage: 0 = lightning/linear attention, 1 = softmax attention)
    must be all 1: linear-attention layers are not modelled. ``qk_norm_type`` ``per_layer`` (the
    released M2/M2.5 value: one RMSNorm over all heads of q and of k) is the only kind read.
    ``rotary_dim`` / ``partial_rotary_factor``: the rotated part of each head (M2.5: 64 of 128).
    """
    types = cfg.get("attn_type_list")
    if types is not None:
        if not isinstance(types, list) or len(types) != layers:
            raise SpecError(
                f"{src}: attn_type_list",
                f"must list one attention type per layer ({layers})",
                "give num_hidden_layers entries (1 = softmax attention)",
            )
        if any(t != 1 for t in types):
            raise SpecError(
                f"{src}: attn_type_list",
                "linear (lightning) attention layers (type 0) are not modelled",
                "use a config whose every layer is softmax attention (type 1), as MiniMax-M2/M2.5",
            )
    qk_norm = _flag(cfg, "use_qk_norm", src, False)
    if qk_norm and cfg.get("qk_norm_type", "per_layer") != "per_layer":
        raise SpecError(
            f"{src}: qk_norm_type",
            f"{cfg.get('qk_norm_type')!r} is not modelled",
            'use "per_layer" (MiniMax-M2/M2.5), or use_qk_norm false',
        )
    rot = _opt_pos(cfg, "rotary_dim", src)
    frac = cfg.get("partial_rotary_factor")
    if frac is not None:
        if isinstance(frac, bool) or not isinstance(frac, (int, float)) or not 0 < frac <= 1:
            raise SpecError(
                f"{src}: partial_rotary_factor",
                f"must be in (0, 1], got {frac!r}",
                "give the rotated fraction of head_dim (MiniMax-M2.5: 0.5)",
            )
        from_frac = round(frac * head_dim)
        if rot is not None and rot != from_frac:
            raise SpecError(
                f"{src}: rotary_dim",
                f"{rot} disagrees with partial_rotary_factor {frac} x head_dim {head_dim} = {from_frac}",
                "give one of them, or values that agree",
            )
        rot = from_frac
    if rot is not None and (rot > head_dim or rot % 2):
        raise SpecError(
            f"{src}: rotary_dim",
            f"must be an even number <= head_dim {head_dim}, got {rot}",
            "give the rotated dimensions of one head",
        )
    return qk_norm, qk_norm, 0 if rot in (None, head_dim) else rot


def _topk_method(cfg: dict, src: str, mt: str) -> str | None:
    """The MoE gate's ``topk_method`` of an MLA (DeepSeek-family) config, checked; None for other types, whose
    Hugging Face classes do not read it. Any value but ``noaux_tc`` prices an auxiliary-loss router (no
    correction bias, no measured routing skew), so a typo (``"noaux-tc"``), a number, or a DeepSeek-V3-class
    config without the key was priced as one, silently, and ``--routing measured`` was then refused as if the
    model had such a router (break49).

    >>> _topk_method({"topk_method": "noaux_tc"}, "c.json", "deepseek_v3")
    'noaux_tc'
    >>> _topk_method({}, "c.json", "deepseek_v2")  # DeepSeek-V2's gate defaults to greedy
    'greedy'

    Raises:
        SpecError: a value outside :data:`TOPK_METHODS`, or the key missing from a :data:`V3_TYPES` config.
    """
    if mt not in _MLA_TYPES:
        return None
    if "topk_method" not in cfg or cfg["topk_method"] is None:
        if mt in V3_TYPES:
            raise SpecError(
                f"{src}: topk_method",
                "is missing (DeepSeek-V3's configuration_deepseek.py would fill in "
                "noaux_tc, the auxiliary-loss-free router; it is not guessed here)",
                'add "topk_method" from the model\'s config.json (DeepSeek-V3/R1, Kimi K2: "noaux_tc")',
            )
        return "greedy"
    tm = cfg["topk_method"]
    if tm not in TOPK_METHODS:
        raise SpecError(
            f"{src}: topk_method",
            f"unknown top-k method {_js(tm)}{choice_hint(tm, TOPK_METHODS)} "
            "(any other than noaux_tc would be priced as an auxiliary-loss router)",
            f"use one of {', '.join(TOPK_METHODS)} (DeepSeek-V3/R1, Kimi K2: noaux_tc)",
        )
    return tm


def _minimax_mtp(cfg: dict, src: str) -> int:
    """MTP modules of a MiniMax-M2 config: ``num_mtp_modules`` when ``use_mtp``, each one decoder layer
    (``mtp_transformer_layers`` 1, as DeepSeek's MTP module prices it); deeper modules are refused."""
    if not _flag(cfg, "use_mtp", src, False):
        return 0
    depth = _opt_int(cfg, "mtp_transformer_layers", src, 1, 1)
    if depth != 1:
        raise SpecError(
            f"{src}: mtp_transformer_layers",
            f"MTP modules of {depth} layers are not modelled",
            "use 1 (MiniMax-M2.5), or use_mtp false",
        )
    return _opt_int(cfg, "num_mtp_modules", src, 1, 1)


#: The DSA indexer's fields of a DeepSeek-V3.2 config.json (its ``index_topk`` switches the indexer on).
_INDEXER_FIELDS = ("index_n_heads", "index_head_dim", "index_topk")


def _check_indexer_fields(cfg: dict, src: str) -> None:
    """Refuse a DSA indexer given in part: ``index_topk`` alone (or with a zero ``index_head_dim``) priced
    DeepSeek Sparse Attention's top-k selection with an indexer of no weights, no FLOPs and no index cache,
    silently (break48). Either every field of :data:`_INDEXER_FIELDS` is a positive integer or none is (absent or 0).

    >>> _check_indexer_fields({"index_n_heads": 64, "index_head_dim": 128, "index_topk": 2048}, "c.json")
    >>> _check_indexer_fields({}, "c.json")

    Raises:
        SpecError: naming the first field missing or zero, and the fields it goes with.
    """
    given = [k for k in _INDEXER_FIELDS if cfg.get(k)]  # set and positive (_opt_int refused a negative one)
    if not given:  # none, or each 0: no indexer
        return
    bad = next((k for k in _INDEXER_FIELDS if not cfg.get(k)), None)
    if bad is not None:
        what = "missing" if cfg.get(bad) is None else f"{_js(cfg[bad])}"
        raise SpecError(
            f"{src}: {bad}",
            f"is {what} while {', '.join(given)} "
            "set a DSA indexer (DeepSeek-V3.2: index_n_heads 64, index_head_dim 128, index_topk 2048); "
            + (
                "without index_topk the indexer would be dropped, silently"
                if bad == "index_topk"
                else "an indexer without its heads or head size would be priced at no cost"
            ),
            "give all three of index_n_heads, index_head_dim and index_topk as positive integers "
            "(the checkpoint's config.json), or none of them for dense MLA",
        )
