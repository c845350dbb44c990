"""scripts/h200_release_ladder.py: the release read from a points note, the ladder's match and ratios, the gpt-oss
twin match and the GB300 sharding medians, against hand-made CSVs."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import h200_release_ladder as h  # noqa: E402

AGG8 = "agg attn TP8 DP1 · MoE TP8 EP1 [fp8,kv=bf16]"
TP1 = "agg attn TP1 DP1 · MoE TP1 EP1 [mxfp4]"


def test_release_of_note():
    assert h.release_of_note("image lmsysorg/sglang:v0.5.12-cu130; PR #3173") == "0.5.12"
    assert h.release_of_note("SGLang v0.5.7; e2el is mean;") == "0.5.7"
    assert h.release_of_note("one row per GPU = highest tput config") is None


def test_point_releases_line_numbers(tmp_path):
    # the validate id is the CSV's 1-based line number with the header on line 1: data row 0 is line 2
    p = tmp_path / "points.csv"
    pd.DataFrame(
        {"notes": ["no release here", "SGLang v0.5.7; e2el is mean;", "image lmsysorg/sglang:v0.5.12-cu130;"]}
    ).to_csv(p, index=False)
    assert h.point_releases(p) == {"inferencex_points:3": "0.5.7", "inferencex_points:4": "0.5.12"}


def _row(
    source,
    rid,
    framework,
    metric,
    measured,
    predicted,
    conc=16,
    split="fit",
    dep=AGG8,
    system="h200",
    model="deepseek-r1",
    quality=None,
    notes="",
):
    return {
        "source": source,
        "id": rid,
        "system": system,
        "model": model,
        "framework": framework,
        "mode": "agg",
        "isl": 1024,
        "osl": 1024,
        "concurrency": conc,
        "deployment": dep,
        "metric": metric,
        "measured": measured,
        "predicted": predicted,
        "error": predicted / measured - 1,
        "quality": quality,
        "split": split,
        "notes": notes,
    }


def test_sglang_ladder_ratios_and_errors():
    # TPOT 15 ms (v0.5.12) and 16 ms (0.5.9) against a model of 18 ms: ratio 15/16 = 0.9375;
    # interactivity errors (1/18)/(1/15) - 1 = -16.7% and (1/18)/(1/16) - 1 = -11.1%
    rows = [
        _row("inferencex", "inferencex_points:5", "sglang", "tpot_s", 0.015, 0.018, split="held_out"),
        _row("inferencex", "inferencex_points:5", "sglang", "interactivity", 1 / 0.015, 1 / 0.018, split="held_out"),
        _row("aiconfigurator", "aic:a", "sglang 0.5.9", "tpot_s", 0.016, 0.018),
        _row("aiconfigurator", "aic:a", "sglang 0.5.9", "interactivity", 1 / 0.016, 1 / 0.018),
        # not on the ladder: a flagged row, another layout, a release not named
        _row("aiconfigurator", "aic:b", "sglang 0.5.9", "tpot_s", 0.001, 0.018, quality="C"),
        _row(
            "aiconfigurator",
            "aic:c",
            "sglang 0.5.9",
            "tpot_s",
            0.001,
            0.018,
            dep="agg attn TP4 DP1 · MoE TP4 EP1 [fp8]",
        ),
        _row("inferencex", "inferencex_points:9", "sglang", "tpot_s", 0.001, 0.018),
    ]
    out = h.sglang_ladder(pd.DataFrame(rows), {"inferencex_points:5": "0.5.12"})
    assert len(out) == 1
    r = out.iloc[0]
    assert r["tpot 0.5.12"] == pytest.approx(15.0) and r["tpot 0.5.9"] == pytest.approx(16.0)
    assert r["model tpot"] == pytest.approx(18.0)
    assert r["0.5.12/0.5.9"] == pytest.approx(0.9375)
    assert r["int err 0.5.12"] == pytest.approx((15 / 18 - 1) * 100)
    assert r["int err 0.5.9"] == pytest.approx((16 / 18 - 1) * 100)
    assert r["split 0.5.12"] == "held_out" and r["split 0.5.9"] == "fit"


def test_gptoss_twins_match_and_ratio():
    rows = [
        _row(
            "inferencex",
            "inferencex_points:50",
            "trt",
            "tpot_s",
            0.0206,
            0.0229,
            conc=64,
            dep=TP1,
            model="gpt-oss-120b",
        ),
        _row(
            "aiconfigurator",
            "aic:x",
            "trtllm gpt-oss-dev",
            "tpot_s",
            0.0200,
            0.0250,
            conc=64,
            dep=TP1,
            model="gpt-oss-120b",
            notes="MoE backend triton: InferenceX sweep",
        ),
        # not a twin: another concurrency, another release
        _row(
            "aiconfigurator",
            "aic:y",
            "trtllm gpt-oss-dev",
            "tpot_s",
            0.0100,
            0.0100,
            conc=32,
            dep=TP1,
            model="gpt-oss-120b",
        ),
        _row(
            "aiconfigurator",
            "aic:z",
            "trtllm unstated",
            "tpot_s",
            0.0100,
            0.0100,
            conc=64,
            dep=TP1,
            model="gpt-oss-120b",
        ),
    ]
    out = h.gptoss_twins(pd.DataFrame(rows))
    assert len(out) == 1
    r = out.iloc[0]
    assert r["meas IX/aic"] == pytest.approx(0.0206 / 0.0200)
    assert r["aic err %"] == pytest.approx(25.0) and bool(r["aic triton"]) and not bool(r["IX triton"])


def test_gb300_sharding_medians():
    dep_adp = "disagg P 4x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp4]"
    dep_atp = "disagg P 1x(attn TP1 DP2 · MoE TP1 EP2) + D 4x(attn TP8 DP1 · MoE TP1 EP8) [fp4]"
    # held out: ATP errors -10%, -6%, ADP +2%: medians ATP -8%, ADP +2%, all -6%
    rows = [
        _row(
            "aiconfigurator",
            f"aic:{i}",
            "trtllm",
            "interactivity",
            100.0,
            100.0 * (1 + e),
            split="held_out",
            dep=d,
            system="gb300-nvl72",
        )
        for i, (e, d) in enumerate([(-0.10, dep_atp), (-0.06, dep_atp), (0.02, dep_adp)])
    ]
    out = h.gb300_sharding(pd.DataFrame(rows)).set_index("pool")
    assert out.loc["ATP", "median %"] == pytest.approx(-8.0)
    assert out.loc["ADP", "median %"] == pytest.approx(2.0)
    assert out.loc["all", "median %"] == pytest.approx(-6.0) and out.loc["all", "n"] == 3


def test_a_missing_csv_names_the_file_and_the_fix(tmp_path):
    missing = tmp_path / "none.csv"
    with pytest.raises(SystemExit) as ei:
        h.main([str(missing)])
    assert str(missing) in str(ei.value) and f"Fix: write one with `jalapeno validate -o {missing}`" in str(ei.value)


def test_isl_increments_by_hand():
    # one concurrency, both lengths: model 18 / 23 ms, v0.5.12 15 / 20 ms, 0.5.9 16 / 20.5 ms
    ladder = pd.DataFrame(
        [
            {"isl": 1024, "osl": 1024, "C": 16, "model tpot": 18.0, "tpot 0.5.9": 16.0, "tpot 0.5.12": 15.0},
            {"isl": 8192, "osl": 1024, "C": 16, "model tpot": 23.0, "tpot 0.5.9": 20.5, "tpot 0.5.12": 20.0},
            {"isl": 8192, "osl": 1024, "C": 64, "model tpot": 50.0, "tpot 0.5.9": 49.0, "tpot 0.5.12": 48.0},
        ]
    )
    r = h.isl_increments(ladder).set_index("C").loc[16]
    assert r["model 8k-1k"] == pytest.approx(5.0)
    assert r["0.5.12 8k-1k"] == pytest.approx(5.0) and r["0.5.9 8k-1k"] == pytest.approx(4.5)
    assert r["0.5.12 excess 1k"] == pytest.approx(3.0) and r["0.5.12 excess 8k"] == pytest.approx(3.0)
    assert r["0.5.9 excess 1k"] == pytest.approx(2.0) and r["0.5.9 excess 8k"] == pytest.approx(2.5)
    assert len(h.isl_increments(ladder)) == 1  # C = 64 has no 1k/1k row


def test_per_prompt_step_by_hand():
    # 1k/1k C = 16: TPOT 16.63 ms (0.5.9) vs 15.28 ms (v0.5.12), step 1.35 ms; InferenceX output lengths uniform on
    # [819.2, 1024], mean 921.6, so a prompt is admitted every 921.6 / 16 = 57.6 decode steps and one cost P per prompt
    # adds P / 57.6 to each: P = 1.35 x 57.6 = 77.76 ms. TTFT 245 vs 157 ms: step 88 ms.
    ladder = pd.DataFrame(
        [
            {
                "isl": 1024,
                "osl": 1024,
                "C": 16,
                "tpot 0.5.9": 16.63,
                "tpot 0.5.12": 15.28,
                "ttft 0.5.9": 245.0,
                "ttft 0.5.12": 157.0,
            },
            {
                "isl": 1024,
                "osl": 8192,
                "C": 8,
                "tpot 0.5.9": 12.2,
                "tpot 0.5.12": float("nan"),
                "ttft 0.5.9": 200.0,
                "ttft 0.5.12": float("nan"),
            },
        ]
    )
    out = h.per_prompt_step(ladder, "0.5.9", "0.5.12")
    assert len(out) == 1  # the 1k/8k row has no v0.5.12 twin
    r = out.iloc[0]
    assert r["tpot 0.5.9-0.5.12"] == pytest.approx(1.35)
    assert r["per prompt"] == pytest.approx(77.76)
    assert r["ttft 0.5.9-0.5.12"] == pytest.approx(88.0)


def test_ladder_carries_ttft():
    # the TTFT of each release is carried in ms: 0.157 s -> 157 ms
    rows = [
        _row("inferencex", "inferencex_points:5", "sglang", "ttft_s", 0.157, 0.2),
        _row("inferencex", "inferencex_points:5", "sglang", "tpot_s", 0.015, 0.018),
    ]
    out = h.sglang_ladder(pd.DataFrame(rows), {"inferencex_points:5": "0.5.12"})
    assert out.iloc[0]["ttft 0.5.12"] == pytest.approx(157.0)
