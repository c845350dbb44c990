"""``compare`` says where each system wins over the per-user speeds and why at each ``--at`` speed (ux51).

The JSON's where-wins ranges are checked against the same run's frontier tables, not the ranges' code: at every
frontier point of either system inside a segment, the two frontiers' log-log interpolation (worked here by hand) puts
the ratio inside that segment's span, and a loss's span lies below 1, a win's above; each ``why`` bound is the bound
of the frontier point it names."""

from __future__ import annotations

import json
import math

from cli_runner import run

ARGS = (
    "compare",
    "-s",
    "h100,h200",
    "-m",
    "gpt-oss-120b",
    "-w",
    "1k1k",
    "-p",
    "mxfp4",
    "-c",
    "4,16,64,256",
    "--serving",
    "agg",
    "--html",
    "",
)


def _at(fr: list[dict], x: float) -> float:
    """Throughput per chip on a frontier at x, log-log between its points, its peak below its first (by hand)."""
    xs = [p["interactivity"] for p in fr]
    ys = [p["throughput_per_chip"] for p in fr]
    if x <= xs[0]:
        return ys[0]
    for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        if x0 <= x <= x1:
            return y0 * (x / x0) ** (math.log(y1 / y0) / math.log(x1 / x0))
    raise AssertionError(f"{x} past the frontier")


def test_where_wins_and_why_in_json_and_tables(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *ARGS, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert "where_wins" not in d["comparisons"]["h200"]  # the baseline against itself: left out
    w = d["comparisons"]["h100"]["where_wins"]
    fa, fb = d["systems"]["h100"]["frontier"], d["systems"]["h200"]["frontier"]
    assert w["from"] == min(fa[0]["interactivity"], fb[0]["interactivity"])
    assert w["to"] == min(fa[-1]["interactivity"], fb[-1]["interactivity"])
    segs = w["throughput_per_chip"]
    assert segs[0]["from"] == w["from"] and segs[-1]["to"] == w["to"]
    checked = 0
    for s in segs:
        for x in [p["interactivity"] for p in fa + fb if s["from"] < p["interactivity"] < s["to"]]:
            r = _at(fa, x) / _at(fb, x)
            assert s["ratio_min"] * (1 - 1e-9) <= r <= s["ratio_max"] * (1 + 1e-9)
            checked += 1
        if s["result"] == "loses":  # it goes below 1/1.05 (a stretch back across by <= 1% is read with it)
            assert s["ratio_min"] < 1 / 1.05 and s["ratio_max"] < 1.0
        elif s["result"] == "wins":
            assert s["ratio_max"] > 1.05 and s["ratio_min"] > 1.0
    assert checked >= 3
    # per kW: the per-chip ratio x the baseline's W over the system's (all-in 1.73 kW both: the same ranges)
    assert [(s["from"], s["to"], s["result"]) for s in w["tok_s_per_kw"]] == [
        (s["from"], s["to"], s["result"]) for s in segs
    ]
    for row in d["comparisons"]["h100"]["iso_interactivity"]["throughput_per_chip"]:
        p = fa[row["point_a"]]
        assert row["bound_a"] == p["bound"]  # aggregated: the point's bound alone
        # the nearest point in log speed: no other frontier point is nearer
        assert all(
            abs(math.log(q["interactivity"] / row["x"])) >= abs(math.log(p["interactivity"] / row["x"])) for q in fa
        )
    code, out, err = run(capsys, *ARGS)
    assert code == 0, err
    assert "where it wins vs h200: per-user speed ranges (tok/s/user) by ratio" in out
    assert "why: the bound at each speed (the frontier point nearest it)" in out
    assert "per kW at peak vs h200 under each power convention" in out


def test_a_losing_system_gets_the_audit_that_asks_what_it_would_need(capsys, tmp_path, monkeypatch):
    """H100 against H200 on gpt-oss-120b 1k1k (both MXFP4 at every point): below 1/1.05 at each --at speed, so the
    hint names the speed of its lowest ratio, read here from the JSON's own rows, and audit's -p is mxfp4."""
    monkeypatch.chdir(tmp_path)
    plain = ("compare", "-s", "h100,h200", "-m", "gpt-oss-120b", "-w", "1k1k", "-p", "mxfp4", "--html", "")
    code, out, err = run(capsys, *plain, "--json")
    assert code == 0, err
    rows = [
        r
        for r in json.loads(out)["comparisons"]["h100"]["iso_interactivity"]["throughput_per_chip"]
        if not r["at_frontier_end"] and r["ratio"] < 1 / 1.05
    ]
    worst = min(rows, key=lambda r: r["ratio"])
    code, out, err = run(capsys, *plain)
    assert code == 0, err
    want = (
        f"what h100 would need to match h200 per chip at {worst['x']:g} tok/s/user ({worst['ratio']:.2f}x here): "
        f"jalapeno audit --system h100 --baseline h200 --model gpt-oss-120b --workload 1k1k -p mxfp4 "
        f"--claim throughput_per_chip_ratio@{worst['x']:g}=1.0"
    )
    assert want in out
    # a fixed concurrency sweep (-c) prices what audit does not: no hint
    code, out, err = run(capsys, *ARGS)
    assert code == 0, err
    assert "would need to match" not in out


def test_the_report_page_carries_the_same_tables_and_power_line(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    page = tmp_path / "r.html"
    args = ("-s", "h100,h200", "-m", "gpt-oss-120b", "-w", "1k1k", "-p", "mxfp4")
    code, out, err = run(capsys, "report", *args, "--html", str(page), "--measured", "none")
    assert code == 0, err
    text = page.read_text()
    code, out, err = run(capsys, "compare", *args, "--json")
    assert code == 0, err
    w = json.loads(out)["comparisons"]["h100"]["where_wins"]["throughput_per_chip"]
    from jalapeno.report.win_tables import segments_text

    assert "<h2>Where it wins vs h200: per-user speed ranges (tok/s/user) by ratio</h2>" in text
    assert f"<td>{segments_text(w)}</td>" in text  # the page's cell is compare's
    assert "<h2>Why: the bound at each speed (the frontier point nearest it)</h2>" in text
    assert "per kW at peak vs h200 under each power convention" in text
