"""``jalapeno validate`` and ``jalapeno calibrate`` in-process, on the committed fixtures.

Bad input: one ``error:`` line on stderr, exit code 2, no traceback. ``calibrate`` without the
optional aiconfigurator-core package must say how to install it (``.[calibrate]``).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import sys
from pathlib import Path

import pytest
from cli_runner import error_line, run
from csv_rows import write_rows

from jalapeno.cli.app import main

POINTS = Path(__file__).resolve().parents[1] / "fixtures" / "inferencex_points_sample.csv"




@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    """One validate run with --json, --out and --html together (the prediction is the slow part);
    capsys is per test, so output is captured by redirection here."""
    d = tmp_path_factory.mktemp("validate")
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["validate", "--points", str(POINTS), "--no-aiconfigurator", "--json",
                  "--out", str(d / "x.csv"), "--html", str(d / "p.html")])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return code, out.getvalue(), err.getvalue(), d


def test_validate_json(validated):
    code, out, err, _ = validated
    assert code == 0, err
    assert "Traceback" not in out + err
    d = json.loads(out)
    assert {"summary", "overall"} <= set(d)
    assert d["sources"] == {"inferencex": str(POINTS)}
    assert set(d["overall"]) == {"inferencex"}
    tput = d["overall"]["inferencex"]["throughput_per_chip"]
    assert tput["n"] == 11 and 0 <= tput["median_ape"] <= tput["p90_ape"]
    assert d["summary"] and {"system", "metric", "n", "median_ape", "bias"} <= set(d["summary"][0])
    assert sum(r["n"] for r in d["summary"] if r["metric"] == "throughput_per_chip") == 11
    assert d["skipped"] == []


def test_validate_out_csv(validated):
    code, _, err, d = validated
    assert code == 0, err
    with (d / "x.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) > 11
    assert {"id", "system", "metric", "measured", "predicted", "error", "mapping", "kernels_calibrated"} <= set(rows[0])
    assert {r["id"] for r in rows} == {f"inferencex_points_sample:{i}" for i in range(2, 13)}
    for r in rows:
        if r["error"]:
            assert float(r["error"]) == pytest.approx(float(r["predicted"]) / float(r["measured"]) - 1, rel=1e-9)


def test_validate_html_parity_plot(validated):
    code, _, err, d = validated
    assert code == 0, err
    html = (d / "p.html").read_text()
    assert html.lstrip().lower().startswith("<html") or "<html" in html[:2000].lower()
    assert "plotly" in html.lower() and "throughput_per_chip" in html


def test_validate_table(capsys):
    code, out, err = run(capsys, "validate", "--points", str(POINTS), "--no-aiconfigurator", "--efficiency", "spec")
    assert code == 0, err
    assert "validation (spec efficiencies)" in out and "inferencex" in out


def test_validate_without_the_package_names_the_source_it_left_out(capsys, monkeypatch):
    """README's first command installs no aiconfigurator-core: validate runs the InferenceX points and
    says, under their figures, that aiconfigurator's rows are left out and which extra brings them."""
    monkeypatch.setitem(sys.modules, "aiconfigurator_core", None)  # importing it fails, as when not installed
    code, out, err = run(capsys, "validate", "--points", str(POINTS), "--efficiency", "spec")
    assert code == 0, err
    line = " ".join(out.split()).split("aiconfigurator: ", 1)[1]  # rich wraps the line: whitespace joined
    assert "not installed" in line and ".[calibrate]" in line and "left out" in line
    code, out, err = run(capsys, "validate", "--points", str(POINTS), "--efficiency", "spec", "--json")
    assert code == 0, err
    assert set(json.loads(out)["left_out"]) == {"aiconfigurator"}
    code, out, err = run(capsys, "validate", "--points", str(POINTS), "--efficiency", "spec", "--no-aiconfigurator")
    assert code == 0, err
    assert "left out" not in out


