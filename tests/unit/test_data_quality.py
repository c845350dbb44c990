"""fit/data_quality.py: the closed-loop identity and the sources' own flags.

Expected figures are worked by hand from Little's law (C requests in flight, each ISL + OSL tokens,
E2E = TTFT + (OSL_mean − 1)·TPOT with OSL_mean = 0.9·OSL under InferenceX's range ratio 0.8).
"""

from __future__ import annotations

import csv
import math
from importlib import resources

import pytest

from jalapeno.errors import SpecError
from jalapeno.fit.data_quality import check_row, flagged_points, load_source_flags, quality_table

HEADER = ["hardware", "model", "precision", "framework", "spec", "disagg", "isl", "osl", "conc", "topology",
          "num_gpus", "tput_per_gpu", "output_tput_per_gpu", "tok_s_user", "tpot_ms", "ttft_ms", "notes", "source"]


def _write(path, rows):
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HEADER)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in HEADER})
    return path


def _row(conc, tput, tpot_ms, ttft_ms="", gpus=8, **kw):
    return {"hardware": "B200", "model": "DeepSeek-R1-0528", "precision": "FP8", "framework": "sglang",
            "spec": "none", "disagg": "0", "isl": "1024", "osl": "1024", "conc": str(conc), "num_gpus": str(gpus),
            "tput_per_gpu": str(tput), "tpot_ms": str(tpot_ms), "ttft_ms": str(ttft_ms), "source": "test sweep", **kw}


def test_identity_with_ttft_by_hand():
    # B200 FP8 SGLang 1k/1k c64 (InferenceX, 2026-05-22): 678.09 tok/s/GPU on 8 GPUs, TPOT 21.73 ms, TTFT 1.17032 s
    c = check_row("x", _row(64, 678.09, 21.73, 1170.32))
    ratio = 678.09 * 8 / (64 * 2048 / 1024 * (1000 / 21.73))  # = 5424.72 / 5890.47
    decode = (0.9 * 1024 - 1) * 0.02173  # 20.0046 s
    assert c.check_ratio == pytest.approx(ratio, rel=1e-9) and ratio == pytest.approx(0.9209, abs=1e-4)
    assert c.expected_ratio == pytest.approx(decode / (1.17032 + decode), rel=1e-9)
    assert c.residual == pytest.approx(0.9748, abs=1e-3) and c.ttft_measured


def test_identity_without_ttft_implies_one():
    # ratio 0.8 means TTFT = (1/0.8 - 1) x the decode time: a quarter of it
    tpot = 0.005
    tput = 0.8 * 16 * 2 * (1 / tpot) / 8
    c = check_row("x", _row(16, tput, tpot * 1e3))
    assert c.check_ratio == pytest.approx(0.8) and math.isnan(c.residual) and not c.ttft_measured
    assert c.ttft_s == pytest.approx(0.25 * (0.9 * 1024 - 1) * tpot)


def test_output_throughput_stands_in_and_interactivity_for_tpot():
    a = check_row("x", _row(16, 400.0, 10.0))
    b = check_row("y", {**_row(16, "", ""), "output_tput_per_gpu": "200", "tok_s_user": "100"})
    assert b.check_ratio == pytest.approx(a.check_ratio)


def test_rows_without_the_cells_are_not_checked(tmp_path):
    p = _write(tmp_path / "p.csv", [_row(16, 400.0, ""), _row(32, "", 10.0), _row(64, 400.0, 10.0, gpus="")])
    t = quality_table(p)
    assert not t.checked.any() and (t.flag == "").all()


def test_faster_than_its_decode_allows_is_flagged(tmp_path):
    p = _write(tmp_path / "p.csv", [_row(16, 1.2 * 16 * 2 * 100 / 8, 10.0)])  # ratio 1.2 > 1.05
    assert "check ratio 1.20 > 1.05" in flagged_points(p)["p:2"]


def test_identity_residual_outside_the_band_is_flagged(tmp_path):
    # TTFT 0.2 s measured, TPOT 10 ms: expected ratio 9.206/9.406 = 0.979; a throughput 20% low is flagged
    ok = 0.979 * 16 * 2 * 100 / 8
    p = _write(tmp_path / "p.csv", [_row(16, ok, 10.0, 200), _row(16, 0.8 * ok, 10.0, 200, source="other")])
    f = flagged_points(p)
    assert "p:2" not in f and "throughput is 0.80x" in f["p:3"]


def test_a_ttft_that_falls_as_load_rises_is_flagged(tmp_path):
    # implied TTFTs: c6 ~2.3 s, c10 ~0.2 s, c20 ~0.3 s (decode 9.2 s): the c6 row is 10x its successor
    rows = [_row(c, r * c * 2 * 100 / 8, 10.0) for c, r in ((6, 0.8), (10, 0.978), (20, 0.968))]
    f = flagged_points(_write(tmp_path / "p.csv", rows))
    assert set(f) == {"p:2"} and "implied TTFT 2.30 s at concurrency 6" in f["p:2"]
    assert "the same sweep at concurrency 10" in f["p:2"]


