"""Are the shipped fitted files what their fits give today? The recalibration chain and its freshness checks.

Every fitted file the package ships is written by a script from the kernel tables, the end-to-end rows and the
files written before it. When an upstream file moves (a kernel set recalibrated, a routing rule changed) the
files downstream go stale unless they are refitted in order: ``data/moe_width.toml`` read each system's
calibrated ``moe`` ``half_rows`` and stayed unrefitted from round 11 to round 36 (review35). :data:`CHAIN` is
that order, ``scripts/recalibrate.py`` runs it (or checks it), and :func:`numeric_diffs` is the comparison the
checks make: a shipped file against a fresh fit, numbers within a relative tolerance (a fit's last digits may
differ between BLAS builds; the files round to 3-6 significant digits), text and structure exactly. Outside the
chain: fit_moe_backends.py (needs an aiconfigurator checkout) and fit_frontend.py (its a + b·ISL are
specs/efficiency.py's generic front-end defaults, copied by hand; on 273ffda it gives 0.156 s and −1.1e-5 s per
token against the shipped 0.15 s and 6.4e-6: review36).

Errors: none raised here; a difference is reported as a line naming the file, the field and both values.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass

#: relative tolerance of a fitted number (named assumption: the written files round to 3-6 significant
#: digits, so a fresh fit on another machine may differ by one unit in the last one, < 1e-3 of the value)
REL_TOL = 2e-3


@dataclass(frozen=True)
class Step:
    """One step of the recalibration chain.

    Attributes:
        name: short name (``scripts/recalibrate.py --from NAME``).
        argv: the command, relative to the repository root (``python`` = the running interpreter).
        writes: the files it writes.
        reads: why it comes after the steps before it (the files it reads).
        check: the command that says whether its files are current without writing them, or "" when
            there is none (LOSO: 15-30 minutes, a full refit per system).
    """

    name: str
    argv: tuple[str, ...]
    writes: str
    reads: str
    check: tuple[str, ...] = ()


#: the order; the first three read kernel tables only (no fit before them), fit_moe_backends.py (measured curves,
#: needs an aiconfigurator checkout, fit/moe_backends.REPO_TABLES) is outside the chain for that reason too
CHAIN: tuple[Step, ...] = (
    Step(
        "engine_allreduce",
        ("python", "scripts/fit_engine_allreduce.py"),
        "data/collectives/engine_allreduce.toml",
        "the engines' custom_allreduce_perf tables only",
        ("python", "scripts/fit_engine_allreduce.py", "--check"),
    ),
    Step(
        "moe_kernels",
        ("python", "scripts/fit_moe_backend_kernels.py"),
        "data/moe_backend_kernels.toml",
        "the engines' moe_perf tables only",
        ("python", "scripts/fit_moe_backend_kernels.py", "--check"),
    ),
    Step(
        "moe_floors",
        ("python", "scripts/fit_moe_backend_floors.py"),
        "data/moe_backend_floors.toml",
        "the engines' moe_perf tables only",
        ("python", "scripts/fit_moe_backend_floors.py", "--check"),
    ),
    # Kimi K2.5's W4A16 expert forms (specs/w4a16_moe.py, on since round 41): the SM100 chips' moe_perf tables
    # only; every set with the form reads it at load, so the stack fits and everything after price with it
    Step(
        "w4a16_forms",
        ("python", "scripts/fit_w4a16_forms.py"),
        "data/w4a16_moe_forms.toml",
        "the engines' int4_wo moe_perf tables only",
        ("python", "scripts/fit_w4a16_forms.py", "--check"),
    ),
    Step(
        "calibrate",
        ("jalapeno", "calibrate"),
        "data/calibration/*.toml (measured sets; derived sets' bands)",
        "the kernel tables (aiconfigurator-core, amd-aiter tables) and data/validation/loso_error.toml",
        ("python", "scripts/recalibrate.py", "--check-calibration"),
    ),
    # TensorRT-LLM's measured all-to-all floor (cost/a2a_floor.py, shipped off): the trtllm_alltoall_perf tables only
    Step(
        "a2a_floor",
        ("python", "scripts/fit_a2a_floor.py"),
        "data/collectives/a2a_floor.toml",
        "the engine's trtllm_alltoall_perf tables only",
        ("python", "scripts/fit_a2a_floor.py", "--check"),
    ),
    Step(
        "moe_width",
        ("python", "scripts/fit_moe_width.py"),
        "data/moe_width.toml",
        "each system's calibrated moe half_rows (data/calibration)",
        ("python", "scripts/fit_moe_width.py", "--check"),
    ),
    Step(
        "stacks",
        ("python", "scripts/fit_stacks.py"),
        "data/stack_fits.toml",
        "end-to-end rows priced with the kernel sets and the width term",
        ("python", "scripts/fit_stacks.py", "--check"),
    ),
    Step(
        "loso",
        ("python", "scripts/run_loso.py"),
        "data/validation/loso_error.toml (band_error, preferred pricer)",
        "the kernel sets and the stack fits (refitted per left-out system)",
    ),
    Step(
        "derived",
        ("jalapeno", "calibrate"),
        "data/calibration/*.toml (the derived sets' low/high bands)",
        "band_error from data/validation/loso_error.toml",
        ("python", "scripts/recalibrate.py", "--check-calibration"),
    ),
    Step(
        "sglang_rocm",
        ("python", "scripts/sglang_rocm_release.py"),
        "the value of sglang-rocm's step_overhead_s rule before 0.5.12 (copied by hand into data/stacks.toml)",
        "the ROCm stack fit (kernel_launch_s) and the AMD sets",
        ("python", "scripts/sglang_rocm_release.py", "--check"),
    ),
    Step(
        "first_wave_stall",
        ("python", "scripts/first_wave_stall.py"),
        "the value of sglang-rocm's first_wave_stall_s (copied by hand into data/stacks.toml)",
        "the model's own mean - median TTFT at issue #890's points (the ROCm stack fit, sglang_rocm's rule)",
        ("python", "scripts/first_wave_stall.py", "--check"),
    ),
    Step(
        "bands",
        ("python", "scripts/gen_measured_bands.py"),
        "data/validation/measured_bands.toml",
        "every prediction (validate)",
        ("python", "scripts/gen_measured_bands.py", "--check"),
    ),
    Step(
        "golden",
        ("python", "scripts/make_golden.py"),
        "tests/golden/data/golden_cli.json",
        "every prediction (the CLI)",
        ("python", "scripts/make_golden.py", "--check"),
    ),
    Step(
        "chip_doc",
        ("python", "scripts/gen_chip_doc.py"),
        "docs/chip.md",
        "the sliced-chip predictions",
        ("python", "scripts/gen_chip_doc.py", "--check"),
    ),
    Step(
        "collectives_doc",
        ("python", "scripts/check_collectives.py"),
        "docs/collectives.md",
        "the collective fits and the stack fits (its engine-all-reduce table prices each fitted stack)",
        ("python", "scripts/check_collectives.py", "--check"),
    ),
    Step(
        "validation_doc",
        ("python", "scripts/gen_validation_doc.py"),
        "docs/validation.md",
        "every prediction, the LOSO table, the stack fits; then README's trust figures by hand",
        ("python", "scripts/gen_validation_doc.py", "--check"),
    ),
    Step(
        "ratchet",
        ("python", "scripts/fidelity_ratchet.py", "--write"),
        "data/validation/fidelity_thresholds.toml (only ever lowered)",
        "the fidelity guard's figures",
        ("python", "scripts/fidelity_ratchet.py", "--check"),
    ),
)


def numeric_diffs(shipped, fresh, where: str = "", rel_tol: float = REL_TOL) -> list[str]:
    """Where two parsed TOML trees differ: numbers beyond ``rel_tol`` (relative, or 1e-12 absolute near zero),
    any other value, key or list length exactly.

    Args:
        shipped, fresh: parsed TOML values (dicts, lists, numbers, strings, booleans).
        where: the path of these values, for the message (``"h200: parameters.moe.fp8.hbm_fraction"``).

    Returns:
        One line per difference: ``"<where>: shipped <a>, fresh fit <b>"``; empty when current.
    """
    if isinstance(shipped, dict) and isinstance(fresh, dict):
        out = []
        for k in sorted(set(shipped) | set(fresh), key=str):
            at = f"{where}.{k}" if where else str(k)
            if k not in fresh:
                out.append(f"{at}: in the shipped file, not in a fresh fit")
            elif k not in shipped:
                out.append(f"{at}: in a fresh fit, not in the shipped file")
            else:
                out += numeric_diffs(shipped[k], fresh[k], at, rel_tol)
        return out
    if isinstance(shipped, list) and isinstance(fresh, list):
        if len(shipped) != len(fresh):
            return [f"{where}: {len(shipped)} entries shipped, {len(fresh)} in a fresh fit"]
        return [
            d for i, (a, b) in enumerate(zip(shipped, fresh)) for d in numeric_diffs(a, b, f"{where}[{i}]", rel_tol)
        ]
    if isinstance(shipped, bool) or isinstance(fresh, bool):  # True == 1 in Python; not here
        if type(shipped) is type(fresh) and shipped == fresh:
            return []
    elif isinstance(shipped, (int, float)) and isinstance(fresh, (int, float)):
        if math.isclose(shipped, fresh, rel_tol=rel_tol, abs_tol=1e-12):
            return []
    elif shipped == fresh:
        return []
    return [f"{where}: shipped {shipped!r}, fresh fit {fresh!r}"]


def toml_text_diffs(shipped_text: str, fresh_text: str, name: str, rel_tol: float = REL_TOL) -> list[str]:
    """:func:`numeric_diffs` of two TOML texts, each line prefixed with ``name`` (the file)."""
    return [
        f"{name}: {d}" for d in numeric_diffs(tomllib.loads(shipped_text), tomllib.loads(fresh_text), rel_tol=rel_tol)
    ]


def check_file(path, fresh_text: str, rel_tol: float = REL_TOL) -> int:
    """The fit scripts' ``--check``: print each difference of the shipped file ``path`` from ``fresh_text`` (a fresh
    fit's TOML) and how to refit, or that it is current; 1 when stale or not written yet, else 0."""
    from pathlib import Path

    path = Path(path)
    if not path.is_file():
        print(f"{path.name}: not written yet ({path}); run the script without --check to write it")
        return 1
    diffs = toml_text_diffs(path.read_text(), fresh_text, path.name, rel_tol)
    print(
        "\n".join(diffs) + f"\n{path.name}: differs from a fresh fit; rerun without --check"
        if diffs
        else f"{path.name}: current"
    )
    return 1 if diffs else 0