def test_validate_missing_points_file(capsys, tmp_path):
    missing = tmp_path / "no_such_points.csv"
    line = error_line(*run(capsys, "validate", "--points", str(missing), "--no-aiconfigurator"))
    assert "no_such_points.csv" in line and "not found" in line


def test_validate_unknown_efficiency_set(capsys):
    line = error_line(*run(capsys, "validate", "--points", str(POINTS), "--no-aiconfigurator",
                               "--efficiency", "nonsense"))
    assert "efficiency" in line and "nonsense" in line


@pytest.mark.parametrize("args", [("--systems", "h200"), ()])
def test_calibrate_without_the_package(capsys, monkeypatch, tmp_path, args):
    monkeypatch.setitem(sys.modules, "aiconfigurator_core", None)  # importing it fails, as when not installed
    line = error_line(*run(capsys, "calibrate", *args, "--out-dir", str(tmp_path)))
    assert ".[calibrate]" in line and "aiconfigurator" in line
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_calibrate_unmeasured_system_without_the_package(capsys, monkeypatch, tmp_path):
    """A derived system needs its family's measured tables: the same clear error."""
    monkeypatch.setitem(sys.modules, "aiconfigurator_core", None)
    line = error_line(*run(capsys, "calibrate", "--systems", "mi300x", "--out-dir", str(tmp_path)))
    assert ".[calibrate]" in line


# ---- bad points files and paths: one error line, never a traceback ------------------------------------

def _points_variant(tmp_path, name, edit=None, raw: bytes | None = None) -> Path:
    p = tmp_path / f"{name}.csv"
    if raw is not None:
        p.write_bytes(raw)
        return p
    with POINTS.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        edit(r)
    return write_rows(p, rows)


@pytest.mark.parametrize("name, edit, raw, words", [
    ("unknown_hw", lambda r: r.update(hardware="TPU v9"), None, ("no measured point could be mapped", "tpu v9")),
    ("binary", None, b"\xff\xfe\x00\x81garbage", ("not a utf-8",)),
    ("header_only", None, b"hardware,model,precision,isl,osl,conc,topology,tput_per_gpu,tok_s_user\n",
     ("no data rows",)),
])
def test_validate_unusable_points_file(capsys, tmp_path, name, edit, raw, words):
    p = _points_variant(tmp_path, name, edit, raw)
    line = error_line(*run(capsys, "validate", "--points", str(p), "--no-aiconfigurator")).lower()
    for w in words:
        assert w in line, line


@pytest.mark.parametrize("topology", [
    "prefill 4 GPU TP=4; decode 40 GPU EP=0",   # zero EP
    "prefill 4 GPU TP=4; decode 4 GPU EP=8",    # fewer decode GPUs than one worker
    "prefill 2 GPU TP=3; decode 40 GPU EP=8",   # no whole prefill worker
    "TP0",                                       # zero TP
    "TP8 EP16",                                  # EP does not divide the chips
])
def test_validate_impossible_topologies_are_reported_not_crashed(capsys, tmp_path, topology):
    p = _points_variant(tmp_path, "topo", lambda r: r.update(topology=topology))
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator", "--json")
    assert code == 0 and "Traceback" not in out + err
    d = json.loads(out)
    ids = {i for i, _ in d["unpredicted"]} | {i for i, _ in d["skipped"]}
    # every row either predicted (read as a frontier point) or accounted for with a reason
    assert d["overall"] or ids


def test_validate_reads_a_csv_with_a_byte_order_mark(capsys, tmp_path):
    p = tmp_path / "bom.csv"
    p.write_text(POINTS.read_text(), encoding="utf-8-sig")
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator", "--json")
    assert code == 0, err
    assert json.loads(out)["skipped"] == []


def test_validate_empty_points_path(capsys):
    line = error_line(*run(capsys, "validate", "--points", "", "--no-aiconfigurator"))
    assert "--points" in line and "empty path" in line


