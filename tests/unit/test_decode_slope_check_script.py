"""scripts/decode_slope_check.py: the extra-read time between two decode batches (values by hand)."""

from __future__ import annotations

from types import SimpleNamespace as N

import pytest
from script_module import load_script

ds = load_script("decode_slope_check")


def test_growth_by_hand_small_router():
    # E 4, k 2, uniform: f(B) = 1 - (1 - 2/4)^B: f(1) = 0.5, f(2) = 0.75, so 8 GB of experts add 0.25 x 8 GB = 2 GB;
    # one more sequence adds 1 MB of KV; 2 chips at 1 TB/s: (2e9 + 1e6) / 2e12 = 1.0005 ms
    assert ds.expert_read_growth(8e9, 1e6, 1, 2, 4, 2, 2, 1e12) == pytest.approx(1.0005e-3, rel=1e-12)


def test_growth_deepseek_shape_b200_node():
    # DeepSeek-R1's 256 experts, top-8, from 4 to 8 sequences: f = 1 - (31/32)^B; (31/32)^4 = 0.880737..,
    # (31/32)^8 = 0.775699..; 600 GB of expert weights (no KV), 8 chips at 8 TB/s
    r = 31 / 32
    f4, f8 = 1 - r * r * r * r, 1 - r ** 8
    want = 600e9 * (f8 - f4) / (8 * 8e12)
    assert want == pytest.approx(0.98e-3, abs=0.01e-3)  # 600e9 * 0.10504 / 6.4e13
    assert ds.expert_read_growth(600e9, 0.0, 4, 8, 256, 8, 8, 8e12) == pytest.approx(want, rel=1e-9)


def test_skewed_popularity_touches_fewer_new_experts_at_small_batch():
    # a skewed router hits its popular experts again: between 1 and 4 sequences it reaches fewer new ones
    uniform = ds.expert_read_growth(600e9, 0.0, 1, 4, 256, 8, 8, 8e12)
    skewed = ds.expert_read_growth(600e9, 0.0, 1, 4, 256, 8, 8, 8e12, sigma=1.03)
    assert 0 < skewed < uniform


def test_run_key_separates_runs_and_joins_loads():
    def pt(conc, isl=1024, fw="vllm 0.17.0", tp=4):
        dep = N(decode=N(layout=f"TP{tp}", workers=1))
        return N(source="aiconfigurator", system="b200", model="kimi-k2.5", framework=fw, precision="fp4", mode="agg",
                 deployment=dep, isl=isl, osl=1024, concurrency=conc)
    assert ds.run_key(pt(4)) == ds.run_key(pt(64))
    assert len({ds.run_key(pt(4)), ds.run_key(pt(4, isl=8192)), ds.run_key(pt(4, fw="vllm 0.19.0")),
                ds.run_key(pt(4, tp=8))}) == 4
