"""Write data/moe_backend_floors.toml: an engine MoE backend's fitted per-layer floor on every measured system
whose tables hold it (fit/floor_transfer.fit_backend_floors; TensorRT-LLM's Triton MoE on the six NVIDIA systems),
pooled for a chip without kernel tables (cost/pricer.with_moe_backend).

Reads aiconfigurator-core's installed tables (pip install -e ".[calibrate]").
Run: python scripts/fit_moe_backend_floors.py [--dry-run]   (seconds)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jalapeno.errors import JalapenoError
from jalapeno.fit.floor_transfer import fit_backend_floors

OUT = Path(__file__).resolve().parent.parent / "src" / "jalapeno" / "data" / "moe_backend_floors.toml"
HEADER = [
    "# Written by scripts/fit_moe_backend_floors.py (fit/floor_transfer.fit_backend_floors) - do not edit by hand.",
    "# The per-layer floor (s) of an engine MoE backend fitted through the roofline (fit/kernels.fit_moe) on the",
    "# backend's own rows of each measured system's aiconfigurator-core moe_perf table (Apache License 2.0,",
    "# github.com/ai-dynamo/aiconfigurator; read at fit time). Read by specs/moe_backends.pooled_backend_floor: a",
    "# chip without kernel tables prices the median over the systems other than itself and its twin.",
]


def _v(x) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, str):
        return '"' + x + '"'
    if isinstance(x, float):
        return repr(float(f"{x:.6g}"))
    return str(x)


def to_toml(entries: list[dict]) -> str:
    """``[[floor]]`` tables, one per (backend, system)."""
    lines = [*HEADER, ""]
    for e in entries:
        lines += ["[[floor]]", *(f"{k} = {_v(v)}" for k, v in e.items()), ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=f"Write {OUT.name}: fitted MoE-backend per-layer floors.")
    ap.add_argument("--dry-run", action="store_true", help=f"print the TOML instead of writing {OUT.name}")
    a = ap.parse_args(argv)
    try:
        text = to_toml(fit_backend_floors())
    except JalapenoError as e:
        print(e)
        return 2
    if a.dry_run:
        print(text)
    else:
        OUT.write_text(text)
        print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
