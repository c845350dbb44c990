"""scripts/h200_sglang_step_split.py (docs/gap_aic_itl.md, "round 35, h200ix35"): the step-table parse, and the
section's claim that the CUDA ``sglang`` profile prices every SGLang release alike (no version rules)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import h200_sglang_step_split as s  # noqa: E402

TABLE = """│ attn.mla_decode           │ bf16 │ 34.8 G │         0 │ 1.15 G │   34 M │   714.1 │ overhead                 │
│ moe.experts               │ fp8  │ 81.7 G │    32.6 G │      0 │  241 M │  9335.5 │ hbm_bandwidth            │
│ attn.all_reduce      │ 8     │ 229 kB     │ 61    │ 364.6   │ two_shot  │ node (scale_up) │
│ moe.all_reduce       │ 8     │ 229 kB     │ 58    │ 346.7   │ two_shot  │ node (scale_up) │
│ lm_head.all_gather   │ 8     │ 4.14 MB    │ 1     │ 32.8    │ direct    │ node (scale_up) │
step time 16.20 ms, bound by hbm_bandwidth (1.98x the next); compute 1.13 ms, hbm_bandwidth 9.51 ms, overhead 4.80 ms
"""


def test_parse_step_by_hand():
    r = s.parse_step(TABLE)
    assert math.isclose(r["experts"], 9.3355)
    assert math.isclose(r["mla_decode"], 0.7141)
    assert math.isclose(r["all_reduce"], (364.6 + 346.7) / 1e3)  # the all-gather is not an all-reduce
    assert r["overhead"] == 4.80 and r["step"] == 16.20


def test_parse_step_missing_terms_are_nan():
    r = s.parse_step("nothing here")
    assert math.isnan(r["experts"]) and math.isnan(r["step"]) and r["all_reduce"] == 0.0


def test_sglang_profile_prices_every_release_alike():
    from jalapeno.specs.stacks import stack_for_framework

    st = stack_for_framework("sglang", "h200")
    # round 47's rule (mori47's prebuilt iteration, disaggregated attention-DP decode, priced only under
    # serve/prebuilt_skip.PREBUILT_SKIP_ON, off) and round 48's (sglrel48: the fusion's SM100-only rule before 0.5.7,
    # a bound below both H200 InferenceX releases) leave the aggregated H200 rows' releases priced alike
    assert st.name == "sglang" and [r.field for r in st.version_rules] == ["allreduce_rms_rule", "disagg_prebuilt"]
    import dataclasses

    new, old = st.at_version("0.5.12"), st.at_version("0.5.7")
    moved = [f.name for f in dataclasses.fields(st) if getattr(new, f.name) != getattr(old, f.name)]
    assert moved == ["name", "disagg_prebuilt", "sources", "version"], moved
