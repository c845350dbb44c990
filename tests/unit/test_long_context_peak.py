"""Jalapeño's 128k1k peak (docs/agentic.md, 'Why the 128k1k peak is a ~1,900-chip instance'): a
disaggregated instance of ~97% prefill chips is rate matching, checked by hand: throughput per chip is
output per chip x (1 + mean ISL / mean OSL), and the decode side's KV (MLA: 61 layers x (512 + 64)
values, fp8 = 1 B each, DeepSeek-V3 config.json) nearly fills HBM at the KV-capacity-bound peak."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jalapeno.analysis.comparison import system_frontier
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


@pytest.fixture(scope="module")
def peak():
    pr, wl = load_pricer("jalapeno"), get_workload("128k1k")
    fr = system_frontier(load_model("deepseek-r1"), pr, wl, get_precision("fp4"),
                         SweepOptions(serving="disagg")).record()
    return max((q for q in fr.frontier if q.feasible), key=lambda q: q.throughput_per_chip)


def test_128k1k_peak_is_rate_matched_and_fits_its_kv(peak):
    p = peak
    dep = p.deployment
    assert dep.chips == dep.prefill.chips + dep.decode.chips
    assert dep.prefill.chips / dep.chips > 0.9  # a 128k prompt costs ~130x its 1k decode
    mean_isl, mean_osl = 0.9 * 131072, 0.9 * 1024  # uniform in [0.8 L, L]
    assert p.throughput_per_chip == pytest.approx(p.output_throughput_per_chip * (1 + mean_isl / mean_osl), rel=1e-3)
    kv_per_chip = p.decode_batch / dep.decode.chips * (mean_isl + mean_osl / 2) * 61 * (512 + 64) * 1.0
    hbm = 216 * 2**30
    assert 0.7 * hbm < kv_per_chip < hbm


def test_agentic_doc_quotes_the_peak_it_explains(peak):
    """docs/agentic.md quoted P 937x ... = 1,938 chips and 2,939 prompt tok/s per prefill chip where the sweep gives
    938 workers, 1,940 chips and 2,938 (the prefill workers are the fewest whose pool runs below 0.95 utilisation,
    plus one: analysis/sweep.balanced_workers)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "agentic.md").read_text().replace("\n", " ")
    m = re.search(r"disagg P (\d+)x\(TP2\) \+ D 1x\(DP64 EP64\): ([\d,]+) prefill \+ 64 decode = ([\d,]+) chips", doc)
    r = re.search(r"i\.e\. ([\d,]+) per prefill chip", doc)
    t = re.search(r"TTFT ([\d.]+) s is that plus the queue", doc)
    assert m and r and t, "docs/agentic.md lost the 128k1k peak's figures"
    dep = peak.deployment
    mean_isl = 0.9 * 131072
    got = [("prefill workers", m[1], dep.prefill.workers), ("prefill chips", m[2], dep.prefill.chips),
           ("chips", m[3], dep.chips),
           ("prompt tok/s per prefill chip", r[1], peak.request_rate_per_s * mean_isl / dep.prefill.chips),
           ("TTFT s", t[1], peak.ttft_s)]
    stale = [f"{k}: quoted {q}, now {v:,.2f}" for k, q, v in got
             if abs(float(q.replace(",", "")) - v) > 0.5 * 10 ** -len(q.partition(".")[2]) + 1e-9]
    assert not stale, "docs/agentic.md 128k1k section: " + "; ".join(stale) + "; rerun `jalapeno compare -w 128k1k`"
