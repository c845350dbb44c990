"""Round 48 new-user fixes (newuser48): tables that cut or drop words at 80 and 100 columns, a band's ends in order,
one text per figure in a plan's arithmetic, and the one memo helper behind the stack copies.

Expected values are worked by hand in each test's comments, not read from the code's output.
"""

from __future__ import annotations

import math
import re

from cli_runner import run
from rich.console import Console
from rich.table import Table

BOX = "│┃┏┓┗┛┡┩└┘┳┻╇━─"


def _words(text: str) -> list[str]:
    return re.sub(f"[{BOX}]", " ", text).split()


def test_band_text_puts_the_lower_end_first_and_an_infinite_end_reads_unbounded():
    """A band given high end first printed '(511.9 to 118.8)'; an infinite end printed '[wide band: infx]'. By hand:
    511.9 / 118.8 = 4.31 -> '4.3x'; 12.5 to infinity is unbounded; NaN is undefined (no flag)."""
    from jalapeno.report.compare_cells import band_text

    assert band_text(511.9, 118.8, ".1f") == " (118.8 to 511.9) [wide band: 4.3x]"
    assert band_text(118.8, 511.9, ".1f") == " (118.8 to 511.9) [wide band: 4.3x]"
    assert band_text(17012, 12449, ",.0f") == " (12,449 to 17,012)"  # 1.37x: not flagged
    assert band_text(math.inf, 12.5, ".1f") == " (12.5 to -) [wide band: unbounded]"
    assert "inf" not in band_text(12.5, math.inf, ".1f").replace("unbounded", "")
    assert band_text(math.nan, 12.5, ".1f") == " (- to 12.5)"
    assert band_text(3.0, 3.0, ".1f") == ""


def test_compare_ratios_and_tiers_keep_every_word_whole_at_80_columns(capsys, monkeypatch):
    """At 80 columns the ratios table folded its headers 'tok/s/use' / 'r' and its flags '[at' / 'frontier' / 'end:'
    over four lines (five columns of at least 10 characters beside a 16-character name: 16 + 7 + 10 + 3 x 10 + 22
    of borders = 85 > 80). Each table now prints on its side where it would cut a word, as the headline does."""
    from jalapeno.cli import common

    monkeypatch.setattr(common.console, "width", 80)
    code, out, err = run(capsys, "compare", "--systems", "gb200-nvl72,gb300-nvl72", "-c", "64", "--html", "")
    assert code == 0, err
    tables = out[out.index("ratios vs") :]
    table_lines = [ln for ln in tables.splitlines() if ln[:1] in BOX]
    assert table_lines and max(len(ln) for ln in table_lines) <= 80
    words = _words(tables)
    assert "tok/s/user" in words and not any(w in ("tok/s/use", "r", "tok/s/us", "tok/s/u") for w in words)
    for name in ("gb200-nvl72", "gb300-nvl72"):
        assert name in words


def test_a_no_wrap_label_is_allotted_its_whole_line():
    """compare --bands at 100 columns printed the band row 'vera-rubin-nvl72 band' as 'vera-rubin-nvl7…': the
    allotment gave a no_wrap column its longest word (16), not its line (21 characters)."""
    from jalapeno.report.narrow import fit_width

    t = Table()
    t.add_column("system", no_wrap=True, min_width=16)
    t.add_column("peak", overflow="fold")
    t.add_row("vera-rubin-nvl72 band", "2.26 to 2.67x (1.76 to 2.08x, 1.88 to 2.23x) " * 3)
    (out,) = fit_width(t, 100)
    con = Console(width=100, record=True)
    con.print(out)
    text = con.export_text()
    assert "vera-rubin-nvl72 band" in text and "…" not in text


