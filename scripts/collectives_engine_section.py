"""docs/collectives.md's section on the engine's measured all-reduce (read by scripts/check_collectives.py)."""

from __future__ import annotations

import numpy as np

from jalapeno.cost.pricer import load_pricer


def engine_allreduce_section(_size) -> list[str]:
    """TensorRT-LLM's measured all-reduce (the table the ``trtllm`` stacks price TP all-reduces from,
    cost/engine_allreduce.py) against the link-hierarchy model it replaces, at the largest TP size
    each system's table has. ``_size``: formats a byte count for a column header."""
    from jalapeno.cost.engine_allreduce import engine_all_reduce_curve

    sizes = [2.0 ** k for k in (12, 16, 18, 19, 20, 21, 22, 23, 24)]
    lines = ["## The engine's measured all-reduce (TensorRT-LLM, cost/engine_allreduce.py)", "",
             "Pools on the `trtllm` and `dynamo-trtllm` stacks price each TP all-reduce from TensorRT-LLM's",
             "own `AllReduce` op as measured on the system (aiconfigurator-core `custom_allreduce_perf`, AUTO",
             "strategy, BF16; data/collectives/engine_allreduce.toml), log-log interpolated in the message",
             "size; the link-hierarchy model (the system's custom all-reduce ramp, NCCL ring, NVLS: the",
             "fastest) prices it elsewhere. No message is priced slower than a larger one of its curve (the",
             "running minimum from the largest size down, docs/model.md §5): A100's 1 MiB row, 83.2 us in the",
             "source (one row, above the 53.6 us at 2 MiB), is priced and shown below at 53.6 us. Measured (as",
             "priced) / model (us) per rank's message, at TP 8 (TP 4 on the NVL72 trays, whose tables stop",
             "there); error = model / measured - 1:", "",
             "| system | TP | " + " | ".join(_size(m) for m in sizes) + " |", "|---|---|" + "---|" * len(sizes)]
    for name in ("a100-sxm", "h100", "h200", "b200", "b300", "gb200-nvl72", "gb300-nvl72"):
        p = load_pricer(name)
        tp = next((g for g in (8, 4) if engine_all_reduce_curve(name, "trtllm", g) is not None), None)
        if tp is None:
            continue
        lm, lt, _ = engine_all_reduce_curve(name, "trtllm", tp)
        meas = np.exp(np.interp(np.log(sizes), lm, lt))
        model = p.collective("all_reduce", tp, np.array(sizes)).time_s
        lines.append(f"| {name} | {tp} | " + " | ".join(f"{a * 1e6:.1f} / {b * 1e6:.1f} ({b / a - 1:+.0%})"
                                                        for a, b in zip(meas, model)) + " |")
    lines += ["", "Reading: the ramp is one curve per system fitted on every size and TP size at once (next",
              "section); at TP 8 from 512 KiB to 8 MiB (37-585 decode rows of DeepSeek's 7,168 hidden) it is",
              "22-53% fast on H100, H200, B200 and B300, 6-39% on GB200's TP 4; on GB300 it is 0-20% slow above",
              "256 KiB. The measured table carries the engine's own strategy choice, so the `trtllm` stacks",
              "take it as it is (docs/model.md §5).", ""]
    return lines
