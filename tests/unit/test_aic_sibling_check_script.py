"""scripts/aic_sibling_check.py: each compared row's worst pair, highest ratio first, as a table line."""

from __future__ import annotations

from types import SimpleNamespace

from script_module import load_script

script = load_script("aic_sibling_check")


def _pt(pid, system, conc, ttft_ms, tpot_ms, isl, osl, workers=1, mode="agg"):
    dep = SimpleNamespace(decode=SimpleNamespace(layout=SimpleNamespace(tp=4, dp=1, ep=1), workers=workers), mtp=None)
    return SimpleNamespace(id=pid, source="aiconfigurator", system=system, model="qwen3-235b-a22b",
                           framework="vllm 0.12.0", precision="fp8", mode=mode, isl=isl, osl=osl,
                           concurrency=float(conc), spec="", deployment=dep,
                           measured={"ttft_s": ttft_ms / 1e3, "tpot_s": tpot_ms / 1e3})


def test_worst_pair_per_row_highest_first_and_its_line():
    # aiconfigurator-core 0.12.0 rows (test_aic_rule_d.py): the H200 4000/1000 and 4000/500 rows against the
    # H100 disaggregated one (ratios 2.047 and 1.847 by hand there), and a second H100 row at 4000/1000 whose
    # TPOT is twice as long (B = 24 · 22744.1 / 23642.4 = 23.088, bound 22.767 · 23.727 / 23.088 = 23.40 ms:
    # ratio 24.858 / 23.40 = 1.06 for the 4000/1000 row, so its worst stays 2.047)
    h100 = _pt("h100", "h100", 72, 898.339221, 11.383278, 4000, 1000, workers=3, mode="disagg")
    slow = _pt("h100b", "h100", 72, 898.339221, 22.766556, 4000, 1000, workers=3, mode="disagg")
    x1k = _pt("x1k", "h200", 24, 395.09, 34.35, 4000, 1000)
    x500 = _pt("x500", "h200", 20, 352.74, 35.16, 4000, 500)
    w = script.worst_pairs([h100, slow, x1k, x500])
    assert [q["x"].id for q in w] == ["x1k", "x500"] and [q["y"].id for q in w] == ["h100", "h100"]
    line = script.pair_line(w[0], "rule D")
    assert line == ("| h200 vs h100 | qwen3-235b-a22b | vllm 0.12.0 | 4000/1000 | agg/disagg | 23.7 / 22.2 | "
                    "34.4 - 9.5 | 12.1 | 2.05 | rule D |")