def test_hardware_list_prints_every_name_whole_at_100_columns(capsys, monkeypatch):
    """At 100 columns `hardware list` printed 'gb200-n…' and 'vera-ru…' — the names every other command takes —
    and '$/chip…'. Every shipped name now prints whole, and no cell is cut."""
    from jalapeno.cli import common
    from jalapeno.specs.catalog import list_systems

    for width in (100, 80):
        monkeypatch.setattr(common.console, "width", width)
        code, out, err = run(capsys, "hardware", "list")
        assert code == 0, err
        assert "…" not in out
        words = _words(out)
        for name in list_systems():
            assert name in words, (width, name)
        assert max(len(ln) for ln in out.splitlines() if ln[:1] in BOX) <= width


def test_step_op_names_are_not_cut_at_100_columns(capsys, monkeypatch):
    """At 100 columns `step` cut three ops to one 'moe.shared_expert.…' (and 'attn.norm_rope_kv_…'); at 80 it cut
    the figures ('14.8…'). The op names print whole at 100 and no cell ends in '…' at either width."""
    from jalapeno.cli import common

    args = (
        "step",
        "-s",
        "jalapeno",
        "-m",
        "deepseek-r1",
        "--dp",
        "8",
        "--ep",
        "8",
        "--batch",
        "64",
        "--context",
        "8192",
    )
    for width in (100, 80):
        monkeypatch.setattr(common.console, "width", width)
        code, out, err = run(capsys, *args)
        assert code == 0, err
        assert "…" not in out, width
        if width == 100:
            words = _words(out)
            for op in (
                "moe.shared_expert.gate_up",
                "moe.shared_expert.act",
                "moe.shared_expert.down",
                "attn.norm_rope_kv_write",
            ):
                assert op in words, op


def _figures(line: str, unit: str) -> list[str]:
    return re.findall(r"([\d,]+\.\d+) " + re.escape(unit), line)


def test_plan_prints_its_rate_the_same_on_every_line(capsys):
    """plan printed one rate as 1,173.6 (operating point), 1,173.55 (one instance) and 1,173.552 (delivered). Each
    line now prints the one text, to the decimals both products need (worked: 1,173.55 x 196 = 230,015.8 -> 230,016
    but 1,173.55 x 980 = 1,150,079, not the 1,150,081 delivered: three decimals)."""
    code, out, err = run(
        capsys,
        "plan",
        "-s",
        "gb200-nvl72",
        "-m",
        "deepseek-r1",
        "-w",
        "8k1k",
        "--target",
        "1e6",
        "--target-kind",
        "output",
        "--min-interactivity",
        "50",
    )
    assert code == 0, err
    lines = {ln.strip().split(":")[0]: ln for ln in out.splitlines()}
    op = _figures(lines["operating point"], "tok/s/chip")[0]
    assert _figures(lines["one instance"], "tok/s/chip") == [op]
    assert f"({op} tok/s/chip x 3600" in lines["cost per M output tokens"]
    # round 49: the rate prints to one decimal (it needed 1,173.552 for the products) and the products are carried
    # by one instance's whole tok/s, which check by hand: instances x instance tok/s = delivered
    assert len(op.split(".")[1]) == 1
    # (here 10 x 109,817.5 = 1,098,175: the instance's tok/s takes the decimal the product needs)
    inst = re.search(r"one instance: ([\d,.]+) tok/s \(", lines["one instance"])[1]
    n, per, total = re.search(
        r"delivered: ([\d,]+) instances? x ([\d,.]+) = ([\d,]+) tok/s", lines["delivered"]
    ).groups()
    assert per == inst and round(float(n.replace(",", "")) * float(per.replace(",", ""))) == int(total.replace(",", ""))


