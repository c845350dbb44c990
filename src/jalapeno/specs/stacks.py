"""The shipped software-stack profiles (``data/stacks.toml``; a profile is specs/stack_profile.Stack).

Each ``[[stack]]`` table is read and validated (unknown keys, values out of range, an unknown
``base``, malformed version rules or client entries: one error naming the key); a derived profile
(``base``) inherits its base's values; the fitted values of ``data/stack_fits.toml``
(scripts/fit_stacks.py) replace the stated ones (:func:`load_stacks`). Lookups: by name, pinned at an
engine release (``NAME@VERSION``) and with vLLM's all-reduce + RMSNorm fusion (``+ar_rms``)
(:func:`get_stack`); by a measured point's framework (:func:`stack_for_framework`); a system's default
(:func:`default_stack`); the profile named in an efficiency set's source (:func:`stack_of_source`).
"""

from __future__ import annotations

import difflib

import math
import re
import tomllib
from dataclasses import fields
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

from jalapeno.errors import SpecError, UnknownNameError, choice_hint
from jalapeno.specs.efficiency import (
    ALL_REDUCE_TABLE_NAMES,
    ALLREDUCE_RMS_RULE_NAMES,
    DISAGG_HANDSHAKE_NAMES,
    DISAGG_PREBUILT_NAMES,
    DISAGG_ROUTER_NAMES,
    MOE_EXCHANGE_NAMES,
    SWITCHES,
)
from jalapeno.specs.engine_versions import DEPLOYMENT_RELEASE_RULES, VersionRule, parse_version_rules, version_key
from jalapeno.specs.stack_profile import (  # noqa: F401  (the profile re-exported: it lived here)
    BAND_FIELDS,
    BURST_FIELDS,
    COST_FIELDS,
    DEFAULT_STACK,
    Stack,
)

_KEYS = {
    "name",
    "label",
    "engines",
    "base",
    "source",
    "overlap",
    "moe_exchange",
    "all_reduce_table",
    "logits_bytes_per_elem",
    "gemm_allreduce_fusion",
    "allreduce_rms_fusion",
    "allreduce_rms_rule",
    "moe_width_term",
    "disagg_handshake",
    "disagg_router",
    "disagg_prebuilt",
    "tp_rank_step_dp",
    "kv_handoff_fanout",
    "fused_a_prefetch",
    "admission_lag_steps",
    "admission_lag_with_mtp",
    "mtp_acceptance",
    "low",
    "high",
    "sources",
    "fit",
    "default_for",
    "clients",
    "version_rules",
    *BAND_FIELDS,
}
#: The front-end fields a benchmark client's entry may set (``clients``): what a request spends
#: outside the accelerator before its first token depends on the engine's server and on the
#: client that times it (HTTP stack, tokenisation, streaming parser); so does how its requests
#: bunch on a disaggregated prefill pool or an aggregated instance (``prefill_burst_fraction``,
#: ``agg_burst_fraction``, Efficiency).
CLIENT_FIELDS: tuple[str, ...] = ("request_overhead_s", "prompt_overhead_s_per_token", *BURST_FIELDS)
#: Profile fields a version rule may set: the text behaviours and the banded numbers.
RULE_FIELDS: tuple[str, ...] = ("moe_exchange", "overlap", "disagg_prebuilt", "allreduce_rms_rule", *BAND_FIELDS)
_RULE_TEXT = {
    "moe_exchange": MOE_EXCHANGE_NAMES,
    "overlap": ("none", "tbo"),
    "disagg_prebuilt": DISAGG_PREBUILT_NAMES,
    "allreduce_rms_rule": ALLREDUCE_RMS_RULE_NAMES,
}
#: Profile fields that name one of a fixed set: (key, the names, what the message calls a bad value).
_NAMED_FIELDS = (
    ("moe_exchange", MOE_EXCHANGE_NAMES, ""),
    ("disagg_handshake", DISAGG_HANDSHAKE_NAMES, ""),
    ("disagg_router", DISAGG_ROUTER_NAMES, ""),
    ("disagg_prebuilt", DISAGG_PREBUILT_NAMES, ""),
    ("all_reduce_table", ALL_REDUCE_TABLE_NAMES, "unknown engine "),
    ("allreduce_rms_rule", ALLREDUCE_RMS_RULE_NAMES, "unknown rule "),
)


