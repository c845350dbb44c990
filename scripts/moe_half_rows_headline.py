"""What-if: the routed experts without a row penalty (``moe.<f>.half_rows`` = 16 or 0), on Jalapeño alone or on every
system: `jalapeno compare -m MODEL` at 8k1k, peak tok/s/chip and Jalapeño / GB300 per chip and per kW all-in.

The table of docs/model.md §11.3 ("Sensitivity: the headline with the experts at max(HBM, compute at full tiles)").
The keys set are every routed-expert entry a model can be priced by: the compute formats fp8, fp4, bf16 and
``w4a16`` (weight-only INT4 experts' measured kernel form, specs/w4a16_moe.py; Kimi K2.5 since round 41). A key a
set does not price with changes nothing there. Nothing is shipped: the what-if runs through ``--set``.

Run: PYTHONPATH=src python scripts/moe_half_rows_headline.py [MODEL ...]   (default: deepseek-r1 gpt-oss-120b
kimi-k2.5; about 10 s per model)
Prints one Markdown row per model: Jalapeño default, GB300, ratio (per kW); Jalapeño alone at 16 rows, ratio;
Jalapeño alone at 0, ratio; every system at 0: GB300, ratio.
"""

from __future__ import annotations

import json
import subprocess
import sys

#: the routed-expert entries whose half rows the what-if sets (compute formats, then the W4A16 form's key)
KEYS = ("fp8", "fp4", "bf16", "w4a16")
MODELS = ("deepseek-r1", "gpt-oss-120b", "kimi-k2.5")


def headline(model: str, sets: list[str]) -> tuple[float, float, float, float]:
    """(Jalapeño peak tok/s/chip, GB300's, Jalapeño / GB300 per chip, per kW all-in) of `compare -m model`."""
    argv = [sys.executable, "-m", "jalapeno", "compare", "-m", model, "--json"]
    for s in sets:
        argv += ["--set", s]
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(f"{' '.join(argv[1:])}: {out.stderr.strip()[-500:]}")
    d = json.loads(out.stdout)
    jal = next(k for k in d["systems"] if k.startswith("jalapeno"))  # '--set NAME:...' renames the variant
    gb3 = next(k for k in d["systems"] if k.startswith("gb300-nvl72"))
    r = d["comparisons"][jal]["peak_ratio"]
    return (
        d["systems"][jal]["headline"]["peak_throughput_per_chip"],
        d["systems"][gb3]["headline"]["peak_throughput_per_chip"],
        r["throughput_per_chip"],
        r["tok_s_per_kw"],
    )


def row(model: str) -> str:
    """One Markdown row of the table (module docstring)."""
    j, g, r, k = headline(model, [])
    cells = [model, f"{j:,.0f}", f"{g:,.0f}", f"{r:.3f} ({k:.3f})"]
    for rows in ("16", "0"):
        j, _, r, k = headline(model, [f"jalapeno:efficiency.moe.{f}.half_rows={rows}" for f in KEYS])
        cells += [f"{j:,.0f}", f"{r:.3f} ({k:.3f})"]
    _, g, r, k = headline(model, [f"efficiency.moe.{f}.half_rows=0" for f in KEYS])
    cells += [f"{g:,.0f}", f"{r:.3f} ({k:.3f})"]
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str]) -> int:
    print(
        "| model | Jalapeño default | GB300 | ratio /chip (/kW) | Jalapeño only at 16 | ratio (/kW) | Jalapeño only at 0 "
        "| ratio (/kW) | every system at 0: GB300 | ratio (/kW) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for m in argv or MODELS:
        print(row(m), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
