"""Round 47, a new user's try of the whole tool from the README (analyst, capacity planner, architect, skeptic).

What confused, and is fixed here:

1. ``simulate``'s summary title named the model, system and deployment but not the workload: runs of
   ``--workload research-agent``, a trace file and 8k1k printed the same title. It now names it as predict does
   ('8k1k', '8192/1024'), 'agentic:research-agent' or 'trace FILE'.

2. ``simulate`` printed TPOT in whole ms: a 4.5 ms TPOT read 'mean 5 · p50 5 · p90 5 · p99 5 ms' beside
   'interactivity (1/median TPOT) 220.3 tok/s/user' (1 / 5 ms = 200). Times under 100 ms print to 0.1 ms, as
   predict's TPOT; and a one-chip run said '1 chips'.

3. ``simulate --help`` listed its workloads as 'agentic (coding-agent), research-agent, ...', as if only
   coding-agent were agentic; compare and frontier write 'agentic:PRESET (...)'.

4. ``predict -c 64,128`` (the list compare and frontier sweep) was told to write ``--concurrency 64128``.

5. ``validate --held-out`` printed 44 groups' figures and no verdict on issue 18's goals: it now closes with the
   groups that miss them (fit/goals.py).

6. ``plan -w agentic:coding-agent`` was refused with 'compare, frontier and simulate take it' and no word on how to
   size a fleet for agent tasks: it now names compare's task-time tier and chips = tasks per hour / tasks/h per chip.

7. ``sensitivity`` printed its swing column at four significant digits ('987.1', '212' beside '213.7') under
   ends printed whole ('6,064', '7,051'): the swing takes its ends' format.

Expected values are worked by hand (interactivity = 1 / median TPOT) or are the literal names the user typed.
"""

from __future__ import annotations

import inspect
import re

from cli_runner import run


def _flat(text: str) -> str:
    """The output with box-drawing and line breaks folded to single spaces (rich wraps a title on a narrow terminal)."""
    return re.sub(r"[\s│┃]+", " ", text)


def _trace(tmp_path) -> str:
    p = tmp_path / "mywl.csv"
    p.write_text(
        "arrival_s,input_tokens,output_tokens\n0.0,8000,900\n0.5,7000,1000\n1.0,9000,800\n"
        "1.2,6000,1200\n2.0,8192,1024\n"
    )
    return str(p)


def test_simulate_tpot_to_a_tenth_of_a_ms_agrees_with_its_interactivity(capsys, tmp_path):
    code, out, err = run(
        capsys,
        "simulate",
        "--system",
        "gb300-nvl72",
        "--model",
        "gpt-oss-120b",
        "--tp",
        "1",
        "--workload",
        _trace(tmp_path),
    )
    assert code == 0, err
    flat = _flat(out)
    assert "trace mywl.csv" in flat, flat[:300]
    assert "1 chip)" in flat and "1 chips" not in flat, flat
    tpot = re.search(r"TPOT mean ([\d.]+) · p50 ([\d.]+) · p90 ([\d.]+) · p99 ([\d.]+) ms", flat)
    assert tpot, flat
    assert all("." in g for g in tpot.groups()), tpot.group(0)  # to 0.1 ms, not '5'
    inter = float(re.search(r"interactivity \(1/median TPOT\) ([\d.]+) tok/s/user", flat).group(1))
    # by hand: interactivity is 1 / median TPOT, so 1000 / p50 (ms) reads it back within the p50's rounding
    # (0.05 ms of ~4.5 ms: 1.1%); the old whole-ms '5' read 200 against 220.3 (9% off)
    assert abs(1000.0 / float(tpot.group(2)) / inter - 1) < 0.015, (tpot.group(0), inter)


