"""Shared CLI helpers: JSON output and rich console, the shared model/precision/stack options. The output-path
checks (``check_writable``, ``check_html_out``, ...) are cli/out_paths.py (round 54, module budget), re-exported here."""

from __future__ import annotations

import json
import math
import re
import shutil
import sys
from typing import Any

import numpy as np
import typer
from rich.console import Console

from jalapeno.cli.out_paths import (  # noqa: F401  (re-exported: they lived here)
    ARGV,
    check_html_out,
    check_out_dir_not_shipped,
    check_table_out,
    check_writable,
)

#: Wide enough for the comparison tables when stdout is not a terminal (pipes, CI logs). Markup is
#: off: every string printed is literal, so a user's name, description or source holding square
#: brackets (``my-h200 [/bold]``) prints as written; styles are given as rich ``Text``/``style=``.
console = Console(width=shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 160, markup=False)


def _clean(o: Any) -> Any:
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, np.ndarray):
        return [_clean(v) for v in o.tolist()]
    if isinstance(o, (np.floating, float)):
        f = float(o)
        return None if math.isnan(f) or math.isinf(f) else f
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.bool_):
        return bool(o)
    return o


def print_json(obj: Any) -> None:
    """Print ``obj`` as JSON (NaN/inf become null) to stdout."""
    print(json.dumps(_clean(obj), indent=2))


def say_written(label: str, path, json_out: bool = False) -> None:
    """Say which file a command wrote: ``LABEL /abs/path`` (``tornado chart: /abs/t.html``, ``wrote /abs/s.html``) on stdout, or on stderr under ``--json`` (stdout
    stays one JSON document). Every command that writes a page says where (ux50: ``validate --html`` wrote
    its parity plot without a word; ``sensitivity --json --html`` and ``simulate --json --html`` too)."""
    from pathlib import Path

    line = f"{label} {Path(path).resolve()}"
    if json_out:
        print(line, file=sys.stderr)
    else:
        console.print(line, markup=False, soft_wrap=True)


#: ``--workload`` of the commands that take a fixed-length workload only (not agentic presets)
FIXED_WORKLOAD_HELP = "1k1k, 8k1k (default), 1k8k, or long-context 32k1k, 64k1k, 128k1k."


