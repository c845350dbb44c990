"""Issue 15, report gaps: measured points overlaid on a frontier of another configuration (MTP runs on
a frontier without MTP, disaggregated runs on an aggregated one) are marked and warned about, or left
out with --like-for-like; ``jalapeno report --as-deployed`` runs each system as compare --as-deployed."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest
from cli_runner import check_error, run

from jalapeno.fit.validate import MeasuredPoint
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS
from jalapeno.report.page_data import measured_config

CFG_AGG_NO_MTP = {"precisions": {"fp8", "fp4"}, "modes": {"agg"}, "mtp": False, "no_mtp": True}


def _page_data(path) -> dict:
    text = path.read_text()
    return json.loads(re.search(r'id="report-data">(.*?)</script>', text, re.DOTALL).group(1))


def _notes(path) -> list[str]:
    return re.findall(r'<p class="note">(.*?)</p>', path.read_text())


def test_shipped_points_state_their_mtp():
    pts, _ = load_inferencex(DEFAULT_POINTS)
    b200 = [p for p in pts if p.system == "b200" and p.model == "deepseek-r1" and (p.isl, p.osl) == (1024, 1024)]
    # the shipped CSV: B200 1K/1K dynamo-trt rows are spec=mtp, disagg=1; the sglang FP8 rows spec=none, disagg=0
    assert any(p.uses_mtp is True and p.mode == "disagg" and p.framework == "dynamo-trt" for p in b200)
    assert any(p.uses_mtp is False and p.mode == "agg" and p.precision == "fp8" for p in b200)


@pytest.mark.parametrize("prec, mode, mtp, label, why", [
    ("fp8", "agg", False, "fp8 · agg · no MTP", []),
    ("fp4", "disagg", True, "fp4 · disagg · MTP",
     ["disagg serving (the frontier is agg only)", "MTP (the frontier runs without)"]),
    ("mxfp4", "agg", None, "mxfp4 · agg · MTP not stated",
     ["precision mxfp4 (the frontier sweeps fp4, fp8)", "MTP use not stated by the source"]),
])
def test_measured_config_names_each_difference(prec, mode, mtp, label, why):
    mp = SimpleNamespace(precision=prec, mode=mode, uses_mtp=mtp)
    assert measured_config(mp, CFG_AGG_NO_MTP) == (label, why)


def test_measured_point_mtp_from_deployment_or_source():
    from jalapeno.deploy.deployment import MTP, Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.specs.formats import get_precision

    base = ("inferencex", "t:1", "b200", "deepseek-r1", "fp8", "sglang", 1024, 1024, 8.0)
    dep = Deployment(get_precision("fp8"), Pool(Layout(tp=8, ep=8)), mtp=MTP(1, 0.7))
    assert MeasuredPoint(*base, dep, {}, "matched").uses_mtp is True
    assert MeasuredPoint(*base, None, {}, "frontier_peak", spec="mtp").uses_mtp is True
    assert MeasuredPoint(*base, None, {}, "frontier_peak", spec="none").uses_mtp is False
    assert MeasuredPoint(*base, None, {}, "frontier_peak", spec="unspecified").uses_mtp is None


REPORT = ["report", "-w", "1k1k", "--systems", "b200", "-m", "deepseek-r1"]


def test_report_marks_and_warns_about_unlike_points(capsys, tmp_path):
    out = tmp_path / "r.html"
    code, _, err = run(capsys, *REPORT, "--serving", "agg", "-o", str(out))
    assert code == 0
    assert "warning: " in err and "do not model" in err and "--like-for-like" in err
    assert "b200 fp4 · disagg · MTP: disagg serving (the frontier is agg only), MTP (the frontier runs without)" in err
    data = _page_data(out)
    like = [p for p in data["measured"] if p["like"]]
    unlike = [p for p in data["measured"] if not p["like"]]
    assert like and unlike
    assert all(p["config"] == "fp8 · agg · no MTP" or p["config"] == "fp4 · agg · no MTP" for p in like)
    assert all("not like for like: " in p["hover"] for p in unlike)
    assert all(p["config"] in p["hover"] for p in data["measured"])
    assert any("open diamonds" in n for n in _notes(out))
    # the legend entry per configuration and the diamond marker are drawn by the page's script
    assert "' measured · ' + cfg" in out.read_text() and "'diamond-open'" in out.read_text()

    code, _, err = run(capsys, *REPORT, "--serving", "agg", "--like-for-like", "-o", str(out))
    assert code == 0 and "warning" not in err
    data = _page_data(out)
    assert data["measured"] and all(p["like"] for p in data["measured"])
    assert len(data["measured"]) == len(like)


def test_report_as_deployed_runs_like_compare(capsys, tmp_path):
    out = tmp_path / "r.html"
    code, _, err = run(capsys, *REPORT, "--as-deployed", "--measured", "none", "-o", str(out))
    assert code == 0, err
    notes = _notes(out)
    assert notes[0].startswith("As deployed: b200: ")
    data = _page_data(out)
    code, cmp_out, err = run(capsys, "compare", "-w", "1k1k", "--systems", "b200", "-m", "deepseek-r1",
                             "--as-deployed", "--json")
    assert code == 0, err
    front = json.loads(cmp_out)["systems"]["b200"]["frontier"]
    assert all(p["config"].startswith("as deployed: ") for p in front)
    assert data["systems"][0]["frontier"]["chip"] == pytest.approx([p["throughput_per_chip"] for p in front])
    assert data["systems"][0]["frontier"]["interactivity"] == pytest.approx([p["interactivity"] for p in front])


def test_report_as_deployed_refuses_what_recipes_set(capsys, tmp_path):
    out = str(tmp_path / "r.html")
    check_error(*run(capsys, *REPORT, "--as-deployed", "--serving", "agg", "-o", out),
                "--as-deployed", "--serving", "overridden", "drop --serving")
    check_error(*run(capsys, *REPORT, "--as-deployed", "-p", "fp8", "-o", out), "--as-deployed", "--precision")


def test_a_user_measured_file_names_the_rows_it_skipped(capsys, tmp_path):
    """report --measured FILE dropped the rows load_inferencex skipped without a word (a file of which no row reads
    is refused: tests/cli/test_cli_newuser37.py; here one row reads)."""
    lines = DEFAULT_POINTS.read_text().splitlines()
    good = next(x for x in lines if x.startswith("MI355X,gpt-oss-120b,"))
    row = good.replace(",FP4 (MXFP4),", ",BF16,", 1)
    p = tmp_path / "mine.csv"
    p.write_text(f"{lines[0]}\n{row}\n{good}\n")
    code, _, err = run(capsys, "report", "--systems", "jalapeno", "--serving", "agg", "-m", "gpt-oss-120b", "-w", "8k1k",
                       "--measured", str(p), "-o", str(tmp_path / "r.html"))
    assert code == 0, err
    assert ("warning: --measured mine.csv: 1 row(s) skipped, first mine:2: precision 'BF16' is not FP4 or FP8 "
            "(the formats the InferenceX rows of the catalog's models use)") in err
