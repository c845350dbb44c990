"""Round 45, a new user's try of the whole tool from the README (analyst, capacity planner, architect).

What confused, and is fixed here:

1. ``compare -w agentic:…`` gave per kW and per $ only at the peak: the ratios at each task time (``--at``) were
   per chip alone and the tiers cells tasks/h/chip alone, where the fixed-length ``compare`` gives tok/s/kW and
   $/M tok in every tier cell and per kW and per $ in every ``@`` ratio cell (rounds 44's f987fad, 61f1f09);
   its end-of-frontier flag read ``(at frontier end)`` where compare's reads ``[at frontier end]``.

2. ``plan --chips/--racks/--power-mw`` (the fleet you have) printed no operating point and no users, where
   ``plan --target`` prints both: a planner of 10 Jalapeño racks on 128k1k saw 66.5 tok/s/user and not that its
   TTFT is 32 s, nor that each of its 1,336 users averages 19.9 output tok/s over a request. The fleet plan now
   prints the point's line (rate, speed, TTFT, TPOT, bound) and the users line, and its JSON the users.

3. ``audit --baseline gb300-nvl72`` on a model validate has no GB300 points of (Kimi K2.5, Llama 3.3 70B) printed a
   band with no word on what it was: the audited system's efficiency sets over the baseline's calibrated
   prediction alone, the baseline's measured band (validate's error on DeepSeek-R1) not applying; ``compare
   --bands`` says 'no band for gb300-nvl72: ...' for the same case. The audit now says it on a 'band:' line.

4. ``simulate`` printed 'throughput per kW (all-in, 2,100 W/chip)' with no word of which tokens and no $ per M
   tokens, where ``predict`` labels its 'tok/s per kW (in+out)' and gives '$ per M tokens (in+out)'; its counts
   read '1280' requests and '1625 step-cost evaluations' beside '2,366x'; predict's 'decode batch per instance'
   read '1004.7' beside '1,024.0' in flight. Both now carry thousands separators, and simulate both labels.

5. ``step --chip-model sliced`` (the architect's sliced chip) priced the step on slices with no word of it: the
   table title and lines read as the flat chip's, where ``compare`` and ``frontier`` print 'chip model: sliced
   (jalapeno 6 slices, local_first); docs/chip.md' under their tables. ``step`` prints that line too (``--slices``
   already shows the slice table, which names the placement).

6. A typo in ``--power`` (``compare --power kw``) swept every system, 14 s on a loaded machine, before the one-line
   refusal; it is now refused before any sweep (compare, frontier, report; the agentic compare too). So are plan's
   own inputs (--target, --target-kind, --min-interactivity, --chips, --racks, --power-mw) and frontier's --out type.

7. ``explore``'s base line read 'tok_s_per_kw 1,113' with no unit nor which tokens, where compare says tok/s/kW
   (in+out): each metric now carries its unit ('tok/s per kW (in+out)', '$ per M tokens (in+out)', ...).

Expected values are computed here from the catalog's stated constants (GB300 NVL72: InferenceX constants.ts,
2.10 kW all-in per GPU and 2.652 $/GPU-hour; Jalapeño: the estimates in its system file, 1.15 kW all-in and
1.43 $/chip-hour), not from the code's output: per-kW frontier = tasks/h/chip / kW, so a ratio per kW at one
task time is the per-chip ratio x kW_baseline / kW_system, per $ likewise with $/chip-hour.
"""

from __future__ import annotations

import json
import re

import pytest
from cli_runner import error_line, run

#: all-in kW per chip and $/chip-hour (gb300-nvl72: InferenceX constants.ts; jalapeno: its file's estimates)
STATED = {"jalapeno": (1.15, 1.43), "gb300-nvl72": (2.10, 2.652)}


_CACHE: dict = {}


@pytest.fixture
def agentic_json(capsys):
    """``compare -w agentic:coding-agent -s jalapeno,gb300-nvl72 --json``, run once for the tests below."""
    if "agentic" not in _CACHE:
        code, out, err = run(capsys, "compare", "-w", "agentic:coding-agent", "-s", "jalapeno,gb300-nvl72", "--json")
        assert code == 0, err
        _CACHE["agentic"] = json.loads(out)
    return _CACHE["agentic"]