def list_items(text: str, option: str, example: str, numbers: bool = False) -> list[str]:
    """The items of a comma-separated option value, stripped; one trailing comma is allowed, and a
    value with no item at all (``''``, ``','``) gives [] for the option's own "none given" error.

    One rule for every list option (``--systems``, ``--concurrency``, ``--at``, ``--bytes``,
    ``--tiers``): ``4,,16`` was read as ``4,16`` (a typo that dropped a value ran without a word).
    ``numbers``: a list of numbers, where a later item with a leading zero (``1,024``, ``1,000,000``)
    is a thousands group, which no list of values is written with: refused (``-c 1,024`` ran
    concurrencies 1 and 24, ``--bytes 1,000,000`` priced 1, 0 and 0 bytes).

    >>> list_items(" h200, b200,", "--systems", "h200,b200")
    ['h200', 'b200']

    Raises:
        SpecError: an empty item between commas, naming the option and an example; a thousands group.
    """
    from jalapeno.errors import SpecError

    parts = [p.strip() for p in text.split(",")]
    if any(parts) and not all(parts[:-1]):  # nothing at all (',') is left to the option's "none given" error
        raise SpecError(
            option, f"{text!r} has an empty item between commas", f"write one value per item, e.g. {option} {example}"
        )
    if numbers and re.fullmatch(r"\d{1,3}(,\d{3})*,0\d\d(,\d{3})*", text.strip()):
        raise SpecError(
            option,
            f"{text!r} reads as the list {', '.join(p.lstrip('0') or '0' for p in parts)}: its commas separate values",
            f"write {option} {text.strip().replace(',', '')} (no thousands separators)",
        )
    if numbers and _power_of_two_grouped(parts):  # '8,192' / '16,384' run two values: say the other reading
        Console(stderr=True).print(
            f"note: {option} {text.strip()} runs the values {', '.join(p for p in parts if p)}; for "
            f"{int(''.join(parts))} write {option} {''.join(parts)} (no thousands separators)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    return [p for p in parts if p]


def _power_of_two_grouped(parts: list[str]) -> bool:
    """True where the items read as one power of two >= 1,024 written with thousands separators
    (``8,192``, ``16,384``, ``65,536``): the sizes concurrencies and token counts are written in, so
    the list is likely one number. A leading-zero group (``1,024``) is refused before this.

    >>> _power_of_two_grouped(["16", "384"]), _power_of_two_grouped(["64", "128"])
    (True, False)
    """
    if len(parts) < 2 or not parts[0].isdigit() or not all(len(p) == 3 and p.isdigit() for p in parts[1:]):
        return False
    n = int("".join(parts))
    return n >= 1024 and n & (n - 1) == 0


def fmt_si(x: float, unit: str = "") -> str:
    """Format a number with an SI prefix: 1.23e9 → '1.23 G'."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    for p, s in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= p:
            return f"{x / p:.3g} {s}{unit}"
    return f"{x:.3g} {unit}".strip()


# ---- workload and pricing options shared by the commands (one declaration: the help cannot drift) ---------


def model_option():
    """``--model`` / ``-m``: a catalog model name or a config.json path (default deepseek-r1)."""
    return typer.Option("deepseek-r1", "--model", "-m", help="Model name or config.json path.")


def isl_option():
    """``--isl``: input (prompt) length, tokens; with ``--osl``, instead of ``--workload``."""
    return typer.Option(None, "--isl", help="Input length (with --osl; instead of --workload).")


def osl_option():
    """``--osl``: output length, tokens."""
    return typer.Option(None, "--osl", help="Output length.")


def precision_option():
    """``--precision`` / ``-p``: a precision preset (specs/formats.py); default the model's release precision."""
    return typer.Option(None, "--precision", "-p", help="Precision preset (default: the model's release).")


def mtp_option():
    """``--mtp``: MTP draft tokens per step (count; off by default)."""
    return typer.Option(None, "--mtp", help="MTP draft tokens (off by default).")


def mtp_acceptance_option():
    """``--mtp-acceptance``: the per-token draft acceptance rate, in [0, 1) (deploy/mtp.MTP; with ``--mtp``)."""
    return typer.Option(None, "--mtp-acceptance", help="Per-token acceptance rate (with --mtp).")


#: ``--efficiency``'s help, one text on every command: a set name, or the folder / file ``calibrate --out-dir`` writes
#: (specs/calibration._calibration_path). The help said "calibrated, low, high or spec." while the README's own
#: example runs ``validate --efficiency my-calibration`` (newuser51).
EFFICIENCY_HELP = (
    "Efficiency set: calibrated (default), low, high or spec, or a folder written by `jalapeno calibrate "
    "--out-dir DIR` (its <system>.toml) or one calibration .toml file."
)


def efficiency_option():
    """``--efficiency``: the efficiency set that prices the system: calibrated (default), low, high, spec, or a
    calibration folder / file (:data:`EFFICIENCY_HELP`)."""
    return typer.Option("calibrated", "--efficiency", help=EFFICIENCY_HELP)


# ---- precision options shared by every command that takes a precision ---------------------------


def kv_dtype_option():
    """``--kv-dtype``: the KV-cache storage format, independent of the weights (specs/kv_cache.py)."""
    return typer.Option(
        None,
        "--kv-dtype",
        help="KV-cache dtype: bf16, fp8 (e4m3, per-tensor scale), fp8_e5m2, fp8_ds_mla "
        "(MLA, FlashMLA 656 B layout) or nvfp4 (default: the precision's).",
    )


def attention_dtype_option():
    """``--attention-dtype``: the compute format of the attention math (bf16 or fp8)."""
    return typer.Option(
        None, "--attention-dtype", help="Attention math format: bf16 or fp8 (FP8 MLA/FMHA; default: the precision's)."
    )


def compute_fallback_option():
    """``--compute-fallback``: allow the documented fallback where a chip lacks a compute format."""
    return typer.Option(
        False,
        "--compute-fallback",
        help="Where a chip lacks a format the precision computes in (FP4 on Hopper), run "
        "it dequantised at the next wider one instead of refusing.",
    )


def resolve_precision(
    model,
    precision: str | None,
    kv_dtype: str | None = None,
    attention_dtype: str | None = None,
    compute_fallback: bool = False,
):
    """The precision a command runs: the preset (default: the model's release) with the overrides.

    Raises:
        UnknownNameError: unknown preset, KV dtype or attention format.
        SpecError: ``--kv-dtype`` / ``--attention-dtype`` contradicting a ``kv=`` / ``attn=`` that ``precision``
            itself gives ('-p fp8,kv=bf16 --kv-dtype fp8' ran the option's, silently: break51).
    """
    from jalapeno.specs.formats import get_precision

    p = get_precision(precision or model.default_precision)
    if precision:
        _refuse_contradicting_override(precision, p, kv_dtype, attention_dtype)
    return p.with_options(kv_dtype, attention_dtype, compute_fallback)


def _refuse_contradicting_override(precision: str, p, kv_dtype: str | None, attention_dtype: str | None) -> None:
    """Refuse ``--kv-dtype`` / ``--attention-dtype`` naming another format than the ``kv=`` / ``attn=`` of ``-p``
    (``p``, already read from it): one of the two would be dropped. The same format twice is no contradiction.

    Raises:
        SpecError: naming the option, both values and the fix.
    """
    from jalapeno.errors import SpecError
    from jalapeno.specs.kv_cache import get_kv_format

    given = dict(o.strip().partition("=")[::2] for o in str(precision).split(",")[1:])
    for key, option, value, same in (
        ("kv", "--kv-dtype", kv_dtype, lambda v: get_kv_format(v) == p.kv_cache),
        ("attn", "--attention-dtype", attention_dtype, lambda v: str(v).lower() == p.attention_compute),
    ):
        if value is not None and given.get(key) and not same(value):
            raise SpecError(
                option,
                f"{value} contradicts {key}={given[key]} in --precision {precision!r}: one of the two would be dropped",
                f"give it once: drop {option}, or drop {key}= from --precision",
            )


def stack_option(engine: bool = True):
    """``--stack``: the software-stack profile (fixed costs of the serving engine, specs/stacks.py);
    ``engine``: whether the command also takes ``--engine`` (its help names the recipe's default
    only where there is one: ``collective --help`` named an option it does not have)."""
    return typer.Option(
        None,
        "--stack",
        callback=note_stack_version,
        help="Software stack: default, kernel (every fixed cost zero), sglang, trtllm, "
        "dynamo-trtllm, vllm, sglang-rocm, vllm-rocm, atom-rocm, compiled, jalapeno "
        f"(data/stacks.toml; default: the system's own{', with --engine the recipe engine' + chr(39) + 's' if engine else ''}); "
        "NAME@VERSION pins an engine release of a profile with version rules, e.g. "
        "trtllm@1.1.0rc2.post2.",
    )


#: Version-rule fields whose cost a shipped-off switch gates: field -> (module, switch). A rule on such a field holds
#: at its release but the model charges nothing while the switch is off, so `--stack` notes and `predict --engine`
#: say so (round 43: predict listed trt8k43's 1.1.0rc2 prompt-step rule as a cost the model did not charge), as do
#: `--set efficiency.FIELD` and a system file's `[efficiency]` (cli/system_notes.switched_off_note; round 44).
#: ``disagg_prebuilt`` (the sglang and sglang-rocm profiles' rule ``skip`` before 0.5.10rc0, round 48) is priced only
#: with serve/prebuilt_skip.PREBUILT_SKIP_ON (serve/disagg._prebuilt_token_time): ``predict --engine`` on an SGLang
#: recipe listed it as a cost with the switch off (review48b).
SWITCHED_RULE_FIELDS: dict[str, tuple[str, str]] = {
    "prompt_step_s_per_token": ("jalapeno.cost.step", "PROMPT_TOKEN_STEP_ON"),
    "disagg_prebuilt": ("jalapeno.serve.prebuilt_skip", "PREBUILT_SKIP_ON"),
}


def switched_off_fields() -> frozenset[str]:
    """The :data:`SWITCHED_RULE_FIELDS` whose switch is off now (read at call time, not copied)."""
    import importlib

    return frozenset(
        f
        for f, (module, switch) in SWITCHED_RULE_FIELDS.items()
        if not getattr(importlib.import_module(module), switch)
    )


#: Version-rule fields that change a price only where the profile's all-reduce + RMSNorm fusion is on: field ->
#: (module, switch) of the fusion. The ``sglang`` profile's ``allreduce_rms_rule`` before 0.5.7 (round 48, sglrel48) is
#: charged with specs/stacks.SGLANG_AR_RMS_ON (shipped off) or ``--stack sglang@VERSION+ar_rms``; not a
#: :data:`SWITCHED_RULE_FIELDS` entry, since ``--set efficiency.allreduce_rms_rule`` with the fusion set is charged.
FUSION_RULE_FIELDS: dict[str, tuple[str, str]] = {"allreduce_rms_rule": ("jalapeno.specs.stacks", "SGLANG_AR_RMS_ON")}


def uncharged_rule_fields(stack) -> frozenset[str]:
    """The version-rule fields a profile ``stack`` (a resolved specs/stack_profile.Stack, or None) does not charge:
    :func:`switched_off_fields`, and :data:`FUSION_RULE_FIELDS` unless its all-reduce + RMSNorm fusion is on."""
    off = switched_off_fields()
    return off if stack is not None and stack.allreduce_rms_fusion is True else off | frozenset(FUSION_RULE_FIELDS)


def note_stack_version(value: str | None, ctx: typer.Context = None) -> str | None:
    """Callback of ``--stack``: for ``NAME@VERSION`` say on stderr which of the profile's version
    rules that release takes (or that none does), and when the release lies outside every one the
    rules name (``trtllm@0.0.1`` was priced by the rule ``< 1.2.0rc3`` without a word). A name or
    version the command will refuse prints nothing here: the command names the error."""
    if value and "@" in value:
        from jalapeno.errors import JalapenoError
        from jalapeno.specs.stacks import get_stack, split_stack_name, stacks

        base, version, _ = split_stack_name(value)  # 'trtllm@1.1.0+ar_rms' read '1.1.0+ar_rms' as the release: no note
        try:
            note = stacks()[base].version_note(version, uncharged_rule_fields(get_stack(value)))
        except (KeyError, JalapenoError):
            return value
        if note:
            defer_note(f"note: --stack {note}", ctx)
    return value


#: click's ``ctx.meta`` key of the notes an option's callback holds until the command line has parsed
_PENDING_NOTES = "jalapeno.pending_notes"


def defer_note(line: str, ctx=None) -> None:
    """Print ``line`` on stderr once the command line has parsed (:func:`print_deferred_notes`, called by
    cli/app's commands before they run), not from inside click's parsing: ``predict --stack sglang@0.5.9``
    printed its version note and then "Missing option '--system'" (followup51). ``ctx``: the command's context
    (typer passes it to a callback that takes a ``typer.Context``); None (a direct call) prints at once."""
    if ctx is None:
        Console(stderr=True).print(line, markup=False, highlight=False, soft_wrap=True)
    else:
        ctx.meta.setdefault(_PENDING_NOTES, []).append(line)


def print_deferred_notes(ctx) -> None:
    """Print (and drop) the notes :func:`defer_note` held in ``ctx`` (a click context)."""
    for line in ctx.meta.pop(_PENDING_NOTES, []):
        Console(stderr=True).print(line, markup=False, highlight=False, soft_wrap=True)


def stack_label(stack: str | None) -> str:
    """`` · stack NAME[@VERSION][+ar_rms]`` for titles when ``--stack`` was given (spaces around each part
    dropped, specs/stacks.split_stack_name), else ""."""
    if not stack:
        return ""
    from jalapeno.specs.stacks import split_stack_name

    base, version, fused = split_stack_name(stack)
    return f" · stack {base}{'@' + version if '@' in stack else ''}{'+ar_rms' if fused else ''}"


#: ``--overlap`` of the commands that run one deployment (predict, simulate)
OVERLAP_HELP = "none or tbo (two-batch overlap of the MoE all-to-all; pools with DP attention + EP)."


def in_option_words(reason: str, load: str) -> str:
    """A library reason in the command's own option names: ``max_running`` → ``--max-running``,
    ``the memory fraction`` → ``--memory-fraction``, ``the concurrency`` → ``load`` (``--batch``
    on ``step``, which has no ``--concurrency``)."""
    for lib, opt in (
        ("max_running / max_tokens_per_step", "--max-running / --max-tokens-per-step"),
        ("max_running", "--max-running"),
        ("max_tokens_per_step", "--max-tokens-per-step"),
        ("raise the memory fraction", "raise --memory-fraction"),
        ("lower the concurrency", f"lower {load}"),
    ):
        reason = reason.replace(lib, opt)
    return reason
