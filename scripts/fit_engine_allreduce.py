"""Write data/collectives/engine_allreduce.toml: the serving engines' own all-reduce, as measured.

For every catalog system with an aiconfigurator-core folder (fit/kernel_tables.AIC_SYSTEM_DIRS) and
each engine of :data:`ENGINES`, the newest ``custom_allreduce_perf`` table of that engine's folder
(fit/kernel_tables.load_table: the pinned version when present) gives, per TP size, the latency
(ms) of one BF16 all-reduce against its message (``message_size`` is in BF16 elements:
aiconfigurator collector/network/collect_all_reduce.py; stored here in bytes). TensorRT-LLM's table
times its ``AllReduce`` op with the AUTO strategy (the one-shot / two-shot / NCCL choice the engine
makes itself); SGLang's rows are its custom all-reduce replayed in a CUDA graph (kernel_source
``SGLang_CustomAllReduce_graph``; the eager rows include a buffer copy a graph-captured step does
not make). Read by cost/engine_allreduce.py for pools whose software stack names the engine
(Efficiency.all_reduce_table, data/stacks.toml). Nothing is fitted: the rows are copied.

Run: python scripts/fit_engine_allreduce.py   (needs the ``[calibrate]`` extra)
"""

from __future__ import annotations

from pathlib import Path

#: engine → (aiconfigurator backend folder, kernel_source kept, or None for the table's only one)
ENGINES = {"trtllm": ("trtllm", None), "sglang": ("sglang", "SGLang_CustomAllReduce_graph")}

HEADER = """\
# Written by scripts/fit_engine_allreduce.py - do not edit by hand; rerun the script.
# Measured latency (ms) of one BF16 all-reduce of the serving engine's own kernels against the
# message each rank holds (bytes), per TP size, read by cost/engine_allreduce.py for the pools whose
# software stack names the engine (data/stacks.toml all_reduce_table; docs/collectives.md).
# Data: the custom_allreduce_perf tables shipped in NVIDIA's aiconfigurator-core package (Apache
# License 2.0, github.com/ai-dynamo/aiconfigurator), copied by the script and redistributed under
# that licence with this attribution; the package itself is read at fit time only.
"""


def main(out: Path) -> None:
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
                lines += ["[[curve]]", f'system = "{name}"', f'engine = "{engine}"', f"tp = {int(tp)}",
                          f'table = "aiconfigurator {sdir} comm/{folder}/{version} custom_allreduce_perf'
                          + (f" {source}" if source else "") + '"',
                          "message_bytes = [" + ", ".join(str(int(m) * 2) for m in g.message_size) + "]",
                          "latency_ms = [" + ", ".join(f"{v:.6g}" for v in g.latency) + "]", ""]
    out.write_text("\n".join(lines))
    print(f"wrote {out}")


if __name__ == "__main__":
    main(Path(__file__).resolve().parents[1] / "src" / "jalapeno" / "data" / "collectives" / "engine_allreduce.toml")