def test_agentic_iso_task_time_ratios_give_per_kw_and_per_usd(agentic_json):
    (kw_s, usd_s), (kw_b, usd_b) = STATED["jalapeno"], STATED["gb300-nvl72"]
    rows = agentic_json["ratios"]["jalapeno"]["iso_task_time"]
    assert [r["task_time_min"] for r in rows] == [5.0, 10.0, 20.0]
    for r in rows:
        assert r["ratio_per_kw"] == pytest.approx(r["ratio"] * kw_b / kw_s, rel=1e-9)
        assert r["ratio_per_usd"] == pytest.approx(r["ratio"] * usd_b / usd_s, rel=1e-9)
    base = agentic_json["ratios"]["gb300-nvl72"]["iso_task_time"]
    assert all(r["ratio_per_kw"] == r["ratio_per_usd"] == pytest.approx(1.0) for r in base)


def test_agentic_tiers_give_tasks_per_kw_and_usd_per_task(agentic_json):
    for name, (kw, usd_h) in STATED.items():
        tiers = agentic_json["systems"][name]["tiers"]
        assert set(tiers) == {"batch", "fast", "ultra_fast"}
        for t in tiers.values():
            tph = t["tasks_per_hour_per_chip"]
            assert t["tasks_per_hour_per_kw"] == pytest.approx(tph / kw, rel=1e-9)
            assert t["usd_per_task"] == pytest.approx(usd_h / tph, rel=1e-9)


def test_agentic_tables_print_the_new_figures_with_compare_s_labels(agentic_json):
    from rich.console import Console

    from jalapeno.report.agentic_tables import agentic_tables

    con = Console(width=400, record=True, markup=False)  # as the CLI's console: no markup
    for t in agentic_tables(agentic_json):
        con.print(t)
    text = con.export_text()
    flat = " ".join(text.split())
    assert "@ 5 min/task (kW, $)" in flat and "@ 20 min/task (kW, $)" in flat
    r = agentic_json["ratios"]["jalapeno"]["iso_task_time"][0]
    kw_b, usd_b = STATED["gb300-nvl72"]
    kw_s, usd_s = STATED["jalapeno"]
    by_hand = f"{r['ratio']:.2f}x ({r['ratio'] * kw_b / kw_s:.2f}x, {r['ratio'] * usd_b / usd_s:.2f}x)"
    assert by_hand in flat
    # compare's flag and legend spelling, not '(at frontier end)'
    assert "(at frontier end)" not in flat and "[at frontier end: who]: within 10% of a frontier's last point" in flat
    # a tier cell: tasks/h/chip @ min (tasks/h/kW, $/task), by hand from the stated kW and $/chip-hour
    assert "operating tiers: best tasks/h per chip within a task-time ceiling, with its tasks/h/kW and $/task" in flat
    cells = re.findall(r"([\d,.]+) @ ([\d.]+) min \(([\d,.]+) tasks/h/kW, \$([\d.]+)/task\)", text)
    assert len(cells) == 6  # 2 systems x (batch, fast, ultra_fast)
    for tph, _, per_kw, usd in cells:
        tph, per_kw, usd = float(tph.replace(",", "")), float(per_kw.replace(",", "")), float(usd)
        kw, usd_h = next(v for v in STATED.values() if per_kw == pytest.approx(tph / v[0], abs=0.06 + 1e-3 * tph))
        assert usd == pytest.approx(usd_h / tph, rel=0.01)


def _fleet(capsys, *extra):
    return run(
        capsys, "plan", "--system", "gb200-nvl72", "-w", "8k1k", "--chips", "1152", "--min-interactivity", "50", *extra
    )


def test_fleet_plan_prints_its_operating_point_and_users(capsys):
    code, out, err = _fleet(capsys, "--json")
    assert code == 0, err
    d = json.loads(out)
    p = d["point"]
    # users: closed-loop concurrency per instance x whole instances; one user's output rate = mean OSL / E2E
    # (InferenceX lengths uniform in [0.8 L, L]: mean OSL 0.9 x 1024 = 921.6 tokens)
    assert d["users_per_instance"] == pytest.approx(p["concurrency"])
    assert d["users"] == pytest.approx(p["concurrency"] * d["instances"])
    assert d["output_tok_per_s_per_user"] == pytest.approx(921.6 / p["e2e_s"], rel=0.01)
    lines = d["arithmetic"]
    op = next(ln for ln in lines if ln.startswith("operating point:"))
    assert op.startswith(
        "operating point: the most output tok/s the fleet's whole instances deliver at >= 50 tok/s/user: "
    )
    assert (
        f"at {p['interactivity']:.1f} tok/s/user (TTFT {p['ttft_s'] * 1e3:,.0f} ms, TPOT {p['tpot_s'] * 1e3:.1f} ms, "
        "bound " in op
    )
    assert lines.index(op) < next(i for i, ln in enumerate(lines) if ln.startswith("instances: floor("))
    users = lines[-1]
    assert users.startswith("users: ") and f"x {d['instances']:,} = {p['concurrency'] * d['instances']:,.0f};" in users
    assert f"one user averages {921.6 / p['e2e_s']:.1f} output tok/s" in users
    code, text, err = _fleet(capsys)
    assert code == 0, err
    assert "  operating point: the most output tok/s" in text and "  users: " in text


