"""fit/aic_consistency.py: aiconfigurator rules G (a deployment's TPOT does not fall as the load rises) and H (a
repeat reproduces its TPOT), and the fewest-rows choice of which rows break them.

The measured values are real aiconfigurator-core 0.12.0 ``silicon_sample.csv`` rows, copied by hand (TPOT ms):
  Qwen3-32B GB200 TRT-LLM 1.3.0rc1 TP2, the gap-analysis harness (rows 895-909): 4000/1000 at C = 1, 2, 8, 16, 32,
    64, 128: 8.180291, 21.202069, 50.742920, 94.095871, 103.218022, 133.318995, 71.823623; 2000/500 at
    C = 1, 2, 8, 16, 32, 64, 128: 8.069688, 41.917892, 27.639192, 41.521569, 28.649450, 37.990907, 52.364605.
  Kimi K2.5 H200 vLLM 0.16.0 INT4 TP8 1k/8k: C = 4: 10.5, 10.5; 8: 12.3, 12.4; 16: 63.98, 16.00; 32: 22.50,
    22.36; 64: 31.89, 31.81.
  DeepSeek-R1 B200 SGLang 0.5.9 FP8 TP8: 1k/8k C = 4: 5.761150 and 8.641253 (rows 2020, 2023); 1k/1k C = 64:
    22.53 and 20.41.
Which rows are flagged is worked by hand below from the module's rules at REPEAT_TPOT_FACTOR = 1.15.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pandas as pd
import pytest

from jalapeno.fit.aic_consistency import REPEAT_TPOT_FACTOR, aic_consistency_flags, fewest_removals, tpot_conflicts


def _pt(pid, conc, tpot_ms, system="gb200", model="qwen3-32b", framework="trtllm 1.3.0rc1", isl=4000, osl=1000,
        source="aiconfigurator", dep=None):
    return SimpleNamespace(id=pid, source=source, system=system, model=model, framework=framework, precision="bf16",
                           mode="agg", isl=isl, osl=osl, concurrency=float(conc), deployment=dep,
                           measured={"tpot_s": tpot_ms / 1e3, "ttft_s": 0.5})


Q_4K = [(1, 8.180291), (2, 21.202069), (8, 50.742920), (16, 94.095871), (32, 103.218022), (64, 133.318995),
        (128, 71.823623)]
Q_2K = [(1, 8.069688), (2, 41.917892), (8, 27.639192), (16, 41.521569), (32, 28.649450), (64, 37.990907),
        (128, 52.364605)]


def test_the_factor_is_the_stated_one():
    assert REPEAT_TPOT_FACTOR == 1.15  # the docstring's derivation and every hand computation below use it


def test_rule_g_flags_the_row_below_three_lower_loads_alone():
    # 1.15 x 71.82 = 82.60 ms: C = 16 (94.10), 32 (103.22) and 64 (133.32) are above it -> three conflicts, all
    # with C = 128; C = 1..64 rise. Removing C = 128 alone clears all three (the only one-row set): C = 128 only.
    f = aic_consistency_flags([_pt(f"c{c}", c, t) for c, t in Q_4K])
    assert list(f) == ["c128"]
    assert "TPOT 71.82 ms at concurrency 128 against 133.32 ms at concurrency 64" in f["c128"]
    assert "rule G" in f["c128"] and "rule H" not in f["c128"]


def test_rule_g_flags_every_row_of_any_smallest_set_when_the_sweep_cannot_say_which():
    # 2000/500 conflicts (TPOT_X > 1.15 TPOT_Y, C_X < C_Y): C2 41.92 > 1.15 x 27.64 = 31.79 (C8) and > 1.15 x 28.65
    # = 32.95 (C32), not > 47.75 (C16) nor 43.69 (C64); C16 41.52 > 32.95 (C32), not > 43.69 (C64); no other.
    # Edges C2-C8, C2-C32, C16-C32: no one row touches all; the two-row sets that do are {C2, C32}, {C2, C16},
    # {C8, C32} -> flagged C2, C8, C16, C32; C1, C64, C128 pass.
    f = aic_consistency_flags([_pt(f"c{c}", c, t, isl=2000, osl=500) for c, t in Q_2K])
    assert sorted(f) == ["c16", "c2", "c32", "c8"]


def test_rule_h_and_g_together_flag_only_the_repeat_that_breaks_the_sweep():
    # C16 63.98 vs its repeat 16.00: H (4.0x); 63.98 > 1.15 x 22.50 = 25.9 and > 1.15 x 31.89 = 36.7: four G
    # conflicts, all with the 63.98 row; 16.00 sits between C8 (12.4) and C32 (22.36). Smallest set: {63.98}.
    kimi = [(4, 10.5), (4, 10.5), (8, 12.3), (8, 12.4), (16, 63.98), (16, 16.00), (32, 22.50), (32, 22.36),
            (64, 31.89), (64, 31.81)]
    pts = [_pt(f"r{i}", c, t, system="h200", model="kimi-k2.5", framework="vllm 0.16.0", isl=1024, osl=8192)
           for i, (c, t) in enumerate(kimi)]
    f = aic_consistency_flags(pts)
    assert list(f) == ["r4"]
    assert "TPOT 63.98 ms against 16.00 ms (4.00x) in a repeat of the same deployment at concurrency 16 (r5)" in f["r4"]
    assert "rule H" in f["r4"] and "rule G" in f["r4"]
    assert sorted(r for _, _, r in tpot_conflicts(pts)) == ["G", "G", "G", "G", "H"]


def test_rule_h_flags_both_rows_of_a_lone_repeat_and_passes_one_within_the_noise():
    kw = {"system": "b200", "model": "deepseek-r1", "framework": "sglang 0.5.9", "isl": 1024}
    # 8.641253 / 5.761150 = 1.50 > 1.15, no third row: both
    f = aic_consistency_flags([_pt("a", 4, 5.761150, osl=8192, **kw), _pt("b", 4, 8.641253, osl=8192, **kw)])
    assert sorted(f) == ["a", "b"] and "(1.50x)" in f["a"] and "rule H" in f["b"]
    # 22.53 / 20.41 = 1.104 <= 1.15: within the repeat noise
    assert aic_consistency_flags([_pt("a", 64, 22.53, osl=1024, **kw), _pt("b", 64, 20.41, osl=1024, **kw)]) == {}


def test_rule_h_a_third_repeat_says_which():
    # 15.0 / 10.0 = 1.5 and 15.0 / 10.1 = 1.49 conflict; 10.1 / 10.0 does not: {15} touches both edges
    assert list(aic_consistency_flags([_pt("a", 8, 10.0), _pt("b", 8, 10.1), _pt("c", 8, 15.0)])) == ["c"]


def test_rule_g_tolerance_is_the_repeat_noise():
    # 10.0 / 8.8 = 1.136 <= 1.15: passes; 10.0 / 8.6 = 1.163: a lone conflict, both rows
    assert aic_consistency_flags([_pt("lo", 8, 10.0), _pt("hi", 16, 8.8)]) == {}
    assert sorted(aic_consistency_flags([_pt("lo", 8, 10.0), _pt("hi", 16, 8.6)])) == ["hi", "lo"]
    # a rise, however steep, is no conflict
    assert aic_consistency_flags([_pt("lo", 8, 10.0), _pt("hi", 16, 40.0)]) == {}


def test_only_rows_of_one_stated_deployment_are_compared():
    lo, hi = (8, 10.0), (16, 5.0)
    assert aic_consistency_flags([_pt("a", *lo), _pt("b", *hi, framework="trtllm 1.3.0rc5")]) == {}  # releases
    assert aic_consistency_flags([_pt("a", *lo, framework="trtllm unstated"),
                                  _pt("b", *hi, framework="trtllm unstated")]) == {}  # no release stated
    assert aic_consistency_flags([_pt("a", *lo), _pt("b", *hi, isl=2000)]) == {}  # another ISL
    other = SimpleNamespace(as_dict=lambda: {"mtp": 1})
    assert aic_consistency_flags([_pt("a", *lo), _pt("b", *hi, dep=other)]) == {}  # another deployment
    assert aic_consistency_flags([_pt("a", *lo, source="inferencex"), _pt("b", *hi, source="inferencex")]) == {}
    # a launch field set by load (fit/aic_quality.LAUNCH_FIELDS) does not make another deployment
    d8, d16 = ({"tp": 2, "max_running": 8}, {"tp": 2, "max_running": 16})
    f = aic_consistency_flags([_pt("a", *lo, dep=SimpleNamespace(as_dict=lambda: d8)),
                               _pt("b", *hi, dep=SimpleNamespace(as_dict=lambda: d16))])
    assert sorted(f) == ["a", "b"]


def test_fewest_removals_per_connected_part():
    # two parts: a-b (lone: both) and a path x-y-z (y alone touches both edges)
    assert fewest_removals([("a", "b"), ("x", "y"), ("y", "z")]) == {"a", "b", "y"}
    # a 4-cycle p-q-r-s-p: smallest sets {p, r} and {q, s} -> all four
    assert fewest_removals([("p", "q"), ("q", "r"), ("r", "s"), ("s", "p")]) == {"p", "q", "r", "s"}
    assert fewest_removals([]) == set()


def test_decode_flags_carry_rules_g_and_h_to_tpot_and_interactivity_not_ttft():
    from jalapeno.fit.validation_run import run_validation

    silicon = pd.read_csv(__import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "aiconfigurator"
                          / "silicon_sample_subset.csv")
    silicon["backend_version"] = "0.5.9"  # the fixture states no release; rules G and H need one
    row = silicon.iloc[[0]].copy()  # B200 SGLang FP4 TP8 1k/8k C = 4: TTFT 399.99 ms, TPOT 9.14 ms
    rep = row.copy()
    rep["id"] = rep.id + "_repeat"
    rep["silicon_tpot_ms"] = row.silicon_tpot_ms * 1.5  # 1.5x > 1.15: rule H, both rows (no third)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "aiconfigurator_core", None)
        res = run_validation(use_aiconfigurator=False, aic_frame=pd.concat([silicon, rep], ignore_index=True))
    rows = res["rows"]
    for i in (row.id.iloc[0], rep.id.iloc[0]):
        q = rows[rows.id == f"aic:{i}"].set_index("metric").quality
        assert "rule H" in q["tpot_s"] and "rule H" in q["interactivity"] and "rule H" not in q["ttft_s"]


def test_the_factor_is_tukeys_far_out_fence_of_the_shipped_repeats_rounded_up():
    pytest.importorskip("aiconfigurator_core")
    from script_module import load_script

    from jalapeno.fit.validate import load_aiconfigurator

    s = load_script("aic_tpot_consistency").repeat_spread(load_aiconfigurator()[0])
    assert s["groups"] == 125 and len(s["pairs"]) == 177  # the docstring's counts
    assert s["far_out"] <= REPEAT_TPOT_FACTOR < s["far_out"] + 0.01  # 1.141 rounded up to two decimals