def _rule_value(f: str, v, key: str):
    if f in _RULE_TEXT and v not in _RULE_TEXT[f]:
        raise SpecError(key, f"{v!r} is not a {f}", "use " + ", ".join(_RULE_TEXT[f]))
    return v if f in _RULE_TEXT else _number(v, key)


def _version_rules(raw, where: str) -> tuple[VersionRule, ...]:
    """A profile's ``version_rules`` (specs/engine_versions.parse_version_rules with this module's fields)."""
    return parse_version_rules(raw, where, RULE_FIELDS, _rule_value)


def _number(v, key: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)) or v < 0:
        raise SpecError(key, f"must be a finite number >= 0, got {v!r}", "give seconds (4e-6 is 4 µs)")
    return float(v)


def _stack(raw: dict, i: int, known: dict[str, Stack]) -> Stack:
    where = f"data/stacks.toml stack {raw.get('name', i)}"
    unknown = set(raw) - _KEYS
    if unknown:
        raise SpecError(where, f"unknown keys {sorted(unknown)}", "use the keys listed at the top of data/stacks.toml")
    for k in ("name", "label", "source"):
        if not str(raw.get(k, "")).strip():
            raise SpecError(f"{where}.{k}", "missing", f"every stack needs {k}")
    base = raw.get("base", "")
    if base and base not in known:
        raise SpecError(f"{where}.base", f"{base!r} is not an earlier stack", "name a stack defined above this one")
    kw = {f.name: getattr(known[base], f.name) for f in fields(Stack)} if base else {}
    kw.update(
        name=raw["name"],
        label=raw["label"],
        source=raw["source"],
        base=base,
        engines=tuple(raw.get("engines", ())),
        default_for=tuple(raw.get("default_for", ())),
    )
    for f in BAND_FIELDS:
        if f in raw:
            kw[f] = _number(raw[f], f"{where}.{f}")
    if raw.get("overlap") not in (None, "none", "tbo"):
        raise SpecError(f"{where}.overlap", f"{raw['overlap']!r}", "use none or tbo")
    if "overlap" in raw:
        kw["overlap"] = raw["overlap"]
    for key, names, what in _NAMED_FIELDS:  # the fields that name one of a fixed set
        if key in raw:
            if raw[key] not in names:
                raise SpecError(f"{where}.{key}", f"{what}{raw[key]!r}", f"use one of {', '.join(names)}")
            kw[key] = raw[key]
    if "logits_bytes_per_elem" in raw:
        b = _number(raw["logits_bytes_per_elem"], f"{where}.logits_bytes_per_elem")
        if b not in (1.0, 2.0, 4.0):
            raise SpecError(
                f"{where}.logits_bytes_per_elem",
                f"{b:g} is not a logit element size",
                "give 1 (FP8 logits), 2 (BF16/FP16, cast to FP32 after the gather) or 4 (FP32)",
            )
        kw["logits_bytes_per_elem"] = b
    if "admission_lag_steps" in raw:  # whole steps of the loop's admission lag (serve/overlap_loop.admission_lag_s)
        lag = raw["admission_lag_steps"]
        if isinstance(lag, bool) or lag not in (0, 1, 2):
            raise SpecError(
                f"{where}.admission_lag_steps",
                f"must be a whole number of steps 0-2, got {lag!r}",
                "write 1 for an overlap loop (it launches the next batch before it reads the last "
                "result), 0 for a loop that launches what it reads",
            )
        kw["admission_lag_steps"] = float(lag)
    for k in (k for k in SWITCHES if k in raw):  # the engine switches (booleans)
        if not isinstance(raw[k], bool):
            raise SpecError(
                f"{where}.{k}", f"must be true or false, got {raw[k]!r}", f"write {k} = true ({SWITCHES[k]}) or false"
            )
        kw[k] = raw[k]
    for band in ("low", "high"):
        b = dict(kw.get(band, {})) if base else {}
        for f, v in raw.get(band, {}).items():
            if f not in BAND_FIELDS:
                raise SpecError(f"{where}.{band}.{f}", "not a banded field", f"use {', '.join(BAND_FIELDS)}")
            b[f] = _number(v, f"{where}.{band}.{f}")
        kw[band] = MappingProxyType(b)
    acc = dict(kw.get("mtp_acceptance", {})) if base else {}
    for model, a in raw.get("mtp_acceptance", {}).items():
        if set(a) - {"single", "chain"} or not all(0 <= v < 1 for v in a.values()):
            raise SpecError(f"{where}.mtp_acceptance.{model}", f"{a!r}", "give {single = 0.x, chain = 0.x} in [0, 1)")
        acc[model] = MappingProxyType(dict(a))
    kw["mtp_acceptance"] = MappingProxyType(acc)
    kw["sources"] = MappingProxyType({**(dict(kw.get("sources", {})) if base else {}), **raw.get("sources", {})})
    kw["fit"] = MappingProxyType(dict(raw.get("fit", {})))
    if "version_rules" in raw:
        kw["version_rules"] = _version_rules(raw["version_rules"], where)
    clients = {}
    for client, front in raw.get("clients", {}).items():
        if not isinstance(front, dict) or set(front) - set(CLIENT_FIELDS):
            raise SpecError(
                f"{where}.clients.{client}",
                f"{front!r}",
                f"give a table of {', '.join(CLIENT_FIELDS)} (s; s per prompt token; a share in (0, 1])",
            )
        vals = {f: _number(v, f"{where}.clients.{client}.{f}") for f, v in front.items()}
        for f in BURST_FIELDS:
            if not 0 < vals.get(f, 1.0) <= 1:
                raise SpecError(
                    f"{where}.clients.{client}.{f}",
                    f"must be in (0, 1], got {vals[f]}",
                    "give the share of counted requests that meet a prefill burst (0.1 = one wave in 10)",
                )
        clients[client] = MappingProxyType(vals)
    kw["clients"] = MappingProxyType({**(dict(kw.get("clients", {})) if base else {}), **clients})
    if not 0 < kw.get("fusion", 1.0) <= 1:
        raise SpecError(
            f"{where}.fusion", f"must be in (0, 1], got {kw['fusion']}", "give the share of kernels launched"
        )
    return Stack(**kw)


