"""Findings of round 46's break-it pass (break46): an output path that ``os.access`` passes but no file can be
created at (a root user's ``/proc/x.csv``) ran the whole command first (``validate --mlperf -o``: 155 s) and was
refused after it; ``report --html`` named ``--out`` when the page could not be written; ``explore --html`` was not
held to the writable check at all; a design-space case's ``precision`` that its model or the base chip cannot run
was blamed on the base and the floor ("lower objective.min_interactivity or pick another base"); ``report --measured``
with a user CSV holding no point of the model and lengths drew nothing and said so on the page only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_runner import check_error, run

EXAMPLE = Path(__file__).parents[2] / "examples" / "explore_700w.toml"
POINTS = Path(__file__).parents[2] / "src" / "jalapeno" / "data" / "validation" / "inferencex_points.csv"


@pytest.fixture
def as_root(monkeypatch):
    """``os.access`` as a root user sees it: every folder writable (the create probe must still refuse /proc)."""
    monkeypatch.setattr(os, "access", lambda *a, **k: True)


def test_an_output_no_file_can_be_created_at_is_refused_before_the_run(capsys, monkeypatch, as_root):
    import jalapeno.fit.validation_run as vr

    def never(*a, **k):  # the run this check must come before
        raise AssertionError("validate ran before its --out was checked")

    monkeypatch.setattr(vr, "run_validation", never)
    code, out, err = run(capsys, "validate", "--no-aiconfigurator", "-o", "/proc/no-such-dir-x.csv")
    # was (as root): the whole validation, then "--out: cannot write /proc/x.csv: No such file or directory"
    check_error(code, out, err, "--out: cannot write '/proc/no-such-dir-x.csv'", "give a file path in a folder")


def test_the_create_probe_leaves_no_file_and_keeps_an_existing_one(tmp_path):
    from jalapeno.cli.out_paths import check_writable

    new = tmp_path / "new.csv"
    check_writable(str(new), "--out")
    assert not new.exists()  # created to try, then removed
    old = tmp_path / "old.csv"
    old.write_text("kept\n")
    check_writable(str(old), "--out")
    assert old.read_text() == "kept\n"  # opened for appending, never truncated


def test_a_dangling_link_is_probed_at_its_target(tmp_path):
    """review46: ``-o out.csv`` where out.csv is a symbolic link to a file not yet written (``ln -s
    /data/run/out.csv out.csv``) is written through the link, creating its target; the create probe refused it
    ("File exists": an exclusive create does not follow a link). The probe leaves neither target nor link changed;
    a link whose target's folder is missing, or a link loop, is still refused before the run."""
    from jalapeno.cli.out_paths import check_writable
    from jalapeno.errors import SpecError

    (tmp_path / "data").mkdir()
    link = tmp_path / "out.csv"
    link.symlink_to(tmp_path / "data" / "out.csv")
    check_writable(str(link), "--out")  # was SpecError "cannot write ... (File exists)"
    assert link.is_symlink() and not (tmp_path / "data" / "out.csv").exists()  # the probe's target removed again
    lost = tmp_path / "lost.csv"
    lost.symlink_to(tmp_path / "no-such-folder" / "out.csv")
    with pytest.raises(SpecError, match="No such file or directory"):
        check_writable(str(lost), "--out")
    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop)
    with pytest.raises(SpecError, match="loops back on itself"):
        check_writable(str(loop), "--out")


def test_explore_html_is_held_to_the_writable_check(capsys, as_root):
    code, out, err = run(capsys, "explore", str(EXAMPLE), "--html", "/proc/no-such-dir-x.html")
    # was: not checked beyond its folder's existence; every trial ran, then "cannot write"
    check_error(code, out, err, "--html: cannot write '/proc/no-such-dir-x.html'")


def test_report_names_html_when_the_page_cannot_be_written(capsys, monkeypatch, tmp_path):
    import jalapeno.cli.report_cmd as rc

    monkeypatch.setattr(rc, "check_writable", lambda *a: None)  # reach the page's own write
    args = ("report", "-s", "h200", "-m", "llama-3.3-70b", "--serving", "agg", "--measured", "none")
    code, out, err = run(capsys, *args, "--html", str(tmp_path / "gone" / "r.html"))
    # was: "--out: cannot write ..." after `--html` was typed
    check_error(code, out, err, "--html: cannot write", "r.html")


def _space(tmp_path: Path, base: str, model: str, precision: str) -> Path:
    p = tmp_path / "s.toml"
    p.write_text(
        f'name = "t"\nbase = "{base}"\n[objective]\nmetrics = ["tok_s_per_kw"]\n'
        f'[[cases]]\nmodel = "{model}"\nprecision = "{precision}"\n'
        '[params."chip.hbm_stacks"]\nchoices = [6, 8]\n'
    )
    return p


