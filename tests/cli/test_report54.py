"""report54: the analyst's report — ``jalapeno report`` against ``compare`` on the mission's question (Jalapeño vs
GB300 NVL72, 8k/1k), and what the page says of its measured points and chart axes."""

from __future__ import annotations

import html
import json
import re

from cli_runner import run

#: the mission's question, two systems to keep it short: GPT-OSS-120B at 8k/1k (the default workload)
CASE = ("-m", "gpt-oss-120b", "-s", "jalapeno,gb300-nvl72")


def _table(text: str, cls_or_caption: str) -> dict[str, list[str]]:
    """The rows (system → cells, unescaped) of the first table after ``cls_or_caption`` in the page."""
    i = text.index(cls_or_caption)
    tab = text[i : text.index("</table>", i)]
    rows = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", tab, re.DOTALL):
        cells = [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td>(.*?)</td>", tr, re.DOTALL)]
        if cells:
            rows[cells[0]] = cells[1:]
    return rows


def test_report_tables_and_json_equal_compare(capsys, tmp_path):
    """(a) The page's headline and ratio tables, and ``report --json``'s comparison, give compare's figures for the
    same arguments. Before report54 ``report --json`` dropped compare's ``per_rack`` document."""
    code, out, err = run(capsys, "compare", *CASE, "--json")
    assert code == 0, err
    cmp = json.loads(out)
    page = tmp_path / "r.html"
    code, out, err = run(capsys, "report", *CASE, "--json", "--html", str(page))
    assert code == 0, err
    rep = json.loads(out)
    # the whole comparison document, less compare's provenance (report's sits beside "comparison")
    assert rep["comparison"] == {k: v for k, v in cmp.items() if k != "provenance"}
    assert rep["comparison"]["per_rack"]["systems"]["jalapeno"].startswith("jalapeno 128 chips x 1,150 W")
    h = cmp["systems"]["jalapeno"]["headline"]
    # tok/s/kW all-in = tok/s/chip / 1.150 kW (jalapeno.toml: power.allin_kw_per_chip 1.15), computed here, not read
    assert (
        abs(h["peak_tok_s_per_kw"]["all-in"] - h["peak_throughput_per_chip"] / 1.150)
        < 1e-6 * h["peak_tok_s_per_kw"]["all-in"]
    )
    text = page.read_text()
    head = _table(text, '<table class="headline">')["jalapeno"]
    # columns: peak tok/s/chip, out tok/s/chip, peak tok/s/kW (all-in), $/M tok, bound, conc, max tok/s/user, ...
    assert head[0] == f"{h['peak_throughput_per_chip']:,.0f}"
    assert head[2] == f"{h['peak_tok_s_per_kw']['all-in']:,.0f}"
    assert head[6] == f"{h['max_interactivity']:.1f}"
    # the bound, in compare's words ("decode compute; ..." or "compute; ...": the bound and its cap)
    assert head[4].split(";")[0].split()[-1] == h["bound_at_peak"]
    c = cmp["comparisons"]["jalapeno"]
    ratios = _table(text, "Ratios vs gb300-nvl72")["jalapeno"]
    assert ratios[0].startswith(
        f"{c['peak_ratio']['throughput_per_chip']:.2f}× ({c['peak_ratio']['tok_s_per_kw']:.2f}×"
    )
    assert ratios[1] == f"{c['max_interactivity_ratio']:.2f}×"
    for cell, iso, kw in zip(
        ratios[2:5], c["iso_interactivity"]["throughput_per_chip"], c["iso_interactivity"]["tok_s_per_kw"], strict=True
    ):
        assert cell.startswith(f"{iso['ratio']:.2f}× ({kw['ratio']:.2f}×"), (cell, iso["x"])


def test_measured_points_name_their_source_and_split(capsys, tmp_path):
    """(d) Each overlaid measured point says its source and whether a fit saw it (validate's split column), in the
    page's JSON and hover, and a note counts them; before report54 the hover named only the CSV row."""
    page = tmp_path / "r.html"
    code, out, err = run(capsys, "report", "-m", "deepseek-r1", "-w", "1k1k", "-s", "gb200-nvl72", "--json")
    assert code == 0, err
    rep = json.loads(out)
    pts = {p["hover"].split(" · ")[0].removeprefix("measured "): p for p in rep["chart"]["measured"]}
    # the stack fits' rule (fit/stack_split.py): per (stack, source, system, model, ISL, OSL, mode) group sorted by
    # concurrency, points alternate fit / held out starting with fit. GB200 DeepSeek-R1 1k/1k dynamo-trt disagg MTP:
    # rows 2 (conc 4) and 3 (conc 8) are that group's first two: fit, then held out.
    assert pts["inferencex_points:2"]["split"] == "fit"
    assert pts["inferencex_points:3"]["split"] == "held_out"
    assert "split: held out" in pts["inferencex_points:3"]["hover"]
    assert all(
        p["source"] == "InferenceX (shipped)" and "source: InferenceX (shipped)" in p["hover"] for p in pts.values()
    )
    n_fit = sum(p["split"] == "fit" for p in pts.values())
    assert any(n.startswith(f"Of the {len(pts)} measured points drawn: {n_fit} fit ") for n in rep["notes"])
    # a user's CSV: no fit saw its rows (validate --points labels them none), named by its file
    from jalapeno.fit.validation_run import DEFAULT_POINTS

    mine = tmp_path / "mine.csv"
    mine.write_text(DEFAULT_POINTS.read_text())
    code, out, err = run(
        capsys,
        "report",
        "-m",
        "deepseek-r1",
        "-w",
        "1k1k",
        "-s",
        "gb200-nvl72",
        "--measured",
        str(mine),
        "--html",
        str(page),
    )
    assert code == 0, err
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page.read_text(), re.DOTALL).group(1))
    assert data["measured"] and {(p["split"], p["source"]) for p in data["measured"]} == {("none", "mine.csv")}