def test_simulate_title_names_the_workload(capsys):
    code, out, err = run(
        capsys,
        "simulate",
        "--system",
        "jalapeno",
        "--dp",
        "8",
        "--ep",
        "8",
        "--workload",
        "research-agent",
        "--concurrency",
        "2",
        "--sessions",
        "2",
    )
    assert code == 0, err
    assert "deepseek-r1 on jalapeno · agentic:research-agent · agg" in _flat(out), out[:400]
    code, out, err = run(
        capsys,
        "simulate",
        "--system",
        "jalapeno",
        "--dp",
        "8",
        "--ep",
        "8",
        "--workload",
        "8k1k",
        "--concurrency",
        "4",
        "--requests",
        "8",
    )
    assert code == 0, err
    assert "deepseek-r1 on jalapeno · 8k1k · agg" in _flat(out), out[:400]  # as predict's title


def test_simulate_help_lists_every_agentic_preset_as_agentic():
    from jalapeno.cli.simulate_cmd import simulate

    text = inspect.signature(simulate).parameters["workload"].default.help
    assert "agentic:PRESET (coding-agent, research-agent, long-memory-chat, chat-agent" in text, text
    assert "agentic (coding-agent), research-agent" not in text


def test_a_concurrency_list_on_a_one_point_command_is_told_so(capsys):
    """4. ``predict -c 64,128`` (compare's list form) was told 'write it without thousands separators:
    --concurrency 64128'; it is now told the command prices one concurrency, and where a list is swept."""
    from cli_runner import error_line

    line = error_line(*run(capsys, "predict", "-s", "jalapeno", "-c", "64,128"))
    assert "prices one concurrency per run" in line and "e.g. --concurrency 64," in line, line
    assert "compare and frontier sweep a list: --concurrency 64,128" in line, line
    line = error_line(*run(capsys, "simulate", "-s", "jalapeno", "-c", "4,8"))
    assert "e.g. --concurrency 4," in line and "thousands" not in line, line  # '4,8' is no thousands number
    # '1,000' is one number (a concurrency has no leading zero): the separator fix alone, as before
    line = error_line(*run(capsys, "predict", "-s", "jalapeno", "-c", "1,000"))
    assert line.endswith("Fix: write it without thousands separators: --concurrency 1000"), line


def test_goals_text_by_hand():
    """5. ``validate --held-out`` gave each group's figures but no verdict: which groups miss issue 18's goals
    (median <= 8%, p90 <= 25%, |bias| <= 5% on throughput and interactivity; TTFT median <= 20%) was left to the
    reader's eye over 40-odd rows. fit/goals.goals_text closes the run with them."""
    import pandas as pd

    from jalapeno.fit.goals import goals_text

    rows = pd.DataFrame(
        [
            {"source": "inferencex", "system": s, "metric": m, "error": e, "split": sp}
            for s, m, errs, sp in (
                ("a", "interactivity", [0.01, -0.02, 0.03], "held_out"),  # median 2%, bias +1%: met
                ("b", "interactivity", [0.10, 0.12, 0.09], "none"),  # median 10% > 8%, bias +10% > 5%
                ("c", "interactivity", [0.9, 0.9, 0.9], "fit"),  # fitted on: not judged
                ("a", "ttft_s", [0.1, 0.15, -0.12], "held_out"),  # median |e| 12% <= 20%: met
                ("b", "throughput_per_chip", [0.5], "aiconfigurator"),  # not a held-out split label: not judged
            )
            for e in errs
        ]
    )
    text = goals_text(rows).rsplit("): ", 1)[1]
    # overall interactivity over a's and b's 6 points: |e| 1,2,3,9,10,12 -> median 6.0% (met), p90 11.0% (met),
    # signed 1,-2,3,9,10,12 -> median 6.0% > 5% (missed)
    assert text == (
        "throughput_per_chip: no held-out row; interactivity missed: overall bias +6.0%, b median 10.0%, "
        "b bias +10.0%; ttft_s met"
    ), text
    assert goals_text(rows[rows.split == "fit"]) == ""  # nothing held out: no line


