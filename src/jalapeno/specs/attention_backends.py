"""Attention backends: the decode KV-read speed of one engine attention backend on one system.

A serving engine runs its attention through the backend its launch names (vLLM ``--attention-backend``
``ROCM_AITER_UNIFIED_ATTN``, ``TRITON_ATTN``, ...; lower case here), not one the model chooses. A
chip's efficiency set reads a GQA decode kernel's KV cache at its generic HBM fraction
(Efficiency.hbm_fraction; on AMD the derived, H200-fitted value, fit/amd.py), the speed of the
fastest measured kernels. ``data/attention_backends.toml`` holds, per backend and system, the
fraction of the HBM peak the backend's decode kernel reaches reading the KV cache where a timing
is published (each entry with its source and the arithmetic), and where measured the extra fixed
latency per decode call over the kernel the set was calibrated on (``decode_extra_s``); an entry may
hold for some KV-cache formats only (``kv_formats``). A pool whose recipe names the backend
(``Pool.attention_backend``, data/engines.toml; for aiconfigurator rows the backend their engine picks on
the chip, fit/aic_row_engine.ROW_ATTENTION_BACKENDS) has its GQA decode attention priced at it
(cost/pool_backends.with_attention_backend, cost/attention_backend.py). A backend with no entry on the
system and KV format keeps the set's value. docs/model.md §8.6.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

from jalapeno.errors import SpecError

#: backend names a recipe may give: vLLM's attention backends (``--attention-backend``, lower case)
ATTENTION_BACKENDS: tuple[str, ...] = (
    "rocm_aiter_unified_attn",
    "rocm_aiter_fa",
    "rocm_attn",
    "triton_attn",
    "flash_attn",
    "flashinfer",
)
_KEYS = {"backend", "systems", "decode_hbm_fraction", "decode_extra_s", "kv_formats", "source", "assumed"}


def check_attention_backend(value, field: str = "attention_backend") -> None:
    """Refuse an unknown backend name.

    >>> check_attention_backend("ROCM_AITER_UNIFIED_ATTN")
    Traceback (most recent call last):
    ...
    jalapeno.errors.SpecError: attention_backend: unknown attention backend 'ROCM_AITER_UNIFIED_ATTN'. Fix: use one of rocm_aiter_unified_attn, rocm_aiter_fa, rocm_attn, triton_attn, flash_attn, flashinfer (vLLM --attention-backend, lower case)

    Raises:
        SpecError: ``value`` is not None and not one of :data:`ATTENTION_BACKENDS`.
    """
    if value is not None and value not in ATTENTION_BACKENDS:
        raise SpecError(
            field,
            f"unknown attention backend {value!r}",
            f"use one of {', '.join(ATTENTION_BACKENDS)} (vLLM --attention-backend, lower case)",
        )


def parse_attention_backends(raw: dict, where: str = "attention_backends.toml") -> MappingProxyType:
    """(system, backend, KV format) → entry {decode_hbm_fraction, decode_extra_s, source, assumed} of a
    parsed TOML document; KV format "" for an entry that lists no ``kv_formats`` (it holds for any).

    Raises:
        SpecError: an unknown key or backend, a fraction outside (0, 1], a negative extra latency, no
            source, a (system, KV format) listed twice for one backend — naming the entry and the fix.
    """
    out = {}
    for i, e in enumerate(raw.get("entry", [])):
        w = f"{where}: entry[{i}]"
        if not isinstance(e, dict) or set(e) - _KEYS:
            raise SpecError(
                w,
                f"unknown keys {sorted(set(e) - _KEYS) if isinstance(e, dict) else e!r}",
                f"use {', '.join(sorted(_KEYS))}",
            )
        check_attention_backend(e.get("backend"), f"{w}.backend")
        f = e.get("decode_hbm_fraction")
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0.0 < f <= 1.0:
            raise SpecError(
                f"{w}.decode_hbm_fraction", f"{f!r}", "give the achieved fraction of the HBM peak, in (0, 1]"
            )
        x = e.get("decode_extra_s", 0.0)
        if isinstance(x, bool) or not isinstance(x, (int, float)) or x < 0.0:
            raise SpecError(
                f"{w}.decode_extra_s",
                f"{x!r}",
                "give the backend's extra fixed latency per decode attention call in seconds, >= 0",
            )
        if not str(e.get("source", "")).strip():
            raise SpecError(f"{w}.source", "no source", "cite the published timing and the arithmetic")
        for s in e.get("systems", ()):
            for kv in e.get("kv_formats", ("",)):
                if (s, e["backend"], kv) in out:
                    raise SpecError(
                        f"{w}.systems",
                        f"{s!r} has two entries for {e['backend']}" + (f" with KV {kv}" if kv else ""),
                        "keep one",
                    )
                out[(s, e["backend"], kv)] = MappingProxyType(
                    {
                        "decode_hbm_fraction": float(f),
                        "decode_extra_s": float(x),
                        "source": e["source"],
                        "assumed": e.get("assumed", ""),
                    }
                )
    return MappingProxyType(out)


@lru_cache(maxsize=1)
def _data() -> MappingProxyType:
    return parse_attention_backends(
        tomllib.loads((resources.files("jalapeno") / "data" / "attention_backends.toml").read_text())
    )


def attention_backend_entry(system: str, backend: str, kv_format: str | None = None) -> MappingProxyType | None:
    """The published decode speed of ``backend`` on ``system`` with a KV cache in ``kv_format``
    ({decode_hbm_fraction, decode_extra_s, source, assumed}): the entry for that KV format, else the one
    that lists none; None when neither is published (a ``kv_format`` of None matches only the latter).

    >>> attention_backend_entry("mi325x", "rocm_aiter_unified_attn")["decode_hbm_fraction"]
    0.555
    >>> attention_backend_entry("mi355x", "rocm_aiter_unified_attn") is None
    True
    >>> attention_backend_entry("h200", "flash_attn", "bf16") is None  # FA3's BF16 read: not an entry
    True

    Raises:
        SpecError: an unknown backend name.
    """
    check_attention_backend(backend)
    data = _data()
    return (data.get((system, backend, kv_format)) if kv_format else None) or data.get((system, backend, ""))
