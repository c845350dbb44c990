"""Round 50 new-user fixes (newuser50): the agentic ratios' flags name the right end and side, explore's sweep line
stops quoting another run's compare / coarse figure, compare --bands' band rows name the side at its frontier's end,
and the agentic plan's decode batch and instance count read as figures.

Expected values are worked by hand in each test's comments or read off the JSON of the same run, not off the
code's printed text.
"""

from __future__ import annotations

import json
import re

from cli_runner import run

BOX = "│┃┏┓┗┛┡┩└┘┳┻╇━─"


def _text(out: str) -> str:
    """The printed text with the table borders gone and every run of blanks one blank (captions wrap)."""
    return " ".join(re.sub(f"[{BOX}]", " ", out).split())


def _row_cells(out: str, name: str) -> str:
    """The cells of one system's row in the agentic ratios table (its first line and the lines that fold under
    it, up to the next system's row), borders gone."""
    block = out[out.index("ratios vs") : out.index("each ratio is")]
    lines, keep = [], False
    for ln in block.splitlines():
        cells = ln.split("│")
        if len(cells) < 3:
            continue
        first = cells[1].strip()
        if first:
            keep = first == name
        if keep:
            lines.append(ln)
    return _text("\n".join(lines))


def _task_minutes(js: str) -> tuple[dict, dict]:
    """compare --json's frontiers: each system's slowest and fastest task time, minutes."""
    d = json.loads(js)
    times = {n: [p["task_time_s"] / 60 for p in s["frontier"]] for n, s in d["systems"].items()}
    return {n: max(t) for n, t in times.items()}, {n: min(t) for n, t in times.items()}


def test_agentic_ratio_past_a_frontiers_slowest_point_reads_below_its_start(capsys, tmp_path, monkeypatch):
    """DeepSeek-R1 coding agent: a 60-minute ceiling is longer than both frontiers' slowest (peak) points (GB300's
    task takes 43.6 min at its peak, Vera Rubin's 17.1: read off the JSON below), so both read their peaks: the
    cell is below both frontiers' starts. 3 minutes is faster than both fastest points (3.6 and 3.4 min): neither
    reaches it. The cell said '[at frontier end]' (the other end, no side) and a bare 'unreachable'."""
    monkeypatch.chdir(tmp_path)
    args = ("compare", "-w", "agentic:coding-agent", "--systems", "vera-rubin-nvl72,gb300-nvl72", "--at", "3,60")
    code, js, err = run(capsys, *args, "--json")
    assert code == 0, err
    slowest, fastest = _task_minutes(js)
    assert all(t < 60 for t in slowest.values()) and all(t > 3 for t in fastest.values())  # the premise
    code, out, err = run(capsys, *args)
    assert code == 0, err
    rubin = _row_cells(out, "vera-rubin-nvl72")
    assert "unreachable (both)" in rubin
    assert re.search(r"\d\.\d\dx \([\d.]+x, [\d.]+x\) \[below frontier start: both\]", rubin), rubin
    assert "[at frontier end" not in rubin
    flat = _text(out)
    assert "[below frontier start: who]: a task-time ceiling longer than that frontier's slowest point's" in flat
    assert "unreachable (who): that frontier never finishes a task within the ceiling" in flat


def test_agentic_ratio_below_one_side_start_names_that_side(capsys, tmp_path, monkeypatch):
    """20 minutes: past Vera Rubin's slowest point (17.1 min, its peak) but inside GB300's frontier (3.6 to 43.6
    min), so only the row's system reads its peak: 'below frontier start: this' on Vera Rubin's row, and no flag
    on GB300's own row (both sides of it interpolated)."""
    monkeypatch.chdir(tmp_path)
    args = ("compare", "-w", "agentic:coding-agent", "--systems", "vera-rubin-nvl72,gb300-nvl72", "--at", "20")
    code, js, err = run(capsys, *args, "--json")
    assert code == 0, err
    slow, fast = _task_minutes(js)
    assert slow["vera-rubin-nvl72"] < 20 < slow["gb300-nvl72"] and fast["gb300-nvl72"] < 20  # the premise
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "[below frontier start: this]" in _row_cells(out, "vera-rubin-nvl72")
    assert "[" not in _row_cells(out, "gb300-nvl72")


