"""Fit the software stacks' fixed costs on the declared split and write data/stack_fits.toml.

Runs fit/stack_fit.fit_all (the split, the loss and what is fitted: its docstring) on the shipped
InferenceX points and aiconfigurator's silicon_sample.csv rows (pip install -e ".[calibrate]"),
and writes the fitted values with their report (fit and held-out errors before and after).
Run: python scripts/fit_stacks.py [--dry-run | --check] [--warm-clients-only] [--stacks NAME,...]   (a few minutes;
``--check``: exit 1 when the shipped file is not the fit's, a step of scripts/recalibrate.py)
``--stacks trtllm``: refit only the named profiles (fit/stack_fit.PLAN names) and keep every other profile's shipped
entry as it is (round 50, fp4pair50: one profile refitted under a what-if switch without the hour a full refit takes on a
loaded machine); each profile's fit reads only its own points and a fitted twin's front end (fit/stack_fit.SAME_SERVER:
the shipped one when the twin is not refitted too), so a profile refitted alone gets what the full refit gives it.
``--warm-clients-only``: the what-if of docs/gap_aic_ttft.md (round 25, coldfit25) — the client front ends and burst
shares fitted without the rows timed before InferenceX's client had a warm-up (fit/client_warmup.py); not the
shipped fit (it worsens the aiconfigurator TTFT median 19.5% -> 21.1%).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import tomllib

from jalapeno.errors import SpecError
from jalapeno.fit.fitted_files import check_file
from jalapeno.fit.stack_fit import PLAN, fit_all

OUT = Path(__file__).resolve().parent.parent / "src" / "jalapeno" / "data" / "stack_fits.toml"


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(float(f"{v:.6g}")) if isinstance(v, float) else str(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f'"{k}" = {_toml_value(x)}' for k, x in v.items()) + " }"
    raise TypeError(v)


def to_toml(fits: dict) -> str:
    """The fits as ``[fits.<stack>]`` tables (values, mtp_acceptance, report)."""
    lines = [
        "# Written by scripts/fit_stacks.py (fit/stack_fit.py) - do not edit by hand; rerun the script.",
        "# Fitted fixed costs per software stack on a declared split of end-to-end points, with the",
        "# fit and held-out errors before (the default profile) and after. Read by specs/stacks.py.",
        "",
    ]
    for name, f in fits.items():
        lines.append(f'[fits."{name}"]')
        lines.append(f"values = {_toml_value(f['values'])}")
        if f.get("mtp_acceptance"):
            lines.append(f"mtp_acceptance = {_toml_value(f['mtp_acceptance'])}")
        if f.get("clients"):
            lines.append(f"clients = {_toml_value(f['clients'])}")
        lines.append(f"report = {_toml_value(f['report'])}")
        lines.append("")
    return "\n".join(lines)


def parse_stacks(text: str | None) -> tuple[str, ...]:
    """``--stacks`` (comma-separated profile names) as a tuple in :data:`~jalapeno.fit.stack_fit.PLAN` order; every
    profile when None.

    Raises:
        SpecError: a name that is not a fitted profile (the message lists the fitted ones).

    >>> parse_stacks("vllm, trtllm")
    ('trtllm', 'vllm')
    """
    if text is None:
        return tuple(PLAN)
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if n not in PLAN]
    if bad or not names:
        raise SpecError(
            "--stacks",
            f"{', '.join(bad) or 'no name given'}: not a fitted profile",
            f"give one or more of {', '.join(PLAN)}, comma-separated",
        )
    return tuple(n for n in PLAN if n in names)


def merged(fits: dict, shipped_text: str) -> dict:
    """The shipped file's entries (``shipped_text``, the form :func:`to_toml` writes) in their order, with ``fits``'
    profiles replaced by their new fits (a profile the file lacks appended)."""
    old = tomllib.loads(shipped_text).get("fits", {})
    return {**{n: fits.get(n, f) for n, f in old.items()}, **{n: f for n, f in fits.items() if n not in old}}


def main(
    dry_run: bool, warm_clients_only: bool = False, check: bool = False, stacks: tuple[str, ...] = tuple(PLAN)
) -> int:
    fits = fit_all(stacks, warm_clients_only=warm_clients_only)
    text = to_toml(fits if set(stacks) == set(PLAN) else merged(fits, OUT.read_text()))
    if check:  # a step of scripts/recalibrate.py: is the shipped file the fit's?
        return check_file(OUT, text)
    for name, f in fits.items():
        r = f["report"]
        print(
            name,
            f["values"],
            f["mtp_acceptance"],
            f.get("clients", {}),
            f"n fit {r['n_fit']}, held out {r['n_held_out']}",
        )
        for when in ("before", "after"):
            print(
                "  ",
                when,
                {m: f"{d['median_ape']:.1%}/{d['bias']:+.1%} (n {d['n']})" for m, d in r[when]["held_out"].items()},
            )
    if not dry_run:
        OUT.write_text(text)
        print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry-run", action="store_true", help="print the fits; do not write data/stack_fits.toml")
    ap.add_argument(
        "--warm-clients-only",
        action="store_true",
        help="what-if: leave the rows timed without a client warm-up out of the front-end and burst fits",
    )
    ap.add_argument(
        "--check",
        action="store_true",
        help="fit, write nothing, exit 1 when data/stack_fits.toml "
        "differs from the fit (numbers beyond fit/fitted_files.REL_TOL)",
    )
    ap.add_argument(
        "--stacks",
        metavar="NAME,...",
        help="refit only these profiles (comma-separated, of "
        f"{', '.join(PLAN)}); every other profile keeps its shipped entry",
    )
    args = ap.parse_args()
    if args.check and args.warm_clients_only:
        ap.error("--check judges the shipped fit; leave out --warm-clients-only")
    try:
        chosen = parse_stacks(args.stacks)
    except SpecError as e:
        ap.error(str(e))
    raise SystemExit(main(args.dry_run or args.check, args.warm_clients_only, args.check, chosen))
