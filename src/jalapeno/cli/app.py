"""The ``jalapeno`` console script: a thin typer app over the Python API.

Each command parses its options, calls one public function and renders a rich table or the
same object as ``--json``. A :class:`~jalapeno.errors.JalapenoError` becomes one line on stderr
(``error: <field>: <problem>. Fix: <fix>``) and exit code 2.
"""

from __future__ import annotations

import gc
import re
import sys
from pathlib import Path

import typer

from jalapeno.errors import JalapenoError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="First-principles performance model of LLM-inference systems.")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        print(f"jalapeno {version('jalapeno')}")
        raise typer.Exit(0)


@app.callback()
def _root(show_version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                            help="Print the version and exit.")) -> None:
    """First-principles performance model of LLM-inference systems."""


_REGISTERED = False


def _register() -> None:
    global _REGISTERED
    if _REGISTERED:
        return
    # The commands' imports (numpy, pydantic's system models, ~100 dataclasses) make objects that live as long as
    # the process and little garbage: collecting while they load, then walking them in every full collection
    # after, cost ~0.06 s CPU of `compare -c 64` (round 45). So no collection while they load, and what they made
    # is frozen (gc docs: kept out of every later collection; once a process, which a forked worker shares).
    was_on = gc.isenabled()  # a caller that turned the collector off keeps it off
    gc.disable()
    try:
        from jalapeno.cli import (
            audit_cmds,
            catalog_cmds,
            collective_cmd,
            plan_cmd,
            report_cmd,
            serving_cmds,
            simulate_cmd,
            step_cmd,
            validate_cmds,
        )
    finally:
        if was_on:
            gc.enable()
    gc.freeze()
    _REGISTERED = True  # only once the imports worked: a failed import is retried, not skipped silently

    app.add_typer(catalog_cmds.hardware_app, name="hardware")
    app.add_typer(catalog_cmds.models_app, name="models")
    app.command("step")(step_cmd.step)
    app.command("collective")(collective_cmd.collective)
    app.command("simulate")(simulate_cmd.simulate)
    app.command("calibrate")(validate_cmds.calibrate)
    app.command("validate")(validate_cmds.validate)
    serving_cmds.register(app)
    audit_cmds.register(app)
    app.command("report")(report_cmd.report)
    from jalapeno.cli import explore_cmd

    explore_cmd.register(app)
    app.command("plan")(plan_cmd.plan)
    _one_line_summaries(app)


def _one_line_summaries(typer_app) -> None:
    """Each command's line in ``jalapeno --help`` is its docstring's first paragraph reflowed: typer
    kept the docstring's line breaks there, so ``report`` and ``plan`` broke mid-sentence
    ("frontiers with metric," / "power-convention and ..."), unlike in their own ``--help``."""
    import inspect

    for info in typer_app.registered_commands:
        doc = inspect.getdoc(info.callback) if info.callback is not None else None
        if info.short_help is None and info.help is None and doc:
            info.short_help = " ".join(doc.split("\n\n")[0].split())


