"""docs/collectives.md's section on the engine's measured all-reduce (read by scripts/check_collectives.py)."""

from __future__ import annotations

import numpy as np

from jalapeno.cost.pricer import load_pricer


def engine_allreduce_section(_size) -> list[str]:
    """TensorRT-LLM's measured all-reduce (the table the ``trtllm`` stacks price TP all-reduces from,
    cost/engine_allreduce.py) against the link-hierarchy model it replaces, at the largest TP size
    each system's table has. ``_size``: formats a byte count for a column header."""
    from jalapeno.cost.engine_allreduce import engine_all_reduce_curve

    sizes = [2.0**k for k in (12, 16, 18, 19, 20, 21, 22, 23, 24)]
    lines = [
        "## The engine's measured all-reduce (TensorRT-LLM, cost/engine_allreduce.py)",
        "",
        "Pools on the `trtllm` and `dynamo-trtllm` stacks price each TP all-reduce from TensorRT-LLM's",
        "own `AllReduce` op as measured on the system (aiconfigurator-core `custom_allreduce_perf`, AUTO",
        "strategy, BF16; data/collectives/engine_allreduce.toml), log-log interpolated in the message",
        "size; the link-hierarchy model (the system's custom all-reduce ramp, NCCL ring, NVLS: the",
        "fastest) prices it elsewhere. No message is priced slower than a larger one of its curve (the",
        "running minimum from the largest size down, docs/model.md §5): A100's 1 MiB row, 83.2 us in the",
        "source (one row, above the 53.6 us at 2 MiB), is priced and shown below at 53.6 us. Measured (as",
        "priced) / model (us) per rank's message, at TP 8 (TP 4 on the NVL72 trays, whose tables stop",
        "there); error = model / measured - 1:",
        "",
        "| system | TP | " + " | ".join(_size(m) for m in sizes) + " |",
        "|---|---|" + "---|" * len(sizes),
    ]
    for name in ("a100-sxm", "h100", "h200", "b200", "b300", "gb200-nvl72", "gb300-nvl72"):
        p = load_pricer(name)
        tp = next((g for g in (8, 4) if engine_all_reduce_curve(name, "trtllm", g) is not None), None)
        if tp is None:
            continue
        lm, lt, _ = engine_all_reduce_curve(name, "trtllm", tp)
        meas = np.exp(np.interp(np.log(sizes), lm, lt))
        model = p.collective("all_reduce", tp, np.array(sizes)).time_s
        lines.append(
            f"| {name} | {tp} | "
            + " | ".join(f"{a * 1e6:.1f} / {b * 1e6:.1f} ({b / a - 1:+.0%})" for a, b in zip(meas, model))
            + " |"
        )
    lines += [
        "",
        "Reading: the ramp is one curve per system fitted on every size and TP size at once (next",
        "section); at TP 8 from 512 KiB to 8 MiB (37-585 decode rows of DeepSeek's 7,168 hidden) it is",
        "22-53% fast on H100, H200, B200 and B300, 6-39% on GB200's TP 4; on GB300 it is 0-20% slow above",
        "256 KiB. The measured table carries the engine's own strategy choice, so the `trtllm` stacks",
        "take it as it is (docs/model.md §5).",
        "",
    ]
    return lines


