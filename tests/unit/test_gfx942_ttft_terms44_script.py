"""scripts/gfx942_ttft_terms44.py --compare: the row table's error columns and the held-out median per system, worked
by hand on made-up rows (review44: the script shipped without a test)."""

from __future__ import annotations

from script_module import load_script

s = load_script("gfx942_ttft_terms44")

PARTS = {"frontend_s": 0.0, "prefill_s": 0.1, "first_step_s": 0.02, "queue_and_waits_s": 0.0}
STEP = {"step": 0.2, "clocked": 0.1, "attention": 0.05, "hbm": 0.03, "rest": 0.02}


def _row(rid, system, split, measured, model):
    return {
        "id": rid,
        "system": system,
        "stack": "sglang-rocm",
        "isl": 1024,
        "C": 64,
        "split": split,
        "measured": measured,
        "median": False,
        "model": model,
        "mean_model": model,
        "parts": dict(PARTS),
        "prefill_step": dict(STEP),
    }


def test_compare_errors_and_held_out_medians(capsys):
    base = [
        _row("1", "mi325x", "held_out", 1.0, 1.2),  # +20%
        _row("2", "mi325x", "none", 2.0, 1.8),  # -10%
        _row("3", "mi325x", "fit", 1.0, 2.0),  # +100%, a fit row: not in the held-out median
        _row("4", "mi325x", "none", None, 1.0),  # no measurement: no table row, no median entry
    ]
    on = [dict(r) for r in base]
    on[0] = dict(on[0], model=1.05, parts=dict(PARTS, prefill_s=0.08))  # +5%; prefill 20 ms faster
    s.compare(base, on)
    out = capsys.readouterr().out
    assert "| 1 | mi325x |" in out and "| +20.0 -> +5.0 |" in out
    assert "+0.0 / -20.0 / +0.0 / +0.0" in out  # the prefill part, ms
    assert "| 4 | mi325x |" not in out
    # held out: |+20%| and |-10%| -> median 15.0%; on: 5% and 10% -> 7.5% (row 3 is a fit row)
    assert "mi325x held-out TTFT median |error| before: 15.0% (n 2)" in out
    assert "mi325x held-out TTFT median |error| on: 7.5% (n 2)" in out
    assert "mi300x" not in out.split("\n\n")[-1]  # no MI300X rows, no MI300X median


def test_price_rows_keeps_only_measured_ttft_rows():
    # the docstring's "every ... point with a measured TTFT": InferenceX row 120 carries ttft_s = None and was priced
    # (14 rows, one with nothing to compare); 13 remain, each with a positive measurement, MI300X / MI325X only
    rows = s.price_rows()
    assert rows and all(r["measured"] and r["measured"] > 0 for r in rows)
    assert {r["system"] for r in rows} == {"mi300x", "mi325x"}