def _flags_without_a_type() -> None:
    """On/off flags (``--json``, ``--no-prefix-cache``) take no value: the help shows no ``<bool>``
    type beside them (typer's rich help prints a type for every option whose metavar is unset)."""
    try:
        from typer.core import TyperOption
    except ImportError:  # pragma: no cover - older typer renders flags without a type already
        return
    if getattr(TyperOption.display_type_rich, "_jalapeno", False):
        return
    shown = TyperOption.display_type_rich

    def display_type_rich(self, ctx):
        if getattr(self, "is_flag", False) and self.metavar is None:
            return None
        return shown(self, ctx)
    display_type_rich._jalapeno = True
    TyperOption.display_type_rich = display_type_rich


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning user errors into one line and exit code 2."""
    import warnings

    warnings.filterwarnings("ignore", category=RuntimeWarning)  # numpy inf/nan notes: results say it
    _register()
    _flags_without_a_type()
    from jalapeno.cli import common

    common.ARGV[:] = sys.argv[1:] if argv is None else list(argv)  # check_writable: an output over an input
    try:
        _refuse_repeated(sys.argv[1:] if argv is None else argv)
        _refuse_empty(sys.argv[1:] if argv is None else argv)
        code = _click_app()(args=argv, standalone_mode=False)  # what app() runs, built once (_click_app)
        sys.stdout.flush()
        if isinstance(code, int) and code:  # typer >= 0.16 returns an Exit's code here: Ctrl-C is Exit(130)
            sys.exit(code)
    except JalapenoError as e:
        print(f"error: {_as_typed(e, sys.argv[1:] if argv is None else argv)}", file=sys.stderr)
        sys.exit(2)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except typer.Abort:
        sys.exit(1)
    except OSError as e:  # stdout (a full disk, a closed pipe) or an output file cannot be written
        _output_failed(e)
    except UnicodeEncodeError as e:  # PYTHONIOENCODING=ascii, a legacy code page: 'ñ', '·', box lines
        _encoding_failed(e)
    except Exception as e:  # click usage errors carry their own exit code
        if isinstance(e, _click_exception()):
            if not e.format_message().strip():  # a bare group (`jalapeno hardware`): its help was shown
                sys.exit(0)
            _, words = _command(sys.argv[1:] if argv is None else argv)  # `models list`, not `models`
            helps = f"see `{' '.join(['jalapeno', *words, '--help'])}`"
            typed = (_option_value_error(e, helps)
                     or _extra_argument_error(e, sys.argv[1:] if argv is None else argv, helps)
                     or _spec_option_error(e, sys.argv[1:] if argv is None else argv, helps))
            if typed is not None:
                print(f"error: {typed}", file=sys.stderr)
                sys.exit(e.exit_code)
            msg = e.format_message().rstrip(".")
            end = "" if msg.endswith(("?", "!")) else "."  # "Did you mean 'compare'?" ends its own sentence
            print(f"error: {msg}{end} Fix: {helps}", file=sys.stderr)
            sys.exit(e.exit_code)
        raise


def _encoding_failed(e: UnicodeEncodeError) -> None:
    """One line, not a traceback, when stdout's encoding lacks a character the tables print
    (``PYTHONIOENCODING=ascii jalapeno hardware show jalapeno`` raised UnicodeEncodeError on 'ñ')."""
    import os

    try:
        sys.stdout.flush()
    except (OSError, ValueError):  # UnicodeEncodeError is a ValueError: drop what cannot be written
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
    enc = getattr(sys.stdout, "encoding", None) or "?"
    print(f"error: stdout: its encoding ({enc}) cannot show {e.object[e.start:e.end]!r} (tables print Unicode: "
          "names such as Jalapeño, '·', box lines). Fix: set PYTHONIOENCODING=utf-8 or a UTF-8 locale "
          "(LANG=C.UTF-8), or pass --json where the command has it (its JSON is ASCII)", file=sys.stderr)
    sys.exit(2)  # stderr escapes what its encoding cannot show (Python's backslashreplace)


def _output_failed(e: OSError) -> None:
    """One line for an output that cannot be written (or a name the OS refuses as too long, input or output); a
    closed pipe (``| head``) exits quietly."""
    import errno
    import os

    try:  # whatever is still buffered for stdout would fail again at exit: send it nowhere
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    if e.errno == errno.EPIPE:
        sys.exit(0)
    where = e.filename or "stdout"
    if e.errno == errno.ENAMETOOLONG:  # an input path too (-m /xxx...x.json): was 'cannot write the output'
        shown = where if len(str(where)) <= 80 else f"{str(where)[:40]}...{str(where)[-20:]}"
        print(f"error: {shown}: the name is longer than the operating system allows (a file name over 255 bytes "
              "or a path over 4,096). Fix: give a shorter name or path", file=sys.stderr)
        sys.exit(2)
    print(f"error: {where}: cannot write the output ({e.strerror or type(e).__name__}). Fix: write to a "
          "device or file with space and permission (or pass --out/--html elsewhere)", file=sys.stderr)
    sys.exit(2)


#: Options whose value is a list (comma-separated) or one claim of several a user may hold: given
#: twice, the second looks as if it added to the first, and click kept the last alone. Options of one
#: scalar value keep click's last-wins (a wrapper's default overridden: ``alias p='predict -s h200'``).
_ADDS_UP = {"--systems": "comma-separated in one", "--concurrency": "comma-separated in one",
            "--at": "comma-separated in one", "--tiers": "comma-separated in one",
            "--bytes": "comma-separated in one", "--claim": "one per run"}


def _refuse_repeated(argv: list[str]) -> None:
    """Refuse a list option (:data:`_ADDS_UP`) given twice with different values: ``compare -s h200
    -s b200`` compared b200 alone, ``audit --claim a --claim b`` audited b only, ``-c 4 -c 16`` swept
    16 - each without a word. The same value twice is harmless.

    Raises:
        SpecError: naming the option, the values given and how to give several.
    """
    from jalapeno.errors import SpecError

    for opt, values in _given_options(argv).items():
        if opt in _ADDS_UP and len(set(values)) > 1:
            shown = ", ".join(repr(v) for v in dict.fromkeys(values))
            fix = (f"give {opt} once per run" if opt == "--claim" else
                   f"give the values in one {opt}, e.g. {opt} {','.join(dict.fromkeys(values))}")
            raise SpecError(opt, f"given {len(values)} times ({shown}); the later one replaced the earlier, "
                            "it does not add to it", fix)


#: Options whose help gives the empty value a meaning (compare/audit ``--html ''``: no chart), or
#: whose own parser refuses it with words of its own (``--study ''``: leave it out for the space's name).
_EMPTY_MEANS = {"--html", "--study", "--store", "--prefill", "--decode", "--points", "--systems", "--set", "--bytes",
                "--tiers", "--claim", "--metric"}


def _refuse_empty(argv: list[str]) -> None:
    """Refuse an option given an empty value (``-w ''``, ``--out=``, a shell variable that was empty):
    ``compare -w ''`` ran 8k1k, ``-p ''`` the default precisions, ``--serving ''`` both modes,
    ``--baseline ''`` the default baseline, ``frontier --out ''`` wrote nothing - each without a word,
    as '' read as 'not given'. Options in :data:`_EMPTY_MEANS` keep their documented '' or own error.

    Raises:
        SpecError: naming the option and the command's help.
    """
    from jalapeno.errors import SpecError

    if "--help" in argv:
        return
    for opt, values in _given_options(argv).items():
        if opt not in _EMPTY_MEANS and any(not v.strip() for v in values):
            _, words = _command(argv)
            raise SpecError(opt, f"is empty ({next(v for v in values if not v.strip())!r}): an empty value would "
                            "run as if the option were not given", f"give {opt} a value (see `jalapeno "
                            f"{' '.join(words)} --help`), or leave it out for its default")


def _as_typed(e: JalapenoError, argv: list[str]) -> str:
    """The error with its field as the user typed it.

    A library field (``eplb``, ``max_running``, ``precision``) that names an option given on the
    command line, long or short (``-p``), is shown as that option (``--eplb``, ``--precision``),
    as the fix already writes it; ``system`` also names a plural ``--systems``. A field that is a
    value the user gave an option (a missing ``mysys.toml``) is shown after that option
    (``--system mysys.toml: file not found``); one given as a positional argument is shown with
    the argument's name in the help after it (``nope.toml (the NAME argument): file not found``).
    """
    if e.field.startswith("-") or " " in e.field:
        return str(e)
    given = _given_options(argv)
    m = re.match(r"unknown \w+ '([^']+)'", e.problem)
    named = [o for o, values in given.items() if m and any(m.group(1) in v.split(",") for v in values)]
    if len(named) == 1:  # ``audit --baseline nope`` was shown as ``--system: unknown system 'nope'``
        return f"{named[0]}: {e.problem}. Fix: {e.fix}"
    opts = ["--" + part.replace("_", "-") for part in e.field.split("/")]  # isl/osl -> --isl/--osl
    if any(o in given or o + "s" in given for o in opts):  # isl/osl with --isl alone: --isl/--osl
        shown = [o + "s" if o not in given and o + "s" in given else o for o in opts]
        return f"{'/'.join(shown)}: {e.problem}. Fix: {e.fix}"
    for opt, values in given.items():
        if any(e.field in (v, str(Path(v))) for value in values for v in value.split(",") if v):
            return f"{opt} {e.field}: {e.problem}. Fix: {e.fix}"
    args = _given_arguments(argv)  # a positional argument (``hardware show nope.toml``) by its name in the help
    for name, value in args:
        if e.field in (value, str(Path(value))):  # "NAME dup.toml:" read as one field: the value, then its argument
            return f"{e.field} (the {name} argument): {e.problem}. Fix: {e.fix}"
    if len(args) == 1 and e.field in ("system", "model"):  # ``hardware show nope``: the catalog lookup's field
        return f"{args[0][0]}: {e.problem}. Fix: {e.fix}"
    return str(e)


_CLICK: list = []  # [(registration key, click command)]: :func:`_click_app`'s one build


def _click_app():
    """The click command typer makes of :data:`app` (``typer.main.get_command``), built once per set of
    registered commands. typer builds every command's parameters from its signature on each call (about 17 ms
    for the ~60 commands on the 2-core machine, round 39); a run needed it three times (the repeated- and
    empty-option checks' :func:`_command`, then ``app()`` itself), now once. ``app()`` also installs typer's
    excepthook, which with pretty exceptions off (as here) hands every exception to Python's own."""
    key = (tuple(map(id, app.registered_commands)), tuple(map(id, app.registered_groups)), id(app.registered_callback))
    if not _CLICK or _CLICK[0][0] != key:
        _CLICK[:] = [(key, typer.main.get_command(app))]
    return _CLICK[0][1]


def _command(argv: list[str]):
    """The click command the leading words of ``argv`` name (``hardware show``), and those words."""
    cmd, words = _click_app(), []
    for word in (a for a in argv if not a.startswith("-")):
        sub = getattr(cmd, "commands", {}).get(word)
        if sub is None:
            break
        cmd = sub
        words.append(word)
    return cmd, words


def _given_options(argv: list[str]) -> dict[str, list[str]]:
    """The options given on the command line, by long name (``-s h100`` -> ``--system``), with the
    values typed for each ([] for a flag). Options of the command the words name (``hardware
    show``), else the long options exactly as typed."""
    cmd, _ = _command(argv)
    names: dict[str, str] = {}
    for p in getattr(cmd, "params", ()):
        if getattr(p, "param_type_name", "") == "option":  # typer may vendor click: no isinstance
            longs = [o for o in p.opts if o.startswith("--")] or list(p.opts)
            names.update({o: max(longs, key=len) for o in (*p.opts, *p.secondary_opts)})
    flags = _flags(cmd)
    given: dict[str, list[str]] = {}
    for i, a in enumerate(argv):
        key, eq, value = a.partition("=")
        if not key.startswith("-") or key == "-":
            continue
        values = given.setdefault(names.get(key, key), [])
        if eq:
            values.append(value)
        elif key not in flags and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            values.append(argv[i + 1])
    return given


def _flags(cmd) -> set[str]:
    """The spellings of the command's on/off options (``--json``), which take no value."""
    return {o for p in getattr(cmd, "params", ()) if getattr(p, "param_type_name", "") == "option"
            and getattr(p, "is_flag", False) for o in (*p.opts, *p.secondary_opts)}


def _given_arguments(argv: list[str]) -> list[tuple[str, str]]:
    """The positional arguments typed after the command words, as (name in the help, value):
    ``hardware show nope.toml`` -> [("NAME", "nope.toml")]. A word after an option that takes a
    value is that option's value, not an argument."""
    cmd, words = _command(argv)
    params = getattr(cmd, "params", ())
    arguments = [p for p in params if getattr(p, "param_type_name", "") == "argument"]
    if not arguments:
        return []
    flags = _flags(cmd)
    rest, i, free = argv[:], 0, []
    for w in words:  # drop the command words (the first occurrence of each, in order)
        rest.remove(w)
    while i < len(rest):
        a = rest[i]
        if a.startswith("-") and a != "-":
            i += 1 if ("=" in a or a in flags) else 2
            continue
        free.append(a)
        i += 1
    return [((p.metavar or p.name.upper()), v) for p, v in zip(arguments, free)]


# Valid values to show in the fix for a number option whose generic examples (0.5, 1e6) would be
# refused: a closed-loop concurrency counts requests in flight, a whole number >= 1.
_EXAMPLES = {"--concurrency": "a whole number of requests in flight >= 1, such as 1 or 64"}
#: Options counting tokens, where a "k" may mean 1,024 (InferenceX's 8k1k is 8,192 in, 1,024 out).
_TOKEN_OPTIONS = ("--isl", "--osl", "--context", "--prefill-tokens", "--max-tokens-per-step")


def _option_value_error(e: Exception, helps: str) -> str | None:
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
        dec = float(m[1]) * 1000 ** power
        shown = f"{int(dec)}" if dec == int(dec) else f"{dec:g}"
        binary = float(m[1]) * 1024 ** power
        tokens = opt in _TOKEN_OPTIONS and power == 1 and binary == int(binary)
        return (f"{opt}: {problem}. Fix: write it in digits: {opt} {shown}" + (
            f" (or {int(binary)}: InferenceX's {m[1]}{m[2].lower()} lengths are {m[1]} x 1024 tokens)" if tokens else ""))
    if (opt == "--concurrency" and isinstance(v, str) and kind.startswith(("int", "float", "decimal"))
            and re.fullmatch(r"\s*\d+(\s*,\s*[1-9]\d*)+\s*", v)):  # predict -c 64,128 was told to write 64128
        # (an item with a leading zero, '1,000', is no concurrency: one number with a separator, below)
        items = [x.strip() for x in v.split(",")]
        return (f"{opt}: {problem} (this command prices one concurrency per run). Fix: give one, e.g. {opt} "
                f"{items[0]}, and run once per value (compare and frontier sweep a list: {opt} {','.join(items)})"
                + (f"; or, if it is one number, write it without thousands separators: {opt} {''.join(items)}"
                   if THOUSANDS.fullmatch(v) else ""))
    if (isinstance(v, str) and kind.startswith(("int", "float", "decimal"))
            and THOUSANDS.fullmatch(v)):  # '--target 1,000,000': 'a number such as 0.5'
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


def _extra_argument_error(e: Exception, argv: list[str], helps: str) -> str | None:
    """An unexpected extra argument in the project's words, or None for other errors.

    click said "Got unexpected extra argument(s) (nope)" for ``--json nope`` or ``--fixed-lengths yes``,
    naming the word but not the option it was meant for: a word right after an on/off flag is that
    flag's value, which a flag does not take.
    """
    m = re.match(r"Got unexpected extra argument(?:\(s\)|s)? \((.*)\)", e.format_message())
    if m is None:
        return None
    extras = m.group(1).split()
    flags = _flags(_command(argv)[0])
    for i, a in enumerate(argv[:-1]):
        if a in flags and argv[i + 1] in extras:
            return (f"{a}: is an on/off flag and takes no value, got {argv[i + 1]!r}. Fix: write {a} alone "
                    f"(leave it out for off), or give {argv[i + 1]!r} to the option meant ({helps})")
    return (f"{extras[0]!r}: an argument this command does not take. Fix: give it after the option it belongs "
            f"to, or drop it ({helps})")


# Options a planner reaches for that are system fields, set with --set (docs/catalog.md): spellings -> key, what, unit.
_SPEC_KEYS = {
    ("cost", "price", "tco", "usd", "usd_per_hour", "usd_per_chip_hour", "cost_per_hour", "dollars_per_hour"):
        ("cost.usd_per_chip_hour", "cost", "$ per chip-hour, total cost of ownership"),
    ("tdp", "tdp_w", "chip_power", "chip_w", "watts"): ("chip.tdp_w", "chip TDP", "W"),
    ("sustained_w", "sustained_power"): ("chip.sustained_w", "sustained chip power", "W"),
    ("allin_kw", "all_in_kw", "allin_kw_per_chip", "all_in_power", "allin_power"):
        ("power.allin_kw_per_chip", "all-in power", "kW per chip"),
    ("hbm_bandwidth", "hbm_bw", "memory_bandwidth", "hbm_tb_per_s"): ("chip.hbm_bandwidth_tb_per_s", "HBM bandwidth",
                                                                      "TB/s"),
}


def _spec_option_error(e: Exception, argv: list[str], helps: str) -> str | None:
    """An unknown option that names a system field (``compare --cost 2``) pointed to --osl, --set and --store
    as near spellings; where the command takes --set this names the key that sets it, or None otherwise.

    >>> class E(Exception):
    ...     def format_message(self): return "No such option: --cost"
    >>> _spec_option_error(E(), ["plan", "--cost", "2"], "see `jalapeno plan --help`")
    "--cost: no such option; a system's cost is a catalog field (its value and source: `jalapeno hardware show NAME`). Fix: write --set cost.usd_per_chip_hour=VALUE ($ per chip-hour, total cost of ownership) (see `jalapeno plan --help`)"
    """
    m = re.match(r"No such option: (--[\w-]+)", e.format_message())
    if m is None:
        return None
    opt = m.group(1)
    word = opt.lstrip("-").lower().replace("-", "_")
    hit = next((v for k, v in _SPEC_KEYS.items() if word in k), None)
    cmd, _ = _command(argv)
    opts = {o for p in getattr(cmd, "params", ()) for o in getattr(p, "opts", ())}
    if hit is None or "--set" not in opts:
        return None
    key, what, unit = hit
    one = f", or --set NAME:{key}=VALUE for one of --systems" if "--systems" in opts else ""
    return (f"{opt}: no such option; a system's {what} is a catalog field (its value and source: `jalapeno hardware "
            f"show NAME`). Fix: write --set {key}=VALUE ({unit}){one} ({helps})")


def _click_exception() -> type:
    """Click's ClickException: vendored by typer >= 0.2x as typer._click, else the click package."""
    try:
        from typer._click.exceptions import ClickException
    except ImportError:  # older typer depends on click itself
        from click.exceptions import ClickException
    return ClickException


if __name__ == "__main__":
    main()
