#!/usr/bin/env python3
"""Memory fit of aiconfigurator's GB200 SGLang FP8 config_id 227 rows: the fields' DEP4 pools against the TP4 the run's script used.

The rows (``dsr1_gb200_sglang_fp8_disagg_1024x1024_c{16,64,128}_cfg227``, SGLang 0.5.5.post2) write both pools as
attention DP 4 with MoE TP 4. Read that way, DeepSeek-R1's FP8 weights need 170.1 GiB a chip, more than the
0.96 x 186 GB = 166.3 GiB the model lets an engine without a memory profile fill, so the rows were not predicted.
InferenceX's configuration runs them with ``SCRIPT_MODE=1k1k-low-latency``, whose script runs both pools at
``--tensor-parallel-size 4 --data-parallel-size 1 --expert-parallel-size 1`` (data/validation/aic_sweeps.toml,
``low_latency_tp_chips``): 157.5 GiB a chip, which fits. The script prints, per layout, each module's bytes a chip,
the model's budget, and the budget SGLang's own rule gives at the script's ``--mem-fraction-static 0.95``
(F x m, F the free memory before the weights load: the driver-reported total less the SGLang profile's assumed
context, data/engine_memory.toml; the GB200 total, 189,471 MiB, is what ``nvidia-smi`` prints on GB200 trays. Since
round 39 the ``sglang-0.5`` profile ships it with its source, and SGLang's own F on GB200, 184 GiB at TP4 (sglang PR
#31900), which gives a pool of 184 x 0.95 - weights, 1.4 GiB more than the arithmetic printed here).

Run:
    python scripts/aic_cfg227_memory.py
"""

from __future__ import annotations

from jalapeno.deploy.engine_memory import get_engine_memory
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.memory_fit import ROUTER_BYTES, weight_bytes_per_chip, weight_elems_per_chip
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import get_precision

GIB = 2.0**30
#: GB200 driver-reported total (nvidia-smi "189471MiB" on GB200 trays; data/engine_memory.toml since round 39)
GB200_DEVICE_TOTAL_GIB = 189_471 / 1024
#: the run's --mem-fraction-static (gb200-fp8/disagg/1k1k-low-latency.sh, both pools)
SCRIPT_MEM_FRACTION = 0.95


def main() -> None:
    model, prec, system = load_model("deepseek-r1"), get_precision("fp8"), load_system("gb200-nvl72")
    usable = system.chip.hbm_usable_bytes
    budget = usable * (1 - Efficiency().memory_reserve_fraction)
    ctx = get_engine_memory("sglang-0.5").context_bytes / GIB
    sglang_budget = (GB200_DEVICE_TOTAL_GIB - ctx) * SCRIPT_MEM_FRACTION
    print(
        f"model budget (no engine profile): {usable / GIB:.1f} GiB usable x "
        f"{1 - Efficiency().memory_reserve_fraction:.2f} = {budget / GIB:.1f} GiB"
    )
    print(
        f"SGLang rule at the script's m = {SCRIPT_MEM_FRACTION}: ({GB200_DEVICE_TOTAL_GIB:.2f} - {ctx:.2f} GiB) x "
        f"{SCRIPT_MEM_FRACTION} = {sglang_budget:.1f} GiB"
    )
    for name, lay in (("fields: attention DP4, MoE TP4", Layout(dp=4)), ("script: TP4", Layout(tp=4))):
        elems = weight_elems_per_chip(model, lay)
        total = weight_bytes_per_chip(model, lay, prec, 0, system)
        print(
            f"\n{name} ({lay.label}): {total / GIB:.1f} GiB a chip; "
            f"fits the model's budget: {total <= budget}; SGLang's pool at m = 0.95: "
            f"{sglang_budget - total / GIB:.1f} GiB"
        )
        for mod, n in elems.items():
            b = n * (ROUTER_BYTES if mod == "router" else prec.weight_bytes(mod))
            print(f"  {mod:15s} {n / 1e9:9.4f} G elements  {b / GIB:8.2f} GiB")


if __name__ == "__main__":
    main()