def stacks() -> MappingProxyType:
    """Every shipped profile by name (``data/stacks.toml``, fitted values from ``data/stack_fits.toml``).

    Raises:
        SpecError: a malformed profile (unknown key, bad value, unknown base).
    """
    return load_stacks(True)


@lru_cache(maxsize=2)
def load_stacks(with_fits: bool = True) -> MappingProxyType:
    """The profiles of ``data/stacks.toml``; with ``with_fits`` the fitted values of
    ``data/stack_fits.toml`` replace the stated ones. Without: the stated values (what
    fit/stack_fit.py starts from).

    Raises:
        SpecError: a malformed profile.
    """
    data = resources.files("jalapeno").joinpath("data")
    fits = {}
    if with_fits and data.joinpath(FITS_FILE).is_file():
        with data.joinpath(FITS_FILE).open("rb") as f:
            fits = tomllib.load(f).get("fits", {})
    return build_stacks(fits)


def build_stacks(fits: dict) -> MappingProxyType:
    """The profiles of ``data/stacks.toml`` with ``fits`` ({name: {"values": ..., "mtp_acceptance":
    ..., "report": ...}}, the form of data/stack_fits.toml) in place; a derived profile (``base``)
    inherits its base's fitted values.

    Raises:
        SpecError: a malformed profile.
    """
    with resources.files("jalapeno").joinpath("data", "stacks.toml").open("rb") as f:
        raw = tomllib.load(f)
    out: dict[str, Stack] = {}
    for i, r in enumerate(raw.get("stack", [])):
        if not _engine_ar_rms_on(r):  # shipped off: the profile's own fusion setting is not read
            r = {k: v for k, v in r.items() if k != "allreduce_rms_fusion"}
        s = _stack(_with_fit(r, fits.get(r.get("name", ""))), i, out)
        out[s.name] = s
    return MappingProxyType(out)


