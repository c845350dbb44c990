"""TTFT under load through the CLI: ``jalapeno predict`` against ``jalapeno simulate`` with shipped
engine recipes and software stacks (issue 18, 6a; docs/model.md §8.7).

Every case runs both commands in-process (cli/app.main, ``--json``) with the same options a user
gives — ``--engine`` (recipe: limits, KV dtype, memory profile, MTP) or ``--stack``, the layout or
the disaggregated pools — so that the recipe's path (cli/engine_opts.recipe_run, limit_kwargs) is
what is compared, not a hand-built Deployment. ``simulate`` runs InferenceX's protocol
(``--warmup 0``: 10·C counted requests from an idle server, C at once), which is what ``predict``
models. Prints one markdown row per point (analytic and simulated mean TTFT, error, the analytic
limit) and the median / largest |error| with the share within 15%.

Run: python scripts/ttft_recipe_grid.py [--quick] [--only SUBSTRING] [--concurrency 1 64 ...]
(the full grid takes ~20-40 min on one core; --quick: C = 8, 64, 256 at 8k/1k only, ~5 min).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import time

import numpy as np

from jalapeno.cli.app import main as cli_main

#: (label, model, system, engine/stack options, layout or pool options); ``--engine`` runs a
#: shipped recipe (data/engines.toml), ``--stack`` a software-stack profile where no recipe exists
#: (vLLM; Kimi K2.5 and gpt-oss-120b on SGLang/TRT-LLM). Disaggregated pools follow identified
#: recipe entries (data/engines.toml [[identified]]) scaled down where noted.
CASES = (
    ("sglang h200 dsr1 fp8 tp8", "deepseek-r1", "h200", ["--engine", "sglang-h200-dsr1-fp8"], ["--tp", "8"]),
    ("sglang b200 dsr1 fp8 tp8", "deepseek-r1", "b200", ["--engine", "sglang-b200-dsr1-fp8"], ["--tp", "8"]),
    ("sglang b200 dsr1 fp4 tp4", "deepseek-r1", "b200", ["--engine", "sglang-b200-dsr1-fp4"], ["--tp", "4"]),
    ("sglang mi300x dsr1 fp8 tp8", "deepseek-r1", "mi300x", ["--engine", "sglang-mi300x-dsr1-fp8"], ["--tp", "8"]),
    ("sglang mi355x dsr1 fp4 tp8", "deepseek-r1", "mi355x", ["--engine", "sglang-mi355x-dsr1-fp4"], ["--tp", "8"]),
    (
        "trtllm h200 dsr1 fp8 mtp tep8",
        "deepseek-r1",
        "h200",
        ["--engine", "trtllm-h200-dsr1-fp8-mtp"],
        ["--tp", "8", "--ep", "8"],
    ),
    (
        "trtllm b200 dsr1 fp4 mtp tep8",
        "deepseek-r1",
        "b200",
        ["--engine", "trtllm-b200-dsr1-fp4-mtp"],
        ["--tp", "8", "--ep", "8"],
    ),
    ("atom mi355x dsr1 fp8 mtp tp8", "deepseek-r1", "mi355x", ["--engine", "atom-mi355x-dsr1-fp8-mtp"], ["--tp", "8"]),
    ("vllm h200 gpt-oss tp2", "gpt-oss-120b", "h200", ["--stack", "vllm"], ["--tp", "2"]),
    ("vllm b200 kimi tp8", "kimi-k2.5", "b200", ["--stack", "vllm"], ["--tp", "8"]),
    ("sglang h200 kimi tp8", "kimi-k2.5", "h200", ["--stack", "sglang"], ["--tp", "8"]),
    ("trtllm b200 gpt-oss tp1", "gpt-oss-120b", "b200", ["--stack", "trtllm"], ["--tp", "1"]),
    (
        "dynamo-trt h200 dsr1 fp8 disagg",
        "deepseek-r1",
        "h200",
        ["--engine", "dynamo-trt-dsr1-fp8"],
        ["--prefill", "dp=8,ep=8,workers=1", "--decode", "dp=8,ep=8,workers=1"],
    ),
    (
        "dynamo-trt gb200 dsr1 fp4 disagg",
        "deepseek-r1",
        "gb200-nvl72",
        ["--engine", "dynamo-trt-dsr1-fp4"],
        ["--prefill", "dp=4,ep=4,workers=2", "--decode", "dp=16,ep=16,workers=1"],
    ),
    (
        "dynamo-trt gb200 gpt-oss disagg",
        "gpt-oss-120b",
        "gb200-nvl72",
        ["--engine", "dynamo-trt-gptoss-fp4"],
        ["--prefill", "tp=1,workers=1", "--decode", "dp=2,ep=2,workers=1"],
    ),
    (
        "dynamo-sglang b200 dsr1 fp4 mtp disagg",
        "deepseek-r1",
        "b200",
        ["--engine", "dynamo-sglang-b200-dsr1-fp4-mtp"],
        ["--prefill", "dp=4,ep=4,workers=1", "--decode", "dp=4,ep=4,workers=1"],
    ),
    (
        "sglang-mori mi355x dsr1 fp4 disagg",
        "deepseek-r1",
        "mi355x",
        ["--engine", "sglang-mori-mi355x-dsr1-fp4-dep"],
        ["--prefill", "dp=8,ep=8,workers=1", "--decode", "dp=8,ep=8,workers=1"],
    ),
)
WORKLOADS = ("1k1k", "8k1k")
CONCURRENCIES = (1, 8, 64, 256, 1024)
TOL = 0.15  # issue 18: the analytic TTFT within 15% of the simulator's


def cli_json(*args: str) -> dict:
    """``jalapeno ARGS --json`` in-process: the parsed JSON, or {"error": the one error line}."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            cli_main([*args, "--json"])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except Exception as e:  # a crash (a bug) is reported as the point's refusal, not the grid's end
            return {"error": f"{type(e).__name__}: {e}"}
    if code:
        return {"error": err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else f"exit {code}"}
    s = out.getvalue()
    return json.loads(s[s.index("{") :])


