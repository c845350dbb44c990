"""Output-path checks shared by every command that writes a file (``--out``, ``-o``, ``--html``, ``--out-dir``):
each refuses, before the run that would fill it, a path that cannot be written, one with the wrong suffix, an input
file named on the same command line, or a file or folder of jalapeno's own data. Each error is a SpecError naming the
option and the fix. Split from cli/common.py (round 54, module budget)."""

from __future__ import annotations


def check_writable(path: str | None, option: str) -> None:
    """Refuse an output path that cannot be written, before the run that would fill it (a
    validation or report run of seconds otherwise ends in "cannot write"). None or '' is no output.

    Raises:
        SpecError: the path starts with '-' (an option or a number taken as the path), is a
            folder, its folder does not exist or is a file (errors.check_output_file), or either is not writable;
            it is an input named on the command line or a file of jalapeno's data folder (:func:`_shipped_file`).
    """
    import os
    from pathlib import Path

    from jalapeno.errors import SpecError, check_output_file

    if not path:
        return
    if str(path).startswith("-"):  # '-o -x.csv', '--html --json': an option or number taken as the path
        raise SpecError(
            option,
            f"{path!r} looks like an option or a number, not a file (the word after {option} is taken as its path)",
            f"give a file path (write ./{path} for a file named so)",
        )
    check_output_file(path, option)
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if not os.access(folder, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise SpecError(
            option, f"cannot write {path!r} (no write permission)", "give a file path in a folder you can write to"
        )
    why = _create_fails(p)
    if why:  # as root, os.access passes /proc and the run of minutes ended in "cannot write" (break46)
        raise SpecError(option, f"cannot write {path!r} ({why})", "give a file path in a folder you can write to")
    read = _input_named(p, option)
    if read is not None:  # `validate --points p.csv -o p.csv` overwrote the measured points with the results
        raise SpecError(
            option,
            f"{path!r} is also the file {read} reads: writing the output there would overwrite it",
            "give the output another file name",
        )
    shipped = _shipped_file(p)
    if shipped is not None:  # `validate -o .../data/validation/inferencex_points.csv` overwrote the points (break50)
        raise SpecError(
            option,
            f"{path!r} is a file jalapeno ships and reads ({shipped}): writing the output there "
            "would overwrite it for every later run",
            "give the output another file name",
        )


def _create_fails(p) -> str:
    """Why the file ``p`` cannot be created, or "" when it can: it is created and removed again (an existing
    regular file is opened for appending, unchanged). Catches what ``os.access`` passes: a root user in /proc or
    /sys, a read-only or full file system, a name the file system refuses. A dangling symbolic link is probed at
    its target, which the write creates through it (``open(link, "xb")`` fails "File exists" on the link itself).
    """
    import os
    from pathlib import Path

    if p.is_symlink() and not p.exists():  # `ln -s /data/out.csv out.csv; validate -o out.csv` was refused
        p = Path(os.path.realpath(p))
        if p.is_symlink():  # realpath stops on a loop
            return "a symbolic link that loops back on itself"
    try:
        if p.exists():
            if p.is_file():
                with p.open("ab"):
                    pass
            return ""  # a device or FIFO (/dev/null, /dev/stdout): written as given
        with p.open("xb"):
            pass
        p.unlink()
    except OSError as e:
        return e.strerror or type(e).__name__
    return ""


#: The running command line's words (cli/app.main sets them): :func:`check_writable` looks in them for an
#: input file an output path would overwrite.
ARGV: list[str] = []


def _shipped_file(p) -> str | None:
    """The package-relative name of ``p`` when it is an existing file of jalapeno's own data folder
    (``data/validation/inferencex_points.csv``), else None: an output written there replaces what every later
    command reads, though no option named it as an input (validate's default --points is that file).

    >>> from importlib import resources
    >>> _shipped_file(resources.files("jalapeno") / "data" / "systems" / "h200.toml")
    'data/systems/h200.toml'
    """
    from importlib import resources
    from pathlib import Path

    if not Path(p).is_file():
        return None
    data = Path(str(resources.files("jalapeno") / "data")).resolve()
    try:
        return Path(p).resolve().relative_to(data.parent).as_posix() if data in Path(p).resolve().parents else None
    except (OSError, ValueError):
        return None


def check_out_dir_not_shipped(out_dir: str, option: str, own: str) -> None:
    """Refuse an output folder inside jalapeno's data folder other than ``own`` (a package-relative folder, e.g.
    ``data/calibration``, the one the command may rewrite): ``calibrate --out-dir src/jalapeno/data/systems``
    wrote its fitted ``h200.toml`` over the H200 system file, exit 0 (break50).

    Raises:
        SpecError: ``option``, naming the folder and the fix.
    """
    from importlib import resources
    from pathlib import Path

    from jalapeno.errors import SpecError

    data = Path(str(resources.files("jalapeno") / "data")).resolve()
    p = Path(out_dir).resolve()
    if (p == data or data in p.parents) and p != data.parent / own:
        rel = p.relative_to(data.parent).as_posix()
        raise SpecError(
            option,
            f"{out_dir!r} is jalapeno's own {rel} folder: the files written there would "
            "replace or join the shipped files every command reads",
            f"give a folder of your own, or omit {option} to write {own}",
        )


def _input_named(p, option: str) -> str | None:
    """The option (as typed) of another word of :data:`ARGV` naming the existing file ``p``, else None."""
    import os

    if not p.is_file():
        return None
    named = []
    for i, word in enumerate(ARGV):
        flag, eq, value = word.partition("=") if word.startswith("--") else ("", "", word)
        if value and os.path.isfile(value) and os.path.samefile(value, p):
            named.append(flag if eq else ARGV[i - 1] if i and ARGV[i - 1].startswith("-") else "an argument")
    inputs = [n for n in named if n not in (option, "-o", "--out", "--html")]  # the output's own word is one
    return inputs[0] if len(named) > 1 and inputs else None


def check_html_out(path: str | None, option: str = "--html") -> None:
    """Refuse an HTML output path that does not end in .html/.htm (an HTML page written to
    ``x.txt`` or ``x.csv``), or that cannot be written (:func:`check_writable`). None or '' is no output.

    Raises:
        SpecError: not an .html path, or not writable.
    """
    from jalapeno.errors import SpecError

    if path and not str(path).lower().endswith((".html", ".htm")):
        raise SpecError(option, f"{path!r} is not an .html file", "give a path ending in .html")
    check_writable(path, option)


def check_table_out(path: str | None, option: str, suffixes: tuple[str, ...], note: str = "") -> None:
    """Refuse a table output path whose suffix is not one of ``suffixes`` (``validate -o val.json``
    wrote CSV into a .json file; ``simulate --out x.txt`` ran the simulation, then refused the
    suffix), or that cannot be written (:func:`check_writable`); before the run. None or '' is no
    output. ``note`` ends the fix (e.g. where the JSON goes instead).

    Raises:
        SpecError: an unsupported suffix, or not writable.
    """
    from pathlib import Path

    from jalapeno.errors import SpecError

    check_writable(path, option)  # first: a folder has no suffix, and "cannot write a folder" is the news
    if path and Path(path).suffix.lower() not in suffixes:
        raise SpecError(
            option,
            f"{path!r} is not a {' or '.join(suffixes)} file (the format follows the suffix)",
            f"give a path ending in {' or '.join(suffixes)}{note}",
        )