def check_copied_value(what: str, shipped: float, fitted: float, tol: float, show, fix: str) -> int:
    """The ``--check`` of a fit whose value is copied by hand into data/stacks.toml (scripts/sglang_rocm_release.py,
    scripts/first_wave_stall.py): print whether ``shipped`` is ``fitted`` within ``tol`` (half a unit of the last
    written digit), values shown by ``show``, else ``fix``; 1 when stale."""
    if abs(fitted - shipped) <= tol:
        print(f"{what}: {show(shipped)}, current")
        return 0
    print(f"{what}: data/stacks.toml has {show(shipped)}, the fit gives {show(fitted)}; {fix}")
    return 1


def calibration_diffs(names: list[str] | None = None, rel_tol: float = REL_TOL) -> list[str]:
    """The shipped calibration sets (``data/calibration/<system>.toml``) against a fresh ``jalapeno calibrate``
    written to a temporary folder (about a minute; needs the [calibrate] extra).

    Returns:
        :func:`numeric_diffs` lines, ``"<system>.toml: <field>: shipped ..., fresh fit ..."``; empty when current.
    """
    import tempfile
    from importlib import resources
    from pathlib import Path

    from jalapeno.fit.calibrate import calibrate_catalog

    shipped_dir = Path(str(resources.files("jalapeno") / "data" / "calibration"))
    with tempfile.TemporaryDirectory() as tmp:
        written = [n for n in calibrate_catalog(names, tmp) if not n.startswith("_")]
        return [
            d
            for n in sorted(written)
            for d in toml_text_diffs(
                (shipped_dir / f"{n}.toml").read_text(), (Path(tmp) / f"{n}.toml").read_text(), f"{n}.toml", rel_tol
            )
        ]