#: Fitted values and their report (scripts/fit_stacks.py writes it; fit/stack_fit.py fits them).
FITS_FILE = "stack_fits.toml"

#: TensorRT-LLM's default all-reduce + residual add + RMSNorm fusion at attention TP (the ``trtllm`` / ``dynamo-trtllm``
#: profiles' ``allreduce_rms_fusion = true``; its source, TensorRT-LLM's decoder classes, in data/stacks.toml). Shipped
#: off (round 46, arfusion46, docs/gap_aic_itl.md): with the stack refit it needs (trtllm tp_rank_step_s 75 -> 112.5 us,
#: step_overhead_s 325 -> 350 us, kernel_launch_s 2.6 -> 2.8 us) the held-out aiconfigurator TPOT median goes 5.8 -> 5.9%,
#: GB300's TPOT bias +5.0 -> +6.2% and InferenceX TPOT 5.8 -> 6.0%. False drops a profile's ``allreduce_rms_fusion`` as
#: the profiles are read (a launch script's per-row ``+ar_rms`` still applies); True needs scripts/fit_stacks.py rerun
#: (load_stacks is cached: clear it after flipping this at run time).
ENGINE_AR_RMS_ON = False

#: SGLang's default FlashInfer all-reduce + residual add + RMSNorm fusion (the ``sglang`` profile's
#: ``allreduce_rms_fusion = true`` with ``allreduce_rms_rule = "sglang"``: sgl-project/sglang PR #14764, its sources in
#: data/stacks.toml; cost/allreduce_rms.py; by release since round 48: the profile's version rule keeps it to SM100-family
#: chips, DeepSeek-V3 and gpt-oss before 0.5.7). Shipped off (round 47, sglbatch47; round 48, sglrel48: both H200
#: InferenceX releases, 0.5.7 and 0.5.12, run it, so the fit needs the refit, which brings the H200 / GB300 misses back;
#: docs/gap_aic_itl.md): held-out figures there. False drops that profile's ``allreduce_rms_fusion`` as the profiles are read (``--stack sglang+ar_rms``
#: still prices it, with SGLang's rule); True needs scripts/fit_stacks.py rerun (clear load_stacks's cache after
#: flipping this at run time).
SGLANG_AR_RMS_ON = False


def _engine_ar_rms_on(raw: dict) -> bool:
    """Whether a raw profile's own ``allreduce_rms_fusion`` is read: :data:`SGLANG_AR_RMS_ON` for a profile on
    SGLang's rule, :data:`ENGINE_AR_RMS_ON` for the others."""
    return SGLANG_AR_RMS_ON if raw.get("allreduce_rms_rule") == "sglang" else ENGINE_AR_RMS_ON


def _with_fit(raw: dict, fit: dict | None) -> dict:
    """A profile's raw table with its fitted values (``data/stack_fits.toml``) in place."""
    if not fit:
        return raw
    r = dict(raw)
    vals = fit.get("values", {})
    r.update(vals)
    srcs = dict(r.get("sources", {}))
    split = fit.get("report", {}).get("split", "see data/stack_fits.toml")
    srcs.update({k: f"fitted: {split}" for k in vals})
    if fit.get("clients"):
        r["clients"] = {**r.get("clients", {}), **fit["clients"]}
        srcs.update({f"clients.{c}": f"fitted: {split}" for c in fit["clients"]})
    if fit.get("mtp_acceptance"):
        r["mtp_acceptance"] = {**r.get("mtp_acceptance", {}), **fit["mtp_acceptance"]}
        srcs["mtp_acceptance"] = f"fitted: {split}"
    for band in ("low", "high"):
        if fit.get(band):
            r[band] = {**r.get(band, {}), **fit[band]}
    r["sources"] = srcs
    r["fit"] = fit.get("report", {})
    return r


