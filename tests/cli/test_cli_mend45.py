"""Usability findings of round 45 (break45, newuser45), each fixed with the message it asserts: a ``--set
chip.hbm_stacks`` of the base's own count, a variant ``base`` that names no system, ``validate -s h200,h200``,
``--stack SGLang``, the default-profile note under ``validate --json``, one spelling of the price unit, the
estimate mark on every $ figure of an estimated price, plan's J/token in significant figures, compare's
``unreachable`` tier cells and the ratio column at a frontier's end."""

from __future__ import annotations

from importlib import resources

from cli_runner import check_error, run


def test_hbm_stacks_at_the_base_count_says_it_changes_nothing(capsys):
    """Jalapeño has 6 HBM stacks (data/systems/jalapeno.toml): ``--set chip.hbm_stacks=6`` printed the
    'changes the stack count only' note of a real change."""
    from jalapeno.cli import system_notes

    system_notes._NOTED.discard("stacks-only")
    code, out, err = run(
        capsys, "step", "-s", "jalapeno", "--dp", "8", "--ep", "8", "--batch", "4", "--set", "chip.hbm_stacks=6"
    )
    assert code == 0, err
    text = " ".join(err.split())
    assert "note: --set chip.hbm_stacks=6 is jalapeno's own stack count: it changes nothing" in text
    assert "stack count only" not in text


def test_a_base_naming_a_json_file_says_what_base_takes(capsys, tmp_path):
    """``base = "x.json"`` (an existing file) said 'unknown system ... or a file path' of a file path."""
    (tmp_path / "x.json").write_text("{}")
    f = tmp_path / "v.toml"
    f.write_text('name = "v"\nbase = "x.json"\n')
    check_error(
        *run(capsys, "hardware", "show", str(f)),
        "v.toml: base: unknown system 'x.json', and not a system "
        "TOML path (a path ends in .toml or holds a folder, and is read relative to this file's folder)",
        "base takes a catalog name (",
        'or the path of a system TOML, e.g. base = "./my-system.toml"',
    )


def test_validate_refuses_a_system_given_twice(capsys):
    """``validate -s h200,h200`` was read as h200, where ``compare -s h200,h200`` and ``-c 4,4`` refuse."""
    check_error(
        *run(capsys, "validate", "-s", "h200,h200"), "--systems: 'h200' is given twice", "list each system once"
    )


def test_a_stack_in_another_case_gets_a_hint(capsys):
    """``--stack SGLang`` listed the profiles with no word that 'sglang' was meant."""
    check_error(
        *run(capsys, "step", "-s", "h200", "--tp", "8", "--batch", "4", "--stack", "SGLang"),
        "--stack: unknown software stack 'SGLang' (did you mean 'sglang'?)",
    )


def test_validate_json_notes_the_default_profile_on_stderr(capsys, tmp_path):
    """A framework no profile lists was named in validate's text output alone; ``--json`` said nothing."""
    lines = (resources.files("jalapeno") / "data" / "validation" / "inferencex_points.csv").read_text().splitlines()
    mi = next(x for x in lines if x.startswith("MI355X,gpt-oss-120b,")).replace(",atom,", ",nosuchfw,", 1)
    p = tmp_path / "fw.csv"
    p.write_text(f"{lines[0]}\n{mi}\n")
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator", "--json")
    assert code == 0, err
    assert (
        "note: framework(s) 'nosuchfw': no software-stack profile lists them (data/stacks.toml engines): priced "
        "with the 'default' profile; --stack NAME to choose one"
    ) in " ".join(err.split())
    assert out.lstrip().startswith("{")


def test_the_price_unit_has_one_spelling(capsys):
    """``hardware list`` and ``explore`` said ``$/chip-h``, the rest of the CLI ``$/chip-hour``."""
    code, out, err = run(capsys, "hardware", "list")
    assert code == 0, err
    assert "$/chip-hour" in out and "$/chip-h " not in out and "$/chip-h\n" not in out
    # the estimate mark follows each file's estimate flag (jalapeno.toml: estimate = true; h200.toml: none)
    rows = {ln.split("│")[1].strip(): ln for ln in out.splitlines() if ln.count("│") > 3}
    assert "1.43 est." in rows["jalapeno"] and "est." not in rows["h200"]
    code, out, err = run(capsys, "hardware", "show", "h200")
    assert code == 0, err
    assert "1.41 $/chip-hour" in out  # data/systems/h200.toml: cost.usd_per_chip_hour = 1.41


def test_plan_prints_j_per_token_to_three_significant_figures():
    """0.05 J/token printed as 0.05 (two decimals); J/token = W / (tok/s): 50 W / 1,000 tok/s = 0.05 J/token."""
    from jalapeno.analysis.capacity import per_kw_line

    line = per_kw_line(1000.0, {"all-in": (51.2, "all-in", 0.0), "chip": (1234.0, "TDP", 0.0)}, "output")
    assert "(0.0512 J/token)" in line and "(1.23 J/token)" in line