@pytest.mark.parametrize(
    ("base", "model", "precision", "words"),
    [
        # fp4 is defined by routed experts: a dense model has none (specs/precision_checks.check_precision)
        ("jalapeno", "llama-3.3-70b", "fp4", ["routed experts", 'precision = "nvfp4"']),
        # H200 has BF16 and FP8 tensor cores only (data/systems/h200.toml formats)
        ("h200", "deepseek-r1", "fp4", ["no tensor cores", 'precision = "fp8"']),
    ],
)
def test_a_case_precision_the_model_or_base_cannot_run_is_named_as_the_case(tmp_path, base, model, precision, words):
    from jalapeno.analysis.explore import make_evaluator
    from jalapeno.errors import SpecError
    from jalapeno.specs.design_space import load_design_space

    space = load_design_space(_space(tmp_path, base, model, precision))
    with pytest.raises(SpecError) as e:
        make_evaluator(space)
    msg = str(e.value)
    # was: "base: the base system ... cannot be scored: ... Fix: lower objective.min_interactivity or pick another base"
    assert e.value.field == "cases.0.precision", msg
    for w in [*words, "drop its precision"]:
        assert w in msg, (w, msg)
    assert "min_interactivity" not in msg and "--compute-fallback" not in msg and "-p " not in msg


def test_a_measured_csv_with_no_point_of_the_model_says_so(capsys, tmp_path):
    lines = POINTS.read_text().splitlines()
    p = tmp_path / "pts.csv"
    p.write_text("\n".join([lines[0], *[ln for ln in lines[1:] if ln.startswith("H200,DeepSeek-R1")][:2]]) + "\n")
    args = ("report", "-s", "h200", "-m", "llama-3.3-70b", "--serving", "agg", "--html", str(tmp_path / "r.html"))
    code, out, err = run(capsys, *args, "--measured", str(p))
    assert code == 0, err
    # was: silent on the console (the note on the page only)
    assert "note: --measured pts.csv: No measured point of llama-3.3-70b" in err, err


@pytest.mark.parametrize(
    ("cmd", "text", "meant"),
    [
        (("audit", "--claim"), "Max_Interactivity=700", "max_interactivity"),
        (("audit", "--claim"), "Throughput_Per_Chip@50=100", "throughput_per_chip@50"),
        (("sensitivity", "--metric"), "MAX_INTERACTIVITY", "max_interactivity"),
    ],
)
def test_an_upper_case_metric_is_named_with_the_one_meant(capsys, cmd, text, meant):
    code, out, err = run(capsys, cmd[0], "-s", "h200", "-m", "llama-3.3-70b", cmd[1], text)
    # was: "'Max_Interactivity=700' is not METRIC[@X]=VALUE" with no hint (the metric names are lower case)
    check_error(code, out, err, f"{cmd[1]}: '{text}' is not METRIC[@X]", f"lower case: did you mean {meant}?")


def test_a_model_folder_is_named_with_its_config_json(capsys, tmp_path, monkeypatch):
    folder = tmp_path / "Llama-3.3-70B"
    folder.mkdir()
    (folder / "config.json").write_text(
        (Path(__file__).parents[2] / "src/jalapeno/data/models/llama-3.3-70b.json").read_text()
    )
    monkeypatch.chdir(tmp_path)
    args = ("predict", "-s", "h200", "-c", "4", "--json")
    code, out, err = run(capsys, *args, "-m", "Llama-3.3-70B")
    # was: "unknown model 'Llama-3.3-70B'" as for a typo (a bare name is looked up in the catalog)
    check_error(code, out, err, "--model: 'Llama-3.3-70B' is a folder here", "pass ./Llama-3.3-70B/config.json")
    code, out, err = run(capsys, *args, "-m", "./Llama-3.3-70B")
    # was: "is a directory ... Fix: pass a model name ... or the path of a config.json"
    check_error(code, out, err, "is a directory", "pass the config.json it holds: Llama-3.3-70B/config.json")
    code, out, err = run(capsys, *args, "-m", "Llama-3.3-70B/config.json")
    assert code == 0, err


def test_a_system_folder_is_named_as_a_folder(capsys, tmp_path, monkeypatch):
    (tmp_path / "mine").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "predict", "-s", "mine", "-m", "llama-3.3-70b", "-c", "4")
    check_error(code, out, err, "--system: 'mine' is a folder here", "the path of a system TOML in it")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # TOML 1.0: "Defining a key multiple times is invalid"; tomllib said only "Cannot overwrite a value (at line 3 ...)"
        (
            'base = "h200"\nname = "x"\nchip.tdp_w = 800\nchip.tdp_w = 900\n',
            ["the key 'chip.tdp_w' is set twice", "line 4"],
        ),
        ('base = "h200"\n[chip]\ntdp_w = 800\n[chip]\nname = "y"\n', ["the table [chip] is declared twice (line 4)"]),
    ],
)
def test_a_key_or_table_given_twice_is_named(capsys, tmp_path, text, words):
    p = tmp_path / "twice.toml"
    p.write_text(text)
    code, out, err = run(capsys, "hardware", "show", str(p))
    check_error(code, out, err, "twice.toml", *words)


