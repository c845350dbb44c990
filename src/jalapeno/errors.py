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
        raise SpecError(field, f"needs the {module} package, which is not installed",
                        f'install the extra: pip install -e ".[{extra}]"') from None
