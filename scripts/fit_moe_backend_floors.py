"""Write data/moe_backend_floors.toml: an engine MoE backend's fitted per-layer floor on every measured system
whose tables hold it (fit/floor_transfer.fit_backend_floors; TensorRT-LLM's Triton MoE on the six NVIDIA systems),
pooled for a chip without kernel tables (cost/pool_backends.with_moe_backend).

Reads aiconfigurator-core's installed tables (pip install -e ".[calibrate]").
Run: python scripts/fit_moe_backend_floors.py [--dry-run]   (seconds)
"""

from __future__ import annotations

import sys
from pathlib import Path

from jalapeno.fit.floor_transfer import fit_backend_floors

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml_tables import tables_toml, write_main  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "src" / "jalapeno" / "data" / "moe_backend_floors.toml"
HEADER = [
    "# Written by scripts/fit_moe_backend_floors.py (fit/floor_transfer.fit_backend_floors) - do not edit by hand.",
    "# The per-layer floor (s) of an engine MoE backend fitted through the roofline (fit/kernels.fit_moe) on the",
    "# backend's own rows of each measured system's aiconfigurator-core moe_perf table (Apache License 2.0,",
    "# github.com/ai-dynamo/aiconfigurator; read at fit time). Read by specs/moe_backends.pooled_backend_floor: a",
    "# chip without kernel tables prices the median over the systems other than itself and its twin.",
]


def to_toml(entries: list[dict]) -> str:
    """``[[floor]]`` tables, one per (backend, system)."""
    return tables_toml(HEADER, "floor", entries)


def main(argv: list[str]) -> int:
    return write_main(argv, OUT, "fitted MoE-backend per-layer floors", lambda: to_toml(fit_backend_floors()))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
