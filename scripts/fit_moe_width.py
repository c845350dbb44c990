"""Fit the routed experts' width term (cost/moe_width.py) and write src/jalapeno/data/moe_width.toml.

Per system and compute format (fit/moe_width.PATHS): the (MoE TP k, EP 1)/(MoE TP 1, EP k) latency
ratios of aiconfigurator-core's TensorRT-LLM ``moe_perf`` table at >= 4096 tokens, fitted to
1 + ((c/w)^p − (c/I)^p)·m/(m + half_rows) (half_rows: the system's calibrated moe form), on every shape but DeepSeek's; DeepSeek's reported held out.
Run: python scripts/fit_moe_width.py [--check]   (needs aiconfigurator-core: pip install -e ".[calibrate]")
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jalapeno.cost.pricer import load_pricer
from jalapeno.fit.fitted_files import check_file
from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_table
from jalapeno.fit.moe_width import PATHS, fit_width, width_pairs

OUT = Path(__file__).resolve().parents[1] / "src" / "jalapeno" / "data" / "moe_width.toml"
#: systems whose TensorRT-LLM table is read (each its own tables; no sibling stand-ins)
SYSTEMS = ("h100", "h200", "b200", "gb200-nvl72", "b300", "gb300-nvl72")
HEADER = """# Written by scripts/fit_moe_width.py (fit/moe_width.py) - do not edit by hand.
# The routed experts' per-rank width term at MoE TP k (cost/moe_width.py): compute time x
# overhead per MAC (c_elems/w)^exponent beside the row penalty (1 + ((c/w)^p - (c/I)^p) m/(m + half_rows)), fitted on the (MoE TP k, EP 1)/(MoE TP 1, EP k) latency ratios at
# >= 4096 tokens of aiconfigurator-core's TensorRT-LLM moe_perf table (Apache License 2.0,
# github.com/ai-dynamo/aiconfigurator) of the system, every shape but DeepSeek's (7168, 256 experts,
# top-8) fitted, DeepSeek's held out; errors are absolute relative errors of the ratio.
"""


def entries() -> list[dict]:
    out = []
    for system in SYSTEMS:
        df, version = load_table(AIC_SYSTEM_DIRS[system], "moe", "moe_perf")
        eff = load_pricer(system).efficiency
        for fmt, cands in PATHS.items():
            for source, dtype in cands:
                pairs = width_pairs(df, source, dtype)
                if (~pairs.held_out).sum() >= 10:
                    break
            else:
                continue
            c, p, rep = fit_width(pairs, eff.moe_half(fmt))
            e = {
                "system": system,
                "fmt": fmt,
                "c_elems": round(c, 1),
                "exponent": round(p, 4),
                "table": f"aiconfigurator {AIC_SYSTEM_DIRS[system]} trtllm {version} moe_perf",
                "kernel_source": source,
                "moe_dtype": dtype,
                "fit_rows": rep["fit"]["rows"],
                "fit_median_ape": round(rep["fit"]["median_ape"], 4),
                "fit_p90_ape": round(rep["fit"]["p90_ape"], 4),
            }
            ho = rep["held_out_deepseek_shape"]
            if ho["rows"]:
                e.update(
                    held_out_rows=ho["rows"],
                    held_out_median_ape=round(ho["median_ape"], 4),
                    held_out_p90_ape=round(ho["p90_ape"], 4),
                )
            out.append(e)
    return out


def render(es: list[dict]) -> str:
    def v(x):
        return f'"{x}"' if isinstance(x, str) else repr(x)

    return HEADER + "".join("\n[[width]]\n" + "".join(f"{k} = {v(x)}\n" for k, x in e.items()) for e in es)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--check",
        action="store_true",
        help="fail if the file differs from a fresh fit (numbers beyond fit/fitted_files.REL_TOL)",
    )
    a = ap.parse_args()
    text = render(entries())
    if a.check:
        raise SystemExit(check_file(OUT, text))
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