def test_explore_sweep_line_points_at_the_runs_own_compare_figures():
    """A 16-trial run of examples/explore_700w.toml printed '... a little higher, 1.00x on Jalapeño's DeepSeek-R1
    8K/1K and 1.10x on the example's best design' (the 200-trial run of docs/explore.md §3) and, four lines below,
    its own best design's 'compare 10,131, coarse 9,756 (compare / coarse 1.04)': two figures for one ratio. A run
    that priced its own base and best design on compare's sweep (the summary's ``compare`` block) points at those
    lines; a run stored without one (before round 45) keeps the docs' figures."""
    from jalapeno.analysis.explore_full import compare_lines
    from jalapeno.cli.explore_lines import base_lines

    b = {"model": "deepseek-r1", "workload": "8k1k", "tok_s_per_kw": 2458.6}
    out = {
        "base": "jalapeno",
        "metrics": ["tok_s_per_kw"],
        "base_metrics": [b],
        "objective": {},
        "sweep": {"serving": "both", "precisions": "native", "batches": [1]},
    }
    # compare 10,131 over coarse 9,756 = 1.038: 1.04, as the run printed it
    blk = {
        "metric": "tok_s_per_kw",
        "trial": 9,
        "score": 2.84,
        "cases": [
            {
                "model": "deepseek-r1",
                "workload": "8k1k",
                "base": {"coarse": {"tok_s_per_kw": 2458.6}, "compare": {"tok_s_per_kw": 2471.0}},
                "design": {"coarse": {"tok_s_per_kw": 9756.0}, "compare": {"tok_s_per_kw": 10131.0}},
            }
        ],
    }
    own = base_lines({**out, "compare": blk})[-1]
    assert "1.10x" not in own and "1.00x" not in own
    assert "a little higher; this run's base and best design: compare / coarse below" in own
    assert any("(compare / coarse 1.04)" in ln for ln in compare_lines({**out, "compare": blk}))
    stored = base_lines(out)[-1]  # no compare block: the docs' figures, as before
    assert "1.00x on Jalapeño's DeepSeek-R1 8K/1K and 1.10x on the example's best design" in stored


def _band_row(out: str, name: str) -> str:
    """The ``NAME band`` row of compare's ratios table (its folded lines joined), borders gone."""
    lines, keep = [], False
    for ln in out[out.index("ratios vs") :].splitlines():
        cells = ln.split("│")
        if len(cells) < 3:
            if keep:
                break
            continue
        first = cells[1].strip()
        if first:
            keep = first == f"{name} band"
        if keep:
            lines.append(ln)
    return _text("\n".join(lines))


def test_band_row_frontier_end_names_its_side(capsys, tmp_path, monkeypatch):
    """Kimi K2.5 1k8k --bands: the band row's '[at frontier end]' named no side where a frontier's tail (below 10% of
    its peak, analysis/ratio_bands.TAIL_FRACTION) flagged it, while the calibrated row above named one. Read off the
    JSON: at 60 tok/s/user Jalapeño's low-set frontier gives 350 tok/s/chip, under 10% of its low-set peak (3,942):
    its own tail ('this'; GB300's 868 is above 10% of its 5,363); at 100 the low ends are 37 and 78, both tails
    ('both'). The expected side is worked from the JSON's ends, each against its own band peak."""
    monkeypatch.chdir(tmp_path)
    args = ("compare", "-m", "kimi-k2.5", "-w", "1k8k", "-s", "jalapeno,gb300-nvl72", "--bands", "--at", "60,100")
    code, js, err = run(capsys, *args, "--json")
    assert code == 0, err
    d = json.loads(js)
    b = d["comparisons"]["jalapeno"]["bands"]
    assert b["pairing"].startswith("low: the system at its low efficiency set over the baseline at its low set")
    peak = {n: d["systems"][n]["headline"]["bands"]["peak_throughput_per_chip"] for n in ("jalapeno", "gb300-nvl72")}
    want = {}
    for w in ("low", "high"):
        for r in b["iso_interactivity"]["throughput_per_chip"][w]:
            a = r["status_a"] == "at_frontier_end" or r["y_a"] < 0.1 * peak["jalapeno"][w]
            z = r["status_b"] == "at_frontier_end" or r["y_b"] < 0.1 * peak["gb300-nvl72"][w]
            sides = want.setdefault(r["x"], set())
            sides |= {"this"} if a else set()
            sides |= {"baseline"} if z else set()
    assert want == {60.0: {"this"}, 100.0: {"this", "baseline"}}  # the premise, as worked above
    code, out, err = run(capsys, *args, "--html", "")
    assert code == 0, err
    row = _band_row(out, "jalapeno")
    assert "[at frontier end]" not in row
    # the 60 cell then the 100 cell, in column order
    assert re.search(r"\[at frontier end: this\].*\[at frontier end: both\]", row), row