def engine_allreduce_trials() -> list[str]:
    """The vLLM / SGLang measured all-reduce tables and the round-26 trials of them (issue 18, allreduce26):
    fixed text, a record of what was tried and not taken (its figures come from `jalapeno validate` and
    scripts/fit_stacks.py runs of those rounds, not from this script)."""
    return [
        "vLLM's custom all-reduce replayed in a CUDA graph is stored too (aiconfigurator-core 0.12.0 vLLM",
        "`custom_allreduce_perf`, kernel_source `vLLM_custom_graph`: vLLM's own `tensor_model_parallel_all_reduce`, so its",
        "dispatch by size; the newest vLLM folder of each system: 0.24.0 on H100/H200/B200/B300/GB200, 0.27.0 on GB300,",
        '0.14.0 on A100), selectable as `all_reduce_table = "vllm"`, and so is SGLang\'s (`SGLang_CustomAllReduce_graph`;',
        "aiconfigurator's collector forces SGLang's custom all-reduce and turns off its mscclpp and symmetric-memory",
        "paths); no shipped stack names either. B200 TP 8 (measured as priced / model, us): 4 KiB 7.8 / 4.9, 128 KiB",
        "9.4 / 6.5, 256-512 KiB 17.2 / 7.0-8.1 (the 25.8 / 26.1 us rows priced at 1 MiB's 17.2), 1 MiB 17.2 / 10.3.",
        "Where a profile names a table and runs vLLM's `fuse_allreduce_rms`, the fused steps (up to the pass's",
        "`max_size`) are priced from TensorRT-LLM's table: they run FlashInfer's `trtllm_allreduce_fusion`, TensorRT-LLM's",
        "Lamport kernels (flashinfer/comm/trtllm_ar.py; cost/allreduce_rms.py, docs/model.md §6.4). Round 15",
        "(vllmbatch15) switched the `vllm` stack to vLLM's table: held-out TPOT 8.5% -> 9.0%, not taken.",
        "",
        "Round 26 (issue 18, allreduce26): both retried, each stack refitted by scripts/fit_stacks.py on the declared",
        "split (held-out median |error| / median error; vLLM n 259 TPOT and 280 TTFT rows). Not taken. First on main",
        "d54d52f, then on 99b5fcc (after kimi26's shared-expert stream and vLLM refit):",
        "",
        "| base | vLLM variant | fitted kernel / step / per TP rank | held-out TPOT | held-out TTFT |",
        "|---|---|---|---|---|",
        "| d54d52f | link model (shipped) | 3.6 µs / 0.45 ms / 0.1125 ms | 7.01% / +1.3% | 13.85% / -4.1% |",
        "| d54d52f | vLLM's table for every all-reduce (as round 15) | 3.2 µs / 0.40 ms / 0.1375 ms | 8.12% / +2.5% | 13.89% / -0.8% |",
        "| d54d52f | vLLM's table, fused steps on TensorRT-LLM's | 3.4 µs / 0.425 ms / 0.1125 ms | 6.79% / +2.6% | 13.98% / -0.7% |",
        "| 99b5fcc | link model (shipped) | 3.8 µs / 0.475 ms / 0.1 ms | 4.90% / +1.7% | 14.01% / -4.0% |",
        "| 99b5fcc | vLLM's table, fused steps on TensorRT-LLM's | 3.6 µs / 0.45 ms / 0.1 ms | 5.35% / +2.3% | 13.89% / -0.5% |",
        "| 99b5fcc | link model, fused steps on TensorRT-LLM's | 3.8 µs / 0.475 ms / 0.1 ms | 4.92% / +1.7% | 14.01% / -3.9% |",
        "",
        "- The table alone repeats round 15, and the rows it worsens are exactly those whose launch script sets",
        "  `fuse_allreduce_rms` (fit/aic_rows.py; d54d52f, aiconfigurator TPOT median |error|): B200 gpt-oss-120b vLLM",
        "  0.15.1 (n 56) 8.3% -> 8.4%, median error +5.1% -> +7.6%, B200 gpt-oss unstated release (n 10) 3.6% -> 8.8%,",
        "  B200 Kimi K2.5 0.15.1 6.3% -> 8.2%, B300 Kimi 0.19.0 13.3% -> 14.3%; the unfused rows gain (B200 MiniMax-M2.5",
        "  0.19.0, n 160, 4.5% -> 3.6%; H200 MiniMax 0.18.0 6.4% -> 5.3%; B300 MiniMax 0.19.0 5.8% -> 5.3%). Those fused",
        "  rows run TensorRT-LLM's kernels through FlashInfer, not vLLM's custom all-reduce, which the third row prices:",
        "  on d54d52f it passed the held-out test (TPOT 7.01% -> 6.79%, TTFT +0.13 pt).",
        "- On 99b5fcc (kimi26 priced the shared expert on vLLM's auxiliary stream, the vLLM held-out TPOT 7.0% -> 4.9%)",
        "  the same switch worsens held-out TPOT 4.90% -> 5.35% (median error +1.7% -> +2.3%: too slow). Validation",
        "  (`jalapeno validate`, every row, vLLM aiconfigurator rows): TPOT B200 4.6% -> 4.5%, B300 6.6% -> 6.1%, GB200",
        "  9.7% -> 9.3%, H100 6.7% -> 6.7%, H200 5.3% -> 5.4%; TTFT B200 10.6% -> 10.0%, B300 10.0% -> 11.1% (median",
        "  error +4.6% -> +6.1%: already too slow), H200 16.2% -> 16.9%; all aiconfigurator rows TPOT 6.7% -> 6.5%, TTFT",
        "  19.1% -> 19.0%; the one MI300X vLLM-ROCm interactivity row (base `vllm`, refitted costs) +5.2% -> +7.6%. The",
        "  TTFT moves are the prefill all-reduces priced as measured (vLLM's kernel against the link model at 1-32 MiB per",
        "  rank: B200 / B300 1.1-2.6x at TP 2 and TP 4, 0.9-2.6x at TP 8; H100 / H200 0.8-1.3x).",
        "- The fused steps alone on TensorRT-LLM's table (the rest on the link model) leave the fit and held-out figures",
        "  where they were and move H200's vLLM TPOT 5.3% -> 5.9% (Kimi K2.5 TP8: TensorRT-LLM's H200 kernel at 512 KiB,",
        "  17.8 us, against the link model's 8 us).",
        "- SGLang's table on the `sglang` stack (d54d52f): the refit keeps its values (3.4 µs, 0.425 ms); held-out TPOT",
        "  11.42% -> 11.51%, throughput per chip 6.91% -> 8.04% (n 15), TTFT 26.98% -> 27.35%; H200 (DeepSeek-R1 TP8,",
        "  already too slow: aiconfigurator TPOT median error +4.9% -> +5.9%, InferenceX +7.5% -> +8.2%) gets worse",
        "  (aiconfigurator TPOT 13.7% -> 14.8%, InferenceX TPOT 7.6% -> 8.2%, throughput 6.3% -> 7.1%) while B200 gains",
        "  (aiconfigurator TPOT 10.2% -> 9.7%, InferenceX throughput 4.1% -> 2.9%).",
        "",
        "So the measured kernel is not what the vLLM and SGLang rows are missing: the fixed costs fitted with the link",
        "model absorb the difference as well or better, and the rows left too slow get slower. What lands is the fused",
        "kernel's pricing for a profile that selects a table (cost/allreduce_rms.fused_all_reduce) and the coverage",
        "check, scripts/engine_allreduce_coverage.py (the tables switched on without a refit): over validation the largest",
        "all-reduce message is 224 MiB per rank (vLLM) and 452 MiB (SGLang), inside the tables' 1 GiB, so the link-model",
        "fallback beyond the largest size prices no row; GB200 TP 8 has no curve (the trays' tables stop at TP 4; SGLang",
        "546 all-reduces) and the MI3xx systems have no table. The running minimum changes five points above 2 KiB by over",
        "10%: vLLM B200 TP 8 256 / 512 KiB (25.8 / 26.1 -> 17.2 us), vLLM B300 TP 8 2 MiB (29.1 -> 26.2 us), vLLM A100 TP 8",
        "4 KiB (14.8 -> 6.3 us), SGLang H200 TP 8 512 KiB (14.9 -> 13.1 us). To repeat a trial: set `all_reduce_table` on",
        "the stack in data/stacks.toml, run scripts/fit_stacks.py, then `jalapeno validate`.",
        "",
    ]
