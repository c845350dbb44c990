"""Mutation check: apply one-line bugs to a copy of the repo and check the fast tests catch each.

For every row of :data:`MUTANTS` the script copies ``src/``, ``tests/``, ``docs/`` and ``pyproject.toml`` to
a temporary directory, replaces the row's exact ``old`` text by ``new`` in ``file`` (failing
loudly unless ``old`` occurs exactly once), runs the chosen tests there with ``PYTHONPATH``
pointing at the copy's ``src`` (checked: the copy, not the installed tree, is imported), and
prints a table mutant → killed/survived with the time taken. Exit status 1 if any mutant
survived, 2 if a mutant could not be applied (its ``old`` text moved).

Updating after a refactor: code moves, so a row's ``file``/``old`` may no longer match; the
script then stops with "not found". Find the line that now implements the same rule and edit
the row (keep the same ``name`` and the same *behavioural* bug) — the table is the only thing
to change. Add rows freely; each must make at least one fast test fail.

Usage::

    python scripts/mutants.py                # guards + CLI golden set (fast)
    python scripts/mutants.py --full         # tests/unit tests/golden tests/cli
    python scripts/mutants.py -k ring        # only mutants whose name contains "ring"
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: (name, file relative to the repo root, exact old text (must occur once), replacement).
MUTANTS: list[tuple[str, str, str, str]] = [
    (
        "a_ring_allreduce_bw_halved",
        "src/jalapeno/cost/collectives.py",
        'out["ring"] = 2 * (g - 1) * a + 2 * frac * m / bw',
        'out["ring"] = 2 * (g - 1) * a + frac * m / bw',
    ),
    (
        "b_hier_all_to_all_sum_not_max",
        "src/jalapeno/cost/collectives.py",
        'out["hierarchical"] = ao + _a2a_latency(inner, eff) + np.maximum(t_in, t_out)',
        'out["hierarchical"] = ao + _a2a_latency(inner, eff) + t_in + t_out',
    ),
    # one home since the pricer seam (issue 10): step_cost owns the MTP draft passes for the
    # analytic model, disaggregated pools and the simulator alike
    (
        "c_mtp_draft_cost_dropped",
        "src/jalapeno/cost/mtp_draft.py",
        "return np.where(seqs > 0, total, 0.0)",
        "return np.where(seqs > 0, 0 * total, 0.0)",
    ),
    # one home for sharding shapes (deploy/sharding.py), read by the memory fit and the op table
    (
        "d_experts_per_rank_floor",
        "src/jalapeno/deploy/sharding.py",
        "return math.ceil(model.moe.num_experts / ep)\n",
        "return math.floor(model.moe.num_experts / ep)\n",
    ),
    (
        "e1_experts_sharded_by_tp_not_ep",
        "src/jalapeno/deploy/sharding.py",
        "experts_per_rank=experts_per_rank(model, layout.ep, layout.eplb),",
        "experts_per_rank=experts_per_rank(model, layout.tp, layout.eplb),",
    ),
    (
        "e2_memory_fit_shared_by_ep_not_tp",
        "src/jalapeno/deploy/memory_fit.py",
        'out["shared_experts"] = model.shared_expert_params() * n_moe * per_stage / tp',
        'out["shared_experts"] = model.shared_expert_params() * n_moe * per_stage / layout.ep',
    ),
    # round 55 (tests55): one-line bugs every test of their module let through; tests/unit/test_mutation_guards55.py
    (
        "f_goal_bias_signed_not_absolute",
        "src/jalapeno/fit/goals.py",
        "if bias is not None and abs(np.median(err)) > bias:",
        "if bias is not None and np.median(err) > bias:",
    ),
    (
        "g_goal_p90_reads_p80",
        "src/jalapeno/fit/goals.py",
        "if p90 is not None and np.percentile(a, 90) > p90:",
        "if p90 is not None and np.percentile(a, 80) > p90:",
    ),
    (
        "h_frontend_split_drops_concurrency_8",
        "src/jalapeno/fit/heldout.py",
        "and p.concurrency <= FRONTEND_MAX_CONCURRENCY",
        "and p.concurrency < FRONTEND_MAX_CONCURRENCY",
    ),
    (
        "i_wave_gate_switch_not_read",
        "src/jalapeno/serve/later_waves.py",
        "        if WAVE_GATE_ON:  # the balancing gate at the wave's local rate (gate_shift_s)",
        "        if False:  # the balancing gate at the wave's local rate (gate_shift_s)",
    ),
    # round 55: killed by the CLI golden set only (tests/unit/test_analytic.py's hand-computed point kills k and m too)
    (
        "k_decode_steps_count_the_first_token",
        "src/jalapeno/serve/analytic.py",
        "    steps = (wl.mean_osl - 1) / a\n    cap, cap_name",
        "    steps = wl.mean_osl / a\n    cap, cap_name",
    ),
    (
        "l_gqa_decode_reads_k_not_v",
        "src/jalapeno/cost/attention.py",
        "kv=b * eff_ctx * 2 * kvr * kv_vec_bytes,",
        "kv=b * eff_ctx * kvr * kv_vec_bytes,",
    ),
    (
        "m_arrival_waits_a_whole_step",
        "src/jalapeno/serve/analytic.py",
        "ttft_q = {k: tau / 2 + pre_s[k]",
        "ttft_q = {k: tau + pre_s[k]",
    ),
    (
        "n_stack_fit_p90_reads_p80",
        "src/jalapeno/fit/stack_split.py",
        '"p90_ape": float(np.percentile(np.abs(g.error), 90)),',
        '"p90_ape": float(np.percentile(np.abs(g.error), 80)),',
    ),
]

#: Tests run against each mutant (fast: the hand-derived guards and the CLI golden set).
FAST_TESTS = [
    "tests/unit/test_mutation_guards.py",
    "tests/unit/test_mutation_guards55.py",
    "tests/golden/test_cli_golden.py",
]
#: ``--full``: the whole fast suite.
FULL_TESTS = ["tests/unit", "tests/golden", "tests/cli"]


class MutantError(RuntimeError):
    """A mutant's old text is missing or ambiguous in its file."""


