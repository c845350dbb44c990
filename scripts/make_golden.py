"""Regenerate the CLI golden set ``tests/golden/data/golden_cli.json``.

Runs each invocation of :data:`INVOCATIONS` through the ``jalapeno`` CLI in-process with
``--json`` and stores ``{"args": [...], "output": <parsed JSON>}`` per case. The golden test
(``tests/golden/test_cli_golden.py``) reruns every case and compares each leaf.

Only regenerate for a documented behaviour change (say which in the commit message); a
refactor must leave the file untouched.

Usage::

    python scripts/make_golden.py            # write the file
    python scripts/make_golden.py --check    # only report cases whose output changed
    python scripts/make_golden.py --only sim_gb200_r1_mtp   # rerun the named cases, keep the rest
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "golden" / "data" / "golden_cli.json"

#: (case name, CLI arguments without ``--json``). Keep each one fast (well under a few seconds).
INVOCATIONS: list[tuple[str, list[str]]] = [
    # ---- step: one forward step on one chip
    (
        "step_gb200_r1_dep8",
        [
            "step",
            "-s",
            "gb200-nvl72",
            "-m",
            "deepseek-r1",
            "--tp",
            "1",
            "--dp",
            "8",
            "--ep",
            "8",
            "-b",
            "256",
            "-c",
            "8192",
        ],
    ),
    (
        "step_gb200_r1_dep32_prefill",
        [
            "step",
            "-s",
            "gb200-nvl72",
            "-m",
            "deepseek-r1",
            "--tp",
            "1",
            "--dp",
            "32",
            "--ep",
            "32",
            "-b",
            "512",
            "-c",
            "4096",
            "--prefill-tokens",
            "8192",
        ],
    ),
    (
        "step_gb200_kimi_ep72",
        [
            "step",
            "-s",
            "gb200-nvl72",
            "-m",
            "kimi-k2.5",
            "--tp",
            "1",
            "--dp",
            "72",
            "--ep",
            "72",
            "-b",
            "1024",
            "-c",
            "8192",
        ],
    ),
    (
        "step_b200_gptoss_tp8",
        ["step", "-s", "b200", "-m", "gpt-oss-120b", "--tp", "8", "--dp", "1", "--ep", "8", "-b", "64", "-c", "2048"],
    ),
    (
        "step_h200_llama_tp4_pp2",
        [
            "step",
            "-s",
            "h200",
            "-m",
            "llama-3.3-70b",
            "--tp",
            "4",
            "--dp",
            "1",
            "--ep",
            "1",
            "--pp",
            "2",
            "-b",
            "32",
            "-c",
            "4096",
        ],
    ),
    (
        "step_jalapeno_r1_dep64",
        [
            "step",
            "-s",
            "jalapeno",
            "-m",
            "deepseek-r1",
            "--tp",
            "1",
            "--dp",
            "64",
            "--ep",
            "64",
            "-b",
            "2048",
            "-c",
            "8192",
            "--prefill-tokens",
            "4096",
        ],
    ),
    (
        "step_mi355x_qwen3_tp8",
        [
            "step",
            "-s",
            "mi355x",
            "-m",
            "qwen3-235b-a22b",
            "--tp",
            "8",
            "--dp",
            "1",
            "--ep",
            "8",
            "-b",
            "128",
            "-c",
            "8192",
        ],
    ),
    (
        "step_mi355x_r1_tp8_prefill",
        [
            "step",
            "-s",
            "mi355x",
            "-m",
            "deepseek-r1",
            "--tp",
            "8",
            "--dp",
            "1",
            "--ep",
            "1",
            "-b",
            "16",
            "-c",
            "1024",
            "--prefill-tokens",
            "2048",
        ],
    ),
    # ---- predict: aggregated, disaggregated, MTP, efficiency presets
    (
        "predict_gb200_r1_agg",
        ["predict", "-s", "gb200-nvl72", "-m", "deepseek-r1", "--tp", "1", "--dp", "8", "--ep", "8", "-c", "256"],
    ),
    (
        "predict_gb200_r1_disagg_mtp",
        [
            "predict",
            "-s",
            "gb200-nvl72",
            "-m",
            "deepseek-r1",
            "--prefill",
            "tp=4,ep=4,workers=2",
            "--decode",
            "dp=8,ep=8,workers=1",
            "-c",
            "128",
            "--mtp",
            "1",
            "--mtp-acceptance",
            "0.7",
        ],
    ),
    (
        "predict_gb200_r1_disagg",
        [
            "predict",
            "-s",
            "gb200-nvl72",
            "-m",
            "deepseek-r1",
            "--prefill",
            "tp=4,ep=4,workers=2",
            "--decode",
            "dp=32,ep=32,workers=1",
            "-c",
            "1024",
            "-w",
            "1k1k",
        ],
    ),
    (
        "predict_b200_r1_agg_mtp_spec",
        [
            "predict",
            "-s",
            "b200",
            "-m",
            "deepseek-r1",
            "--tp",
            "8",
            "--ep",
            "8",
            "-c",
            "64",
            "--mtp",
            "2",
            "--mtp-acceptance",
            "0.8",
            "--efficiency",
            "spec",
        ],
    ),
    (
        "predict_h200_llama_tp8_1k8k",
        ["predict", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "-c", "32", "-w", "1k8k", "--power", "chip"],
    ),
    (
        "predict_mi355x_gptoss_spec",
        [
            "predict",
            "-s",
            "mi355x",
            "-m",
            "gpt-oss-120b",
            "--tp",
            "1",
            "-c",
            "16",
            "--isl",
            "2000",
            "--osl",
            "500",
            "--fixed-lengths",
            "--efficiency",
            "spec",
        ],
    ),
    (
        "predict_jalapeno_r1_agg_rate",
        [
            "predict",
            "-s",
            "jalapeno",
            "-m",
            "deepseek-r1",
            "--tp",
            "1",
            "--dp",
            "32",
            "--ep",
            "32",
            "--eplb",
            "32",
            "-r",
            "20",
        ],
    ),
    (
        "predict_h200_qwen3_pp2_low",
        [
            "predict",
            "-s",
            "h200",
            "-m",
            "qwen3-235b-a22b",
            "--tp",
            "4",
            "--ep",
            "4",
            "--pp",
            "2",
            "-c",
            "32",
            "-w",
            "1k1k",
            "--efficiency",
            "low",
        ],
    ),
    # ---- collective
    (
        "coll_gb200_allreduce_72",
        ["collective", "-s", "gb200-nvl72", "--op", "all_reduce", "-g", "72", "-b", "1e3,1e6,1e9"],
    ),
    (
        "coll_h200_allreduce_ring_spread",
        ["collective", "-s", "h200", "--op", "all_reduce", "-g", "8", "-b", "1e4,1e9", "--placement", "spread"],
    ),
    ("coll_jalapeno_a2a_256", ["collective", "-s", "jalapeno", "--op", "all_to_all", "-g", "256", "-b", "1e5,1e7"]),
    ("coll_jalapeno_a2a_2048", ["collective", "-s", "jalapeno", "--op", "all_to_all", "-g", "2048", "-b", "1e6"]),
    ("coll_h200_a2a_hier_32", ["collective", "-s", "h200", "--op", "all_to_all", "-g", "32", "-b", "1e5,1e8"]),
    ("coll_h200_allreduce_hier_16", ["collective", "-s", "h200", "--op", "all_reduce", "-g", "16", "-b", "1e4,1e8"]),
    ("coll_mi355x_allgather_4", ["collective", "-s", "mi355x", "--op", "all_gather", "-g", "4", "-b", "1e7"]),
    # ---- simulate (seeded, small)
    (
        "sim_gb200_r1_mtp",
        [
            "simulate",
            "-s",
            "gb200-nvl72",
            "-m",
            "deepseek-r1",
            "--tp",
            "1",
            "--dp",
            "8",
            "--ep",
            "8",
            "-c",
            "16",
            "-n",
            "48",
            "--isl",
            "1024",
            "--osl",
            "128",
            "--mtp",
            "1",
            "--mtp-acceptance",
            "0.7",
            "--seed",
            "0",
        ],
    ),
]


#: Keys whose values depend on the machine (wall-clock timings); dropped from the stored outputs
#: and skipped by the golden test.
VOLATILE_KEYS = ("wall_s", "speedup")


def strip_volatile(obj):
    """Return ``obj`` (parsed JSON) without the keys of :data:`VOLATILE_KEYS`, at any depth."""
    if isinstance(obj, dict):
        return {k: strip_volatile(v) for k, v in obj.items() if k not in VOLATILE_KEYS}
    if isinstance(obj, list):
        return [strip_volatile(v) for v in obj]
    return obj


def run_cli(args: list[str]) -> dict:
    """Run ``jalapeno ARGS --json`` in-process and return the parsed JSON.

    Raises:
        RuntimeError: the command exited non-zero or printed no JSON.
    """
    from jalapeno.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main([*args, "--json"])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    if code != 0:
        raise RuntimeError(f"jalapeno {' '.join(args)} exited {code}: {err.getvalue().strip()}")
    return json.loads(out.getvalue())


def main() -> int:
    """Build (or with ``--check`` compare) the golden file; return the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the stored file, write nothing")
    ap.add_argument("--only", default=None, help="comma-separated case names: rerun only these, keep the rest")
    ns = ap.parse_args()
    only = set(ns.only.split(",")) if ns.only else None
    unknown = (only or set()) - {n for n, _ in INVOCATIONS}
    if unknown:
        ap.error(f"unknown case(s) {sorted(unknown)}")
    stored = json.loads(DATA.read_text())["cases"] if only else {}
    cases = {}
    t_all = time.perf_counter()
    for name, args in INVOCATIONS:
        if only is not None and name not in only and name in stored:
            cases[name] = stored[name]
            continue
        t0 = time.perf_counter()
        cases[name] = {"args": args, "output": strip_volatile(run_cli(args))}
        print(f"{name:36s} {time.perf_counter() - t0:6.2f} s", file=sys.stderr)
    print(f"total {time.perf_counter() - t_all:.1f} s", file=sys.stderr)
    doc = {
        "comment": "Generated by scripts/make_golden.py; regenerate only for a documented behaviour change.",
        "volatile_keys": list(VOLATILE_KEYS),
        "cases": cases,
    }
    if ns.check:
        old = json.loads(DATA.read_text())["cases"]
        changed = [n for n in cases if old.get(n) != cases[n]]
        print("changed: " + (", ".join(changed) or "none"))
        return 1 if changed else 0
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    print(f"wrote {DATA} ({len(cases)} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