def test_ttft_wobbles_within_the_noise_are_not_flagged(tmp_path):
    # 0.28 s then 0.13 s implied (a 2.2x fall) is within 3% of E2E each (the GB200 Dynamo-TRT c8/c12 rows)
    rows = [_row(c, r * c * 2 * 100 / 8, 10.0) for c, r in ((8, 0.970), (12, 0.986))]
    assert flagged_points(_write(tmp_path / "p.csv", rows)) == {}


def test_different_sweeps_are_not_compared(tmp_path):
    rows = [_row(6, 0.6 * 6 * 2 * 100 / 8, 10.0), _row(10, 0.98 * 10 * 2 * 100 / 8, 10.0, framework="vllm")]
    assert flagged_points(_write(tmp_path / "p.csv", rows)) == {}


def test_source_flags_match_their_cells(tmp_path):
    flags = tmp_path / "flags.toml"
    flags.write_text('[[flag]]\nmatch = { hardware = "B200", conc = 64, source = "sweep" }\n'
                     'reason = "the run stalled"\nsource = "the author, issue 1"\n')
    p = _write(tmp_path / "p.csv", [_row(32, 400, 10.0), _row(64, 400, ""), _row(64.0, 400, "", hardware="H200")])
    assert flagged_points(p, flags) == {"p:3": "source flag: the run stalled (the author, issue 1)"}


def test_a_bad_source_flag_file_names_what_is_missing(tmp_path):
    flags = tmp_path / "flags.toml"
    flags.write_text('[[flag]]\nmatch = { conc = 64 }\nreason = "x"\n')
    with pytest.raises(SpecError, match=r"flags.toml flag 1.*missing \['source'\]"):
        load_source_flags(flags)
    flags.write_text("[[flag]\n")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_source_flags(flags)


@pytest.mark.parametrize(("body", "words"), [
    # each was accepted: a string match raised AttributeError, an empty one flagged every row, a
    # misspelt column flagged none, a boolean matched conc = 1, an empty reason printed nothing
    ('flag = "x"\n', "flags.toml: flag: must be a list of [[flag]] tables"),
    ('[[flag]]\nmatch = "B200"\nreason = "r"\nsource = "s"\n', "flags.toml flag 1: match: must be a non-empty table"),
    ('[[flag]]\nmatch = {}\nreason = "r"\nsource = "s"\n', "flags.toml flag 1: match: must be a non-empty table"),
    ('[[flag]]\nmatch = { hardwre = "B200" }\nreason = "r"\nsource = "s"\n',
     "flags.toml flag 1: match: names no column of the points CSV: hardwre"),
    ('[[flag]]\nmatch = { conc = true }\nreason = "r"\nsource = "s"\n',
     "flags.toml flag 1: match.conc: must be a string or a number, got True"),
    ('[[flag]]\nmatch = { conc = 64 }\nreason = " "\nsource = "s"\n', "flags.toml flag 1: reason: must be a non-empty string"),
])
def test_a_malformed_source_flag_is_refused_by_its_field(tmp_path, body, words):
    flags = tmp_path / "flags.toml"
    flags.write_text(body)
    with pytest.raises(SpecError) as ei:
        load_source_flags(flags)
    assert words in str(ei.value) and "Fix:" in str(ei.value)


def _shipped():
    return resources.files("jalapeno") / "data" / "validation" / "inferencex_points.csv"


def test_shipped_file_check_ratio_column_agrees_with_the_identity():
    """The file's own check_ratio column (transcribed with each row) is the TTFT-free ratio."""
    t = quality_table(_shipped())
    with _shipped().open(newline="") as f:
        col = [r["check_ratio"] for r in csv.DictReader(f)]
    pairs = [(float(c), r) for c, r in zip(col, t.check_ratio) if c.strip() and math.isfinite(r)]
    assert len(pairs) >= 40
    assert all(abs(c - r) < 0.005 for c, r in pairs), [p for p in pairs if abs(p[0] - p[1]) >= 0.005]


def test_shipped_rows_with_every_cell_hold_the_identity():
    t = quality_table(_shipped())
    full = t[t.residual.notna()]
    assert len(full) >= 25 and full.residual.between(0.95, 1.0).all()


def test_shipped_flags():
    """The source-flagged B200 SGLang c64 run and the B200 Dynamo-TRT c6 row whose implied TTFT is 10x
    its sweep's next point are flagged; the rows of every other sweep pass."""
    f = flagged_points(_shipped())
    by_line = {int(k.split(":")[1]) for k in f}
    assert {11, 89} <= by_line
    assert f["inferencex_points:89"].startswith("source flag:")
    assert "implied TTFT" in f["inferencex_points:11"]
    assert not any(55 <= k <= 84 for k in by_line)  # the official-runner sweeps with every cell