def make_copy(dest: Path) -> None:
    """Copy src/, tests/, docs/ (tests read the documented schema), scripts/, benchmarks/, examples/ (the
    explore tests read its design spaces), README.md and pyproject.toml into ``dest`` (tests/unit/test_sources_in_repo.py scans all of them)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", "*.egg-info")
    for d in ("src", "tests", "docs", "scripts", "benchmarks", "examples"):
        shutil.copytree(ROOT / d, dest / d, ignore=ignore)
    for f in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / f, dest / f)


def apply_mutant(copy: Path, file: str, old: str, new: str) -> None:
    """Replace the single occurrence of ``old`` by ``new`` in ``copy/file``.

    Raises:
        MutantError: ``old`` occurs zero or several times.
    """
    path = copy / file
    text = path.read_text()
    n = text.count(old)
    if n != 1:
        raise MutantError(f"{file}: old text found {n} times (need exactly 1): {old!r}")
    path.write_text(text.replace(old, new))


def run_tests(copy: Path, tests: list[str]) -> tuple[bool, str]:
    """Run pytest on ``tests`` in ``copy`` importing the copy's ``src``; (passed, output tail)."""
    env = dict(
        os.environ,
        PYTHONPATH=str(copy / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
        PYTHONDONTWRITEBYTECODE="1",
    )
    probe = subprocess.run(
        [sys.executable, "-c", "import jalapeno; print(jalapeno.__file__)"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not probe.startswith(str(copy)):
        raise RuntimeError(f"the mutated copy is not the imported package ({probe}); check PYTHONPATH/editable install")
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
    )
    tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-3:])
    return p.returncode == 0, tail


def main() -> int:
    """Apply each mutant in turn, print the table; return 0 (all killed), 1 (survivor) or 2 (bad row)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help=f"run {' '.join(FULL_TESTS)} instead of the fast subset")
    ap.add_argument("-k", default="", help="only mutants whose name contains this")
    ap.add_argument("-v", action="store_true", help="print the pytest tail for each mutant")
    ns = ap.parse_args()
    tests = FULL_TESTS if ns.full else FAST_TESTS
    rows = [m for m in MUTANTS if ns.k in m[0]]
    results = []
    with tempfile.TemporaryDirectory(prefix="jalapeno-mutants-") as tmp:
        base = Path(tmp) / "clean"
        make_copy(base)
        ok, tail = run_tests(base, tests)
        if not ok:
            print(f"the unmutated tests fail; fix them first:\n{tail}")
            return 2
        for name, file, old, new in rows:
            work = Path(tmp) / name
            shutil.copytree(base, work)
            try:
                apply_mutant(work, file, old, new)
            except MutantError as e:
                print(f"ERROR {name}: {e}")
                return 2
            t0 = time.perf_counter()
            passed, tail = run_tests(work, tests)
            dt = time.perf_counter() - t0
            results.append((name, "survived" if passed else "killed", dt))
            if ns.v:
                print(f"--- {name}\n{tail}")
            shutil.rmtree(work)
    width = max(len(r[0]) for r in results) if results else 10
    print(f"{'mutant':{width}s}  {'result':8s}  time")
    for name, res, dt in results:
        print(f"{name:{width}s}  {res:8s}  {dt:5.1f} s")
    survivors = [r[0] for r in results if r[1] == "survived"]
    summary = f"{len(results) - len(survivors)}/{len(results)} killed"
    print(summary + (f"; SURVIVED: {', '.join(survivors)}" if survivors else ""))
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