def split_stack_name(name: str) -> tuple[str, str, bool]:
    """``NAME[@VERSION][+ar_rms]`` as (profile name, version, whether ``+ar_rms`` is set), spaces around each part
    dropped ('trtllm@ 1.1.0' was named 'trtllm@ 1.1.0' in titles); version "" where none is given. No check: that
    is :func:`get_stack`'s.

    >>> split_stack_name(" vllm @ 0.18.0+ar_rms"), split_stack_name("sglang")
    (('vllm', '0.18.0', True), ('sglang', '', False))
    """
    name = name.strip()
    base, _, version = name.removesuffix("+ar_rms").partition("@")
    return base.strip(), version.strip(), name.endswith("+ar_rms")


def get_stack(name: str) -> Stack:
    """A profile by name; ``NAME@VERSION`` pins it at an engine version (:meth:`Stack.at_version`); a trailing
    ``+ar_rms`` switches vLLM's all-reduce + RMSNorm fusion on (:meth:`Stack.with_allreduce_rms_fusion`). A profile
    whose release a deployment rule reads (specs/engine_versions.DEPLOYMENT_RELEASE_RULES: ``vllm@0.16.0``) takes a
    version too; the profile is returned as is and the commands read the release from the name
    (deploy/vllm_fp8_moe.stack_release).

    Raises:
        UnknownNameError: no such profile (the message lists them). SpecError: a version that is
            not a release number, or a version on a profile without version rules (it would be
            silently dropped; the message names the profiles that take one).
    """
    _check_suffix_order(name)
    base, version, fused = split_stack_name(name)
    name = name.strip().removesuffix("+ar_rms")
    s = stacks().get(base)
    if s is None:
        raise UnknownNameError(
            "--stack",
            f"unknown software stack {base!r}{choice_hint(base, stacks())}",
            f"use one of {', '.join(stacks())} (data/stacks.toml), optionally NAME@VERSION and +ar_rms",
        )
    if "@" in name:
        version_key(version, "--stack")
        if not s.version_rules and base not in DEPLOYMENT_RELEASE_RULES:  # the version would be dropped: nothing
            takes = ", ".join(
                n
                for n, p in stacks().items()  # in this profile depends on it
                if p.version_rules or n in DEPLOYMENT_RELEASE_RULES
            )
            raise SpecError(
                "--stack",
                f"profile {base!r} has no version rules, so {name!r} would price exactly as {base!r}",
                f"drop '@{version}', or pin a profile that takes versions: {takes}",
            )
    s = s.at_version(version)
    return s.with_allreduce_rms_fusion(True) if fused else s