def test_agentic_plan_prints_tasks_per_chip_and_price_the_same_on_every_line(capsys):
    """The agentic plan printed tasks/h/chip with two decimals on its operating point and per-task lines and
    factor_text's own decimals on the products, and the price as $2.21 on the cost line but $2.210 per task."""
    code, out, err = run(
        capsys,
        "plan",
        "-s",
        "gb200-nvl72",
        "-m",
        "deepseek-r1",
        "-w",
        "agentic:coding-agent",
        "--target",
        "1000",
        "--max-task-min",
        "10",
    )
    assert code == 0, err
    lines = {ln.strip().split(":")[0]: ln for ln in out.splitlines()}
    rate = _figures(lines["operating point"], "tasks/h/chip")[0]
    assert _figures(lines["one instance"], "tasks/h/chip") == [rate]
    # round 49: the products are carried by one instance's tasks/h (the rate to sensible figures), which checks by hand
    inst = re.search(r"one instance: ([\d,.]+) tasks/h \(", lines["one instance"])[1]
    n, per, total = re.search(
        r"delivered: ([\d,]+) instances? x ([\d,.]+) = ([\d,.]+) tasks/h", lines["delivered"]
    ).groups()
    assert per == inst and round(int(n) * float(per.replace(",", "")), 1) == float(total.replace(",", ""))
    price = re.search(r"x \$([\d.]+)/chip-hour", lines["cost"])[1]
    assert f"per task ${price} / {rate} = " in lines["cost"]  # GB200: $2.21/chip-hour (InferenceX constants.ts)
    assert price == "2.21"


def test_the_stack_copies_share_one_memo_helper():
    """fit/client_floor kept its own copy of specs/stack_profile's memo logic; both now call memo_copy. One copy per
    profile and key: the second call returns the same object; a profile copied anew gets its own."""
    from dataclasses import replace

    from jalapeno.fit import client_floor
    from jalapeno.specs import stack_profile
    from jalapeno.specs.stacks import get_stack

    assert client_floor.memo_copy is stack_profile.memo_copy
    s = get_stack("sglang").for_client("inferencex-db")
    a = client_floor.with_client_floor(s, "inferencex-db", "disagg", on=True)
    assert a is client_floor.with_client_floor(s, "inferencex-db", "disagg", on=True)
    # sglang's entry: floor 50 ms, share 0.60 (DISAGG_TERMS, fitted by scripts/aic_gb_ttft_terms47.py)
    assert math.isclose(a.request_overhead_s, s.request_overhead_s + 0.05) and a.prefill_burst_fraction == 0.60
    s2 = replace(s)
    assert client_floor.with_client_floor(s2, "inferencex-db", "disagg", on=True) is not a


def test_the_max_speed_band_prints_thousands_as_every_other_figure(capsys, monkeypatch):
    """compare --bands printed Jalapeño's gpt-oss-120b max tok/s/user band as '(339.5 to 2104.9)' beside
    '82,083 (74,333 to 97,416)': the one figure of the headline without a thousands separator."""
    import json

    args = ("compare", "-m", "gpt-oss-120b", "--systems", "jalapeno,gb300-nvl72", "--bands")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    band = json.loads(out)["systems"]["jalapeno"]["headline"]["bands"]["max_interactivity"]
    hi = max(band["low"], band["high"])
    assert hi >= 1000  # the kernel-launch band's fast end (3.2e-07 s a kernel) passes 1,000 tok/s/user
    from jalapeno.cli import common

    monkeypatch.setattr(common.console, "width", 400)  # each cell on one line
    code, out, err = run(capsys, *args, "--html", "")
    assert code == 0, err
    text = " ".join(out.replace("│", " ").split())
    assert f"to {hi:,.1f})" in text and f"to {hi:.1f})" not in text


def test_audit_gives_the_parameter_names_the_room_the_other_columns_leave(capsys, monkeypatch):
    """At 100 columns audit's 'each parameter alone' table folded 'efficiency.gemm.fp8_block.peak_fraction' over four
    lines of 11 characters while every other column had room to spare; the name column now takes what the others'
    longest words leave (100 - 25 of borders - their words: about 20), the others on one line each where they fit."""
    from jalapeno.cli import common

    monkeypatch.setattr(common.console, "width", 100)
    code, out, err = run(
        capsys, "audit", "-s", "jalapeno", "-m", "deepseek-r1", "-w", "8k1k", "--claim", "max_interactivity=700"
    )
    assert code == 0, err
    table = out[out.index("each parameter alone") :]
    top = next(ln for ln in table.splitlines() if ln.startswith("┏"))
    assert len(top) <= 100
    assert len(top[1:].split("┳")[0]) - 2 >= 18  # the name column's width (rich's collapse gave it 11)


