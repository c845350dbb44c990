"""Write data/collectives/a2a_floor.toml: TensorRT-LLM's NVLink one-sided MoE all-to-all, its measured per-call floor.

For every catalog system with an aiconfigurator-core folder (fit/kernel_tables.AIC_SYSTEM_DIRS) whose
``comm/trtllm/<v>/trtllm_alltoall_perf`` table exists — its own, else its fabric sibling's
(fit/kernel_tables.load_a2a_table: GB300 reads GB200's) — the floor of one call per EP size is the mean of
``alltoall_dispatch`` and ``alltoall_combine`` at the table's smallest token count a rank (1), NVLinkOneSided,
NVFP4, DeepSeek's shape (fit/ep_all_to_all.ep_all_to_all_floor). Read by cost/a2a_floor.py (shipped off).
Nothing is fitted: the rows are copied.

``--judge`` also prints, per EP size, the kernel-level error of the model's dispatch + combine on the table's
rows of 2-64 tokens a rank (the rows the floor was not read from), with the line alone and with the floor
(the shipped GB200 efficiency set; cost/collectives.collective_time per call).

Run: python scripts/fit_a2a_floor.py [--dry-run | --check | --judge]   (needs the ``[calibrate]`` extra; ``--check``:
exit 1 when the shipped file is not what a fresh read writes, a step of scripts/recalibrate.py)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml_tables import tables_toml, write_main  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "src" / "jalapeno" / "data" / "collectives" / "a2a_floor.toml"
HEADER = [
    "# Written by scripts/fit_a2a_floor.py - do not edit by hand; rerun the script.",
    "# Measured per-call floor (us) of TensorRT-LLM's NVLink one-sided MoE all-to-all per EP size: the mean of",
    "# one dispatch and one combine at one token a rank (NVFP4, hidden 7168, top-8 of 256 experts), read by",
    "# cost/a2a_floor.py (shipped off). Data: the trtllm_alltoall_perf tables shipped in NVIDIA's",
    "# aiconfigurator-core package (Apache License 2.0, github.com/ai-dynamo/aiconfigurator), copied by the script",
    "# and redistributed under that licence with this attribution; the package is read at fit time only.",
]


def entries() -> list[dict]:
    """One entry per catalog system with a (own or sibling's) all-to-all table."""
    from jalapeno.errors import SpecError
    from jalapeno.fit.ep_all_to_all import ep_all_to_all_floor
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_a2a_table

    out = []
    for name, sdir in AIC_SYSTEM_DIRS.items():
        try:
            table, version = load_a2a_table(sdir)
        except SpecError:
            continue
        f = ep_all_to_all_floor(table)
        label = version if " " in version else f"{sdir} {version}"
        out.append(
            {
                "system": name,
                "table": f"aiconfigurator {label.split()[0]} comm/trtllm/{label.split()[1]} "
                "trtllm_alltoall_perf NVLinkOneSided",
                "tokens_per_rank": int(f.tokens.min()),
                "ep": [int(e) for e in f.ep],
                "floor_us": [float(v) for v in f.floor_s * 1e6],
            }
        )
    return out


def judge() -> None:
    """Print the kernel-level error on GB200's table (module docstring, ``--judge``)."""
    import pandas as pd

    from jalapeno.cost.a2a_floor import a2a_floor_s
    from jalapeno.cost.collectives import collective_time
    from jalapeno.fit.ep_all_to_all import ep_all_to_all_frame
    from jalapeno.fit.kernel_tables import load_a2a_table
    from jalapeno.fit.table_lookup import load_any_pricer

    frame = ep_all_to_all_frame(load_a2a_table("gb200")[0])
    frame = frame[(frame.tokens >= 2) & (frame.tokens <= 64)].reset_index(drop=True)
    pr = load_any_pricer("gb200-nvl72", "calibrated", pricer="roofline")
    recs = []
    for ep, r in frame.groupby("ep"):
        calls = [
            collective_time("all_to_all", int(ep), r[c].to_numpy(), pr.system, pr.efficiency).time_s
            for c in ("dispatch_bytes", "combine_bytes")
        ]
        floor = a2a_floor_s("gb200-nvl72", int(ep))
        meas = r.time_s.to_numpy()
        recs.append(
            {
                "ep": int(ep),
                "rows": len(r),
                "line": float(np.median(sum(calls) / meas - 1)),
                "floored": float(np.median(sum(np.maximum(c, floor) for c in calls) / meas - 1)),
            }
        )
    rows = pd.DataFrame(recs).set_index("ep")
    print("kernel-level signed error, rows of 2-64 tokens a rank (median by EP size):")
    print(rows.round(3).to_string())


if __name__ == "__main__":
    if "--judge" in sys.argv[1:]:
        judge()
        raise SystemExit(0)
    raise SystemExit(
        write_main(
            sys.argv[1:],
            OUT,
            "TensorRT-LLM's measured NVLink all-to-all floor",
            lambda: tables_toml(HEADER, "floor", entries()),
        )
    )