def test_chart_y_axis_names_its_tokens_and_what_a_kw_counts(capsys, tmp_path):
    """(b) The chart's y title said 'tok/s per kW (all-in power)': a PNG exported alone named the convention but not
    what its watts are, nor that the tokens are input + output (the tables' 'in+out'). The page's data now carries
    each convention's words and the token basis, and its script puts them in the y title."""
    page = tmp_path / "r.html"
    code, out, err = run(capsys, "report", *CASE, "--html", str(page), "--measured", "none")
    assert code == 0, err
    text = page.read_text()
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', text, re.DOTALL).group(1))
    assert data["y_basis"] == " · input + output tokens"
    # chip: the TDP (jalapeno 700 W); all-in: provisioned (jalapeno 1,150 W), as the power basis notes say
    assert "TDP" in data["power_words"]["chip"] and "provisioned" in data["power_words"]["all-in"]
    assert set(data["power_words"]) == set(data["conventions"])
    assert "D.power_words[conv]" in text and "+ D.y_basis" in text


def test_page_carries_the_notes_said_on_stderr_on_the_systems_as_priced(capsys, tmp_path):
    """Jalapeño at 550 W instead of 700 W (--set chip.tdp_w=550): the page's tables use all-in power, whose 1,150 W
    the TDP does not move (jalapeno.toml states power.allin_kw_per_chip), so its tok/s/kW (all-in) is unchanged. The
    reason was said on stderr only; an analyst reading the page alone read 550 W as changing nothing. The page's notes
    now carry it, once."""
    page = tmp_path / "r.html"
    code, out, err = run(capsys, "report", *CASE, "--set", "jalapeno:chip.tdp_w=550", "--json", "--html", str(page))
    assert code == 0, err
    said = "--set chip.tdp_w changes only the power the chip and sustained conventions divide by"
    assert f"note: {said}" in err
    notes = json.loads(out)["notes"]
    assert sum(n.startswith(said) for n in notes) == 1
    assert html.escape(said) in page.read_text()
    # a run without the --set says no such note (the list is emptied at each invocation)
    code, out, err = run(capsys, "report", *CASE, "--json")
    assert code == 0, err
    notes = json.loads(out)["notes"]
    assert not any(n.startswith(said) for n in notes)
    # no shipped gpt-oss-120b 8k/1k point is on jalapeno or gb300-nvl72: the page says so, and no longer also
    # "Measured points: InferenceX points shipped with jalapeno" (the model's points on other systems)
    assert "No measured point of gpt-oss-120b at ISL 8192 / OSL 1024 on these systems in the shipped data." in notes
    assert not any(n.startswith("Measured points: ") for n in notes)


def test_report_says_compares_estimated_peak_notes(capsys):
    """compare says when a system's compute-bound frontier points rest on a peak its file marks as an estimate
    (analysis/estimated_peaks.py: gpt-oss-120b's attention math in BF16 on Jalapeño, FP8 / 2, an assumption);
    report said nothing, on stderr or on the page. Now it gives compare's lines, on both."""
    code, out, err = run(capsys, "compare", *CASE)
    assert code == 0, err
    said = [ln.removeprefix("note: ") for ln in err.splitlines() if "is an estimate" in ln]
    assert said and said[0].startswith("jalapeno: ")
    code, out, err = run(capsys, "report", *CASE, "--json")
    assert code == 0, err
    notes = json.loads(out)["notes"]
    assert all(line in notes and f"note: {line}" in err for line in said)