@pytest.mark.parametrize("kind", ["file", "under_file", "empty"])
def test_calibrate_bad_out_dir(capsys, tmp_path, kind):
    f = tmp_path / "afile"
    f.write_text("x")
    target = {"file": str(f), "under_file": str(f / "sub"), "empty": ""}[kind]
    line = error_line(*run(capsys, "calibrate", "--systems", "h200", "--out-dir", target))
    assert "--out-dir" in line


def test_calibrate_empty_systems_list(capsys):
    line = error_line(*run(capsys, "calibrate", "--systems", ","))
    assert "--systems" in line and "no system" in line


def test_validate_table_pricer_says_which_systems_fell_back_to_the_roofline(capsys, tmp_path):
    """validate --pricer table covers every system; one without kernel tables (MI355X) is priced with
    the roofline, which only the per-point CSV's pricer column used to say."""
    from importlib import resources

    lines = (resources.files("jalapeno") / "data" / "validation" / "inferencex_points.csv").read_text().splitlines()
    mi = next(x for x in lines if x.startswith("MI355X,gpt-oss-120b,"))
    p = tmp_path / "mi.csv"
    p.write_text(f"{lines[0]}\n{mi}\n")
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator", "--pricer", "table")
    assert code == 0, err
    assert "--pricer table: no measured kernel tables for mi355x: priced with the roofline" in out


def test_validate_says_which_frameworks_took_the_default_stack(capsys, tmp_path):
    """A framework no profile lists (here 'nosuchfw') is priced with the 'default' profile: said once."""
    from importlib import resources

    lines = (resources.files("jalapeno") / "data" / "validation" / "inferencex_points.csv").read_text().splitlines()
    mi = next(x for x in lines if x.startswith("MI355X,gpt-oss-120b,")).replace(",atom,", ",nosuchfw,", 1)
    p = tmp_path / "fw.csv"
    p.write_text(f"{lines[0]}\n{mi}\n")
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator")
    assert code == 0, err
    assert ("framework(s) 'nosuchfw': no software-stack profile lists them (data/stacks.toml engines): priced with "
            "the 'default' profile; --stack NAME to choose one") in " ".join(out.split())
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator", "--stack", "vllm-rocm")
    assert code == 0 and "no software-stack profile" not in out


def test_validate_names_why_a_mapped_point_has_no_prediction(capsys, tmp_path):
    """'1 mapped point(s) without a prediction' came with no reason in the table output (only --json had it)."""
    lines = POINTS.read_text().splitlines()
    row = lines[1].replace("decode 32 GPU EP=8", "decode 1024 GPU EP=1024", 1)
    assert row != lines[1]
    p = tmp_path / "wide.csv"
    p.write_text(f"{lines[0]}\n{row}\n")
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator")
    assert code == 0, err
    text = " ".join(out.split())
    assert "1 mapped point(s) without a prediction" in text
    assert "not predicted wide:2: " in text and "EP1024 exceeds 256 experts. Fix: use ep <= 256" in text


def test_validate_reports_the_flagged_group_and_both_headlines(capsys, tmp_path):
    """A row that breaks the closed-loop identity (B200 Dynamo-TRT c6: implied TTFT 10x its sweep's c10
    row's, fit/data_quality.py) is left out of the figures and shown in its own group with the reason;
    the headline is printed with it too, and --json carries both."""
    from importlib import resources

    lines = (resources.files("jalapeno") / "data" / "validation" / "inferencex_points.csv").read_text().splitlines()
    p = tmp_path / "dq.csv"
    p.write_text("\n".join([lines[0], lines[10], lines[11]]) + "\n")  # file lines 11 and 12: c6 and c10
    assert ",1024,1024,6," in lines[10] and ",1024,1024,10," in lines[11]
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator")
    assert code == 0, err
    text = " ".join(out.split())
    assert "flagged group" in text and "dq:2" in text and "implied TTFT 2.12 s at concurrency 6" in text
    assert "inferencex with the flagged group: " in text
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator", "--json")
    d = json.loads(out)
    assert [i for i, _ in d["flagged"]] == ["dq:2"]
    assert d["overall"]["inferencex"]["throughput_per_chip"]["n"] == 1
    assert d["overall_with_flagged"]["inferencex"]["throughput_per_chip"]["n"] == 2