def test_an_unreachable_tier_says_the_fastest_speed_reached(capsys):
    """compare's tiers cell said 'unreachable' alone; it names the frontier's fastest tok/s/user."""
    import json
    import re

    args = ("compare", "-s", "jalapeno,h200", "-m", "deepseek-r1", "-w", "8k1k", "--tiers", "need=100000")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    d = json.loads(out)
    fastest = {n: s["headline"]["max_interactivity"] for n, s in d["systems"].items()}
    code, out, err = run(capsys, *args, "--html", "")
    assert code == 0, err
    text = " ".join(out.split())
    cells = re.findall(r"unreachable \(its fastest: ([\d.]+) tok/s/user\)", text)
    assert sorted(float(c) for c in cells) == sorted(round(v, 1) for v in fastest.values())


def test_the_frontier_end_flag_names_the_side_at_its_end():
    """The @100 column of DeepSeek-R1 8k1k was '[at frontier end]' on every row, the baseline's own included:
    there H200 is in its tail (278 < 10% of its 4,349 tok/s/chip peak, analysis/ratio_bands.TAIL_FRACTION) while
    Jalapeño (1,730 of 14,610: 11.8%) is not; the flag now says whose end it is."""
    from jalapeno.report.cell_notes import end_flag

    r = {"status_a": "interpolated", "status_b": "interpolated", "y_a": 1730.0, "y_b": 278.0, "at_frontier_end": True}
    assert end_flag(r, (14610.0, 4349.0)) == "at frontier end: baseline"
    assert end_flag({**r, "y_a": 1400.0}, (14610.0, 4349.0)) == "at frontier end: both"
    assert end_flag({**r, "y_b": 500.0, "status_a": "at_frontier_end"}, (14610.0, 4349.0)) == "at frontier end: this"
    assert end_flag({**r, "at_frontier_end": False}, (14610.0, 4349.0)) == ""


def test_compare_says_whose_frontier_end_flags_a_ratio(capsys, monkeypatch):
    from jalapeno.cli import common

    monkeypatch.setattr(common.console, "width", 400)  # one line a row: the flag is not folded in its cell
    code, out, err = run(capsys, "compare", "-s", "jalapeno,h200", "-m", "deepseek-r1", "-w", "8k1k", "--html", "")
    assert code == 0, err
    text = " ".join(out.split())
    assert "[at frontier end: who]: the speed is within 10% of that frontier's last point" in text
    assert "[at frontier end]" not in text
    # both rows' @100 cell: H200's tail, not Jalapeno's
    assert text.count("[at frontier end: baseline]") == 2, text
    assert "[at frontier end: this]" not in text and "[at frontier end: both]" not in text
    # jalapeno.toml: cost.usd_per_chip_hour has estimate = true, h200.toml's does not
    assert "est.: at an estimated $/chip-hour (jalapeno;" in text
    # the operating tiers table's rows ("N @ S (… $/M tok …)" cells; later tables, e.g. "why", repeat the names)
    rows = {ln.split("│")[1].strip(): ln for ln in out.splitlines() if ln.count("│") > 3 and " @ " in ln}
    assert "/M tok est.)" in rows["jalapeno"] and " est." not in rows["h200"]


ESTIMATE = (
    "(an estimate: jalapeno publishes no price; assumed all-in capex $30k per chip; `jalapeno hardware show jalapeno`, "
    "cost.usd_per_chip_hour)"
)


def test_predict_and_simulate_mark_an_estimated_price(capsys):
    """Only plan said that Jalapeno's $/chip-hour is an estimate (data/systems/jalapeno.toml: estimate = true)."""
    for cmd in (("predict", "-c", "8"), ("simulate", "-c", "8", "--requests", "40")):
        code, out, err = run(capsys, cmd[0], "-s", "jalapeno", "-m", "llama-3.3-70b", "--tp", "8", *cmd[1:])
        assert code == 0, err
        assert ESTIMATE in " ".join(out.replace("│", " ").split()), out
        code, out, err = run(capsys, cmd[0], "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", *cmd[1:])
        assert code == 0, err
        assert "an estimate" not in out


def test_explore_marks_an_estimated_base_price(capsys, monkeypatch):
    from jalapeno.cli import common, explore_cmd

    monkeypatch.setattr(common.console, "width", 300)
    out = {
        "name": "x",
        "base": "jalapeno",
        "trials": 1,
        "feasible": 1,
        "distinct": 1,
        "metrics": ["usd_per_mtok"],
        "designs": [
            {
                "trial": 0,
                "param:chip.hbm_stacks": 8,
                "score:usd_per_mtok": 0.9,
                "chip_power_w": 720.0,
                "usd_per_chip_hour": 1.5,
            }
        ],
        "base_metrics": [{"model": "deepseek-r1", "workload": "8k1k", "usd_per_mtok": 0.25}],
        "objective": {"min_interactivity": 50},
        "sweep": {},
        "pruned_by": {},
        "importance": {},
    }
    explore_cmd._print_summary(out)
    text = " ".join(capsys.readouterr().out.split())
    assert "$/chip-hour est." in text and "0.25 $ per M tokens (in+out) est." in text
    assert "est.: at an estimated $/chip-hour (jalapeno;" in text
    explore_cmd._print_summary({**out, "base": "h200"})
    assert "est." not in capsys.readouterr().out
