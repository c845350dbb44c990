"""fit/aic_quality.py: aiconfigurator TTFT rules A (the queue only grows with load) and B (a repeat reproduces).

The measured values are real aiconfigurator-core 0.12.0 ``silicon_sample.csv`` rows, copied by hand
(TTFT / TPOT in ms): the H100 DeepSeek-R1 TRT-LLM disaggregated config 494 at 1k/1k (C = 6, 9, 30, 60:
12,345 / 14.0, 7,137 / 15.2, 5,052 / 19.9, 7,403 / 30.3), the B200 Kimi K2.5 vLLM 0.17.0 FP4 TP8 1k/1k pair
at C = 4 (74 / 7.1 and 164 / 7.4) and the B200 DeepSeek-R1 SGLang 0.5.9 FP8 TP8 1k/8k pair at C = 8
(199 / 10.3 and 410 / 7.6). Which rows break a rule is worked by hand from the module's stated rules.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pandas as pd
import pytest

from jalapeno.fit.aic_quality import aic_ttft_flags


def _pt(pid, conc, ttft_ms, tpot_ms, system="h100", framework="trtllm 0.8.1.post3", mode="disagg", dep=None,
        source="aiconfigurator"):
    return SimpleNamespace(id=pid, source=source, system=system, model="deepseek-r1", framework=framework,
                           precision="fp8", mode=mode, isl=1024, osl=1024, concurrency=float(conc),
                           deployment=dep, measured={"ttft_s": ttft_ms / 1e3, "tpot_s": tpot_ms / 1e3})


H100_494 = [(6, 12345, 14.0), (9, 7137, 15.2), (30, 5052, 19.9), (60, 7403, 30.3)]


def test_rule_a_flags_the_low_load_ttft_above_twice_a_more_loaded_one():
    f = aic_ttft_flags([_pt(f"c{c}", c, t, p) for c, t, p in H100_494])
    # C = 6: 12.345 s > 2 x 5.052 s (C = 30, TPOT 19.9 >= 14.0 ms); C = 9: 7.137 / 5.052 = 1.41 < 2;
    # C = 30: 5.052 < 2 x 7.403; C = 60: nothing more loaded
    assert list(f) == ["c6"]
    assert "TTFT 12.35 s at concurrency 6 is 2.4x the 5.05 s of the same deployment at concurrency 30" in f["c6"]
    assert "rule A" in f["c6"]


def test_rule_a_needs_the_more_loaded_row_to_decode_no_faster():
    # the same four rows with the C = 30 row's TPOT below C = 6's by more than 10%: not comparable,
    # and C = 60 (7.403 s) is within 2x of 12.345 s
    pts = [_pt(f"c{c}", c, t, p if c != 30 else 12.0) for c, t, p in H100_494]
    assert aic_ttft_flags(pts) == {}


def test_rule_a_compares_one_deployment_only():
    pts = [_pt("c6", 6, 12345, 14.0), _pt("c30", 30, 5052, 19.9, framework="trtllm 1.0.0")]  # another release
    assert aic_ttft_flags(pts) == {}
    pts = [_pt("c6", 6, 12345, 14.0, dep=None), _pt("c30", 30, 5052, 19.9, dep=SimpleNamespace(as_dict=lambda: {"x": 1}))]
    assert aic_ttft_flags(pts) == {}
    # other sources are not judged
    assert aic_ttft_flags([_pt(f"c{c}", c, t, p, source="inferencex") for c, t, p in H100_494]) == {}


def test_rule_b_flags_both_rows_of_a_repeat_that_does_not_reproduce():
    # Kimi K2.5 B200 vLLM FP4 TP8 1k/1k C = 4: TPOT 7.1 vs 7.4 ms (4.2% apart), TTFT 164 / 74 = 2.2x
    kw = {"system": "b200", "framework": "vllm 0.17.0", "mode": "agg"}
    f = aic_ttft_flags([_pt("a", 4, 74, 7.1, **kw), _pt("b", 4, 164, 7.4, **kw)])
    assert sorted(f) == ["a", "b"]
    assert "TTFT 0.07 s against 0.16 s (2.2x)" in f["a"] and "(b)" in f["a"] and "rule B" in f["b"]


def test_rule_b_passes_pairs_that_ran_something_else_or_agree():
    kw = {"system": "b200", "framework": "sglang 0.5.9", "mode": "agg"}
    # SGLang FP8 1k/8k C = 8: TTFT 410 / 199 = 2.06x, but TPOT 10.3 vs 7.6 ms (26% apart): another setting
    assert aic_ttft_flags([_pt("a", 8, 199, 10.3, **kw), _pt("b", 8, 410, 7.6, **kw)]) == {}
    # TPOT equal, TTFT 1.9x apart: within the rule's factor
    assert aic_ttft_flags([_pt("a", 8, 199, 10.3, **kw), _pt("b", 8, 378, 10.3, **kw)]) == {}


def test_run_validation_flags_the_ttft_only_and_states_the_headline_both_ways():
    from jalapeno.fit.validation_run import run_validation

    silicon = pd.read_csv(__import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "aiconfigurator"
                          / "silicon_sample_subset.csv")
    row = silicon.iloc[[0]].copy()  # B200 SGLang FP4 TP8 1k/8k C = 4: TTFT 399.99 ms, TPOT 9.14 ms
    hi = row.copy()
    hi["id"] = hi.id.str.replace("_c4_", "_c64_")
    hi["silicon_ttft_ms"] = 150.0  # under half of C = 4's at a higher load
    hi["silicon_tpot_ms"] = 20.0
    frame = pd.concat([silicon, hi], ignore_index=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "aiconfigurator_core", None)
        res = run_validation(use_aiconfigurator=False, aic_frame=frame)
    rows = res["rows"]
    low = rows[rows.id == f"aic:{row.id.iloc[0]}"].set_index("metric")
    assert "rule A" in low.quality["ttft_s"] and low.quality["tpot_s"] == "" and low.quality["interactivity"] == ""
    assert [i for i, _ in res["flagged"] if i.startswith("aic:")] == [f"aic:{row.id.iloc[0]}"]
    aic = rows[(rows.source == "aiconfigurator") & (rows.metric == "ttft_s")].dropna(subset=["error"])
    assert res["overall"]["aiconfigurator"]["ttft_s"]["n"] == len(aic) - 1
    assert res["overall_all"]["aiconfigurator"]["ttft_s"]["n"] == len(aic)
    assert res["overall"]["aiconfigurator"]["tpot_s"]["n"] == res["overall_all"]["aiconfigurator"]["tpot_s"]["n"]


# --- rule C: the source's own correction (data/validation/aic_source_flags.toml) --------------------------

from jalapeno.errors import SpecError  # noqa: E402
from jalapeno.fit.aic_quality import aic_source_flags, load_aic_source_flags  # noqa: E402


def _row(pid, system="b300", framework="sglang 0.5.10.post1", model="deepseek-r1", source="aiconfigurator",
         isl=8192):
    return SimpleNamespace(id=pid, source=source, system=system, model=model, framework=framework,
                           precision="fp4", isl=isl, osl=1024)


def test_rule_c_flags_the_rows_the_shipped_correction_names_and_no_other():
    # the shipped entry names DeepSeek-R1 on SGLang 0.5.10.post1 (InferenceX #1381 / #1502: the B300 runs
    # 748/749 of 2026-04-17); the B200 twin on 0.5.9, a later 0.5.12 run, another model and an InferenceX
    # row with the same fields are not named by it
    pts = [_row("b300"), _row("b200", system="b200", framework="sglang 0.5.9"), _row("later", framework="sglang 0.5.12"),
           _row("qwen", model="qwen3-235b-a22b"), _row("ix", source="inferencex")]
    f = aic_source_flags(pts)
    assert list(f) == ["b300"]
    assert "tokenizer" in f["b300"] and "#1381" in f["b300"] and "#1502" in f["b300"] and "rule C" in f["b300"]


def test_rule_c_matches_every_named_field_and_numbers_as_numbers(tmp_path):
    flags = tmp_path / "flags.toml"
    flags.write_text('[[flag]]\nmatch = { system = "b300", isl = 8192 }\nreason = "r"\nsource = "s"\n')
    f = aic_source_flags([_row("a", isl=8192.0), _row("b", isl=1024), _row("c", system="b200")], flags)
    assert list(f) == ["a"]  # 8192.0 == 8192; b fails isl, c fails system
    assert f["a"].startswith("source correction: r (s)")


def test_rule_c_bad_file_is_one_error_naming_the_field(tmp_path):
    flags = tmp_path / "flags.toml"
    with pytest.raises(SpecError, match="aiconfigurator source-flag file not found"):
        load_aic_source_flags(flags)
    flags.write_text("[[flag]\n")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_aic_source_flags(flags)
    for body, words in [
        ('[[flag]]\nmatch = { system = "b300" }\nreason = "r"\n', "flags.toml flag 1: missing ['source']"),
        ('[[flag]]\nmatch = {}\nreason = "r"\nsource = "s"\n', "must be a non-empty table of fields"),
        ('[[flag]]\nmatch = { hardware = "B300" }\nreason = "r"\nsource = "s"\n',
         "names no measured-point field: hardware"),
        ('[[flag]]\nmatch = { system = true }\nreason = "r"\nsource = "s"\n', "match.system: must be a string or a number"),
        ('[[flag]]\nmatch = { system = "b300" }\nreason = " "\nsource = "s"\n', "reason: must be a non-empty string"),
    ]:
        flags.write_text(body)
        with pytest.raises(SpecError) as ei:
            load_aic_source_flags(flags)
        assert words in str(ei.value) and "Fix:" in str(ei.value)


def test_run_validation_flags_every_metric_of_a_corrected_row():
    from jalapeno.fit.validation_run import run_validation

    silicon = pd.read_csv(__import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "aiconfigurator"
                          / "silicon_sample_subset.csv")
    frame = silicon.copy()
    frame.loc[0, "backend_version"] = "0.5.10.post1"  # B200 SGLang FP4 TP8 1k/8k C = 4, now of the corrected release
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "aiconfigurator_core", None)
        res = run_validation(use_aiconfigurator=False, aic_frame=frame)
    rows = res["rows"]
    mine = rows[rows.id == f"aic:{frame.id.iloc[0]}"].set_index("metric")
    assert all("rule C" in q for q in mine.quality)  # ttft_s, tpot_s and interactivity alike
    aic_tpot = rows[(rows.source == "aiconfigurator") & (rows.metric == "tpot_s")].dropna(subset=["error"])
    assert res["overall"]["aiconfigurator"]["tpot_s"]["n"] == len(aic_tpot) - 1
    assert res["overall_all"]["aiconfigurator"]["tpot_s"]["n"] == len(aic_tpot)