def test_validate_counts_the_points_the_identity_could_not_check(capsys, tmp_path):
    """A row without num_gpus cannot be held to the closed-loop identity (fit/data_quality.py): it stays
    in the figures, and validate now says so (before, 'not flagged' read as 'checked', silently)."""
    import csv
    import io
    from importlib import resources

    text = (resources.files("jalapeno") / "data" / "validation" / "inferencex_points.csv").read_text()
    rows = list(csv.DictReader(io.StringIO(text)))
    checked, blank = dict(rows[10]), dict(rows[10])  # file line 12: B200 Dynamo-TRT c10, every cell given
    blank["num_gpus"] = ""
    p = write_rows(tmp_path / "uc.csv", [checked, blank])
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator")
    assert code == 0, err
    assert "data quality: 1 point(s) in the figures above could not be held to the closed-loop identity" in " ".join(
        out.split())
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator", "--json")
    d = json.loads(out)
    assert d["unchecked"] == ["uc:3"] and d["flagged"] == []


def test_validate_notes_a_topology_it_cannot_read_on_stderr(validated, capsys, tmp_path):
    """A non-blank topology none of the forms reads was re-mapped with only a JSON note (newuser25). The
    fixture's line 12 keeps the cell the shipped row 122 had ('config_id 205 (stored prefill_tp=20, ...)'):
    stderr names the file, the line, the column and the mapping, then the forms; stdout's JSON stays JSON."""
    from jalapeno.fit.ix_topology import TOPOLOGY_FORMS

    code, out, err, _ = validated
    assert code == 0, err
    assert (f"note: {POINTS.name} line 12, column topology: 'config_id 205 (stored prefill_tp=20, decode_tp=20, "
            "20+20 GPUs fields as stored)' is not a topology validate reads; the row was mapped without a "
            "deployment, as frontier_peak@concurrency") in " ".join(err.split())
    assert all(f in err for f in TOPOLOGY_FORMS) and "leave the cell blank" in err
    d = json.loads(out)
    assert d["unread_topology"] == [{"id": "inferencex_points_sample:12", "mapping": "frontier_peak@concurrency",
                                     "topology": "config_id 205 (stored prefill_tp=20, decode_tp=20, 20+20 GPUs "
                                                 "fields as stored)"}]
    # a user's 'config_id N (same)' with no earlier row giving N: said why
    p = _points_variant(tmp_path, "same", lambda r: r.update(topology="config_id 9 (same)"))
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator")
    assert code == 0, err
    assert "line 2, column topology: 'config_id 9 (same)'" in err and "no earlier row of the file gives" in err


def test_shipped_points_read_every_topology_they_state():
    """Row 122's stored fields (config_id 205: prefill_tp=20, decode_tp=20, 20+20 GPUs) name no layout: its
    topology cell is blank and its notes say why, so the default validate has nothing to note; the row is mapped
    as before (frontier_peak@concurrency: no deployment, a concurrency, throughput only)."""
    from jalapeno.fit.data_quality import DEFAULT_POINTS
    from jalapeno.fit.ix_topology import unread_topology
    from jalapeno.fit.ix_points import load_inferencex

    pts, _ = load_inferencex(DEFAULT_POINTS)
    assert [p.id for p in pts if unread_topology(p.notes) is not None] == []
    row = next(p for p in pts if p.id == "inferencex_points:122")
    assert row.mapping == "frontier_peak@concurrency" and row.deployment is None
    with open(DEFAULT_POINTS, newline="") as f:
        r122 = list(csv.DictReader(f))[120]
    assert r122["topology"] == "" and "config_id 205 stores prefill_tp=20" in r122["notes"]