def test_audit_says_the_band_is_the_system_s_sets_where_the_baseline_s_band_does_not_cover_the_model(capsys):
    args = ("-m", "llama-3.3-70b", "-w", "1k1k", "-p", "fp8", "--serving", "agg")
    code, out, err = run(
        capsys,
        "audit",
        "--system",
        "jalapeno",
        "--baseline",
        "gb300-nvl72",
        *args,
        "--claim",
        "peak_throughput_per_chip_ratio=1.0",
    )
    assert code == 0, err
    flat = " ".join(out.split())
    assert (
        "band: jalapeno's efficiency sets over gb300-nvl72's calibrated prediction alone (gb300-nvl72's measured "
        "band is validate's error on deepseek-r1 only: no llama-3.3-70b points on it; docs/audit.md §3.1)"
    ) in flat
    # the band's ends, by the rule the line states: Jalapeno's low / high set peaks over GB300's calibrated peak,
    # read from compare --bands (which sweeps the same sets)
    code, cmp_out, err = run(capsys, "compare", "-s", "jalapeno,gb300-nvl72", *args, "--bands", "--json", "--html", "")
    assert code == 0, err
    d = json.loads(cmp_out)["systems"]
    j = d["jalapeno"]["headline"]["bands"]["peak_throughput_per_chip"]
    g = d["gb300-nvl72"]["headline"]["peak_throughput_per_chip"]
    assert f"{j['low'] / g:.4g} to {j['high'] / g:.4g}" in flat  # the band format of every command (ux47)


#: GB200 NVL72, InferenceX constants.ts: all-in provisioned kW per GPU and $/GPU-hour
GB200 = (2.10, 2.21)


def test_simulate_gives_per_kw_and_usd_per_mtok_of_in_plus_out_tokens(capsys):
    args = ("simulate", "--system", "gb200-nvl72", "--dp", "8", "--ep", "8", "-w", "1k1k", "-c", "8", "-n", "40")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    sm = json.loads(out)["summary"]
    kw, usd_h = GB200
    tput = sm["throughput_per_chip"]  # in+out tok/s per chip over the whole run
    assert sm["tok_s_per_kw"] == pytest.approx(tput / kw, rel=1e-9)
    assert sm["usd_per_mtok"] == pytest.approx(usd_h / (tput * 3600 / 1e6), rel=1e-9)
    code, text, err = run(capsys, *args)
    assert code == 0, err
    rows = dict(re.findall(r"│ (.+?)\s+│ (.+?)\s+│", text))
    assert rows["throughput per kW (in+out; all-in, 2,100 W/chip)"] == f"{tput / kw:,.0f} tok/s/kW"
    usd = usd_h / (tput * 3600 / 1e6)
    assert float(rows["$ per M tokens (in+out; $2.21/chip-hour)"]) == pytest.approx(usd, rel=6e-3)  # 3 s.f.


def test_simulate_and_predict_counts_carry_thousands_separators():
    from jalapeno.cli.simulate_lines import _summary_table

    q = {"mean": 0.1, "p50": 0.1, "p90": 0.1, "p99": 0.1}
    sm = {
        "requests": 1280,
        "throughput_per_chip": 1.0,
        "output_throughput_per_chip": 1.0,
        "interactivity": 1.0,
        "ttft_s": q,
        "tpot_s": q,
        "e2e_s": q,
        "queue_s": q,
        "preemptions": 0,
        "prefix_hit_rate": 0.0,
        "mean_concurrency_littles_law": 1.0,
        "simulated_s": 1.0,
        "wall_s": 1.0,
        "speedup": 2366.0,
        "step_cost_evaluations": 1625,
    }
    from rich.console import Console

    con = Console(width=200, record=True, markup=False)
    con.print(_summary_table(sm, "t"))
    text = con.export_text()
    assert "│ 1,280 " in text and "(2,366x, 1,625 step-cost evaluations)" in text


def test_predict_decode_batch_carries_thousands_separators(capsys):
    # Jalapeno DEP16 at concurrency 1,024: about 1,000 sequences per decode instance
    code, text, err = run(
        capsys, "predict", "--system", "jalapeno", "-p", "fp4", "--dp", "16", "--ep", "16", "-c", "1024"
    )
    assert code == 0, err
    rows = dict(re.findall(r"│ (.+?)\s+│ (.+?)\s+│", text))
    cell = rows["decode batch per instance"]
    assert re.fullmatch(r"\d,\d{3}\.\d", cell), cell
    assert 900 < float(cell.replace(",", "")) <= 1024