def test_agentic_plan_prints_its_decode_batch_as_it_prints_its_sessions(capsys, tmp_path, monkeypatch):
    """plan -w agentic:coding-agent on Jalapeño: '201.0 sessions per instance at decode batch 188.054' (format g:
    six significant figures) beside one decimal for the sessions. Both are means over the run's steps, read to one
    decimal: the JSON's point.decode_batch rounded to 0.1 (188.05 -> 188.1)."""
    monkeypatch.chdir(tmp_path)
    args = ("plan", "--system", "jalapeno", "-w", "agentic:coding-agent", "--target", "1000")
    code, js, err = run(capsys, *args, "--json")
    assert code == 0, err
    p = json.loads(js)["point"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    m = re.search(r"([\d,.]+) sessions per instance at decode batch ([\d,.]+),", _text(out))
    assert m, out
    assert m.group(1) == f"{p['sessions']:,.1f}" and m.group(2) == f"{p['decode_batch']:,.1f}"


def test_explicit_eplb_under_uniform_routing_is_noted_not_silently_dropped(capsys, tmp_path, monkeypatch):
    """compare --eplb 64 on DeepSeek-R1 8k1k (default --routing uniform: InferenceX's random-token prompts) ran the
    very sweep it runs without the option and said nothing: the sweep makes EPLB twins only under a skewed expert
    popularity (analysis/sweep_layouts.with_eplb), since with uniform routing every rank expects the same share and
    replicas only cost memory. The frontier is the same with and without it (the premise, checked below); a note
    now says so and names the fix. Under --routing measured the option makes layouts, and no note is printed."""
    monkeypatch.chdir(tmp_path)
    args = ("frontier", "-s", "gb200-nvl72", "-m", "deepseek-r1", "-w", "1k1k", "--json")
    code, plain, err = run(capsys, *args)
    assert code == 0, err
    code, out, err = run(capsys, *args, "--eplb", "64")
    assert code == 0, err
    assert json.loads(out)["frontier"] == json.loads(plain)["frontier"]  # no layout changed: the option did nothing
    note = _text(err)
    assert note.startswith("note: --eplb 64 makes no layout under uniform expert routing (--routing uniform")
    assert "add one of those, or drop --eplb" in note
    code, out, err = run(capsys, *args, "--eplb", "64", "--routing", "measured")
    assert code == 0, err
    assert "--eplb 64 makes no layout" not in err  # skewed routing: the sweep tries the EPLB twins


def test_calibrate_table_prints_every_system_name_and_header_whole(capsys, monkeypatch):
    """calibrate's table at the 160 characters a non-terminal gets (cli/common.console) printed 'vera-rubin-nv…',
    'gemm.bf16.hal…' and 'collective_la…'. The fit is replaced by its result's shape (system -> parameters, the
    GEMM fit's report; a derived system without one): the table, not the fit, is under test. Each header is read
    whole by joining its column's header lines."""
    import jalapeno.fit.calibrate as cal

    p = {
        "gemm": {"bf16": {"peak_fraction": 0.765, "half_rows": 215.0}},
        "hbm_fraction": 0.935,
        "collective_launch_s": 2.9e-6,
    }
    fake = {
        "gb300-nvl72": {"parameters": p, "report": {"gemm": {"median_ape": 0.12}}},
        "vera-rubin-nvl72": {"parameters": p},
        "_ordering_flags": [],
    }
    monkeypatch.setattr(cal, "calibrate_catalog", lambda names, out_dir, on_progress=None: dict(fake))
    code, out, err = run(capsys, "calibrate", "--out-dir", "unused")
    assert code == 0, err
    assert "…" not in out
    lines = out.splitlines()
    top = next(i for i, ln in enumerate(lines) if ln.startswith("┏"))
    mid = next(i for i, ln in enumerate(lines) if ln.startswith("┡"))
    parts = [ln.split("┃")[1:-1] for ln in lines[top + 1 : mid]]
    heads = [" ".join(" ".join(c[j].split()) for c in parts).strip() for j in range(len(parts[0]))]
    assert heads[0] == "system" and "gemm.bf16.half rows" in heads and "collective launch" in heads
    assert "attention peak" in heads and "GEMM fit median err" in heads
    rows = [ln.split("│")[1].strip() for ln in lines if ln.count("│") > 3]
    assert rows == ["gb300-nvl72", "vera-rubin-nvl72"]
    assert "2.9us" in out and "12.0%" in out and "derived" in out  # 2.9e-6 s; 0.12 as a percentage
    assert "collective launch = collective_launch_s" in _text(out)  # the caption maps a header back to its key


def test_validate_says_where_it_wrote_its_parity_plot_and_rows(capsys, tmp_path):
    """validate --html wrote the parity plot and said nothing of it (compare prints 'frontier chart: PATH', simulate
    'wrote PATH'); --out likewise. Both now close the output with their resolved paths. The shipped InferenceX
    points of one system keep it short (--no-aiconfigurator -s h200)."""
    html, csv = tmp_path / "parity.html", tmp_path / "rows.csv"
    code, out, err = run(capsys, "validate", "--no-aiconfigurator", "-s", "h200", "--html", str(html), "-o", str(csv))
    assert code == 0, err
    assert html.exists() and csv.exists()
    flat = _text(out)
    assert f"parity plot: {html.resolve()}" in flat and f"per-point results: {csv.resolve()}" in flat


def test_per_dollar_panel_and_selector_name_their_unit_once(capsys, tmp_path, monkeypatch):
    """The chart's third panel and the report's metric selector read 'tok/s per $/h per chip': per chip twice over,
    or once? Its y is a chip's tok/s over its $/chip-hour (report/page_data.report_data: throughput_per_chip /
    usd_per_chip_hour), so 'tok/s per ($/chip-hour)'. Plotly writes '/' as \\u002f in the page's JSON."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(
        capsys, "compare", "-s", "jalapeno,gb300-nvl72", "-m", "gpt-oss-120b", "-w", "1k1k", "--html", "c.html"
    )
    assert code == 0, err
    code, out, err = run(
        capsys, "report", "-s", "jalapeno,gb300-nvl72", "-m", "gpt-oss-120b", "-w", "1k1k", "--html", "r.html"
    )
    assert code == 0, err
    for page in ("c.html", "r.html"):
        text = (tmp_path / page).read_text().replace("\\u002f", "/")
        assert "tok/s per ($/chip-hour)" in text and "per $/h per chip" not in text, page


def test_step_caption_explains_only_the_compute_labels_its_rows_print(capsys, monkeypatch):
    """gpt-oss-120b prefill of 8,192 tokens on Jalapeño printed one labelled row (lm_head 'compute (few rows: 0.4% of
    peak)': 8,192 tokens, but the LM head runs on the last token of the one sequence) and a caption explaining the
    serial-k floor too, which no row printed. The default step (DeepSeek-R1 DEP8, 64 x 8K) prints both labels
    (attn.qkv_a_proj 'serial-k floor', attn.q_b_proj 'few rows'): both explained."""
    monkeypatch.setenv("COLUMNS", "200")
    serial_clause = "compute (serial-k floor): a block-scaled GEMM's serial k loop"
    few_clause = "compute (few rows: P% of peak): the fitted row-count rule"
    for args, serial in (
        (
            (
                "step",
                "-s",
                "jalapeno",
                "-m",
                "gpt-oss-120b",
                "--tp",
                "1",
                "--dp",
                "1",
                "--ep",
                "1",
                "--batch",
                "0",
                "--prefill-tokens",
                "8192",
            ),
            False,
        ),
        (("step", "-s", "jalapeno"), True),
    ):
        code, out, err = run(capsys, *args)
        assert code == 0, err
        cells = [ln.split("│")[-2].strip() for ln in out.splitlines() if ln.count("│") == 9]
        assert ("compute (serial-k floor)" in cells) is serial  # the premise, read off the bound column
        assert any(c.startswith("compute (few rows:") for c in cells)
        text = _text(out)
        assert (serial_clause in text) is serial and few_clause in text


def test_prefill_only_step_title_names_no_decode_context(capsys, monkeypatch):
    """`step --batch 0 --prefill-tokens 8192` titled its table 'batch 0 x ctx 8192 + 8192 prefill tokens': a context
    of 8,192 tokens (the --context default) for no sequence. With no decode rows the title names the prefill alone;
    a mixed step keeps 'batch B x ctx C + P prefill tokens'."""
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = run(capsys, "step", "-s", "jalapeno", "--batch", "0", "--prefill-tokens", "8192")
    assert code == 0, err
    title = out.splitlines()[0]
    assert "8192 prefill tokens, no decode batch" in title and "batch 0 x ctx" not in title
    code, out, err = run(capsys, "step", "-s", "jalapeno", "--batch", "4", "--prefill-tokens", "2048")
    assert code == 0, err
    assert "batch 4 x ctx 8192 + 2048 prefill tokens" in out.splitlines()[0]
