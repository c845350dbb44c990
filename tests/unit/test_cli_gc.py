"""The CLI loads its commands with the garbage collector paused, then freezes what they made (cli/app._register,
round 45: ~0.06 s CPU of ``compare -c 64``); the collector must be back on afterwards, also when an import fails."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_register_leaves_the_collector_on_and_the_imports_frozen():
    out = _run(
        "import gc; from jalapeno.cli import app; n = gc.get_freeze_count(); app._register(); app._register(); "
        "print(gc.isenabled(), n, gc.get_freeze_count() > 1000)"
    )
    assert out == "True 0 True"


def test_a_failed_import_turns_the_collector_back_on():
    code = (
        "import builtins, gc; from jalapeno.cli import app; real = builtins.__import__\n"
        "def imp(name, *a, **k):\n"
        "    if name == 'jalapeno.cli' and a and a[2] and 'audit_cmds' in a[2]: raise ImportError('no')\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = imp\n"
        "try: app._register()\n"
        "except ImportError: print(gc.isenabled())"
    )
    assert _run(code) == "True"


def test_a_collector_the_caller_turned_off_stays_off():
    """A program that runs the CLI in-process with the collector off (gc.disable() before app._register) got it
    turned on by the registration's ``finally``; the registration restores the state it found."""
    assert (
        _run("import gc; from jalapeno.cli import app; gc.disable(); app._register(); print(gc.isenabled())") == "False"
    )


def test_a_failed_import_is_retried_not_skipped():
    """_register marked itself done before its imports ran, so after one failed import every later call returned at
    once and the CLI had no commands, silently; it is marked done only once the imports worked."""
    code = (
        "import builtins; from jalapeno.cli import app; real = builtins.__import__; fail = [True]\n"
        "def imp(name, *a, **k):\n"
        "    if fail[0] and name == 'jalapeno.cli' and a and a[2] and 'audit_cmds' in a[2]: raise ImportError('no')\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = imp\n"
        "try: app._register()\n"
        "except ImportError: pass\n"
        "fail[0] = False; app._register()\n"
        "names = {c.name for c in app.app.registered_commands}; print('validate' in names, 'plan' in names)"
    )
    assert _run(code) == "True True"