def test_validate_held_out_closes_with_the_goal_misses(capsys):
    code, out, err = run(capsys, "validate", "--held-out", "--no-aiconfigurator")
    assert code == 0, err
    flat = _flat(out)
    assert "issue 18's goals on the held-out InferenceX rows" in flat, flat[-2000:]
    # the shipped rows' misses as docs/validation.md's issue 18 status lists them (each metric named once)
    for metric in ("throughput_per_chip", "interactivity", "ttft_s"):
        assert f"; {metric} " in flat or f"): {metric} " in flat, metric
    code, out, err = run(capsys, "validate", "--no-aiconfigurator")
    assert "issue 18's goals" not in _flat(out)  # judged on held-out rows only


def test_plan_on_a_bare_agentic_preset_names_its_agentic_spelling(capsys):
    """6. ``plan -w coding-agent`` (a preset without its ``agentic:`` prefix) was told only 'compare, frontier and
    simulate take it'; plan now sizes agent fleets itself (ux47), so the refusal names ``--workload
    agentic:coding-agent`` and a plan command that runs."""
    from cli_runner import error_line

    line = error_line(*run(capsys, "plan", "-s", "gb200-nvl72", "-w", "coding-agent", "--power-mw", "5"))
    assert "agentic (multi-turn) workload" in line and "write --workload agentic:coding-agent" in line, line
    cmd = re.search(r"`jalapeno (plan [^`]+)`", line).group(1)
    assert cmd == ("plan --system gb200-nvl72 --workload agentic:coding-agent --target 10000 --target-kind tasks "
                   "--max-task-min 10"), cmd


def test_agentic_doc_fleet_example_is_what_compare_prints(capsys):
    """docs/agentic.md's fleet example quotes GB300's tasks/h per chip at <= 10 min; held to compare's tier cell."""
    import math
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "agentic.md").read_text()
    m = re.search(
        r"e\.g\. ([\d.]+) tasks/h/chip for GB300 NVL72 .*?([\d,]+) tasks/h need ([\d,]+) chips, (\d+) racks", doc, re.S
    )
    assert m, "docs/agentic.md lost its fleet example"
    quoted, tasks, chips, racks = float(m[1]), int(m[2].replace(",", "")), int(m[3].replace(",", "")), int(m[4])
    code, out, err = run(
        capsys, "compare", "--workload", "agentic:coding-agent", "--systems", "gb300-nvl72", "--tiers", "need=10"
    )
    assert code == 0, err
    cell = re.search(r"│ ([\d.]+) @ 10\.0 min", out)
    assert cell and float(cell[1]) == quoted, (cell and cell[1], quoted)
    # by hand: chips = ceil(tasks per hour / tasks/h per chip); racks of 72 GPUs
    assert chips == math.ceil(tasks / quoted) and racks == math.ceil(chips / 72), (chips, racks)


def test_sensitivity_swing_prints_as_its_ends():
    """7. ``sensitivity --metric throughput_per_chip@50`` printed swings '987.1' and '212' beside '213.7' in one column,
    under ends printed whole ('6,064' and '7,051'): the swing now takes its ends' format."""
    from jalapeno.cli.audit_tables import _swing_text

    # by hand: 7,051.2 - 6,064.1 = 987.1 -> '987' beside whole ends; 6,705.3 - 6,493.3 = 212.0 -> '212'
    assert _swing_text({"metric_at_low": 6064.1, "metric_at_high": 7051.2, "swing": 987.1}) == "987"
    assert _swing_text({"metric_at_low": 6493.3, "metric_at_high": 6705.3, "swing": 212.0}) == "212"
    assert _swing_text({"metric_at_low": 75523.0, "metric_at_high": 84742.0, "swing": 9219.0}) == "9,219"  # round 46
    # ends below 1,000 keep four significant digits: 338.1 - 135.1 = 203
    assert _swing_text({"metric_at_low": 135.1, "metric_at_high": 338.1, "swing": 203.0}) == "203"
    assert _swing_text({"metric_at_low": 1.2, "metric_at_high": 1.25, "swing": 0.05}) == "0.05"
