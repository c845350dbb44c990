"""Click's usage errors in the project's words: an option value typer could not convert, an extra argument (a
word after an on/off flag), an unknown option that names a system field. Each returns the one line
cli/app.main prints after ``error:`` (``<option>: <problem>. Fix: <fix>``), or None for another error, which
main then prints in click's words with the command's help as the fix.

Split from cli/app.py in round 49 (module line budget); ``cmd`` is the click command the command words of the
line name (cli/app._command).
"""

from __future__ import annotations

import re
from contextlib import contextmanager

from jalapeno.errors import SpecError, UnknownNameError


def flags(cmd) -> set[str]:
    """The spellings of the command's on/off options (``--json``), which take no value."""
    return {
        o
        for p in getattr(cmd, "params", ())
        if getattr(p, "param_type_name", "") == "option" and getattr(p, "is_flag", False)
        for o in (*p.opts, *p.secondary_opts)
    }


# Valid values to show in the fix for a number option whose generic examples (0.5, 1e6) would be
# refused: a closed-loop concurrency counts requests in flight, a whole number >= 1.
_EXAMPLES = {"--concurrency": "a whole number of requests in flight >= 1, such as 1 or 64"}
#: Options counting tokens, where a "k" may mean 1,024 (InferenceX's 8k1k is 8,192 in, 1,024 out).
_TOKEN_OPTIONS = ("--isl", "--osl", "--context", "--prefill-tokens", "--max-tokens-per-step")


def option_value_error(e: Exception, helps: str) -> str | None:
    """An option value typer could not convert, in the project's words, or None for other errors.

    typer >= 0.2x converts option values with pydantic and shows its message (``Invalid value for
    '--batch' / '-b': Input should be a valid integer, unable to parse string as an integer``);
    this names the option as typed and the fix (``--batch: must be a whole number, got '1e8'.
    Fix: write it in digits: --batch 100000000``).
    """
    from pydantic import ValidationError

    from jalapeno.specs.schema_errors import THOUSANDS, describe

    cause, param = e.__cause__, getattr(e, "param", None)
    if not isinstance(cause, ValidationError) or param is None or not cause.errors():
        return None
    err = cause.errors()[0]
    opts = [o for o in getattr(param, "opts", ()) if o.startswith("--")] or list(getattr(param, "opts", ()))
    opt = max(opts, key=len) if opts else str(getattr(param, "name", "value"))
    problem, _ = describe(err, opt, "")
    v, kind = err.get("input"), err.get("type", "")
    m = re.fullmatch(r"\s*(\d*\.?\d+)\s*([kmg])\s*", v, re.I) if isinstance(v, str) else None
    if m and kind.startswith(("int", "float", "decimal")):  # '--isl 8k', '--target 1M': said 'give a whole number'
        power = "kmg".index(m[2].lower()) + 1
        dec = float(m[1]) * 1000**power
        shown = f"{int(dec)}" if dec == int(dec) else f"{dec:g}"
        binary = float(m[1]) * 1024**power
        tokens = opt in _TOKEN_OPTIONS and power == 1 and binary == int(binary)
        return f"{opt}: {problem}. Fix: write it in digits: {opt} {shown}" + (
            f" (or {int(binary)}: InferenceX's {m[1]}{m[2].lower()} lengths are {m[1]} x 1024 tokens)" if tokens else ""
        )
    if (
        opt == "--concurrency"
        and isinstance(v, str)
        and kind.startswith(("int", "float", "decimal"))
        and re.fullmatch(r"\s*\d+(\s*,\s*[1-9]\d*)+\s*", v)
    ):  # predict -c 64,128 was told to write 64128
        # (an item with a leading zero, '1,000', is no concurrency: one number with a separator, below)
        items = [x.strip() for x in v.split(",")]
        return (
            f"{opt}: {problem} (this command prices one concurrency per run). Fix: give one, e.g. {opt} "
            f"{items[0]}, and run once per value (compare and frontier sweep a list: {opt} {','.join(items)})"
            + (
                f"; or, if it is one number, write it without thousands separators: {opt} {''.join(items)}"
                if THOUSANDS.fullmatch(v)
                else ""
            )
        )
    if (
        isinstance(v, str) and kind.startswith(("int", "float", "decimal")) and THOUSANDS.fullmatch(v)
    ):  # '--target 1,000,000': 'a number such as 0.5'
        return f"{opt}: {problem}. Fix: write it without thousands separators: {opt} {v.strip().replace(',', '')}"
    if kind.startswith("int"):
        try:
            x = float(v)
        except (TypeError, ValueError):
            x = None
        if x is not None and x == x and abs(x) != float("inf") and x == int(x):
            return f"{opt}: {problem}. Fix: write it in digits: {opt} {int(x)}"
        return f"{opt}: {problem}. Fix: give {opt} a whole number ({helps})"
    if kind.startswith(("float", "decimal")):
        return f"{opt}: {problem}. Fix: give {opt} {_EXAMPLES.get(opt, 'a number such as 0.5 or 1e6')} ({helps})"
    return f"{opt}: {problem}. Fix: {helps}"