def point(model: str, system: str, engine: list[str], layout: list[str], wl: str, c: int) -> dict:
    """One grid point: both commands' mean TTFT, the analytic limit and the error (or the refusal)."""
    common = ["-s", system, "-m", model, "-w", wl, "-c", str(c), *engine, *layout]
    a = cli_json("predict", *common)
    if "error" in a:
        return {"skip": "predict: " + a["error"]}
    t0 = time.perf_counter()
    s = cli_json("simulate", *common, "--warmup", "0")
    if "error" in s:
        return {"skip": "simulate: " + s["error"]}
    sim = s["summary"]
    return {
        "ana": a["ttft_s"],
        "sim": sim["ttft_s"]["mean"],
        "err": a["ttft_s"] / sim["ttft_s"]["mean"] - 1,
        "limit": a["limit"] or "-",
        "queue": a["queue_s"],
        "sim_queue": sim["queue_s"]["mean"],
        "wall": time.perf_counter() - t0,
    }


def main(only: str | None, workloads, concurrencies) -> None:
    print("| case | workload | C | analytic TTFT s | simulated TTFT s | error | analytic limit |")
    print("|---|---|---|---|---|---|---|")
    errs, skipped = [], []
    for label, model, system, engine, layout in CASES:
        if only and only not in label:
            continue
        for wl in workloads:
            for c in concurrencies:
                p = point(model, system, engine, layout, wl, c)
                if "skip" in p:
                    skipped.append(f"{label} {wl} C={c}: {p['skip']}")
                    continue
                errs.append(abs(p["err"]))
                print(
                    f"| {label} | {wl} | {c} | {p['ana']:.3f} | {p['sim']:.3f} | {p['err']:+.1%} | {p['limit']} |",
                    flush=True,
                )
    for s in skipped:
        print(f"skipped: {s}")
    if errs:
        e = np.array(errs)
        print(
            f"\n{e.size} points: median |error| {np.median(e):.1%}, largest {e.max():.1%}, "
            f"within {TOL:.0%}: {np.mean(e <= TOL):.0%}"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="C = 8, 64, 256 at 8k/1k only")
    ap.add_argument("--only", help="cases whose label contains this text")
    ap.add_argument("--concurrency", type=int, nargs="+", help="concurrencies (default 1 8 64 256 1024)")
    args = ap.parse_args()
    wls = ("8k1k",) if args.quick else WORKLOADS
    cs = tuple(args.concurrency) if args.concurrency else ((8, 64, 256) if args.quick else CONCURRENCIES)
    main(args.only, wls, cs)
