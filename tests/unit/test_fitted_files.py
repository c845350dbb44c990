"""The shipped fitted files are what their fits give today (fit/fitted_files.py, scripts/recalibrate.py).

``data/moe_width.toml`` went stale from round 11 to round 36 because nothing checked it; these tests make a stale
calibration set or width term fail CI (which installs the [calibrate] extra), and check the comparison by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from script_module import load_script

from jalapeno.fit.fidelity import load_thresholds
from jalapeno.fit.fitted_files import CHAIN, REL_TOL, check_file, numeric_diffs, toml_text_diffs

ROOT = Path(__file__).resolve().parents[2]


def test_numeric_diffs_by_hand():
    shipped = {"a": 0.765, "b": {"c": [1, 2.0], "d": "trtllm 1.3.0rc20"}, "e": True}
    # within the tolerance: 0.765 * (1 + 1e-3) = 0.765765
    assert numeric_diffs(shipped, {"a": 0.765765, "b": {"c": [1, 2.0], "d": "trtllm 1.3.0rc20"}, "e": True}) == []
    # beyond it: 0.770 / 0.765 - 1 = 0.65% > 0.2%
    assert numeric_diffs(shipped, {**shipped, "a": 0.770}) == ["a: shipped 0.765, fresh fit 0.77"]
    assert numeric_diffs(shipped, {**shipped, "b": {"c": [1, 2.0], "d": "trtllm 1.3.0rc21"}}) == [
        "b.d: shipped 'trtllm 1.3.0rc20', fresh fit 'trtllm 1.3.0rc21'"]
    assert numeric_diffs(shipped, {**shipped, "b": {"c": [1], "d": "trtllm 1.3.0rc20"}}) == [
        "b.c: 2 entries shipped, 1 in a fresh fit"]
    assert numeric_diffs(shipped, {"a": 0.765, "b": shipped["b"], "e": True, "f": 1}) == [
        "f: in a fresh fit, not in the shipped file"]
    assert numeric_diffs(shipped, {"a": 0.765, "b": shipped["b"]}) == ["e: in the shipped file, not in a fresh fit"]
    # a boolean is not the number 1
    assert numeric_diffs({"x": True}, {"x": 1}) == ["x: shipped True, fresh fit 1"]
    assert REL_TOL < 0.0065


def test_toml_text_diffs_names_the_file_and_the_entry():
    a = '[[width]]\nsystem = "h100"\nc_elems = 1291.6\n'
    b = '[[width]]\nsystem = "h100"\nc_elems = 1345.5\n'
    assert toml_text_diffs(a, b, "moe_width.toml") == ["moe_width.toml: width[0].c_elems: shipped 1291.6, fresh fit 1345.5"]
    assert toml_text_diffs(a, a, "moe_width.toml") == []


def test_check_file_current_stale_and_missing(tmp_path, capsys):
    # the fit scripts' --check (_toml_tables.emit, fit_stacks.py, fit_moe_width.py): a missing file was a traceback
    f = tmp_path / "moe_width.toml"
    fresh = 'c_elems = 1345.5\n'
    assert check_file(f, fresh) == 1
    assert "moe_width.toml: not written yet" in capsys.readouterr().out
    f.write_text('c_elems = 1291.6\n')
    assert check_file(f, fresh) == 1
    assert capsys.readouterr().out.splitlines() == ["moe_width.toml: c_elems: shipped 1291.6, fresh fit 1345.5",
                                                    "moe_width.toml: differs from a fresh fit; rerun without --check"]
    f.write_text(fresh)
    assert check_file(f, fresh) == 0 and capsys.readouterr().out == "moe_width.toml: current\n"


def test_the_chain_refits_each_file_after_the_files_it_reads():
    order = [s.name for s in CHAIN]
    # moe_width reads the calibrated moe half_rows; the stack fits price rows with both; LOSO refits the stacks;
    # the derived sets' bands read LOSO's band_error; the bands, goldens and docs read every prediction
    assert order.index("calibrate") < order.index("moe_width") < order.index("stacks") < order.index("loso") \
        < order.index("derived") < order.index("bands")
    assert order.index("validation_doc") < order.index("ratchet")
    # the W4A16 expert forms are read by every set that has them (specs/w4a16_moe.py): refitted before the stack fits
    # and predictions that price Kimi K2.5's INT4 experts with them; they read the kernel tables only
    assert order.index("moe_floors") < order.index("w4a16_forms") < order.index("calibrate") < order.index("stacks")
    # docs/collectives.md prices each fitted stack's engine all-reduce: round 40's stack refit moved one of its
    # figures after a chain that did not regenerate it, and test_collectives_page_is_current went red
    assert order.index("stacks") < order.index("collectives_doc")
    # the stall is fitted on the model's own TTFT spread at v0.5.9, which sglang_rocm's rule moves (review36)
    assert order.index("derived") < order.index("sglang_rocm") < order.index("first_wave_stall") < order.index("bands")
    for s in CHAIN:
        for cmd in (s.argv, s.check):
            if cmd and cmd[0] == "python":
                assert (ROOT / cmd[1]).is_file(), f"{s.name}: {cmd[1]} is not a script"


def test_recalibrate_refuses_an_unknown_or_reversed_span():
    rc = load_script("recalibrate")
    with pytest.raises(SystemExit, match="--from: unknown step 'stack'; use one of engine_allreduce, moe_kernels, moe_floors, w4a16_forms, calibrate"):
        rc.main(["--from", "stack", "--list"])
    with pytest.raises(SystemExit, match="--from loso comes after --to calibrate"):
        rc.main(["--from", "loso", "--to", "calibrate", "--list"])


def test_fidelity_ratchet_check_fails_when_a_threshold_could_be_lowered(tmp_path, monkeypatch, capsys):
    fr = load_script("fidelity_ratchet")
    text = fr.THRESHOLDS.read_text()
    # the guarded points priced once for the two runs (~5 s each): guard_rows reads package data alone, so the second
    # run's rows are the first's; each run gets its own copy (guard_figures only reads them)
    priced = fr.guard_rows()
    monkeypatch.setattr(fr, "guard_rows", lambda: priced.copy())
    assert fr.main(False, check_only=True) == 0  # the shipped thresholds are ratcheted
    # raise one threshold by 5 points: the ratchet would lower it again, so the file is not current
    loose = tmp_path / "fidelity_thresholds.toml"
    i = text.index("median_ape = ", text.index("[overall.")) + len("median_ape = ")
    j = text.index("\n", i)
    loose.write_text(text[:i] + f"{float(text[i:j]) + 0.05:.3f}" + text[j:])
    monkeypatch.setattr(fr, "THRESHOLDS", loose)
    monkeypatch.setattr(fr, "load_thresholds", lambda: load_thresholds(loose))
    assert fr.main(False, check_only=True) == 1
    assert "a threshold can be lowered; run python scripts/fidelity_ratchet.py --write" in capsys.readouterr().out


# ---- the shipped files against a fresh fit (the [calibrate] extra; CI installs it) -------------------------


def test_moe_width_is_current():
    pytest.importorskip("aiconfigurator_core")
    pytest.importorskip("scipy")
    fw = load_script("fit_moe_width")
    assert toml_text_diffs(fw.OUT.read_text(), fw.render(fw.entries()), fw.OUT.name) == [], \
        "stale: rerun python scripts/fit_moe_width.py (python scripts/recalibrate.py --from moe_width)"


def test_calibration_sets_are_current():
    # stays slow (~70 s quiet, the suite's slowest test): it is a full `jalapeno calibrate` of every system, and a
    # fresh fit is the only way to know the shipped sets are current; nothing else in the suite runs the fit
    from importlib.metadata import PackageNotFoundError, distribution

    pytest.importorskip("aiconfigurator_core")
    pytest.importorskip("scipy")
    try:
        distribution("amd-aiter")  # AMD's tables, read from the installed package (fit/amd.py), not imported
    except PackageNotFoundError:
        pytest.skip("amd-aiter is not installed")
    from jalapeno.fit.fitted_files import calibration_diffs

    assert calibration_diffs() == [], "stale: rerun jalapeno calibrate (python scripts/recalibrate.py)"


# ---- scripts/recalibrate.py used as a user would (review36) --------------------------------------------------


@pytest.mark.parametrize("argv,message", [
    (["--list", "--check"], "--list prints the chain and runs nothing; give --list or --check"),
    (["--check-calibration", "--from", "stacks"], "--check-calibration runs alone"),
    (["--check-calibration", "--check"], "--check-calibration runs alone"),
])
def test_recalibrate_refuses_flags_it_would_ignore(argv, message, capsys):
    rc = load_script("recalibrate")
    with pytest.raises(SystemExit) as e:
        rc.main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_recalibrate_refuses_another_trees_package(tmp_path):
    # jalapeno calibrate writes the imported package's data/calibration, the scripts this checkout's
    rc = load_script("recalibrate")
    rc.check_package_root(ROOT / "src" / "jalapeno")  # this checkout's: no error
    with pytest.raises(SystemExit, match=f"the jalapeno package imported is {tmp_path.resolve()}, not this checkout's"):
        rc.check_package_root(tmp_path)


def test_recalibrate_stops_after_a_value_copied_by_hand(monkeypatch, capsys):
    # sglang_rocm_release.py prints the value for data/stacks.toml; the bands and goldens after it must not be
    # written from the old value: the run stops until its check passes, naming the step to resume from
    rc = load_script("recalibrate")
    calls = []

    def fake_run(argv, cwd):
        calls.append(argv[1:])
        return type("R", (), {"returncode": 1 if "--check" in argv else 0})()

    monkeypatch.setattr(rc.subprocess, "run", fake_run)
    assert rc.run(rc._span("sglang_rocm", "golden")) == 1
    assert calls == [["scripts/sglang_rocm_release.py"], ["scripts/sglang_rocm_release.py", "--check"]]
    assert "copy it, then resume: python scripts/recalibrate.py --from first_wave_stall" in capsys.readouterr().out
    calls.clear()
    assert rc.run(rc._span("first_wave_stall", "golden")) == 1
    assert calls == [["scripts/first_wave_stall.py"], ["scripts/first_wave_stall.py", "--check"]]
    assert "copy it, then resume: python scripts/recalibrate.py --from bands" in capsys.readouterr().out


def test_first_wave_stall_check_names_the_fix(monkeypatch, capsys):
    fws = load_script("first_wave_stall")
    monkeypatch.setattr(fws, "fitted_stall", lambda: (2.30, {}))  # 60 ms from the shipped 2.24 s: stale
    assert fws.check() == 1
    assert "the fit gives 2.30 s; write first_wave_stall_s = 2.30 in data/stacks.toml" in capsys.readouterr().out
    monkeypatch.setattr(fws, "fitted_stall", lambda: (2.244, {}))  # within half of the last written digit
    assert fws.check() == 0


def test_recalibrate_check_tells_a_stale_file_from_a_check_that_could_not_run(monkeypatch, capsys):
    rc = load_script("recalibrate")
    codes = {"scripts/fit_moe_width.py": 1, "scripts/fit_moe_backend_kernels.py": 2}

    def fake_run(argv, cwd, **kw):
        return type("R", (), {"returncode": codes.get(argv[1], 0), "stdout": "", "stderr": "why\n"})()

    monkeypatch.setattr(rc.subprocess, "run", fake_run)
    assert rc.check(rc._span("moe_kernels", "moe_width"), quick=True) == 1
    out = capsys.readouterr().out
    assert "-- moe_kernels: NOT CHECKED (rc 2)" in out and "-- moe_floors: current" in out
    assert "-- moe_width: STALE" in out and "could not check: moe_kernels" in out
    assert "stale: moe_width; refit from the first: python scripts/recalibrate.py --from moe_width" in out
