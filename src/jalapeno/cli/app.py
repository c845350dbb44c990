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

from jalapeno.cli.usage_errors import (
    click_exception,
    extra_argument_error,
    flags as _flags,
    option_value_error,
    spec_option_error,
)
from jalapeno.errors import JalapenoError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="First-principles performance model of LLM-inference systems.",
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        print(f"jalapeno {version('jalapeno')}")
        raise typer.Exit(0)


@app.callback()
def _root(
    show_version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_version, help="Print the version and exit."
    ),
) -> None:
    """First-principles performance model of LLM-inference systems."""
    from jalapeno.cli.system_notes import forget_notes

    forget_notes()  # the once-per-run notes: each invocation hears its own (an in-process caller runs several)


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
    """Entry point: run the app, turning user errors into one line and exit code 2, and Ctrl-C into one line and
    exit code 130 (:func:`_interrupted`)."""
    try:
        _main(argv)
    except KeyboardInterrupt:  # while the commands load (_register's imports), before typer's main catches it
        _interrupted()


def _interrupted() -> None:
    """One line on stderr and the shell's exit code for SIGINT (128 + 2), for Ctrl-C at any point of a run: typer
    turned it into a silent exit 130 once the command ran, and a traceback while the commands loaded (break53)."""
    try:
        print(
            "interrupted (Ctrl-C): the command stopped before it finished; run it again for its output", file=sys.stderr
        )
    except (OSError, ValueError):
        pass
    sys.exit(130)


def _main(argv: list[str] | None) -> None:
    """:func:`main`'s run, Ctrl-C aside."""
    import warnings

    warnings.filterwarnings("ignore", category=RuntimeWarning)  # numpy inf/nan notes: results say it
    _register()
    _flags_without_a_type()
    from jalapeno.cli import common, out_paths

    out_paths.ARGV[:] = sys.argv[1:] if argv is None else list(argv)  # check_writable: an output over an input
    common.console.on_broken_pipe = _closed_pipe  # rich's own exited 1
    try:
        _refuse_repeated(sys.argv[1:] if argv is None else argv)
        _refuse_empty(sys.argv[1:] if argv is None else argv)
        code = _click_app()(args=argv, standalone_mode=False)  # what app() runs, built once (_click_app)
        if code == 130:  # typer >= 0.16 returns an Exit's code here: Ctrl-C is Exit(130)
            _interrupted()
        sys.stdout.flush()
        if isinstance(code, int) and code:
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
        if isinstance(e, click_exception()):
            if not e.format_message().strip():  # a bare group (`jalapeno hardware`): its help was shown
                sys.exit(0)
            cmd, words = _command(sys.argv[1:] if argv is None else argv)  # `models list`, not `models`
            helps = f"see `{' '.join(['jalapeno', *words, '--help'])}`"
            typed = (
                option_value_error(e, helps)
                or extra_argument_error(e, sys.argv[1:] if argv is None else argv, cmd, helps)
                or spec_option_error(e, cmd, helps)
            )
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
    print(
        f"error: stdout: its encoding ({enc}) cannot show {e.object[e.start : e.end]!r} (tables print Unicode: "
        "names such as Jalapeño, '·', box lines). Fix: set PYTHONIOENCODING=utf-8 or a UTF-8 locale "
        "(LANG=C.UTF-8), or pass --json where the command has it (its JSON is ASCII)",
        file=sys.stderr,
    )
    sys.exit(2)  # stderr escapes what its encoding cannot show (Python's backslashreplace)


def _closed_pipe() -> None:
    """The CLI console's ``on_broken_pipe`` (rich calls it when stdout's reader has gone): raise, so that the closed
    pipe reaches :func:`_output_failed` (quiet, code 0), where rich's own exited 1 (break53)."""
    import errno

    raise BrokenPipeError(errno.EPIPE, "Broken pipe")


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
        print(
            f"error: {shown}: the name is longer than the operating system allows (a file name over 255 bytes "
            "or a path over 4,096). Fix: give a shorter name or path",
            file=sys.stderr,
        )
        sys.exit(2)
    print(
        f"error: {where}: cannot write the output ({e.strerror or type(e).__name__}). Fix: write to a "
        "device or file with space and permission (or pass --out/--html elsewhere)",
        file=sys.stderr,
    )
    sys.exit(2)


#: Options whose value is a list (comma-separated) or one claim of several a user may hold: given
#: twice, the second looks as if it added to the first, and click kept the last alone. Options of one
#: scalar value keep click's last-wins (a wrapper's default overridden: ``alias p='predict -s h200'``).
_ADDS_UP = {
    "--systems": "comma-separated in one",
    "--concurrency": "comma-separated in one",
    "--at": "comma-separated in one",
    "--tiers": "comma-separated in one",
    "--bytes": "comma-separated in one",
    "--claim": "one per run",
}


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
            fix = (
                f"give {opt} once per run"
                if opt == "--claim"
                else f"give the values in one {opt}, e.g. {opt} {','.join(dict.fromkeys(values))}"
            )
            raise SpecError(
                opt,
                f"given {len(values)} times ({shown}); the later one replaced the earlier, it does not add to it",
                fix,
            )


#: Options whose help gives the empty value a meaning (compare/audit ``--html ''``: no chart), or
#: whose own parser refuses it with words of its own (``--study ''``: leave it out for the space's name).
_EMPTY_MEANS = {
    "--html",
    "--study",
    "--store",
    "--prefill",
    "--decode",
    "--points",
    "--systems",
    "--set",
    "--bytes",
    "--tiers",
    "--claim",
    "--metric",
}


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
            raise SpecError(
                opt,
                f"is empty ({next(v for v in values if not v.strip())!r}): an empty value would "
                "run as if the option were not given",
                f"give {opt} a value (see `jalapeno {' '.join(words)} --help`), or leave it out for its default",
            )


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
        _CLICK[:] = [(key, _notes_after_parsing(typer.main.get_command(app)))]
    return _CLICK[0][1]


def _notes_after_parsing(cmd):
    """``cmd`` with each leaf command printing the notes its options' callbacks held (cli/common.defer_note) when
    it runs, that is once its command line has parsed: a usage error (a missing ``--system``) comes alone; and a
    closed pipe (``| head``) met while the command prints exiting quietly with code 0, as :func:`_output_failed`
    has it (typer's main turned it into exit 1, so ``set -o pipefail`` scripts failed on ``| head``)."""
    import types

    from jalapeno.cli.common import print_deferred_notes

    for sub in getattr(cmd, "commands", {}).values():
        _notes_after_parsing(sub)
    if not hasattr(cmd, "commands"):

        def invoke(self, ctx, _run=cmd.invoke):
            print_deferred_notes(ctx)
            try:
                return _run(ctx)
            except BrokenPipeError as e:  # typer's main caught it first and exited 1 (break53): quietly, code 0
                _output_failed(e)

        cmd.invoke = types.MethodType(invoke, cmd)
    return cmd


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


if __name__ == "__main__":
    main()
