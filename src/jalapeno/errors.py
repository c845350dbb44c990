"""Errors a user can cause, each naming the field at fault and the fix.

Every user-caused failure raises a :class:`JalapenoError` subclass; the CLI prints
``error: <field>: <problem>. Fix: <fix>`` on one line and exits with code 2.
``assert`` is kept for internal invariants only.
"""

from __future__ import annotations


class JalapenoError(Exception):
    """Base class: a problem with the user's input, naming the field and the fix.

    Args:
        field: the input field (a file key, a CLI option, an argument) that is wrong.
        problem: what is wrong with it, in one sentence.
        fix: what the user should do instead.
    """

    def __init__(self, field: str, problem: str, fix: str) -> None:
        self.field = field
        self.problem = problem
        self.fix = fix
        super().__init__(f"{field}: {problem}. Fix: {fix}")


class SpecError(JalapenoError):
    """A hardware, model or workload spec is malformed or out of range."""


class UnknownNameError(JalapenoError):
    """A catalog name (system, model, preset, op) that does not exist."""


class UnsupportedModelError(JalapenoError):
    """A model architecture that jalapeno does not model (refused, never guessed)."""


class InfeasibleDeployment(JalapenoError):
    """A deployment that cannot run: it does not fit in memory or its layout is invalid."""


def require_extra(module: str, extra: str, field: str):
    """Import an optional package, or refuse with the extra that installs it.

    Raises:
        SpecError: ``module`` is not installed (names ``field`` and ``pip install -e ".[extra]"``).
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise SpecError(
            field,
            f"needs the {module} package, which is not installed",
            f'install the extra: pip install -e ".[{extra}]"',
        ) from None


def check_bool(field: str, value: object, fix: str) -> None:
    """Refuse a switch that is not ``True``/``False`` (``'no'`` or ``1`` would read as set or unset silently); a NumPy
    boolean is a boolean (``fit/validate`` passes ``recurring_waves and pt.fixed_lengths``).

    Raises:
        SpecError: ``field``, "must be True or False, got VALUE", ``fix``.

    >>> check_bool("fixed", True, "pass fixed=True or False")
    >>> check_bool("fixed", "no", "pass fixed=True or False")
    Traceback (most recent call last):
    ...
    jalapeno.errors.SpecError: fixed: must be True or False, got 'no'. Fix: pass fixed=True or False
    """
    if isinstance(value, bool):
        return
    import numpy as np  # here, not at the top: errors.py is imported by every entry point, NumPy only where needed

    if not isinstance(value, np.bool_):
        raise SpecError(field, f"must be True or False, got {value!r}", fix)


def choice_hint(value: object, choices) -> str:
    """`` (did you mean 'all-in'?)`` for a near miss of one of ``choices`` — another case, ``_`` for
    ``-`` or a dropped hyphen, a longer word that starts with one (``disaggregated``), a close
    spelling, the one choice that starts with it (``gb300``) — else ``""``: the option's error lists the
    choices, the hint names the one meant.

    >>> choice_hint("All_In", ["chip", "sustained", "all-in"]), choice_hint("allin", ["chip", "all-in"])
    (" (did you mean 'all-in'?)", " (did you mean 'all-in'?)")
    >>> choice_hint("FP8", ["bf16", "fp8"]), choice_hint("disaggregated", ["agg", "disagg"]), choice_hint("x", ["agg"])
    (" (did you mean 'fp8'?)", " (did you mean 'disagg'?)", '')
    >>> choice_hint("gb300", ["b300", "gb300-nvl72"])
    " (did you mean 'gb300-nvl72'?)"
    >>> choice_hint("fp8_e5", ["bf16", "fp8", "fp8_e5m2"])  # cut short beats a choice it begins with
    " (did you mean 'fp8_e5m2'?)"
    """
    import difflib

    choices = [str(c) for c in choices]
    v = str(value).strip().lower()

    def squash(s: str) -> str:
        return s.lower().replace("-", "").replace("_", "")

    same = [c for c in choices if squash(c) == squash(v)]
    prefix = sorted((c for c in choices if len(c) >= 3 and squash(v).startswith(squash(c))), key=len)
    longer = [c for c in choices if len(v) >= 3 and squash(c).startswith(squash(v))]  # gb300 -> gb300-nvl72
    # the one choice the typed text begins before the choice that begins it: fp8_e5 is fp8_e5m2 cut short, not fp8
    close = (
        same
        or longer[:1] * (len(longer) == 1)
        or prefix[-1:]
        or difflib.get_close_matches(v, choices, n=1, cutoff=0.75)
    )
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_output_file(path, option: str) -> None:
    """Refuse an output file path that cannot be created: a folder, a folder that does not exist, or a "folder"
    that is a file (``-o notes.txt/x.csv``); each named as what it is.

    Args:
        path: the output path (str or pathlib.Path).
        option: the option that gave it (``--out``, ``--html``), named in the error.

    Raises:
        SpecError: ``option``, "cannot write PATH (...)", "give a file path in an existing folder".
    """
    from pathlib import Path

    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        why = "a folder"
    elif folder.is_dir():
        return
    else:
        there = next((a for a in (folder, *folder.parents) if a.exists()), None)
        is_file = there is not None and not there.is_dir()
        why = f"{str(there)!r} is a file, not a folder" if is_file else f"its folder {str(folder)!r} does not exist"
    raise SpecError(option, f"cannot write {str(path)!r} ({why})", "give a file path in an existing folder")