def extra_argument_error(e: Exception, argv: list[str], cmd, helps: str) -> str | None:
    """An unexpected extra argument in the project's words, or None for other errors.

    click said "Got unexpected extra argument(s) (nope)" for ``--json nope`` or ``--fixed-lengths yes``,
    naming the word but not the option it was meant for: a word right after an on/off flag is that
    flag's value, which a flag does not take.
    """
    m = re.match(r"Got unexpected extra argument(?:\(s\)|s)? \((.*)\)", e.format_message())
    if m is None:
        return None
    extras = m.group(1).split()
    flags_ = flags(cmd)
    for i, a in enumerate(argv[:-1]):
        if a in flags_ and argv[i + 1] in extras:
            return (
                f"{a}: is an on/off flag and takes no value, got {argv[i + 1]!r}. Fix: write {a} alone "
                f"(leave it out for off), or give {argv[i + 1]!r} to the option meant ({helps})"
            )
    return (
        f"{extras[0]!r}: an argument this command does not take. Fix: give it after the option it belongs "
        f"to, or drop it ({helps})"
    )


# Options a planner reaches for that are system fields, set with --set (docs/catalog.md): spellings -> key, what, unit.
_SPEC_KEYS = {
    ("cost", "price", "tco", "usd", "usd_per_hour", "usd_per_chip_hour", "cost_per_hour", "dollars_per_hour"): (
        "cost.usd_per_chip_hour",
        "cost",
        "$ per chip-hour, total cost of ownership",
    ),
    ("tdp", "tdp_w", "chip_power", "chip_w", "watts"): ("chip.tdp_w", "chip TDP", "W"),
    ("sustained_w", "sustained_power"): ("chip.sustained_w", "sustained chip power", "W"),
    ("allin_kw", "all_in_kw", "allin_kw_per_chip", "all_in_power", "allin_power"): (
        "power.allin_kw_per_chip",
        "all-in power",
        "kW per chip",
    ),
    ("hbm_bandwidth", "hbm_bw", "memory_bandwidth", "hbm_tb_per_s"): (
        "chip.hbm_bandwidth_tb_per_s",
        "HBM bandwidth",
        "TB/s",
    ),
}


def spec_option_error(e: Exception, cmd, helps: str) -> str | None:
    """An unknown option that names a system field (``compare --cost 2``) pointed to --osl, --set and --store
    as near spellings; where the command (``cmd``: the click command the words name) takes --set this names
    the key that sets it, or None otherwise.

    >>> class E(Exception):
    ...     def format_message(self): return "No such option: --cost"
    >>> class SetOption:  # the one option of the command that matters here (``plan`` takes --set)
    ...     opts = ("--set",)
    >>> class Plan:
    ...     params = (SetOption(),)
    >>> spec_option_error(E(), Plan(), "see `jalapeno plan --help`")
    "--cost: no such option; a system's cost is a catalog field (its value and source: `jalapeno hardware show NAME`). Fix: write --set cost.usd_per_chip_hour=VALUE ($ per chip-hour, total cost of ownership) (see `jalapeno plan --help`)"
    """
    m = re.match(r"No such option: (--[\w-]+)", e.format_message())
    if m is None:
        return None
    opt = m.group(1)
    word = opt.lstrip("-").lower().replace("-", "_")
    hit = next((v for k, v in _SPEC_KEYS.items() if word in k), None)
    opts = {o for p in getattr(cmd, "params", ()) for o in getattr(p, "opts", ())}
    if hit is None or "--set" not in opts:
        return None
    key, what, unit = hit
    one = f", or --set NAME:{key}=VALUE for one of --systems" if "--systems" in opts else ""
    return (
        f"{opt}: no such option; a system's {what} is a catalog field (its value and source: `jalapeno hardware "
        f"show NAME`). Fix: write --set {key}=VALUE ({unit}){one} ({helps})"
    )


