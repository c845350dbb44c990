"""Jalapeño's 128k1k peak (docs/agentic.md, 'Why the 128k1k peak is a ~1,900-chip instance'): a
disaggregated instance of ~97% prefill chips is rate matching, checked by hand: throughput per chip is
output per chip x (1 + mean ISL / mean OSL), and the decode side's KV (MLA: 61 layers x (512 + 64)
values, fp8 = 1 B each, DeepSeek-V3 config.json) nearly fills HBM at the KV-capacity-bound peak."""

from __future__ import annotations

import pytest

from jalapeno.analysis.comparison import system_frontier
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


def test_128k1k_peak_is_rate_matched_and_fits_its_kv():
    pr, wl = load_pricer("jalapeno"), get_workload("128k1k")
    fr = system_frontier(load_model("deepseek-r1"), pr, wl, get_precision("fp4"),
                         SweepOptions(serving="disagg")).record()
    p = max((q for q in fr.frontier if q.feasible), key=lambda q: q.throughput_per_chip)
    dep = p.deployment
    assert dep.chips == dep.prefill.chips + dep.decode.chips
    assert dep.prefill.chips / dep.chips > 0.9  # a 128k prompt costs ~130x its 1k decode
    mean_isl, mean_osl = 0.9 * 131072, 0.9 * 1024  # uniform in [0.8 L, L]
    assert p.throughput_per_chip == pytest.approx(p.output_throughput_per_chip * (1 + mean_isl / mean_osl), rel=1e-3)
    kv_per_chip = p.decode_batch / dep.decode.chips * (mean_isl + mean_osl / 2) * 61 * (512 + 64) * 1.0
    hbm = 216 * 2**30
    assert 0.7 * hbm < kv_per_chip < hbm
