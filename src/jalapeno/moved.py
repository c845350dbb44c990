"""Names that moved to another module and stay importable from the module they left (a module ``__getattr__``).

A module split for the line budget (STYLE §1) keeps its old names importable for callers outside the package
(notebooks, user scripts): the old module sets ``__getattr__ = moved_names(__name__, {NEW_MODULE: NAMES})`` and a
name of NAMES is imported from NEW_MODULE on first use (PEP 562). Not at import time: the new module imports the
old one, so an eager import back would be circular. Inside the package every import names the new home; the
registry :data:`MOVED` lets tests/unit/test_moved_names.py walk ``src`` and fail on an import through an old one.

Used by cost/pricer.py (→ cost/pool_backends.py), specs/formats.py (→ specs/precision_checks.py),
specs/hardware.py (→ specs/system_load.py; its round-38 schema names → specs/system_file.py with a
DeprecationWarning) and serve/sim/simulation.py (→ serve/sim/run.py), all split in round 50; specs/model_config.py
(→ specs/model_file.py and specs/config_fields.py), split in round 52; deploy/memory_fit.py (→ deploy/kv_capacity.py),
split in round 53.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

#: Every old module that set its ``__getattr__`` with :func:`moved_names` → {moved name: its new module}; filled
#: when the old module is imported.
MOVED: dict[str, dict[str, str]] = {}


def moved_names(
    module: str,
    homes: Mapping[str, tuple[str, ...]],
    deprecated: Mapping[str, tuple[tuple[str, ...], str]] | None = None,
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``module`` that returns each moved name from its new home.

    Args:
        module: the old module's ``__name__`` (``jalapeno.cost.pricer``).
        homes: new module → the names that now live there, returned without a word.
        deprecated: new module → (names, when they moved), returned with a DeprecationWarning that names the new
            place (``jalapeno.specs.hardware.ChipFile moved to jalapeno.specs.system_file.ChipFile (round 38);
            import it from there``).

    Returns:
        ``__getattr__(name)``: the moved object (the same object the new module holds); any other name raises
        AttributeError as a module without a ``__getattr__`` does.

    >>> ga = moved_names("jalapeno.example_old", {"jalapeno.units": ("GiB",)})
    >>> ga("GiB") == 2**30
    True
    >>> ga("nothing")
    Traceback (most recent call last):
    ...
    AttributeError: module 'jalapeno.example_old' has no attribute 'nothing'
    >>> del MOVED["jalapeno.example_old"]
    """
    silent = {name: new for new, names in homes.items() for name in names}
    warned = {name: (new, since) for new, (names, since) in (deprecated or {}).items() for name in names}
    MOVED[module] = {**silent, **{name: new for name, (new, _) in warned.items()}}

    def __getattr__(name: str) -> Any:
        if name in silent:
            return getattr(importlib.import_module(silent[name]), name)
        if name in warned:
            new, since = warned[name]
            warnings.warn(
                f"{module}.{name} moved to {new}.{name} ({since}); import it from there",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(importlib.import_module(new), name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