def test_calibrate_help_warns_that_without_out_dir_it_rewrites_the_shipped_sets(capsys):
    """The README says `jalapeno calibrate` without --out-dir rewrites the shipped sets; its --help said only
    '(default: the package data)', which a new user reads as harmless."""
    code, out, err = run(capsys, "calibrate", "--help")
    assert code == 0, err
    text = " ".join(out.replace("│", " ").split())
    assert "rewrites the shipped calibrated sets" in text


def test_a_band_cell_flags_the_frontier_end_once():
    """compare --bands printed gb200-nvl72's band row at @100 as '... [at frontier end] [at frontier end: this]':
    its low end flagged by the tail rule without a side, its high end by its status (this system at its end). One
    flag now, naming the side either end names; two different sides read 'both'."""
    from jalapeno.report.compare_cells import band_cells

    def row(r: float, status_a: str, end: bool) -> dict:
        return {"x": 100.0, "ratio": r, "status_a": status_a, "status_b": "interpolated", "at_frontier_end": end}

    def band(lo: dict, hi: dict) -> dict:
        return {
            "peak_ratio": {k: {"low": 0.8, "high": 0.9} for k in ("throughput_per_chip", "tok_s_per_kw")},
            "max_interactivity_ratio": {"low": 0.9, "high": 1.1},
            "iso_interactivity": {k: {"low": [lo], "high": [hi]} for k in ("throughput_per_chip", "tok_s_per_kw")},
        }

    cell = band_cells(band(row(0.40, "interpolated", True), row(1.53, "at_frontier_end", True)))[2]
    assert cell.count("[at frontier end") == 1 and cell.endswith("[at frontier end: this]"), cell
    # 1.53 / 0.40 = 3.8x apart: flagged wide as well, before the end flag
    assert "[wide band: 3.8x]" in cell


def test_frontier_prints_every_figure_whole_at_100_columns(capsys, monkeypatch):
    """The README's `frontier --system gb200-nvl72 --model gpt-oss-120b` at 100 columns cut every figure over two
    lines ('79,85' / '2', 'decod' / 'e'): twelve columns of at least their longest word need about 127 characters.
    It now prints on its side (one column per point), each figure whole."""
    import json

    from jalapeno.cli import common

    args = ("frontier", "--system", "gb200-nvl72", "--model", "gpt-oss-120b")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    d = json.loads(out)
    points = d["frontier"] if isinstance(d, dict) else d
    assert len(points) > 3
    monkeypatch.setattr(common.console, "width", 100)
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert max(len(ln) for ln in out.splitlines() if ln[:1] in BOX) <= 100
    words = _words(out)
    for p in points:
        assert f"{p['throughput_per_chip']:,.0f}" in words and f"{p['interactivity']:.1f}" in words


def test_agentic_compare_keeps_every_word_whole_at_100_columns(capsys, monkeypatch):
    """`compare --workload agentic:coding-agent` at 100 columns cut its headline's bound 'comput' / 'e' and KV bound
    'kv_ca' / 'pacit' / 'y:hbm' (ten columns of at least their longest words need more than 100 characters); its
    tables now print on their side where a word would be cut, as the fixed-length comparison's do."""
    import json

    from jalapeno.cli import common

    args = ("compare", "--workload", "agentic:coding-agent", "--systems", "jalapeno,gb300-nvl72")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    d = json.loads(out)
    monkeypatch.setattr(common.console, "width", 100)
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert max(len(ln) for ln in out.splitlines() if ln[:1] in BOX) <= 100
    words = _words(out)
    for s in d["systems"].values():
        cap = s["peak"]["limit"]  # mend53: a binding cap follows the bound, 'compute; capped by kv_capacity'
        assert (s["peak"]["bound"] + (";" if cap else "")) in words and (not cap or cap in words)
        assert f"{s['peak']['tasks_per_hour_per_chip']:,.1f}" in words