@pytest.mark.parametrize(
    ("text", "words", "not_words"),
    [
        # review46: a line separator (U+2028) inside a string is no line break to tomllib, but was one to
        # str.splitlines: the line shown was the one before the repeated key
        ('x = "\u2028"\ny = 1\ny = 2\n', ["(line 3: y = 2)"], ["y = 1)"]),
        # an inline table extended later: nothing is given twice, the table is closed (TOML 1.0, inline tables)
        ("a = {x = 1}\na.y = 2\n", ["adds to an inline table", "line 2: a.y = 2"], ["set twice"]),
        # a key under a plain value: 'a' is the value, 'a.b' was never set before
        ("a = 1\na.b = 2\n", ["or a key it is under ('a') is a value already"], []),
    ],
)
def test_a_key_given_twice_names_the_right_line_and_reason(text, words, not_words):
    import tomllib

    from jalapeno.specs.files import parse_toml

    with pytest.raises(tomllib.TOMLDecodeError) as e:
        parse_toml(text)
    assert all(w in str(e.value) for w in words), str(e.value)
    assert not any(w in str(e.value) for w in not_words), str(e.value)


def test_a_calibration_file_given_twice_a_key_says_which(capsys, tmp_path):
    p = tmp_path / "cal.toml"
    p.write_text('system = "h200"\nsystem = "h100"\n')
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "-c", "4", "--efficiency", str(p))
    # was: "is not a readable calibration TOML (TOMLDecodeError)": the error's class, not what is wrong
    check_error(code, out, err, "--efficiency", "the key 'system' is set twice (line 2")


def test_a_store_folder_that_cannot_be_made_is_refused_before_the_sweep(capsys, monkeypatch, tmp_path):
    pytest.importorskip("pyarrow")
    import jalapeno.analysis.comparison as comparison

    def never(*a, **k):  # the sweep this check must come before
        raise AssertionError("compare swept before its --store was checked")

    monkeypatch.setattr(comparison, "compare_systems", never)
    (tmp_path / "notes.txt").write_text("x")
    args = ("compare", "-s", "h200", "-m", "llama-3.3-70b", "--html", "")
    code, out, err = run(capsys, *args, "--store", str(tmp_path / "notes.txt" / "st"))
    # was: every system swept, then "cannot create ...: Not a directory"
    check_error(code, out, err, "--store: cannot create", "notes.txt' is a file, not a folder")
    code, out, err = run(capsys, *args, "--store", "/proc/no-such-store")  # root: mkdir fails there; others: EACCES
    check_error(code, out, err, "--store: cannot create '/proc/no-such-store'", "give a writable folder")
    (tmp_path / "link").symlink_to(tmp_path / "gone")  # a link to nothing: mkdir refused it after the sweep
    code, out, err = run(capsys, *args, "--store", str(tmp_path / "link"))
    check_error(code, out, err, "--store:", "is a symbolic link to", "gone', which does not exist",
                "create the folder it points to")


def test_a_target_whose_fleet_is_above_the_chip_bound_is_refused(capsys):
    args = ("plan", "-s", "h200", "-m", "llama-3.3-70b", "--serving", "agg")
    code, out, err = run(capsys, *args, "--target", "1e12")
    # was: exit 0 with 1.77e9 chips, where --chips 2000000000 and --power-mw 1e9 are refused at the 1e9-chip bound
    check_error(code, out, err, "--target: 1e+12 tok/s needs", "above the 1,000,000,000-chip plausibility bound")
    code, out, err = run(capsys, *args, "--target", "1e6", "--json")
    assert code == 0, err


def test_a_base_that_fits_no_layout_is_not_told_to_lower_the_floor(tmp_path):
    from jalapeno.analysis.explore import make_evaluator
    from jalapeno.errors import JalapenoError
    from jalapeno.specs.design_space import load_design_space

    p = tmp_path / "s.toml"  # Kimi K2.5 (1T parameters, int4: ~0.5 TB) on 8 A100s of 80 GB: no layout holds it
    p.write_text(
        'name = "t"\nbase = "a100-sxm"\n[objective]\nmetrics = ["tok_s_per_kw"]\nmin_interactivity = 10\n'
        '[[cases]]\nmodel = "kimi-k2.5"\n[params."chip.tdp_w"]\nchoices = [400, 450]\n'
    )
    with pytest.raises(JalapenoError) as e:
        make_evaluator(load_design_space(p))
    # was: "Fix: lower objective.min_interactivity or pick another base", for a model no floor keeps out
    assert "cases.0 (kimi-k2.5)" in e.value.fix and "max_stage_factor" in e.value.fix, str(e.value)
    assert "min_interactivity" not in e.value.fix