def _check_suffix_order(name: str) -> None:
    """Refuse ``+ar_rms`` written before the version or in another case: ``sglang+ar_rms@0.5.6`` was called an
    unknown stack 'sglang+ar_rms' (did you mean 'sglang'?), and ``vllm@0.18.0+AR_RMS`` a release number that is
    not one (break48); the fix writes the spelling :func:`split_stack_name` reads.

    >>> _check_suffix_order("vllm@0.18.0+ar_rms")

    Raises:
        SpecError: naming ``--stack`` and the spelling meant.
    """
    text = name.strip()
    low = text.lower()
    if "+ar_rms@" in low:
        base, _, version = low.partition("+ar_rms@")
        meant = f"{text[: len(base)]}@{text[len(base) + 8 :]}+ar_rms"
        raise SpecError(
            "--stack", f"{text!r} puts +ar_rms before the version", f"write --stack {meant} (NAME@VERSION+ar_rms)"
        )
    if low.endswith("+ar_rms") and not text.endswith("+ar_rms"):
        raise SpecError(
            "--stack", f"{text!r}: the modifier is written in lower case", f"write --stack {text[:-7]}+ar_rms"
        )
    if low.count("+ar_rms") > 1:  # was "unknown software stack 'vllm+ar_rms'" (break55)
        raise SpecError(
            "--stack", f"{text!r} gives +ar_rms twice", f"write it once: --stack {text.split('+')[0]}+ar_rms"
        )
    if text.startswith(("@", "+")):  # was "unknown software stack ''"
        raise SpecError(
            "--stack",
            f"{text!r} names no profile before its {text[0]}",
            f"write the profile first, e.g. --stack vllm{text} (profiles: data/stacks.toml)",
        )
    head = text.partition("@")[0]  # a version may carry its own + (0.18.0+cu128): the release check names it
    mod = head.partition("+")[2]
    if (
        mod and mod.lower() != "ar_rms"
    ):  # sglang+ar_rm was "unknown software stack 'sglang+ar_rm' (did you mean sglang?)"
        near = " (did you mean +ar_rms?)" if difflib.get_close_matches(mod.lower(), ["ar_rms"], n=1) else ""
        raise SpecError(
            "--stack",
            f"'+{mod}' is not a modifier{near}: +ar_rms (vLLM's all-reduce + RMSNorm fusion) is the one",
            f"write --stack {head.partition('+')[0]}+ar_rms, or drop '+{mod}'",
        )


def stack_for_framework(framework: str, system: str = "", field: str = "framework") -> Stack:
    """The profile that prices a measured point run with ``framework`` on ``system``.

    ROCm systems (``mi*``) take a ``-rocm`` profile when one lists the framework; unknown
    frameworks take :data:`DEFAULT_STACK`. An engine that only ``-rocm`` profiles list (AMD's ATOM, SGLang
    with MoRI: ``atom``, ``mori-sglang``, ``sglang-disagg``) is refused on any other system (it took the
    default profile there without a word: review33).

    >>> stack_for_framework("trt").name, stack_for_framework("sglang", "mi325x").name
    ('trtllm', 'sglang-rocm')

    Raises:
        SpecError: ``field`` (``framework`` of a measured point, ``engine`` of a recipe) names a ROCm-only
            engine on a system whose name does not start with ``mi``.
    """
    fw = framework.strip().split(" ")[0].lower()
    rocm = system.startswith("mi")
    for s in stacks().values():
        if fw in s.engines and (s.name.endswith("-rocm") == rocm or not _has_rocm_variant(fw)):
            return s
    if not rocm and _has_rocm_variant(fw):  # only -rocm profiles list it (an NVIDIA profile would have matched)
        names = ", ".join(s.name for s in stacks().values() if fw in s.engines)
        raise SpecError(
            field,
            f"engine {fw!r} runs on AMD ROCm systems only (profile {names}), not on "
            f"{system or 'an unnamed system'} (a ROCm system's name starts with 'mi')",
            "run it on mi300x, mi325x or mi355x, or name the engine the run used on this system "
            "(SGLang: sglang, or dynamo-sglang when disaggregated)",
        )
    return stacks()[DEFAULT_STACK]


def _has_rocm_variant(fw: str) -> bool:
    return any(fw in s.engines and s.name.endswith("-rocm") for s in stacks().values())


def default_stack(system: str) -> Stack:
    """The profile a system runs with when no ``--stack`` is given (``default_for``, else default)."""
    return next((s for s in stacks().values() if system in s.default_for), stacks()[DEFAULT_STACK])


def stack_of_source(source: str, system: str) -> Stack:
    """The profile an efficiency set was priced with, read from its ``source`` (``... + stack NAME``,
    as :meth:`Stack.apply` writes it), else the system's default profile."""
    m = re.search(r" \+ stack (\S+)", source)
    return get_stack(m.group(1)) if m else default_stack(system)