@pytest.mark.parametrize(
    "extra, line",
    [
        (("--chip-model", "sliced"), "chip model: sliced (jalapeno 6 slices, local_first); docs/chip.md"),
        (
            ("--chip-model", "sliced", "--placement", "striped"),
            "chip model: sliced (jalapeno 6 slices, striped); docs/chip.md",
        ),
        ((), None),
    ],
)
def test_step_names_a_chip_model_other_than_flat(capsys, extra, line):
    code, out, err = run(
        capsys, "step", "--system", "jalapeno", "--dp", "8", "--ep", "8", "--batch", "64", "--context", "8192", *extra
    )
    assert code == 0, err
    if line is None:
        assert "chip model:" not in out
    else:
        assert line in out.splitlines()


@pytest.mark.parametrize(
    "args",
    [
        ("compare", "--power", "kw"),
        ("compare", "-w", "agentic:coding-agent", "--power", "kw"),
        ("frontier", "--system", "jalapeno", "--power", "kw"),
        ("frontier", "--system", "jalapeno", "-w", "agentic:coding-agent", "--power", "kw"),
        ("report", "--power", "kw", "--html", "r.html"),
        ("compare", "--power", "load"),
    ],
)
def test_an_unknown_power_convention_is_refused_before_any_sweep(capsys, monkeypatch, tmp_path, args):
    import jalapeno.analysis.agentic as agentic
    import jalapeno.analysis.comparison as comparison

    def no_sweep(*a, **k):
        raise AssertionError("swept before refusing --power")

    for mod, name in (
        (comparison, "compare_systems"),
        (comparison, "system_frontier"),
        (agentic, "compare_agentic"),
        (agentic, "agentic_frontier"),
    ):
        monkeypatch.setattr(mod, name, no_sweep)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *args)
    line = error_line(code, out, err)
    assert line.startswith("error: --power: ")
    assert "chip, sustained, all-in" in line


@pytest.mark.parametrize(
    "args, option",
    [
        (("plan", "--system", "jalapeno", "--target", "1e6", "--target-kind", "out"), "--target-kind"),
        (("plan", "--system", "jalapeno", "--target", "-5"), "--target"),
        (("plan", "--system", "jalapeno", "--target", "1e6", "--min-interactivity", "-1"), "--min-interactivity"),
        (("plan", "--system", "jalapeno", "--chips", "0"), "--chips"),
        (("plan", "--system", "h200", "--racks", "2"), "--racks"),
        (("plan", "--system", "jalapeno", "--power-mw", "0.01"), "--power-mw"),
        (("plan", "--system", "jalapeno", "--power-mw", "20", "--power", "kw"), "--power"),
        (("frontier", "--system", "jalapeno", "--out", "x.txt"), "--out"),
    ],
)
def test_plan_and_frontier_inputs_are_refused_before_the_sweep(capsys, monkeypatch, tmp_path, args, option):
    import jalapeno.analysis.comparison as comparison

    def no_sweep(*a, **k):
        raise AssertionError(f"swept before refusing {option}")

    monkeypatch.setattr(comparison, "system_frontier", no_sweep)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *args)
    assert error_line(code, out, err).startswith(f"error: {option}: ")


def test_explore_base_line_names_each_metric_s_unit():
    from jalapeno.cli.explore_cmd import _base_lines

    out = {
        "base": "jalapeno",
        "metrics": ["tok_s_per_kw", "usd_per_mtok", "max_interactivity", "tok_s_per_chip"],
        "objective": {"min_interactivity": 100, "power": "chip"},
        "sweep": {"at_floor": "interpolated"},
        "base_metrics": [
            {
                "model": "deepseek-r1",
                "workload": "8k1k",
                "tok_s_per_kw": 1113.0,
                "usd_per_mtok": 0.5123,
                "max_interactivity": 138.9,
                "tok_s_per_chip": 779.1,
            }
        ],
    }
    line = _base_lines(out)[0]
    assert line.startswith(
        "base jalapeno on deepseek-r1 8k1k: tok_s_per_kw 1,113 tok/s per kW (in+out), "
        "usd_per_mtok 0.5123 $ per M tokens (in+out), max_interactivity 138.9 tok/s/user (the sweep's fastest point, at no floor), "
        "tok_s_per_chip 779.1 tok/s/chip (in+out) (the sweep's frontier interpolated at 100 "
    )
