"""Real frontiers that several test modules price (each module keeps its own module-scoped fixture)."""

from __future__ import annotations


def gb200_deepseek_fp8_1k1k_agg():
    """(FrontierRecord, System): DeepSeek-R1 FP8 on GB200 NVL72 at 1K/1K, aggregated serving."""
    from jalapeno.analysis.comparison import system_frontier
    from jalapeno.analysis.sweep import SweepOptions
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    pr = load_pricer("gb200-nvl72")
    sf = system_frontier(load_model("deepseek-r1"), pr, get_workload("1k1k"), get_precision("fp8"),
                         SweepOptions(serving="agg"))
    return sf.record(), pr.system
