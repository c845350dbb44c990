"""``compare -w 1k1k,8k1k``: each workload compared as a single run would, then how the ratios move across them
(cli/compare_workloads.py; ux51)."""

from __future__ import annotations

import json

from cli_runner import run

ARGS = ("-s", "h100,h200", "-m", "gpt-oss-120b", "-p", "mxfp4", "-c", "4,16,64", "--serving", "agg")


def test_each_workload_is_its_single_run_and_the_tables_read_them(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "compare", *ARGS, "-w", "1k1k,8k1k", "--json")
    assert code == 0, err
    many = json.loads(out)
    assert list(many) == ["workloads"] and list(many["workloads"]) == ["1k1k", "8k1k"]
    for w in ("1k1k", "8k1k"):
        code, out, err = run(capsys, "compare", *ARGS, "-w", w, "--json")
        assert code == 0, err
        one = json.loads(out)
        # the same document a run of that workload alone prints, but for the command its provenance records (ux52):
        # the one typed, the several-workload run, from which this document was made
        mine = many["workloads"][w].pop("provenance")
        assert mine["command"] == "jalapeno " + " ".join(["compare", *ARGS, "-w", "1k1k,8k1k", "--json"])
        assert mine["versions"] == one.pop("provenance")["versions"]
        assert many["workloads"][w] == one
    code, out, err = run(capsys, "compare", *ARGS, "-w", "1k1k,8k1k")
    assert code == 0, err
    assert "how it moves with the workload: ratios vs h200" in out
    assert "where it wins vs h200 by workload" in out and "bound at peak by workload" in out
    # the 8k1k column's peak ratio is that workload's own: h100's peak over h200's
    c = many["workloads"]["8k1k"]["comparisons"]["h100"]["peak_ratio"]
    assert f"peak {c['throughput_per_chip']:.2f}x ({c['tok_s_per_kw']:.2f}x, {c['tokens_per_usd']:.2f}x)" in out
    assert not (tmp_path / "jalapeno-compare.html").exists()  # several workloads write no chart


def test_what_a_list_of_workloads_cannot_do_is_refused_naming_the_fix(capsys):
    for extra, words in (
        (("-w", "1k1k,agentic:coding-agent"), "agentic"),
        (("-w", "1k1k,1k1k"), "twice"),
        (("-w", "1k1k,8k1k", "--html", "x.html"), "--html"),
    ):
        code, out, err = run(capsys, "compare", *ARGS, *extra)
        assert code != 0 and words in err and "Traceback" not in err
