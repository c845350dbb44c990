"""Write data/moe_backends.toml: the measured routed-expert latency of each TensorRT-LLM MoE backend.

Runs fit/moe_backends.measured_curves (which rows, which shapes: its docstring; the MXFP4 curves:
fit/moe_backends.mxfp4_curves; vLLM's FlashInfer TRT-LLM FP8 curves: fit/vllm_moe_curves.vllm_curves, B200 and B300
vLLM tables) on aiconfigurator's B200, GB200, H100 and H200 ``moe_perf`` tables (pip install -e ".[calibrate]"); the ``cutedsl`` curves are read
from a checkout of github.com/ai-dynamo/aiconfigurator (fit/moe_backends.REPO_TABLES: not in the
released package), given as ``--aic-repo PATH`` (``git clone`` it and check out 095f58a51c4c).
Run: python scripts/fit_moe_backends.py --aic-repo PATH [--dry-run]   (seconds)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jalapeno.fit.moe_backends import REPO_TABLES, measured_curves

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml_tables import emit, toml_value  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "src" / "jalapeno" / "data" / "moe_backends.toml"


def to_toml(curves: list[dict], report: dict) -> str:
    """``[[curve]]`` tables and ``[report.<system>.<backend>]``."""
    lines = [
        "# Written by scripts/fit_moe_backends.py (fit/moe_backends.py) - do not edit by hand; rerun the script.",
        "# Measured per-layer latency (ms) of one TensorRT-LLM MoE backend (moe_config.backend) against the",
        "# tokens of the expert-parallel group, at the routed-expert shapes of the catalog's MoE models;",
        "# read by specs/moe_backends.py and priced by cost/moe_backend.py for the pools whose recipe names",
        "# the backend (data/engines.toml `moe_backend`; docs/model.md §8.6).",
        "# Data: a small subset of the moe_perf tables shipped in NVIDIA's aiconfigurator-core package",
        "# (Apache License 2.0, github.com/ai-dynamo/aiconfigurator), selected by the script and",
        "# redistributed under that licence with this attribution; the package itself is read at fit time.",
        "# The cutedsl curves: SGLang's FlashInfer CuTe-DSL NVFP4 MoE rows of the same project's source",
        "# tree (commit named in each curve's table; not in the released package), same licence.",
        '# Curves with weights = "mxfp4": MXFP4-stored experts run as W4A8 MXFP4 x MXFP8 (fmt fp8) on the',
        "# TRT-LLM-gen kernels (gpt-oss-120b; fit/moe_backends.MXFP4_SOURCES), priced only for ops whose",
        "# experts are stored in MXFP4 (cost/optable.MOE_WEIGHT_KEYS).",
        "# Backend flashinfer_trtllm: vLLM's FlashInfer TRT-LLM-gen FP8 block-scale (fmt fp8) and NVFP4 (fmt fp4)",
        "# MoE, from aiconfigurator's vLLM moe_perf tables (the kernels vLLM selects there;",
        "# fit/moe_backends.VLLM_TABLES, VLLM_NVFP4_TABLES), one curve per format at every expert TP",
        "# (moe_tp) the tables measure; a layout without its own moe_tp row in a format reads that format's",
        "# EP row of as many ranks (cost/pricer.with_moe_backend).",
        "",
    ]
    for c in curves:
        lines.append("[[curve]]")
        lines += [f"{k} = {toml_value(v)}" for k, v in c.items()]
        lines.append("")
    for system, backends in report.items():
        for backend, r in backends.items():
            for sub, part in [("", {k: v for k, v in r.items() if not isinstance(v, dict)})] + [
                (f".{k}", v) for k, v in r.items() if isinstance(v, dict)
            ]:
                if part:
                    lines.append(f'[report."{system}".{backend}{sub}]')
                    lines += [f"{k} = {toml_value(v)}" for k, v in part.items()]
                    lines.append("")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=f"Write {OUT.name}: measured MoE-backend curves from aiconfigurator.")
    ap.add_argument(
        "--aic-repo",
        metavar="PATH",
        help="a checkout of github.com/ai-dynamo/aiconfigurator "
        f"(for {', '.join(REPO_TABLES)}; needed unless --dry-run)",
    )
    ap.add_argument("--dry-run", action="store_true", help=f"print the TOML instead of writing {OUT.name}")
    a = ap.parse_args(argv)
    repo = a.aic_repo
    if repo is None and not a.dry_run:
        print(
            f"--aic-repo PATH is needed to write {OUT.name}: without it the curves of "
            f"{', '.join(REPO_TABLES)} would be dropped (a checkout of github.com/ai-dynamo/aiconfigurator)"
        )
        return 2
    return emit(OUT, lambda: to_toml(*measured_curves(repo=repo)), a.dry_run)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
