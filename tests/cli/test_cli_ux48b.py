"""Notes validate printed on every run over the shipped data that read as problems (ux48b): the
``(best FP8)`` row's default-profile note offered ``--stack`` as a fix for a row that names no engine,
and the skipped rows were listed as the first five one by one (five aiconfigurator rows of one model the
catalog lacks, out of 3,031 skips of four expected kinds)."""

from __future__ import annotations

from importlib import resources

from cli_runner import run


def _ix_lines():
    return (resources.files("jalapeno") / "data" / "validation" / "inferencex_points.csv").read_text().splitlines()


def test_a_best_of_sweep_label_is_said_to_name_no_engine(capsys, tmp_path):
    """Shipped row 36 (framework ``(best FP8)``, B200 DeepSeek-R1 FP8 5,856.9 tok/s/GPU) is the InferenceX blog's
    best FP8 figure; the blog (best-gpu-for-dsr1-inference.mdx @2d1d3d65) names no framework for it, so the
    default profile is right and the note says why, without '--stack NAME to choose one'."""
    lines = _ix_lines()
    best = next(x for x in lines if ",(best FP8)," in x)
    assert best.startswith("B200,DeepSeek-R1-0528,FP8,(best FP8),") and ",5856.9," in best
    p = tmp_path / "best.csv"
    p.write_text(f"{lines[0]}\n{best}\n")
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator")
    assert code == 0, err
    text = " ".join(out.split())
    assert (
        "rows labelled '(best FP8)' name no engine (a published best-of-sweep figure): priced with the "
        "'default' profile"
    ) in text
    assert "no software-stack profile lists them" not in text and "--stack NAME" not in text
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator", "--json")
    assert code == 0, err
    assert "note: rows labelled '(best FP8)' name no engine" in " ".join(err.split())
    assert out.lstrip().startswith("{")


def test_a_label_and_an_unknown_engine_each_get_their_words(capsys, tmp_path):
    """A file with the label row and a row of an engine no profile lists ('nosuchfw'): the label is explained,
    the engine keeps the --stack fix, in one line."""
    lines = _ix_lines()
    best = next(x for x in lines if ",(best FP8)," in x)
    mi = next(x for x in lines if x.startswith("MI355X,gpt-oss-120b,")).replace(",atom,", ",nosuchfw,", 1)
    p = tmp_path / "both.csv"
    p.write_text(f"{lines[0]}\n{best}\n{mi}\n")
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator")
    assert code == 0, err
    assert (
        "rows labelled '(best FP8)' name no engine (a published best-of-sweep figure): priced with the "
        "'default' profile; framework(s) 'nosuchfw': no software-stack profile lists them (data/stacks.toml "
        "engines): priced with the 'default' profile; --stack NAME to choose one"
    ) in " ".join(out.split())


def test_skipped_rows_are_listed_by_kind_of_reason(capsys, tmp_path):
    """Beside one row that maps, three rows naming hardware the catalog lacks (each a different name) and one with
    a fractional ISL: two kinds, so two lines — '3 rows skipped, e.g. <first>' and the ISL row by itself — where the old listing
    printed the first five rows one by one."""
    lines = _ix_lines()
    row = next(x for x in lines if x.startswith("MI355X,gpt-oss-120b,"))
    rows = [row.replace("MI355X,", f"{hw},", 1) for hw in ("TPU9", "X200", "Z300")]
    cells = row.split(",")
    isl = lines[0].split(",").index("isl")
    cells[isl] = "1024.5"
    p = tmp_path / "skips.csv"
    p.write_text("\n".join([lines[0], row, *rows, ",".join(cells)]) + "\n")
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator")
    assert code == 0, err
    text = " ".join(out.split()) + " " + " ".join(err.split())
    assert "4 row(s) skipped (not mappable)" in text
    assert "3 rows skipped, e.g. skips:3: hardware/model 'TPU9'/'gpt-oss-120b' not in the catalog" in text
    assert "skipped skips:6: isl/osl '1024.5'/" in text
    assert "skipped skips:4" not in text and "... and" not in text
