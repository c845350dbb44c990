"""Write data/w4a16_moe_forms.toml: the measured W4A16 (INT4 weight-only) grouped-MoE forms of the SM100-family chips.

fit/w4a16_forms.fit_w4a16_forms on aiconfigurator-core's ``int4_wo`` ``moe_perf`` rows (Kimi K2.5's shape): SGLang's
FlashInfer trtllm-gen MXINT4 MoE and vLLM's Marlin MoE on B200, B300, GB200 and GB300, each with its fit / held-out
errors and the error of B200's form on the chip's own rows. Read by specs/w4a16_moe.py (shipped on since round 41); step ``w4a16_forms`` of
scripts/recalibrate.py's chain (fit/fitted_files.CHAIN, after the other table-only fits).

Reads aiconfigurator-core's installed tables (pip install -e ".[calibrate]").
Run: python scripts/fit_w4a16_forms.py [--dry-run | --check]   (seconds)
"""

from __future__ import annotations

import sys
from pathlib import Path

from jalapeno.fit.w4a16_forms import fit_w4a16_forms

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml_tables import tables_toml, write_main  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "src" / "jalapeno" / "data" / "w4a16_moe_forms.toml"
HEADER = [
    "# Written by scripts/fit_w4a16_forms.py (fit/w4a16_forms.fit_w4a16_forms) - do not edit by hand.",
    "# The W4A16 routed-expert form (peak_fraction of the chip's BF16 peak, half_rows per expert, hbm_fraction, floor_s",
    "# per layer) of one engine kernel on one SM100-family chip, fitted through the roofline on its int4_wo rows of an",
    "# aiconfigurator-core moe_perf table (Apache License 2.0, github.com/ai-dynamo/aiconfigurator; read at fit time),",
    "# with fit / held-out (alternate token counts) errors and the median error of B200's form on the chip's rows",
    "# (transfer_*); read by specs/w4a16_moe.py (docs/model.md §11.3).",
]


def main(argv: list[str]) -> int:
    return write_main(argv, OUT, "measured W4A16 MoE forms", lambda: tables_toml(HEADER, "form", fit_w4a16_forms()))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
