"""Write data/moe_backend_kernels.toml: the fitted routed-expert form of engine MoE backends measured
at other shapes than the served model's (fit/moe_backends.fit_backend_kernels; vLLM's Marlin MoE on H100).

Reads aiconfigurator-core's installed tables (pip install -e ".[calibrate]").
Run: python scripts/fit_moe_backend_kernels.py [--dry-run]   (seconds)
"""

from __future__ import annotations

import sys
from pathlib import Path

from jalapeno.fit.moe_backends import fit_backend_kernels

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml_tables import tables_toml, write_main  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "src" / "jalapeno" / "data" / "moe_backend_kernels.toml"
HEADER = [
    "# Written by scripts/fit_moe_backend_kernels.py (fit/moe_backends.fit_backend_kernels) - do not edit by hand.",
    "# The routed-expert form (specs/efficiency.py moe[fmt]: peak_fraction, half_rows, hbm_fraction; floor_s",
    "# per layer, priced only where floor_applied = true; c_elems, exponent: the width term of cost/moe_width.py at",
    "# expert TP > 1, fitted where the rows span several expert TPs, fit/moe_backend_width.py) of an engine MoE backend fitted through the roofline",
    "# on the backend's own rows of an aiconfigurator-core moe_perf table (Apache License 2.0,",
    "# github.com/ai-dynamo/aiconfigurator; read at fit time), with its fit and held-out (alternate token",
    "# counts) errors; read by specs/moe_backends.py, priced by cost/moe_backend.KernelMoePricer for the",
    "# pools whose recipe names the backend.",
]


def to_toml(entries: list[dict]) -> str:
    """``[[kernel]]`` tables, one per (system, backend, format)."""
    return tables_toml(HEADER, "kernel", entries)


def main(argv: list[str]) -> int:
    return write_main(argv, OUT, "fitted MoE-backend kernel forms", lambda: to_toml(fit_backend_kernels()))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
