"""scripts/gb300_tpot_split51.py: the decode-pool parse, the per-step gap line, the fit-split offset and the
arithmetic what-if, against a hand-made CSV (expected values worked by hand in the comments)."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

s = load_script("gb300_tpot_split51")

TEP8 = "disagg P 1x(attn TP1 DP2 · MoE TP1 EP2) + D 4x(attn TP8 DP1 · MoE TP1 EP8) [fp4]"
DEP32 = "disagg P 4x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp4]"
REL = "trtllm@1.2.0rc6.post2"


def _row(system, stack, dep, conc, measured_ms, predicted_ms, split, notes="", precision="fp4", quality=None):
    return {
        "source": "aiconfigurator",
        "system": system,
        "model": "deepseek-r1",
        "precision": precision,
        "stack": stack,
        "isl": 1024,
        "osl": 1024,
        "concurrency": conc,
        "deployment": dep,
        "metric": "tpot_s",
        "measured": measured_ms * 1e-3,
        "predicted": predicted_ms * 1e-3,
        "error": predicted_ms / measured_ms - 1,
        "notes": notes,
        "quality": quality,
        "split": split,
    }


@pytest.fixture()
def csv(tmp_path):
    rows = [
        # held-out GB300 TEP8 rows at 1, 3 and 5 sequences a worker (4 workers: C 4, 12, 20), gaps 0.4 / 0.5 / 0.6 ms
        _row("gb300-nvl72", REL, TEP8, 4.0, 6.0, 6.4, "held_out"),
        _row("gb300-nvl72", REL, TEP8, 12.0, 7.0, 7.5, "held_out"),
        _row("gb300-nvl72", REL, TEP8, 20.0, 10.0, 10.6, "held_out"),
        # fit rows of the release on both racks, gaps 0.2 / 0.6 / 1.0 ms: median 0.6 ms
        _row("gb300-nvl72", REL, TEP8, 8.0, 8.0, 8.2, "fit"),
        _row("gb200-nvl72", REL, TEP8, 8.0, 8.0, 8.6, "fit"),
        _row("gb200-nvl72", REL, TEP8, 16.0, 9.0, 10.0, "fit"),
        # not in the set: attention DP, SGLang, a flagged row
        _row("gb300-nvl72", REL, DEP32, 512.0, 20.0, 19.0, "held_out"),
        _row("gb300-nvl72", "sglang@0.5.8.post1", TEP8, 8.0, 10.0, 9.8, "held_out"),
        _row("gb300-nvl72", REL, TEP8, 8.0, 5.0, 9.0, "held_out", quality="rule C"),
    ]
    path = tmp_path / "v.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path)


def test_decode_shape_and_cap():
    assert s.decode_shape(DEP32) == (1, 1, 32)
    # C 4096 over 1 worker × 32 ranks = 128 a rank; the recipe cap 64 binds
    assert s.per_worker(4096.0, DEP32, "decode max_batch_size 64 per attention-DP rank") == 64.0
    assert s.per_worker(4096.0, DEP32, float("nan")) == 128.0


def test_gap_line_and_offset(csv):
    d = s.rows(csv)
    assert len(d) == 8  # the flagged row left out
    lines = s.gap_lines(d).set_index(["system", "split"])
    held = lines.loc[("gb300-nvl72", "held_out")]
    # through (1, 0.4), (3, 0.5), (5, 0.6): slope 0.1 / 2 = 0.05 ms a sequence, intercept 0.4 − 0.05 = 0.35 ms
    assert held.n == 3 and held.intercept_ms == pytest.approx(0.35) and held.slope_ms_per_seq == pytest.approx(0.05)
    assert held.median_gap_ms == pytest.approx(0.5)
    assert s.release_offset(d) == pytest.approx(0.6)


def test_what_if_moves_only_the_release_attention_tp_rows(csv):
    d = s.rows(csv)
    w = s.what_if(d, 0.6).set_index(["system", "case"])
    before, after = w.loc[("gb300-nvl72", "as priced")], w.loc[("gb300-nvl72", "-0.600 ms")]
    # held-out GB300 errors as priced: +6.67, +7.14, +6.0, −5.0 (DEP32), −2.0 (SGLang) → median +6.0%
    assert before.n == 5 and before.bias == pytest.approx(6.0)
    # the three TEP8 rows lose 0.6 ms: 5.8/6 − 1 = −3.33%, 6.9/7 − 1 = −1.43%, 10.0/10 − 1 = 0 → with −5.0 and
    # −2.0 the median is −2.0%; the DEP32 and SGLang rows do not move
    assert after.rows_moved == 3 and after.bias == pytest.approx(-2.0)


def test_main_errors_in_one_line(tmp_path, capsys):
    assert s.main([str(tmp_path / "none.csv")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "validate --json -o" in err[0]
    assert s.main([]) == 2


def test_main_names_a_missing_column_in_one_line(tmp_path, capsys):
    """A CSV without the ``split`` column (a `validate` CSV of an older release, or another tool's) stopped on a
    pandas KeyError traceback in rows(): the check after it could not be reached. It is one line naming the column."""
    path = tmp_path / "v.csv"
    row = _row("gb300-nvl72", REL, TEP8, 4.0, 6.0, 6.4, "held_out")
    del row["split"]
    pd.DataFrame([row]).to_csv(path, index=False)
    assert s.main([str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing column(s) split" in err[0] and "validate --json -o" in err[0]
    (tmp_path / "empty.csv").write_text("")
    assert s.main([str(tmp_path / "empty.csv")]) == 1
    assert capsys.readouterr().err.startswith("error:")
