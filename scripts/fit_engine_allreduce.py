"""Write data/collectives/engine_allreduce.toml: the serving engines' own all-reduce, as measured.

For every catalog system with an aiconfigurator-core folder (fit/kernel_tables.AIC_SYSTEM_DIRS) and
each engine of :data:`ENGINES`, the newest ``custom_allreduce_perf`` table of that engine's folder
(fit/kernel_tables.load_table: the pinned version when present) gives, per TP size, the latency
(ms) of one BF16 all-reduce against its message (``message_size`` is in BF16 elements:
aiconfigurator collector/network/collect_all_reduce.py; stored here in bytes). TensorRT-LLM's table
times its ``AllReduce`` op with the AUTO strategy (the one-shot / two-shot / NCCL choice the engine
makes itself); SGLang's rows are its custom all-reduce replayed in a CUDA graph (kernel_source
``SGLang_CustomAllReduce_graph``; the eager rows include a buffer copy a graph-captured step does
not make); vLLM's likewise (``vLLM_custom_graph``: its custom all-reduce replayed in a CUDA graph, as
vLLM's decode runs it). Read by cost/engine_allreduce.py for pools whose software stack names the engine
(Efficiency.all_reduce_table, data/stacks.toml). Nothing is fitted: the rows are copied.

Run: python scripts/fit_engine_allreduce.py [--check]   (needs the ``[calibrate]`` extra; ``--check``: exit 1 when the
shipped file is not what a fresh read writes, a step of scripts/recalibrate.py)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml_tables import emit  # noqa: E402

#: engine → (aiconfigurator backend folder, kernel_source kept, or None for the table's only one)
ENGINES = {
    "trtllm": ("trtllm", None),
    "sglang": ("sglang", "SGLang_CustomAllReduce_graph"),
    "vllm": ("vllm", "vLLM_custom_graph"),
}

HEADER = """\
# Written by scripts/fit_engine_allreduce.py - do not edit by hand; rerun the script.
# Measured latency (ms) of one BF16 all-reduce of the serving engine's own kernels against the
# message each rank holds (bytes), per TP size, read by cost/engine_allreduce.py for the pools whose
# software stack names the engine (data/stacks.toml all_reduce_table; docs/collectives.md).
# Data: the custom_allreduce_perf tables shipped in NVIDIA's aiconfigurator-core package (Apache
# License 2.0, github.com/ai-dynamo/aiconfigurator), copied by the script and redistributed under
# that licence with this attribution; the package itself is read at fit time only.
# Copied as measured; cost/engine_allreduce.py prices no message slower than a larger one of its
# curve (the running minimum from the largest size down). Points over 10% above a larger size's
# time are listed above their curve ("as in the source").
"""


#: A point more than this above a larger message's time is listed in the data file (below it the
#: tables' flat small-message floor wobbles by up to ~8% from row to row: noise, still priced by the rule).
LISTED_ABOVE = 1.10


def _above_larger(g) -> list[str]:
    """Comment lines for the points the table measured over :data:`LISTED_ABOVE` x slower than a
    larger message (as in the source; cost/engine_allreduce.monotone_latency prices every point at
    most at the fastest larger size's time)."""
    b, t = [int(m) * 2 for m in g.message_size], list(g.latency)
    out = []
    for i in range(len(t) - 1):
        j = min(range(i + 1, len(t)), key=lambda k: t[k])
        if t[i] > LISTED_ABOVE * t[j]:
            out.append(
                f"# as in the source: {b[i]} B measured {t[i] * 1e3:.3g} us, above {t[j] * 1e3:.3g} us at "
                f"{b[j]} B; priced at the latter (cost/engine_allreduce.py)"
            )
    return out


def main(out: Path, check: bool = False) -> int:
    from jalapeno.errors import SpecError
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_table

    lines = [HEADER]
    for name, sdir in AIC_SYSTEM_DIRS.items():
        for engine, (folder, source) in ENGINES.items():
            try:
                df, version = load_table(sdir, "comm", "custom_allreduce_perf", backend=folder)
            except SpecError:
                continue
            if source is not None:
                df = df[df.kernel_source == source]
            df = df[df.allreduce_dtype == "bfloat16"]
            for tp, g in sorted(df.groupby("num_gpus")):
                g = g.groupby("message_size", as_index=False).latency.median().sort_values("message_size")
                lines += [
                    "[[curve]]",
                    *_above_larger(g),
                    f'system = "{name}"',
                    f'engine = "{engine}"',
                    f"tp = {int(tp)}",
                    f'table = "aiconfigurator {sdir} comm/{folder}/{version} custom_allreduce_perf'
                    + (f" {source}" if source else "")
                    + '"',
                    "message_bytes = [" + ", ".join(str(int(m) * 2) for m in g.message_size) + "]",
                    "latency_ms = [" + ", ".join(f"{v:.6g}" for v in g.latency) + "]",
                    "",
                ]
    return emit(out, lambda: "\n".join(lines), False, check)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the shipped file is not what a fresh read writes")
    raise SystemExit(
        main(
            Path(__file__).resolve().parents[1] / "src" / "jalapeno" / "data" / "collectives" / "engine_allreduce.toml",
            ap.parse_args().check,
        )
    )