def click_exception() -> type:
    """Click's ClickException: vendored by typer >= 0.2x as typer._click, else the click package."""
    try:
        from typer._click.exceptions import ClickException
    except ImportError:  # older typer depends on click itself
        from click.exceptions import ClickException
    return ClickException


@contextmanager
def system_named(name: str, names: list[str], sets: list[str] | None):
    """Re-raise a ``--set`` refused while loading ``name``, one of several compared ``names``, naming that system
    and, for a plain ``KEY=VALUE`` (set on every system), the ``NAME:KEY=VALUE`` spelling: ``compare -s
    jalapeno,gb300-nvl72 --set levels.tray.chips=1`` read "no link level named 'tray'. Fix: use one of rack,
    cluster", of gb300-nvl72 while jalapeno has a tray (break53). One system: the error as raised.

    Raises:
        SpecError: the refusal, its system named.
    """
    try:
        yield
    except SpecError as e:
        if len(names) < 2 or not e.field.startswith("--set: "):
            raise
        key = e.field.removeprefix("--set: ")
        plain = next(
            (
                f"{key}={s.partition('=')[2].strip()}"
                for s in sets or ()
                if ":" not in s.partition("=")[0] and s.partition("=")[0].strip() == key
            ),
            None,
        )
        fix = e.fix
        other = None if plain is None else next((n for n in names if n != name and _takes(n, plain)), None)
        if other is not None:  # a value no compared system takes (nan, -8): NAME:KEY=VALUE would be refused too
            fix += f"; a plain --set sets every compared system: give it to one as --set NAME:{plain}, e.g. --set {other}:{plain}"
        raise type(e)(e.field, f"{e.problem} (on {name}, one of the {len(names)} compared systems)", fix) from None


def _takes(system: str, item: str) -> bool:
    """Whether ``system`` loads with the one ``--set`` ``item`` (its pricer, calibrated set): the
    NAME:KEY=VALUE hint of :func:`system_named` names a system that takes it, and is left out where none
    does (``--set chip.hbm_stacks=-8`` had read "give it to one as --set h200:chip.hbm_stacks=-8", which
    h200 refuses as well; break55)."""
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.system_overrides import parse_sets

    try:
        load_pricer(system, "calibrated", tuple(parse_sets([item])))
    except (SpecError, UnknownNameError):
        return False
    return True


def shared_sets_note(names: list[str], sets: list[str] | None) -> str | None:
    """The note for plain ``--set KEY=VALUE`` items given to several compared ``names``, or None: a plain one sets
    every system, the baseline too, so ``compare -s jalapeno,gb300-nvl72 --set chip.hbm_bandwidth_tb_per_s=20``
    priced GB300 at 20 TB/s as well and read the variant against a changed baseline; the only word was the
    '+KEY=VALUE' in the baseline's name (newuser54). Not refused: a what-if on every system is meant to work.

    >>> shared_sets_note(["jalapeno", "gb300-nvl72"], ["chip.tdp_w=900", "jalapeno:chip.hbm_stacks=8"]).split(", the")[0]
    '--set chip.tdp_w=900 applies to every compared system (jalapeno, gb300-nvl72)'
    >>> shared_sets_note(["jalapeno"], ["chip.tdp_w=900"]) is None
    True
    """
    plain = [i.strip() for i in sets or () if ":" not in i.partition("=")[0]]
    if len(names) < 2 or not plain:
        return None
    return (
        f"--set {', '.join(plain)} applies to every compared system ({', '.join(names)}), the baseline "
        f"included; NAME:KEY=VALUE sets one system (--set {names[0]}:{plain[0]})"
    )


def note_shared_sets(names: list[str], sets: list[str] | None) -> None:
    """Print :func:`shared_sets_note` on stderr once per process (a multi-workload compare builds pricers again);
    compare, report and agentic compare call it once their own refusals have passed, so a refused run prints its
    error alone."""
    from jalapeno.cli.system_notes import _NOTED, _err

    note = shared_sets_note(names, sets)
    if note and note not in _NOTED:
        _NOTED.add(note)
        _err.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
